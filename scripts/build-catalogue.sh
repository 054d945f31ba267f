#!/bin/sh
# scripts/build-catalogue.sh -- measures kgen's kernel catalogue on this GPU.
#
#   scripts/build-catalogue.sh BUILD_DIR [WORK_DIR]
#   scripts/build-catalogue.sh --make-shapes    (rewrites catalogue/train-shapes.txt)
#   scripts/build-catalogue.sh --cublas-shapes N EXPORT BENCH_CSV...     (step 2b's shapes, below)
#   scripts/build-catalogue.sh --tuned-winners CANDIDATES EXPORT TUNED [BEAT]  (step 2b's new candidates)
#
# On a GPU machine, with kgen built in BUILD_DIR (this script builds
# nothing), using only kgen's own commands:
#   1. the candidates: catalogue/candidates-sm_<XY>.txt where there is one
#      (those the committed catalogue was built from); else, or with
#      KGEN_CATALOGUE_NEW_CANDIDATES=1, kgen catalogue candidates (the
#      model's choice of configurations for the training shapes,
#      catalogue/train-shapes.txt, in every layout) and the seeds
#      catalogue/seeds-sm_<XY>.txt where there is one (configurations
#      earlier tuning on that architecture found best);
#   2. kgen tune --configs --back-to-back: each candidate timed at each
#      training shape in each layout (nn nt tn tt) as a GEMM called in a
#      loop runs, verified against a float64 reference,
#      into a fresh tuning database in WORK_DIR (default: a temporary one);
#  2b. with KGEN_CATALOGUE_TUNE=N (below): kgen-bench times cuBLAS at the
#      training shapes, kgen tune with its defaults runs in each layout at
#      the N shapes (M and N above 16) where the fastest candidate falls
#      furthest below cuBLAS, and the winners join the candidates, timed
#      as in step 2;
#  2c. the launch-bound shapes timed again: every candidate, at the training
#      shapes (per layout) whose fastest time is under KGEN_CATALOGUE_PASS_BELOW
#      (3) times the fastest time measured anywhere, in KGEN_CATALOGUE_PASSES
#      (3) passes in all, each `kgen tune` a process of its own, into
#      WORK_DIR/pass-N.db. There a call's time is mostly the host's launches,
#      and a process launches up to 1.4x as fast as another (catalogue/
#      README.md); step 4 takes the median of each kernel's passes
#      (KGEN_CATALOGUE_PASSES=1: no step 2c);
#   3. kgen db export: the measurements as CSV (WORK_DIR/measured.csv, and
#      WORK_DIR/pass-N.csv);
#   4. kgen catalogue make: the few kernels whose choice by kg_matmul's
#      model, each training shape left out of its own prediction, comes
#      closest to the fastest measured everywhere, with their times, written to
#      catalogue/sm_<XY>.txt for this GPU's architecture, with the GPU,
#      driver and date in its header.
# The training shapes are not the benchmark shapes (bench/shapes.txt,
# bench/grid.txt), which judge the catalogue on shapes it was not built from.
# KGEN_CATALOGUE_CANDIDATES (32) and KGEN_CATALOGUE_KERNELS (default: that
# of kgen catalogue make, 40) set the counts of steps 1 and 4;
# KGEN_CATALOGUE_SHAPES another training file;
# KGEN_CATALOGUE_LAYOUTS (default "nn nt tn tt") the layouts step 2 times.
# KGEN_CATALOGUE_BASE=FILE rebuilds from a catalogue's kernels instead of the
# candidates: step 1 takes FILE's kernels (for the committed file's 40, step
# 2 takes about a quarter of the committed candidates' time), step 2b (8 shapes
# unless KGEN_CATALOGUE_TUNE says otherwise) adds kgen tune's winners, and step
# 4 chooses among both, and keeps FILE's kernels, improved by swaps, where they
# score better than that choice (an incremental rebuild: make --start FILE).
# KGEN_CATALOGUE_KEEP=FILE measures a catalogue again instead: FILE's kernels
# are the candidates (no step 2b), and step 4 keeps them all, in FILE's order
# (after a change to their templates that keeps their parameters, or on another
# GPU of the architecture).
# KGEN_CATALOGUE_EXTEND=FILE extends a catalogue with new measurements:
# FILE's kernels are timed only at the training pairs FILE has no times
# for (shapes added to the training file since it was made), and the
# kernels of KGEN_CATALOGUE_ADD=CONFIGS (a --configs list), if given, at
# every training pair; step 2c times each of them again at the launch-bound
# pairs among those; step 4 keeps FILE's kernels and times, appends the
# added kernels (make --kernels FILE --add CONFIGS --measured FILE), with
# KGEN_CATALOGUE_ADD_BEST=N at most N of them, those that lower the
# leave-one-out regret most (make --add-best N). Timing a new kernel costs
# one candidate's share of step 2. With KGEN_CATALOGUE_TUNE=N, step 2b
# runs on FILE: kgen-bench times cuBLAS at the training shapes, kgen tune
# runs at the N shapes furthest below it (by FILE's fastest times and those
# just measured), and each winner faster than every kernel of FILE and of
# the list by more than 3 % at the (layout, shape) it won is added (after
# the list's), timed like them.
# KGEN_CATALOGUE_MAX_COMPILE=S fits step 4's set to S seconds of NVRTC on this
# machine (make --max-compile S: the kernels that help least per second of
# compiling dropped until compiling all of them in their layouts, one thread
# each, takes at most S), so that `kgen precompile` stays within its budget.
# With KEEP or EXTEND, S may be `kept`: at most what FILE's own kernels take,
# compiled in the same run (a budget that does not move with this machine's
# speed: the added kernels take the places of those that help least).
# `kgen catalogue twins FILE -o LIST` (no GPU) proposes such kernels: twins of
# FILE's kernels for the layouts they are kept out of where they would win.
# A WORK_DIR given again resumes (its candidates, and what its database
# holds is not timed again): a run may be split over several sessions.
# Rebuild libkgen afterwards: the catalogue is embedded at build time.
# Exit status: 0 written; 1 a step failed (the old catalogue is kept);
# 2 usage.
set -u
# paths given on the command line or in KGEN_CATALOGUE_SHAPES are the caller's; the script works from
# the repository's root
CALLER=$(pwd)
from_caller() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$CALLER/$1" ;; esac; }
cd "$(dirname "$0")/.." || exit 2
SHAPES_FILE=catalogue/train-shapes.txt

make_shapes() {
    awk '
function halton(i, b,   f, r) { f = 1; r = 0; while (i > 0) { f /= b; r += f * (i % b); i = int(i / b) } return r }
# 2^l rounded; where the base-7 point is below 1/2 a size of 48 or more is rounded to a multiple
# of 16 (16-byte rows), else left as it falls (mostly odd). Which sizes are rounded, and (below)
# which side is the small one, come from bases other than those of the sizes: a choice made by
# the parity of the index would follow the base-2 coordinate (odd i: halton(i, 2) >= 1/2), so
# that every large M was odd, every small M aligned, and the small side of a matrix-vector
# shape M only when it was 4..16
function size(l, i) { return sizep(l, i, 0.5) }
# the same, rounded where the base-7 point is below p
function sizep(l, i, p,   v) { v = int(2 ^ l + 0.5); if (halton(i, 7) < p && v >= 48) v = int(v / 16 + 0.5) * 16; return v }
# 2^l as a size of 8-byte rows (2 mod 4), or (i >= 0 and the base-7 point of i below 1/2) of 16-byte rows
function eight(l, i,   v) { v = int(2 ^ l + 0.5); if (i >= 0 && halton(i, 7) < 0.5) return int(v / 16 + 0.5) * 16; return int(v / 4) * 4 + 2 }
# at most 2^35 multiply-adds (about 3300^3): all three shrunk alike in log space
function cap(   s) { s = lm + ln + lk; if (s > 35) { lm -= (s - 35) * lm / s; ln -= (s - 35) * ln / s; lk -= (s - 35) * lk / s } }
BEGIN {
  print "# kgen catalogue training shapes: tag M N K (written by scripts/build-catalogue.sh --make-shapes:"
  print "# Halton points in log2 space, independent of bench/shapes.txt and bench/grid.txt, which judge it)"
  for (i = 1; i <= 64; i++) {      # M, N 16..16384, K 8..32768
    lm = 4 + 10 * halton(i, 2); ln = 4 + 10 * halton(i, 3); lk = 3 + 12 * halton(i, 5); cap()
    printf "g%02d %d %d %d\n", i, size(lm, i), size(ln, i), size(lk, i)
  }
  # the sets below come in pairs: the same small size, once as M and once as N.
  # One of M, N 1..16 (matrix-vector and near it), in strata of the small size S, so that a kernel
  # made for S <= 1, 2, 4, 8 or 16 (matmul_skinny ms) has a dozen measured shapes or more per side
  # and layout, enough to fit its time model (runtime/pick.c): S = 1 in 16 pairs (per side, about
  # 12 with 16-byte rows), then 2, 3..4, 5..8 and 9..16 in 8 pairs each (S from base 2 within its
  # stratum). Three in four large sizes are rounded to 16 (only those admit 16-byte loads)
  split("1 2 3 5 9", slo, " "); split("1 2 4 8 16", shi, " "); split("16 8 8 8 8", snp, " ")
  i = 0
  for (st = 1; st <= 5; st++)
    for (q = 1; q <= snp[st]; q++) {
      s = slo[st] + int((shi[st] - slo[st] + 1) * halton(q, 2))
      for (side = 0; side < 2; side++) {
        i++; lb = 8 + 6 * halton(i, 3); lk = 8 + 7 * halton(i, 5)
        l = sizep(lb, i, 0.75); k = sizep(lk, i, 0.75)
        printf "v%02d %d %d %d\n", i, side ? l : s, side ? s : l, k
      }
    }
  for (i = 1; i <= 24; i++) {      # one of M, N 16..128 (batches of a few rows), the other and K large
    ls = 4 + 3 * halton(int((i + 1) / 2), 2); lb = 10 + 4 * halton(i, 3); lk = 9 + 5 * halton(i, 5)
    lm = i % 2 ? ls : lb; ln = i % 2 ? lb : ls; cap()
    printf "t%02d %d %d %d\n", i, size(lm, i), size(ln, i), size(lk, i)
  }
  for (i = 1; i <= 32; i++) {      # M and N 16..1024, K 1024..32768: a few waves of output tiles over a deep K
    j = i + 64                     # (weight gradients), where split-K, stream-K and their C writes decide;
    lm = 4 + 6 * halton(j, 2); ln = 4 + 6 * halton(j, 3); lk = 10 + 5 * halton(j, 5); cap()   # later points than g
    printf "d%02d %d %d %d\n", i, size(lm, j), size(ln, j), size(lk, j)
  }
  for (i = 1; i <= 16; i++) {      # M and N 512..16384, K 4..64: a large output over a tiny K (outer products, low-rank
    j = i + 96                     # updates), where the C write and 16-byte loads decide; later points than d.
    lm = 9 + 5 * halton(j, 2); ln = 9 + 5 * halton(j, 3); lk = 2 + 4 * halton(j, 5)   # Three in four shapes have
    k = int(2 ^ lk + 0.5); if (halton(j, 7) < 0.75) k = int(k / 4 + 0.5) * 4          # M, N rounded to 16 and K to 4
    printf "k%02d %d %d %d\n", i, sizep(lm, j, 0.75), sizep(ln, j, 0.75), k           # (16-byte rows), as sizep
  }
  for (i = 1; i <= 16; i++) {      # one of M, N 32..256, the other 4096..131072, K 16..1024: a long, thin output over
    j = i + 112                    # a short K (convolutions as products: M = images x pixels, N = channels), where
    ls = 5 + 3 * halton(int((i + 1) / 2) + 56, 2); lb = 12 + 5 * halton(j, 3); lk = 4 + 6 * halton(j, 5)   # waves of
    lm = i % 2 ? lb : ls; ln = i % 2 ? ls : lb; cap()                                                       # thin tiles and
    printf "c%02d %d %d %d\n", i, sizep(lm, j, 0.75), sizep(ln, j, 0.75), sizep(lk, j, 0.75)               # reading A decides
  }
  n = split("96 192 320 512 896 1152 1536 2560 3072 5120", sq, " ")
  for (i = 1; i <= n; i++)
    printf "s%d %d %d %d\n", sq[i], sq[i], sq[i], sq[i]
  for (i = 1; i <= n; i++)         # the same squares one larger: no 16-byte rows, the same waves
    printf "s%d %d %d %d\n", sq[i] + 1, sq[i] + 1, sq[i] + 1, sq[i] + 1
  for (i = 1; i <= n; i++)         # and two larger: 8-byte rows (a size 2 mod 4), the same waves
    printf "s%d %d %d %d\n", sq[i] + 2, sq[i] + 2, sq[i] + 2, sq[i] + 2
  for (i = 1; i <= 16; i++) {      # M, N 64..8192, K 64..16384 with 8-byte rows: N (the rows of C, and of B in nn, tn)
    j = i + 128                    # 2 mod 4; M and K each 2 mod 4 where the base-7 point is below 1/2, else a multiple
    lm = 6 + 7 * halton(j, 2); ln = 6 + 7 * halton(j, 3); lk = 6 + 8 * halton(j, 5); cap()   # of 16. Later points than c
    printf "e%02d %d %d %d\n", i, eight(lm, j), eight(ln, -1), eight(lk, j + 1)
  }
}'
}

# what the awk programs of steps 2b and 2c below share in reading their CSV arguments: at each file's first line,
# header(FIRST, REST) maps its columns by name into c[], sets fi to the file's place among the arguments
# (by name: an empty file has no first line) and refuses a missing column (the names FIRST for argument 1,
# REST for the others); all_read() in END refuses an argument that had no header line
# shellcheck disable=SC2016 # awk's own $ fields
EXPORT_CSV='
function header(first, rest,   need, i) {
  while (++fi < ARGC && ARGV[fi] != FILENAME) ;
  had[fi] = 1; delete c; for (i = 1; i <= NF; i++) c[$i] = i
  split(fi == 1 ? first : rest, need, " ")
  for (i = 1; i in need; i++) if (!(need[i] in c)) {
    printf "build-catalogue.sh: %s: no column %s\n", FILENAME, need[i] > "/dev/stderr"; bad = 1; exit 1 }
}
function all_read(   i) {
  for (i = 1; i < ARGC; i++) if (!(i in had)) {
    printf "build-catalogue.sh: %s: empty, no header line\n", ARGV[i] > "/dev/stderr"; return 0 }
  return 1
}'

# step 2b's shapes, cublas_shapes N EXPORT BENCH_CSV... (a `kgen db export` in CSV of the candidates'
# times, kgen-bench's CSVs at the training shapes): for each training shape with M, N > 16 (below that
# matmul_skinny's whole space is among the candidates), the highest ratio, over the layouts, of the
# fastest candidate's time to cuBLAS's in kgen-bench's run; the N highest above 1 (cuBLAS is faster
# there, so faster kernels exist; the roofline says less at small shapes, where launch latency and a
# short grid rule, not the peaks)
cublas_shapes() {
    n=$1
    shift
    raw=$(awk -F, "$EXPORT_CSV"'
FNR == 1 { header("layout m n k outcome time_ms", "layout M N K cublas_ms"); next }
fi == 1 {
  if ($c["outcome"] != "ok" || $c["time_ms"] + 0 <= 0) next
  s = ($c["m"] + 0) " " ($c["n"] + 0) " " ($c["k"] + 0); kl = $c["layout"] " " s; t = $c["time_ms"] + 0
  if (!(kl in best) || t < best[kl]) best[kl] = t
  next
}
{
  m = $c["M"] + 0; n = $c["N"] + 0; t = $c["cublas_ms"] + 0
  if (m <= 16 || n <= 16 || t <= 0) next
  s = m " " n " " ($c["K"] + 0); kl = $c["layout"] " " s
  if (!(kl in best)) next
  r = best[kl] / t
  if (r > 1 && (!(s in gap) || r > gap[s])) gap[s] = r
}
END {
  if (bad || !all_read()) exit 1
  for (s in gap) printf "%.6f %s\n", gap[s], s
}' "$@") || return 1
    [ -z "$raw" ] || printf '%s\n' "$raw" | sort -k1,1gr -k2,2n -k3,3n -k4,4n | head -n "$n" |
        awk '{ printf "tune%02d %s %s %s\n", NR, $2, $3, $4 }'
}

# step 2b's new candidates, tuned_winners CANDIDATES EXPORT TUNED [BEAT] (the candidates list, `kgen db export`s
# of the candidates' times and of the tunes): each tuned (layout, shape)'s winner (the fastest final-stage
# time, else, where none has one, the fastest search time), without its layout, once however many
# layouts it won, unless measured or listed as a candidate already. With BEAT (CSV: layout m n k time_ms, the
# fastest time of the kernels it would join), only a winner that beats BEAT's time at the (layout, shape) it won
# by more than 3 % (or won where BEAT has none)
tuned_winners() {
    w=$(awk -F, "$EXPORT_CSV"'
FNR == 1 { header("template config", FILENAME == ARGV[2] ? "template config layout m n k time_ms final_ms" : "layout m n k time_ms")
  next }
function kernel(cf) { sub(/ layout=[a-z]*$/, "", cf); return $c["template"] " " cf }
fi == 1 { seen[kernel($c["config"])] = 1; next }
fi == 3 {
  kl = $c["layout"] " " ($c["m"] + 0) " " ($c["n"] + 0) " " ($c["k"] + 0); t = $c["time_ms"] + 0
  if (t > 0 && (!(kl in beat) || t < beat[kl])) beat[kl] = t
  next
}
{
  # a tune that was refused (an outcome other than ok) or has no time won nothing
  if (("outcome" in c) && $c["outcome"] != "ok") next
  kl = $c["layout"] " " ($c["m"] + 0) " " ($c["n"] + 0) " " ($c["k"] + 0)
  f = $c["final_ms"] + 0; fin = f > 0; t = fin ? f : $c["time_ms"] + 0
  if (t <= 0) next
  if (!(kl in best) || fin > hasf[kl] || (fin == hasf[kl] && t < best[kl])) {
    best[kl] = t; hasf[kl] = fin; win[kl] = kernel($c["config"]) }
}
END {
  if (bad || !all_read()) exit 1
  for (kl in win) {
    w = win[kl]; if (w in seen) continue
    if ((kl in beat) && !(best[kl] < 0.97 * beat[kl])) continue
    seen[w] = 1; print w
  }
}' "$2" "$3" ${4:+"$4"}) || return 1
    [ -z "$w" ] || printf '%s\n' "$w" | sort | { grep -vxF -f "$1" || true; }
}

# step 2c's shapes, launch_bound_shapes LAYOUT SHAPES CSV... (the training shapes file, then `kgen db export`s
# in CSV of the candidates' times, or times in those columns): the training shapes whose fastest time in LAYOUT
# is under PASS_BELOW times the fastest time measured at any (layout, shape), in the training file's order. The
# fastest time anywhere is about one launch's cost on the host; below a few of those, how fast the host
# launches decides the time, and with it which kernel is fastest
launch_bound_shapes() {
    l=$1 shapes=$2
    shift 2
    sel=$(awk -F, -v l="$l" -v f="$PASS_BELOW" "$EXPORT_CSV"'
FNR == 1 { header("layout m n k outcome time_ms", "layout m n k outcome time_ms"); next }
{
  t = $c["time_ms"] + 0
  if ($c["outcome"] != "ok" || t <= 0) next
  if (!(all > 0) || t < all) all = t
  if ($c["layout"] != l) next
  s = ($c["m"] + 0) " " ($c["n"] + 0) " " ($c["k"] + 0)
  if (!(s in best) || t < best[s]) best[s] = t
}
END {
  if (bad || !all_read()) exit 1
  for (s in best) if (best[s] < f * all) print s
}' "$@") || return 1
    [ -z "$sel" ] || printf '%s\n' "$sel" |
        awk 'NR == FNR { want[$0] = 1; next } !/^#/ && NF == 4 && ((($2 + 0) " " ($3 + 0) " " ($4 + 0)) in want)' - "$shapes"
}

# extending, catalogue_times CATALOGUE: its times as CSV in an export's columns (layout m n k outcome
# time_ms; the fastest of each time line, in ms), for launch_bound_shapes; untimed_shapes LAYOUT CATALOGUE
# SHAPES: the training shapes the catalogue has no time line for in LAYOUT
catalogue_times() {
    awk 'BEGIN { print "layout,m,n,k,outcome,time_ms" }
$1 == "time" { b = 0; for (i = 6; i <= NF; i++) if ($i != "-" && (b == 0 || $i + 0 < b)) b = $i + 0
  if (b > 0) printf "%s,%d,%d,%d,ok,%.9g\n", $2, $3, $4, $5, b / 1000 }' "$1"
}
untimed_shapes() {
    awk -v l="$1" 'NR == FNR { if ($1 == "time" && $2 == l) had[($3 + 0) " " ($4 + 0) " " ($5 + 0)] = 1; next }
!/^#/ && NF == 4 && !((($2 + 0) " " ($3 + 0) " " ($4 + 0)) in had)' "$2" "$3"
}

# the configurations of a --configs list: its lines but comments and blank ones
configs_of() { grep -v '^[[:space:]]*\(#\|$\)' "$1" || true; }

# an input file of the modes below, from the caller's directory: readable, and a file
input_file() {
    f=$(from_caller "$1")
    if [ ! -r "$f" ]; then
        echo "build-catalogue.sh: cannot read '$f'" >&2
        return 1
    elif [ ! -f "$f" ]; then
        echo "build-catalogue.sh: '$f' is not a file" >&2
        return 1
    fi
    printf '%s\n' "$f"
}
mode_usage() {
    echo "usage: scripts/build-catalogue.sh $1" >&2
    exit 2
}
case ${1:-} in
    --tuned-winners) [ $# -eq 4 ] || [ $# -eq 5 ] || mode_usage "--tuned-winners CANDIDATES EXPORT TUNED [BEAT]" ;;
    --cublas-shapes) [ $# -ge 4 ] || mode_usage "--cublas-shapes N EXPORT BENCH_CSV..." ;;
    --make-shapes) [ $# -eq 1 ] || mode_usage "--make-shapes" ;;
esac
if [ "${1:-}" = --tuned-winners ]; then
    c=$(input_file "$2") && e=$(input_file "$3") && t=$(input_file "$4") || exit 2
    b=
    [ $# -lt 5 ] || b=$(input_file "$5") || exit 2
    tuned_winners "$c" "$e" "$t" ${b:+"$b"} || exit 1
    exit 0
fi
if [ "${1:-}" = --cublas-shapes ]; then
    case $2 in '' | *[!0-9]* | 0) echo "build-catalogue.sh: --cublas-shapes: not a count '$2'" >&2; exit 2 ;; esac
    n=$2
    shift 2
    for f in "$@"; do
        input_file "$f" > /dev/null || exit 2
    done
    for f in "$@"; do
        shift
        set -- "$@" "$(from_caller "$f")"
    done
    cublas_shapes "$n" "$@" || exit 1
    exit 0
fi
if [ "${1:-}" = --make-shapes ]; then
    make_shapes > "$SHAPES_FILE.tmp" && mv "$SHAPES_FILE.tmp" "$SHAPES_FILE" || exit 1
    echo "build-catalogue.sh: wrote $SHAPES_FILE"
    exit 0
fi
if [ $# -ge 1 ] && [ "$1" = --help ]; then
    sed -n '2,/^set -u/s/^# \{0,1\}//p' "$(from_caller "$0")"
    exit 0
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: scripts/build-catalogue.sh BUILD_DIR [WORK_DIR]   (--help: what it does)" >&2
    exit 2
fi
KGEN=$(from_caller "$1")/cli/kgen
BENCH=$(from_caller "$1")/bench/kgen-bench   # step 2b's cuBLAS times
if [ ! -x "$KGEN" ]; then
    echo "build-catalogue.sh: $KGEN not found: build kgen first (cmake -S . -B $1 && cmake --build $1)" >&2
    exit 2
fi
SHAPES=$SHAPES_FILE
[ -z "${KGEN_CATALOGUE_SHAPES:-}" ] || SHAPES=$(from_caller "$KGEN_CATALOGUE_SHAPES")
NCAND=${KGEN_CATALOGUE_CANDIDATES:-32}
NKERN=${KGEN_CATALOGUE_KERNELS:-}
# a catalogue given by KGEN_CATALOGUE_KEEP or _BASE, named from the repository's root where it lies inside
# it, as the written file's header shows it
catalogue_path() {
    f=$(from_caller "$1")
    [ -r "$f" ] || { printf '%s\n' "$f"; return; }
    d=$(cd "$(dirname "$f")" && pwd -P) || return 1
    f=$d/$(basename "$f")
    printf '%s\n' "${f#"$(pwd -P)/"}"
}
KEEP=
[ -z "${KGEN_CATALOGUE_KEEP:-}" ] || KEEP=$(catalogue_path "$KGEN_CATALOGUE_KEEP") || exit 2
BASE=
[ -z "${KGEN_CATALOGUE_BASE:-}" ] || BASE=$(catalogue_path "$KGEN_CATALOGUE_BASE") || exit 2
EXTEND=
[ -z "${KGEN_CATALOGUE_EXTEND:-}" ] || EXTEND=$(catalogue_path "$KGEN_CATALOGUE_EXTEND") || exit 2
ADD=
[ -z "${KGEN_CATALOGUE_ADD:-}" ] || ADD=$(catalogue_path "$KGEN_CATALOGUE_ADD") || exit 2
if [ -n "$EXTEND" ] && { [ ! -r "$EXTEND" ] || [ ! -f "$EXTEND" ] || [ -n "$NKERN" ] ||
    [ -n "$BASE" ] || [ -n "${KGEN_CATALOGUE_KEEP:-}" ] || [ -n "${KGEN_CATALOGUE_NEW_CANDIDATES:-}" ]; }; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_EXTEND: '$EXTEND' must be a readable catalogue, and it keeps its own" \
        "kernels (no KGEN_CATALOGUE_KERNELS, KGEN_CATALOGUE_BASE, KGEN_CATALOGUE_KEEP or" \
        "KGEN_CATALOGUE_NEW_CANDIDATES)" >&2
    exit 2
fi
if [ -n "$ADD" ] && { [ -z "$EXTEND" ] || [ ! -r "$ADD" ] || [ ! -f "$ADD" ] ||
    [ -z "$(configs_of "$ADD")" ]; }; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_ADD: '$ADD' must be a readable --configs list of one configuration" \
        "or more, and it adds to KGEN_CATALOGUE_EXTEND's catalogue" >&2
    exit 2
fi
MAX_COMPILE=${KGEN_CATALOGUE_MAX_COMPILE:-}
case $MAX_COMPILE in
    '') ;;
    kept)
        if [ -z "$KEEP$EXTEND" ]; then
            echo "build-catalogue.sh: KGEN_CATALOGUE_MAX_COMPILE=kept fits the set to what a kept catalogue's kernels take: set KGEN_CATALOGUE_KEEP or KGEN_CATALOGUE_EXTEND" >&2
            exit 2
        fi ;;
    *[!0-9.]* | *.*.* | .* | *.)
        echo "build-catalogue.sh: KGEN_CATALOGUE_MAX_COMPILE: '$MAX_COMPILE' is not a number of seconds (or kept)" >&2
        exit 2 ;;
esac
ADD_BEST=${KGEN_CATALOGUE_ADD_BEST:-}
case $ADD_BEST in
    '') ;;
    *[!0-9]* | 0*)
        echo "build-catalogue.sh: KGEN_CATALOGUE_ADD_BEST: '$ADD_BEST' is not a count of kernels (1 or more)" >&2
        exit 2 ;;
    *) if [ -z "$ADD" ] && { [ -z "$EXTEND" ] || [ "${KGEN_CATALOGUE_TUNE:-0}" = 0 ]; }; then
           echo "build-catalogue.sh: KGEN_CATALOGUE_ADD_BEST chooses among the kernels of KGEN_CATALOGUE_ADD (or," \
               "extending, step 2b's winners with KGEN_CATALOGUE_TUNE): give both" >&2
           exit 2
       fi ;;
esac
if [ -n "$KEEP" ] && { [ ! -r "$KEEP" ] || [ ! -f "$KEEP" ] || [ -n "$NKERN" ] || [ -n "${KGEN_CATALOGUE_TUNE:-}" ] ||
    [ -n "$BASE" ]; }; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_KEEP: '$KEEP' must be a readable catalogue, and it keeps its own kernels" \
        "(no KGEN_CATALOGUE_KERNELS, KGEN_CATALOGUE_TUNE or KGEN_CATALOGUE_BASE)" >&2
    exit 2
fi
if [ -n "$BASE" ] && { [ ! -r "$BASE" ] || [ ! -f "$BASE" ]; }; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_BASE: cannot read the catalogue '$BASE'" >&2
    exit 2
fi
if [ -n "$BASE" ] && [ -n "${KGEN_CATALOGUE_NEW_CANDIDATES:-}" ]; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_BASE and KGEN_CATALOGUE_NEW_CANDIDATES: the candidates are the one or" \
        "the other" >&2
    exit 2
fi
if [ ! -r "$SHAPES" ]; then
    echo "build-catalogue.sh: no training shapes '$SHAPES'" >&2
    exit 2
fi
# every setting checked before anything is made or run
case ${KGEN_CATALOGUE_TUNE:-0} in
    '' | *[!0-9]*) echo "build-catalogue.sh: KGEN_CATALOGUE_TUNE: not a count '$KGEN_CATALOGUE_TUNE'" >&2; exit 2 ;;
esac
case $NCAND in
    '' | *[!0-9]* | 0) echo "build-catalogue.sh: KGEN_CATALOGUE_CANDIDATES: not a count '$NCAND'" >&2; exit 2 ;;
esac
case $NKERN in
    *[!0-9]* | 0) echo "build-catalogue.sh: KGEN_CATALOGUE_KERNELS: not a count '$NKERN'" >&2; exit 2 ;;
esac
if [ -n "$BASE" ] && [ -n "$NKERN" ] && [ "$(grep -c '^kernel ' "$BASE")" -gt "$NKERN" ]; then
    echo "build-catalogue.sh: KGEN_CATALOGUE_KERNELS: $NKERN is fewer than the $(grep -c '^kernel ' "$BASE") kernels of" \
        "KGEN_CATALOGUE_BASE's $BASE, which a rebuild starts from" >&2
    exit 2
fi
PASSES=${KGEN_CATALOGUE_PASSES:-3}
case $PASSES in
    [1-8]) ;;
    *) echo "build-catalogue.sh: KGEN_CATALOGUE_PASSES: not a count from 1 to 8 '$PASSES'" >&2; exit 2 ;;
esac
PASS_BELOW=${KGEN_CATALOGUE_PASS_BELOW:-3}
case $PASS_BELOW in
    '' | *[!0-9.]* | *.*.* | .) echo "build-catalogue.sh: KGEN_CATALOGUE_PASS_BELOW: not a number '$PASS_BELOW'" >&2; exit 2 ;;
esac
LAYOUTS=${KGEN_CATALOGUE_LAYOUTS:-nn nt tn tt}
[ -n "$(printf '%s' "$LAYOUTS" | tr -d ' ')" ] ||
    { echo "build-catalogue.sh: KGEN_CATALOGUE_LAYOUTS: no layout in '$LAYOUTS'" >&2; exit 2; }
for l in $LAYOUTS; do
    case $l in nn|nt|tn|tt) ;; *) echo "build-catalogue.sh: KGEN_CATALOGUE_LAYOUTS: unknown layout '$l'" >&2; exit 2 ;; esac
done
if [ $# -ge 2 ]; then
    WORK=$(from_caller "$2")
    mkdir -p "$WORK" || exit 1
else
    WORK=$(mktemp -d) || exit 1
    trap 'rm -rf "$WORK"' EXIT
fi

# the GPU: its architecture, name and driver
"$KGEN" device > "$WORK/device.txt" || exit 1
ARCH=$(sed -n 's/.*Compute capability.*(sm_\([0-9]*\)).*/\1/p' "$WORK/device.txt" | head -n 1)
DRIVER=$(sed -n 's/.*CUDA driver version *//p' "$WORK/device.txt" | head -n 1)
if command -v nvidia-smi > /dev/null 2>&1; then
    D=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n 1) && [ -n "$D" ] &&
        DRIVER="$D (CUDA $DRIVER)"
fi
if [ -z "$ARCH" ]; then
    echo "build-catalogue.sh: could not read the GPU's architecture from 'kgen device'" >&2
    exit 1
fi
DATE=$(date -u +%Y-%m-%d)
OUT=catalogue/sm_$ARCH.txt
echo "build-catalogue.sh: sm_$ARCH, driver $DRIVER; work in $WORK"

t0=$(date +%s)
# extending: the kernels to add, timed at every training pair (WORK_DIR/added.txt: KGEN_CATALOGUE_ADD's; with
# step 2b's winners, WORK_DIR/adding.txt: both), and the list make adds from (KGEN_CATALOGUE_ADD itself, so that
# the header names it, or WORK_DIR/adding.txt)
ADDLIST=
ADDARG=
# a WORK_DIR from an earlier, interrupted or partial run resumes: its candidates, and the tuner skips what
# its database holds
FROM="$WORK/candidates.txt"
TUNED=             # yes: step 2b's winners are among the candidates (the header says so)
NTUNE=${KGEN_CATALOGUE_TUNE:-0}   # step 2b: none unless asked, 8 with BASE, 12 with new candidates (below)
if [ -n "$KEEP$EXTEND" ]; then
    # a catalogue measured again or extended: its kernels, as a --configs list (a WORK_DIR resumed must hold
    # the same), and extending, the kernels to add (WORK_DIR/added.txt)
    "$KGEN" catalogue kernels "$KEEP$EXTEND" -o "$WORK/candidates.new" || exit 1
    if [ ! -s "$WORK/candidates.new" ]; then
        echo "build-catalogue.sh: no kernel lines in $KEEP$EXTEND" >&2
        exit 1
    fi
    if [ -s "$WORK/candidates.txt" ] && ! cmp -s "$WORK/candidates.new" "$WORK/candidates.txt"; then
        echo "build-catalogue.sh: $WORK/candidates.txt is not the kernels of $KEEP$EXTEND: give another WORK_DIR" >&2
        exit 1
    fi
    if [ -n "$ADD" ]; then
        configs_of "$ADD" > "$WORK/added.new" || exit 1
        # one the catalogue holds already would be refused by make, after the timing
        if grep -xF -f "$WORK/candidates.new" "$WORK/added.new" > "$WORK/added.dup"; then
            echo "build-catalogue.sh: KGEN_CATALOGUE_ADD: already a kernel of $EXTEND: $(head -n 1 "$WORK/added.dup")" >&2
            rm -f "$WORK/added.new" "$WORK/added.dup" "$WORK/candidates.new"
            exit 2
        fi
        rm -f "$WORK/added.dup"
        if [ -s "$WORK/added.txt" ] && ! cmp -s "$WORK/added.new" "$WORK/added.txt"; then
            echo "build-catalogue.sh: $WORK/added.txt is not the configurations of $ADD: give another WORK_DIR" >&2
            exit 1
        fi
        mv "$WORK/added.new" "$WORK/added.txt" || exit 1
        ADDLIST=$WORK/added.txt
        ADDARG=$ADD
    elif [ -s "$WORK/added.txt" ]; then
        echo "build-catalogue.sh: $WORK/added.txt holds kernels to add and KGEN_CATALOGUE_ADD is not set: give another" \
            "WORK_DIR" >&2
        exit 1
    fi
    mv "$WORK/candidates.new" "$WORK/candidates.txt" || exit 1
    if [ -n "$KEEP" ]; then
        echo "build-catalogue.sh: measuring again the $(wc -l < "$WORK/candidates.txt") kernels of $KEEP"
        FROM="the kernels of $KEEP"
    else
        nnew=0
        for l in $LAYOUTS; do
            untimed_shapes "$l" "$EXTEND" "$SHAPES" > "$WORK/new-shapes-$l.txt" || exit 1
            nnew=$((nnew + $(wc -l < "$WORK/new-shapes-$l.txt")))
        done
        if [ -z "$ADD" ] && [ "$nnew" = 0 ] && [ "$NTUNE" = 0 ]; then
            echo "build-catalogue.sh: $EXTEND has times at every training pair of $SHAPES in $LAYOUTS, and no" \
                "KGEN_CATALOGUE_ADD or KGEN_CATALOGUE_TUNE: nothing to time, nothing written"
            exit 0
        fi
        echo "build-catalogue.sh: extending $EXTEND: its $(wc -l < "$WORK/candidates.txt") kernels at the" \
            "$nnew training pairs it has no times for${ADD:+, and the}" \
            "${ADD:+$(wc -l < "$WORK/added.txt") kernels of $ADD at every pair}"
        FROM="the kernels of $EXTEND, timed at the training pairs it had no times for"
        [ -z "$ADD" ] || FROM="$FROM, and those of $ADD at every pair${ADD_BEST:+ (at most $ADD_BEST kept)}"
    fi
elif [ -n "$BASE" ]; then
    # a rebuild from a catalogue's kernels: they come first in WORK_DIR's candidates, step 2b's winners after
    "$KGEN" catalogue kernels "$BASE" -o "$WORK/candidates.new" || exit 1
    if [ ! -s "$WORK/candidates.new" ]; then
        echo "build-catalogue.sh: no kernel lines in $BASE" >&2
        exit 1
    fi
    if [ -s "$WORK/candidates.txt" ]; then
        if ! head -n "$(wc -l < "$WORK/candidates.new")" "$WORK/candidates.txt" | cmp -s - "$WORK/candidates.new"; then
            echo "build-catalogue.sh: $WORK/candidates.txt does not start with the kernels of $BASE: give another" \
                "WORK_DIR" >&2
            exit 1
        fi
        # after them: step 2b's winners, listed by an earlier run of this WORK_DIR, or candidates added by hand
        more=$(($(wc -l < "$WORK/candidates.txt") - $(wc -l < "$WORK/candidates.new")))
        rm -f "$WORK/candidates.new"
        echo "build-catalogue.sh: resuming with $WORK/candidates.txt (the kernels of $BASE first) and $WORK/build.db"
    else
        mv "$WORK/candidates.new" "$WORK/candidates.txt" || exit 1
        echo "build-catalogue.sh: candidates: the $(wc -l < "$WORK/candidates.txt") kernels of $BASE"
        more=0
    fi
    FROM="the kernels of $BASE"
    if [ "$more" -gt 0 ] && [ -e "$WORK/tune-shapes.txt" ]; then
        TUNED=yes
    elif [ "$more" -gt 0 ]; then
        FROM="$FROM and $more more from WORK_DIR"
    fi
    NTUNE=${KGEN_CATALOGUE_TUNE:-8}
elif [ -s "$WORK/candidates.txt" ]; then
    echo "build-catalogue.sh: resuming with $WORK/candidates.txt and $WORK/build.db"
elif [ -r "catalogue/candidates-sm_$ARCH.txt" ] && [ -z "${KGEN_CATALOGUE_NEW_CANDIDATES:-}" ]; then
    # the committed catalogue's candidates: a rebuild measures the same kernels
    cp "catalogue/candidates-sm_$ARCH.txt" "$WORK/candidates.txt" || exit 1
    echo "build-catalogue.sh: candidates from catalogue/candidates-sm_$ARCH.txt"
    FROM="catalogue/candidates-sm_$ARCH.txt"
else
    "$KGEN" catalogue candidates --shapes "$SHAPES" --arch "sm_$ARCH" --max "$NCAND" -o "$WORK/candidates.new" ||
        exit 1
    # the seeds: configurations earlier tuning on this architecture found best, measured alike
    if [ -r "catalogue/seeds-sm_$ARCH.txt" ]; then
        cat "catalogue/seeds-sm_$ARCH.txt" >> "$WORK/candidates.new" || exit 1
    fi
    mv "$WORK/candidates.new" "$WORK/candidates.txt" || exit 1
    FROM="$NCAND model candidates and the seeds"
    NTUNE=${KGEN_CATALOGUE_TUNE:-12}
fi

# time_in L SHAPES DB LOG [CONFIGS]: the candidates (or CONFIGS' kernels) timed at SHAPES in layout L into
# database DB, the tuner's output in WORK_DIR/LOG.txt and .err. Every candidate timed alike, as a GEMM called
# in a loop runs and as kgen-bench compares with cuBLAS: launches queued back to back, L2 warm (one launch at a
# time would add its launch latency, more for kernels of two launches); no final stage
time_in() {
    "$KGEN" tune --configs "${5:-$WORK/candidates.txt}" --shapes "$2" --layout "$1" --db "$3" \
        --back-to-back --final 0 --max-seconds 0.1 --top 0 > "$WORK/$4.txt" 2> "$WORK/$4.err"
    rc=$?
    tail -n 3 "$WORK/$4.err"
    [ $rc = 0 ] || { echo "build-catalogue.sh: kgen tune failed in layout $1 (see $WORK/$4.err)" >&2; exit 1; }
}
time_candidates() {
    for l in $LAYOUTS; do
        if [ -z "$EXTEND" ]; then
            echo "build-catalogue.sh: timing the candidates in layout $l"
            time_in "$l" "$SHAPES" "$WORK/build.db" "tune-$l"
            continue
        fi
        if [ -s "$WORK/new-shapes-$l.txt" ]; then
            echo "build-catalogue.sh: timing the kernels of $EXTEND at its $(wc -l < "$WORK/new-shapes-$l.txt")" \
                "untimed shapes in layout $l"
            time_in "$l" "$WORK/new-shapes-$l.txt" "$WORK/build.db" "tune-$l"
        fi
        if [ -n "$ADDLIST" ]; then
            echo "build-catalogue.sh: timing the kernels to add in layout $l"
            time_in "$l" "$SHAPES" "$WORK/build.db" "add-$l" "$ADDLIST"
        fi
    done
}

if [ "$NTUNE" -gt 0 ] && [ ! -e "$WORK/tune-shapes.txt" ] && [ ! -x "$BENCH" ]; then
    echo "build-catalogue.sh: step 2b compares the candidates with cuBLAS through $BENCH, which is not there" \
        "(kgen-bench is built where the CUDA toolkit has cuBLAS); KGEN_CATALOGUE_TUNE=0 leaves step 2b out" >&2
    exit 2
fi
time_candidates
if [ "$NTUNE" -gt 0 ]; then
    if [ -e "$WORK/build.db" ]; then
        "$KGEN" db export --db "$WORK/build.db" --outcome ok --format csv -o "$WORK/ok.csv" || exit 1
    else
        # extending with nothing timed yet (no new shapes, no list to add)
        echo "device,template,config,layout,m,n,k,outcome,time_ms,final_ms" > "$WORK/ok.csv" || exit 1
    fi
    # the times the tunes are to beat: the candidates', and extending, the catalogue's too
    FASTEST=$WORK/ok.csv
    if [ -n "$EXTEND" ]; then
        FASTEST=$WORK/fastest.csv
        { catalogue_times "$EXTEND"
          awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
              { print $c["layout"] "," $c["m"] "," $c["n"] "," $c["k"] "," $c["outcome"] "," $c["time_ms"] }' "$WORK/ok.csv"
        } > "$FASTEST" || exit 1
    fi
    if [ ! -e "$WORK/tune-shapes.txt" ]; then
        # cuBLAS at the training shapes: kgen-bench, without a tuning database (kg_matmul's choice runs and
        # is checked beside it), each layout's CSV kept so that a resumed run does not time it again
        for l in $LAYOUTS; do
            [ ! -s "$WORK/cublas-$l.csv" ] || continue
            echo "build-catalogue.sh: cuBLAS at the training shapes in layout $l (kgen-bench)"
            if ! "$BENCH" --no-db --shapes "$SHAPES" --layout "$l" --samples 5 --min-ms 1 \
                --csv "$WORK/cublas-$l.tmp" > "$WORK/cublas-$l.txt" 2> "$WORK/cublas-$l.err"; then
                echo "build-catalogue.sh: kgen-bench failed in layout $l (see $WORK/cublas-$l.err)" >&2
                exit 1
            fi
            mv "$WORK/cublas-$l.tmp" "$WORK/cublas-$l.csv" || exit 1
        done
        set --
        for l in $LAYOUTS; do set -- "$@" "$WORK/cublas-$l.csv"; done
        cublas_shapes "$NTUNE" "$FASTEST" "$@" > "$WORK/tune-shapes.new" || exit 1
        mv "$WORK/tune-shapes.new" "$WORK/tune-shapes.txt" || exit 1
    fi
    NT=$(($(wc -l < "$WORK/tune-shapes.txt")))
    [ "$NT" -gt 0 ] || echo "build-catalogue.sh: the fastest candidate is as fast as cuBLAS at every training shape" \
        "with M and N above 16: step 2b tunes nothing"
    for l in $LAYOUTS; do
        [ "$NT" -gt 0 ] || break
        echo "build-catalogue.sh: kgen tune, its defaults, at $WORK/tune-shapes.txt in layout $l"
        "$KGEN" tune --shapes "$WORK/tune-shapes.txt" --layout "$l" --db "$WORK/tune.db" \
            > "$WORK/tuned-$l.txt" 2> "$WORK/tuned-$l.err" ||
            { echo "build-catalogue.sh: kgen tune failed in layout $l (see $WORK/tuned-$l.err)" >&2; exit 1; }
    done
    if [ "$NT" -gt 0 ]; then
        "$KGEN" db export --db "$WORK/tune.db" --outcome ok --format csv -o "$WORK/tuned.csv" || exit 1
        if [ -n "$EXTEND" ]; then
            # extending: a winner joins the kernels to add where it beats the catalogue's and theirs by more than 3 %
            cat "$WORK/candidates.txt" ${ADDLIST:+"$ADDLIST"} > "$WORK/known.txt" || exit 1
            tuned_winners "$WORK/known.txt" "$WORK/ok.csv" "$WORK/tuned.csv" "$FASTEST" > "$WORK/winners.txt" || exit 1
        else
            tuned_winners "$WORK/candidates.txt" "$WORK/ok.csv" "$WORK/tuned.csv" > "$WORK/winners.txt" || exit 1
        fi
    else
        : > "$WORK/winners.txt" || exit 1
    fi
    if [ -s "$WORK/winners.txt" ] && [ -n "$EXTEND" ]; then
        cat ${ADDLIST:+"$ADDLIST"} "$WORK/winners.txt" > "$WORK/adding.txt" || exit 1
        ADDLIST=$WORK/adding.txt
        ADDARG=$WORK/adding.txt
        echo "build-catalogue.sh: $(wc -l < "$WORK/winners.txt") tuned winners join the kernels to add"
        TUNED=yes
        for l in $LAYOUTS; do
            echo "build-catalogue.sh: timing the tuned winners in layout $l"
            time_in "$l" "$SHAPES" "$WORK/build.db" "win-$l" "$WORK/winners.txt"
        done
    elif [ -s "$WORK/winners.txt" ]; then
        { echo "# kgen tune's winners (its defaults) at the $NT training shapes furthest below cuBLAS," \
            "$(sed -n 's/^Device 0: "\(.*\)"/\1/p' "$WORK/device.txt" | head -n 1), $(date -u +%Y-%m-%d)"
          cat "$WORK/winners.txt"; } >> "$WORK/candidates.txt" || exit 1
        echo "build-catalogue.sh: $(wc -l < "$WORK/winners.txt") tuned winners join the candidates"
        TUNED=yes
        time_candidates
    fi
fi
if [ -n "$TUNED" ]; then
    n=$NTUNE
    [ ! -r "$WORK/tune-shapes.txt" ] || n=$(($(wc -l < "$WORK/tune-shapes.txt")))
    FROM="$FROM, with kgen tune's winners at $n shapes furthest below cuBLAS"
    [ -z "$EXTEND" ] || [ -n "$ADD" ] || [ -z "$ADD_BEST" ] || FROM="$FROM (at most $ADD_BEST kept)"
fi
if [ -n "$EXTEND" ] && [ ! -e "$WORK/build.db" ]; then
    echo "build-catalogue.sh: $EXTEND has times at every training pair of $SHAPES in $LAYOUTS, and step 2b found" \
        "no kernel to add: nothing to time, nothing written"
    exit 0
fi
# step 2c: the launch-bound shapes timed again, each pass and layout a `kgen tune` process of its own; make
# takes the median of each kernel's passes
"$KGEN" db export --db "$WORK/build.db" --format csv -o "$WORK/measured.csv" || exit 1
set -- "$WORK/measured.csv"
if [ "$PASSES" -gt 1 ]; then
    "$KGEN" db export --db "$WORK/build.db" --outcome ok --format csv -o "$WORK/ok.csv" || exit 1
    # extending: the catalogue's times count too (a pair is launch-bound by its fastest time of all)
    set -- "$WORK/ok.csv"
    if [ -n "$EXTEND" ]; then
        catalogue_times "$EXTEND" > "$WORK/catalogue-times.csv" || exit 1
        set -- "$@" "$WORK/catalogue-times.csv"
    fi
    nb=0
    for l in $LAYOUTS; do
        launch_bound_shapes "$l" "$SHAPES" "$@" > "$WORK/pass-shapes-$l.txt" || exit 1
        if [ -n "$EXTEND" ]; then
            # the catalogue's kernels again where they were timed, the added ones at every such pair
            awk 'NR == FNR { n[$2 " " $3 " " $4] = 1; next } ($2 " " $3 " " $4) in n' "$WORK/new-shapes-$l.txt" \
                "$WORK/pass-shapes-$l.txt" > "$WORK/pass-new-shapes-$l.txt" || exit 1
            [ -n "$ADDLIST" ] || mv "$WORK/pass-new-shapes-$l.txt" "$WORK/pass-shapes-$l.txt" || exit 1
        fi
        nb=$((nb + $(wc -l < "$WORK/pass-shapes-$l.txt")))
    done
    set -- "$WORK/measured.csv"
    p=2
    while [ "$p" -le "$PASSES" ]; do
        for l in $LAYOUTS; do
            [ -s "$WORK/pass-shapes-$l.txt" ] || continue
            echo "build-catalogue.sh: pass $p of $PASSES: the candidates at the $(wc -l < "$WORK/pass-shapes-$l.txt")" \
                "shapes in layout $l whose fastest time is under $PASS_BELOW times the fastest anywhere"
            if [ -z "$ADDLIST" ]; then
                time_in "$l" "$WORK/pass-shapes-$l.txt" "$WORK/pass-$p.db" "pass-$p-$l"
                continue
            fi
            [ ! -s "$WORK/pass-new-shapes-$l.txt" ] ||
                time_in "$l" "$WORK/pass-new-shapes-$l.txt" "$WORK/pass-$p.db" "pass-$p-$l"
            time_in "$l" "$WORK/pass-shapes-$l.txt" "$WORK/pass-$p.db" "pass-$p-add-$l" "$ADDLIST"
        done
        if [ -e "$WORK/pass-$p.db" ]; then
            "$KGEN" db export --db "$WORK/pass-$p.db" --format csv -o "$WORK/pass-$p.csv" || exit 1
            set -- "$@" "$WORK/pass-$p.csv"
        fi
        p=$((p + 1))
    done
    [ "$nb" = 0 ] || FROM="$FROM; $nb launch-bound pairs timed in $PASSES passes"
fi
# the header's command line: one line of at most 255 characters (a long path cut, not the hours of timing lost)
CMD="scripts/build-catalogue.sh (${MAX_COMPILE:+--max-compile $MAX_COMPILE, }training shapes $SHAPES, candidates: $FROM${NKERN:+, at most $NKERN kernels})"
[ "${#CMD}" -le 255 ] || CMD=$(printf '%.252s...' "$CMD")
"$KGEN" catalogue make "$@" ${NKERN:+--max-kernels} ${NKERN:+"$NKERN"} ${KEEP:+--kernels} ${KEEP:+"$KEEP"} \
    ${EXTEND:+--kernels} ${EXTEND:+"$EXTEND"} ${ADDARG:+--add} ${ADDARG:+"$ADDARG"} \
    ${ADDARG:+${ADD_BEST:+--add-best}} ${ADDARG:+${ADD_BEST:+"$ADD_BEST"}} ${MAX_COMPILE:+--max-compile} ${MAX_COMPILE:+"$MAX_COMPILE"} \
    ${EXTEND:+--measured} ${EXTEND:+"$EXTEND"} ${BASE:+--start} ${BASE:+"$BASE"} --date "$DATE" --driver "$DRIVER" \
    --command "$CMD" -o "$OUT" || exit 1
echo "build-catalogue.sh: wrote $OUT in $(($(date +%s) - t0)) s; rebuild kgen to embed it"
