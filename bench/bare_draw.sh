#!/usr/bin/env bash
# Installs what the bare baseline needs to draw plotly and bokeh files as they are written
# (runtime/bare-draw.in): the lock's packages into runtime/bare-draw/ (wheels only, hashes
# required; a re-run with an unchanged lock does nothing) and Debian's chromium-driver. Used by
# build/bench/render_bench, which then also times each figure file drawing its own PNG bare.
# Not part of setup: no test needs it, and jobs never see it (it is not in the runtime venv).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/runtime/bare-draw
lock=$root/runtime/bare-draw.lock
want=$(sha256sum "$lock" | cut -d' ' -f1)
if ! command -v chromedriver >/dev/null || ! command -v chromium >/dev/null; then
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver; }
  install || { apt-get update -q && install; }
fi
if [ "$(cat "$dir/.plotq-lock-sha256" 2>/dev/null)" != "$want" ]; then
  rm -rf "$dir"
  "$root/runtime/tools/bin/uv" pip install -q --require-hashes --no-deps --no-build \
    --python "$root/runtime/venv/bin/python" --target "$dir" -r "$lock"
  echo "$want" >"$dir/.plotq-lock-sha256"
fi
echo "$dir"
