#!/bin/sh
# Issue 14's acceptance replay: every Python file of the anyplot catalogue, light theme, swept bare
# (the runtime's interpreter, one fresh process a file, no sandbox: the control) and sandboxed, then
# the counts per library and outcome in both modes and every file whose outcome differs. With
# -L javascript, issue 18's: the catalogue's JavaScript snippets, bare (the same page without its
# rules) and sandboxed (the locked page).
#
#   bench/catalogue_replay.sh [-n N] [-j JOBS] [-b BUILD_DIR] [-g ANYPLOT_GIT_DIR] [-w WORK_DIR]
#                             [-t TIMEOUT_S] [-l LIBRARIES] [-m bare,sandbox] [-L python|javascript]
#
#   -n N   N files per library (0, the default: all of them, about an hour on 2 cores). The N are
#          spread evenly over the library's files in path order, so a subset is the same each time.
#   -j     plotq sweep --jobs for both modes (default 2: what an operator would use on 2 cores)
#   -b     build dir with plotq (default: build/ of this checkout)
#   -g     the anyplot repository as a bare git dir (default /work/.mirror/MarkusNeusinger+anyplot/repo,
#          what the search tool's `fetch github:MarkusNeusinger/anyplot` makes); its plots/ tree is
#          exported with `git archive HEAD plots`, never committed here
#   -w     work dir (default: a fresh /tmp/plotq-replay-XXXXXX, kept: the tree, the database, logs)
#   -t     per-file timeout (default 60, the sweep's)
#   -l     only these libraries (file stems: matplotlib,seaborn,plotnine,altair,pygal,letsplot,plotly,bokeh)
#   -m     which modes to run (default bare,sandbox; the comparison needs both)
#   -L     the catalogue's language (default python; javascript: chartjs, d3, echarts, highcharts, muix;
#          r: ggplot2.R, bare = `Rscript` one fresh process a file (issue 35); julia: makie.jl, every
#          file runtime_unavailable in both modes: no Julia runtime exists here)
#   -P     paired: library by library, bare then sandboxed, cheapest library first (a sweep of each
#          mode per library, labelled MODE-STAMP-LIBRARY). A sitting cut short then still holds
#          whole pairs: each library's outcomes and its wall-time ratio were taken under the same
#          conditions. The tables add up every library of the sitting.
#   -R     run nothing: print the tables again from WORK_DIR (-w): per mode, the newest sweep of
#          each library (-P sittings) or else the newest sweep of the catalogue
#
# PLOTQ_PYTHON defaults to this checkout's runtime/venv/bin/python for both modes (bare runs that
# interpreter; the sandbox runs it too). A sweep stopped by a host failure (exit 1) is resumed once.
# Output: the two sweeps' labels and wall times, a table per mode (library x reason class, renders
# split into canvas exact/off), the per-library render totals side by side, and the differing files
# with both outcomes (the sandbox's detail says which rule, for a refusal).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
per_library=0
jobs=2
build="$here/build"
gitdir=/work/.mirror/MarkusNeusinger+anyplot/repo
work=""
timeout=60
libraries=""
modes=bare,sandbox
language=python
report_only=0
paired=0
while getopts n:j:b:g:w:t:l:m:L:RP opt; do
  case $opt in
    n) per_library=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    g) gitdir=$OPTARG ;;
    w) work=$OPTARG ;;
    t) timeout=$OPTARG ;;
    l) libraries=$OPTARG ;;
    m) modes=$OPTARG ;;
    L) language=$OPTARG ;;
    R) report_only=1 ;;
    P) paired=1 ;;
    *) sed -n '2,35p' "$0" >&2; exit 2 ;;
  esac
done
plotq="$build/plotq"
[ -x "$plotq" ] || { echo "no plotq at $plotq (build first)" >&2; exit 2; }
git --git-dir="$gitdir" rev-parse --verify -q HEAD >/dev/null ||
  { echo "no anyplot git dir at $gitdir (fetch github:MarkusNeusinger/anyplot)" >&2; exit 2; }
export PLOTQ_PYTHON="${PLOTQ_PYTHON:-$here/runtime/venv/bin/python}"
if [ "$report_only" -eq 1 ]; then
  [ -n "$work" ] && [ -f "$work/replay.db" ] || { echo "-R needs -w WORK_DIR with a replay.db" >&2; exit 2; }
fi
[ -n "$work" ] || work=$(mktemp -d /tmp/plotq-replay-XXXXXX)
mkdir -p "$work"
db="$work/replay.db"
commit=$(git --git-dir="$gitdir" rev-parse --short HEAD)

labels=""
if [ "$report_only" -eq 1 ]; then
  # Per mode: with -P sittings, the newest sweep of each library (a library swept again, e.g.
  # after a fix, replaces its older pair); else the newest sweep of the whole catalogue.
  for mode in $(echo "$modes" | tr ',' ' '); do
    paired_labels=$(sqlite3 "$db" "SELECT group_concat(label) FROM sweeps s WHERE label GLOB '$mode-*-*-*'
      AND libraries IS NOT NULL AND id = (SELECT max(id) FROM sweeps t WHERE t.libraries = s.libraries
      AND t.label GLOB '$mode-*-*-*')")
    [ -n "$paired_labels" ] ||
      paired_labels=$(sqlite3 "$db" "SELECT label FROM sweeps WHERE label GLOB '$mode-*' ORDER BY created_at DESC, id DESC LIMIT 1")
    labels="$labels $mode:$paired_labels"
  done
else
# The catalogue's plots/ tree, and the subset to sweep (copies: the sweep does not follow links).
rm -rf "$work/anyplot" "$work/root"
mkdir -p "$work/anyplot" "$work/root"
git --git-dir="$gitdir" archive HEAD plots | tar -x -C "$work/anyplot"
case $language in python|javascript|r|julia) ;; *) echo "-L must be python, javascript, r or julia" >&2; exit 2 ;; esac
/usr/bin/python3 - "$work/anyplot" "$work/root" "$per_library" "$libraries" "$language" <<'EOF'
import glob, os, shutil, sys
src, dst, n, libs = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(filter(None, sys.argv[4].split(",")))
by_lib = {}
for path in sorted(glob.glob(os.path.join(src, "plots/*/implementations", sys.argv[5], "*"))):
    lib = os.path.splitext(os.path.basename(path))[0]
    if not libs or lib in libs:
        by_lib.setdefault(lib, []).append(path)
total = 0
for lib, paths in sorted(by_lib.items()):
    pick = paths if n <= 0 or n >= len(paths) else [paths[i * len(paths) // n] for i in range(n)]
    for path in pick:
        rel = os.path.relpath(path, src)
        os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
        shutil.copyfile(path, os.path.join(dst, rel))
        data = os.path.join(os.path.dirname(path), "data.csv")  # the sweep hands it to the file
        if os.path.isfile(data):
            shutil.copyfile(data, os.path.join(dst, os.path.dirname(rel), "data.csv"))
    total += len(pick)
    print("  %-10s %4d of %4d files" % (lib, len(pick), len(paths)))
print("  %-10s %4d files" % ("total", total))
EOF

stamp=$(date -u +%Y%m%d-%H%M%S)
echo "anyplot $commit, $work/root, $language, light theme, --jobs $jobs, timeout $timeout s, PLOTQ_PYTHON=$PLOTQ_PYTHON"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

sweep() {  # mode label [library]
  t0=$(date +%s)
  rc=0
  "$plotq" --db "$db" sweep run "$work/root" --language "$language" --mode "$1" --themes light --jobs "$jobs" \
    --timeout "$timeout" --label "$2" ${3:+--library "$3"} >"$work/$2.log" 2>&1 || rc=$?
  if [ "$rc" -eq 1 ]; then
    echo "  $2 stopped by a host failure (see $work/$2.log); resuming once" >&2
    rc=0
    "$plotq" --db "$db" sweep run "$work/root" --resume "$2" --jobs "$jobs" >>"$work/$2.log" 2>&1 || rc=$?
  fi
  t1=$(date +%s)
  echo "  $1: label $2, exit $rc, $((t1 - t0)) s, load after $(cut -d' ' -f1 /proc/loadavg)"
  printf '%s\t%s\t%s\t%s\t%s\n' "$2" "$1" "${3:-all}" "$((t1 - t0))" "$rc" >>"$work/times.tsv"
  [ "$rc" -eq 0 ] || tail -n 20 "$work/$2.log" >&2
}

if [ "$paired" -eq 1 ]; then
  # Cheapest first (bare wall per file on a quiet machine, bench/README.md): a sitting cut short
  # loses the dearest pairs, not several cheap ones.
  case $language in
    python) order="plotly pygal matplotlib plotnine seaborn altair bokeh letsplot" ;;
    r) order="ggplot2" ;;
    julia) order="makie" ;;
    *) order="chartjs d3 highcharts echarts muix" ;;
  esac
  for lib in $order; do
    [ -n "$(find "$work/root" -name "$lib.*" -print -quit)" ] || continue
    for mode in $(echo "$modes" | tr ',' ' '); do
      sweep "$mode" "$mode-$stamp-$lib" "$lib"
    done
  done
  for mode in $(echo "$modes" | tr ',' ' '); do
    labels="$labels $mode:$(sqlite3 "$db" "SELECT group_concat(label) FROM sweeps WHERE label GLOB '$mode-$stamp-*'")"
  done
  awk -F'\t' -v s="$stamp" 'index($1, s) { t[$2] += $4; n[$2]++ }
    END { for (m in t) printf "  %s: %d sweeps, %d s in all\n", m, n[m], t[m];
          if (t["bare"] > 0 && t["sandbox"] > 0) printf "  sandbox / bare wall: %.2f\n", t["sandbox"] / t["bare"] }' "$work/times.tsv"
else
  for mode in $(echo "$modes" | tr ',' ' '); do
    sweep "$mode" "$mode-$stamp"
    labels="$labels $mode:$mode-$stamp"
  done
fi
fi

# Counts and differences straight from the store (sweep_results; canvas is migration 0005's column).
/usr/bin/python3 - "$db" $labels <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
# Each argument is MODE:LABEL[,LABEL...]: one sitting of a mode (with -P, one sweep per library).
groups = {a.split(":", 1)[0]: a.split(":", 1)[1].split(",") for a in sys.argv[2:]}
labels = list(groups)
cols = {r[1] for r in db.execute("PRAGMA table_info(sweep_results)")}
canvas = "r.canvas" if "canvas" in cols else "NULL"

def rows(label):
    return db.execute(
        "SELECT r.path, r.library, r.outcome, r.reason_class, %s, r.width, r.height, r.detail "
        "FROM sweep_results r JOIN sweeps s ON s.id = r.sweep_id WHERE s.label = ? AND r.theme = 'light'"
        % canvas, (label,)).fetchall()

data = {mode: {r[0]: r for label in groups[mode] for r in rows(label)} for mode in labels}
for label in labels:
    states = [db.execute("SELECT state, files_done, files_total FROM v_sweeps WHERE label = ?", (l,)).fetchone()
              for l in groups[label]]
    print("\n== %s (%s): %s, %d of %d files" % (label, ", ".join(groups[label]),
          "/".join(sorted({s[0] for s in states})), sum(s[1] for s in states), sum(s[2] for s in states)))
    table = {}
    for path, lib, outcome, cls, cv, w, h, detail in data[label].values():
        # A render is split by its canvas (exact | off) where the store records it (migration 0005).
        key = ("render " + cv if cv else "render") if outcome == "render" else cls
        table.setdefault(lib, {}).setdefault(key, 0)
        table[lib][key] += 1
    keys = sorted({k for t in table.values() for k in t}, key=lambda k: (not k.startswith("render"), k))
    print("  %-11s %6s %s" % ("library", "files", " ".join("%s" % k for k in keys)))
    for lib in sorted(table):
        t = table[lib]
        print("  %-11s %6d %s" % (lib, sum(t.values()),
                                  " ".join("%*d" % (len(k), t.get(k, 0)) for k in keys)))
    print("  %-11s %6d %s" % ("all", sum(sum(t.values()) for t in table.values()),
                              " ".join("%*d" % (len(k), sum(t.get(k, 0) for t in table.values())) for k in keys)))

if len(labels) == 2:
    a, b = labels
    libs = sorted({r[1] for d in data.values() for r in d.values()})
    print("\n== renders per library: %s vs %s" % (a, b))
    for lib in libs + ["all"]:
        n = [sum(1 for r in data[x].values() if (lib == "all" or r[1] == lib) and r[2] == "render") for x in labels]
        files = sum(1 for r in data[a].values() if lib == "all" or r[1] == lib)
        print("  %-11s %5d files  %5d vs %5d renders (%.0f %% vs %.0f %%)" % (
            lib, files, n[0], n[1], 100.0 * n[0] / max(files, 1), 100.0 * n[1] / max(files, 1)))
    diff = []
    for path in sorted(set(data[a]) | set(data[b])):
        ra, rb = data[a].get(path), data[b].get(path)
        if not ra or not rb or (ra[2], ra[3]) != (rb[2], rb[3]):
            diff.append((path, ra, rb))
    print("\n== files whose outcome differs: %d" % len(diff))
    def show(r):
        if not r:
            return "(no row)"
        s = r[3] if r[2] == "fail" else "render %sx%s %s" % (r[5], r[6], r[4] or "")
        return s + (" [%s]" % r[7] if r[7] and r[2] == "fail" else "")
    for path, ra, rb in diff:
        print("  %s\n      %s: %s\n      %s: %s" % (path, a, show(ra), b, show(rb)))
EOF
printf "\nwork dir (tree, database, logs): %s\n" "$work"
