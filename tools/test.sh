#!/usr/bin/env bash
# Command 2 of the README: set up, build and run every test (unit, integration, harness, escape
# suite, catalogue sweep, browser), then the second build tree: the C++ suites under ASan+UBSan and
# every fuzz target for PLOTQ_FUZZ_SECONDS (tools/san.sh, fuzz/README.md; that tree builds while the
# main tree's tests run, at idle priority). Exits non-zero when any test fails.
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
# The sanitizer tree builds while the main tree's tests run, at idle priority (SCHED_IDLE, nice 19):
# most of those tests wait on browsers, sockets and children, and the compiler takes only the CPU
# they leave, so the tests keep the machine as if it were alone. Its log: build-san.log.
san=0; san_build=
if [ $# -eq 0 ] && [ "${PLOTQ_SAN:-1}" != 0 ]; then
  san=1
  chrt --idle 0 nice -n 19 "$root/tools/san.sh" build >"$build/build-san.log" 2>&1 &
  san_build=$!
fi
status=0
ctest --output-on-failure --timeout 600 -j "${PLOTQ_TEST_JOBS:-2}" "$@" || status=$?
if [ "$san" = 1 ]; then
  if ! wait "$san_build"; then
    echo "test.sh: the sanitizer tree's build failed:" >&2
    tail -n 60 "$build/build-san.log" >&2
    exit 1
  fi
  [ "$status" = 0 ] || exit "$status"
  "$root/tools/san.sh"
fi
exit "$status"
