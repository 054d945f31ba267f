#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 6 on the GPU: tile shapes for the odd shapes' waves (r6-odd.txt on
# odd3001 / odd4095), 64 x 64 warp tiles split along K for odd1000
# (r6-1000.txt), and compute-sanitizer (racecheck, memcheck) on kernels
# with warp groups along K, whose partial tiles reuse the pipeline's
# shared memory.
# Usage: bench/scripts/round6.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
H=$B/bench/kgen-harness
timeout 200 $H --configs bench/configs/r6-odd.txt --shapes bench/configs/r6-shapes-odd.txt --csv $O/r6a-odd.csv > $O/r6a.txt 2>&1; echo "r6a rc=$?"
timeout 120 $H --configs bench/configs/r6-1000.txt --shapes bench/configs/r6-shapes-1000.txt --csv $O/r6b-1000.csv > $O/r6b.txt 2>&1; echo "r6b rc=$?"
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
for cfg in "bm=64 bn=128 bk=48 wm=32 wn=64 wk=3 stages=3 vec=4" "bm=64 bn=128 bk=32 wm=32 wn=64 wk=2 stages=1 vec=1" \
           "bm=64 bn=64 bk=32 wm=32 wn=32 wk=4 stages=2 splitk=3 red=4"; do
  for tool in racecheck memcheck; do
    timeout 60 $S --tool $tool --error-exitcode 9 $B/gen/kgen run --template matmul_warp --config "$cfg" \
      --m 131 --n 263 --k 101 --alpha 1.5 --beta -0.5 --reps 1 2>&1 | tail -2
    echo "$tool [$cfg] rc=${PIPESTATUS[0]}"
  done
done
} > $O/r6c-sanitizer.txt 2>&1
grep "rc=" $O/r6c-sanitizer.txt
