#!/usr/bin/env bash
# Re-resolves runtime/requirements.in into runtime/requirements.lock, runtime/tools.in into
# runtime/tools.lock and runtime/bare-draw.in into runtime/bare-draw.lock (every package pinned,
# with its sha256 hashes) for Debian 12's CPython 3.11 on x86_64. Run by a developer when a pin changes;
# setup never resolves, it installs the lock as it is. Needs uv (tools/setup.sh puts one in
# runtime/tools/ from runtime/tools.lock).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
uv=${UV:-$root/runtime/tools/bin/uv}
# lock IN LOCK HEADER [ARGS...]: runtime/IN -> runtime/LOCK, HEADER the command the lock names.
lock() {
  local in=$1 out=$2 header=$3
  shift 3
  "$uv" pip compile "$root/runtime/$in" "$@" --python-version 3.11 \
    --python-platform x86_64-unknown-linux-gnu --only-binary :all: --generate-hashes \
    --custom-compile-command "$header" -o "$root/runtime/$out"
}
lock requirements.in requirements.lock tools/lock-runtime.sh
lock tools.in tools.lock "tools/lock-runtime.sh (tools.lock: uv pip compile runtime/tools.in)"
# Resolved against the runtime's lock: a package both hold is the same version in both.
lock bare-draw.in bare-draw.lock "tools/lock-runtime.sh (bare-draw.lock: uv pip compile runtime/bare-draw.in)" \
  -c "$root/runtime/requirements.lock"
