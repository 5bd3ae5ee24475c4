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
import gc
import json
import os
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
    __slots__ = ("pid", "pidfd", "sock", "slot")

    def __init__(self, pid, pidfd, sock, slot):
        self.pid, self.pidfd, self.sock, self.slot = pid, pidfd, sock, slot


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


def warm_spare(sock):
    """A spare's work while it waits for its job (harness.warm_spare: off the job's latency,
    nothing a job can observe), begun only if no job came within WARM_AFTER_S; it stops as soon
    as a job message is waiting. Nothing of the job exists yet: its uid, mounts, limits and
    filters all come after the message."""
    harness = sys.modules.get("harness")
    if harness is None:
        return
    waiting = select.poll()
    waiting.register(sock, select.POLLIN)
    if waiting.poll(WARM_AFTER_S * 1000):
        return
    harness.warm_spare(mode, lambda: bool(waiting.poll(0)))


def child_main(sock, procs_files):
    """Runs in a spare: join the slot's cgroups, wait for one job, then become it. Never returns."""
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
        cgroup_error = join_cgroups(procs_files)
        # Job-independent preparation, off the job's latency (docs/sandbox.md, "Warm path"): the
        # job's net/ipc/uts namespaces (the net namespace is the slow one) and numpy's seed (every
        # child would otherwise repeat the zygote's global RandomState; a spare serves one job).
        made = SPARE_NAMESPACES if libc.unshare(SPARE_NAMESPACES) == 0 else 0
        np_random = sys.modules.get("numpy.random")
        if np_random is not None:
            np_random.seed()
        warm_spare(sock)
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not msg or len(fds) != 3:
            os._exit(0)  # the zygote closed our socket: no job for us
        job = json.loads(msg)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.dup2(fds[2], 3)
        os.closerange(4, 1 << 20)  # the control socket, other jobs' fds, our own socket
        if cgroup_error:
            os.write(3, ("error confine:cgroup %d\n" % cgroup_error).encode())
            os._exit(125)
        confine = dict(job["confine"])
        confine["cgroup_procs"] = []  # joined already, before the job came
        confine["new_session"] = False  # made already, when the spare started
        flags = int(confine.get("unshare_flags", 0))
        if made & ~flags:  # the spare made a namespace this job did not ask for: not its sandbox
            os.write(3, b"error confine:spare-namespaces 22\n")
            os._exit(125)
        confine["unshare_flags"] = flags & ~made  # made already, before the job came
        err = ctypes.create_string_buffer(256)
        rc = lib.plotq_confine_job(json.dumps(confine).encode(), err, ctypes.c_size_t(256))
        if rc != 0:
            os.write(3, ("error confine:%s %d\n" % (err.value.decode("ascii", "replace"), -rc)).encode())
            os._exit(125)
        os.environ.clear()
        os.environ.update(job["env"])
        entry.run_job(job["mode"], job["argv"], 3, require_filter=job.get("require_filter", True))
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
    os._exit(code)


def fork_spare(own_pidns, slot, slot_cgroups):
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
        child_main(child_sock, procs_files)
    # Back to our own pid namespace for the next fork (allowed: we are root in the user
    # namespace that owns it).
    if libc.setns(own_pidns, CLONE_NEWPID) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns(pid): " + os.strerror(e))
    child_sock.close()
    return Spare(pid, os.pidfd_open(pid), parent_sock, slot)


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
    ctl_fd, lib_path, preload, slot_cgroups = 3, None, [], []
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
    spares = {}  # slot -> Spare
    spare_of = {}  # pidfd -> Spare

    def add_spare(slot):
        sp = fork_spare(own_pidns, slot, slot_cgroups)
        spares[slot] = sp
        spare_of[sp.pidfd] = sp
        poller.register(sp.pidfd, select.POLLIN)
        return sp

    add_spare(0)  # the slot a lone job gets
    ctl.send(json.dumps({"event": "ready", "mode": mode, "preload_s": round(preload_s, 3)}).encode())

    running = {}  # pidfd -> (pid, status socket)
    refill = set()  # slots whose spare was used: fork the next one when idle
    dispatched_at = 0.0
    while True:
        # A refill (a fork of this big process, slower under load) waits until no job runs,
        # or until the running one has had REFILL_AFTER_S: a short job's exit is then never
        # stuck behind the fork, a long one overlaps it, and a job after a pause finds its spare
        # ready and pays no fork at all.
        timeout = None
        if refill:
            timeout = max(0.0, REFILL_AFTER_S - (time.monotonic() - dispatched_at)) * 1000 if running else 0
        for fd, _ in poller.poll(timeout):
            if fd == ctl.fileno():
                try:
                    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 8)
                except OSError as e:
                    log("control socket: %s" % e)
                    return 1
                if not msg and not fds:
                    return 0  # the host closed the control socket
                if len(fds) != 4:
                    for f in fds:
                        os.close(f)
                    log("job message without its 4 descriptors")
                    continue
                status = socket.socket(fileno=fds[3])
                try:
                    job = json.loads(msg)
                    slot = int(job.get("slot", 0))
                    s = spares.pop(slot, None)
                    if s is None:  # two jobs at once, or the spare died: fork one now
                        add_spare(slot)
                        s = spares.pop(slot)
                    spare_of.pop(s.pidfd, None)
                    poller.unregister(s.pidfd)
                    socket.send_fds(s.sock, [json.dumps(job).encode()], fds[:3])
                    s.sock.close()
                    wait_own_session(s.pid)  # the host nices the job's session when it gets "pid"
                    send_status(status, "pid", s.pidfd)
                    running[s.pidfd] = (s.pid, status)
                    poller.register(s.pidfd, select.POLLIN)
                    refill.add(slot)
                    dispatched_at = time.monotonic()
                except Exception as e:
                    log("job failed to start: %r" % (e,))
                    send_status(status, "error zygote %d" % (getattr(e, "errno", 0) or 0))
                    status.close()
                finally:
                    for f in fds[:3]:
                        os.close(f)
            elif fd in spare_of:
                sp = spare_of.pop(fd)  # a spare died before it got a job
                poller.unregister(fd)
                os.waitpid(sp.pid, 0)
                os.close(sp.pidfd)
                sp.sock.close()
                spares.pop(sp.slot, None)
                refill.add(sp.slot)
            elif fd in running:
                pid, status = running.pop(fd)
                poller.unregister(fd)
                _, st, ru = os.wait4(pid, 0)
                send_status(status, "exit %d %d %d %d" % (st, int(ru.ru_utime * 1e6), int(ru.ru_stime * 1e6), ru.ru_maxrss))
                status.close()
                os.close(fd)
        if refill and (not running or time.monotonic() - dispatched_at >= REFILL_AFTER_S):
            for slot in sorted(refill):
                if slot not in spares:
                    try:
                        add_spare(slot)
                    except OSError as e:
                        log("cannot fork a spare: %s" % e)
            refill.clear()


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
