#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# compute-sanitizer (racecheck, memcheck, synccheck) on matmul_warp
# configurations through `kgen run`, alpha 1.5 and beta -0.5, on one shape;
# one "TOOL [CONFIG] rc=N" line each (rc 0: clean and correct).
# Usage: bench/scripts/sanitize.sh BUILD_DIR "M N K REPS" CONFIG...
B=$1; read -r m n k reps <<< "$2"; shift 2
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for cfg in "$@"; do
  for tool in racecheck memcheck synccheck; do
    timeout 60 $S --tool $tool --error-exitcode 9 $B/gen/kgen run --template matmul_warp --config "$cfg" \
      --m $m --n $n --k $k --alpha 1.5 --beta -0.5 --reps $reps > /tmp/san.txt 2>&1
    rc=$?; grep -E "SUMMARY|disagree|error" /tmp/san.txt | tail -2
    echo "$tool [$cfg] rc=$rc"
  done
done
