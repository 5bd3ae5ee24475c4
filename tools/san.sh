#!/usr/bin/env bash
# The second build tree (fuzz/README.md): clang with ASan+UBSan and libFuzzer's coverage, in
# ./build-san. Builds the C++ test suites that fit the CI budget plus the fuzz targets, then runs
# them under the sanitizers, and every fuzz target for PLOTQ_FUZZ_SECONDS. Idempotent; called by
# tools/test.sh after the main tree's tests (PLOTQ_SAN=0 skips it there), so CI runs it.
#   tools/san.sh              configure (once), build, run the sanitizer suites and the fuzz runs
#   tools/san.sh build        configure and build only
#   tools/san.sh build T...   configure and build only the targets named (tools/fuzz.sh: its fuzzers)
#   PLOTQ_SAN_DIR=DIR         the tree (default ./build-san)
#   PLOTQ_FUZZ_SECONDS=N      seconds per fuzz target (default 15)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
san=${PLOTQ_SAN_DIR:-$root/build-san}
seconds=${PLOTQ_FUZZ_SECONDS:-15}

# The C++ suites run under the sanitizers (the test executables, with what they spawn: plotqd and
# plotq are this tree's). What is left out and why: fuzz/README.md.
suites=(common_tests store_tests store_cli_tests table_tests queue_tests runs_tests server_tests server_plotqd_tests
  turns_tests run_data_tests render_route_tests sandbox_tests metrics_format_tests metrics_queue_tests
  metrics_plotqd_tests retention_store_tests retention_tests storage_tests contract_tests submit_tests)
suite_re='^(common|store|table|queue|runs|server|turns|run_data|render_route|sandbox|metrics|retention|storage|contract|submit)\.'
# plotqd on PostgreSQL too (store/exec.cpp's workers and the libpq driver under ASan; the store's
# own cases run on both engines above): the families that cross most of its store calls - the
# idempotency claims, the jobs' write transactions, turns, resumes and the background prune.
suite_re="$suite_re|^pg\.(run_data|metrics|retention)\."
# Timing tests whose bound ASan's slower fork and start-up path runs past (not memory findings).
left_out='^turns\.the turn deadline kills a running job'
fuzzers=(fuzz_http_request fuzz_wire fuzz_table fuzz_resume_id fuzz_data_records fuzz_render_records fuzz_db_target)

if ! command -v clang++-14 >/dev/null || [ ! -f /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  if [ "${PLOTQ_SKIP_INSTALL:-0}" = 1 ]; then echo "san: clang-14 / libclang-rt-14-dev missing" >&2; exit 1; fi
  echo "san: installing clang-14 libclang-rt-14-dev"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev >/dev/null
fi

# Only C++ is instrumented. The C parts are Python extensions loaded into the runtime's own
# uninstrumented Python, and stay with gcc: clang elides tests/sandbox/hostile/membomb.c's
# malloc-and-touch loop, which then never meets RLIMIT_AS.
# Boost 1.74's Asio does not detect clang's coroutines by itself (platform facts). -O1 and line
# tables only: the sanitizers' reports name lines, and the tree builds in about the main one's time.
flags="-DBOOST_ASIO_HAS_CO_AWAIT=1 -DBOOST_ASIO_HAS_STD_COROUTINE=1 -fno-omit-frame-pointer \
-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined"
if [ ! -f "$san/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DPLOTQ_FUZZ=ON \
    -DPLOTQ_FUZZ_SECONDS="$seconds" >/dev/null
else
  cmake "$san" -DPLOTQ_FUZZ_SECONDS="$seconds" >/dev/null
fi
if [ "${1:-}" = build ] && [ $# -gt 1 ]; then
  shift
  exec cmake --build "$san" -j "$(nproc 2>/dev/null || echo 2)" --target "$@"
fi
# plotqd and plotq: the integration suites spawn them; libplotq_confine.so and plotq_exec_arm.so
# come with plotq_sandbox.
cmake --build "$san" -j "$(nproc 2>/dev/null || echo 2)" --target plotqd plotq "${suites[@]}" "${fuzzers[@]}"
[ "${1:-}" = build ] && exit 0

# Any report fails the test that caused it: UBSan halts, ASan aborts; leaks are reported at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$san"
ctest --output-on-failure --timeout 600 -j "${PLOTQ_TEST_JOBS:-2}" -R "$suite_re|^fuzz\." -E "$left_out" "${@}"
