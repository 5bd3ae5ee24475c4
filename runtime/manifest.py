"""Writes the runtime's identity (runtime/README.md) as JSON on stdout: run by tools/runtime.sh with
the venv's own interpreter once the lock is installed.

  {"id": "<first 12 hex of the lock's sha256>", "lock_sha256": "...", "python": "3.11.2",
   "packages": {"numpy": "2.4.6", ...}}

Every package of the lock must be installed at its pinned version; anything else fails the setup
(exit 1), so a venv whose manifest exists holds exactly its lock."""

import hashlib
import importlib.metadata
import json
import platform
import re
import sys

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\;]+)")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def main(lock_path):
    with open(lock_path, "rb") as f:
        data = f.read()
    pins = {}
    for line in data.decode("utf-8").splitlines():
        match = PIN.match(line)
        if match:
            pins[canonical(match.group(1))] = match.group(2)
    installed = {canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    wrong = sorted(f"{name}=={want} (installed: {installed.get(name)})"
                   for name, want in pins.items() if installed.get(name) != want)
    if wrong:
        sys.stderr.write("runtime: the venv does not hold the lock: " + ", ".join(wrong) + "\n")
        return 1
    digest = hashlib.sha256(data).hexdigest()
    json.dump({"id": digest[:12], "lock_sha256": digest, "python": platform.python_version(),
               "packages": dict(sorted(pins.items()))}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
