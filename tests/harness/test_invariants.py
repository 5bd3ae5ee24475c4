"""Static invariants of the harness: the closures that run after arming look nothing up at run
time, the exit-code table is disjoint and documented, the vocabularies match the README."""

import dis
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import HARNESS_DIR  # noqa: E402

sys.path.insert(0, HARNESS_DIR)
import datamode  # noqa: E402
import errors  # noqa: E402
import exits  # noqa: E402
import guard  # noqa: E402
import localcalls  # noqa: E402
import plotguard  # noqa: E402
import plotmode  # noqa: E402
import records  # noqa: E402
import table  # noqa: E402
import validator  # noqa: E402

# The folder's README and the reference it links to (docs/harness.md holds the exit-code tables,
# the vocabularies and the guard's rules).
README = os.path.join(HARNESS_DIR, "README.md")
REFERENCE = os.path.join(HARNESS_DIR, "..", "..", "docs", "harness.md")
LOOKUPS = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "STORE_NAME", "DELETE_GLOBAL",
           "DELETE_NAME", "IMPORT_NAME", "IMPORT_FROM"}


def read_readme():
    with open(README) as f, open(REFERENCE) as g:
        return f.read() + "\n" + g.read()


def lookups(code, where):
    found = []
    for ins in dis.get_instructions(code):
        if ins.opname in LOOKUPS:
            found.append("%s: %s %s" % (where + code.co_name, ins.opname, ins.argval))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += lookups(const, where + code.co_name + ".")
    return found


def nested_lookups(factory):
    """Global/builtin lookups in every function the factory defines (the factory's own body runs
    before arming and may look things up)."""
    found = []
    for const in factory.__code__.co_consts:
        if isinstance(const, types.CodeType):
            found += lookups(const, factory.__name__ + ".")
    return found


class ClosureDiscipline(unittest.TestCase):
    def test_post_arm_closures_bind_everything(self):
        for factory in (guard.arm, guard._make_stub, table.make_converter, records.make_writer,
                        errors.make_classifier, datamode.make_data_run, plotguard.make_decider,
                        localcalls.make_call_decisions, plotmode.make_plot_run):
            with self.subTest(factory=factory.__name__):
                self.assertEqual(nested_lookups(factory), [])

    def test_the_check_sees_a_lookup(self):
        def factory():
            def inner():
                return len([])
            return inner
        self.assertEqual(len(nested_lookups(factory)), 1)

    def test_stubs_hold_no_state(self):
        stub = guard._make_stub("plotq.refused.exit")
        cells = [c.cell_contents for c in stub.__closure__]
        self.assertEqual(sorted(type(c).__name__ for c in cells),
                         ["builtin_function_or_method", "str", "type"])


class ExitCodes(unittest.TestCase):
    def codes(self):
        return {name: value for name, value in vars(exits.DATA_EXIT).items() if name.isupper()}

    def test_disjoint_and_unique(self):
        codes = self.codes()
        values = list(codes.values())
        self.assertEqual(len(values), len(set(values)))
        self.assertEqual(codes["OK"], 0)
        reserved = {exits.PYTHON_CRASH, exits.USAGE, exits.EXEC_FILTER_UNAVAILABLE, exits.KILLED}
        self.assertEqual(reserved, {1, 2, 3, 137})
        self.assertFalse(reserved & set(values))
        for value in values:
            self.assertTrue(value == 0 or 10 <= value < 64, value)

    def test_every_code_has_a_reason_and_is_documented(self):
        readme = read_readme()
        reasons = exits.DATA_REASONS
        self.assertEqual(set(reasons), set(self.codes().values()))
        self.assertEqual(len(set(reasons.values())), len(reasons))
        for code, reason in reasons.items():
            self.assertRegex(readme, r"\| %d \| `%s` \|" % (code, re.escape(reason)))


class StubIndex(unittest.TestCase):
    """The index built before a fork (preload) must not hide a stub target that a new module, or
    a module whose namespace changed size since, holds afterwards."""

    SCRIPT = textwrap.dedent('''
        import os, sys, types
        sys.path.insert(0, sys.argv[1])
        import guard
        import json as existing
        real = [os.write, os.close, os._exit]   # in a list: module globals get replaced too
        guard.index_stub_locations()
        late = types.ModuleType("late_module")
        late.writer = real[0]
        sys.modules["late_module"] = late
        existing.closer = real[1]
        guard.replace_unaudited(guard.DATA_UNAUDITED)
        found = [late.writer is not real[0], existing.closer is not real[1],
                 os.write is not real[0], os.close is not real[1]]
        real[0](1, ("REPLACED" if all(found) else "MISSED %r" % found).encode())
        real[2](0)
        ''')

    def test_index_rescans_new_and_resized_namespaces(self):
        proc = subprocess.run([sys.executable, "-I", "-B", "-c", self.SCRIPT, HARNESS_DIR],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.stdout, "REPLACED", proc.stderr[-1000:])


class WarmSpare(unittest.TestCase):
    """harness.warm_spare (a zygote's spare, before its job) runs every step, changes nothing a
    job could observe, stops when a job waits, and leaves arming finding every stub place."""

    SCRIPT = textwrap.dedent('''
        import gc, hashlib, json, os, random, sys, warnings
        sys.path.insert(0, sys.argv[1])
        import harness
        harness.preload("data")
        import datamode, guard
        import numpy as np
        os.chdir(sys.argv[2])

        def snapshot():
            spaces = {}
            for name, module in list(sys.modules.items()):
                ns = getattr(module, "__dict__", None)
                if type(ns) is dict and name != "__main__":  # this script's own globals
                    spaces[name] = [id(ns), sorted(k for k in ns if type(k) is str),
                                    sorted(id(v) for v in ns.values())]
            state = np.random.get_state()
            return {"modules": spaces, "np": hashlib.sha256(state[1].tobytes()).hexdigest(),
                    "np_pos": int(state[2]), "random": repr(random.getstate()),
                    "files": sorted(os.listdir(".")), "fds": sorted(os.listdir("/proc/self/fd")),
                    "gc": gc.isenabled(), "filters": repr(warnings.filters),
                    "cwd": os.getcwd(), "env": dict(os.environ)}

        def replaced_places():
            real = (os.write, os._exit)
            places = guard.replace_unaudited(guard.DATA_UNAUDITED)
            ok = os.write is not real[0]
            real[0](1, json.dumps([len(places), ok]).encode())
            real[1](0)

        def in_child(fn):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.dup2(w, 1)
                fn()
            os.close(w)
            out = b""
            while True:
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    break
                out += chunk
            os.close(r)
            os.waitpid(pid, 0)
            return json.loads(out)

        before = snapshot()
        steps = harness.warm_spare("data")
        after = snapshot()
        changed = sorted(k for k in before if before[k] != after[k])
        changed_modules = sorted(n for n in set(before["modules"]) | set(after["modules"])
                                 if before["modules"].get(n) != after["modules"].get(n))
        skipped = harness.warm_spare("data", lambda: True)
        cold_places = in_child(replaced_places)
        warm_places = in_child(lambda: (harness.warm_spare("data"), replaced_places()))
        print(json.dumps({"steps": steps, "expected": 1 + len(datamode.warm_spare_steps()),
                          "changed": changed, "changed_modules": changed_modules,
                          "skipped": skipped, "cold": cold_places, "warm": warm_places}))
        ''')

    def test_warm_spare_is_invisible_and_complete(self):
        work = tempfile.mkdtemp(prefix="plotq-warm-")
        try:
            proc = subprocess.run([sys.executable, "-I", "-B", "-c", self.SCRIPT, HARNESS_DIR, work],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
            report = json.loads(proc.stdout.strip().splitlines()[-1])
            self.assertFalse(os.listdir(work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        # every step ran: a step that failed would stop the warm-up silently
        self.assertEqual(report["steps"], report["expected"])
        self.assertGreaterEqual(report["steps"], 2)
        # nothing a job could observe changed: module namespaces (keys and values), random
        # states, files, descriptors, gc, warning filters, cwd, environment
        self.assertEqual(report["changed"], [], report["changed_modules"][:20])
        self.assertEqual(report["skipped"], 0)
        # arming after a warm-up swaps the same places, and os.write is stubbed
        self.assertTrue(report["cold"][1])
        self.assertEqual(report["warm"], report["cold"])
        self.assertGreater(report["cold"][0], 0)


class PlotExitCodes(unittest.TestCase):
    def codes(self):
        return {name: value for name, value in vars(exits.PLOT_EXIT).items() if name.isupper()}

    def test_disjoint_from_data_mode_and_reserved(self):
        plot = set(self.codes().values()) - {0}
        data = {v for k, v in vars(exits.DATA_EXIT).items() if k.isupper()} - {0}
        self.assertEqual(len(plot), len(self.codes()) - 1)
        self.assertFalse(plot & data)
        self.assertFalse(plot & {1, 2, 3, 137})
        self.assertTrue(all(30 <= v < 40 for v in plot), plot)

    def test_every_code_has_a_reason_and_is_documented(self):
        readme = read_readme()
        reasons = exits.PLOT_REASONS
        self.assertEqual(set(reasons), set(self.codes().values()))
        self.assertEqual(len(set(reasons.values())), len(reasons))
        for code, reason in reasons.items():
            self.assertRegex(readme, r"\| %d \| `%s` \|" % (code, re.escape(reason)))

    def test_plot_policy_rules_are_in_the_vocabulary(self):
        policy = plotguard.make_plot_policy("plot-light.png", work_dir="/tmp/job")
        used = set(policy.refused_events.values()) | {r for _, r in policy.refused_prefixes}
        used |= {r for _, _, r in policy.unaudited} | {"open", "import", "listing", "marshal"}
        self.assertLessEqual(used, set(guard.RULES))
        # plot mode keeps every data-mode stub but the two an installed extension's import needs
        # and os.register_at_fork (joblib registers a fork hook at import; forks stay refused)
        dropped = set(guard.DATA_UNAUDITED) - set(policy.unaudited)
        self.assertEqual(dropped, {("_imp", "exec_dynamic", "import"), ("_imp", "exec_builtin", "import"),
                                   ("posix", "register_at_fork", "process")})
        self.assertIn(("posix", "set_blocking", "fd"), policy.unaudited)


class Vocabularies(unittest.TestCase):
    def test_guard_rules(self):
        readme = read_readme()
        policy = guard.DATA_POLICY
        used = set(policy.refused_events.values()) | {r for _, r in policy.refused_prefixes}
        used |= {r for _, _, r in policy.unaudited} | {policy.default_rule, "frame", "code"}
        self.assertLessEqual(used, set(guard.RULES))
        for rule in guard.RULES:
            self.assertIn("`%s`" % rule, readme)

    def test_finding_codes_documented(self):
        readme = read_readme()
        for code in validator.FINDING_CODES:
            self.assertIn("`%s`" % code, readme)

    def test_error_vocabulary(self):
        vocabulary = errors.vocabulary()
        for name in ("ZeroDivisionError", "SystemExit", "numpy.linalg.LinAlgError",
                     "pandas.errors.ParserError", "plotq.GuardRefusal", errors.UNLISTED):
            self.assertIn(name, vocabulary)
        self.assertTrue(all(re.fullmatch(r"[A-Za-z_][\w.]*", n) for n in vocabulary))

    def test_classifier_is_by_identity(self):
        classify = errors.make_classifier()
        self.assertEqual(classify(ZeroDivisionError()), "ZeroDivisionError")
        self.assertEqual(classify(guard.GuardRefusal("x")), "plotq.GuardRefusal")
        fake = type("ValueError", (ValueError,), {"__module__": "builtins"})
        self.assertEqual(classify(fake()), errors.UNLISTED)

    def test_unknown_preload_mode(self):
        import preload
        with self.assertRaises(ValueError):
            preload.preload("nope")


if __name__ == "__main__":
    unittest.main()
