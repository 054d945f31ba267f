#!/usr/bin/env bash
# interrupt_test.sh -- `kgen tune` answers at once and stops when asked, no
# GPU needed (--dry-run --arch sm_90 over every embedded template):
# a progress line within 1 s; SIGINT and SIGTERM stop the walk of the space
# and the compile stage within 1 s, say "interrupted" and exit 130 / 143;
# --time bounds the whole run, the walk included, and a run it stops with
# compiles in flight still exits 0 (the process had torn NVRTC down under
# its compile threads: a crash in about 1 of 12 runs); a dry run writes no
# database, interrupted or not.
#
#   interrupt_test.sh KGEN
set -u
KGEN=$1
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
export KGEN_CACHE_DIR=$tmp/cache
now() { date +%s.%N; }
# within A B LIMIT: B - A <= LIMIT seconds
within() { awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { exit !(b - a <= l) }'; }

# run_and_signal NAME SIGNAL AFTER ARGS...: starts kgen, sends SIGNAL after
# AFTER seconds, waits; sets rc, the time it took to stop, and whether a
# line was on stderr before the signal
run_and_signal() {
    local name=$1 sig=$2 after=$3
    shift 3
    "$KGEN" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    local pid=$!
    sleep "$after"
    early=$(wc -l <"$tmp/$name.err")
    local t0
    t0=$(now)
    kill "-$sig" "$pid"
    wait "$pid"
    rc=$?
    took=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    echo "$name: exit $rc, stopped $took s after SIG$sig"
}

# 1. SIGINT while the space of every template is walked
run_and_signal walk INT 1 tune --dry-run --arch sm_90 --m 512 --n 512 --k 512 --db "$tmp/walk.db"
check "a progress line within 1 s" test "$early" -ge 1
check "SIGINT: exit 130" test "$rc" = 130
check "SIGINT: stops within 1 s" within 0 "$took" 1
check "SIGINT: says interrupted" grep -q "interrupted" "$tmp/walk.err"
check "a dry run writes no database" test ! -e "$tmp/walk.db"

# 2. SIGTERM in the compile stage (a narrow space: the walk ends at once;
# NVRTC takes seconds per kernel on one thread)
run_and_signal compile TERM 1.5 tune --dry-run --arch sm_90 --template matmul_warp --jobs 1 \
    --space "bm=128 bn=128 bk=8,16 stages=2,3" --m 512 --n 512 --k 512
check "SIGTERM: exit 143" test "$rc" = 143
check "SIGTERM: stops within 1 s" within 0 "$took" 1
check "SIGTERM: says interrupted" grep -q "interrupted (SIGTERM)" "$tmp/compile.err"
check "SIGTERM: the walk had finished" grep -q "candidates; .* check() and .* resources() calls" "$tmp/compile.err"

# 3. --time bounds the whole run, the walk included
t0=$(now)
"$KGEN" tune --dry-run --arch sm_90 --m 512 --n 512 --k 512 --time 0.5 >/dev/null 2>"$tmp/time.err"
rc=$?
t1=$(now)
check "--time 0.5: exit 0" test "$rc" = 0
check "--time 0.5: ends within 1.5 s" within "$t0" "$t1" 1.5
check "--time 0.5: says so" grep -q "stopped at the --time limit" "$tmp/time.err"

# 4. --time stopping the compile stage, two threads compiling, at 12 points
# of it (a fresh cache each time, so that NVRTC runs): exit 0 every time
bad=0
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
    rm -rf "$KGEN_CACHE_DIR"
    limit=$(awk -v i="$i" 'BEGIN { printf "%.2f", 0.9 + 0.13 * i }')
    "$KGEN" tune --dry-run --arch sm_90 --template matmul_warp --jobs 2 \
        --space "bm=64,128 bn=64,128 bk=8,16 stages=2,3" --m 512 --n 512 --k 512 --time "$limit" \
        >/dev/null 2>"$tmp/tc.err"
    rc=$?
    if [ "$rc" != 0 ] || ! grep -q "stopped at the --time limit" "$tmp/tc.err"; then
        echo "--time $limit in the compile stage: exit $rc"
        bad=$((bad + 1))
    fi
done
check "--time in the compile stage: exit 0 and says so, 12 of 12" test "$bad" = 0

finish
