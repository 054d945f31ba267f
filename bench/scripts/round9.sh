#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 9 on the GPU: the beta pass overlapped with its main kernel under four
# launch choices (kgen-harness --overlap 0, 1, 3, 4), split-K winners of
# sq1024, odd1000, smallM and bigK.
# Usage: bench/scripts/round9.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export HOME=/tmp/home KGEN_CACHE_DIR=/tmp/kgen-cache; mkdir -p $HOME
for ov in 0 1 3 4; do
  timeout 130 $B/bench/kgen-harness --configs bench/configs/r9-carveout.txt --shapes bench/configs/r9-shapes.txt \
    --overlap $ov --csv $O/x.csv > $O/log$ov.txt 2>&1; echo "ov$ov rc=$?"
  sed "s/^/ov$ov,/" $O/x.csv >> $O/r9-carveout.csv; rm $O/x.csv
done
