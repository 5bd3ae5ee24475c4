"""The layout contract: README.md's table lists every top-level folder, and each folder's sources
include only the folders its "may include" column names (#include "dir/..." in C and C++).
Exits 1 with every violation listed. Run by ctest (layout.includes)."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROW = re.compile(r"^\| `([a-z_]+)/` \|.*\|([^|]*)\|$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
SOURCES = (".c", ".cpp", ".hpp", ".h")


def contract(root):
    allowed = {}
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        for line in f:
            match = ROW.match(line.rstrip("\n"))
            if match:
                names = match.group(2).strip()
                allowed[match.group(1)] = (None if names == "anything"
                                           else set() if names in ("", "nothing")
                                           else {n.strip() for n in names.split(",")})
    return allowed


def check(root):
    allowed = contract(root)
    problems = []
    folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
                     and not d.startswith(".") and not d.startswith("build") and d not in ("var", "node_modules"))
    for folder in folders:
        if folder not in allowed:
            problems.append(f"README.md's layout table does not list {folder}/")
    for folder, may in allowed.items():
        if may is None:
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules", "venv", "tools", "__pycache__")]
            for name in filenames:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if match and match.group(1) != folder and match.group(1) in allowed \
                                and match.group(1) not in may:
                            problems.append(f"{os.path.relpath(path, root)}:{number}: {folder}/ includes "
                                            f"{match.group(1)}/, which README.md's table does not allow")
    return allowed, problems


def selftest():
    """The checker finds a planted violation and an unlisted folder (so a clean run means something)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "README.md"), "w") as f:
            f.write("| `store/` | x | common |\n| `common/` | y | nothing |\n| `server/` | z | store |\n")
        for d in ("store", "common", "server", "extra"):
            os.mkdir(os.path.join(tmp, d))
        with open(os.path.join(tmp, "store", "a.cpp"), "w") as f:
            f.write('#include "common/log.hpp"\n#include "server/http.hpp"\n')
        _, problems = check(tmp)
        assert any("store/a.cpp:2" in p for p in problems), problems
        assert not any("store/a.cpp:1" in p for p in problems), problems
        assert any("does not list extra/" in p for p in problems), problems
        assert len(problems) == 2, problems


def main():
    selftest()
    allowed, problems = check(ROOT)
    for problem in problems:
        print(problem)
    print(f"layout: {len(allowed)} folders in the contract, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
