#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 12 on the GPU (fifth session): the rolled loop over a tile's values
# of k (ku) on the odd and square shapes' kernels.
# Usage: bench/scripts/round12.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
H=$B/bench/kgen-harness
for g in large mid; do
  timeout 200 $H --configs bench/configs/r12-$g.txt --shapes bench/configs/r11-shapes-$g.txt --csv $O/r12-$g.csv > $O/r12-$g.txt 2>&1
  echo "r12 $g rc=$?"
done
