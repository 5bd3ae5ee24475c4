#!/bin/sh
# Chromium launcher used as playwright-core's executablePath. When PLOTQ_FIGURE_UID is set (the
# renderer runs as root), Chromium runs as that uid/gid with no capabilities, so it can use its own
# sandbox (user namespaces + seccomp-bpf) instead of --no-sandbox as root. Playwright has just made
# the --user-data-dir (empty, root-owned, inside our private dir): hand it to that uid first.
set -eu
real=${PLOTQ_FIGURE_CHROMIUM:-/usr/bin/chromium}
if [ -z "${PLOTQ_FIGURE_UID:-}" ]; then
  exec "$real" "$@"
fi
gid=${PLOTQ_FIGURE_GID:-$PLOTQ_FIGURE_UID}
for a in "$@"; do
  case "$a" in
    --user-data-dir=*) chown -h -- "$PLOTQ_FIGURE_UID:$gid" "${a#--user-data-dir=}" ;;
  esac
done
exec setpriv --reuid="$PLOTQ_FIGURE_UID" --regid="$gid" --clear-groups \
  --inh-caps=-all --bounding-set=-all -- "$real" "$@"
