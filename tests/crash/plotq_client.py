"""A real plotqd for the crash tests, and a small client for it (standard library only).

Plotqd: started on 127.0.0.1:0 on a given SQLite file, without the caller's PLOTQ_* variables,
its JSON log lines read from stderr (the "listening" line gives the port) and kept in a file.
Client: one request per connection (http.client), and a turn's Server-Sent Events read frame by
frame. Every failure of the transport raises OSError or http.client.HTTPException, which is what a
killed server looks like to a client.
"""
import ctypes
import http.client
import json
import os
import signal
import subprocess
import threading
import time


def _die_with_parent():
    # A driver killed by a timeout must not leave its plotqd serving (PR_SET_PDEATHSIG, SIGKILL).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


class Plotqd:
    def __init__(self, binary, db_path, log_path, env=None):
        self.binary = binary
        self.db_path = db_path
        self.log_path = log_path
        self.extra = dict(env or {})
        self.proc = None
        self.port = None
        self._lines = []
        self._cv = threading.Condition()

    def start(self, timeout=60):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLOTQ_")}
        env.update({"PLOTQ_LISTEN": "127.0.0.1:0", "PLOTQ_DB": self.db_path,
                    "PLOTQ_ENVIRONMENT": "development"})
        env.update(self.extra)
        self._lines = []
        self.port = None
        log = open(self.log_path, "ab")
        log.write(b"--- start\n")
        log.flush()
        self.proc = subprocess.Popen([self.binary], env=env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        threading.Thread(target=self._read, args=(self.proc, log), daemon=True).start()
        ev = self.wait_log("listening", timeout)
        if ev is None:
            self.kill()
            raise RuntimeError("plotqd did not start; see " + self.log_path)
        self.port = int(ev["address"].rsplit(":", 1)[1])
        return self

    def _read(self, proc, log):
        # Reads until EOF: children that kept the pipe (they should not) would keep it open.
        for raw in proc.stderr:
            log.write(raw)
            log.flush()
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            with self._cv:
                self._lines.append(ev)
                self._cv.notify_all()
        log.close()

    def wait_log(self, event, timeout, pred=None):
        end = time.monotonic() + timeout
        with self._cv:
            seen = 0
            while True:
                for ev in self._lines[seen:]:
                    if isinstance(ev, dict) and ev.get("event") == event and (pred is None or pred(ev)):
                        return ev
                seen = len(self._lines)
                left = end - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and seen == len(self._lines)):
                    return None
                self._cv.wait(min(left, 0.2))

    def events(self, event):
        with self._cv:
            return [e for e in self._lines if isinstance(e, dict) and e.get("event") == event]

    @property
    def pid(self):
        return self.proc.pid

    def kill(self):
        """SIGKILL plotqd alone (never its group): what a crash does to it."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc:
            self.proc.wait()

    def stop(self, timeout=20):
        # SIGTERM drains: running work gets PLOTQ_SHUTDOWN_GRACE_S. A test's teardown does not wait
        # for it: a second SIGTERM after 1 s skips what is left of the drain (docs/server.md).
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(1)
                return
            except subprocess.TimeoutExpired:
                pass
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()


def request(port, method, path, body=None, user="dev", headers=None, timeout=30):
    """(status, parsed JSON or raw bytes) of one request."""
    return request_h(port, method, path, body, user, headers, timeout)[:2]


def request_h(port, method, path, body=None, user="dev", headers=None, timeout=30):
    """(status, parsed JSON or raw bytes, response headers as a dict) of one request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = {"X-Plotq-User": user}
        h.update(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        raw = resp.read()
        ctype = resp.getheader("Content-Type", "")
        got = dict(resp.getheaders())
        if ctype.startswith("application/json"):
            return resp.status, json.loads(raw), got
        return resp.status, raw, got
    finally:
        conn.close()


class Stream:
    """A turn's event stream: POST a message, or GET a resume with Last-Event-ID."""

    def __init__(self, port, method, path, body=None, user="dev", headers=None, timeout=30):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        h = {"X-Plotq-User": user, "Accept": "text/event-stream"}
        h.update(headers or {})
        data = json.dumps(body) if body is not None else None
        if data is not None:
            h["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=h)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.headers = dict(self.resp.getheaders())
        self.error = None
        if self.status != 200:
            raw = self.resp.read()
            try:
                self.error = json.loads(raw).get("detail")
            except ValueError:
                self.error = raw[:80]
            self.close()

    def next(self):
        """The next event as {id, event, data} (pings and retry frames skipped); None at the end."""
        fields = {}
        data = []
        while True:
            line = self.resp.readline()
            if not line:
                return None  # closed: a complete frame never ends without its blank line
            line = line.decode("utf-8").rstrip("\r\n")
            if line == "":
                if "event" in fields or data:
                    return {"id": int(fields["id"]) if "id" in fields else None,
                            "event": fields.get("event", "message"),
                            "data": json.loads("\n".join(data)) if data else None}
                fields, data = {}, []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name in ("id", "event"):
                fields[name] = value

    def close(self):
        self.conn.close()


def read_to_done(stream, seen):
    """Appends every event to seen; True when done was read."""
    while True:
        ev = stream.next()
        if ev is None:
            return False
        seen.append(ev)
        if ev["event"] == "done":
            return True


def new_session(port, user):
    status, body = request(port, "POST", "/v1/sessions", user=user)
    if status != 201:
        raise RuntimeError("session: %s %r" % (status, body))
    return body["id"]
