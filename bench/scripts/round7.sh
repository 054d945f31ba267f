#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 7 on the GPU: mid=1 (the next tile's copies halfway through the
# multiplication) against mid=0 for each shape's winner; the GPU test of
# matmul_warp (with wk and mid configurations); compute-sanitizer on the
# kernels with warp groups along K (shapes their vector loads admit).
# Usage: bench/scripts/round7.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
H=$B/bench/kgen-harness
{ timeout 150 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?"; } > $O/tests.txt 2>&1
tail -3 $O/tests.txt
timeout 300 $H --configs bench/configs/r7-mid.txt --shapes bench/configs/r7-shapes.txt --csv $O/r7-mid.csv > $O/r7.txt 2>&1; echo "r7 rc=$?"
bash bench/scripts/sanitize.sh $B "131 264 100 1" "bm=64 bn=128 bk=48 wm=32 wn=64 wk=3 stages=3 vec=4" "bm=64 bn=64 bk=32 wm=32 wn=32 wk=4 stages=2 splitk=3 red=4" \
  "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 mid=1" "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 mid=1" \
  > $O/r7-sanitizer.txt 2>&1
grep "rc=" $O/r7-sanitizer.txt
