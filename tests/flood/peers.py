"""flood.peers: the connection cap and slow peers (issue 16, section 3), on a plotqd with a small
PLOTQ_HTTP_MAX_CONNECTIONS and short header/idle timeouts. Correctness only (speed is bench/):

- with the cap's connections open and silent, each one more is answered 503 unavailable and
  closed, while the admitted ones are still served; once they close, new ones are admitted again;
- while slowloris peers (a header byte every second) are connected, plain turns still answer
  (ready, message, done); each slow peer is closed by plotqd, without an answer, by the read timeout
  (PLOTQ_HTTP_READ_TIMEOUT_S: one whole request from its first byte), not by its own giving up;
- a kept-alive peer that made one request and then says nothing is closed by the idle timeout;
- under a descriptor limit below the cap, the cap is lowered to fit it (503s, not a stalled accept)."""
import os
import socket
import sys
import tempfile
import threading
import time

from flood_lib import Plotqd, new_session, parse_answer, plain_turn, report, request, start, still_serving

CAP = 60
READ_S = 3    # PLOTQ_HTTP_READ_TIMEOUT_S
IDLE_S = 4    # PLOTQ_HTTP_IDLE_TIMEOUT_S
SLOW = 40     # slowloris peers (under the cap: the plain turns need connections too)
NOFILE = 320  # descriptors of the plotqd whose cap must be lowered to fit them


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def answer_of(s, timeout=5):
    """(status, detail) of what the server sends on s until it closes, or (None, None)."""
    s.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"\r\n\r\n" in got and parse_answer(got)[2].get("connection") != "close":
                st, _, h = parse_answer(got)
                if len(got.partition(b"\r\n\r\n")[2]) >= int(h.get("content-length", "0")):
                    break
    except OSError:
        pass
    st, detail, _ = parse_answer(got)
    return st, detail


def healthz_on(s):
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    return answer_of(s)[0]


def ten_past_the_cap(d):
    """The answers of 10 connections made one at a time while every place is held."""
    over = []
    for _ in range(10):
        s = connect(d.port)
        over.append(answer_of(s))
        s.close()
    return over


def cap_check(d, fail):
    # No wait: plotqd's one acceptor takes connections in the order they were made, so each of the
    # ten is accepted after every held one is a session.
    held = [connect(d.port) for _ in range(CAP)]
    over = ten_past_the_cap(d)
    if over != [(503, "unavailable")] * 10:
        fail.append("past the cap of %d: wanted 10 x 503 unavailable, got %r" % (CAP, over))
    served = [healthz_on(s) for s in held]
    if served != [200] * CAP:
        fail.append("the %d admitted connections: wanted 200 on each, got %r" % (CAP, served))
    for s in held:
        s.close()
    time.sleep(0.5)  # kept: plotqd reports no session's end; its loop must have seen the closes
    again = [connect(d.port) for _ in range(CAP)]
    served = [healthz_on(s) for s in again]
    for s in again:
        s.close()
    time.sleep(0.5)  # plotqd sees the closes on its loop; the next test needs their places
    if served != [200] * CAP:
        fail.append("after the held connections closed: wanted %d admitted, got %r" % (CAP, served))
    print("cap: %d held, 10 over -> %r, re-admitted %d" % (CAP, over[0], served.count(200)), flush=True)


class Slowloris:
    """Peers that each send one header byte a second, never ending the headers."""

    def __init__(self, port, n):
        self.socks = []
        for _ in range(n):
            s = connect(port)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            self.socks.append(s)
        self.opened = time.monotonic()
        self.closed_at = {}
        self.answered = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop and len(self.closed_at) < len(self.socks):
            for i, s in enumerate(self.socks):
                if i in self.closed_at:
                    continue
                try:
                    s.setblocking(False)
                    try:
                        data = s.recv(4096)
                        if data:
                            self.answered += 1
                        self.closed_at[i] = time.monotonic()  # EOF, or an answer (counted)
                        continue
                    except BlockingIOError:
                        pass
                    s.send(b"a")
                except OSError:
                    self.closed_at[i] = time.monotonic()
            time.sleep(1.0)

    def finish(self):
        self.stop = True
        self.t.join(5)
        for s in self.socks:
            s.close()


def slow_peers(d, fail):
    sid = new_session(d.port, "fast")
    slow = Slowloris(d.port, SLOW)
    turns = 0
    while time.monotonic() - slow.opened < READ_S - 0.5 and turns < 100:  # the slow peers are all still connected
        seen = plain_turn(d.port, sid, "fast", "t%d" % turns, timeout=10)
        names = [e["event"] for e in seen] if isinstance(seen, list) else seen
        if names != ["ready", "message", "done"]:
            fail.append("a plain turn beside %d slow peers: %r" % (SLOW, names))
            break
        turns += 1
    during = len(slow.closed_at)
    deadline = time.monotonic() + READ_S + 10
    while len(slow.closed_at) < SLOW and time.monotonic() < deadline:
        time.sleep(0.2)
    slow.finish()
    if during:
        fail.append("%d slow peers were closed before the read timeout" % during)
    if turns == 0:
        fail.append("no plain turn answered beside the slow peers")
    if len(slow.closed_at) != SLOW:
        fail.append("slow peers not closed by plotqd within %d s: %d of %d" % (READ_S + 10, SLOW - len(slow.closed_at), SLOW))
    if slow.answered:
        fail.append("%d slow peers got bytes back (wanted a silent close)" % slow.answered)
    timeouts = len(d.events("http_read_timeout"))
    if timeouts < SLOW:
        fail.append("plotqd logged %d http_read_timeout, wanted %d (one per slow peer)" % (timeouts, SLOW))
    ages = sorted(t - slow.opened for t in slow.closed_at.values())
    print("slowloris: %d plain turns answered beside %d slow peers; closed after %.1f-%.1f s (read timeout %d s)"
          % (turns, SLOW, ages[0] if ages else -1, ages[-1] if ages else -1, READ_S), flush=True)


def idle_peer(d, fail):
    s = connect(d.port)
    if healthz_on(s) != 200:
        fail.append("the kept-alive peer's first request was not answered")
    t0 = time.monotonic()
    st, _ = answer_of(s, timeout=IDLE_S + 10)
    took = time.monotonic() - t0
    s.close()
    if st is not None or took > IDLE_S + 5:
        fail.append("a silent kept-alive peer: wanted a close at the idle timeout (%d s), got %r after %.1f s"
                    % (IDLE_S, st, took))
    print("idle: a silent kept-alive peer closed after %.1f s (idle timeout %d s)" % (took, IDLE_S), flush=True)


def fd_cap_check(binary, fail):
    """plotqd under a descriptor limit below its cap (the default 16,384 under `ulimit -n 320`):
    the cap is lowered to what the descriptors allow, so a connection past it is answered 503
    instead of waiting unanswered in the backlog, and the store and a plain turn still work on the
    last places."""
    work = tempfile.mkdtemp(prefix="plotq-flood-nofile-")
    wrapper = os.path.join(work, "plotqd.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nulimit -n %d || exit 97\nexec %s \"$@\"\n" % (NOFILE, binary))
    os.chmod(wrapper, 0o755)
    d = Plotqd(wrapper, os.path.join(work, "plotq.db"), os.path.join(work, "plotqd.log"),
               {"PLOTQ_USER_MESSAGES_PER_MINUTE": "100000"}).start()
    try:
        low = d.events("connection_cap_lowered")
        cap = low[0]["effective"] if low else None
        if cap != NOFILE - 256:
            fail.append("under ulimit -n %d: wanted the cap lowered to %d, got %r" % (NOFILE, NOFILE - 256, low))
            return
        sid = new_session(d.port, "nofile")
        held = [connect(d.port) for _ in range(cap - 2)]  # two places: a closed one is freed a little later
        st, body = request(d.port, "POST", "/v1/sessions/%s/datasets" % sid, {"text": "a,b\n1,2\n"}, user="nofile",
                           timeout=10)
        seen = plain_turn(d.port, sid, "nofile", "last place", timeout=10)
        if st != 201 or not isinstance(seen, list) or [e["event"] for e in seen] != ["ready", "message", "done"]:
            fail.append("on the last places under the lowered cap: paste %s, turn %r" % (st, seen))
        time.sleep(0.3)  # kept: the paste's and the turn's closes seen by the loop (nothing reports them)
        held += [connect(d.port), connect(d.port)]  # accepted before the ten below (one acceptor, in order)
        over = ten_past_the_cap(d)
        if over != [(503, "unavailable")] * 10:
            fail.append("past the lowered cap of %d: wanted 10 x 503 unavailable, got %r" % (cap, over))
        if d.events("accept_failed"):
            fail.append("accept() failed %d times (out of descriptors) under the lowered cap" % len(d.events("accept_failed")))
        for s in held:
            s.close()
        print("nofile: ulimit -n %d, cap lowered to %d; past it %r" % (NOFILE, cap, over[0]), flush=True)
    finally:
        d.stop()


def main():
    d, _ = start(sys.argv[1], {"PLOTQ_HTTP_MAX_CONNECTIONS": str(CAP), "PLOTQ_HTTP_READ_TIMEOUT_S": str(READ_S),
                               "PLOTQ_HTTP_IDLE_TIMEOUT_S": str(IDLE_S),
                               "PLOTQ_USER_MESSAGES_PER_MINUTE": "100000", "PLOTQ_USER_MESSAGES_PER_DAY": "100000"}, "peers")
    fail = []
    try:
        cap_check(d, fail)
        slow_peers(d, fail)
        idle_peer(d, fail)
        still_serving(d, fail, "after the slow peers")
        st, _ = request(d.port, "GET", "/v1/status")
        if st != 200:
            fail.append("/v1/status after the floods: %s" % st)
    finally:
        d.stop()
    fd_cap_check(sys.argv[1], fail)
    return report("peers", fail, "cap answered 503 unavailable past %d; plain turns answered beside %d slow peers, "
                  "each closed by the read timeout" % (CAP, SLOW))


if __name__ == "__main__":
    sys.exit(main())
