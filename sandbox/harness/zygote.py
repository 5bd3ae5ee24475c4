"""Zygote: a long-lived, already-sandboxed interpreter per mode that forks one fresh child per job.

Started by the host (sandbox/zygote.cpp) as pid 1 of its own pid namespace, root of its own user
namespace (uids mapped to the launcher's sandbox uid block, no privilege outside), in its own
mount/net/ipc/uts namespaces:

    python3 -I -B zygote.py --mode MODE --ctl-fd 3 --lib libplotq_confine.so
                            [--preload m1,m2] [--slot-cgroups JSON]

It loads the confinement library, builds the seccomp programs once, calls harness.preload(mode)
(modes other than raw, when harness.py exists), makes itself non-dumpable, says
{"event": "ready", ...} on the control socket and then serves jobs.

Protocol (SOCK_SEQPACKET control socket, one message per job):
  host -> zygote: JSON {"job": id, "slot": n, "mode": m, "argv": [...], "env": {...},
                        "confine": {...}, "require_filter": bool}
                  + SCM_RIGHTS [stdout, stderr, report, status]
  zygote -> host (on that job's status socket): "pid" + SCM_RIGHTS [pidfd of the job's first
                        process]; later "exit <wait status> <utime us> <stime us> <maxrss KiB>";
                        or "error <stage> <errno>" when no child could be made.
A child is forked ahead of time per job slot (a "spare", pid 1 of a fresh pid namespace, already
in the slot's cgroups, waiting on a private socket), so neither the fork of this large process nor
the cgroup migration (it waits for an RCU grace period) is on the job's latency; each spare
serves exactly one job and is never reused. While it waits, a spare makes its job's net/ipc/uts
namespaces (SPARE_NAMESPACES; they depend on nothing of the job), reseeds numpy and runs
harness.warm_spare(mode):
reads and harness steps on a constant frame that take the copy-on-write faults its job would
otherwise take (nothing a job can observe; it stops as soon as the job message is waiting).
--slot-cgroups lists, per slot, the cgroup.procs files its jobs belong to. The child, once its
job message came: takes stdout/stderr/report as fds 1/2/3, closes everything else (the control
socket, other jobs' descriptors), confines itself through the library (the same C++ code as the
cold path, minus the namespaces it made already), replaces its environment, and runs
entry.run_job().
"""
import ctypes
import errno
import fcntl
import gc
import json
import math
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import entry  # noqa: E402

CLONE_NEWPID = 0x20000000
# Namespaces a spare makes for its job while it waits: the job's own (sandbox/namespaces.cpp,
# job_self_namespaces()) that depend on nothing of the job -- fresh, empty, used by this one
# process only, exactly as plotq_confine_job would make them after the message. The mount
# namespace is left to plotq_confine_job: its mounts are the job's (its work dir).
CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS = 0x40000000, 0x08000000, 0x04000000
SPARE_NAMESPACES = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
PR_SET_DUMPABLE = 4
# A used spare is replaced once no job runs, or this long after the job started (see main).
REFILL_AFTER_S = 0.03
# Arms wait for a moment when their fork cannot delay a job (arm_wait_s): this far into a running
# job (it runs in its own process; a job back to back comes only after its exit), or after the
# zygote was this long without a job ending (a job back to back comes right after the last one's
# exit, and takes a spare already waiting). With no armed spare waiting they fork at once.
ARM_INTO_JOB_S = 0.002
ARM_WHEN_IDLE_S = 0.05
# A spare starts its warm-up (warm_spare) only if no job came within this long: jobs back to back
# (the next one already on its way while the spare is forked) then never wait for a warm-up step,
# and a job after a pause finds its spare warm.
WARM_AFTER_S = 0.01

libc = ctypes.CDLL(None, use_errno=True)
lib = None
mode = "raw"


def log(msg):
    try:
        os.write(2, ("zygote[%s]: %s\n" % (mode, msg)).encode("utf-8", "replace"))
    except OSError:
        pass


class Spare:
    """A forked child waiting for one job. `name` is its armed work dir's name (the host made the
    dir and sent the arm request), None for an unarmed spare (confined only once its job came)."""
    __slots__ = ("pid", "pidfd", "sock", "slot", "name")

    def __init__(self, pid, pidfd, sock, slot, name=None):
        self.pid, self.pidfd, self.sock, self.slot, self.name = pid, pidfd, sock, slot, name


def join_cgroups(procs_files):
    """Moves the calling process into each group (before it waits for a job). 0 or an errno."""
    for path in procs_files:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        except OSError as e:
            return e.errno or 1
    return 0


def warm_spare(sock, warm_for=""):
    """A spare's work while it waits for its job (harness.warm_spare: off the job's latency,
    nothing a job can observe), begun only if no job came within WARM_AFTER_S; it stops as soon
    as a job message is waiting. Nothing of the job exists yet: its uid, mounts, limits and
    filters all come after the message. `warm_for`: the library the host armed it for."""
    harness = sys.modules.get("harness")
    if harness is None:
        return
    waiting = select.poll()
    waiting.register(sock, select.POLLIN)
    if waiting.poll(WARM_AFTER_S * 1000):
        return
    try:  # an optimisation only: a spare whose warm-up fails still serves its job
        harness.warm_spare(mode, lambda wait_s=0: bool(waiting.poll(int(wait_s * 1000))), warm_for)
    except Exception:
        pass


def confine_self(confine, made):
    """plotq_confine_job for a spare: its cgroups and session were made when it started, and so
    were the namespaces in `made`. None, or the error line for the report pipe."""
    confine = dict(confine)
    confine["cgroup_procs"] = []  # joined already, when the spare started
    confine["new_session"] = False  # made already, when the spare started
    flags = int(confine.get("unshare_flags", 0))
    if made & ~flags:  # the spare made a namespace this job did not ask for: not its sandbox
        return "error confine:spare-namespaces 22\n"
    confine["unshare_flags"] = flags & ~made  # made already, before the job came
    err = ctypes.create_string_buffer(256)
    rc = lib.plotq_confine_job(json.dumps(confine).encode(), err, ctypes.c_size_t(256))
    if rc != 0:
        return "error confine:%s %d\n" % (err.value.decode("ascii", "replace"), -rc)
    return None


def set_job_cpu_limit(cpu_s):
    """An armed spare was confined under the longest CPU limit; its job gets its own allowance
    plus the whole seconds the spare used while it waited (RLIMIT_CPU counts whole seconds of the
    process, whose rusage the job's cpu_s is too; the fraction is the job's, as it was for a
    spare's warm-up before spares were armed). Only ever lowers the limit."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    want = int(math.floor(ru.ru_utime + ru.ru_stime)) + max(1, int(cpu_s))
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY and want > hard:
        want = hard
    resource.setrlimit(resource.RLIMIT_CPU, (want, want))


def keep_job_fds_free(sock):
    """Descriptors 1-3 become the job's stdout, stderr and report when it comes: 3 is held on
    /dev/null while the spare waits and the socket moved above it, so that nothing the warm-up
    opens lands there. Returns the socket (moved or not)."""
    if sock.fileno() <= 3:
        moved = socket.socket(fileno=fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD_CLOEXEC, 4))
        sock.close()
        sock = moved
    null = os.open("/dev/null", os.O_RDWR)
    if null != 3:
        os.dup2(null, 3)
        os.close(null)
    return sock


def child_main(sock, procs_files, arm=None):
    """Runs in a spare: join the slot's cgroups, wait for one job, then become it. Never returns.
    An armed spare (`arm`: the host's request, a ConfineSpec with a fresh work dir the host made
    for it) is confined whole and has its exec filter armed before it waits: its job only takes
    its descriptors, its environment and its CPU allowance."""
    code = 126
    try:
        # The job's own session first, not at confinement: it is also its scheduler autogroup,
        # which the host nices when it learns the job's pid (the zygote sends that pid only once
        # this spare leads its session: wait_own_session).
        os.setsid()
        # Keep nothing of the zygote while waiting: not the control socket (a dead zygote's
        # socket must close at once), not the status sockets and pidfds of running jobs.
        own = sock.fileno()
        os.closerange(3, own)
        os.closerange(own + 1, 1 << 20)
        sock = keep_job_fds_free(sock)
        cgroup_error = join_cgroups(procs_files)
        # Job-independent preparation, off the job's latency (docs/sandbox.md, "Warm path"): the
        # job's net/ipc/uts namespaces (the net namespace is the slow one) and numpy's seed (every
        # child would otherwise repeat the zygote's global RandomState; a spare serves one job).
        made = SPARE_NAMESPACES if libc.unshare(SPARE_NAMESPACES) == 0 else 0
        np_random = sys.modules.get("numpy.random")
        if np_random is not None:
            np_random.seed()
        arm_error, exec_filter = None, None
        if arm is not None and not cgroup_error:
            arm_error = confine_self(arm["confine"], made)
            if arm_error is None:
                exec_filter = entry.arm_exec_filter()
                # The environment every job gets (its own is set when it comes): what the warm-up
                # sets up (a library's temp or cache dir) then lies in the work dir, as the job's.
                os.environ.clear()
                os.environ.update(arm.get("env", {}))
        warm_spare(sock, arm.get("warm", "") if arm is not None else "")
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not msg or len(fds) != 3:
            os._exit(0)  # the zygote closed our socket: no job for us
        job = json.loads(msg)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.dup2(fds[2], 3)
        # Nothing of the zygote is left (closed when the spare started): only our socket and the
        # descriptors as received go; what the warm-up opened stays with its library (e.g.
        # vl-convert's engine: closing its descriptors breaks the job's conversion).
        for fd in fds:
            os.close(fd)
        sock.close()
        if cgroup_error:
            os.write(3, ("error confine:cgroup %d\n" % cgroup_error).encode())
            os._exit(125)
        if arm is None:
            arm_error = confine_self(job["confine"], made)
        if arm_error is not None:
            os.write(3, arm_error.encode())
            os._exit(125)
        if arm is not None:
            set_job_cpu_limit(job["cpu_s"])
        os.environ.clear()
        os.environ.update(job["env"])
        entry.run_job(job["mode"], job["argv"], 3, require_filter=job.get("require_filter", True),
                      armed=exec_filter)
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
    os._exit(code)


def fork_spare(own_pidns, slot, slot_cgroups, arm=None):
    procs_files = slot_cgroups[slot] if slot < len(slot_cgroups) else []
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    gc.freeze()  # what we made since the last fork too (see main)
    if libc.unshare(CLONE_NEWPID) != 0:
        e = ctypes.get_errno()
        parent_sock.close()
        child_sock.close()
        raise OSError(e, "unshare(CLONE_NEWPID): " + os.strerror(e))
    pid = os.fork()
    if pid == 0:
        parent_sock.close()
        child_main(child_sock, procs_files, arm)
    # Back to our own pid namespace for the next fork (allowed: we are root in the user
    # namespace that owns it).
    if libc.setns(own_pidns, CLONE_NEWPID) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns(pid): " + os.strerror(e))
    child_sock.close()
    return Spare(pid, os.pidfd_open(pid), parent_sock, slot, arm["spare"] if arm else None)


def wait_own_session(pid, limit_s=2.0):
    """Until the spare `pid` leads its own session (its first step, see child_main): a spare forked
    just now for a job may not have got there yet, and the host nices the job's session (its
    scheduler autogroup) as soon as it learns the pid."""
    deadline = time.monotonic() + limit_s
    try:
        while os.getsid(pid) != pid and time.monotonic() < deadline:
            time.sleep(0.0002)
    except OSError:
        pass  # gone: its end is reported as usual


def arm_wait_s(now, running, dispatched_at, ended_at, spare_waiting):
    """Seconds until the pending arms may fork (0: now). Pure: the decision apart from the loop."""
    if not spare_waiting:
        return 0.0
    if running:
        return max(0.0, ARM_INTO_JOB_S - (now - dispatched_at))
    return max(0.0, ARM_WHEN_IDLE_S - (now - ended_at))


def send_status(sock, text, fd=None):
    try:
        if fd is None:
            sock.send(text.encode())
        else:
            socket.send_fds(sock, [text.encode()], [fd])
    except OSError:
        pass  # the host is gone or gave up on this job


def main(argv):
    global lib, mode
    ctl_fd, lib_path, preload, slot_cgroups, armed_spares = 3, None, [], [], 0
    i = 0
    while i < len(argv):
        if argv[i] == "--mode":
            mode = argv[i + 1]
        elif argv[i] == "--ctl-fd":
            ctl_fd = int(argv[i + 1])
        elif argv[i] == "--lib":
            lib_path = argv[i + 1]
        elif argv[i] == "--preload":
            preload = [m for m in argv[i + 1].split(",") if m]
        elif argv[i] == "--slot-cgroups":
            slot_cgroups = json.loads(argv[i + 1])
        elif argv[i] == "--armed-spares":
            armed_spares = int(argv[i + 1])
        i += 2
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.dont_write_bytecode = True
    ctl = socket.socket(fileno=ctl_fd)
    t0 = time.monotonic()
    lib = ctypes.CDLL(lib_path, use_errno=True)
    err = ctypes.create_string_buffer(256)
    if lib.plotq_confine_prepare(err, ctypes.c_size_t(256)) != 0:
        log("prepare failed: " + err.value.decode("ascii", "replace"))
        return 1
    entry.set_lib(lib)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if mode != "raw" and os.path.exists(os.path.join(HERE, "harness.py")):
        import harness

        harness.preload(mode)
    for name in preload:  # raw mode: modules the operator asked for (Config::raw_preload)
        __import__(name)
    # Everything preloaded goes to the collector's permanent generation: a collection in a job
    # never walks (writes the headers of) the zygote's objects, which would copy most of its
    # memory pages into the job (copy-on-write) at the cost of tens of milliseconds.
    gc.collect()
    gc.freeze()
    preload_s = time.monotonic() - t0
    own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    poller = select.poll()
    poller.register(ctl, select.POLLIN)
    spares = {}  # slot -> unarmed Spare
    armed = {}  # work dir name -> armed Spare
    arms = {}  # work dir name -> the host's arm request, not forked yet (in the order they came)
    spare_of = {}  # pidfd -> Spare (waiting)

    def add_spare(slot, arm=None):
        sp = fork_spare(own_pidns, slot, slot_cgroups, arm)
        if arm is None:
            spares[slot] = sp
        else:
            armed[sp.name] = sp
            try:  # the host learns its pid (its pidfd): a waiting spare is not a job's leftover
                socket.send_fds(ctl, [json.dumps({"event": "spare", "spare": sp.name}).encode()], [sp.pidfd])
            except OSError:
                pass
        spare_of[sp.pidfd] = sp
        poller.register(sp.pidfd, select.POLLIN)
        return sp

    def event(**fields):
        try:
            ctl.send(json.dumps(fields).encode())
        except OSError:
            pass

    def control(req):
        """A message without descriptors: the host arms a spare with a work dir it made
        ({"arm": name, "slot", "confine", "env", "warm"}) or retires one ({"retire": name})."""
        if "arm" in req:
            arms[req["arm"]] = {"spare": req["arm"], "slot": int(req.get("slot", 0)), "confine": req["confine"],
                                "env": req.get("env", {}), "warm": str(req.get("warm", ""))}
        elif "retire" in req:
            arms.pop(req["retire"], None)
            sp = armed.pop(req["retire"], None)
            if sp is not None:
                sp.sock.close()  # its recv sees the end: it exits; its pidfd is reaped below
                sp.name = None

    def take_spare(job):
        """The spare for `job`: the armed one it names (forked now if its arm is still pending),
        else its slot's unarmed spare (forked now if there is none). None: it names a spare that
        is gone (the host retries the job cold)."""
        name = job.get("spare")
        if name is not None:
            s = armed.pop(name, None)
            if s is None and name in arms:
                add_spare(arms[name]["slot"], arms.pop(name))
                s = armed.pop(name)
            return s
        slot = int(job.get("slot", 0))
        s = spares.pop(slot, None)
        if s is None:  # two jobs at once, or the spare died: fork one now
            add_spare(slot)
            s = spares.pop(slot)
        return s

    if not armed_spares:
        add_spare(0)  # the slot a lone job gets
    ctl.send(json.dumps({"event": "ready", "mode": mode, "preload_s": round(preload_s, 3)}).encode())

    running = {}  # pidfd -> (pid, status socket)
    refill = set()  # slots whose unarmed spare was used: fork the next one when idle
    dispatched_at = ended_at = 0.0
    while True:
        # A refill (a fork of this big process, slower under load) waits until no job runs,
        # or until the running one has had REFILL_AFTER_S: a short job's exit is then never
        # stuck behind the fork, a long one overlaps it, and a job after a pause finds its spare
        # ready and pays no fork at all. Pending arms wait as arm_wait_s says.
        timeout = None
        now = time.monotonic()
        if refill:
            timeout = max(0.0, REFILL_AFTER_S - (now - dispatched_at)) * 1000 if running else 0
        if arms:
            wait = arm_wait_s(now, bool(running), dispatched_at, ended_at, bool(armed)) * 1000
            timeout = wait if timeout is None else min(timeout, wait)
        for fd, _ in poller.poll(timeout):
            if fd == ctl.fileno():
                try:
                    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 8)
                except OSError as e:
                    log("control socket: %s" % e)
                    return 1
                if not msg and not fds:
                    return 0  # the host closed the control socket
                if not fds:
                    try:
                        control(json.loads(msg))
                    except (ValueError, KeyError, TypeError) as e:
                        log("bad control message: %r" % (e,))
                    continue
                if len(fds) != 4:
                    for f in fds:
                        os.close(f)
                    log("job message without its 4 descriptors")
                    continue
                status = socket.socket(fileno=fds[3])
                try:
                    job = json.loads(msg)
                    s = take_spare(job)
                    if s is None:
                        send_status(status, "error spare %d" % errno.ENOENT)
                        status.close()
                        continue
                    spare_of.pop(s.pidfd, None)
                    poller.unregister(s.pidfd)
                    socket.send_fds(s.sock, [json.dumps(job).encode()], fds[:3])
                    s.sock.close()
                    wait_own_session(s.pid)  # the host nices the job's session when it gets "pid"
                    send_status(status, "pid", s.pidfd)
                    running[s.pidfd] = (s.pid, status)
                    poller.register(s.pidfd, select.POLLIN)
                    if s.name is None:
                        refill.add(s.slot)
                    dispatched_at = time.monotonic()
                except Exception as e:
                    log("job failed to start: %r" % (e,))
                    send_status(status, "error zygote %d" % (getattr(e, "errno", 0) or 0))
                    status.close()
                finally:
                    for f in fds[:3]:
                        os.close(f)
            elif fd in spare_of:
                sp = spare_of.pop(fd)  # a spare died (or was retired) before it got a job
                poller.unregister(fd)
                os.waitpid(sp.pid, 0)
                os.close(sp.pidfd)
                sp.sock.close()
                if sp.name is not None:
                    if armed.pop(sp.name, None) is not None:
                        event(event="spare_lost", spare=sp.name)  # the host arms another
                elif spares.get(sp.slot) is sp:
                    spares.pop(sp.slot)
                    refill.add(sp.slot)
            elif fd in running:
                pid, status = running.pop(fd)
                poller.unregister(fd)
                _, st, ru = os.wait4(pid, 0)
                send_status(status, "exit %d %d %d %d" % (st, int(ru.ru_utime * 1e6), int(ru.ru_stime * 1e6), ru.ru_maxrss))
                status.close()
                os.close(fd)
                ended_at = time.monotonic()
        now = time.monotonic()
        if refill and (not running or now - dispatched_at >= REFILL_AFTER_S):
            for slot in sorted(refill):
                if slot not in spares:
                    try:
                        add_spare(slot)
                    except OSError as e:
                        log("cannot fork a spare: %s" % e)
            refill.clear()
        if arms and arm_wait_s(now, bool(running), dispatched_at, ended_at, bool(armed)) == 0:
            for name in list(arms):
                try:
                    add_spare(arms[name]["slot"], arms.pop(name))
                except OSError as e:
                    log("cannot fork a spare: %s" % e)
                    event(event="spare_lost", spare=name)

if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
