#!/usr/bin/env bash
# gpu_kill_resume.sh -- kill -9 in the middle of a sweep loses no finished
# result, and the sweep resumes where it stopped (CTest label `gpu`).
#
#   gpu_kill_resume.sh KGEN GPU_LOOKUP
#
# Starts a sweep, waits until at least 8 candidates have run, kills the
# tuner with SIGKILL, and checks that its GPU worker died with it; then runs
# the same sweep again to the end and checks that every row written before
# the kill is still there unchanged, that the second run took exactly those
# from the database, and that together they cover the whole space.
set -u
KGEN=$1 LOOKUP=$2
"$LOOKUP" --probe
rc=$?
if [ "$rc" = 77 ]; then echo "SKIPPED: no GPU"; exit 77; fi
[ "$rc" = 0 ] || { echo "FAIL: gpu_lookup --probe exited $rc"; exit 1; }

# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
ran_rows() { awk -F, 'NR > 1 && $12 ~ /^(ok|slow|wrong|fault|hang|error)$/' "$1" | wc -l; }

space="bm=32,64,128 bn=32,64,128 bk=8,16 tm=4,8 tn=4,8 pad=0,1 vec=4"
# --final 0: the final stage writes final times into finished rows (gpu_tune.sh tests it)
args=(tune --template matmul --strategy exhaustive --space "$space" --m 2048 --n 2048 --k 2048 --db "$tmp/k.db" --final 0)
"$KGEN" "${args[@]}" >"$tmp/run1.out" 2>&1 &
pid=$!
ran=0
for _ in $(seq 1 240); do
    sleep 0.5
    "$KGEN" db export --db "$tmp/k.db" -o "$tmp/peek.csv" 2>/dev/null || continue
    ran=$(ran_rows "$tmp/peek.csv")
    [ "$ran" -ge 8 ] && break
done
worker=$(ps -o pid= --ppid "$pid" | head -n 1 | tr -d ' ')
kill -9 "$pid"
wait "$pid" 2>/dev/null
check "at least 8 candidates ran before the kill (ran $ran)" test "$ran" -ge 8
# dead: gone, or a zombie not yet reaped. A CUDA process's exit can take
# seconds while the driver tears its context down (more with other GPU
# tests running beside this one), so wait up to 20 s for it.
alive() { [ -d "/proc/$1" ] && ! awk '{ exit $3 != "Z" }' "/proc/$1/stat" 2>/dev/null; }
dead=0
if [ -n "$worker" ]; then
    for _ in $(seq 1 40); do
        if ! alive "$worker"; then
            dead=1
            break
        fi
        sleep 0.5
    done
fi
check "the GPU worker ($worker) died with the tuner" test "$dead" = 1
"$KGEN" db export --db "$tmp/k.db" -o "$tmp/before.csv"
before=$(($(wc -l <"$tmp/before.csv") - 1))
in_space=$(awk -F, 'NR > 1 && $12 != "pruned_check"' "$tmp/before.csv" | wc -l)
echo "killed after $before rows ($in_space candidates of the space, $(ran_rows "$tmp/before.csv") ran)"

"$KGEN" "${args[@]}" >"$tmp/run2.out" 2>&1
rc=$?
cat "$tmp/run2.out"
check "the resumed sweep exits 0 (got $rc)" test "$rc" = 0
check "the resumed sweep took the $in_space finished candidates from the database" \
    grep -q "evaluated ($in_space from the database)" "$tmp/run2.out"
"$KGEN" db export --db "$tmp/k.db" -o "$tmp/after.csv"
lost=$(comm -23 <(sort "$tmp/before.csv") <(sort "$tmp/after.csv") | wc -l)
check "no row written before the kill changed or went missing ($lost did)" test "$lost" = 0
total=$(grep -o "space: [0-9]* combinations" "$tmp/run2.out" | grep -o "[0-9]*")
after=$(($(wc -l <"$tmp/after.csv") - 1))
check "every combination has a row ($after of $total)" test "$after" = "$total"

finish
