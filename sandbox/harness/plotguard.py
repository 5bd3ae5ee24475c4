"""PlotGuard: the guard policy of plot and figure mode (README.md, "Plot and figure mode").

make_plot_policy(output_name, data_name) -> GuardPolicy, built after preload and before arming.
PlotGuard refuses what a plot does outside its work dir, not inside it. The plot may:
  - write, create, rename, remove and list anything inside its work dir (subfolders it makes
    there too), within the launcher's disk and file caps; only result.json, the harness's
    record, is refused (rule `open` for opens, `filesystem` else). The host collects only
    plot-<theme>.png (.json in figure mode) and removes the rest;
  - change directory within its work dir (os.chdir out of it: `filesystem`); relative paths
    are judged against the real current directory (os.getcwd, read at each decision);
  - read its work dir, the installed Python packages (the install prefixes), matplotlib's data
    directory, the font files matplotlib knows and the time zone database; nothing else
    (another job's dir, /etc, /proc: `open`; listings outside the install and the work dir:
    `listing`);
  - import modules of the installed packages through the interpreter's stock loaders.
Everything data mode refuses (process, socket, network, ctypes, fd stubs incl. os.set_blocking,
fcntl.*, signals, threads, frames, gc, filesystem changes, ...) stays refused.

Import trust (reference 2.4, rules A-C). A module body run by an import gets no exemption here:
it runs under this same guard. What an import needs beyond plot code is marshal.loads (code
objects made from bytes, which could be crafted), and that is what the rules protect:
  A. an open by a file loader's get_data or zipimport's archive reader is refused outside the
     install prefixes (captured from sysconfig/site before arming), whoever drives the loader;
     so no loader ever reads a file the plot wrote;
  B. marshal.loads passes only when called by the interpreter's _compile_bytecode under get_code
     of exactly SourceFileLoader or SourcelessFileLoader, whose classes (MRO and every entry) are
     intact since arming, on an instance holding only its own `name` and `path` (a file in the
     install), while the module globals of the import machinery (_frozen_importlib(_external)),
     _io, marshal, _imp and the builtins are unchanged since arming and no gc callback was added
     (a callback could swap them back between the read and the load). A custom loader, a patched
     class, an instance override, a swapped `_io.open_code` or `builtins.memoryview`: refused;
  C. the `import` event _imp.create_dynamic raises with an extension module's file is refused
     when the file is outside the install, before the native code loads.
Refusals under A-C have the rule `import`; a direct marshal call by the plot has `marshal`.

Paths are judged as exact str (a str subclass is copied with str.join, bytes decoded, an exact
pathlib.PosixPath/PurePosixPath by its cached string while pathlib's classes are intact, a
descriptor by /proc/self/fd, anything else refused), made absolute against the current
directory (or the dir_fd) and normalized lexically; the plot cannot make links (os.symlink and
os.link are refused).
"""

import builtins
import collections
import gc
import os
import pathlib
import sys
import types
import zipimport

import _imp
import _io
import marshal

import guard
import localcalls
from plotenv import data_read_roots, install_prefixes, settle_libraries  # noqa: F401 (plotmode)

# Flags that make an open a write (O_TMPFILE without its O_DIRECTORY part).
WRITE_FLAGS = (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
               | (getattr(os, "O_TMPFILE", 0) & ~os.O_DIRECTORY))
# os-level filesystem events judged by where they act: {event: (indices of path arguments,
# indices of their dir_fd arguments)}. Allowed strictly inside the work dir (os.chdir and
# listings: the work dir itself too), never on result.json.
WORK_DIR_EVENTS = {
    "os.mkdir": ((0,), (2,)), "os.rmdir": ((0,), (1,)), "os.remove": ((0,), (1,)),
    "os.rename": ((0, 1), (2, 3)), "os.chmod": ((0,), (2,)), "os.utime": ((0,), (3,)),
    "os.truncate": ((0,), ()), "os.chdir": ((0,), ()), "os.listxattr": ((0,), ()),
    "os.getxattr": ((0,), ()),
}
# Events raised by pure-Python wrappers before they act (shutil, tempfile, glob, os.walk, pathlib's
# glob): each file operation inside them raises its own open/os.* event, judged above, so the
# wrapper's own event passes (shutil.copyfile still ends at the stubbed os.sendfile, rule `fd`).
WRAPPER_EVENTS = frozenset({
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.rmtree", "shutil.make_archive", "shutil.unpack_archive", "tempfile.mkstemp",
    "tempfile.mkdtemp", "glob.glob", "glob.glob/2", "os.walk", "pathlib.Path.glob",
    "pathlib.Path.rglob",
})
# The harness's own files in the work dir: the record the host cross-checks.
PROTECTED_NAMES = ("result.json",)
# Environment variables a plot may not set (os.putenv/unsetenv, rule `environment`): the
# launcher's thread limits and what the loader and the interpreter read. Others pass: the job
# starts no process that would inherit them (scikit-learn sets KMP_DUPLICATE_LIB_OK at import).
# PATH: a missing program is answered missing by the PATH the job was armed with (localcalls.py).
PROTECTED_ENV_PREFIXES = ("LD_", "PYTHON")
PROTECTED_ENV_PARTS = ("THREAD",)
PROTECTED_ENV_NAMES = ("PATH",)
DECIDED_EVENTS = (frozenset({"open", "import", "os.listdir", "os.scandir", "marshal.loads",
                             "object.__setattr__", "os.putenv", "os.unsetenv",
                             "urllib.Request", "subprocess.Popen"})
                  | frozenset(WORK_DIR_EVENTS) | WRAPPER_EVENTS)
# pathlib's classes whose instances are judged by their cached string (_str), checked intact.
PATH_CLASSES = (pathlib.PurePath, pathlib.PurePosixPath, pathlib.Path, pathlib.PosixPath)

# Callers allowed to call sys._getframe in plot mode, checked by code identity. None hands a
# frame to plot code: namedtuple and typing._caller read a module name from it (plotly's and the
# libraries' NamedTuples and TypeVars), matplotlib's warn_external walks it for a warning's stack
# level. (logging's currentframe is answered None by the guard's quiet patches.)
PLOT_FRAME_CALLERS = (
    ("collections", "namedtuple"),
    ("typing", "_caller"),
    ("matplotlib._api", "warn_external"),
    # typing_extensions (altair's and pygal's imports; plotlibs.ALWAYS loads it before arming):
    # _caller reads a module name, and the function it installs into typing's alias constructor
    # reads typing's own frame for `origin` and answers a bool
    ("typing_extensions", "_caller"),
    ("typing_extensions", "_has_generic_or_protocol_as_origin"),
    # statsmodels' packages each make a PytestTester at import, which reads its caller's
    # __file__ and __name__ (plotlibs.ALWAYS loads it before arming)
    ("statsmodels.tools._test_runner", "PytestTester.__init__"),
)

# Callers allowed to call sys._getframe when the frame answered runs the plot's own code. pandas
# resolves names in DataFrame.query/eval from the caller's frame (Scope copies its f_globals and
# f_locals; the `level` argument picks how far up). Data mode's validator refuses query and eval.
PLOT_OWN_FRAME_CALLERS = (("pandas.core.computation.scope", "Scope.__init__"),)

# Data mode's stub table without _imp.exec_dynamic/exec_builtin: a lazy import of an installed
# extension needs them, and they only run the exec slots of a module object that was created but
# not executed yet (already executed modules are skipped), which only create_dynamic (rule C) or
# the still-stubbed create_builtin can make. Nor os.register_at_fork: joblib's loky registers
# a child hook at import (scikit-learn imports it), and a hook runs only in a fork, which stays
# refused (os.fork, _posixsubprocess.fork_exec). os.set_blocking stays stubbed (rule `fd`),
# fcntl.* events are refused by prefix.
PLOT_UNAUDITED = tuple(entry for entry in guard.DATA_UNAUDITED
                       if entry[:2] not in (("_imp", "exec_dynamic"), ("_imp", "exec_builtin"),
                                            ("posix", "register_at_fork")))


class MachinerySnapshot(types.SimpleNamespace):
    """The import machinery as it was when the guard was armed (rule B)."""


def snapshot_machinery():
    ext = sys.modules["_frozen_importlib_external"]
    boot = sys.modules["_frozen_importlib"]
    get_dict = type.__dict__["__dict__"].__get__
    get_mro = type.__dict__["__mro__"].__get__
    loaders = (ext.SourceFileLoader, ext.SourcelessFileLoader)
    classes = []
    for loader in loaders:
        for cls in get_mro(loader):
            if cls is not object and cls not in classes:
                classes.append(cls)
    return MachinerySnapshot(
        loaders=loaders,
        classes=tuple((cls, get_mro(cls), dict(get_dict(cls))) for cls in classes),
        modules=tuple((namespace, dict(namespace)) for namespace in
                      (ext.__dict__, boot.__dict__, _io.__dict__, marshal.__dict__, _imp.__dict__)),
        builtins=(builtins.__dict__, dict(builtins.__dict__)),
        gc_callbacks=(gc.callbacks, tuple(gc.callbacks)),
        compile_code=ext._compile_bytecode.__code__,
        get_codes=(ext.SourceLoader.get_code.__code__, ext.SourcelessFileLoader.get_code.__code__),
        reader_codes=(ext.FileLoader.get_data.__code__, zipimport._read_directory.__code__,
                      zipimport._get_data.__code__),
        instance_dict=ext._LoaderBasics.__dict__["__dict__"].__get__,
        namedtuple_code=collections.namedtuple.__code__,
        path_classes=tuple((cls, get_mro(cls), dict(get_dict(cls))) for cls in PATH_CLASSES),
        path_types=(pathlib.PosixPath, pathlib.PurePosixPath),
        path_text=pathlib.PurePath.__dict__["_str"].__get__,
    )


def make_decider(work_dir, install, read_prefixes, read_files, machinery):
    """The factory guard.arm() calls with its GuardTools. Everything decide() uses is bound here
    (the closure-discipline test checks it); decide() reads its arguments by exact type only."""
    _type = type
    _str = str
    _bytes = bytes
    _int = int
    _len = len
    _tuple = tuple
    _dict = dict
    _list_append = list.append
    _list_pop = list.pop
    _split = str.split
    _join = str.join
    _startswith = str.startswith
    _decode = bytes.decode
    _dict_get = dict.get
    _dict_items = dict.items
    _get_mro = type.__dict__["__mro__"].__get__
    _get_dict = type.__dict__["__dict__"].__get__
    _mapping_items = types.MappingProxyType.items
    _getcwd = os.getcwd
    _readlink = os.readlink
    _lstat = os.lstat
    _os_error = OSError
    _attribute_error = AttributeError
    work = _str(work_dir)
    work_prefixes = (work,)
    protected = _tuple(work + "/" + name for name in PROTECTED_NAMES)
    work_events = _dict(WORK_DIR_EVENTS)
    env_prefixes = _tuple(PROTECTED_ENV_PREFIXES)
    env_parts = _tuple(PROTECTED_ENV_PARTS)
    env_names = _tuple(PROTECTED_ENV_NAMES)
    _upper = str.upper
    _find = str.find
    wrapper_events = WRAPPER_EVENTS
    path_classes = machinery.path_classes
    path_types = machinery.path_types
    path_text = machinery.path_text
    install_prefixes = _tuple(install)
    other_prefixes = _tuple(read_prefixes)
    exact_files = frozenset(read_files)
    write_flags = WRITE_FLAGS
    loaders = machinery.loaders
    classes = machinery.classes
    modules = machinery.modules
    builtins_now, builtins_then = machinery.builtins
    callbacks_now, callbacks_then = machinery.gc_callbacks
    compile_code = machinery.compile_code
    get_codes = machinery.get_codes
    reader_codes = machinery.reader_codes
    instance_dict = machinery.instance_dict
    namedtuple_code = machinery.namedtuple_code
    _function = types.FunctionType
    own_keys = ("name", "path")
    missing = object()
    make_calls = localcalls.make_call_decisions
    exec_dirs = _tuple(os.get_exec_path())

    def factory(tools):
        open_window = tools.open_window
        close_window = tools.close_window
        frame_at = tools.frame
        f_code = tools.f_code
        f_back = tools.f_back
        f_locals = tools.f_locals

        def fd_path(fd):
            # where a descriptor points, as the kernel names it (a deleted file ends in
            # " (deleted)", a pipe is no absolute path: both judged outside)
            try:
                target = _readlink("/proc/self/fd/" + _str(fd))
            except _os_error:
                return None
            return target if _type(target) is _str else None

        def classes_intact(entries):
            for cls, mro, then in entries:
                if _get_mro(cls) is not mro:
                    return False
                count = 0
                for key, value in _mapping_items(_get_dict(cls)):
                    if _type(key) is not _str or _dict_get(then, key, missing) is not value:
                        return False
                    count += 1
                if count != _len(then):
                    return False
            return True

        def exact_path(value):
            kind = _type(value)
            if kind is _str:
                return value
            if kind is _bytes:
                return _decode(value, "utf-8", "surrogateescape")
            if kind is _int:
                return fd_path(value)
            if kind is path_types[0] or kind is path_types[1]:
                # os.fspath(path) is str(path), which answers the cached _str slot while
                # pathlib's classes are unchanged; the conversion ran before the event
                if not classes_intact(path_classes):
                    return None
                try:
                    text = path_text(value)
                except _attribute_error:
                    return None
                return text if _type(text) is _str else None
            for base in _get_mro(kind):
                if base is _str:
                    return _join("", [value])   # an exact str copy; no method of the subclass runs
                if base is _bytes:
                    return _decode(value, "utf-8", "surrogateescape")
            return None

        def absolute(path, base=None):
            if not _startswith(path, "/"):
                if base is None:
                    try:
                        base = _getcwd()
                    except _os_error:
                        return None
                    if _type(base) is not _str:
                        return None
                path = base + "/" + path
            parts = []
            for part in _split(path, "/"):
                if part == "" or part == ".":
                    continue
                if part == "..":
                    if parts:
                        _list_pop(parts)
                    continue
                _list_append(parts, part)
            return "/" + _join("/", parts)

        def under(path, prefixes):
            if path is None:
                return False
            for prefix in prefixes:
                if path == prefix or _startswith(path, prefix + "/"):
                    return True
            return False

        def raiser_code():
            # decide (0) <- hook (1) <- the Python frame whose call raised the event (2)
            was = open_window()
            try:
                return f_code(frame_at(3))
            finally:
                close_window(was)

        def same_dict(live, then, extra_keys_ok):
            # Keys are compared only as exact str: a planted key object's __hash__/__eq__
            # would run inside the permit window.
            count = 0
            for key, value in _dict_items(live):
                if _type(key) is not _str:
                    return False
                old = _dict_get(then, key, missing)
                if old is missing:
                    if extra_keys_ok:
                        continue
                    return False
                if old is not value:
                    return False
                count += 1
            return count == _len(then)

        def machinery_intact():
            if not classes_intact(classes):
                return False
            for live, then in modules:
                if not same_dict(live, then, False):
                    return False
            if not same_dict(builtins_now, builtins_then, True):
                return False
            if _len(callbacks_now) != _len(callbacks_then):
                return False
            index = 0
            for callback in callbacks_now:
                if callback is not callbacks_then[index]:
                    return False
                index += 1
            return True

        def trusted_marshal():
            was = open_window()
            try:
                frame = frame_at(3)               # the caller of marshal.loads
                if f_code(frame) is not compile_code:
                    return False
                frame = f_back(frame)             # get_code of a stock loader
                if frame is None:
                    return False
                code = f_code(frame)
                if code is not get_codes[0] and code is not get_codes[1]:
                    return False
                loader = None
                for key, value in _dict_items(f_locals(frame)):
                    if _type(key) is _str and key == "self":
                        loader = value
                kind = _type(loader)
                if kind is not loaders[0] and kind is not loaders[1]:
                    return False
                state = instance_dict(loader)
                if _type(state) is not _dict:
                    return False
                path = None
                for key, value in _dict_items(state):
                    if _type(key) is not _str or (key != own_keys[0] and key != own_keys[1]):
                        return False
                    if _type(value) is not _str:
                        return False
                    if key == own_keys[1]:
                        path = value
                if path is None or not under(absolute(path), install_prefixes):
                    return False
                return machinery_intact()
            finally:
                close_window(was)

        def missing(full):
            # Nothing there (or not ours to see): a read or a listing of it fails by itself and
            # says no more than os.path.exists, which raises no event. importlib.metadata lists and
            # opens every sys.path entry, and catalogue files insert their CI's site-packages there.
            try:
                _lstat(full)
            except _os_error:
                return True
            return False

        def in_work_dir(full):
            # strictly inside the work dir, and not the harness's record
            if full is None or not _startswith(full, work + "/"):
                return False
            for name in protected:
                if full == name:
                    return False
            return True

        def resolved(args, index, fd_index):
            # the absolute path argument `index` names, against its dir_fd when one is given
            if index >= _len(args):
                return None
            path = exact_path(args[index])
            if path is None:
                return None
            base = None
            dir_fd = args[fd_index] if fd_index is not None and fd_index < _len(args) else None
            if dir_fd is not None and not (_type(dir_fd) is _int and dir_fd == -1):   # -1: none
                if _type(dir_fd) is not _int:
                    return None
                base = fd_path(dir_fd)
                if base is None:
                    return None
            return absolute(path, base)

        def work_dir_event(event, args):
            paths, fds = work_events[event]
            position = 0
            for index in paths:
                full = resolved(args, index, fds[position] if position < _len(fds) else None)
                position += 1
                # the work dir itself: chdir, xattr reads, and mkdir (it exists: EEXIST), which
                # pathlib's Path(__file__).parent.mkdir(exist_ok=True) calls
                if (event == "os.chdir" or event == "os.listxattr" or event == "os.getxattr"
                        or event == "os.mkdir"):
                    if full != work and not in_work_dir(full):
                        return "filesystem"
                elif not in_work_dir(full):
                    return "filesystem"
            return True

        # urllib.Request and subprocess.Popen: localcalls.py
        popen, request = make_calls(exact_path, absolute, missing, exec_dirs)

        def decide(event, args):
            if _type(args) is not _tuple:
                return None
            if event == "open":
                if _len(args) < 3:
                    return "open"
                full = resolved(args, 0, None)      # a descriptor: where it points
                flags = args[2]
                if full is None or _type(flags) is not _int:
                    return "open"
                if flags & write_flags:
                    # the work dir itself: O_TMPFILE, or the name tempfile's opener is called for
                    return True if in_work_dir(full) or full == work else "open"
                if raiser_code() in reader_codes:    # rule A (nothing there: it fails by itself)
                    return True if under(full, install_prefixes) or missing(full) else "import"
                if under(full, install_prefixes) or under(full, other_prefixes):
                    return True
                if full in exact_files or in_work_dir(full) or missing(full):
                    return True
                return "open"
            if event in wrapper_events:
                return True
            if event == "os.putenv" or event == "os.unsetenv":
                name = exact_path(args[0]) if _len(args) and _type(args[0]) is not _int else None
                if name is None:
                    return "environment"
                name = _upper(name)
                for prefix in env_prefixes:
                    if _startswith(name, prefix):
                        return "environment"
                for exact in env_names:
                    if name == exact:
                        return "environment"
                for part in env_parts:
                    if _find(name, part) >= 0:
                        return "environment"
                return True
            if event in work_events:
                return work_dir_event(event, args)
            if event == "import":                   # rule C (a filename: an extension's file)
                if _len(args) < 2 or args[1] is None:
                    return True                     # the import system starts a search
                path = exact_path(args[1])
                if path is not None and under(absolute(path), install_prefixes):
                    return True
                return "import"
            if event == "os.listdir" or event == "os.scandir":
                target = args[0] if _len(args) else None
                full = absolute(".") if target is None else resolved(args, 0, None)
                if under(full, install_prefixes) or under(full, work_prefixes):
                    return True     # the import system's directory caches; the work dir
                if full is not None and missing(full):
                    return True
                return "listing"
            if event == "object.__setattr__":
                # namedtuple(..., defaults=...) sets its own __new__.__defaults__ (typing's
                # NamedTuple always does); any other function attribute set: the tables decide
                if (_len(args) > 1 and _type(args[0]) is _function and _type(args[1]) is _str
                        and args[1] == "__defaults__" and raiser_code() is namedtuple_code):
                    return True
                return None
            if event == "urllib.Request":
                return request(args)
            if event == "subprocess.Popen":
                return popen(args)
            if event == "marshal.loads":            # rule B
                if trusted_marshal():
                    return True
                return "import" if raiser_code() is compile_code else "marshal"
            return None

        return decide

    return factory


def make_plot_policy(output_name, data_name="data.csv", work_dir=None):
    """The PlotGuard policy for one run. Call after preload (it reads the font list and snapshots
    the import machinery) and just before arming."""
    work_dir = os.path.normpath(work_dir or os.getcwd())
    prefixes, files = data_read_roots()
    refused = {event: rule for event, rule in guard.DATA_POLICY.refused_events.items()
               if event not in DECIDED_EVENTS}
    # output_name and data_name no longer shape the rules: every file in the work dir is the
    # plot's (the host collects the output itself)
    decider_inputs = (work_dir, install_prefixes(), prefixes, files)

    def decider(tools):
        # The snapshot is taken here, inside arm(), after the stubs and quiet patches are in
        # place and right before the hook is installed.
        settle_libraries(work_dir)
        return make_decider(*decider_inputs, snapshot_machinery())(tools)

    return guard.GuardPolicy(
        name="plot",
        allowed_events=guard.DATA_POLICY.allowed_events,
        refused_events=refused,
        refused_prefixes=guard.DATA_POLICY.refused_prefixes,
        default_rule=guard.DATA_POLICY.default_rule,
        getattr_allowed=guard.DATA_POLICY.getattr_allowed,
        frame_callers=PLOT_FRAME_CALLERS,
        own_frame_callers=PLOT_OWN_FRAME_CALLERS,
        unaudited=PLOT_UNAUDITED,
        decided_events=DECIDED_EVENTS,
        decider=decider,
    )
