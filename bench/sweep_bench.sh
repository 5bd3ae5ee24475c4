#!/bin/sh
# Catalogue sweep: wall time of tests/catalogue swept sandboxed (in process, warm starts) vs bare
# (plain /usr/bin/python3 per file and theme), in the same command, ROUNDS times alternating, with
# `plotq sweep diff` after each pair (it must find no changed outcome). See bench/README.md.
#
#   bench/sweep_bench.sh BUILD_DIR [ROUNDS=3] [THEMES=light,dark]
#
# Prints one line per sweep (whole command wall, the sweep's own elapsed_s from the store, rows)
# and then the medians and the ratio sandbox / bare.
set -eu
build=${1:?usage: sweep_bench.sh BUILD_DIR [ROUNDS] [THEMES]}
rounds=${2:-3}
themes=${3:-light,dark}
here=$(cd "$(dirname "$0")/.." && pwd)
plotq="$build/plotq"
cat="$here/tests/catalogue"
work=$(mktemp -d /tmp/plotq-sweep-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/plotq.db"
out="$work/times"
: >"$out"

now() { date +%s.%N; }

sweep() {  # mode label
  t0=$(now)
  "$plotq" --db "$db" sweep run "$cat" --mode "$1" --themes "$themes" --label "$2" >/dev/null 2>"$work/$2.err" || {
    echo "sweep $2 failed:" >&2
    cat "$work/$2.err" >&2
    exit 1
  }
  t1=$(now)
  "$plotq" --db "$db" sweep report "$2" --json >"$work/$2.json"
  /usr/bin/python3 - "$1" "$2" "$t0" "$t1" "$work/$2.json" >>"$out" <<'EOF'
import json, sys
mode, label, t0, t1, path = sys.argv[1:]
r = json.load(open(path))
print(mode, label, "%.2f" % (float(t1) - float(t0)), "%.2f" % r["totals"]["elapsed_s"],
      r["rows"], r["outcomes"]["render"], r["outcomes"]["fail"])
EOF
  tail -n 1 "$out"
}

echo "mode label command_wall_s sweep_elapsed_s rows render fail   (load: $(cut -d' ' -f1-3 /proc/loadavg))"
i=1
while [ "$i" -le "$rounds" ]; do
  # Alternate which mode goes first so that caches and load drift favour neither.
  if [ $((i % 2)) -eq 1 ]; then
    sweep bare "bare-$i"; sweep sandbox "sandbox-$i"
  else
    sweep sandbox "sandbox-$i"; sweep bare "bare-$i"
  fi
  if "$plotq" --db "$db" sweep diff "bare-$i" "sandbox-$i" >"$work/diff-$i.txt"; then
    echo "diff bare-$i sandbox-$i: $(tail -n 1 "$work/diff-$i.txt")"
  else
    echo "diff bare-$i sandbox-$i: CHANGED OUTCOMES" >&2
    cat "$work/diff-$i.txt" >&2
    exit 1
  fi
  i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$out" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def med(mode, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == mode)
for col, name in ((2, "command wall"), (3, "sweep elapsed")):
    b, s = med("bare", col), med("sandbox", col)
    print("%-13s median: bare %.2f s, sandbox %.2f s, ratio sandbox/bare %.2f" % (name, b, s, s / b))
EOF
