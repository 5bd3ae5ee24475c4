"""layout.links: every relative link in the project's Markdown (every README and docs/*.md) names a
file or folder that exists, and a `#fragment` one of its headings (GitHub's slugs); and every source
path a text names in code spans (`server/cluster_node.cpp`) exists, read from the project's root,
the text's folder or a top-level folder (`harness/preload.py` in docs/sandbox.md is sandbox's). A
path with a placeholder (NAME, NNNN, *, <>, {}), a URL path (/static/app.js) and a path inside an
installed package are not files of ours. External links (http, https, mailto) are not fetched:
nothing outside the machine is reachable at test time."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SKIP_DIRS = {".git", "build", "build-san", "node_modules", "var", "venv", "__pycache__", "corpus", "catalogue"}
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_FENCE = re.compile(r"^(```|~~~)")
NAMED_PATH = re.compile(r"`([A-Za-z0-9_.\-/]+/[A-Za-z0-9_.\-]+\.(?:md|cpp|hpp|py|sql|sh|mjs|js|json|cmake|service))`")
INSTALLED = ("package_data/", "site-packages/", "node_modules/", "plotly/")  # installed packages, not ours


def markdown_files():
    """The project's own Markdown: git's tracked files when this is a clone (what setup installs
    under runtime/ or node_modules/ is not ours), else a walk that skips those folders."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], capture_output=True, text=True, check=True).stdout
        tracked = [os.path.join(ROOT, p) for p in out.split()]
    except (OSError, subprocess.CalledProcessError):
        tracked = None
    if tracked:
        for path in tracked:
            rel = os.path.relpath(os.path.dirname(path), ROOT)
            if os.path.basename(path) == "README.md" or rel in ("docs", "."):
                yield path
        return
    for dirpath, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        rel = os.path.relpath(dirpath, ROOT)
        for f in files:
            if f.endswith(".md") and (f == "README.md" or rel == "docs" or rel == "."):
                yield os.path.join(dirpath, f)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if CODE_FENCE.match(line):
                fence = not fence
            elif not fence and line.startswith("#"):
                out.add(slug(line.lstrip("#")))
    return out


def prose_lines(path):
    """(line number, line) of a Markdown file outside its code fences."""
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if CODE_FENCE.match(line):
                fence = not fence
            elif not fence:
                yield n, line


def links(path):
    for n, line in prose_lines(path):
        # inline code is not a link
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield n, m.group(1)


def named_paths(path):
    for n, line in prose_lines(path):
        for m in NAMED_PATH.finditer(line):
            p = m.group(1)
            if p.startswith("/") or any(c in p for c in "*<>{}") or "NAME" in p or "NNNN" in p:
                continue
            if any(i in p for i in INSTALLED):
                continue
            yield n, p


def exists_named(md, p):
    tops = [d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d)) and d not in SKIP_DIRS]
    cands = [os.path.join(ROOT, p), os.path.join(os.path.dirname(md), p)]
    cands += [os.path.join(ROOT, t, p) for t in tops]
    cands += [os.path.join(ROOT, t, sub, p) for t in ("sandbox",) for sub in ("figure", "harness")]
    return any(os.path.exists(c) for c in cands)


def main():
    bad, seen = [], 0
    for md in sorted(markdown_files()):
        for n, target in links(md):
            if re.match(r"^[a-z]+:", target):
                continue
            seen += 1
            where = "%s:%d" % (os.path.relpath(md, ROOT), n)
            file_part, _, frag = target.partition("#")
            dest = md if not file_part else os.path.normpath(os.path.join(os.path.dirname(md), file_part))
            if not os.path.exists(dest):
                bad.append("%s: %s: no such file" % (where, target))
                continue
            if frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append("%s: %s: no heading with that anchor" % (where, target))
    named = 0
    for md in sorted(markdown_files()):
        for n, p in named_paths(md):
            named += 1
            if not exists_named(md, p):
                bad.append("%s:%d: names `%s`, which is no file of the project" % (os.path.relpath(md, ROOT), n, p))
    for b in bad:
        print("FAIL: " + b)
    print("layout.links: %d relative links and %d named source paths checked in the project's Markdown, %d broken"
          % (seen, named, len(bad)))
    return 1 if bad or seen == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
