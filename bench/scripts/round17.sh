#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Rounds 17-19 on the GPU (sixth session): packed operands for the odd shapes.
#  17: the 16-byte kernels on lda, ldb padded to multiples of 4 (harness
#      --ld-multiple 4) against the single-float winners on the callers'
#      rows, and the bandwidth of a row-padding copy (bench/tools/packbench.cu,
#      built into BUILD_DIR/packbench with nvcc);
#  18/19: pack=1 kernels through libkgen's launcher (kgen-bench --config:
#      the packing included in each call), 18 before and 19 after the
#      template kept B's loads early (bench/NOTES.md technique 29).
# Usage: bench/scripts/round17.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
S=bench/configs/r17-shapes.txt
[ -x $B/packbench ] && $B/packbench > $O/r17-packbench.txt 2>&1
timeout 250 $B/bench/kgen-harness --configs bench/configs/r17-pad.txt --shapes $S --ld-multiple 4 --csv $O/r17-pad.csv > $O/r17-pad.txt 2>&1
timeout 150 $B/bench/kgen-harness --configs bench/configs/r17-unpadded.txt --shapes $S --csv $O/r17-unpadded.csv > $O/r17-unpadded.txt 2>&1
run() { # name config
  timeout 120 $B/bench/kgen-bench --shapes $S --template matmul_warp --config "$2" --csv $O/r19-$1.csv > $O/r19-$1.txt 2>&1
  echo "$1 rc=$?"
}
run base4095 "bm=128 bn=256 bk=16 wm=64 wn=64 vec=1 stages=3 raster=8"
run pk-sk "bm=128 bn=256 bk=16 wm=64 wn=64 vec=4 pack=1 stages=1 raster=8 sk=1 red=4"
run pk "bm=128 bn=256 bk=16 wm=64 wn=64 vec=4 pack=1 stages=1 raster=8"
run base3001 "bm=64 bn=128 bk=16 wm=32 wn=64 vec=1 stages=3 pred=1 cc=1 raster=8"
run pk64-sk "bm=64 bn=128 bk=16 wm=32 wn=64 vec=4 pack=1 stages=1 ba=1 raster=8 sk=1 red=4"
run pk64 "bm=64 bn=128 bk=16 wm=32 wn=64 vec=4 pack=1 stages=1 ba=1 raster=8"
