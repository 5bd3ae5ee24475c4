"""Two calls PlotGuard decides by what they would reach (plotguard.make_decider binds them).

  - urllib.Request: a `data:` URL is decoded in memory and a `file:` URL with no host is read
    through a plain open, which the guard judges as any read (the work dir and the install:
    yes; /etc, another job's dir: rule `open`). cairosvg reads every svg2png(url=...) and every
    embedded image this way, and catalogue files save a pygal SVG and convert it by its name.
    Any other URL, or a file: URL naming a host, is refused with rule `network` as before. A
    Request whose type or host the plot changes after building it still ends at socket and
    http.client events, refused by the tables (the kernel's empty net namespace is the barrier).
  - subprocess.Popen of a program that exists nowhere it would be looked for (the job's PATH at
    arming, which the plot may not change: rule `environment`; or the path itself when it has a
    slash) fails with the FileNotFoundError the call
    itself raises unguarded on a machine without the program (catalogue files try rsvg-convert
    and fall back to cairosvg). No process starts either way, and os.lstat raises no event, so
    the answer says no more than os.path.exists; a program that is there is refused, rule
    `process` (seccomp refuses the exec as well).
"""

import errno
import os


def make_call_decisions(exact_path, absolute, missing, exec_dirs):
    """(popen(args), request(args)) -> True, a rule, or a FileNotFoundError; built before arming,
    each looks nothing up afterwards (tests/harness/test_invariants.py)."""
    _type = type
    _str = str
    _len = len
    _find = str.find
    _lower = str.lower
    _startswith = str.startswith
    _not_found = FileNotFoundError
    enoent = errno.ENOENT
    no_such = os.strerror(errno.ENOENT)
    dirs = []
    for d in exec_dirs:
        if type(d) is str and d.startswith("/"):
            dirs.append(d)
    dirs = tuple(dirs)

    def popen(args):
        # (executable, args, cwd, env): executable is args[0] when none was named
        name = exact_path(args[0]) if _len(args) == 4 else None
        if name is None or name == "" or args[3] is not None:
            return "process"            # env given: the child would search another PATH
        if _find(name, "/") >= 0:
            if not _startswith(name, "/") and args[2] is not None:
                return "process"        # relative to a cwd the child would change to
            full = absolute(name)
            return _not_found(enoent, no_such, name) if full is not None and missing(full) else "process"
        for d in dirs:
            if not missing(d + "/" + name):
                return "process"
        return _not_found(enoent, no_such, name)

    def request(args):
        url = args[0] if _len(args) else None
        if _type(url) is not _str:
            return "network"
        colon = _find(url, ":")
        if colon <= 0:
            return "network"
        scheme = _lower(url[:colon])
        if scheme == "data":
            return True
        if scheme == "file":
            rest = url[colon + 1:]
            if _startswith(rest, "//") and not _startswith(rest, "///"):
                return "network"        # file://host/...: urllib hands it to FTP or a lookup
            return True
        return "network"

    return popen, request
