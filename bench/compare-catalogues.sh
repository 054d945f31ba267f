#!/bin/sh
# bench/compare-catalogues.sh -- judges a catalogue file against the one
# built into kgen, on shapes neither was built from.
#
#   bench/compare-catalogues.sh BUILD_DIR CATALOGUE [OUT_DIR]
#
# On a GPU machine, with kgen built in BUILD_DIR (this script builds
# nothing): for each shape set and layout, kgen-bench without a tuning
# database twice, back to back, first with the embedded catalogue ("old"),
# then with CATALOGUE in its place (KGEN_CATALOGUE, "new"), each against
# cuBLAS in the same process. The sets:
#   grid     bench/grid.txt
#   suite    bench/shapes.txt
#   heldout  products drawn at random in log2 space for this run (24 with M
#            and N 17-16384 and K 8-32768, half of them with their sizes
#            from 48 up rounded to multiples of 16, the rest as drawn; 16
#            with M or N 1-16), written to OUT_DIR/heldout.txt;
#            KGEN_COMPARE_SEED (default: today, YYYYMMDD) seeds the draw (a
#            generator of its own: the same seed draws the same list with any
#            awk) and
#            KGEN_COMPARE_HELDOUT=FILE gives a list instead.
# It prints, and writes to OUT_DIR/summary.txt, per set and layout: the
# geometric mean of kgen/cuBLAS with each file, the shapes below 0.90 of
# cuBLAS with each, wrong results (left out of the rest), the shapes whose
# kernel changed, and over those the
# geometric mean of kgen's time new/old (below 1: the new file is faster),
# how many are more than 3 % faster or slower, and the worst; "drift" is
# the same time ratio over the shapes whose kernel did not change (the
# run-to-run noise the changes are to be read against); "slowest" the
# largest new/old over every shape. OUT_DIR
# (default: a new temporary directory) keeps every CSV.
# KGEN_BENCH_SETS (default "grid suite heldout") and KGEN_BENCH_LAYOUTS
# (default "nn nt tn tt") pick a part. KGEN_COMPARE_CHANGED=1 times only the
# shapes whose kernel the two files choose differently (`kgen choice`, before
# any timing; written to OUT_DIR/changed-SET-LAYOUT.txt): a fraction of the GPU
# time, and no drift; a set and layout where no choice differs is said so.
# KGEN_COMPARE_ROUNDS=N (1 to 9, default 1) runs each set and layout N times,
# the two files in turn, the first of each round alternating (old then new,
# new then old, ...), and compares each shape's median round of each file
# (OUT_DIR/old-SET-LAYOUT.rR.csv: round R): at products of a few
# microseconds a process's host launches up to 1.4x as fast as another's
# (docs/performance.md row 81), and a single pair of processes puts that
# difference between the files.
# KGEN_COMPARE_OLD_BENCH=PATH makes "old" another build's kgen-bench (its
# kg_matmul without a tuning database, whatever it chooses with) instead of
# BUILD_DIR's with the embedded catalogue: with CATALOGUE the embedded file
# itself, this build against an earlier tree's, e.g. the hand-written
# defaults the catalogue replaced (tree 0b68727: bench/README.md). It takes
# no KGEN_COMPARE_CHANGED (the other build's choices are not known before
# it runs). Kernels are then "changed" where the configurations differ, and
# "slowest" (every shape, changed or not) is the figure to read.
# CATALOGUE must be for the GPU's architecture (its `arch` line): libkgen
# takes KGEN_CATALOGUE only as the catalogue of its own architecture.
# Exit status: 0 every run correct; 1 a run failed or a result was wrong
# (the others still run; the summary covers those that ran and names those
# that did not); 2 usage.
set -u
if [ $# -ge 1 ] && [ "$1" = --help ]; then
    sed -n '2,/^set -u/s/^# \{0,1\}//p' "$0"
    exit 0
fi
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: bench/compare-catalogues.sh BUILD_DIR CATALOGUE [OUT_DIR]   (--help: what it runs)" >&2
    exit 2
fi
CALLER=$(pwd)
ME=compare-catalogues.sh
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_build "$1"
CAT=$(from_caller "$2")
CAT_NAME=$2
OUT_ARG=${3:-}
if [ ! -r "$CAT" ] || [ ! -f "$CAT" ]; then
    echo "compare-catalogues.sh: cannot read the catalogue '$2'" >&2
    exit 2
fi
if ! head -n 50 "$CAT" | grep -q '^kgen-catalogue '; then
    echo "compare-catalogues.sh: '$2' is not a kgen catalogue (no 'kgen-catalogue' line: catalogue/README.md)" >&2
    exit 2
fi
SETS=${KGEN_BENCH_SETS:-grid suite heldout}
# shellcheck disable=SC2086 # split into words on purpose: a list of none is refused
{ set -- $SETS; [ $# -gt 0 ]; } || { echo "compare-catalogues.sh: KGEN_BENCH_SETS: no set named" >&2; exit 2; }
for s in $SETS; do
    case $s in grid|suite|heldout) ;; *) echo "compare-catalogues.sh: KGEN_BENCH_SETS: unknown set '$s' (grid, suite, heldout)" >&2; exit 2 ;; esac
done
check_layouts
CHANGED=${KGEN_COMPARE_CHANGED:-}
case $CHANGED in '' | 0 | 1) ;; *) echo "compare-catalogues.sh: KGEN_COMPARE_CHANGED: 1 or 0, not '$CHANGED'" >&2; exit 2 ;; esac
[ "$CHANGED" != 0 ] || CHANGED=
OLD_BENCH=
if [ -n "${KGEN_COMPARE_OLD_BENCH:-}" ]; then
    OLD_BENCH=$(from_caller "$KGEN_COMPARE_OLD_BENCH")
    { [ -f "$OLD_BENCH" ] && [ -x "$OLD_BENCH" ]; } ||
        { echo "$ME: KGEN_COMPARE_OLD_BENCH: not an executable file '$KGEN_COMPARE_OLD_BENCH'" >&2; exit 2; }
    [ -z "$CHANGED" ] ||
        { echo "$ME: KGEN_COMPARE_OLD_BENCH takes no KGEN_COMPARE_CHANGED: the other build's choices are not known before it runs" >&2; exit 2; }
fi
OLD_NAME=${OLD_BENCH:+"$KGEN_COMPARE_OLD_BENCH's kg_matmul"}
OLD_NAME=${OLD_NAME:-"the embedded catalogue"}
ROUNDS=${KGEN_COMPARE_ROUNDS:-1}
case $ROUNDS in [1-9]) ;; *) echo "compare-catalogues.sh: KGEN_COMPARE_ROUNDS: not a count from 1 to 9 '$ROUNDS'" >&2; exit 2 ;; esac
SEED=${KGEN_COMPARE_SEED:-$(date -u +%Y%m%d)}
case $SEED in '' | *[!0-9]*) echo "compare-catalogues.sh: KGEN_COMPARE_SEED: not a number '$SEED'" >&2; exit 2 ;; esac
HELD=
if [ -n "${KGEN_COMPARE_HELDOUT:-}" ]; then
    HELD=$(from_caller "$KGEN_COMPARE_HELDOUT")
    { [ -r "$HELD" ] && [ -f "$HELD" ]; } ||
        { echo "compare-catalogues.sh: KGEN_COMPARE_HELDOUT: cannot read the file '$KGEN_COMPARE_HELDOUT'" >&2; exit 2; }
fi
check_out_dir "$OUT_ARG"
# the GPU and its architecture, before anything is written
gpu_arch
catalogue_for_gpu "$CAT" "$CAT_NAME"
if [ -n "$OUT" ]; then
    mkdir -p "$OUT" || exit 1
else
    OUT=$(mktemp -d) || exit 1
fi
cd "$(dirname "$0")/.." || exit 2

# the held-out products: random in log2 space, none of them chosen by anyone
held_out() {
    awk -v seed="$1" '
# a Park-Miller generator (x = 16807 x mod 2^31 - 1, exact in doubles) in place of the rand() of awk, which
# srand(seed) does not make draw the same numbers in every awk (two draws with one seed on a GPU machine gave
# two lists)
function rnd() { x = (x * 16807) % 2147483647; return x / 2147483647 }
function side(lo, hi) { return lo + rnd() * (hi - lo) }
BEGIN {
  x = seed % 2147483646 + 1; l17 = log(17) / log(2)
  print "# held-out products for bench/compare-catalogues.sh, seed " seed
  for (i = 1; i <= 24; i++) {      # general: at most 2^35 multiply-adds, half rounded to 16-byte rows
    lm = side(l17, 14); ln = side(l17, 14); lk = side(3, 15); s = lm + ln + lk
    if (s > 35) { lm -= (s - 35) * lm / s; ln -= (s - 35) * ln / s; lk -= (s - 35) * lk / s }
    m = int(2 ^ lm + 0.5); n = int(2 ^ ln + 0.5); k = int(2 ^ lk + 0.5)
    if (rnd() < 0.5) { if (m >= 48) m = int(m / 16 + 0.5) * 16; if (n >= 48) n = int(n / 16 + 0.5) * 16; if (k >= 48) k = int(k / 16 + 0.5) * 16 }
    if (m < 17) m = 17; if (n < 17) n = 17
    printf "h%02d %d %d %d\n", i, m, n, k
  }
  for (i = 1; i <= 16; i++) {      # thin: M or N 1-16 (1 in about half), the other 256-16384, K 256-32768
    s = 1 + int(rnd() * 16); if (rnd() < 0.4) s = 1
    b = int(2 ^ side(8, 14) + 0.5); k = int(2 ^ side(8, 15) + 0.5)
    if (rnd() < 0.6) { b = int(b / 16 + 0.5) * 16; k = int(k / 16 + 0.5) * 16 }
    if (i % 2) printf "v%02d %d %d %d\n", i, s, b, k; else printf "v%02d %d %d %d\n", i, b, s, k
  }
}'
}

# a file's path with its folder's links resolved (a list given again from OUT_DIR is not copied onto itself)
canon() { printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd -P)" "$(basename "$1")"; }
# the held-out list, before any GPU time is spent
case " $SETS " in
    *" heldout "*)
        if [ -z "$HELD" ]; then
            held_out "$SEED" > "$OUT/heldout.new" && mv "$OUT/heldout.new" "$OUT/heldout.txt" || exit 1
        elif [ "$(canon "$HELD")" != "$(canon "$OUT/heldout.txt")" ]; then
            cp "$HELD" "$OUT/heldout.txt" || exit 1
        fi ;;
esac

# changed_shapes SHAPES LAYOUT: the lines of SHAPES (as kgen reads them: '#' comments, blank lines skipped)
# whose kernel kg_matmul chooses differently with CAT than with the embedded catalogue, by `kgen choice`
changed_shapes() {
    "$KGEN" choice --shapes "$1" --layout "$2" --brief > "$OUT/choice-old.txt" &&
        KGEN_CATALOGUE=$CAT "$KGEN" choice --shapes "$1" --layout "$2" --brief > "$OUT/choice-new.txt" || return 1
    awk 'FILENAME == ARGV[1] { old[FNR] = $0; next }
         FILENAME == ARGV[2] { new[FNR] = $0; next }
         { sub(/#.*/, "") } NF == 0 { next }
         { i++; if (old[i] != new[i]) print }' "$OUT/choice-old.txt" "$OUT/choice-new.txt" "$1"
    rm -f "$OUT/choice-old.txt" "$OUT/choice-new.txt"
}

# median_rounds PREFIX: PREFIX.csv from the rounds' PREFIX.rR.csv (every round that wrote one; none: no file):
# for each shape, its row of the median kgen time over the rounds (of an even count, the lower middle), or a
# row with a wrong result where a round had one (the summary counts it); the shapes in the first round's order
median_rounds() {
    set -- "$1".r[1-9].csv
    [ -e "$1" ] || return 1
    awk -F, '
FNR == 1 { if (NR == 1) head = $0; delete c; for (i = 1; i <= NF; i++) c[$i] = i; next }
{
  t = $c["tag"]; if (!(t in n)) order[++nt] = t
  i = ++n[t]; row[t, i] = $0; ms[t, i] = $c["kgen_ms"] + 0; if ($c["ok"] != 1) bad[t] = $0
}
END {
  print head
  for (j = 1; j <= nt; j++) {
    t = order[j]
    if (t in bad) { print bad[t]; continue }
    for (a = 1; a <= n[t]; a++) idx[a] = a
    for (a = 2; a <= n[t]; a++) for (b = a; b > 1 && ms[t, idx[b]] < ms[t, idx[b - 1]]; b--) { x = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = x }
    print row[t, idx[int((n[t] + 1) / 2)]]
  }
}' "$@" > "${1%.r[1-9].csv}.csv"
}

shapes_of() {
    case $1 in
        grid) echo bench/grid.txt ;;
        suite) echo bench/shapes.txt ;;
        heldout) echo "$OUT/heldout.txt" ;;
    esac
}
rc=0
RAN=
UNCHANGED=
NOCHOICE=
# KGEN_COMPARE_CHANGED: every list of changed shapes before any GPU time is spent
if [ -n "$CHANGED" ]; then
    for s in $SETS; do
        for l in $LAYOUTS; do
            rm -f "$OUT/changed-$s-$l.txt"
            if ! changed_shapes "$(shapes_of "$s")" "$l" > "$OUT/changed-$s-$l.new"; then
                rc=1
                rm -f "$OUT/changed-$s-$l.new"
                NOCHOICE="$NOCHOICE $s-$l"
                echo "  kgen choice failed for $s in layout $l" >&2
                continue
            fi
            mv "$OUT/changed-$s-$l.new" "$OUT/changed-$s-$l.txt" || exit 1
        done
    done
fi
for s in $SETS; do
    shapes=$(shapes_of "$s")
    for l in $LAYOUTS; do
        # this run's results only: a CSV left by an earlier run into OUT_DIR goes first
        rm -f "$OUT/old-$s-$l.csv" "$OUT/new-$s-$l.csv" "$OUT/old-$s-$l".r[1-9].csv "$OUT/new-$s-$l".r[1-9].csv
        run=$shapes
        if [ -n "$CHANGED" ]; then
            run=$OUT/changed-$s-$l.txt
            [ -e "$run" ] || continue    # kgen choice failed: named in the summary
            if [ ! -s "$run" ]; then
                echo "== $s, layout $l: the two files choose the same kernel for every shape: nothing to time"
                UNCHANGED="$UNCHANGED $s-$l"
                continue
            fi
            echo "== $s, layout $l: $(wc -l < "$run") shapes whose kernel differs ($run)"
        fi
        RAN="$RAN $s-$l"
        r=1
        while [ "$r" -le "$ROUNDS" ]; do
            # the round's files: old-SET-LAYOUT.csv itself when there is one round
            sfx=; [ "$ROUNDS" = 1 ] || sfx=.r$r
            order="old new"; [ $((r % 2)) = 1 ] || order="new old"
            echo "== $s, layout $l${sfx:+, round $r}: $([ "$order" = "old new" ] && echo "$OLD_NAME, then $CAT_NAME" ||
                echo "$CAT_NAME, then $OLD_NAME")"
            for side in $order; do
                rm -f "$OUT/$side-$s-$l$sfx.csv"
                if [ "$side" = old ]; then
                    "${OLD_BENCH:-$BENCH}" --no-db --shapes "$run" --layout "$l" --csv "$OUT/old-$s-$l$sfx.csv" \
                        > "$OUT/old-$s-$l$sfx.txt" 2>&1 ||
                        { rc=1; echo "  kgen-bench failed or a result was wrong with $OLD_NAME:" \
                            "$OUT/old-$s-$l$sfx.txt" >&2; }
                else
                    KGEN_CATALOGUE=$CAT "$BENCH" --no-db --shapes "$run" --layout "$l" --csv "$OUT/new-$s-$l$sfx.csv" \
                        > "$OUT/new-$s-$l$sfx.txt" 2>&1 ||
                        { rc=1; echo "  kgen-bench failed or a result was wrong with $CAT_NAME: $OUT/new-$s-$l$sfx.txt" >&2; }
                fi
            done
            r=$((r + 1))
        done
        [ "$ROUNDS" = 1 ] || for side in old new; do
            median_rounds "$OUT/$side-$s-$l" || { rc=1; rm -f "$OUT/$side-$s-$l.csv"; }
        done
    done
done

# the summary: one line per set and layout of this run with both files' results; a shape with a wrong result
# on either side (ok = 0) is counted, not compared
summarize() {
    awk -F, '
FNR == 1 { delete c; for (i = 1; i <= NF; i++) c[$i] = i; old = FILENAME ~ /\/old-[a-z]*-[a-z]*\.csv$/; next }
{
  f = FILENAME; sub(/.*\/(old|new)-/, "", f); sub(/\.csv$/, "", f)      # set-layout
  key = f SUBSEP $c["tag"]
  if ($c["ok"] != 1) bad[key] = 1
  if (old) { r0[key] = $c["ratio"]; t0[key] = $c["kgen_ms"]; k0[key] = $c["template"] " " $c["config"]; sets[f] = 1 }
  else { r1[key] = $c["ratio"]; t1[key] = $c["kgen_ms"]; k1[key] = $c["template"] " " $c["config"] }
}
END {
  printf "%-12s %6s %10s %10s %7s %7s %5s %7s %8s %7s %7s %8s  %-16s %s\n", "set-layout", "shapes", "old/cuBLAS", \
    "new/cuBLAS", "old<0.9", "new<0.9", "wrong", "changed", "new/old", "faster", "slower", "drift", "worst (new/old)", \
    "slowest (any)"
  for (f in sets) {
    n = 0; lo = ln = 0; b0 = b1 = 0; ch = 0; lt = 0; fa = sl = 0; worst = 0; wtag = "-"; same = 0; ls = 0; wr = 0
    slow = 0; stag = "-"
    for (key in r0) {
      split(key, p, SUBSEP); if (p[1] != f || !(key in r1)) continue
      if (key in bad) { wr++; continue }
      n++; lo += log(r0[key]); ln += log(r1[key]); b0 += r0[key] < 0.9; b1 += r1[key] < 0.9
      if (t1[key] / t0[key] > slow) { slow = t1[key] / t0[key]; stag = p[2] }
      if (k0[key] == k1[key]) { same++; ls += log(t1[key] / t0[key]); continue }
      ch++; q = t1[key] / t0[key]; lt += log(q); fa += q < 0.97; sl += q > 1.03
      if (q > worst) { worst = q; wtag = p[2] }
    }
    if (n + wr == 0) continue
    printf "%-12s %6d %10s %10s %7d %7d %5d %7d %8s %7d %7d %8s  %-16s %s\n", f, n, \
      n ? sprintf("%.3f", exp(lo / n)) : "-", n ? sprintf("%.3f", exp(ln / n)) : "-", b0, b1, wr, ch, \
      ch ? sprintf("%.3f", exp(lt / ch)) : "-", fa, sl, same ? sprintf("%.3f", exp(ls / same)) : "-", \
      ch ? sprintf("%s %.2f", wtag, worst) : "-", n ? sprintf("%s %.3f", stag, slow) : "-"
  }
}' "$@" | { IFS= read -r head; printf '%s\n' "$head"; sort; }
}
set --
missing=
for sl in $RAN; do
    if [ -e "$OUT/old-$sl.csv" ] && [ -e "$OUT/new-$sl.csv" ]; then
        set -- "$@" "$OUT/old-$sl.csv" "$OUT/new-$sl.csv"
    else
        missing="$missing $sl"
    fi
done
{
    echo "# bench/compare-catalogues.sh: $OLD_NAME (old) against $CAT_NAME (new), no tuning database"
    echo "# $("$BENCH" --device-name 2> /dev/null || echo "unknown GPU"), $(date -u +%Y-%m-%dT%H:%MZ)," \
        "source tree $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
    [ -z "$CHANGED" ] || echo "# only the shapes whose kernel the two files choose differently were timed" \
        "(KGEN_COMPARE_CHANGED: OUT_DIR/changed-SET-LAYOUT.txt); 'shapes' counts those"
    [ $# -eq 0 ] || summarize "$@"
    for sl in $UNCHANGED; do
        echo "$sl: the same kernel for every shape with both files (kgen choice): not timed"
    done
    for sl in $NOCHOICE; do
        echo "$sl: not compared (kgen choice failed)"
    done
    for sl in $missing; do
        echo "$sl: not compared (no result from kgen-bench with one of the files: $OUT/old-$sl.txt, $OUT/new-$sl.txt)"
    done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
echo "written: $OUT"
exit $rc
