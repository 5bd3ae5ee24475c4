#!/usr/bin/env bash
# Long fuzz runs on demand (fuzz/README.md): every target, or the ones named, for SECONDS each
# (default 3600), two at a time. Each target's corpus grows across runs in var/fuzz/corpus/<target>/
# (the committed seeds are read, never written); a run that stops on a finding is started again
# until its time is up, so every finding is kept in var/fuzz/crashes/<target>/.
#   tools/fuzz.sh [SECONDS] [TARGET...]     e.g. tools/fuzz.sh 7200 http_request wire
#   PLOTQ_FUZZ_JOBS=N                       targets at once (default: the number of cores)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
san=${PLOTQ_SAN_DIR:-$root/build-san}
seconds=${1:-3600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(http_request wire table resume_id data_records render_records validator)
# Only the fuzzers named are built (the validator is Python: nothing to build), under the tree's lock.
bins=()
for t in "${targets[@]}"; do [ "$t" = validator ] || bins+=("fuzz_$t"); done
if [ ${#bins[@]} -gt 0 ]; then
  flock "$san.lock" "$root/tools/san.sh" build "${bins[@]}"
fi
out=$root/var/fuzz
mkdir -p "$out"
summary=$out/summary-$(date -u +%Y%m%dT%H%M%SZ).txt

one() {
  local t=$1 end=$(( $(date +%s) + seconds )) bin left
  if [ "$t" = validator ]; then bin=$root/fuzz/validator_fuzz.py; else bin=$san/fuzz/fuzz_$t; fi
  while left=$(( end - $(date +%s) )); [ "$left" -gt 5 ]; do
    res=$(PLOTQ_FUZZ_KEEP_WORK=1 bash "$root/fuzz/run_one.sh" "$bin" "$root/fuzz/corpus/$t" "$out/corpus/$t" \
      "$out/crashes/$t" "$left" 2>&1 | grep -E '^(fuzz|finding|PLOTQ-SKIP):' || true)
    echo "$res" | tee -a "$summary"
    case $res in *PLOTQ-SKIP*|"") break ;; esac
  done
}
export -f one; export root san out seconds summary
printf '%s\n' "${targets[@]}" | xargs -P "${PLOTQ_FUZZ_JOBS:-$(nproc)}" -I{} bash -c 'one {}'
echo "fuzz: summary in $summary; findings under $out/crashes/"
