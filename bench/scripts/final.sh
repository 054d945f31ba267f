#!/bin/bash
# The recorded run on the GPU: kgen tune (narrowed to the harness rounds'
# region, bench/scripts/tune-groups.txt), then kgen-bench with kg_matmul
# reading that database, then the GPU tests of bench/ and matmul_warp.
# Usage: bench/scripts/final.sh BUILD_DIR OUT_DIR CSV_NAME
B=$1; O=$2; CSV=$3
cd "$(dirname "$0")/../.."
export KGEN_CACHE_DIR=$PWD/$B/kcache
DB=/tmp/kgen-tune.db
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,driver_version --format=csv > $O/facts.txt 2>&1
timeout 330 bash bench/scripts/tune.sh $PWD/$B/gen/kgen --db $DB --jobs 16 > $O/tune.txt 2>&1; echo "tune rc=$?" >> $O/tune.txt
KGEN_DB=$DB KGEN_VERBOSE=1 timeout 120 $B/bench/kgen-bench --csv $O/$CSV > $O/bench.txt 2>&1; echo "bench rc=$?" >> $O/bench.txt
{ timeout 100 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?";
  timeout 40 bash tests/bench/bench_cli.sh $B/bench/kgen-bench run; echo "bench_cli run rc=$?"; } > $O/tests.txt 2>&1
cp $DB $O/tune.db 2>/dev/null
grep -E "^[a-z0-9]+ .*strategy|rc=" $O/tune.txt
cat $O/bench.txt
grep -E "passed|FAIL|CHECK|rc=|SKIP" $O/tests.txt | head -20
