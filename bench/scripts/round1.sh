#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 1 on the GPU: device facts, correctness of every path, then timings.
# Usage: bench/scripts/round1.sh BUILD_DIR OUT_DIR
B=$1; O=$2; H=$B/bench/kgen-harness
cd "$(dirname "$0")/../.." || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.max.mem,power.limit,temperature.gpu --format=csv > $O/facts.txt 2>&1
$H --info >> $O/facts.txt 2>&1
$H --configs bench/configs/r1-correct.txt --shapes bench/configs/r1-correct-shapes.txt --alpha 1.5 --beta -0.75 --samples 1 --min-ms 0 > $O/correct.txt 2>&1
echo "rc=$?" >> $O/correct.txt
$H --configs bench/configs/r1-correct.txt --shapes bench/configs/r1-correct-shapes.txt --samples 1 --min-ms 0 >> $O/correct.txt 2>&1
echo "rc=$?" >> $O/correct.txt
printf 'sq4096 4096 4096 4096\n' > /tmp/s1.txt
$H --configs bench/configs/r1-square.txt --shapes /tmp/s1.txt --csv $O/square.csv > $O/square.txt 2>&1
echo "rc=$?" >> $O/square.txt
grep -v '^sq\|^odd4095\|^odd3001' bench/shapes.txt > /tmp/s2.txt
$H --configs bench/configs/r1-special.txt --shapes /tmp/s2.txt --csv $O/special.csv > $O/special.txt 2>&1
echo "rc=$?" >> $O/special.txt
grep '^odd4095\|^odd3001\|^sq8192' bench/shapes.txt > /tmp/s3.txt
grep 'vec=1\|^#' bench/configs/r1-special.txt > /tmp/c3.txt
echo 'matmul_warp bm=128 bn=128 bk=8 wm=32 wn=64 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 stages=2' >> /tmp/c3.txt
echo 'matmul_warp bm=128 bn=256 bk=8 wm=64 wn=64 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 stages=2' >> /tmp/c3.txt
$H --configs /tmp/c3.txt --shapes /tmp/s3.txt --csv $O/odd.csv > $O/odd.txt 2>&1
echo "rc=$?" >> $O/odd.txt
tail -n 3 $O/correct.txt; grep -c WRONG $O/correct.txt
sort -t, -k10 -n -r $O/square.csv | head -8 | cut -d, -f1,7,9,10,12,13 | cut -c1-200
grep -v '^compiled' $O/special.txt | sort -k1,1 -k8,8nr | awk '{c[$1]++} c[$1]<=3' | cut -c1-150
grep -v '^compiled' $O/odd.txt | cut -c1-150
