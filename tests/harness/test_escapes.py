"""Escape attempts against data mode, each layer on its own.

Guard layer: every attack runs with validation bypassed (the test zygote calls the harness with
validate=False; three also run cold through the script entry and PLOTQ_HARNESS_SKIP_VALIDATION).
Each must fail the run with its own exit code and refusal rule, at the line of the attempt (the
guard saw the attempt: the attack ran up to it), and leave no marker / leak nothing.
Control: the same code under plain Python, with no guard, creates the marker (or leaks, or exits
with its own code), so the attack is real.
Validator layer: every attack is also refused by validate_data_code on its own.
"""

import marshal
import os
import socket
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import (HARNESS_DIR, cleanup, run_forked, run_harness,  # noqa: E402
                          run_many, run_plain)

sys.path.insert(0, HARNESS_DIR)
from exits import DATA_EXIT  # noqa: E402
from validator import validate_data_code  # noqa: E402

REFUSED = DATA_EXIT.GUARD_REFUSED
MARSHAL_PAYLOAD = marshal.dumps(compile("open('marker', 'w').close()", "payload", "exec"))
HOSTILE_STR = '''\
import builtins
armed = []
class Hostile(str):
    def __eq__(self, other):
        if armed:
            builtins.open("marker", "w").close()
        return str.__eq__(self, other)
    __hash__ = str.__hash__
'''
HOSTILE_TRACEBACK = '''\
import builtins
class Hostile(Exception):
    @property
    def __traceback__(self):
        builtins.open("marker", "w").close()
        return None
'''


def attack(source, exit_code=REFUSED, rule=None, marker=True, leak=None, files=None,
           control="marker", control_source=None, validator=(), attempt="# ATTEMPT"):
    """`attempt`: text on the line the guard must report, the innermost line of the snippet at
    the refused operation (inside a hostile method when the snippet itself calls it)."""
    return dict(source=textwrap.dedent(source), attempt=attempt, exit=exit_code, rule=rule, marker=marker,
                leak=leak, files=files or {}, control=control,
                control_source=textwrap.dedent(control_source) if control_source else None,
                validator=set(validator))


ATTACKS = {
    "file_read": attack('''\
        import io
        import pandas as pd
        text = io.open("secret.txt").read()  # ATTEMPT
        print(text)
        df = pd.DataFrame({"v": [text]})
        ''', rule="open", marker=False, leak="TOPSECRET-7781", files={"secret.txt": "TOPSECRET-7781"},
        control="leak", validator={"file-access"}),
    "file_write": attack('''\
        import pathlib
        pathlib.Path("marker").write_text("x")  # ATTEMPT
        ''', rule="open", validator={"file-access"}),
    "os_open": attack('''\
        import os
        fd = os.open("marker", os.O_WRONLY | os.O_CREAT)  # ATTEMPT
        ''', rule="open", validator={"os-use"}),
    "fresh_import": attack('''\
        import sys
        sys.path.insert(0, ".")
        import evil_module  # ATTEMPT
        ''', rule="import", files={"evil_module.py": "open('marker', 'w').close()\n"},
        validator={"banned-import"}),
    "listing": attack('''\
        import os
        names = os.listdir(".")  # ATTEMPT
        print(names)
        ''', rule="listing", marker=False, leak="zz_listing_probe_4471",
        files={"zz_listing_probe_4471.txt": ""}, control="leak", validator={"os-use"}),
    "ctypes": attack('''\
        import ctypes
        libc = ctypes.CDLL(None)  # ATTEMPT
        libc.system(b"touch marker")
        ''', rule="ctypes", validator={"banned-import"}),
    "ctypes_pointer": attack('''\
        import ctypes
        blob = b"LEAK-" + b"6642-RAW-MEMORY"
        raw = ctypes.c_char_p(id(blob) + 32).value  # ATTEMPT
        print(raw)
        ''', rule="ctypes", marker=False, leak="LEAK-6642", control="leak", validator={"banned-import"}),
    "subprocess": attack('''\
        import subprocess
        subprocess.run(["/usr/bin/touch", "marker"])  # ATTEMPT
        ''', rule="process", validator={"banned-import"}),
    "os_system": attack('''\
        import os
        os.system("touch marker")  # ATTEMPT
        ''', rule="process", validator={"os-use"}),
    "posix_spawn": attack('''\
        import os
        pid = os.posix_spawn("/usr/bin/touch", ["touch", "marker"], {})  # ATTEMPT
        os.waitpid(pid, 0)
        ''', rule="process", validator={"os-use"}),
    "fork_exec": attack('''\
        import os
        import _posixsubprocess
        r, w = os.pipe()
        pid = _posixsubprocess.fork_exec([b"/usr/bin/touch", b"marker"], [b"/usr/bin/touch"], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1, None, False)  # ATTEMPT
        os.waitpid(pid, 0)
        ''', rule="process", validator={"banned-import", "os-use"}),
    "socket": attack('''\
        import socket
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # ATTEMPT
        conn.connect(("127.0.0.1", PORT))
        conn.sendall(b"x")
        ''', rule="socket", marker=False, control="socket", validator={"network-access"}),
    "pickle": attack('''\
        import pickle
        pickle.loads(b"cbuiltins\\nopen\\n(S'marker'\\nS'w'\\ntR.")  # ATTEMPT
        ''', rule="pickle", validator={"file-access"}),
    "marshal": attack('''\
        import marshal
        exec(marshal.loads(PAYLOAD))  # ATTEMPT
        '''.replace("PAYLOAD", repr(MARSHAL_PAYLOAD)), rule="marshal",
        validator={"banned-import", "banned-name"}),
    "generator_frame": attack('''\
        def numbers():
            yield 1
        gen = numbers()
        frame_builtins = gen.gi_frame.f_builtins  # ATTEMPT
        frame_builtins["open"]("marker", "w").close()
        ''', rule="frame", validator={"banned-statement", "escape-attribute"}),
    "traceback_frame": attack('''\
        try:
            1 / 0
        except ZeroDivisionError as exc:
            tb = exc.__traceback__
        frame = tb.tb_frame  # ATTEMPT
        frame.f_builtins["open"]("marker", "w").close()
        ''', rule="frame", validator={"dunder", "escape-attribute"}),
    "getframe": attack('''\
        import sys
        frame = sys._getframe()  # ATTEMPT
        frame.f_builtins["open"]("marker", "w").close()
        ''', rule="frame", validator={"banned-import", "private-attribute"}),
    "signal_frame": attack('''\
        import signal
        import time
        frames = []
        signal.signal(signal.SIGALRM, lambda signum, frame: frames.append(frame))  # ATTEMPT
        signal.alarm(1)
        time.sleep(1.3)
        frames[0].f_builtins["open"]("marker", "w").close()
        ''', rule="signal", validator={"banned-import"}),
    "settrace": attack('''\
        import sys
        def tracer(frame, event, arg):
            sys.settrace(None)
            frame.f_builtins["open"]("marker", "w").close()
        sys.settrace(tracer)  # ATTEMPT
        def probe():
            return 1
        probe()
        ''', rule="frame", validator={"banned-import"}),
    "thread": attack('''\
        import threading
        worker = threading.Thread(target=lambda: open("marker", "w").close())
        worker.start()  # ATTEMPT
        worker.join()
        ''', rule="thread", validator={"banned-import", "file-access"}),
    "mkfifo": attack('''\
        import os
        os.mkfifo("marker")  # ATTEMPT
        ''', rule="filesystem", validator={"os-use"}),
    "gc_objects": attack('''\
        import gc
        everything = gc.get_objects()  # ATTEMPT
        ''', rule="gc", marker=False, control=None, validator={"banned-import"}),
    "code_swap": attack('''\
        def harmless():
            return 1
        harmless.__code__ = compile("open('marker', 'w').close()", "swap", "exec")  # ATTEMPT
        harmless()
        ''', rule="code", validator={"dunder", "banned-name"}),
    "audit_hook": attack('''\
        import sys
        sys.addaudithook(lambda event, args: None)  # ATTEMPT
        ''', rule="hook", marker=False, control=None, validator={"banned-import"}),
    "os_exit": attack('''\
        import os
        import pandas as pd
        df = pd.DataFrame({"a": [1]})
        os._exit(0)  # ATTEMPT
        ''', rule="exit", marker=False, control=("exit", 0), validator={"os-use"}),
    "fd_forge": attack('''\
        import os
        import pandas as pd
        df = pd.DataFrame({"a": [1]})
        for fd in range(3, 16):
            try:
                os.write(fd, b"forged,row\\n")  # ATTEMPT
            except OSError:
                pass
        ''', rule="fd", marker=False, leak="forged", control=None, validator={"os-use"}),
    "reload_posix": attack('''\
        import importlib
        import posix
        fresh = importlib.reload(posix)  # ATTEMPT
        fresh._exit(0)
        ''', rule="import", marker=False, control=("exit", 0), validator={"banned-import"}),
    "caught_refusal": attack('''\
        import os
        import pandas as pd
        try:
            os.listdir(".")  # ATTEMPT
        except Exception:
            pass
        df = pd.DataFrame({"a": [1]})
        ''', rule="listing", marker=False, control=None, validator={"os-use"}),
    "system_exit": attack('''\
        import pandas as pd
        df = pd.DataFrame({"a": [1]})
        raise SystemExit(0)  # ATTEMPT
        ''', exit_code=DATA_EXIT.SNIPPET_EXIT, marker=False, control=("exit", 0),
        validator={"banned-name"}),
    "sys_exit": attack('''\
        import sys
        import pandas as pd
        df = pd.DataFrame({"a": [1]})
        sys.exit(0)  # ATTEMPT
        ''', exit_code=DATA_EXIT.SNIPPET_EXIT, marker=False, control=("exit", 0),
        validator={"banned-import"}),
    "traceback_property": attack(HOSTILE_TRACEBACK + textwrap.dedent('''\
        df = 1
        raise Hostile("boom")  # ATTEMPT
        '''), exit_code=DATA_EXIT.SNIPPET_ERROR,
        control_source=HOSTILE_TRACEBACK + 'Hostile("x").__traceback__\n',
        validator={"banned-statement", "dunder", "banned-import"}),
    "traceback_property_control": attack(HOSTILE_TRACEBACK + textwrap.dedent('''\
        df = 1
        Hostile("x").__traceback__  # ATTEMPT
        '''), rule="open", control=None, validator={"banned-statement"},
        attempt="builtins.open"),
    "str_eq_df_key": attack(HOSTILE_STR + textwrap.dedent('''\
        import pandas as pd
        (lambda: 0).__globals__[Hostile("df")] = pd.DataFrame({"a": [1]})
        armed.append(True)  # ATTEMPT
        '''), exit_code=DATA_EXIT.NO_DF,
        control_source=HOSTILE_STR + 'armed.append(True)\nHostile("df") == "df"\n',
        validator={"banned-statement", "dunder"}),
    "str_eq_control": attack(HOSTILE_STR + textwrap.dedent('''\
        df = 1
        armed.append(True)
        Hostile("df") == "df"  # ATTEMPT
        '''), rule="open", control=None, validator={"banned-statement"},
        attempt="builtins.open"),
    "str_eq_class_name": attack(HOSTILE_STR + textwrap.dedent('''\
        Fake = type(Hostile("ZeroDivisionError"), (ZeroDivisionError,), {"__module__": Hostile("builtins"), "__qualname__": Hostile("ZeroDivisionError")})
        armed.append(True)
        df = 1
        raise Fake("x")  # ATTEMPT
        '''), exit_code=DATA_EXIT.SNIPPET_ERROR, control=None,
        validator={"banned-statement", "banned-call", "dunder"}),
}
COLD = ("file_read", "generator_frame", "os_exit")


def attempt_line(source, marker="# ATTEMPT"):
    for number, line in enumerate(source.splitlines(), 1):
        if marker in line:
            return number
    raise AssertionError("no attempt line")


def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    return server


def connected(server):
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


class Escapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.guard_listener = listener()
        cls.control_listener = listener()
        cls.sources = {name: a["source"].replace("PORT", str(cls.guard_listener.getsockname()[1]))
                       for name, a in ATTACKS.items()}
        jobs = {name: (cls.sources[name], {"validate": False, "files": a["files"]})
                for name, a in ATTACKS.items()}
        cls.runs = run_forked(jobs)
        cls.guard_connected = connected(cls.guard_listener)
        cold = {name: (lambda name=name: run_harness(cls.sources[name], skip_validation=True,
                                                      files=ATTACKS[name]["files"]))
                for name in COLD}
        control_port = str(cls.control_listener.getsockname()[1])
        controls = {name: (lambda a=a: run_plain(
                        (a["control_source"] or a["source"]).replace("PORT", control_port), a["files"]))
                    for name, a in ATTACKS.items() if a["control"] is not None}
        both = run_many({**{"cold " + k: v for k, v in cold.items()},
                         **{"control " + k: v for k, v in controls.items()}})
        cls.cold = {k[5:]: v for k, v in both.items() if k.startswith("cold ")}
        cls.controls = {k[8:]: v for k, v in both.items() if k.startswith("control ")}

    @classmethod
    def tearDownClass(cls):
        cls.guard_listener.close()
        cls.control_listener.close()
        cleanup([r.work for r in list(cls.runs.values()) + list(cls.cold.values())]
                + [c[2] for c in cls.controls.values()])

    def check_guarded(self, name, run):
        a = ATTACKS[name]
        line = attempt_line(a["source"], a["attempt"])
        self.assertEqual(run.exit_code, a["exit"], run.stderr[-1500:])
        self.assertEqual(run.result["exit_code"], a["exit"])
        if a["rule"] is not None:
            # refused, at the attempt: the attack ran up to it and the guard saw it
            self.assertEqual(run.result["refusal"], {"rule": a["rule"], "line": line})
        else:
            self.assertIsNone(run.result["refusal"])
        self.assertNotIn("marker", run.files)
        self.assertEqual(run.out_csv, b"")
        if a["leak"]:
            for text in (run.stdout, run.stderr, str(run.result)):
                self.assertNotIn(a["leak"], text)

    def test_guard_refuses_each_attack(self):
        for name in ATTACKS:
            with self.subTest(attack=name):
                self.check_guarded(name, self.runs[name])
        self.assertFalse(self.guard_connected, "a guarded snippet reached the listener")

    def test_cold_path_refuses_too(self):
        for name in COLD:
            with self.subTest(attack=name):
                self.check_guarded(name, self.cold[name])
                self.assertEqual(self.cold[name].result, self.runs[name].result)

    def test_hostile_objects_never_called_by_the_harness(self):
        # the harness read the traceback and the class without running the snippet's code
        tb = self.runs["traceback_property"].result
        self.assertEqual(tb["error"], {"class": "unlisted",
                                       "line": attempt_line(ATTACKS["traceback_property"]["source"])})
        cls = self.runs["str_eq_class_name"].result
        self.assertEqual(cls["error"]["class"], "unlisted")
        # ... while the same objects do open the marker when the snippet itself triggers them
        for name in ("traceback_property_control", "str_eq_control"):
            self.assertEqual(self.runs[name].result["refusal"]["rule"], "open")

    def test_snippet_never_chooses_the_exit_code(self):
        for name in ("system_exit", "sys_exit"):
            result = self.runs[name].result
            self.assertEqual(result["error"], {"class": "SystemExit",
                                               "line": attempt_line(ATTACKS[name]["source"])})
        for name in ("os_exit", "reload_posix"):
            self.assertEqual(self.runs[name].exit_code, REFUSED)

    def test_controls_show_the_attacks_are_real(self):
        for name, a in ATTACKS.items():
            if a["control"] is None:
                continue
            code, stdout, work = self.controls[name]
            with self.subTest(attack=name):
                if a["control"] == "marker":
                    self.assertTrue(os.path.exists(os.path.join(work, "marker")), (code, stdout))
                elif a["control"] == "leak":
                    self.assertIn(a["leak"], stdout)
                elif a["control"] == "socket":
                    self.assertTrue(connected(self.control_listener))
                else:
                    self.assertEqual(code, a["control"][1])

    def test_validator_refuses_each_attack(self):
        for name, a in ATTACKS.items():
            with self.subTest(attack=name):
                codes = {f.code for f in validate_data_code(self.sources[name])}
                self.assertTrue(codes - {"df-missing"}, codes)
                self.assertLessEqual(a["validator"], codes)


if __name__ == "__main__":
    unittest.main()
