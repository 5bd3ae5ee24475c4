"""The data-code validator (sandbox/harness/validator.py) under atheris: any source text, decoded
from the input's bytes. validate_data_code promises never to raise on bad input, to answer only
codes of FINDING_CODES, lines within the snippet, and findings sorted and unique; a snippet it
accepts must compile from the very tree it checked.

  python validator_fuzz.py [libFuzzer flags] CORPUS...   fuzz (needs atheris: runtime/tools.lock)
  python validator_fuzz.py --replay CORPUS...             every corpus file once, no atheris needed
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(os.path.dirname(HERE), "sandbox", "harness")
sys.path.insert(0, HARNESS)
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def check(data):
    source = data.decode("utf-8", errors="surrogateescape") if data[:1] != b"\x00" else data[1:].decode("latin-1")
    tree, findings = validator.prepare_data_code(source)
    lines = len(LINE_BREAK.split(source))  # as Python's tokenizer counts them: \r alone ends a line too
    for f in findings:
        assert f.code in validator.FINDING_CODES, f
        assert 0 <= f.line <= lines + 1, (f, lines)
        assert isinstance(f.message, str) and f.message, f
    assert findings == sorted(set(findings), key=lambda f: (f.line, f.code, f.message)), findings
    assert (tree is None) == bool(findings), findings
    if tree is not None:
        compile(tree, "snippet.py", "exec")


def replay(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(d, n) for d, _, names in os.walk(p) for n in names)
        else:
            files.append(p)
    if not files:
        print("replay: no inputs (a replay of nothing proves nothing)")
        return 1
    for path in files:
        with open(path, "rb") as f:
            check(f.read())
    print(f"replay: {len(files)} inputs ran")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--replay"]:
        import validator  # noqa: E402
        sys.exit(replay(sys.argv[2:]))
    import atheris  # noqa: E402
    with atheris.instrument_imports():
        import validator  # noqa: E402
    sys.setrecursionlimit(1000)  # the harness's own default; the validator maps RecursionError
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
