"""PostgreSQL for the crash and fault tests (issue 32), standard library only: Debian's libpq through
ctypes (a connection that reads typed rows, holds a lock, or reads what plotqd stored), a schema of
a test's own on a given server, and a throwaway server of a test's own that it may stop and start
again (tools/pg.sh start/down/up/stop; never a server the test did not start).

  Conn(conninfo).execute(sql, params)   '?' placeholders as SQLite's; rows as tuples of int, float,
                                        bool, bytes or str (by the column's type), .fetchone()/.fetchall()
  own_schema(server) -> (target, drop)  a schema for plotqd alone: PLOTQ_DB target and its drop
  Server(tmp).start() / down(mode) / up() / stop()
"""
import ctypes
import ctypes.util
import os
import re
import secrets
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_SH = os.path.join(ROOT, "tools", "pg.sh")

_lib = None


def libpq():
    """libpq, or None when it is not installed."""
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("pq")
        if not name:
            return None
        lib = ctypes.CDLL(name)
        lib.PQconnectdb.restype = ctypes.c_void_p
        lib.PQconnectdb.argtypes = [ctypes.c_char_p]
        lib.PQstatus.argtypes = [ctypes.c_void_p]
        lib.PQerrorMessage.restype = ctypes.c_char_p
        lib.PQerrorMessage.argtypes = [ctypes.c_void_p]
        lib.PQfinish.argtypes = [ctypes.c_void_p]
        lib.PQexecParams.restype = ctypes.c_void_p
        lib.PQexecParams.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p,
                                     ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int]
        lib.PQresultStatus.argtypes = [ctypes.c_void_p]
        lib.PQresultErrorMessage.restype = ctypes.c_char_p
        lib.PQresultErrorMessage.argtypes = [ctypes.c_void_p]
        lib.PQresultErrorField.restype = ctypes.c_char_p
        lib.PQresultErrorField.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.PQntuples.argtypes = [ctypes.c_void_p]
        lib.PQnfields.argtypes = [ctypes.c_void_p]
        lib.PQftype.restype = ctypes.c_uint
        lib.PQftype.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.PQgetisnull.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.PQgetvalue.restype = ctypes.c_void_p
        lib.PQgetvalue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.PQgetlength.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.PQclear.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


class PgError(Exception):
    def __init__(self, sqlstate, message):
        super().__init__("%s %s" % (sqlstate, message))
        self.sqlstate = sqlstate


# Column types by OID (pg_type): what a row's text becomes.
_INT = {20, 21, 23, 26}
_FLOAT = {700, 701, 1700}
_BOOL = 16
_BYTEA = 17


def _value(text, oid):
    if oid in _INT:
        return int(text)
    if oid in _FLOAT:
        return float(text)
    if oid == _BOOL:
        return text == b"t"
    if oid == _BYTEA:
        return bytes.fromhex(text[2:].decode()) if text.startswith(b"\\x") else text
    return text.decode("utf-8")


def _numbered(sql):
    """SQLite's ? placeholders as $1, $2, ... (none of the tests' SQL has a ? in a literal)."""
    out, n = [], 0
    for ch in sql:
        if ch == "?":
            n += 1
            out.append("$%d" % n)
        else:
            out.append(ch)
    return "".join(out)


class Rows(list):
    def fetchone(self):
        return self[0] if self else None

    def fetchall(self):
        return list(self)


class Conn:
    """One libpq connection (blocking: the tests' own side, never plotqd's)."""

    def __init__(self, conninfo):
        lib = libpq()
        if lib is None:
            raise RuntimeError("libpq is not installed")
        self._lib = lib
        self._c = lib.PQconnectdb(conninfo.encode())
        if lib.PQstatus(self._c) != 0:  # CONNECTION_OK
            msg = lib.PQerrorMessage(self._c).decode(errors="replace").strip()
            lib.PQfinish(self._c)
            self._c = None
            raise PgError("08006", msg)

    def execute(self, sql, params=()):
        lib = self._lib
        vals = (ctypes.c_char_p * max(1, len(params)))()
        for i, p in enumerate(params):
            vals[i] = None if p is None else (str(int(p)) if isinstance(p, bool) else str(p)).encode()
        r = lib.PQexecParams(self._c, _numbered(sql).encode(), len(params), None, vals, None, None, 0)
        try:
            st = lib.PQresultStatus(r)
            if st not in (1, 2):  # PGRES_COMMAND_OK, PGRES_TUPLES_OK
                state = lib.PQresultErrorField(r, ord("C")) if r else None
                msg = (lib.PQresultErrorMessage(r) if r else lib.PQerrorMessage(self._c)) or b""
                raise PgError((state or b"08006").decode(), msg.decode(errors="replace").strip())
            rows = Rows()
            types = [lib.PQftype(r, j) for j in range(lib.PQnfields(r))]
            for i in range(lib.PQntuples(r)):
                row = []
                for j, oid in enumerate(types):
                    if lib.PQgetisnull(r, i, j):
                        row.append(None)
                    else:
                        row.append(_value(ctypes.string_at(lib.PQgetvalue(r, i, j), lib.PQgetlength(r, i, j)), oid))
                rows.append(tuple(row))
            return rows
        finally:
            if r:
                lib.PQclear(r)

    def close(self):
        if self._c:
            self._lib.PQfinish(self._c)
            self._c = None


def is_target(store):
    """A PostgreSQL URI or libpq conninfo, as PLOTQ_DB tells them from a SQLite file's path
    (store/target.hpp: a conninfo starts with a keyword and `=`)."""
    return store.startswith(("postgresql://", "postgres://")) or re.match(r"\s*[a-z_]+\s*=", store) is not None


def with_search_path(server, schema):
    """The conninfo or URI of `server` with every session's search_path set to `schema` (as
    tests/support/test_store.hpp does)."""
    if server.startswith(("postgresql://", "postgres://")):
        return server + ("&" if "?" in server else "?") + "options=-csearch_path%3D" + schema
    return server + " options='-csearch_path=" + schema + "'"


def test_server():
    """PLOTQ_TEST_PG's conninfo, or None after printing why this test cannot run (PLOTQ-SKIP: ctest
    reports it skipped)."""
    server = os.environ.get("PLOTQ_TEST_PG", "")
    if not server:
        print("PLOTQ-SKIP: no PLOTQ_TEST_PG (run under tools/pg.sh run)")
        return None
    if libpq() is None:
        print("PLOTQ-SKIP: libpq is not installed")
        return None
    return server


def own_schema(server):
    """A fresh schema on `server` for one test's plotqd: (target, drop)."""
    schema = "crash_" + secrets.token_hex(4)
    c = Conn(server)
    try:
        c.execute("CREATE SCHEMA " + schema)
    finally:
        c.close()

    def drop():
        try:
            d = Conn(server)
            try:
                d.execute("SET client_min_messages = warning")
                d.execute("DROP SCHEMA " + schema + " CASCADE")
            finally:
                d.close()
        except (PgError, RuntimeError):
            pass

    return with_search_path(server, schema), drop


def server_binaries():
    """Why a test cannot start a server of its own here, or None when it can."""
    if libpq() is None:
        return "libpq is not installed"
    r = subprocess.run(["bash", PG_SH, "bindir"], capture_output=True, text=True)
    if r.returncode != 0:
        return "no PostgreSQL server binaries (tools/pg.sh bindir): " + r.stderr.strip()
    return None


class Server:
    """A throwaway PostgreSQL of the test's own (tools/pg.sh), in a dir under `tmp`, that the test
    may stop (down) and start again (up) on the same data."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "pg")
        self.conninfo = None

    def _sh(self, *args):
        r = subprocess.run(["bash", PG_SH] + list(args), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("tools/pg.sh %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout.strip()

    def start(self):
        # The server runs as the postgres user when the test is root: it must reach its dir.
        os.chmod(os.path.dirname(self.dir), 0o711)
        self.conninfo = self._sh("start", self.dir)
        return self

    def down(self, mode="fast"):
        """fast: the server ends every session and stops; immediate: it stops at once, as in a
        crash (the next start replays its WAL)."""
        self._sh("down", self.dir, mode)

    def up(self):
        self._sh("up", self.dir)

    def stop(self):
        if os.path.exists(os.path.join(self.dir, ".plotq-pg")):
            self._sh("stop", self.dir)
