#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# kgen-bench from the outside. Without a GPU: bad input exits 2 with a
# message naming what was wrong, and writes no CSV. With one (MODE=run):
# the benchmark on a few small odd shapes, kg_matmul's choice without a
# tuning database in every layout, a forced split-K configuration, several
# configurations from a file on explicit (padded) leading dimensions with
# alpha and beta not 0 or 1, every result checked against cuBLAS; exits 77
# (skipped) where there is no GPU.
# Usage: bench_cli.sh KGEN_BENCH MODE(input|run)
BENCH=$1; MODE=$2
PROG=$BENCH
# shellcheck source=tests/bench/checks.sh
. "$(dirname "$0")/checks.sh"
printf 'one 1 1 1\nodd 17 33 9\ntiny 127 129 131\nmid 300 257 200\n' > "$T/shapes.txt"
if [ "$MODE" = input ]; then
    expect 2 "cannot open shapes file" -- --shapes "$T/none.txt"
    expect 2 "cannot read shapes file" -- --shapes "$T"
    printf 'bad 3 x 4\n' > "$T/bad.txt"
    expect 2 "expected 'tag M N K'" -- --shapes "$T/bad.txt"
    printf 'zero 0 4 4\n' > "$T/zero.txt"
    expect 2 "M, N, K >= 1" -- --shapes "$T/zero.txt"
    printf 'neg 4 -4 4\n' > "$T/neg.txt"
    expect 2 "M, N, K >= 1" -- --shapes "$T/neg.txt" --layout all
    printf 'huge 4 4 99999999999\n' > "$T/huge.txt"
    expect 2 "at most 2147483647" -- --shapes "$T/huge.txt"
    printf 'five 4 4 4 4 4\n' > "$T/five.txt"
    expect 2 "LDA LDB LDC" -- --shapes "$T/five.txt"
    printf 'short 8 16 32 32 16 8\n' > "$T/short.txt"
    expect 2 "LDC 8 is shorter than a row" -- --shapes "$T/short.txt"
    printf 'tshort 32 16 8 8 16 16\n' > "$T/tshort.txt"
    expect 2 "in layout tn: LDA 8 is shorter" -- --shapes "$T/tshort.txt" --layout tn
    expect 2 "layout must be" -- --layout xy
    expect 2 "layout must be" -- --layout ALL
    expect 2 "not a number" -- --samples many
    expect 2 "--samples must be" -- --samples 0
    expect 2 "--ld-multiple 1..1024" -- --ld-multiple 0
    expect 2 "finite" -- --beta nan
    expect 2 "unknown option" -- --frobnicate 1
    expect 2 "unexpected argument" -- stray
    expect 2 "needs a value" -- --layout
    expect 2 "wm=32" -- --template matmul_warp --config "bm=100" --csv "$T/x.csv"
    expect 2 "unknown parameter" -- --template matmul_warp --config "bogus=1"
    expect 2 "needs --config" -- --template matmul_warp
    expect 2 "cannot open configurations file" -- --configs "$T/none.txt"
    printf '# two kernels\nmatmul_warp bm=64 bn=64 bk=16 wm=32 wn=32\n\nmatmul_warp bm=100\n' > "$T/cfg.txt"
    expect 2 "cfg.txt:4: bm=100" -- --configs "$T/cfg.txt" --csv "$T/x.csv"
    printf 'bm=64 bn=64\n' > "$T/cfg2.txt"
    expect 2 "expected 'TEMPLATE k=v ...'" -- --configs "$T/cfg2.txt"
    printf '# nothing\n' > "$T/cfg3.txt"
    expect 2 "no configurations" -- --configs "$T/cfg3.txt"
    printf 'matmul_warp bm=64 bn=64 bk=16 wm=32 wn=32 layout=tt\n' > "$T/cfg4.txt"
    expect 2 "not among --layout" -- --configs "$T/cfg4.txt" --layout nt
    expect 2 "without --template and --config" -- --configs "$T/cfg4.txt" --config "bm=64"
    [ ! -e "$T/x.csv" ] && ok || bad "a CSV was written for a rejected run"
    ls -d /tmp/kgen-bench-nodb-* > /dev/null 2>&1 && bad "--no-db left its directory" || ok
    "$BENCH" --help > "$T/out" && grep -q "usage: kgen-bench" "$T/out" && grep -q -- "--no-db" "$T/out" && ok || bad "--help"
else
    "$BENCH" --shapes "$T/shapes.txt" --csv "$T/a.csv" --samples 3 --min-ms 0.2 > "$T/out" 2> "$T/err"; rc=$?
    if grep -q "no GPU:" "$T/err"; then echo "SKIPPED: $(cat "$T/err")"; exit 77; fi
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "kg_matmul run exited $rc: $(cat "$T/err")"
    [ "$(grep -c '' "$T/a.csv" 2>/dev/null)" = 5 ] && ok || bad "the CSV should have a header and 4 rows"
    awk -F, 'NR > 1 && !($11 == 1 && $7 > 0) { exit 1 }' "$T/a.csv" && ok || bad "a row is wrong or has no ratio"
    # every layout, no tuning database
    "$BENCH" --shapes "$T/shapes.txt" --layout all --no-db --csv "$T/all.csv" --samples 3 --min-ms 0.2 \
        > "$T/out" 2> "$T/err"; rc=$?
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "--layout all --no-db exited $rc: $(cat "$T/err")"
    [ "$(grep -c '' "$T/all.csv" 2>/dev/null)" = 17 ] && ok || bad "the CSV should have a header and 16 rows"
    for l in nn nt tn tt; do
        [ "$(awk -F, -v l=$l 'NR > 1 && $15 == l && $11 == 1' "$T/all.csv" | wc -l)" = 4 ] && ok ||
            bad "layout $l should have 4 correct rows"
    done
    "$BENCH" --shapes "$T/shapes.txt" --layout tn --template matmul_warp --samples 3 --min-ms 0.2 \
        --config "bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3 splitk=3" > "$T/out" 2> "$T/err"; rc=$?
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "forced split-K run exited $rc: $(cat "$T/err")"
    grep -q "matmul_warp" "$T/out" && ok || bad "the forced template is not named in the output"
    # several configurations, explicit leading dimensions (odd, padded), alpha and beta
    printf 'pad 100 77 53 103 79 83\nodd 33 65 17 37 67 71\n' > "$T/ld.txt"
    printf 'matmul_warp bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3\nmatmul_warp bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 splitk=2 layout=nt\nmatmul bm=32 bn=32 bk=8\n' > "$T/cfg.txt"
    "$BENCH" --shapes "$T/ld.txt" --layout all --configs "$T/cfg.txt" --alpha -0.5 --beta 0.25 \
        --csv "$T/cfg.csv" --samples 3 --min-ms 0.2 > "$T/out" 2> "$T/err"; rc=$?
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "--configs run exited $rc: $(cat "$T/err")"
    # rows: 2 shapes x (4 + 1 + 4) runs, fewer any the third kernel skips
    rows=$(awk -F, 'NR > 1 && $11 == 1 && $16 > 0' "$T/cfg.csv" | wc -l)
    skips=$(grep -c "skipped:" "$T/out")
    [ $((rows + skips)) = 18 ] && [ "$(awk -F, 'NR > 1 && $2 == 100 && $18 == 83' "$T/cfg.csv" | wc -l)" -ge 1 ] && ok ||
        bad "the --configs CSV should hold 18 runs on the given leading dimensions ($rows rows, $skips skipped)"
    # the plot of a real run
    if [ -x "$(dirname "$BENCH")/kgen-bench-plot" ]; then
        "$(dirname "$BENCH")/kgen-bench-plot" -o "$T/all.svg" "$T/all.csv" && grep -c 'class="bar"' "$T/all.svg" |
            grep -qx 16 && ok || bad "kgen-bench-plot on the --layout all CSV"
    fi
fi
finish
