#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 24 on the GPU (eighth session), bench/NOTES.md technique 33: the
# tuner's final stage on odd1000 alone. Three of tune-groups.txt's groups
# that hold odd1000 (lines 6, 7, 4 of its groups) are tuned into one fresh
# database, each ending with the final stage over every row so far; then
# kgen-bench times kg_matmul's choice three times. Also runs the tuner's GPU
# tests (autotune.gpu_tune, autotune.gpu_kill_resume).
# Usage: bench/scripts/round24.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=$PWD/$B/kcache HOME=/tmp/home
mkdir -p $HOME
(cd $B && timeout 300 ctest -R "autotune.gpu" -V) > $O/autotune-gpu.txt 2>&1; echo "ctest rc=$?" >> $O/autotune-gpu.txt
grep -E "passed|FAIL|rc=" $O/autotune-gpu.txt | tail -8
grep "^odd1000 " bench/shapes.txt > $O/odd1000.txt
DB=$O/r24.db; rm -f $DB
for g in 6 7 4; do
  space=$(grep -v "^#" bench/scripts/tune-groups.txt | grep -v '^$' | sed -n "${g}p" | cut -d'|' -f2)
  timeout 120 $B/gen/kgen tune --template matmul_warp --shapes $O/odd1000.txt --space "$space" --top 5 --db $DB \
      --jobs 16 >> $O/tune.txt 2>&1
  echo "group $g rc=$?" >> $O/tune.txt
done
sed -n '/^odd1000/,/^wall/p' $O/tune.txt | cut -c1-250
for _ in 1 2 3; do
  KGEN_DB=$DB KGEN_VERBOSE=1 timeout 60 $B/bench/kgen-bench --shapes $O/odd1000.txt 2>&1 | grep -E "^odd1000|exact" | cut -c1-300
done
