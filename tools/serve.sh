#!/usr/bin/env bash
# Command 1 of the README: set up, build and start plotqd on 127.0.0.1:8080 with ./var/plotq.db.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh"
cd "$root"
# Out of the box the page and API must work for a newcomer on this machine: development mode serves
# loopback callers without tokens (X-Plotq-User names the user). Set PLOTQ_TOKENS for real callers.
if [ -z "${PLOTQ_TOKENS:-}" ]; then export PLOTQ_ENVIRONMENT=${PLOTQ_ENVIRONMENT:-development}; fi
exec "${PLOTQ_BUILD_DIR:-$root/build}/plotqd" "$@"
