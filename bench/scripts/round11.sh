#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 11 on the GPU (fifth session): pred=1 and the even split of edge
# vectors against pred=0 and against the fourth session's template (its
# files in BUILD_DIR/old-templates, taken from git); the GPU test of
# matmul_warp (with pred configurations); compute-sanitizer on pred kernels.
# Usage: bench/scripts/round11.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
H=$B/bench/kgen-harness
for g in large mid; do
  timeout 170 $H --configs bench/configs/r11-$g.txt --shapes bench/configs/r11-shapes-$g.txt --csv $O/r11-$g.csv > $O/r11-$g.txt 2>&1
  echo "r11 $g rc=$?"
  KGEN_TEMPLATE_PATH=$B/old-templates timeout 100 $H --configs bench/configs/r11-old-$g.txt --shapes bench/configs/r11-shapes-$g.txt --csv $O/r11-old-$g.csv > $O/r11-old-$g.txt 2>&1
  echo "r11 old $g rc=$?"
done
{ timeout 150 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?"; } > $O/tests.txt 2>&1
tail -3 $O/tests.txt
bash bench/scripts/sanitize.sh $B "131 264 100 1" "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 vec=1 pred=1" \
  "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 pred=1" \
  "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 pred=1" \
  "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4 pred=1" > $O/r11-sanitizer.txt 2>&1
grep "rc=" $O/r11-sanitizer.txt
