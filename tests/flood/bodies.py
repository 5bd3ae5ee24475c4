"""flood.bodies: hostile bodies and headers on every route that reads one (issue 16, section 3).
Each case must get its documented answer (docs/api.md, "Hostile input"): the status and the code
of the vocabulary, or, for a request that never ends, a close at the read timeout without an
answer. After every case plotqd still answers; at the end what was stored before is intact."""
import json
import sys
import time

from flood_lib import (Stream, new_session, plain_turn, post_raw, raw_exchange, read_to_done, report,
                       request, start, still_serving, store_whole)

READ_TIMEOUT_S = 2  # PLOTQ_HTTP_READ_TIMEOUT_S here: a request that never ends is closed after it
MB = 1024 * 1024


def deep_array(n):
    return b"[" * n + b"]" * n


def deep_object(n):
    return b'{"a":' * n + b"1" + b"}" * n


def chunked_head(path):
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")


def chunks_of(total, size=64 * 1024):
    def feed():
        piece = b"%x\r\n" % size + b"a" * size + b"\r\n"
        for _ in range(total // size):
            yield piece
    return feed


def trickle(seconds, every=0.2):
    """Small chunks for `seconds`, never the last one: a body that does not end."""
    def feed():
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            yield b"1\r\na\r\n"
            time.sleep(every)
    return feed


def cases(sid, turn):
    """(name, raw request, feed, expected (status, code), or "closed": no answer, closed by the read timeout)."""
    M = "/v1/sessions/%s/messages" % sid
    P = "/v1/sessions/%s/datasets" % sid
    R, X = "/run-data", "/render"
    ok_run = b'"job_id":"j1","source":"print(1)","timeout_s":5'
    ok_render = b'"job_id":"r1","source":"x=1","library":"matplotlib","themes":["light"],"timeout_s":5'
    inv, big, bad = (422, "invalid_job"), (413, "too_large"), (400, "bad_request")
    out = []
    for path in (M, P, R, X, "/v1/sessions"):
        head = ("POST %s HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (path, 20 * MB)).encode()
        out.append(("20 MB body (Content-Length) " + path, head, chunks_of(20 * MB), big))
        out.append(("20 MB chunked body " + path, chunked_head(path), chunks_of(20 * MB), big))
        out.append(("chunked body that stops " + path, chunked_head(path) + b"4\r\n{\"te\r\n", None, "closed"))
    out.append(("chunked body that trickles for ever " + M, chunked_head(M), trickle(READ_TIMEOUT_S + 4), "closed"))
    for path, body in ((M, b'{"text":"%s"}'), (P, b'{"text":"%s"}'), (R, b'{"job_id":"%s","source":"x","timeout_s":1}'),
                       (X, b'{"job_id":"r","source":"%s","library":"matplotlib","themes":["light"],"timeout_s":5}')):
        for what, bad_bytes in (("invalid UTF-8", b"\xff\xfe"), ("overlong UTF-8", b"\xc0\xaf"),
                                ("lone surrogate escape", b"\\ud800"), ("raw NUL", b"a\x00b"),
                                ("raw control byte", b"a\x01b")):
            out.append(("%s %s" % (what, path), post_raw(path, body.replace(b"%s", bad_bytes)), None, inv))
    out += [
        ("escaped NUL in a paste", post_raw(P, b'{"text":"a,b\\n1,\\u00002\\n"}'), None, (422, "control_chars")),
        ("escaped NUL in a job id", post_raw(R, b'{"job_id":"a\\u0000b","source":"x","timeout_s":1}'), None, inv),
        ("escaped NUL in a library", post_raw(X, b'{"job_id":"r","source":"x","library":"matplotlib\\u0000",'
                                                b'"themes":["light"],"timeout_s":5}'), None, inv),
        ("NUL in a header value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", None, bad),
        ("not JSON", post_raw(M, b"{text: hello}"), None, inv),
        ("empty body", post_raw(M, b""), None, inv),
        ("JSON array, 100,000 deep", post_raw(M, deep_array(100000)), None, inv),
        ("JSON object, 100,000 deep", post_raw(P, deep_object(100000)), None, inv),
        ("100,000 deep inside a paste's text", post_raw(P, b'{"text":' + deep_array(100000) + b"}"), None, inv),
        ("100,000 deep inside an action", post_raw(M, b'{"text":"hi","action":{"kind":"data","code":"x",'
                                                      b'"source_language":"python","x":' + deep_array(100000) + b"}}"), None, inv),
        ("100,000 deep as an action's code", post_raw(M, b'{"text":"hi","action":{"kind":"data","code":' +
                                                      deep_array(100000) + b',"source_language":"python"}}'), None, inv),
        ("30,000 deep as /run-data's source", post_raw(R, b'{"job_id":"j","timeout_s":1,"source":' + deep_array(30000) + b"}"), None, inv),
        ("100,000 deep to /run-data (over its 64 KiB)", post_raw(R, deep_array(100000)), None, big),
        ("100,000 deep as /render's themes", post_raw(X, b'{' + ok_render.replace(b'["light"]', deep_array(100000)) + b"}"), None, inv),
        ("timeout_s 1e400", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":1e400}'), None, inv),
        ("timeout_s 1e308", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":1e308}'), None, inv),
        ("timeout_s 2^64", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":18446744073709551616}'), None, inv),
        ("timeout_s -1", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":-1}'), None, inv),
        ("timeout_s 0", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":0}'), None, inv),
        ("timeout_s a 10,000-digit number", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":' + b"9" * 10000 + b"}"), None, inv),
        ("timeout_s true", post_raw(R, b'{"job_id":"j","source":"x","timeout_s":true}'), None, inv),
        ("render timeout_s 1e400", post_raw(X, b'{' + ok_render.replace(b":5", b":1e400") + b"}"), None, inv),
        ("text 1e400", post_raw(M, b'{"text":1e400}'), None, inv),
        ("text -1e400", post_raw(P, b'{"text":-1e400}'), None, inv),
        ("duplicate key text", post_raw(M, b'{"text":"a","text":"b"}'), None, inv),
        ("duplicate key in an action", post_raw(M, b'{"text":"a","action":{"kind":"plot","kind":"data","code":"x",'
                                                   b'"source_language":"python"}}'), None, inv),
        ("duplicate key in a paste", post_raw(P, b'{"text":"a,b\\n1,2\\n","text":"a,b\\n1,2\\n"}'), None, inv),
        ("duplicate key job_id", post_raw(R, b'{' + ok_run + b',"job_id":"j2"}'), None, inv),
        ("duplicate key timeout_s", post_raw(R, b'{' + ok_run + b',"timeout_s":5}'), None, inv),
        ("duplicate key themes", post_raw(X, b'{' + ok_render + b',"themes":["dark"]}'), None, inv),
        ("headers of 100 KB", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 100000 + b"\r\n\r\n", None, (431, "headers_too_large")),
        ("request target of 20 KB", b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", None, (431, "headers_too_large")),
        ("10,000 headers", b"GET /healthz HTTP/1.1\r\n" + b"X-A: a\r\n" * 10000 + b"\r\n", None, (431, "headers_too_large")),
        ("request line of garbage", b"\x00\x01\x02 \xff\r\n\r\n", None, bad),
        ("HTTP/9.9", b"GET /healthz HTTP/9.9\r\n\r\n", None, bad),
        ("Content-Length -1", b"POST " + M.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", None, bad),
        ("Content-Length 10^30", b"POST " + M.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 1" + b"0" * 30 + b"\r\n\r\n", None, bad),
        ("two Content-Lengths", b"POST " + M.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", None, bad),
        ("chunk size 10^30", chunked_head(M) + b"1" + b"0" * 30 + b"\r\n", None, bad),
        ("bad percent-encoding", b"GET /v1/sessions/%zz/datasets HTTP/1.1\r\nHost: x\r\n\r\n", None, bad),
        ("user name of invalid UTF-8", post_raw("/v1/sessions", b"", user=b"\xff\xfe"), None, bad),
        ("user name of 1,000 characters", post_raw("/v1/sessions", b"", user=b"u" * 1000), None, bad),
        ("user name of 10 KB (one header over the limit)", post_raw("/v1/sessions", b"", user=b"u" * 10000), None,
         (431, "headers_too_large")),
        ("dataset version 10^30", b"GET " + P.encode() + b"/1" + b"0" * 30 + b" HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\n\r\n", None, (404, "not_found")),
        ("dataset version -1", b"GET " + P.encode() + b"/-1 HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\n\r\n", None, (404, "not_found")),
    ]
    E = "/v1/sessions/%s/turns/%s/events" % (sid, turn)
    for what, v in (("10^30", "1" + "0" * 30), ("-1", "-1"), ("1e3", "1e3"), ("2^63", "9223372036854775808"),
                    ("empty", ""), ("0x10", "0x10")):
        raw = ("GET %s HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\nLast-Event-ID: %s\r\n\r\n" % (E, v)).encode()
        out.append(("Last-Event-ID " + what, raw, None, bad))
    raw = ("GET %s?after=%s HTTP/1.1\r\nHost: x\r\nX-Plotq-User: flood\r\n\r\n" % (E, "1" + "0" * 30)).encode()
    out.append(("?after=10^30", raw, None, bad))
    return out


def stored_view(port, sid, turn):
    """What the tests stored before the floods, read back over HTTP."""
    s = Stream(port, "GET", "/v1/sessions/%s/turns/%s/events" % (sid, turn), user="flood", timeout=10)
    events = []
    read_to_done(s, events)
    s.close()
    return (request(port, "GET", "/v1/sessions/%s/datasets" % sid, user="flood"),
            request(port, "GET", "/v1/sessions/%s/datasets/1" % sid, user="flood"), events)


def main():
    d, work = start(sys.argv[1], {"PLOTQ_HTTP_READ_TIMEOUT_S": str(READ_TIMEOUT_S),
                                  "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000"}, "bodies")
    fail = []
    try:
        sid = new_session(d.port, "flood")
        st, body = request(d.port, "POST", "/v1/sessions/%s/datasets" % sid, {"text": "a,b\n1,2\n3,4\n"}, user="flood")
        if st != 201:
            fail.append("the paste before the floods: %s %r" % (st, body))
        request(d.port, "POST", "/v1/sessions/%s/datasets/1/confirm" % sid, user="flood")
        s = Stream(d.port, "POST", "/v1/sessions/%s/messages" % sid, {"text": "before"}, user="flood")
        first = s.next()
        turn = first["data"]["turn"]
        read_to_done(s, [])
        s.close()
        before = stored_view(d.port, sid, turn)

        tried = 0
        for name, raw, feed, want in cases(sid, turn):
            tried += 1
            status, code, closed, took = raw_exchange(d.port, raw, timeout=READ_TIMEOUT_S + 8, feed=feed)
            got = "closed" if status is None and closed else (status, code)
            print("case %-50s -> %s (%.1f s)" % (name, got if status is not None else
                                                  ("closed" if closed else "no answer, still open"), took), flush=True)
            if got != want:
                fail.append("%s: wanted %s, got %s" % (name, want, got if status is not None or closed else "a hang"))
            if not still_serving(d, fail, name):
                d.start()  # one crash must not hide the others

        # An id within the 18 digits the resume takes but past every event: nothing to replay, and
        # the stream of the ended turn closes (no wait for a live turn that is not there).
        s = Stream(d.port, "GET", "/v1/sessions/%s/turns/%s/events" % (sid, turn), user="flood",
                   headers={"Last-Event-ID": "9" * 18}, timeout=10)
        try:
            extra = s.next() if s.status == 200 else "status %s" % s.status
        except OSError as e:
            extra = "no close: %r" % e
        s.close()
        if extra is not None:
            fail.append("Last-Event-ID 10^18-1 on an ended turn: wanted an empty stream that closes, got %r" % (extra,))
        after = stored_view(d.port, sid, turn)
        if after != before:
            fail.append("what was stored before the floods changed: %r -> %r" % (before, after))
        seen = plain_turn(d.port, sid, "flood", "after")
        if not isinstance(seen, list) or [e["event"] for e in seen] != ["ready", "message", "done"]:
            fail.append("a plain turn after the floods: %r" % (seen,))
    finally:
        d.stop()
    store_whole(d.db_path, fail)
    return report("bodies", fail, "%d hostile requests, each its documented answer; server up, store intact" % tried)


if __name__ == "__main__":
    sys.exit(main())
