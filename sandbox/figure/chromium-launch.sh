#!/bin/sh
# Chromium launcher used as playwright-core's executablePath. When PLOTQ_FIGURE_UID is set (the
# renderer runs as root), Chromium runs as that uid/gid with no capabilities, so it can use its own
# sandbox (user namespaces + seccomp-bpf) instead of --no-sandbox as root. Playwright has just made
# the --user-data-dir (empty, root-owned, inside our private dir): hand it to that uid first.
# The profile starts with network prediction off ("never"): otherwise Chromium preconnects (a TCP
# connection, no bytes) to an iframe's origin even when the page's policy or the route refuses the
# frame itself (seen with a local listener, tests/figure/snippet.test.mjs).
set -eu
real=${PLOTQ_FIGURE_CHROMIUM:-/usr/bin/chromium}
uid=${PLOTQ_FIGURE_UID:-}
gid=${PLOTQ_FIGURE_GID:-$uid}
for a in "$@"; do
  case "$a" in
    --user-data-dir=*)
      dir=${a#--user-data-dir=}
      mkdir -p -- "$dir/Default"
      printf '%s\n' '{"net":{"network_prediction_options":2}}' > "$dir/Default/Preferences"
      if [ -n "$uid" ]; then chown -h -- "$uid:$gid" "$dir" "$dir/Default" "$dir/Default/Preferences"; fi
      ;;
  esac
done
if [ -z "$uid" ]; then
  exec "$real" "$@"
fi
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \
  --inh-caps=-all --bounding-set=-all -- "$real" "$@"
