#!/usr/bin/env bash
# acceptance.sh -- the measurements the tuner's issue asks for, in one run on
# a GPU machine (not a CTest test: it takes minutes and wants every GPU).
#
#   acceptance.sh KGEN OUTDIR
#
# 1. An exhaustive sweep of the matmul template at 4096^3 on every GPU of the
#    host (fresh database and kernel cache): wall time and candidate counts.
# 2. The same sweep again, fully cached: its wall time.
# 3. Random, annealing and model-ranked search with a budget of 256 GPU
#    evaluations (5% of the space), each on a fresh database: the best found
#    against the exhaustive best, and the share of the space evaluated.
# 4. The model-ranked strategy over both templates (matmul and matmul_warp).
# 5. The exhaustive sweep exported as CSV: the recording the strategy tests
#    replay (tests/autotune/data/).
set -u
K=$1 O=$2
mkdir -p "$O"
W=$(mktemp -d)
export KGEN_CACHE_DIR=$W/cache
shape=(--m 4096 --n 4096 --k 4096)
nvidia-smi -L >"$O/gpus.txt" 2>&1
stamp() { date +%s.%N; }

t0=$(stamp)
"$K" tune --template matmul "${shape[@]}" --devices all --time 330 --db "$W/ex.db" --top 20 --json \
    >"$O/exhaustive.json" 2>"$O/exhaustive.log"
echo "exhaustive rc=$? wall $(awk -v a="$t0" -v b="$(stamp)" "BEGIN { printf \"%.1f\", b - a }") s" | tee -a "$O/summary.txt"
grep -v "^kgen tune:" "$O/exhaustive.log" | tee -a "$O/summary.txt"

t0=$(stamp)
"$K" tune --template matmul "${shape[@]}" --devices all --db "$W/ex.db" --top 3 >/dev/null 2>"$O/cached.log"
echo "cached rerun rc=$? wall $(awk -v a="$t0" -v b="$(stamp)" "BEGIN { printf \"%.1f\", b - a }") s" | tee -a "$O/summary.txt"
grep -E "evaluated|wall time|outcomes" "$O/cached.log" | tee -a "$O/summary.txt"

for s in random anneal model; do
    t0=$(stamp)
    "$K" tune --template matmul "${shape[@]}" --devices all --strategy "$s" --budget 256 --seed 1 \
        --db "$W/$s.db" --top 1 >/dev/null 2>"$O/$s.log"
    echo "$s rc=$? wall $(awk -v a="$t0" -v b="$(stamp)" "BEGIN { printf \"%.1f\", b - a }") s" | tee -a "$O/summary.txt"
    grep -E "evaluated|outcomes|^  1 " "$O/$s.log" | tee -a "$O/summary.txt"
done

t0=$(stamp)
timeout 120 "$K" tune "${shape[@]}" --devices all --strategy model --budget 64 --db "$W/both.db" --top 5 \
    >/dev/null 2>"$O/both.log"
echo "model over matmul+matmul_warp rc=$? wall $(awk -v a="$t0" -v b="$(stamp)" "BEGIN { printf \"%.1f\", b - a }") s" | tee -a "$O/summary.txt"
grep -v "^kgen tune:" "$O/both.log" | tee -a "$O/summary.txt"

"$K" db export --db "$W/ex.db" -o "$O/exhaustive.csv"
"$K" db export --db "$W/both.db" -o "$O/both.csv"
rm -rf "$W"
