# bench/lib.sh -- what bench/compare-catalogues.sh and bench/choice-regret.sh
# both check before they time anything. Sourced after `set -u`, with ME (the
# script's name in messages) and CALLER (the caller's directory) set; each
# refusal prints "ME: why" and exits (2: usage; 1: no GPU).
# shellcheck shell=sh disable=SC2154 # ME and CALLER are the sourcing script's

# a path as given, relative to the caller's directory
from_caller() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$CALLER/$1" ;; esac; }

# need_build BUILD_DIR (as given): sets B, BENCH (bench/kgen-bench) and KGEN (cli/kgen), both built
need_build() {
    B=$(from_caller "$1")
    BENCH=$B/bench/kgen-bench
    KGEN=$B/cli/kgen
    for p in "$BENCH" "$KGEN"; do
        if [ ! -x "$p" ]; then
            echo "$ME: $p not found: build kgen with cuBLAS first (cmake -S . -B $1 && cmake --build $1)" >&2
            exit 2
        fi
    done
}

# check_layouts: LAYOUTS from KGEN_BENCH_LAYOUTS (default all four), each a layout, at least one
check_layouts() {
    LAYOUTS=${KGEN_BENCH_LAYOUTS:-nn nt tn tt}
    [ -n "$(printf '%s' "$LAYOUTS" | tr -d ' \t')" ] || { echo "$ME: KGEN_BENCH_LAYOUTS: no layout named" >&2; exit 2; }
    for l in $LAYOUTS; do
        case $l in nn|nt|tn|tt) ;; *) echo "$ME: KGEN_BENCH_LAYOUTS: unknown layout '$l' (nn, nt, tn, tt)" >&2; exit 2 ;; esac
    done
}

# check_out_dir OUT_DIR (as given, or empty): sets OUT, where one given must be a directory this user can
# write in, or not exist yet (nothing is made here)
check_out_dir() {
    OUT=
    [ -n "$1" ] || return 0
    OUT=$(from_caller "$1")
    if [ -e "$OUT" ] && { [ ! -d "$OUT" ] || [ ! -w "$OUT" ]; }; then
        echo "$ME: OUT_DIR '$1' is not a directory this user can write in" >&2
        exit 2
    fi
}

# gpu_arch: the GPU answers (else exit 1 with kgen-bench's reason) and ARCH is its sm_XY's XY
gpu_arch() {
    "$BENCH" --device-name > /dev/null || exit 1
    ARCH=$("$KGEN" device 2> /dev/null | sed -n 's/.*Compute capability.*(sm_\([0-9]*\)).*/\1/p' | head -n 1)
    if [ -z "$ARCH" ]; then
        echo "$ME: could not read the GPU's architecture from 'kgen device'" >&2
        exit 1
    fi
}

# catalogue_arch FILE: the XY of a catalogue's `arch XY` line
catalogue_arch() {
    sed -n 's/^arch[ 	]*\([0-9]*\)[ 	]*$/\1/p' "$1" | head -n 1
}

# catalogue_for_gpu FILE NAME: FILE's `arch` line is the GPU's (ARCH): kg_matmul takes a KGEN_CATALOGUE
# only as its own architecture's
catalogue_for_gpu() {
    carch=$(catalogue_arch "$1")
    if [ "$carch" != "$ARCH" ]; then
        echo "$ME: '$2' is a catalogue for sm_${carch:-?}, and this GPU is sm_$ARCH: kg_matmul would not use it here" >&2
        exit 2
    fi
}
