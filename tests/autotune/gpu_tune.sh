#!/usr/bin/env bash
# shellcheck disable=SC2016 # checks are quoted strings, expanded when they run
# gpu_tune.sh -- the tuner on a real GPU (CTest label `gpu`; exit 77 without).
#
#   gpu_tune.sh KGEN GPU_LOOKUP TEMPLATE_DIR
#
# 1. A sweep over the test-only template `faulty` (a correct kernel, one that
#    writes out of bounds, one that never ends) records fault and hang and
#    finishes, keeping the correct kernel.
# 2. A short real sweep of `matmul` records every candidate; run again, it
#    evaluates nothing anew and leaves every row as it was (resume).
# 3. Two shards of the same sweep, merged, hold the same configurations and
#    outcomes as the whole sweep.
# 4. Annealing with a budget runs exactly that many candidates on the GPU.
# 5. A suite of shapes (--shapes) tunes each shape.
# 6. The final stage: the fastest rows of the shape timed again back to
#    back; exactly that many rows carry a final time, a later final stage
#    replaces them, the same run again (nothing new) times nothing and
#    starts no GPU worker, and kg_matmul takes the fastest finalist (gpu_lookup).
# 7. --back-to-back: the search's samples are launches queued back to back;
#    the same kernels run no slower than flushed one at a time.
set -u
KGEN=$1 LOOKUP=$2 TDIR=$3
"$LOOKUP" --probe
rc=$?
if [ "$rc" = 77 ]; then echo "SKIPPED: no GPU"; exit 77; fi
[ "$rc" = 0 ] || { echo "FAIL: gpu_lookup --probe exited $rc"; exit 1; }

# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
# outcome CONFIG CSV: the outcome column of the row whose config is CONFIG
outcome() { awk -F, -v c="$1" 'NR > 1 && $11 == c { print $12 }' "$2"; }
# keys CSV: template, config and outcome of every row, sorted
keys() { awk -F, 'NR > 1 { print $4 "|" $11 "|" $12 }' "$1" | sort; }

# 1. faults and hangs are recorded, and the sweep finishes
"$KGEN" tune --template-dir "$TDIR" --template faulty --m 200 --n 136 --k 40 --db "$tmp/f.db" --timeout 10 \
    >"$tmp/f.out" 2>&1
rc=$?
cat "$tmp/f.out"
check "faulty sweep exits 0 (got $rc)" test "$rc" = 0
"$KGEN" db export --db "$tmp/f.db" -o "$tmp/f.csv"
for bs in 8 16; do
    check "bs=$bs mode=0 ok" test "$(outcome "bs=$bs mode=0" "$tmp/f.csv")" = ok
    check "bs=$bs mode=1 fault" test "$(outcome "bs=$bs mode=1" "$tmp/f.csv")" = fault
    check "bs=$bs mode=2 hang" test "$(outcome "bs=$bs mode=2" "$tmp/f.csv")" = hang
done
check "the reasons name the failures" grep -q "illegal\|ILLEGAL" "$tmp/f.csv"

# 2. a short real sweep, then the same again: all from the database
space="bm=64,128 bn=64,128 bk=8,16 tm=4,8 tn=4,8 pad=0 vec=4"
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --db "$tmp/t.db" --csv \
    >"$tmp/t1.csv" 2>"$tmp/t1.err"
rc=$?
cat "$tmp/t1.err" "$tmp/t1.csv"
check "sweep exits 0 (got $rc)" test "$rc" = 0
check "sweep evaluated 32" grep -q "32 evaluated (0 from the database)" "$tmp/t1.err"
check "sweep has a winner in its CSV" test "$(awk -F, 'NR == 2 { print $4 }' "$tmp/t1.csv")" = 1
"$KGEN" db export --db "$tmp/t.db" -o "$tmp/before.csv"
check "some candidates ran correctly" grep -q ",ok," "$tmp/before.csv"
# (--final 0: the final stage, section 6, writes final times)
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --db "$tmp/t.db" --final 0 \
    >/dev/null 2>"$tmp/t2.err"
rc=$?
check "second run exits 0 (got $rc)" test "$rc" = 0
check "second run is all from the database" grep -q "32 evaluated (32 from the database)" "$tmp/t2.err"
"$KGEN" db export --db "$tmp/t.db" -o "$tmp/after.csv"
check "second run changed no row" cmp -s "$tmp/before.csv" "$tmp/after.csv"

# 3. shards, merged, are the whole sweep
for i in 0 1; do
    "$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --shard "$i/2" \
        --db "$tmp/s$i.db" >/dev/null 2>"$tmp/s$i.err"
    check "shard $i exits 0" test $? = 0
done
"$KGEN" db merge --db "$tmp/m.db" "$tmp/s0.db" "$tmp/s1.db"
check "merge exits 0" test $? = 0
"$KGEN" db export --db "$tmp/m.db" -o "$tmp/m.csv"
check "merged shards hold the whole sweep's configurations and outcomes" \
    test "$(keys "$tmp/m.csv" | sed 's/|slow$/|ok/')" = "$(keys "$tmp/before.csv" | sed 's/|slow$/|ok/')"

# 4. a budget is a number of GPU evaluations
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --strategy anneal --budget 5 \
    --devices all --db "$tmp/a.db" >/dev/null 2>"$tmp/a.err"
check "anneal exits 0" test $? = 0
"$KGEN" db export --db "$tmp/a.db" -o "$tmp/a.csv"
ran=$(awk -F, 'NR > 1 && $12 ~ /^(ok|slow|wrong|fault|hang|error)$/' "$tmp/a.csv" | wc -l)
check "anneal with --budget 5 ran 5 candidates (ran $ran)" test "$ran" = 5

# 5. a suite of shapes in one run: each gets its rows and its winner; at
#    K = 129 the float4 loads cannot be used (lda = 129), so those are
#    recorded as pruned_shape and a vec=1 kernel wins
printf '# tag M N K\nsmall 256 192 128\nodd 257 193 129\n' >"$tmp/shapes.txt"
"$KGEN" tune --template matmul --space "bm=64,128 bn=64 bk=8 tm=4 tn=4 pad=0 vec=1,4" --shapes "$tmp/shapes.txt" \
    --db "$tmp/t.db" >/dev/null 2>"$tmp/shapes.err"
check "--shapes exits 0" test $? = 0
"$KGEN" db list --db "$tmp/t.db" >"$tmp/list.out"
cat "$tmp/list.out"
check "db list shows all three shapes with a winner" test "$(grep -c "x.*bm=" "$tmp/list.out")" = 3
check "the odd shape's winner loads floats one by one" grep -q "257x193x129 .*vec=1" "$tmp/list.out"
"$KGEN" db show --db "$tmp/t.db" --m 257 --n 193 --k 129 --outcome pruned_shape >"$tmp/ps.out"
check "float4 kernels are pruned_shape at K = 129" test "$(grep -c "^pruned_shape" "$tmp/ps.out")" = 2

# 6. the final stage (the first sweep ran it with the default 8 finalists)
nok=$(grep -c ",ok," "$tmp/before.csv")
nfin=$(( nok < 8 ? nok : 8 ))
check "the first sweep's final stage timed $nfin finalists" grep -q "final stage: the $nfin fastest" "$tmp/t1.err"
finals() { "$KGEN" db show --db "$tmp/t.db" --m 1024 --n 1024 --k 1024 | grep -c "final stage: [0-9.]* ms back to back"; }
check "$nfin rows carry a final time (got $(finals))" test "$(finals)" = "$nfin"
check "the CSV gives the search winner's final time (a finalist in a fresh database)" \
    awk -F, '$4 == 1 { found = $NF > 0 } END { exit !found }' "$tmp/t1.csv"
"$KGEN" db list --db "$tmp/t.db" | grep "1024x1024x1024" >"$tmp/l1.out"
check "db list names the final stage's choice" grep -q "final stage:" "$tmp/l1.out"
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --db "$tmp/t.db" --final 3 \
    --final-rounds 4 >/dev/null 2>"$tmp/t3.err"
check "a --final 3 run exits 0" test $? = 0
check "it timed 3 finalists in 4 rounds" grep -q "final stage: the 3 fastest .* 4 rounds" "$tmp/t3.err"
check "and replaced the earlier final times: 3 rows carry one (got $(finals))" test "$(finals)" = 3
# the same run again: nothing new, so nothing is timed and no GPU worker starts
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --db "$tmp/t.db" --final 3 \
    --final-rounds 4 >/dev/null 2>"$tmp/t3b.err"
check "the same run again finds its final set current" grep -q "final stage: current" "$tmp/t3b.err"
check "... reads its walk from the walk cache" grep -q "read from the walk cache" "$tmp/t3b.err"
check "... and starts no GPU worker" grep -q ", 0 workers; database" "$tmp/t3b.err"
check "... and keeps the 3 final times (got $(finals))" test "$(finals)" = 3
# a new ok row for the shape (a search with --final 0) clears the set
cp "$tmp/t.db" "$tmp/t4.db"
"$KGEN" tune --template matmul --space "bm=32 bn=32 bk=8 tm=4 tn=4 pad=0 vec=4" --m 1024 --n 1024 --k 1024 \
    --db "$tmp/t4.db" --final 0 >/dev/null 2>"$tmp/t4.err"
check "a --final 0 run adding a row exits 0" test $? = 0
check "... and clears the final times (got $("$KGEN" db show --db "$tmp/t4.db" --m 1024 --n 1024 --k 1024 | grep -c "final stage:"))" \
    test "$("$KGEN" db show --db "$tmp/t4.db" --m 1024 --n 1024 --k 1024 | grep -c "final stage:")" = 0
"$LOOKUP" "$tmp/t.db" 1024 1024 1024
check "kg_matmul uses the tuned entry (the fastest finalist)" test $? = 0

# 7. --back-to-back: the search times launches queued back to back (L2 warm), as the final stage does;
# the same kernels then run no slower than one flushed launch at a time (the first sweep's times), and
# each time is the median of at least 5 samples
"$KGEN" tune --template matmul --space "$space" --m 1024 --n 1024 --k 1024 --db "$tmp/b.db" --final 0 \
    --back-to-back >/dev/null 2>"$tmp/b.err"
check "a --back-to-back run exits 0" test $? = 0
"$KGEN" db export --db "$tmp/b.db" -o "$tmp/b.csv"
# config (11), outcome (12), time_ms (14), reps (18) of the ok rows at 1024^3, keyed by configuration
okrows() {
    awk -F, 'NR > 1 && $8 == 1024 && $9 == 1024 && $10 == 1024 && $12 == "ok" { c = $11; gsub(/ /, "_", c); print c, $14, $18 }' \
        "$1" | LC_ALL=C sort
}
okrows "$tmp/b.csv" >"$tmp/b.ok"
okrows "$tmp/before.csv" >"$tmp/f.ok"
check "each back-to-back time is the median of 5 or more samples" awk '$3 < 5 { bad = 1 } END { exit bad }' "$tmp/b.ok"
LC_ALL=C join "$tmp/b.ok" "$tmp/f.ok" >"$tmp/bf.ok"
# (a candidate whose first launch is 3x the best is `slow` in either run, not timed in full)
check "most kernels ok in both runs ($(wc -l <"$tmp/bf.ok") of $(wc -l <"$tmp/f.ok"))" \
    test $(($(wc -l <"$tmp/bf.ok") * 2)) -ge "$(wc -l <"$tmp/f.ok")"
check "no kernel is slower back to back than flushed one at a time by more than 5 %" \
    awk '$2 > 1.05 * $4 { print "slower:", $0; bad = 1 } END { exit bad || NR == 0 }' "$tmp/bf.ok"

finish
