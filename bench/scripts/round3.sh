#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 3 on the GPU: correctness of every path again (the copies changed),
# 64 x 64 warp tiles, split-K and unaligned shapes, and stall reasons.
# Usage: bench/scripts/round3.sh BUILD_DIR OUT_DIR
B=$1; O=$2; H=$B/bench/kgen-harness
cd "$(dirname "$0")/../.." || exit 1
C=bench/configs
{ $H --configs $C/r1-correct.txt --shapes $C/r1-correct-shapes.txt --alpha 1.5 --beta -0.75 --samples 1 --min-ms 0; echo "rc=$?";
  $H --configs $C/r1-correct.txt --shapes $C/r1-correct-shapes.txt --samples 1 --min-ms 0; echo "rc=$?"; } > $O/correct.txt 2>&1
grep '^sq4096\|^sq8192' bench/shapes.txt > /tmp/sq.txt
$H --configs $C/r3-square.txt --shapes /tmp/sq.txt --csv $O/square.csv > $O/square.txt 2>&1; echo "rc=$?" >> $O/square.txt
grep -v '^sq\|^smallK\|^tiny' bench/shapes.txt > /tmp/sp.txt
$H --configs $C/r3-special.txt --shapes /tmp/sp.txt --csv $O/special.csv > $O/special.txt 2>&1; echo "rc=$?" >> $O/special.txt
printf 'sq4096 4096 4096 4096\n' > /tmp/s1.txt
grep 'bm=128 bn=256 bk=16 wm=64 wn=64 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 stages=3 raster=8$' $C/r3-square.txt > /tmp/p.txt
M=smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed.sum
{ ncu --clock-control none --launch-count 1 --metrics $M --kernel-name regex:kgen_mmw $H --configs /tmp/p.txt --shapes /tmp/s1.txt --samples 1 --min-ms 0;
  ncu --clock-control none --launch-count 1 --metrics $M --kernel-name regex:gemm $H --configs /tmp/p.txt --shapes /tmp/s1.txt --samples 1 --min-ms 0; } > $O/ncu.txt 2>&1
grep -c WRONG $O/correct.txt; grep 'rc=\|FAILED\|again' $O/*.txt
sort -t, -k10 -nr $O/square.csv | cut -d, -f1,7,10,12,13 | sed 's/ minb=1//; s/ bounds=1 layout=nn//; s/tm=4 tn=4 ln=8 at=1 bt=0 pad=4 //; s/ splitk=1//' | head -30
grep -v '^compiled' $O/special.txt | grep -v again | sort -k1,1 -k8,8nr | awk '{c[$1]++} c[$1]<=4' | cut -c1-12,44-63,69-200 | sed 's/ minb=1//; s/ bounds=1 layout=nn//; s/tm=4 tn=4 ln=8 at=1 bt=0 pad=4 //'
grep -E 'kgen_mmw|gemm|stalled|bank|issue_active|warps_active|pipe_fma|inst_executed.sum|shared_ld' $O/ncu.txt | grep -v PROF | cut -c1-120
