#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Runs kgen tune for every group of bench/scripts/tune-groups.txt on the
# shapes of bench/shapes.txt with those tags. Extra arguments go to every
# `kgen tune` (e.g. --db FILE, or --dry-run --arch sm_90 to compile only).
# Usage: bench/scripts/tune.sh KGEN [kgen tune options...]
KGEN=$1; shift
cd "$(dirname "$0")/../.." || exit 1
rc=0
while IFS='|' read -r tags space; do
    case "$tags" in ''|'#'*) continue ;; esac
    shapes=$(mktemp)
    for t in $tags; do grep "^$t " bench/shapes.txt >> "$shapes"; done
    echo "== kgen tune $tags: $space"
    "$KGEN" tune --template matmul_warp --shapes "$shapes" --space "$space" --top 3 "$@" || rc=1
    rm -f "$shapes"
done < bench/scripts/tune-groups.txt
exit $rc
