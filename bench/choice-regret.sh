#!/bin/sh
# bench/choice-regret.sh -- how close kg_matmul's choice from its catalogue
# comes, measured, to the fastest of the catalogue's own kernels, at shapes
# of your choosing (best: shapes the catalogue was not built from).
#
#   bench/choice-regret.sh BUILD_DIR SHAPES [OUT_DIR]
#   bench/choice-regret.sh --rescore BUILD_DIR OUT_DIR
#
# On a GPU machine, with kgen built in BUILD_DIR (this script builds
# nothing), per layout: kgen-bench times each kernel of the catalogue that
# kg_matmul runs in the layout (`kgen catalogue kernels --layout`) at each
# shape of SHAPES (kgen-bench's list: 'tag M N K' lines, each tag once; a
# kernel whose preconditions the shape breaks is skipped), then, in a
# second process, kg_matmul's own choice, without a tuning database. The
# catalogue is KGEN_CATALOGUE's file where set, else the source tree's
# catalogue/sm_XY.txt (the file a build of this tree embeds); it must be
# for the GPU's architecture, and both runs read it (kg_matmul through
# KGEN_CATALOGUE), so they judge the same file.
# It prints, and writes to OUT_DIR/summary.txt, per layout: the shapes
# compared; the geometric mean of the regret (the chosen kernel's time in
# the sweep over the sweep's fastest: 1 is the best choice); how often the
# fastest was chosen, and the choice within 5 % of it; the worst; "apart",
# the choices not in the sweep (kg_matmul set bounds=1 or vec=1 for the
# call), compared by their own run's time; "none", shapes where no kernel
# of the sweep ran; "wrong", shapes left out for a wrong result in either
# run; and the geometric means against cuBLAS of the choice's own run and
# of the fastest. OUT_DIR/regret-LAYOUT.txt names, per shape, the regret,
# the choice and the fastest kernel.
# KGEN_BENCH_LAYOUTS (default "nn nt tn tt") picks layouts. The sweep takes
# about 0.2 s per (kernel, shape) that runs (H200; at a thin or a large
# shape about half the catalogue's kernels are skipped), plus compiling
# each kernel once (`kgen precompile` first makes that a disk-cache read).
# OUT_DIR (default: a new temporary directory) keeps every CSV, and the
# catalogue judged (catalogue.txt).
# --rescore needs no GPU: it judges BUILD_DIR's kg_matmul (`kgen choice`)
# against an earlier run's sweeps in OUT_DIR, the same kernels' times, so
# that a change to the choice (kg_matmul's model) is judged at shapes it was
# not made from without timing anything. The catalogue is KGEN_CATALOGUE's
# file where set (the same kernels), else OUT_DIR/catalogue.txt. It writes
# OUT_DIR/rescore-summary.txt (the summary's columns; choice/cuBLAS from the
# sweep's time of the choice) and rescore-regret-LAYOUT.txt, and leaves the
# run's own files; a choice the sweep did not time (a kernel not in it, or a
# vector read as the other layout) counts as apart and is left out of the
# regret. Its shapes are the sweep's: one where no kernel ran is not among
# them.
# Exit status: 0 every run correct; 1 a run failed or a result was wrong
# (the others still run); 2 usage, a catalogue kgen cannot read or for
# another architecture, a tag repeated in SHAPES, or a shape list
# kgen-bench refuses (then nothing of the run is kept).
set -u
if [ $# -ge 1 ] && [ "$1" = --help ]; then
    sed -n '2,/^set -u/s/^# \{0,1\}//p' "$0"
    exit 0
fi
RESCORE=
[ $# -ge 1 ] && [ "$1" = --rescore ] && { RESCORE=1; shift; }
if { [ -z "$RESCORE" ] && { [ $# -lt 2 ] || [ $# -gt 3 ]; }; } || { [ -n "$RESCORE" ] && [ $# -ne 2 ]; }; then
    echo "usage: bench/choice-regret.sh BUILD_DIR SHAPES [OUT_DIR], or --rescore BUILD_DIR OUT_DIR   (--help: what it runs)" >&2
    exit 2
fi
CALLER=$(pwd)
ME=choice-regret.sh
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_build "$1"
check_layouts
# regret LAYOUT CHOICE_CSV DETAIL: over OUT_DIR's sweep in LAYOUT (kernel x shape) and CHOICE_CSV (one row per
# shape: tag, ok, template, config, kgen_ms, ratio), writes DETAIL and prints the summary line
regret() {
    awk -F, -v layout="$1" -v detail="$3" '
FNR == 1 { delete c; for (i = 1; i <= NF; i++) c[$i] = i; sweep = FILENAME ~ /\/sweep-[a-z]*\.csv$/; next }
sweep {
  t = $c["tag"]; if ($c["ok"] != 1) { bad[t] = 1; next }
  k = $c["template"] " " $c["config"]; ms[t, k] = $c["kgen_ms"]; mr[t, k] = $c["ratio"]
  if (!(t in best) || $c["kgen_ms"] < best[t]) { best[t] = $c["kgen_ms"]; bestk[t] = k; bestr[t] = $c["ratio"] }
  next
}
{
  t = $c["tag"]; tags[++n] = t; if ($c["ok"] != 1) { bad[t] = 1; next }
  ck[t] = $c["template"] " " $c["config"]; cms[t] = $c["kgen_ms"]; cr[t] = $c["ratio"]
}
END {
  printf "# tag, regret, the time of the choice and the fastest time in the sweep (ms) | the choice | the fastest\n" > detail
  m = 0; lr = 0; lc = 0; lb = 0; first = 0; near = 0; apart = 0; none = 0; wrong = 0; worst = 0; wtag = "-"
  for (i = 1; i <= n; i++) {
    t = tags[i]
    if (t in bad) { wrong++; continue }
    if (!(t in best)) { none++; printf "%s - no kernel of the catalogue ran here\n", t > detail; continue }
    inside = (t, ck[t]) in ms; apart += !inside
    if (!inside && cms[t] == "") { printf "%s - the choice was not timed: %s\n", t, ck[t] > detail; continue }
    own = inside ? ms[t, ck[t]] : cms[t]
    q = own / best[t]; m++; lr += log(q); lc += log(cr[t] != "" ? cr[t] : mr[t, ck[t]]); lb += log(bestr[t])
    first += ck[t] == bestk[t]; near += q <= 1.05
    if (q > worst) { worst = q; wtag = t }
    printf "%s %.3f %g %g | %s%s | %s\n", t, q, own, best[t], ck[t], inside ? "" : " (apart)", bestk[t] > detail
  }
  printf "%-6s %6d %8s %7d %7d %7s %5d %5d %5d %12s %13s\n", layout, m, m ? sprintf("%.4f", exp(lr / m)) : "-", \
    first, near, m ? sprintf("%.3f", worst) : "-", apart, none, wrong, m ? sprintf("%.3f", exp(lc / m)) : "-", \
    m ? sprintf("%.3f", exp(lb / m)) : "-"
  if (m) printf "       worst: %s\n", wtag
}' "$OUT/sweep-$1.csv" "$2"
}
header() {
    printf '%-6s %6s %8s %7s %7s %7s %5s %5s %5s %12s %13s\n' layout shapes regret fastest "<=1.05" worst apart none \
        wrong choice/cuBLAS fastest/cuBLAS
}
if [ -n "$RESCORE" ]; then
    # no GPU: this build's choice (kgen choice) against the sweeps of the run in OUT_DIR
    OUT=$(from_caller "$2")
    [ -d "$OUT" ] || { echo "$ME: --rescore: '$2' is not a directory" >&2; exit 2; }
    CAT=$OUT/catalogue.txt
    [ -n "${KGEN_CATALOGUE:-}" ] && CAT=$(from_caller "$KGEN_CATALOGUE")
    { [ -f "$CAT" ] && "$KGEN" catalogue kernels "$CAT" > /dev/null; } || {
        echo "$ME: --rescore: '$CAT' is not a catalogue kgen can read (KGEN_CATALOGUE, else the run's own copy)" >&2
        exit 2
    }
    ARCH=$(catalogue_arch "$CAT")
    rc=0
    {
        echo "# bench/choice-regret.sh --rescore: kg_matmul's choice now ($KGEN choice, from $CAT) against the" \
            "sweeps of $OUT"
        header
        for l in $LAYOUTS; do
            [ -s "$OUT/sweep-$l.csv" ] || { echo "$l: not compared (no sweep in $OUT)"; continue; }
            # the sweep's shapes, each once, and this build's choice at each
            awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                !seen[$c["tag"]]++ { print $c["tag"], $c["M"], $c["N"], $c["K"] }' "$OUT/sweep-$l.csv" \
                > "$OUT/rescore-shapes-$l.txt"
            if ! KGEN_CATALOGUE=$CAT "$KGEN" choice --shapes "$OUT/rescore-shapes-$l.txt" --layout "$l" \
                --arch "sm_$ARCH" --brief > "$OUT/rescore-choice-$l.txt"; then
                rc=1
                echo "$l: not compared (kgen choice failed)"
                continue
            fi
            awk 'BEGIN { print "tag,ok,template,config,kgen_ms,ratio" }
                { cfg = $5; for (i = 6; i <= NF; i++) cfg = cfg " " $i; printf "%s,1,%s,%s,,\n", $1, $4, cfg }' \
                "$OUT/rescore-choice-$l.txt" > "$OUT/rescore-choice-$l.csv"
            regret "$l" "$OUT/rescore-choice-$l.csv" "$OUT/rescore-regret-$l.txt"
        done
    } > "$OUT/rescore-summary.txt"
    rm -f "$OUT"/rescore-shapes-*.txt
    cat "$OUT/rescore-summary.txt"
    exit $rc
fi
SHAPES=$(from_caller "$2")
SHAPES_NAME=$2
OUT_ARG=${3:-}
if [ ! -r "$SHAPES" ] || [ ! -f "$SHAPES" ]; then
    echo "choice-regret.sh: cannot read the shape list '$SHAPES_NAME'" >&2
    exit 2
fi
check_out_dir "$OUT_ARG"
cd "$(dirname "$0")/.." || exit 2
# the GPU, its architecture and the catalogue kg_matmul uses there, before anything is written
gpu_arch
if [ -n "${KGEN_CATALOGUE:-}" ]; then
    CAT=$(from_caller "$KGEN_CATALOGUE")
else
    CAT=$PWD/catalogue/sm_$ARCH.txt
    if [ ! -e "$CAT" ]; then
        echo "choice-regret.sh: no catalogue for sm_$ARCH ($CAT): kg_matmul chooses by its model alone here" >&2
        exit 2
    fi
fi
# the catalogue read as kgen reads it (a file kgen refuses is named with its line), for this GPU's architecture
# (kg_matmul takes KGEN_CATALOGUE only as its own architecture's), and given to both runs
{ [ -f "$CAT" ] && "$KGEN" catalogue kernels "$CAT" > /dev/null; } ||
    { echo "choice-regret.sh: '$CAT' is not a catalogue kgen can read" >&2; exit 2; }
catalogue_for_gpu "$CAT" "$CAT"
export KGEN_CATALOGUE="$CAT"
# a tag names one shape in the summary: a list that repeats one is refused
dup=$(sed 's/#.*//' "$SHAPES" | awk 'NF { if (seen[$1]++) { print $1; exit } }')
if [ -n "$dup" ]; then
    echo "choice-regret.sh: the tag '$dup' stands for more than one line of '$SHAPES_NAME'" >&2
    exit 2
fi
NEW_OUT=
if [ -n "$OUT" ]; then
    [ -e "$OUT" ] || NEW_OUT=1
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
    NEW_OUT=1
fi
# kgen-bench refused its input (exit 2: the shape list): nothing of this run is kept
refused() {
    echo "choice-regret.sh: kgen-bench refused the run ($1):" >&2
    cat "$1" >&2
    if [ -n "$NEW_OUT" ]; then rm -rf "$OUT"; else rm -f "$OUT"/kernels-*.txt "$OUT"/sweep-* "$OUT"/choice-* "$OUT"/regret-*.txt; fi
    exit 2
}

rc=0
RAN=
NOT=
for l in $LAYOUTS; do
    echo "== layout $l: the catalogue's kernels, then kg_matmul's choice"
    # this run's results only: what an earlier run into OUT_DIR left for this layout goes first
    rm -f "$OUT/kernels-$l.txt" "$OUT/sweep-$l.csv" "$OUT/choice-$l.csv" "$OUT/sweep-$l.txt" "$OUT/choice-$l.txt" \
        "$OUT/regret-$l.txt"
    if ! "$KGEN" catalogue kernels "$CAT" --layout "$l" -o "$OUT/kernels-$l.txt"; then
        rc=1
        NOT="$NOT $l:kgen-could-not-list-its-kernels"
        continue
    fi
    if [ ! -s "$OUT/kernels-$l.txt" ]; then
        NOT="$NOT $l:no-time-in-this-layout"
        continue
    fi
    RAN="$RAN $l"
    "$BENCH" --configs "$OUT/kernels-$l.txt" --shapes "$SHAPES" --layout "$l" --csv "$OUT/sweep-$l.csv" \
        > "$OUT/sweep-$l.txt" 2>&1
    r=$?
    [ $r -eq 2 ] && refused "$OUT/sweep-$l.txt"
    [ $r -eq 0 ] || { rc=1; echo "  the sweep failed or a result was wrong: $OUT/sweep-$l.txt" >&2; }
    "$BENCH" --no-db --shapes "$SHAPES" --layout "$l" --csv "$OUT/choice-$l.csv" > "$OUT/choice-$l.txt" 2>&1 ||
        { rc=1; echo "  kg_matmul's run failed or a result was wrong: $OUT/choice-$l.txt" >&2; }
done

# the catalogue judged, beside its sweeps (--rescore's default)
[ "$CAT" = "$OUT/catalogue.txt" ] || cp "$CAT" "$OUT/catalogue.txt" || rc=1
{
    echo "# bench/choice-regret.sh: kg_matmul's choice from $CAT against its fastest kernel, shapes $SHAPES_NAME"
    echo "# $("$BENCH" --device-name 2> /dev/null || echo "unknown GPU"), $(date -u +%Y-%m-%dT%H:%MZ)," \
        "source tree $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
    header
    for l in $RAN; do
        if [ -e "$OUT/sweep-$l.csv" ] && [ -e "$OUT/choice-$l.csv" ]; then
            regret "$l" "$OUT/choice-$l.csv" "$OUT/regret-$l.txt"
        else
            echo "$l: not compared (no CSV from one of the runs: $OUT/sweep-$l.txt, $OUT/choice-$l.txt)"
        fi
    done
    for n in $NOT; do
        echo "${n%%:*}: not compared ($(echo "${n#*:}" | tr - ' '))"
    done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
echo "written: $OUT"
exit $rc
