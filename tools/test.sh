#!/usr/bin/env bash
# Command 2 of the README: set up, build and run every test (unit, integration, harness, escape
# suite, catalogue sweep, browser), then the second build tree: the C++ suites under ASan+UBSan and
# every fuzz target for PLOTQ_FUZZ_SECONDS (tools/san.sh, fuzz/README.md). Exits non-zero when any
# test fails.
#   tools/test.sh [CTEST ARGS]   arguments (e.g. -R '^store\.') go to the main tree's ctest, and
#                                then the sanitizer tree is left out
#   PLOTQ_SAN=0                  leaves the sanitizer tree out
#   PLOTQ_TEST_PG=CONNINFO       the PostgreSQL the tests use (e.g. one from `tools/pg.sh start`);
#                                unset: a throwaway one for the whole run (tools/pg.sh run)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLOTQ_BUILD_DIR:-$root/build}
if [ "${_PLOTQ_TEST_SET_UP:-0}" != 1 ]; then
  "$root/tools/setup.sh"
  # One server for both trees: each PostgreSQL test makes its own schema or database in it. Without
  # the server binaries those tests report themselves skipped (pg.sh says why).
  if [ -z "${PLOTQ_TEST_PG:-}" ] && "$root/tools/pg.sh" bindir >/dev/null; then
    _PLOTQ_TEST_SET_UP=1 exec "$root/tools/pg.sh" run -- "$root/tools/test.sh" "$@"
  fi
fi
cd "$build"
ctest --output-on-failure --timeout 600 -j "${PLOTQ_TEST_JOBS:-2}" "$@"
# The sanitizer tree builds only now, never beside the tests: a build in the background, even
# SCHED_IDLE and nice 19, sits in this session's scheduler autogroup, which competes as a whole
# with the jobs' own niced autogroups and starved them (a clean-clone run, 2026-12-07: 1 s
# sandbox jobs that got 0.03 s of CPU).
if [ $# -eq 0 ] && [ "${PLOTQ_SAN:-1}" != 0 ]; then
  "$root/tools/san.sh"
fi
