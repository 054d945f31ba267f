#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# kgen-bench from the outside. Without a GPU: bad input exits 2 with a
# message naming what was wrong, and writes no CSV. With one (MODE=run):
# the benchmark on a few small odd shapes, kg_matmul's choice without a
# tuning database in every layout, a forced split-K configuration, several
# configurations from a file on explicit (padded) leading dimensions with
# alpha and beta not 0 or 1, kg_matmul's choice from a tuning database,
# every result checked against cuBLAS; exits 77
# (skipped) where there is no GPU.
# Usage: bench_cli.sh KGEN_BENCH MODE(input|run) [KGEN]  (KGEN: run mode also times kg_matmul's choice from a
# tuning database that kgen tune writes, and checks the CSV names the tuned entry's template)
BENCH=$1; MODE=$2; KGEN=${3:-}
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
    # each range message names its own option, the range and the value given
    expect 2 "--samples must be a whole number 1..1000 (got '0')" -- --samples 0
    expect 2 "--min-ms must be a number in 0..1000 (got '-1')" -- --min-ms -1
    expect 2 "--device must be a GPU number 0..1024 (got '-1')" -- --device -1
    expect 2 "--ld-multiple must be a whole number 1..1024 (got '0')" -- --ld-multiple 0
    expect 2 "--samples must be a whole number 1..1000 (got '2.5')" -- --samples 2.5
    grep -q -- "--device\|--min-ms\|--ld-multiple" "$T/err" && bad "--samples' message names other options" || ok
    expect 2 "--beta must be a finite float" -- --beta nan
    # an option given twice is refused, not last-wins
    expect 2 "--config given twice" -- --config "bm=64" --config "bm=32"
    expect 2 "--template given twice" -- --template matmul --template matmul_warp --config "bm=64"
    expect 2 "--layout given twice" -- --layout nn --layout tt
    expect 2 "--shapes given twice" -- --shapes "$T/shapes.txt" --shapes "$T/shapes.txt"
    expect 2 "--csv given twice" -- --shapes "$T/shapes.txt" --csv "$T/x.csv" --csv "$T/y.csv"
    # a --csv path that cannot be written is bad input, found before any GPU work
    expect 2 "--csv '': the path is empty" -- --shapes "$T/shapes.txt" --csv ""
    expect 2 "--csv '$T': it is a directory" -- --shapes "$T/shapes.txt" --csv "$T"
    expect 2 "its folder '$T/no/such' does not exist" -- --shapes "$T/shapes.txt" --csv "$T/no/such/x.csv"
    expect 2 "its folder '$T/shapes.txt' is not a directory" -- --shapes "$T/shapes.txt" --csv "$T/shapes.txt/x.csv"
    expect 2 "which this command reads" -- --shapes "$T/shapes.txt" --csv "$T/shapes.txt"
    ln -s none/x.csv "$T/dangling.csv"
    expect 2 "--csv '$T/dangling.csv': a symbolic link that cannot be followed" -- --shapes "$T/shapes.txt" \
        --csv "$T/dangling.csv"
    if [ "$(id -u)" != 0 ]; then # root may write anywhere
        mkdir "$T/ro" && chmod 555 "$T/ro"
        expect 2 "its folder '$T/ro' is not writable" -- --shapes "$T/shapes.txt" --csv "$T/ro/x.csv"
    fi
    # a tag names one shape: a repeated one is refused, naming both lines
    printf 'a 1 2 3\n# comment\nb 4 4 4\na 4 5 6\n' > "$T/dup.txt"
    expect 2 "dup.txt:4: tag 'a' given twice (first on line 1)" -- --shapes "$T/dup.txt"
    # a line of any length is one line: the error names the right one
    { printf '# %0600d\n' 0; printf 'ok 1 2 3\nbad 3 x 4\n'; } > "$T/long.txt"
    expect 2 "long.txt:3: expected 'tag M N K'" -- --shapes "$T/long.txt"
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
    # the CSV is written as kgen writes: through a symbolic link, a user's a.csv.tmp left alone
    echo mine > "$T/a.csv.tmp"; : > "$T/a-target.csv"; ln -s a-target.csv "$T/a.csv"
    "$BENCH" --shapes "$T/shapes.txt" --csv "$T/a.csv" --samples 3 --min-ms 0.2 > "$T/out" 2> "$T/err"; rc=$?
    if grep -q "no GPU:" "$T/err"; then echo "SKIPPED: $(cat "$T/err")"; exit 77; fi
    cat "$T/out"
    [ $rc -eq 0 ] && ok || bad "kg_matmul run exited $rc: $(cat "$T/err")"
    [ -L "$T/a.csv" ] && [ -s "$T/a-target.csv" ] && [ "$(cat "$T/a.csv.tmp")" = mine ] && ok ||
        bad "--csv replaced the symbolic link or the user's a.csv.tmp"
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
    # kg_matmul's choice from a tuning database: the CSV names the tuned entry's template and configuration
    if [ -n "$KGEN" ]; then
        printf 'odd 17 33 9\n' > "$T/one.txt"
        printf 'matmul_warp bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3\n' > "$T/tuned.txt"
        "$KGEN" tune --configs "$T/tuned.txt" --shapes "$T/one.txt" --layout nn --db "$T/t.db" --final 0 \
            > "$T/tune.out" 2>&1 && ok || bad "kgen tune for the database: $(tail -n 3 "$T/tune.out")"
        KGEN_DB="$T/t.db" "$BENCH" --shapes "$T/one.txt" --layout nn --csv "$T/t.csv" --samples 3 --min-ms 0.2 \
            > "$T/out" 2> "$T/err"; rc=$?
        cat "$T/out"
        [ $rc -eq 0 ] && awk -F, 'NR == 2 && $11 == 1 && $12 == "matmul_warp" && $13 ~ /^bm=64 bn=64 bk=16 /' "$T/t.csv" |
            grep -q . && ok || bad "the tuned entry's template and configuration are not in the CSV: $(cat "$T/t.csv")"
    fi
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
