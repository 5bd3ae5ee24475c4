#!/usr/bin/env bash
# Runs one fuzz target for a fixed time and says what it did (ctest fuzz.run.<target>, tools/fuzz.sh).
#   run_one.sh TARGET SEEDS WORK CRASHES SECONDS
# TARGET is a libFuzzer binary or an atheris script (*.py). SEEDS (the committed corpus) is read,
# never written; new inputs go to WORK, which is wiped first unless PLOTQ_FUZZ_KEEP_WORK=1 (long
# runs keep theirs). A crash, leak, timeout or out-of-memory input is kept in CRASHES and the run
# fails, with the input printed in base64 so a CI log is enough to reproduce it.
#   PLOTQ_FUZZ_MAX_LEN   longest input tried (default 8192; longer seeds are replayed whole by fuzz.replay)
#   PLOTQ_FUZZ_PYTHON    interpreter with atheris (default: runtime/tools/bin/python)
set -uo pipefail
target=$1 seeds=$2 work=$3 crashes=$4 seconds=$5
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=$(basename "$target" .py); name=${name#fuzz_}; name=${name%_fuzz}  # fuzz_table, validator_fuzz.py
[ "${PLOTQ_FUZZ_KEEP_WORK:-0}" = 1 ] || rm -rf "$work"
mkdir -p "$work" "$crashes"
log=$(mktemp); trap 'rm -f "$log"' EXIT

cmd=("$target")
if [[ $target == *.py ]]; then
  py=${PLOTQ_FUZZ_PYTHON:-$root/runtime/tools/bin/python}
  if ! "$py" -c 'import atheris' 2>/dev/null; then
    echo "PLOTQ-SKIP: $py has no atheris (tools/runtime.sh installs runtime/tools.lock)"
    exit 77
  fi
  cmd=("$py" -B "$target")
fi
args=(-max_total_time="$seconds" -max_len="${PLOTQ_FUZZ_MAX_LEN:-8192}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$crashes/")
before=$(ls "$crashes" | wc -l)
# Abort on the first report, so libFuzzer keeps the input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
"${cmd[@]}" "${args[@]}" ${PLOTQ_FUZZ_ARGS:-} "$work" "$seeds" >"$log" 2>&1
rc=$?
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END{print s+0}')
if [ "$execs" = 0 ]; then  # atheris prints only the running count
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
fi
after=$(ls "$crashes" | wc -l)
echo "fuzz: $name: ${execs:-0} executions in ${seconds} s, corpus $(ls "$work" | wc -l) new + $(ls "$seeds" | wc -l) seeds, $((after - before)) new findings, exit $rc"
if [ "$rc" != 0 ] || [ "$after" -gt "$before" ]; then
  tail -60 "$log"
  for f in $(ls -t "$crashes" | head -$((after - before))); do
    echo "finding: $crashes/$f (base64 below; once fixed, copy it to fuzz/corpus/$name/)"
    base64 -w 0 "$crashes/$f" | head -c 20000; echo
  done
  exit 1
fi
