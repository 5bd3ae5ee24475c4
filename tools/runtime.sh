#!/usr/bin/env bash
# Builds the sandbox runtime (runtime/README.md) from runtime/requirements.lock, or does nothing
# when the venv already holds that lock. Wheels only, every file checked against the lock's hashes.
#   tools/runtime.sh           build or check runtime/venv
#   PLOTQ_RUNTIME_DIR=DIR      build the venv elsewhere (it must be visible inside jobs: not under
#                              /tmp or a hidden path)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${PLOTQ_RUNTIME_DIR:-$root/runtime/venv}
# Jobs see neither /tmp nor the hidden paths: a checkout there keeps its venv under /var/lib/plotq
# (one per checkout path) and runtime/venv links to it; the sandbox execs the link's target.
case "$root" in
  /tmp/*|/var/tmp/*|/dev/shm/*|/run/*|/root/*|/home/*|/mnt/*|/media/*|/srv/*)
    if [ -z "${PLOTQ_RUNTIME_DIR:-}" ]; then
      real=/var/lib/plotq/runtime/$(printf '%s' "$root" | sha256sum | cut -c1-12)
      mkdir -p "$(dirname "$real")" "$root/runtime"
      if [ ! -L "$venv" ]; then rm -rf "$venv"; ln -s "$real" "$venv"; fi
      venv=$real
    fi ;;
esac
tools=$root/runtime/tools
lock=$root/runtime/requirements.lock
base=/usr/bin/python3.11
want=$(sha256sum "$lock" | cut -d' ' -f1)

# uv and atheris (fuzz/), pinned and hashed, in a venv of their own (never in the runtime); checked
# first, so a changed tools.lock is installed even when the runtime is current.
tools_want=$(sha256sum "$root/runtime/tools.lock" | cut -d' ' -f1)
if [ ! -x "$tools/bin/uv" ] || [ "$(cat "$tools/.plotq-lock-sha256" 2>/dev/null)" != "$tools_want" ]; then
  rm -rf "$tools"
  "$base" -m venv "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps \
    --only-binary :all: -r "$root/runtime/tools.lock"
  echo "$tools_want" >"$tools/.plotq-lock-sha256"
fi

if [ -f "$venv/.plotq-lock-sha256" ] && [ "$(cat "$venv/.plotq-lock-sha256")" = "$want" ] \
   && [ -x "$venv/bin/python" ]; then
  exit 0
fi

echo "runtime: installing runtime/requirements.lock into $venv"
rm -f "$venv/.plotq-lock-sha256"
if [ ! -x "$venv/bin/python" ]; then
  "$tools/bin/uv" venv -q --python "$base" "$venv"
fi
# sync: exactly the lock (anything else in the venv is removed), hashes required, no builds.
"$tools/bin/uv" pip sync -q --require-hashes --no-build --python "$venv/bin/python" "$lock"
"$venv/bin/python" -I -B "$root/runtime/manifest.py" "$lock" >"$venv/plotq-runtime.json"
echo "$want" >"$venv/.plotq-lock-sha256"
