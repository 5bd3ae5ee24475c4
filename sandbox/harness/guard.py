"""The audit-hook guard (PEP 578): refuses what the snippet's process must not do, once armed.

Entry point: arm(policy, code_filename) -> GuardHandle. It installs one hook with
sys.addaudithook (a hook can never be removed) and replaces the calls that raise no audit event
(os._exit, os.write, signal.signal, _imp.create_builtin, ...) by refusing stubs. DATA_POLICY is
data mode's policy; plot mode builds its own GuardPolicy from the same parts (an `open_allowed`
predicate for its own PNG, a different unaudited-call table).

Invariants the code below keeps (tests/harness checks them):
- The snippet can reach every loaded module and its globals (imports of loaded modules raise no
  audit event, and function.__globals__ is readable). So the hook and the handle are closures
  that are stored nowhere a module can reach; everything they call is bound into their cells
  before arming (no global or builtin lookup at run time; a dis-based test proves it), and the
  refusal state lives in a cell only they can see.
- The hook never calls a method of an event argument (args hold the snippet's objects): it reads
  exact types with type() and compares exact str only.
- The guard never pauses. Where the harness itself must read a frame (a traceback's line number,
  the caller of sys._getframe), a `permit` cell opens for a few C-level getter calls during which
  no Python code of the snippet can run: automatic gc is off for the window (no finalizers, no
  gc.callbacks), signal handlers and threads cannot be installed, trace/profile hooks are refused.
- The first refusal is recorded (rule and the snippet's line), and stays recorded even if the
  snippet catches the GuardRefusal: the harness checks it after the run.
- The stubs put into modules close over no state: they raise the audit event `plotq.refused.<rule>`,
  which the hook refuses like any other event.
"""

import gc
import sys
import types
from typing import NamedTuple

# The fixed vocabulary of refusal rules (result.json "refusal.rule").
RULES = (
    "open", "import", "listing", "process", "exit", "fd", "signal", "socket", "network",
    "ctypes", "marshal", "pickle", "frame", "gc", "filesystem", "environment", "thread", "code",
    "hook", "mmap", "resource", "interactive", "output", "other",
)
STUB_EVENT_PREFIX = "plotq.refused."


class GuardRefusal(RuntimeError):
    """Raised into the code whose operation the guard refused. Catching it changes nothing: the
    refusal is already recorded and the run will be refused."""


class GuardPolicy(NamedTuple):
    name: str
    allowed_events: frozenset          # events allowed outright
    refused_events: dict               # exact event name -> rule
    refused_prefixes: tuple            # ((prefix, rule), ...) checked in order
    default_rule: str                  # rule for any other event (None would allow it)
    getattr_allowed: frozenset         # object.__getattr__ names that are no route to a frame
    frame_callers: tuple               # ((module, qualname), ...) allowed to call sys._getframe
    unaudited: tuple                   # ((module, attribute, rule), ...) replaced by stubs
    # Plot mode: events the policy decides itself (open, import, listings, marshal.loads). The
    # decider is a factory called by arm() before arming with the GuardTools below; it returns
    # decide(event, args) -> True (allow), a rule (refuse), None (the tables above decide) or a
    # FileNotFoundError: nothing is there to act on, and the call fails as it would unguarded
    # (raised, no refusal recorded; the decider builds it, so the plot chose no part of it).
    decided_events: frozenset = frozenset()
    decider: object = None
    # ((module, qualname), ...) allowed to call sys._getframe when the frame it answers runs the
    # plot's own code (its file is the snippet's): what they read of it, the plot already has.
    own_frame_callers: tuple = ()


class GuardTools(NamedTuple):
    """What arm() lends a policy's decider: the permit window (no snippet code can run while it
    is open: gc off, events pass) and C-level frame readers. frame(depth) is sys._getframe."""
    open_window: object
    close_window: object
    frame: object
    f_code: object
    f_back: object
    f_locals: object


class GuardHandle(NamedTuple):
    refusal: object          # () -> None | (rule, line or None)
    traceback_line: object   # (exc) -> the innermost line of the snippet in exc's traceback
    suspend_gc: object       # () -> None: automatic gc off for the rest of the run
    release_exit: object     # () -> None: puts the real os._exit back (the run is over and the
                             # caller exits with the harness's code); every other stub stays


_FILESYSTEM_EVENTS = (   # (os.chflags, os.mkfifo, os.mknod: later Pythons' names)
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
    "os.symlink", "os.truncate", "os.utime", "os.chdir", "os.chflags", "os.lchflags",
    "os.setxattr", "os.removexattr", "os.getxattr", "os.mkfifo", "os.mknod",
)
_PROCESS_EVENTS = (
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "pty.spawn", "os.startfile", "os.startfile/2",
    "webbrowser.open", "os.add_dll_directory",
)

_REFUSED_EVENTS = {
    "open": "open",
    "import": "import",
    "os.listdir": "listing", "os.scandir": "listing", "glob.glob": "listing",
    "glob.glob/2": "listing", "os.listxattr": "listing",
    "pickle.find_class": "pickle",
    "sys._current_frames": "frame", "sys._current_exceptions": "frame",
    "sys.settrace": "frame", "sys.setprofile": "frame",
    "os.putenv": "environment", "os.unsetenv": "environment",
    "_thread.start_new_thread": "thread",
    "code.__new__": "code", "function.__new__": "code",
    "sys.addaudithook": "hook", "cpython._PySys_ClearAuditHooks": "hook",
    "mmap.__new__": "mmap",
    "resource.setrlimit": "resource", "resource.prlimit": "resource",
    "builtins.input": "interactive", "builtins.input/result": "interactive",
    "builtins.breakpoint": "interactive", "pdb.Pdb": "interactive",
}
_REFUSED_EVENTS.update({e: "filesystem" for e in _FILESYSTEM_EVENTS})
_REFUSED_EVENTS.update({e: "process" for e in _PROCESS_EVENTS})
_REFUSED_EVENTS.update({STUB_EVENT_PREFIX + r: r for r in RULES})

_REFUSED_PREFIXES = (
    ("ctypes.", "ctypes"), ("socket.", "socket"), ("marshal.", "marshal"), ("gc.", "gc"),
    ("shutil.", "filesystem"), ("tempfile.", "filesystem"), ("fcntl.", "fd"),
    ("http.client.", "network"), ("urllib.", "network"), ("ftplib.", "network"),
    ("smtplib.", "network"), ("imaplib.", "network"), ("poplib.", "network"),
    ("nntplib.", "network"), ("telnetlib.", "network"),
)

# Calls that raise no audit event but could end the run with a chosen code, write through a
# pre-opened descriptor, install a signal handler (handlers receive a frame), re-create a C
# module from its initial copy (_imp.create_builtin would restore the real os._exit), or leak
# frames into gc.garbage (gc.set_debug(DEBUG_SAVEALL)).
_POSIX_FD = ("write", "writev", "pwrite", "pwritev", "sendfile", "copy_file_range", "splice",
             "dup", "dup2", "close", "closerange", "posix_fallocate", "set_blocking",
             "set_inheritable", "login_tty", "memfd_create", "eventfd", "openpty")
_POSIX_PROCESS = ("setsid", "setpgid", "setpgrp", "tcsetpgrp", "register_at_fork")
# filesystem changes 3.11 does not audit
_POSIX_FILESYSTEM = ("mkfifo", "mknod", "chroot")
_SIGNAL = ("signal", "set_wakeup_fd", "setitimer", "alarm", "pthread_kill", "pthread_sigmask",
           "raise_signal", "siginterrupt", "sigwait", "sigwaitinfo", "sigtimedwait")
# ctypes builds pointers and dereferences addresses without an audit event (ctypes.pointer(x)[i],
# c_char_p(address).value): the public entry points are stubbed; the classes stay reachable
# through object.__subclasses__(), a gap the validator (no ctypes, no dunders) and the kernel close.
_CTYPES = ("pointer", "POINTER", "cast", "c_char_p", "c_wchar_p", "c_void_p", "memmove",
           "memset", "string_at", "wstring_at", "byref", "CDLL", "PyDLL", "cdll", "pydll",
           "pythonapi", "CFUNCTYPE", "PYFUNCTYPE", "py_object", "LibraryLoader", "_Pointer",
           "dlopen")
DATA_UNAUDITED = (
    (("posix", "_exit", "exit"),)
    + tuple(("posix", name, "fd") for name in _POSIX_FD)
    + tuple(("posix", name, "process") for name in _POSIX_PROCESS)
    + tuple(("posix", name, "filesystem") for name in _POSIX_FILESYSTEM)
    + (("_posixsubprocess", "fork_exec", "process"),
       ("_socket", "close", "fd"), ("_socket", "dup", "fd"),
       # 3.11 raises no _thread.start_new_thread event (3.12 added it)
       ("_thread", "start_new_thread", "thread"), ("_thread", "start_new", "thread"))
    + tuple(("_imp", name, "import") for name in
            ("create_builtin", "exec_builtin", "exec_dynamic", "init_frozen", "get_frozen_object"))
    + tuple(("_signal", name, "signal") for name in _SIGNAL)
    + tuple(("signal", name, "signal") for name in _SIGNAL)
    + (("gc", "set_debug", "gc"), ("gc", "freeze", "gc"))
    + tuple(("ctypes", name, "ctypes") for name in _CTYPES)
    + tuple(("_ctypes", name, "ctypes") for name in _CTYPES)
    + tuple(("faulthandler", name, "fd") for name in
            ("enable", "dump_traceback", "dump_traceback_later", "register"))
)

DATA_POLICY = GuardPolicy(
    name="data",
    allowed_events=frozenset({
        "builtins.id", "compile", "exec", "time.sleep", "array.__new__", "sys.excepthook",
        "sys.unraisablehook",
    }),
    refused_events=_REFUSED_EVENTS,
    refused_prefixes=_REFUSED_PREFIXES,
    default_rule="other",
    # audited reads that are no route to a frame (inspect.signature reads the first three)
    getattr_allowed=frozenset({"__code__", "__defaults__", "__kwdefaults__", "gi_code",
                               "cr_code", "ag_code"}),
    frame_callers=(("collections", "namedtuple"),),
    unaudited=DATA_UNAUDITED,
)


def _resolve_callers(pairs):
    codes = []
    for module_name, qualname in pairs:
        obj = sys.modules.get(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
        code = getattr(obj, "__code__", None)
        if isinstance(code, types.CodeType):
            codes.append(code)
    return tuple(codes)


def _make_stub(event):
    # Closes over an event name and sys.audit only: whoever edits the cells gains nothing, since
    # the stub never holds the real function.
    audit = sys.audit
    refusal = GuardRefusal

    def refused(*args, **kwargs):
        audit(event)
        raise refusal("refused")
    return refused


# Where the stub targets live, found once in a zygote before it forks (index_stub_locations):
# scanning every loaded module's namespace in a forked child touches every object in them (their
# reference counts), which copies most of the zygote's memory pages (slow, with plotly loaded).
# (targets {id: object}, hits [(namespace, key, object)], sizes {id(namespace): (namespace, len)})
_STUB_INDEX = [None]


def _resolve_targets(tables):
    targets = {}
    for table in tables:
        for module_name, attr, _rule in table:
            module = sys.modules.get(module_name)
            if module is not None and hasattr(module, attr):
                original = getattr(module, attr)
                targets[id(original)] = original
    inspect = sys.modules.get("inspect")
    if inspect is not None:
        targets[id(inspect.currentframe)] = inspect.currentframe
    return targets


def index_stub_locations(tables=None):
    """Records every place a stub target (data mode's table, which contains plot mode's, and
    inspect.currentframe) is held. Call at the end of preload, before forking."""
    targets = _resolve_targets(tables or (DATA_UNAUDITED,))
    hits = []
    sizes = {}
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        sizes[id(namespace)] = (namespace, len(namespace))
        for key, value in namespace.items():
            known = targets.get(id(value))
            if known is not None and known is value:
                hits.append((namespace, key, value))
    _STUB_INDEX[0] = (targets, hits, sizes)


def _replace_everywhere(replacements):
    """replacements {id(original): (original, replacement, tag)}: swaps every loaded module's
    reference to an original. With an index from before the fork, only namespaces that are new
    or changed size since are scanned; the recorded places are checked and swapped. Returns
    [(namespace, key, original, tag)]."""
    replaced = []

    def scan(namespace):
        for key, value in list(namespace.items()):
            hit = replacements.get(id(value))
            if hit is not None and hit[0] is value:
                namespace[key] = hit[1]
                replaced.append((namespace, key, value, hit[2]))

    index = _STUB_INDEX[0]
    if index is not None:
        targets, hits, sizes = index
        if any(targets.get(key) is not hit[0] for key, hit in replacements.items()):
            index = None     # something to replace that the index does not know
    scanned = set()
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        if index is not None:
            known = index[2].get(id(namespace))
            if known is not None and known[0] is namespace and known[1] == len(namespace):
                continue
        scan(namespace)
        scanned.add(id(namespace))
    if index is not None:
        for namespace, key, value in index[1]:
            if id(namespace) in scanned or namespace.get(key) is not value:
                continue
            hit = replacements.get(id(value))
            if hit is not None and hit[0] is value:
                namespace[key] = hit[1]
                replaced.append((namespace, key, value, hit[2]))
    return replaced


def warm_stub_index(stop=None):
    """Reads what arming reads (every loaded module's namespace, the index) and changes nothing.
    A zygote's spare calls it while it waits for a job: reading an object writes its reference
    count, so the copy-on-write faults of those reads are taken before
    the job arrives instead of while it arms. stop() is asked every 256 modules: True ends the
    walk early (a job is waiting). Returns the number of namespaces read."""
    index = _STUB_INDEX[0]
    if index is None:
        return 0
    sizes = index[2]
    count = 0
    for position, module in enumerate(list(sys.modules.values())):
        if stop is not None and position % 256 == 255 and stop():
            return count
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict:
            continue
        known = sizes.get(id(namespace))
        if known is not None and known[0] is namespace:
            count += known[1] == len(namespace)
    for namespace, key, _value in index[1]:
        namespace.get(key)
    return count


def _stub_replacements(table):
    """{id(original): (original, stub, rule)} for each (module, attribute, rule) that exists."""
    originals = {}
    for module_name, attr, rule in table:
        module = sys.modules.get(module_name)
        if module is None or not hasattr(module, attr):
            continue
        original = getattr(module, attr)
        stub = _make_stub(STUB_EVENT_PREFIX + rule)
        originals[id(original)] = (original, stub, rule)
    return originals


def replace_unaudited(table):
    """Swaps each (module, attribute) for a stub, in that module and in every loaded module that
    holds the same object under any name (os.write is posix.write; subprocess._fork_exec).
    Returns [(namespace, key, original, rule)] for every entry replaced."""
    return _replace_everywhere(_stub_replacements(table))


def arm(policy, code_filename):
    """Installs the hook and the stubs; returns the handle. Call with everything the run needs
    already imported: from now on a module not yet loaded cannot be imported."""
    if type(code_filename) is not str:
        raise TypeError("code_filename must be a str")
    # Everything the closures use is bound here, before arming.
    _type = type
    _len = len
    _str = str
    _int = int
    _tuple = tuple
    _function = types.FunctionType
    _tb_type = types.TracebackType
    _startswith = str.startswith
    _getframe = sys._getframe
    _f_code = types.FrameType.__dict__["f_code"].__get__
    _f_back = types.FrameType.__dict__["f_back"].__get__
    _f_lineno = types.FrameType.__dict__["f_lineno"].__get__
    _co_filename = types.CodeType.__dict__["co_filename"].__get__
    _tb_frame = _tb_type.__dict__["tb_frame"].__get__
    _tb_next = _tb_type.__dict__["tb_next"].__get__
    _tb_lineno = _tb_type.__dict__["tb_lineno"].__get__
    _exc_tb = BaseException.__dict__["__traceback__"].__get__
    _gc_isenabled = gc.isenabled
    _gc_disable = gc.disable
    _gc_enable = gc.enable
    _refusal_class = GuardRefusal
    _not_found = FileNotFoundError
    _snippet = _str(code_filename)
    allowed = frozenset(policy.allowed_events)
    refused = dict(policy.refused_events)
    prefixes = tuple(policy.refused_prefixes)
    default_rule = policy.default_rule
    getattr_allowed = frozenset(policy.getattr_allowed)
    caller_codes = _resolve_callers(policy.frame_callers)
    own_frame_codes = _resolve_callers(policy.own_frame_callers)
    _frame_type = types.FrameType
    decided = frozenset(policy.decided_events)
    state = [None, None]       # first refusal: rule, snippet line
    permit = [False]           # open only while the harness's own C-level getter calls run
    gc_off = [False]           # set once the harness suspended gc for good

    def open_window():
        was = _gc_isenabled()
        if was:
            _gc_disable()
        permit[0] = True
        return was

    def close_window(was):
        permit[0] = False
        if was and not gc_off[0]:
            _gc_enable()

    _f_locals = types.FrameType.__dict__["f_locals"].__get__
    decide = None

    def snippet_line_of_stack():
        was = open_window()
        try:
            frame = _getframe(2)
            depth = 0
            while frame is not None and depth < 500:
                name = _co_filename(_f_code(frame))
                if _type(name) is _str and name == _snippet:
                    line = _f_lineno(frame)
                    return line if _type(line) is _int else None
                frame = _f_back(frame)
                depth += 1
            return None
        finally:
            close_window(was)

    def caller_allowed():
        was = open_window()
        try:
            code = _f_code(_getframe(2))
            for allowed_code in caller_codes:
                if code is allowed_code:
                    return True
            return False
        finally:
            close_window(was)

    def own_frame_allowed(args):
        # sys._getframe's event carries the frame it answers (3.11)
        if _type(args) is not _tuple or _len(args) != 1 or _type(args[0]) is not _frame_type:
            return False
        was = open_window()
        try:
            code = _f_code(_getframe(2))
            for allowed_code in own_frame_codes:
                if code is allowed_code:
                    name = _co_filename(_f_code(args[0]))
                    return _type(name) is _str and name == _snippet
            return False
        finally:
            close_window(was)

    def hook(event, args):
        if permit[0] or event in allowed:
            return
        rule = None
        if event in decided:
            verdict = decide(event, args)
            if verdict is True:
                return
            if _type(verdict) is _not_found:
                raise verdict
            rule = verdict
        if rule is None:
            rule = refused.get(event)
        if rule is None:
            if event == "object.__getattr__":
                name = args[1] if _len(args) > 1 else None
                if _type(name) is _str and name in getattr_allowed:
                    return
                rule = "frame"
            elif event == "object.__setattr__" or event == "object.__delattr__":
                # types may be set (namedtuple sets __module__); a function's __code__,
                # __defaults__ or __kwdefaults__ may not
                if _type(args[0]) is not _function:
                    return
                rule = "code"
            elif event == "sys._getframe":
                if caller_allowed() or own_frame_allowed(args):
                    return
                rule = "frame"
            else:
                rule = default_rule
                for prefix, prefix_rule in prefixes:
                    if _startswith(event, prefix):
                        rule = prefix_rule
                        break
                if rule is None:
                    return
        if state[0] is None:
            state[0] = rule    # recorded before any further call can fail
            state[1] = snippet_line_of_stack()
        raise _refusal_class(rule)

    def refusal():
        if state[0] is None:
            return None
        return (state[0], state[1])

    def traceback_line(exc):
        tb = _exc_tb(exc)
        line = None
        was = open_window()
        try:
            count = 0
            while tb is not None and count < 100000:
                if _type(tb) is not _tb_type:
                    break
                name = _co_filename(_f_code(_tb_frame(tb)))
                if _type(name) is _str and name == _snippet:
                    found = _tb_lineno(tb)
                    if _type(found) is _int:
                        line = found
                tb = _tb_next(tb)
                count += 1
        finally:
            close_window(was)
        return line

    def suspend_gc():
        gc_off[0] = True
        _gc_disable()

    # One walk over the loaded modules swaps both the stubs and inspect.currentframe (a quiet
    # patch, see _install_quiet_patches).
    replacements = _stub_replacements(policy.unaudited)
    _install_quiet_patches(replacements)
    exits = tuple((namespace, key, original) for namespace, key, original, rule
                  in _replace_everywhere(replacements) if rule == "exit")
    _set_item = dict.__setitem__

    def release_exit():
        for namespace, key, original in exits:
            _set_item(namespace, key, original)

    if policy.decider is not None:
        # Last before the hook: the decider snapshots state the stubs and patches above changed.
        decide = policy.decider(GuardTools(
            open_window=open_window, close_window=close_window, frame=_getframe, f_code=_f_code,
            f_back=_f_back, f_locals=_f_locals))
    sys.addaudithook(hook)
    return GuardHandle(refusal=refusal, traceback_line=traceback_line, suspend_gc=suspend_gc,
                       release_exit=release_exit)


def _none():
    return None


def _no_warning_display(*args, **kwargs):
    return None


def _install_quiet_patches(replacements):
    """Library calls that would otherwise trip the guard on benign paths: pandas' warnings ask
    inspect.currentframe() for a stack level (answered None, which pandas handles), showing
    a warning reads the source line through linecache (an open): warnings are not shown, and
    logging's caller lookup reads a frame. inspect.currentframe is added to `replacements`
    (swapped everywhere by the caller's walk)."""
    inspect = sys.modules.get("inspect")
    if inspect is not None and inspect.currentframe is not _none:
        current = inspect.currentframe
        replacements[id(current)] = (current, _none, "quiet")
    warnings = sys.modules.get("warnings")
    if warnings is not None:
        warnings.showwarning = _no_warning_display
    # logging's findCaller asks sys._getframe(1) through logging.currentframe for the record's
    # file and line (matplotlib logs "No artists with labels ..."): answered None, the record
    # then names an unknown caller.
    logging = sys.modules.get("logging")
    if logging is not None and hasattr(logging, "currentframe"):
        logging.currentframe = _none
