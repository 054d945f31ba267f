#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 8 on the GPU: split-K's beta pass overlapped with the main kernel
# (programmatic dependent launch) against one after the other, in the
# harness (--overlap 1 / 0, same process per setting) and in kgen-bench
# (KGEN_OVERLAP=1 / 0, reading the tuning database of the third session);
# the GPU tests; compute-sanitizer on overlapped split-K and stream-K.
# Usage: bench/scripts/round8.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
H=$B/bench/kgen-harness
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,driver_version --format=csv > $O/facts.txt 2>&1
for g in split:1000 smallm:smallm bigk:bigk tiny:tiny; do
  c=${g%%:*}; s=${g##*:}
  for ov in 1 0; do
    timeout 120 $H --configs bench/configs/r8-$c.txt --shapes bench/configs/r8-shapes-$s.txt --overlap $ov \
      --csv $O/r8-$c-ov$ov.csv >> $O/r8.txt 2>&1; echo "r8 $c overlap=$ov rc=$?"
  done
done
for ov in 1 0; do
  KGEN_OVERLAP=$ov KGEN_DB=$PWD/$B/tune.db KGEN_VERBOSE=1 timeout 120 $B/bench/kgen-bench \
    --csv $O/r8-bench-ov$ov.csv >> $O/r8-bench.txt 2>&1; echo "bench overlap=$ov rc=$?"
done
bash bench/scripts/sanitize.sh $B "1000 264 300 2" "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 splitk=3 red=4 cc=1" \
  "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4 splitk=4 red=4" \
  "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 sk=1 red=1" \
  > $O/r8-sanitizer.txt 2>&1
grep "rc=" $O/r8-sanitizer.txt
(cd $B && timeout 200 ctest -L gpu -V) > $O/gputests.txt 2>&1; echo "ctest -L gpu rc=$?"
grep -E "^[0-9]+: [0-9]+ passed|tests passed|Failed" $O/gputests.txt | tail -12
