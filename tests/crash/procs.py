"""The processes of a plotqd as /proc shows them: its tree, what each part is, and whether any of
a snapshot is still alive (a pid counts as the same process only with the same start time, so a
reused pid is never mistaken for a survivor; a zombie has already died)."""
import os
import time


def _stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    r = st.rfind(")")
    fields = st[r + 2:].split()
    return {"pid": pid, "comm": st[st.find("(") + 1:r], "state": fields[0], "ppid": int(fields[1]),
            "start": int(fields[19]), "cpu": int(fields[11]) + int(fields[12])}


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def all_procs():
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                p = _stat(int(d))
            except (OSError, IndexError, ValueError):
                continue
            out[p["pid"]] = p
    return out


def part_of(p):
    """zygote | node | chromium | job | helper | keeper | other, from the command line."""
    cmd = p.get("cmd", "")
    if "zygote.py" in cmd or "rzygote.R" in cmd:
        return "zygote"  # a job forked from it shows the zygote's command line too (deeper)
    if p["comm"] == "node" or "renderer.mjs" in cmd:
        return "node"  # before chromium: its arguments name the Chromium binary
    if "chrom" in p["comm"]:
        return "chromium"
    if "harness" in cmd or p["comm"].startswith("python"):
        return "job"
    if p["comm"] == "plotq-cold":
        return "helper"  # a slot's cold helper (and the C process of a cold job)
    if p["comm"].startswith("plotq"):
        return "keeper"  # a fork of plotqd: a zygote's keeper
    return "other"


def tree(root):
    """Every live descendant of root, each with its cmd, part and depth."""
    procs = all_procs()
    kids = {}
    for p in procs.values():
        kids.setdefault(p["ppid"], []).append(p)
    out, todo = [], [(root, 0)]
    while todo:
        pid, depth = todo.pop()
        for c in kids.get(pid, []):
            c["cmd"] = _cmdline(c["pid"])
            c["depth"] = depth + 1
            c["part"] = part_of(c)
            out.append(c)
            todo.append((c["pid"], depth + 1))
    return out


def alive(snapshot):
    """The processes of snapshot that still run (same pid and start time, not a zombie)."""
    left = []
    for p in snapshot:
        try:
            now = _stat(p["pid"])
        except (OSError, IndexError, ValueError):
            continue
        if now["start"] == p["start"] and now["state"] not in ("Z", "X"):
            left.append(p)
    return left


def wait_gone(snapshot, timeout):
    """[] when every process of snapshot ended within timeout, else the survivors."""
    end = time.monotonic() + timeout
    while True:
        left = alive(snapshot)
        if not left or time.monotonic() >= end:
            return left
        time.sleep(0.1)


def cgroup_dirs(pid):
    """The cgroup directories plotqd made for itself (sandbox/cgroup.cpp: plotq-<pid>)."""
    name = "plotq-%d" % pid
    found = []
    for base, dirs, _ in os.walk("/sys/fs/cgroup"):
        if name in dirs:
            found.append(os.path.join(base, name))
        # plotq's groups sit near the top; deeper levels are other groups' own children.
        if base.count("/") >= 6:
            dirs[:] = []
    return found
