#!/usr/bin/env bash
# Command 1 of the README: set up, build and start plotqd on 127.0.0.1:8080 with ./var/plotq.db.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh"
cd "$root"
exec "${PLOTQ_BUILD_DIR:-$root/build}/plotqd" "$@"
