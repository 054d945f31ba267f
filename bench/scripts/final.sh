#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# The recorded run on the GPU: kgen tune (narrowed to the harness rounds'
# region, bench/scripts/tune-groups.txt), then kgen-bench with kg_matmul
# reading that database (and again with KGEN_OVERLAP=0), kg_matmul's defaults,
# the overlap's ordering check, then the GPU tests. PART (default all):
# "tune" runs the tuning and the benches, "tests" the checks and GPU tests,
# so that each fits one 10-minute call of the device machine.
# Usage: bench/scripts/final.sh BUILD_DIR OUT_DIR CSV_NAME [all|tune|tests]
B=$1; O=$2; CSV=$3; PART=${4:-all}
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=$PWD/$B/kcache
DB=/tmp/kgen-tune.db
if [ "$PART" != tests ]; then
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,driver_version --format=csv > $O/facts.txt 2>&1
timeout 420 bash bench/scripts/tune.sh $PWD/$B/gen/kgen --db $DB --jobs 16 > $O/tune.txt 2>&1; echo "tune rc=$?" >> $O/tune.txt
KGEN_DB=$DB KGEN_VERBOSE=1 timeout 120 $B/bench/kgen-bench --csv $O/$CSV > $O/bench.txt 2>&1; echo "bench rc=$?" >> $O/bench.txt
KGEN_OVERLAP=0 KGEN_DB=$DB KGEN_VERBOSE=1 timeout 120 $B/bench/kgen-bench --csv $O/${CSV%.csv}-no-overlap.csv > $O/no-overlap.txt 2>&1; echo "no-overlap bench rc=$?" >> $O/no-overlap.txt
KGEN_VERBOSE=1 timeout 120 $B/bench/kgen-bench --csv $O/${CSV%.csv}-defaults.csv > $O/defaults.txt 2>&1; echo "defaults bench rc=$?" >> $O/defaults.txt
cp $DB $O/tune.db 2>/dev/null
grep -E "^[a-z0-9]+ .*strategy|rc=" $O/tune.txt
cat $O/bench.txt
grep -E "^(sq|odd|small|big|tiny)|rc=" $O/no-overlap.txt $O/defaults.txt | cut -c1-100
fi
[ "$PART" = tune ] && exit 0
{ timeout 300 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?";
  timeout 40 bash tests/bench/bench_cli.sh $B/bench/kgen-bench run; echo "bench_cli run rc=$?"; } > $O/tests.txt 2>&1
# split-K's additions must wait for the overlapped beta pass: without the wait the check fails
rm -rf /tmp/nowait; cp -r templates /tmp/nowait; sed -i '/w:linec("kgen_dep_wait();"/d' /tmp/nowait/matmul_warp.lua
{ for t in /tmp/nowait templates; do for b in 0 -0.5; do
  timeout 60 $B/gen/kgen run --template-dir $t --template matmul_warp \
    --config "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 splitk=4 red=4 cc=1" --m 1500 --n 2000 --k 64 \
    --alpha -0.75 --beta $b --reps 3 2>&1 | grep -E "launch|error|disagree|agree|max"; echo "template-dir $t beta $b rc=${PIPESTATUS[0]}"
done; done; } > $O/nowait.txt 2>&1
(cd $B && timeout 480 ctest -L gpu -V) > $O/gputests.txt 2>&1; echo "ctest -L gpu rc=$?" >> $O/gputests.txt
grep -E "passed|FAIL|CHECK|rc=|SKIP" $O/tests.txt | head -20
cat $O/nowait.txt
grep -E "^[0-9]+: [0-9]+ passed|tests passed|Failed|rc=" $O/gputests.txt | tail -12
