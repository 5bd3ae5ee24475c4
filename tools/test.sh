#!/usr/bin/env bash
# Command 2 of the README: set up, build and run every test (unit, integration, harness, escape
# suite, catalogue sweep, browser), then the second build tree: the C++ suites under ASan+UBSan and
# every fuzz target for PLOTQ_FUZZ_SECONDS (tools/san.sh, fuzz/README.md). Exits non-zero when any
# test fails.
#   tools/test.sh [CTEST ARGS]   arguments (e.g. -R '^store\.') go to the main tree's ctest, and
#                                then the sanitizer tree is left out
#   PLOTQ_SAN=0                  leaves the sanitizer tree out
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLOTQ_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
cd "$build"
ctest --output-on-failure --timeout 600 -j "${PLOTQ_TEST_JOBS:-2}" "$@"
if [ $# -eq 0 ] && [ "${PLOTQ_SAN:-1}" != 0 ]; then
  "$root/tools/san.sh"
fi
