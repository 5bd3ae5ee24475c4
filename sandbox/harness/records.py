"""The harness's records: the stdout protocol lines, result.json and validation.json, and the
capped read of the job's source file (read_capped, data and plot mode alike).

After arming, the harness may not look anything up that the snippet could have replaced (module
globals, builtins, methods of Python classes), so make_writer() binds everything it uses before
arming and returns closures: encode(value) is a small JSON encoder for the harness's own values
(None, bool, exact int, float, exact str, list/tuple, dict with str keys), and write_all(fd,
data) writes through os.write/os.pwrite taken before the guard replaced them.
"""

import json
import os
import stat

START_LINE = b'HARNESS {"event": "start"}\n'
RESULT_FILE = "result.json"
VALIDATION_FILE = "validation.json"
# Created with these flags: never through a link the work dir might hold, never inherited.
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
CREATE_MODE = 0o644


def read_capped(path, cap):
    """(bytes, None); (None, size) when the file holds more than cap bytes; (None, None) when it is
    missing, a link, not a regular file or unreadable. Never follows a link, never blocks on a
    FIFO, never reads more than cap + 1 bytes (the file may grow after fstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None, None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, None
        if info.st_size > cap:
            return None, info.st_size
        chunks = []
        total = 0
        while total <= cap:
            chunk = os.read(fd, cap + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None, None
    finally:
        os.close(fd)
    if total > cap:
        return None, total
    return b"".join(chunks), None


def write_start_line():
    os.write(1, START_LINE)


def write_validation(findings, directory_fd=None):
    """validation.json before arming: {"findings": [{"code", "line", "message"}, ...]}."""
    data = json.dumps({"findings": [f.to_dict() for f in findings]}, ensure_ascii=True,
                      indent=1).encode("ascii") + b"\n"
    fd = os.open(VALIDATION_FILE, CREATE_FLAGS, CREATE_MODE, dir_fd=directory_fd)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def make_writer():
    """(encode, write_all, write_at_start): closures safe to call after arming."""
    _type = type
    _str = str
    _int = int
    _float = float
    _inf = float("inf")
    _bool = bool
    _list = list
    _tuple = tuple
    _dict = dict
    _len = len
    _ord = ord
    _repr = float.__repr__
    _int_str = int.__repr__
    _join = "".join
    _items = dict.items
    _hex = "0123456789abcdef"
    _encode = str.encode
    _write = os.write
    _pwrite = os.pwrite
    _append = list.append

    def encode_str(text):
        parts = ['"']
        for ch in text:
            code = _ord(ch)
            if ch == '"' or ch == "\\":
                _append(parts, "\\" + ch)
            elif 0x20 <= code < 0x7f:
                _append(parts, ch)
            elif code < 0x10000:
                _append(parts, "\\u" + _hex[code >> 12] + _hex[(code >> 8) & 15]
                        + _hex[(code >> 4) & 15] + _hex[code & 15])
            else:
                _append(parts, "\\ufffd")
        _append(parts, '"')
        return _join(parts)

    def encode(value):
        kind = _type(value)
        if value is None:
            return "null"
        if kind is _bool:
            return "true" if value else "false"
        if kind is _int:
            return _int_str(value)
        if kind is _float:
            if value != value or value == _inf or value == -_inf:
                return "null"
            return _repr(value)
        if kind is _str:
            return encode_str(value)
        if kind is _list or kind is _tuple:
            return "[" + ", ".join([encode(v) for v in value]) + "]"
        if kind is _dict:
            parts = []
            for key, item in _items(value):
                if _type(key) is not _str:
                    continue
                _append(parts, encode_str(key) + ": " + encode(item))
            return "{" + ", ".join(parts) + "}"
        return "null"

    def write_all(fd, data):
        """Writes every byte (a pipe may take fewer per call)."""
        view = data
        while _len(view):
            done = _write(fd, view)
            view = view[done:]

    def write_at_start(fd, data):
        """Writes data at offset 0 of a regular file, whatever its position."""
        offset = 0
        total = _len(data)
        while offset < total:
            done = _pwrite(fd, data[offset:], offset)
            offset += done

    def encode_line(prefix, value):
        return _encode(prefix + encode(value) + "\n", "ascii")

    return encode, write_all, write_at_start, encode_line
