#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 10 on the GPU: B through cp.async inside the register-prefetch
# pipeline (ba=1) against the kernels the shapes run now; the GPU test of
# matmul_warp (with ba configurations); compute-sanitizer on ba kernels.
# Usage: bench/scripts/round10.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
H=$B/bench/kgen-harness
for g in large mid small; do
  timeout 150 $H --configs bench/configs/r10-$g.txt --shapes bench/configs/r10-shapes-$g.txt --csv $O/r10-$g.csv > $O/r10-$g.txt 2>&1
  echo "r10 $g rc=$?"
done
{ timeout 150 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?"; } > $O/tests.txt 2>&1
tail -3 $O/tests.txt
bash bench/scripts/sanitize.sh $B "131 264 100 1" "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4 ba=1" "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=1 cc=1 ba=1 splitk=2 red=4" \
  "bm=64 bn=64 bk=8 wm=32 wn=32 stages=1 vec=2 ba=1 mid=1 layout=nt" \
  > $O/r10-sanitizer.txt 2>&1
grep "rc=" $O/r10-sanitizer.txt
