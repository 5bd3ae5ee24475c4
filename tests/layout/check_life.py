"""layout.life_of_a_plot_turn: every step of docs/server.md's "Life of a plot turn" names functions
that exist where it says. A step's names are `path`: `Name` pairs, and further `Name`s after a pair
are looked up in the same file; a name is found when the file defines or declares it
(`Name(` after a word boundary, `def Name(`, or `struct/class Name`). So the walk-through fails as
soon as a function it names is renamed, moved or deleted."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(ROOT, "docs", "server.md")
TOKEN = re.compile(r"`([^`]+)`(:)?")
PATH = re.compile(r"^[\w./-]+\.(cpp|hpp|py|mjs)$")
NAME = re.compile(r"^[A-Za-z_][\w]*(::[A-Za-z_~][\w]*)*$")


def steps(text):
    body = text.split("## Life of a plot turn", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if re.match(r"^\d+\. ", line)]


def defined(path, name):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        src = f.read()
    last = name.split("::")[-1]
    if path.endswith(".py"):
        return re.search(r"^\s*def %s\(" % re.escape(last), src, re.M) is not None
    if "::" in name:  # Class::member: the qualified definition, or the member inside its class
        owner = name.split("::")[-2]
        if re.search(r"\b%s::%s\s*\(" % (re.escape(owner), re.escape(last)), src):
            return True
        return re.search(r"\b(struct|class)\s+%s\b" % re.escape(owner), src) is not None and \
            re.search(r"\b%s\s*\(" % re.escape(last), src) is not None
    return re.search(r"\b%s\s*\(" % re.escape(last), src) is not None


def main():
    with open(DOC, encoding="utf-8") as f:
        lines = steps(f.read())
    bad, checked = [], 0
    if len(lines) < 10:
        bad.append("docs/server.md: the life of a plot turn has %d steps, not the walk-through" % len(lines))
    for n, line in enumerate(lines, 1):
        path = None
        for m in TOKEN.finditer(line):
            tok = m.group(1)
            if PATH.match(tok):
                if not os.path.isfile(os.path.join(ROOT, tok)):
                    bad.append("step %d: no file %s" % (n, tok))
                    path = None
                else:
                    path = tok
                continue
            if path and NAME.match(tok) and not tok.isupper() and "_" not in tok[:1]:
                if tok in ("data.csv",) or tok.startswith("queue::"):
                    continue
                checked += 1
                if not defined(path, tok):
                    bad.append("step %d: %s is not defined in %s" % (n, tok, path))
    for b in bad:
        print("FAIL: " + b)
    print("layout.life_of_a_plot_turn: %d steps, %d named functions found where they say" % (len(lines), checked))
    return 1 if bad or checked < 20 else 0


if __name__ == "__main__":
    sys.exit(main())
