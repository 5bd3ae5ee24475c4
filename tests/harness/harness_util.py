"""Helpers for the harness tests: run harness.py as the launcher would (a fresh work dir as cwd,
the contract's environment, /usr/bin/python3 -I) and collect what it left behind."""

import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS_DIR = os.path.join(ROOT, "sandbox", "harness")
HARNESS = os.path.join(HARNESS_DIR, "harness.py")
PYTHON = os.environ.get("PLOTQ_PYTHON") or os.path.join(ROOT, "runtime", "venv", "bin", "python")
SKIP_VALIDATION = "PLOTQ_HARNESS_SKIP_VALIDATION"
RUN_TIMEOUT_S = 120
WORKERS = 2


class Run(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str
    result: dict          # result.json (or None)
    validation: dict      # validation.json (or None)
    out_csv: bytes        # out.csv (or None)
    work: str             # the work dir (kept until cleanup())
    files: tuple          # names in the work dir after the run


# The table caps and the snippet's character cap the host passes into every data job
# (runs/data_job.cpp, from table::Caps and runs::kMaxDataCodeChars); the
# harness tests hold the harness to these values.
DATA_CAPS = {"PLOTQ_DATA_MAX_ROWS": "20000", "PLOTQ_DATA_MAX_COLUMNS": "50",
             "PLOTQ_DATA_MAX_CSV_BYTES": "204800", "PLOTQ_DATA_MAX_CELL_CHARS": "200",
             "PLOTQ_DATA_MAX_CODE_CHARS": "16384"}


def base_env(work):
    return {"HOME": work, "TMPDIR": work, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **DATA_CAPS}


def _read(path, binary=False):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return data if binary else data.decode("utf-8", "replace")


def run_harness(source, skip_validation=False, files=None, argv=None, snippet_name="snippet.py",
                work=None, env=None):
    """Runs `python3 -I harness.py --data snippet.py` (or `argv`) in a fresh work dir holding
    `source` as `snippet_name`; `env` is added to the contract's environment."""
    work = work or tempfile.mkdtemp(prefix="plotq-harness-")
    if source is not None:
        data = source if isinstance(source, bytes) else source.encode("utf-8")
        with open(os.path.join(work, snippet_name), "wb") as f:
            f.write(data)
    for name, content in (files or {}).items():
        with open(os.path.join(work, name), "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
    full_env = base_env(work)
    full_env.update(env or {})
    if skip_validation:
        full_env[SKIP_VALIDATION] = "1"
    args = argv if argv is not None else ["--data", snippet_name]
    proc = subprocess.run([PYTHON, "-I", HARNESS, *args], cwd=work, env=full_env,
                          capture_output=True, timeout=RUN_TIMEOUT_S)
    result = _read(os.path.join(work, "result.json"))
    validation = _read(os.path.join(work, "validation.json"))
    return Run(
        exit_code=proc.returncode,
        stdout=proc.stdout.decode("utf-8", "replace"),
        stderr=proc.stderr.decode("utf-8", "replace"),
        result=json.loads(result) if result else None,
        validation=json.loads(validation) if validation else None,
        out_csv=_read(os.path.join(work, "out.csv"), binary=True),
        work=work,
        files=tuple(sorted(os.listdir(work))),
    )


FORK_RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forkrunner.py")


class ForkRunner:
    """A warm test zygote (forkrunner.py): one preload, one fork per job. Not thread-safe: give
    each thread its own runner."""

    def __init__(self, mode="data"):
        self.proc = subprocess.Popen([PYTHON, "-B", "-I", FORK_RUNNER, HARNESS_DIR, mode],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=base_env(tempfile.gettempdir()), text=True)

    def run(self, source, validate=True, files=None, argv=None, snippet_name="snippet.py",
            env=None):
        work = tempfile.mkdtemp(prefix="plotq-harness-")
        capture = tempfile.mkdtemp(prefix="plotq-capture-")
        if source is not None:
            data = source if isinstance(source, bytes) else source.encode("utf-8")
            with open(os.path.join(work, snippet_name), "wb") as f:
                f.write(data)
        for name, content in (files or {}).items():
            with open(os.path.join(work, name), "wb" if isinstance(content, bytes) else "w") as f:
                f.write(content)
        job = {"work": work, "capture": capture, "validate": validate, "env": env or {},
               "argv": argv if argv is not None else ["--data", "snippet.py"]}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        result = _read(os.path.join(work, "result.json"))
        validation = _read(os.path.join(work, "validation.json"))
        run = Run(
            exit_code=answer["exit"],
            stdout=_read(os.path.join(capture, "stdout")) or "",
            stderr=_read(os.path.join(capture, "stderr")) or "",
            result=json.loads(result) if result else None,
            validation=json.loads(validation) if validation else None,
            out_csv=_read(os.path.join(work, "out.csv"), binary=True),
            work=work,
            files=tuple(sorted(os.listdir(work))),
        )
        shutil.rmtree(capture, ignore_errors=True)
        return run

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def run_forked(jobs, mode="data"):
    """{name: (source, kwargs)} -> {name: Run} through two warm runners (preload(mode)) in
    parallel."""
    names = list(jobs)
    runners = [ForkRunner(mode) for _ in range(WORKERS)]
    try:
        def work(index):
            out = {}
            for name in names[index::WORKERS]:
                source, kwargs = jobs[name]
                out[name] = runners[index].run(source, **kwargs)
            return out
        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            results = {}
            for part in pool.map(work, range(WORKERS)):
                results.update(part)
        return results
    finally:
        for runner in runners:
            runner.close()


def run_plain(source, files=None, timeout=60):
    """Runs the same code with plain Python (no harness, no guard): the control that proves an
    attack really works when nothing stops it. Returns (exit code, stdout, work dir)."""
    work = tempfile.mkdtemp(prefix="plotq-control-")
    with open(os.path.join(work, "attack.py"), "w") as f:
        f.write(source)
    for name, content in (files or {}).items():
        with open(os.path.join(work, name), "w") as f:
            f.write(content)
    proc = subprocess.run([PYTHON, "-B", "-I", "attack.py"], cwd=work, env=base_env(work),
                          capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), work


def run_many(jobs):
    """{name: callable} -> {name: result}, two at a time (the machine has two cores)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def cleanup(paths):
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def stdout_lines(run):
    return [line for line in run.stdout.splitlines() if line.startswith("HARNESS ")]
