"""The sandbox runtime (runtime/README.md): the lock pins every package with hashes, the venv holds
exactly the lock, setup refuses a wheel whose hash differs, and a job in the real sandbox imports
every library from the venv and the base interpreter's stdlib only (never Debian's dist-packages).

Run by the runtime's own interpreter (ctest runtime.*); PLOTQ_BUILD_DIR names the build with
`plotq`."""

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME = os.path.join(ROOT, "runtime")
LOCK = os.path.join(RUNTIME, "requirements.lock")
VENV = os.environ.get("PLOTQ_RUNTIME_DIR") or os.path.join(RUNTIME, "venv")
UV = os.path.join(RUNTIME, "tools", "bin", "uv")
BUILD = os.environ.get("PLOTQ_BUILD_DIR") or os.path.join(ROOT, "build")

# What a catalogue file imports (the Python libraries and their numeric stack).
PLOT_STACK = ("numpy", "pandas", "scipy", "matplotlib", "seaborn", "plotly", "bokeh", "altair",
              "vl_convert", "pygal", "cairosvg", "lets_plot", "plotnine", "sklearn", "statsmodels",
              "PIL")


def lock_entries(text):
    """[(name, version, [hashes])] of a uv/pip-compile lock."""
    entries = []
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\\n;]+)", block)
        if head:
            entries.append((head.group(1), head.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", block)))
    return entries


def pins(entries):
    """{normalised name: version} of lock_entries."""
    return {re.sub(r"[-_.]+", "-", n).lower(): v for n, v, _ in entries}


class Lock(unittest.TestCase):
    def assert_hashed(self, text, entries):
        for name, version, hashes in entries:
            self.assertTrue(hashes, f"{name}=={version} has no hash")
        # Every requirement line of the lock is one of the parsed pins (nothing unpinned slipped in).
        requirement_lines = [line for line in text.splitlines() if re.match(r"[A-Za-z0-9]", line)]
        self.assertEqual(len(requirement_lines), len(entries))

    def test_every_package_is_pinned_with_hashes(self):
        with open(LOCK, encoding="utf-8") as f:
            text = f.read()
        entries = lock_entries(text)
        self.assertGreater(len(entries), 40)
        names = {name.lower() for name, _, _ in entries}
        for wanted in ("numpy", "pandas", "matplotlib", "seaborn", "plotly", "bokeh", "altair",
                       "vl-convert-python", "pygal", "cairosvg", "lets-plot", "plotnine",
                       "scikit-learn", "statsmodels", "pillow"):
            self.assertIn(wanted, names)
        self.assert_hashed(text, entries)

    def test_the_bare_draw_lock_is_hashed_and_agrees_with_the_runtime(self):
        # bench/bare_draw.sh installs it beside the venv for the bare baseline only: pinned and
        # hashed like the runtime, a package both hold at one version, its browser drivers absent
        # from the venv the sandbox runs.
        with open(os.path.join(RUNTIME, "bare-draw.lock"), encoding="utf-8") as f:
            text = f.read()
        entries = lock_entries(text)
        names = pins(entries)
        self.assertIn("kaleido", names)
        self.assertIn("selenium", names)
        self.assert_hashed(text, entries)
        runtime = pins(lock_entries(open(LOCK).read()))
        for name in set(names) & set(runtime):
            self.assertEqual(names[name], runtime[name], name)
        for driver in ("kaleido", "selenium", "choreographer"):
            self.assertNotIn(driver, runtime)

    def test_the_venv_holds_the_lock(self):
        with open(os.path.join(VENV, "plotq-runtime.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        with open(LOCK, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(manifest["lock_sha256"], digest)
        self.assertEqual(manifest["id"], digest[:12])
        locked = pins(lock_entries(open(LOCK).read()))
        self.assertEqual(manifest["packages"], dict(sorted(locked.items())))
        # Checked against what is really installed, not only against the manifest.
        out = subprocess.run([os.path.join(VENV, "bin", "python"), "-I", "-c",
                              "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version "
                              "for d in m.distributions()}))"], capture_output=True, text=True, check=True)
        installed = {re.sub(r"[-_.]+", "-", n).lower(): v for n, v in json.loads(out.stdout).items()}
        self.assertEqual(installed, locked)

    def test_a_wheel_whose_hash_differs_is_refused(self):
        if not os.access(UV, os.X_OK):
            self.skipTest("runtime/tools/bin/uv is not installed")
        name, version, _ = next(e for e in lock_entries(open(LOCK).read()) if e[0] == "pypng")
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.lock")
            with open(bad, "w") as f:
                f.write(f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n")
            subprocess.run([UV, "venv", "-q", "--python", "/usr/bin/python3.11", os.path.join(tmp, "v")], check=True)
            run = subprocess.run([UV, "pip", "sync", "-q", "--require-hashes", "--no-build", "--python",
                                  os.path.join(tmp, "v", "bin", "python"), bad], capture_output=True, text=True)
            if "Hash mismatch" not in run.stderr and ("connect" in run.stderr or "dns" in run.stderr.lower()):
                self.skipTest("the package index is not reachable: " + run.stderr[-200:])
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("Hash mismatch", run.stderr)
            listing = subprocess.run([os.path.join(tmp, "v", "bin", "python"), "-I", "-c", "import png"],
                                     capture_output=True)
            self.assertNotEqual(listing.returncode, 0, "the refused wheel was installed anyway")


PROBE = """
import sys, os, sysconfig
import %s
allowed = (os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib", "python3.11"),
           %r)   # the harness's own entry
foreign = sorted(f"{name}={getattr(m, '__file__', None)}" for name, m in list(sys.modules.items())
                 if isinstance(getattr(m, "__file__", None), str) and not m.__file__.startswith(allowed)
                 and name not in ("__main__", "__mp_main__", "entry"))   # entry: the harness's own
print("PREFIX", sys.prefix, "BASE", sys.base_prefix)
print("FOREIGN", len(foreign), foreign[:5])
print("MODULES", len(sys.modules))
""" % (", ".join(PLOT_STACK), os.path.join(ROOT, "sandbox", "harness") + "/")


class SandboxImports(unittest.TestCase):
    def test_a_sandboxed_job_imports_only_from_the_venv_and_the_stdlib(self):
        plotq = os.path.join(BUILD, "plotq")
        if not os.access(plotq, os.X_OK):
            self.skipTest("no plotq binary in " + BUILD)
        if os.geteuid() != 0:
            self.skipTest("the sandbox needs root here")
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "probe.py")
            with open(probe, "w") as f:
                f.write(PROBE)
            env = dict(os.environ, PLOTQ_PYTHON=os.path.join(VENV, "bin", "python"))
            run = subprocess.run([plotq, "sandbox", "run", probe, "--mode", "raw", "--timeout", "90"],
                                 capture_output=True, text=True, env=env, timeout=180)
            result = json.loads(run.stdout)
            self.assertEqual(result["reason"], "ok", result.get("stderr_tail"))
            out = result["stdout_head"]
            # A checkout under /tmp keeps its venv elsewhere (tools/runtime.sh): the real path runs.
            self.assertIn(f"PREFIX {os.path.realpath(VENV)} BASE /usr", out)
            self.assertIn("FOREIGN 0 []", out)
            modules = int(re.search(r"MODULES (\d+)", out).group(1))
            self.assertGreater(modules, 500)   # the stack really was imported


if __name__ == "__main__":
    unittest.main()
