#!/bin/sh
# bench/run.sh -- reproduces the committed comparison of kgen with cuBLAS.
#
#   bench/run.sh BUILD_DIR [OUT_DIR]
#
# On a GPU machine, with kgen built in BUILD_DIR (this script builds
# nothing): kgen-bench without a tuning database (kg_matmul's built-in
# choice, as a new user gets it) against cuBLAS FP32 (pedantic) on the
# shapes of bench/shapes.txt ("suite") and bench/grid.txt ("grid"), in each
# layout, then one chart per shape list. It writes, in OUT_DIR (default
# bench/results), for the GPU it runs on (its name in lower case, "NVIDIA "
# dropped: h200) and today's date:
#
#   <gpu>-<date>-<set>-<layout>.csv   one per shape list and layout
#   <gpu>-<date>-<set>.svg            kgen/cuBLAS per shape and layout
#   <gpu>-<date>-facts.txt            the GPU, driver, commit and commands,
#                                     and how long `kgen precompile` took cold
#
# The set "precompile" times `kgen precompile --jobs <cores>` from cold:
# an empty disk cache of its own and CUDA_CACHE_DISABLE=1 (on a GPU
# machine NVRTC's output also lands in the driver's compute cache, which
# would serve a second run).
# KGEN_BENCH_SETS (default "precompile suite grid") and KGEN_BENCH_LAYOUTS
# (default "nn nt tn tt") pick a part, e.g. to split the run over several
# sessions; a chart is drawn from every CSV of its set and date present.
# Exit status: 0 every run correct; 1 a run failed or a result was wrong
# (the others still run); 2 usage, or the build lacks the programs.
set -u
if [ $# -ge 1 ] && [ "$1" = --help ]; then
    sed -n '2,29s/^# \{0,1\}//p' "$0"
    exit 0
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/run.sh BUILD_DIR [OUT_DIR]   (--help: what it runs and writes)" >&2
    exit 2
fi
if ! B=$(cd "$1" 2> /dev/null && pwd); then
    echo "run.sh: no build directory '$1'" >&2
    exit 2
fi
if [ $# -ge 2 ]; then
    case $2 in /*) OUT=$2 ;; *) OUT=$PWD/$2 ;; esac
fi
cd "$(dirname "$0")/.." || exit 2
[ $# -ge 2 ] || OUT=$PWD/bench/results
BENCH=$B/bench/kgen-bench
PLOT=$B/bench/kgen-bench-plot
KGEN=$B/cli/kgen
SETS=${KGEN_BENCH_SETS:-precompile suite grid}
LAYOUTS=${KGEN_BENCH_LAYOUTS:-nn nt tn tt}
for s in $SETS; do
    case $s in precompile|suite|grid) ;; *) echo "run.sh: KGEN_BENCH_SETS: unknown set '$s' (precompile, suite, grid)" >&2; exit 2 ;; esac
done
need() {
    if [ ! -x "$1" ]; then
        echo "run.sh: $1 not found: build kgen with cuBLAS first (cmake -S . -B $B && cmake --build $B)" >&2
        exit 2
    fi
}
need "$BENCH"
need "$PLOT"
case " $SETS " in *" precompile "*) need "$KGEN" ;; esac
for l in $LAYOUTS; do
    case $l in nn|nt|tn|tt) ;; *) echo "run.sh: KGEN_BENCH_LAYOUTS: unknown layout '$l' (nn, nt, tn, tt)" >&2; exit 2 ;; esac
done
NAME=$("$BENCH" --device-name) || exit 1
GPU=$(printf '%s\n' "$NAME" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
DATE=$(date +%Y-%m-%d)
mkdir -p "$OUT" || exit 1
P=$OUT/$GPU-$DATE
{
    echo "device: $NAME"
    command -v nvidia-smi > /dev/null &&
        nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv,noheader | sed 's/^/driver, max SM clock, power limit: /'
    echo "kgen commit: $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet HEAD 2> /dev/null || echo ' (modified)')"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
} >> "$P-facts.txt"
rc=0
cache=
trap '[ -z "$cache" ] || rm -rf "$cache"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for s in $SETS; do
    if [ "$s" = precompile ]; then
        echo "== kgen precompile, cold"
        jobs=$(nproc 2> /dev/null || echo 4)
        cache=$(mktemp -d) || exit 1
        echo "kgen precompile --jobs $jobs (cold: an empty disk cache, CUDA_CACHE_DISABLE=1)" >> "$P-facts.txt"
        t0=$(date +%s%N)
        KGEN_CACHE_DIR=$cache/kgen CUDA_CACHE_DISABLE=1 "$KGEN" precompile --jobs "$jobs" > "$cache/log" 2>&1
        r=$?
        t1=$(date +%s%N)
        cat "$cache/log"
        line=$(tail -n 1 "$cache/log")
        rm -rf "$cache"
        cache=
        echo "  $line" >> "$P-facts.txt"
        echo "  exit status $r, $(( (t1 - t0) / 1000000 )) ms for the process" >> "$P-facts.txt"
        # a GPU without a catalogue has nothing to precompile (kg_matmul's model-only choice): no failure
        case $line in *"no catalogue for"*) ;; *) [ $r -eq 0 ] || rc=1 ;; esac
        continue
    fi
    shapes=bench/shapes.txt
    [ "$s" = grid ] && shapes=bench/grid.txt
    for l in $LAYOUTS; do
        echo "== $s, layout $l"
        echo "kgen-bench --no-db --shapes $shapes --layout $l --csv $(basename "$P")-$s-$l.csv" >> "$P-facts.txt"
        "$BENCH" --no-db --shapes "$shapes" --layout "$l" --csv "$P-$s-$l.csv"
        r=$?
        echo "  exit status $r" >> "$P-facts.txt"
        [ $r -eq 0 ] || rc=1
    done
    set -- "$P-$s"-*.csv
    if [ -e "$1" ]; then
        "$PLOT" -o "$P-$s.svg" --title "$NAME, $s shapes ($shapes), no tuning database, $DATE" "$@" || rc=1
    fi
done
echo "written: $(printf "%s " "$P"-*)"
exit $rc
