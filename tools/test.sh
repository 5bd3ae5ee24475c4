#!/usr/bin/env bash
# Command 2 of the README: set up, build and run every test (unit, integration, harness, escape
# suite, catalogue sweep, browser). Exits non-zero when any test fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLOTQ_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
cd "$build"
ctest --output-on-failure --timeout 600 -j "${PLOTQ_TEST_JOBS:-2}" "$@"
