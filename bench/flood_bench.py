"""Floods and slow peers, measured (issue 16, section 3; bench/README.md "flood").

/usr/bin/python3 bench/flood_bench.py build/plotqd [--runs 3] [--turns 1000] [--slow 2000] [--idle 10000]

Each run starts a fresh plotqd (development mode, temp store) and, in one command:
  1. idle: plain-turn latency (request to `done`, a new connection each) on the idle server;
  2. flood: `--idle` silent connections and `--slow` slowloris peers (one header byte a second
     each, from one sender thread) held open, then the same plain turns again;
  3. cap: connections opened past PLOTQ_HTTP_MAX_CONNECTIONS (set to flood + 100): the 503s;
  4. after: the flood closed, the plain turns a third time;
  5. the same flood opened and closed once more (memory reused, not added to).
plotqd's RSS and PSS (/proc/PID/smaps_rollup) before, during and after. The read and idle timeouts
are raised to 600 s so the flood stays whole while it is measured (with the defaults, 30 s and
60 s, plotqd closes the slow and the idle peers itself; tests/flood/peers.py checks that).
Prints one line per run and the medians over runs. Standard library only.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "flood"))
from flood_lib import new_session, plain_turn, raise_nofile, start  # noqa: E402


def memory_kib(pid):
    got = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Rss", "Pss"):
                got[k] = int(v.split()[0])
    return got["Rss"], got["Pss"]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def turns(port, sid, n):
    """Latencies (ms) of n plain turns in a row, each read to done; a failed turn fails the bench."""
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        seen = plain_turn(port, sid, "bench", "t%d" % i, timeout=30)
        out.append((time.perf_counter() - t0) * 1000)
        if not isinstance(seen, list) or [e["event"] for e in seen] != ["ready", "message", "done"]:
            raise SystemExit("a plain turn failed: %r" % (seen,))
    return out


def open_many(port, n, first=b""):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if first:
            s.sendall(first)
        socks.append(s)
    return socks


class Trickle(threading.Thread):
    """One header byte a second on every slow socket."""

    def __init__(self, socks):
        super().__init__(daemon=True)
        self.socks, self.stop, self.lost = socks, False, 0

    def run(self):
        for s in self.socks:
            s.setblocking(False)
        while not self.stop:
            t0 = time.monotonic()
            for s in self.socks:
                try:
                    s.send(b"a")
                except OSError:
                    self.lost += 1
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))


def answer_status(s):
    s.settimeout(10)
    got = b""
    try:
        while b"\r\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except OSError:
        return None
    return int(got.split(b" ")[1]) if got.startswith(b"HTTP/1.") else None


def one_run(binary, a):
    cap = a.idle + a.slow + 100
    d, _ = start(binary, {"PLOTQ_HTTP_MAX_CONNECTIONS": str(cap), "PLOTQ_HTTP_READ_TIMEOUT_S": "600",
                          "PLOTQ_HTTP_IDLE_TIMEOUT_S": "600", "PLOTQ_LOG_REQUESTS": "false",
                          "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000000", "PLOTQ_USER_MESSAGES_PER_DAY": "100000000",
                          "PLOTQ_WARM_MODES": "data"}, "bench")
    r = {}
    try:
        sid = new_session(d.port, "bench")
        turns(d.port, sid, 100)  # warm-up
        r["mem_before"] = memory_kib(d.pid)
        idle = turns(d.port, sid, a.turns)
        t0 = time.monotonic()
        quiet = open_many(d.port, a.idle)
        slow = open_many(d.port, a.slow, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        r["open_s"] = time.monotonic() - t0
        trickle = Trickle(slow)
        trickle.start()
        time.sleep(2)
        r["mem_during"] = memory_kib(d.pid)
        loaded = turns(d.port, sid, a.turns)
        # The cap: 100 places left (the turns' own connections are closed); 300 more asked for.
        extra = open_many(d.port, 300)
        time.sleep(0.5)
        r["mem_at_cap"] = memory_kib(d.pid)
        statuses = []
        for s in extra:  # the admitted are asked for /healthz; the refused have their 503 waiting
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for s in extra:
            statuses.append(answer_status(s))
        r["cap"] = {str(k): statuses.count(k) for k in sorted(set(statuses), key=str)}
        trickle.stop = True
        trickle.join(5)
        r["slow_lost"] = trickle.lost
        for s in quiet + slow + extra:
            s.close()
        time.sleep(3)
        r["mem_after"] = memory_kib(d.pid)
        after = turns(d.port, sid, a.turns)
        # The same flood again on the same server: freed memory is reused, not added to (bounded).
        again = open_many(d.port, a.idle) + open_many(d.port, a.slow, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        time.sleep(2)
        r["mem_during2"] = memory_kib(d.pid)
        for s in again:
            s.close()
        time.sleep(3)
        r["mem_after2"] = memory_kib(d.pid)
        r["alive"] = d.proc.poll() is None
        r["refused_logged"] = len(d.events("connection_refused"))
    finally:
        d.stop()
    for name, xs in (("idle", idle), ("flood", loaded), ("after", after)):
        r[name] = (statistics.median(xs), pct(xs, 99))
    r["ratio_p99"] = r["flood"][1] / r["idle"][1]
    r["ratio_p50"] = r["flood"][0] / r["idle"][0]
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plotqd")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--slow", type=int, default=2000)
    ap.add_argument("--idle", type=int, default=10000)
    a = ap.parse_args()
    got = raise_nofile(a.idle + a.slow + 1000)
    if got < a.idle + a.slow + 500:
        raise SystemExit("RLIMIT_NOFILE %d is too low for %d connections" % (got, a.idle + a.slow))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    print("flood_bench: %s, commit %s, %d runs x %d turns, %d slow + %d idle peers, load %.1f"
          % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), commit, a.runs, a.turns, a.slow, a.idle,
             os.getloadavg()[0]), flush=True)
    runs = []
    for i in range(a.runs):
        r = one_run(a.plotqd, a)
        runs.append(r)
        print("run %d: plain turn p50/p99 idle %.2f/%.2f ms, flood %.2f/%.2f ms (p99 x%.2f), after %.2f/%.2f ms; "
              "opened in %.1f s; cap answers %s; RSS/PSS KiB before %s during %s at cap %s after %s; "
              "second flood %s after %s; slow sends lost %d; alive %s; load %.1f"
              % (i + 1, *r["idle"], *r["flood"], r["ratio_p99"], *r["after"], r["open_s"], r["cap"],
                 r["mem_before"], r["mem_during"], r["mem_at_cap"], r["mem_after"], r["mem_during2"],
                 r["mem_after2"], r["slow_lost"], r["alive"],
                 os.getloadavg()[0]), flush=True)

    def med(f):
        return statistics.median(f(r) for r in runs)
    n = a.idle + a.slow
    print("median of %d: idle p50 %.2f p99 %.2f ms; flood p50 %.2f p99 %.2f ms; p99 flood/idle %.2fx (target <= 2x); "
          "after p50 %.2f p99 %.2f ms; RSS before %.0f during %.0f after %.0f KiB (%.2f KiB per held connection); "
          "PSS before %.0f during %.0f after %.0f KiB; second flood RSS during %.0f after %.0f KiB"
          % (len(runs), med(lambda r: r["idle"][0]), med(lambda r: r["idle"][1]), med(lambda r: r["flood"][0]),
             med(lambda r: r["flood"][1]), med(lambda r: r["ratio_p99"]), med(lambda r: r["after"][0]),
             med(lambda r: r["after"][1]), med(lambda r: r["mem_before"][0]), med(lambda r: r["mem_during"][0]),
             med(lambda r: r["mem_after"][0]),
             med(lambda r: (r["mem_during"][0] - r["mem_before"][0]) / n), med(lambda r: r["mem_before"][1]),
             med(lambda r: r["mem_during"][1]), med(lambda r: r["mem_after"][1]),
             med(lambda r: r["mem_during2"][0]), med(lambda r: r["mem_after2"][0])), flush=True)
    return 0 if all(r["alive"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
