#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Rounds 13 and 14 on the GPU (fifth session): stream-K on the single-float
# 128x256 kernel and on the vector one (13), and on the 64x128 single-float
# tile (14), each against sk=0, through kgen-harness.
# Usage: bench/scripts/round13.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
for r in "r13-sk r13-shapes" "r14-sk64 r14-shapes"; do
  set -- $r
  timeout 300 $B/bench/kgen-harness --configs bench/configs/$1.txt --shapes bench/configs/$2.txt --csv $O/$1.csv > $O/$1.txt 2>&1
  echo "$1 rc=$?"
done
