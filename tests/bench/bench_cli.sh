#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# kgen-bench from the outside. Without a GPU: bad input exits 2 with a
# message naming what was wrong, and writes no CSV. With one (MODE=run):
# the benchmark on a few small odd shapes, kg_matmul's choice and a forced
# split-K configuration, every result checked against cuBLAS; exits 77
# (skipped) where there is no GPU.
# Usage: bench_cli.sh KGEN_BENCH MODE(input|run)
BENCH=$1; MODE=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect CODE WORD -- ARGS: exit status CODE and WORD in standard error
expect() {
    local code=$1 word=$2; shift 3
    "$BENCH" "$@" > "$T/out" 2> "$T/err"; local rc=$?
    if [ $rc -eq "$code" ] && grep -q -- "$word" "$T/err"; then ok; else bad "kgen-bench $* -> $rc: $(cat "$T/err")"; fi
}
printf 'one 1 1 1\nodd 17 33 9\ntiny 127 129 131\nmid 300 257 200\n' > "$T/shapes.txt"
if [ "$MODE" = input ]; then
    expect 2 "cannot open shapes file" -- --shapes "$T/none.txt"
    printf 'bad 3 x 4\n' > "$T/bad.txt"
    expect 2 "expected 'tag M N K'" -- --shapes "$T/bad.txt"
    printf 'zero 0 4 4\n' > "$T/zero.txt"
    expect 2 "M, N, K >= 1" -- --shapes "$T/zero.txt"
    expect 2 "layout must be" -- --layout xy
    expect 2 "not a number" -- --samples many
    expect 2 "unknown option" -- --frobnicate 1
    expect 2 "wm=32" -- --template matmul_warp --config "bm=100" --csv "$T/x.csv"
    expect 2 "unknown parameter" -- --template matmul_warp --config "bogus=1"
    expect 2 "needs --config" -- --template matmul_warp
    [ ! -e "$T/x.csv" ] && ok || bad "a CSV was written for a rejected run"
    "$BENCH" --help > "$T/out" && grep -q "usage: kgen-bench" "$T/out" && ok || bad "--help"
else
    "$BENCH" --shapes "$T/shapes.txt" --csv "$T/a.csv" --samples 3 --min-ms 0.2 > "$T/out" 2> "$T/err"; rc=$?
    if grep -q "no GPU:" "$T/err"; then echo "SKIPPED: $(cat "$T/err")"; exit 77; fi
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "kg_matmul run exited $rc: $(cat "$T/err")"
    [ "$(grep -c '' "$T/a.csv" 2>/dev/null)" = 5 ] && ok || bad "the CSV should have a header and 4 rows"
    awk -F, 'NR > 1 && !($11 == 1 && $7 > 0) { exit 1 }' "$T/a.csv" && ok || bad "a row is wrong or has no ratio"
    "$BENCH" --shapes "$T/shapes.txt" --layout tn --template matmul_warp --samples 3 --min-ms 0.2 \
        --config "bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3 splitk=3" > "$T/out" 2> "$T/err"; rc=$?
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "forced split-K run exited $rc: $(cat "$T/err")"
    grep -q "matmul_warp" "$T/out" && ok || bad "the forced template is not named in the output"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
