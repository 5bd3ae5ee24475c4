"""A test-side zygote: preload(mode) once (argv[2], default "data"), then fork one child per job,
the way the launcher's warm path does. Never arms anything itself; each child arms its own guard
and exits.

Protocol (one JSON object per line): stdin {"work", "capture", "argv", "validate", "env"[, "warm"]} ->
stdout {"work", "exit"}. A child runs with cwd = work, stdin /dev/null, stdout/stderr to files in
`capture` (outside the work dir), and calls harness.main(argv) -- or, with validate=false,
harness._main(argv, validate=False), the guard layer on its own. Exit status = the harness's code.
Before the job a child runs harness.warm_spare(mode), as a zygote's spare does ("warm": false
skips it).
"""

import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import harness  # noqa: E402

MODE = sys.argv[2] if len(sys.argv) > 2 else "data"
harness.preload(MODE)


def child(job):
    # As a zygote's spare: nothing of the parent past stdio, then the warm-up, whose own
    # descriptors (vl-convert's engine) stay for the job.
    os.closerange(3, 256)
    if job.get("warm", True):
        # what the launcher's spare does before its job arrives (zygote.py): every job of the
        # harness tests runs in a pre-warmed child unless it asks otherwise
        harness.warm_spare(MODE)
    os.chdir(job["work"])
    devnull = os.open("/dev/null", os.O_RDONLY)
    out = os.open(os.path.join(job["capture"], "stdout"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(os.path.join(job["capture"], "stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (devnull, out, err):
        os.close(fd)
    os.environ.update({"HOME": job["work"], "TMPDIR": job["work"]})
    os.environ.update(job.get("env") or {})
    exit_now = os._exit
    try:
        if job["validate"]:
            code = harness.main(job["argv"])
        else:
            code = harness._main(job["argv"], validate=False)
    except BaseException:
        code = 99
    exit_now(code)


def serve():
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            child(job)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"work": job["work"], "exit": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
