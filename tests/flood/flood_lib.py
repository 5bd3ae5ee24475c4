"""What the flood tests share: plotqd and the JSON client from tests/crash (imported, not copied),
a raw-socket request for bytes http.client will not send, the RLIMIT_NOFILE raise, and the checks
that the server still answers and kept what it had stored."""
import os
import resource
import socket
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crash"))
from plotq_client import Plotqd, Stream, new_session, read_to_done, request  # noqa: E402,F401


def skip(why):
    print("PLOTQ-SKIP: " + why, flush=True)
    sys.exit(0)


def raise_nofile(want):
    """Raises this process's soft RLIMIT_NOFILE towards want (children inherit it); the limit got."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    got = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if got > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (got, hard))
    return max(got, soft)


def start(binary, env, name):
    work = tempfile.mkdtemp(prefix="plotq-flood-%s-" % name)
    d = Plotqd(binary, os.path.join(work, "plotq.db"), os.path.join(work, "plotqd.log"), env)
    return d.start(), work


def parse_answer(raw):
    """(status, detail or None, headers dict) of one HTTP answer in raw bytes; status None when none."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1."):
        return None, None, {}
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
    detail = None
    if headers.get("content-type", "").startswith("application/json"):
        n = int(headers.get("content-length", len(body)))
        try:
            import json
            detail = json.loads(body[:n]).get("detail")
        except (ValueError, AttributeError):
            detail = None
    return status, detail, headers


def raw_exchange(port, data, timeout=10.0, feed=None):
    """Sends data (bytes) on a fresh connection, then what feed() yields (a generator of bytes),
    from a thread, while this one reads until the server closes or timeout: the server may answer
    before the body is sent (413). Returns (status, detail, closed, seconds to the close)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    t0 = time.monotonic()

    def send():
        try:
            s.sendall(data)
            for piece in (feed() if feed else ()):
                s.sendall(piece)
        except OSError:
            pass  # the server answered and closed while we were still sending

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    got = b""
    closed = False
    s.settimeout(0.5)
    try:
        while time.monotonic() - t0 < timeout:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            got += chunk
            st, _, h = parse_answer(got)
            if st is not None and h.get("connection", "").lower() != "close":
                if len(got.partition(b"\r\n\r\n")[2]) >= int(h.get("content-length", "0")):
                    break  # a whole kept-alive answer: nothing more will come
    finally:
        took = time.monotonic() - t0
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()
        sender.join(5)
    status, detail, _ = parse_answer(got)
    return status, detail, closed, took


def post_raw(path, body, extra=b"", user=b"flood"):
    """A POST with a Content-Length body, as bytes (body is sent exactly as given)."""
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Plotq-User: " + user +
            b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() +
            b"\r\nConnection: close\r\n" + extra + b"\r\n" + body)


def still_serving(d, fail, why):
    if d.proc.poll() is not None:
        fail.append("%s: plotqd exited (%s)" % (why, d.proc.returncode))
        return False
    try:
        st, body = request(d.port, "GET", "/healthz", timeout=10)
    except OSError as e:
        fail.append("%s: /healthz failed: %r" % (why, e))
        return False
    if st != 200:
        fail.append("%s: /healthz answered %s %r" % (why, st, body))
        return False
    return True


def plain_turn(port, session, user, text="hello", timeout=30):
    """The events of one plain turn read to done (dicts), or the HTTP error code."""
    s = Stream(port, "POST", "/v1/sessions/%s/messages" % session, {"text": text}, user=user, timeout=timeout)
    if s.status != 200:  # (the Stream closed itself)
        return s.error
    seen = []
    read_to_done(s, seen)
    s.close()
    return seen


def store_whole(db_path, fail):
    db = sqlite3.connect(db_path, timeout=30)
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check")]
        if rows != ["ok"]:
            fail.append("integrity_check: %r" % rows[:5])
        if db.execute("PRAGMA foreign_key_check").fetchall():
            fail.append("foreign_key_check is not empty")
    finally:
        db.close()


def report(name, fail, summary):
    for f in fail:
        print("FAIL " + f, flush=True)
    print("%s: %s" % (name, "FAILED (%d)" % len(fail) if fail else summary), flush=True)
    return 1 if fail else 0
