#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 2 on the GPU: correctness of every path, timings around round 1's
# winners, and an Nsight Compute profile of the best kernel and cuBLAS's.
# Usage: bench/scripts/round2.sh BUILD_DIR OUT_DIR
B=$1; O=$2; H=$B/bench/kgen-harness
cd "$(dirname "$0")/../.." || exit 1
C=bench/configs
{ $H --configs $C/r1-correct.txt --shapes $C/r1-correct-shapes.txt --alpha 1.5 --beta -0.75 --samples 1 --min-ms 0; echo "rc=$?";
  $H --configs $C/r1-correct.txt --shapes $C/r1-correct-shapes.txt --samples 1 --min-ms 0; echo "rc=$?"; } > $O/correct.txt 2>&1
grep '^sq4096\|^sq8192' bench/shapes.txt > /tmp/sq.txt
$H --configs $C/r2-square.txt --shapes /tmp/sq.txt --csv $O/square.csv > $O/square.txt 2>&1; echo "rc=$?" >> $O/square.txt
grep -v '^sq' bench/shapes.txt > /tmp/sp.txt
$H --configs $C/r2-special.txt --shapes /tmp/sp.txt --csv $O/special.csv > $O/special.txt 2>&1; echo "rc=$?" >> $O/special.txt
printf 'sq4096 4096 4096 4096\n' > /tmp/s1.txt
grep 'bk=16 wm=32 wn=64 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 stages=2 raster=8$' $C/r2-square.txt > /tmp/p.txt
NCU="ncu --clock-control none --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis"
{ $NCU --kernel-name regex:kgen_mmw $H --configs /tmp/p.txt --shapes /tmp/s1.txt --samples 1 --min-ms 0;
  $NCU --kernel-name regex:gemm $H --configs /tmp/p.txt --shapes /tmp/s1.txt --samples 1 --min-ms 0; } > $O/ncu.txt 2>&1
grep -c WRONG $O/correct.txt; grep 'rc=\|FAILED' $O/*.txt
sort -t, -k10 -nr $O/square.csv | cut -d, -f1,7,9,10,12,13 | sed 's/ minb=1//; s/ bounds=1 layout=nn//; s/tm=4 tn=4 ln=8 at=1 bt=0 pad=4 //' | head -40
grep -v '^compiled' $O/special.txt | sort -k1,1 -k8,8nr | awk '{c[$1]++} c[$1]<=4' | cut -c1-12,44-63,69-200 | sed 's/ minb=1//; s/ bounds=1 layout=nn//; s/tm=4 tn=4 ln=8 at=1 bt=0 pad=4 //'
grep -E 'Function Name|^  [a-z_0-9]+.*\(|Registers Per|Achieved Occupancy|Theoretical Occ|Issue Slots Busy|Issued Ipc|No Eligible|Bank' $O/ncu.txt | head -40
