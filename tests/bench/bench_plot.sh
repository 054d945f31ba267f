#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# kgen-bench-plot (no GPU): an SVG with one bar per shape and layout, the
# line at 1.0 and each layout's geometric mean; bad input exits 2 naming
# what was wrong and writes nothing.
# Usage: bench_plot.sh KGEN_BENCH_PLOT
PLOT=$1
PROG=$PLOT
# shellcheck source=tests/bench/checks.sh
. "$(dirname "$0")/checks.sh"
H=tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device,layout,lda,ldb,ldc,alpha,beta
# row TAG LAYOUT RATIO [OK [CONFIG]]
row() { echo "$1,64,64,64,1,1,$3,0.1,0.1,1e-7,${4:-1},matmul_warp,${5:-bm=64 bn=64},NVIDIA H200,$2,64,64,64,1,0"; }
{ echo $H; row 'a<b' nn 2.0; row sq2 nn 0.5; row big nn 1.25 0; } > "$T/nn.csv"
# two kernels on one shape (kgen-bench --configs): the better is drawn
{ echo $H; row 'a<b' tt 1.0; row sq2 tt 1.0; row sq2 tt 1.1 1 "bm=32 bn=32"; } > "$T/tt.csv"
"$PLOT" -o "$T/p.svg" --title 'grid & "suite"' "$T/nn.csv" "$T/tt.csv" 2> "$T/err" && ok || bad "plot failed: $(cat "$T/err")"
S="$T/p.svg"
[ "$(grep -c 'class="bar"' "$S")" = 5 ] && ok || bad "5 bars expected (a<b and sq2 in nn and tt, big in nn)"
grep -q 'class="parity"' "$S" && ok || bad "no line at 1.0"
grep -q 'a&lt;b' "$S" && grep -q 'grid &amp; &quot;suite&quot;' "$S" && ! grep -q 'a<b' "$S" && ok || bad "text not escaped"
# geometric means over correct rows: nn sqrt(2.0 * 0.5) = 1, tt sqrt(1.0 * 1.1) (the better sq2 row)
grep -q 'nn (geo. mean 1.000)' "$S" && grep -q 'tt (geo. mean 1.049)' "$S" && ok || bad "geometric means: $(grep legend "$S")"
grep -q 'stroke="red"><title>big nn: 1.250 (wrong result)' "$S" && ok || bad "the wrong row is not marked"
[ "$(grep -c '<svg' "$S")" = 1 ] && [ "$(tail -1 "$S")" = "</svg>" ] && ok || bad "not one closed svg element"
if command -v xmllint > /dev/null; then xmllint --noout "$S" && ok || bad "not well-formed XML"; fi
# bad input
expect 2 "cannot open" -- -o "$T/x.svg" "$T/none.csv"
echo "tag,M,ratio" > "$T/h.csv"
expect 2 "needs tag, layout and ratio" -- -o "$T/x.svg" "$T/h.csv"
{ echo $H; row sq nn abc; } > "$T/r.csv"
expect 2 "r.csv:2:" -- -o "$T/x.svg" "$T/r.csv"
{ echo $H; row sq xy 1.0; } > "$T/l.csv"
expect 2 "layout" -- -o "$T/x.svg" "$T/l.csv"
{ echo $H; row sq nn -1; } > "$T/n.csv"
expect 2 "positive ratio" -- -o "$T/x.svg" "$T/n.csv"
echo $H > "$T/e.csv"
expect 2 "no rows" -- -o "$T/x.svg" "$T/e.csv"
expect 2 "give the output file" -- "$T/nn.csv"
expect 2 "no CSV files" -- -o "$T/x.svg"
expect 2 "unknown option" -- -x "$T/nn.csv"
expect 2 "-o given twice" -- -o "$T/x.svg" -o "$T/y.svg" "$T/nn.csv"
expect 2 "--title given twice" -- -o "$T/x.svg" --title a --title b "$T/nn.csv"
# one bar is one shape: a tag for two shapes, or one kernel twice, is refused naming both rows
{ echo $H; row a nn 1.0; row b nn 1.0; row a nn 1.2 | sed 's/^a,64,/a,128,/'; } > "$T/two.csv"
expect 2 "two.csv:4: tag 'a' in layout nn names another shape (128 64 64 64 64 64) than $T/two.csv:2" \
    -- -o "$T/x.svg" "$T/two.csv"
{ echo $H; row a nn 1.0; } > "$T/again.csv"
expect 2 "again.csv:2: tag 'a' in layout nn repeats $T/again.csv:2" -- -o "$T/x.svg" "$T/again.csv" "$T/again.csv"
# lines of any length: a long row is one row, and line numbers stay right
long=$(printf '%05000d' 0)
{ echo $H; row a nn 1.0 1 "$long"; row b nn 1.0; } > "$T/long.csv"
"$PLOT" -o "$T/long.svg" "$T/long.csv" 2> "$T/err" && [ "$(grep -c 'class="bar"' "$T/long.svg")" = 2 ] && ok ||
    bad "a 5000-character row: $(cat "$T/err")"
{ echo $H; row a nn 1.0 1 "$long"; row b nn 1.0; row c nn abc; } > "$T/long2.csv"
expect 2 "long2.csv:4:" -- -o "$T/x.svg" "$T/long2.csv"
[ ! -e "$T/x.svg" ] && ok || bad "an SVG was written for bad input"
# -o is checked before any input is read
expect 2 "its folder '$T/no/such/dir' does not exist" -- -o "$T/no/such/dir/p.svg" "$T/none.csv"
expect 2 "-o '': the path is empty" -- -o "" "$T/nn.csv"
expect 2 "-o '$T': it is a directory" -- -o "$T" "$T/nn.csv"
cp "$T/nn.csv" "$T/in.csv"
expect 2 "which this command reads" -- -o "$T/in.csv" "$T/tt.csv" "$T/in.csv"
cmp -s "$T/nn.csv" "$T/in.csv" && ok || bad "an input CSV was replaced"
# the output file is written as kgen writes: a user's OUT.tmp is left alone, a
# symbolic link is written through, an existing file keeps its mode, a FIFO
# is never replaced, no temporary file is left
echo mine > "$T/o.svg.tmp"
"$PLOT" -o "$T/o.svg" "$T/nn.csv" && [ "$(cat "$T/o.svg.tmp")" = mine ] && ok || bad "OUT.tmp was replaced"
: > "$T/target.svg" && ln -s target.svg "$T/link.svg"
"$PLOT" -o "$T/link.svg" "$T/nn.csv" && [ -L "$T/link.svg" ] && grep -q '</svg>' "$T/target.svg" && ok ||
    bad "the symbolic link was replaced, or its target not written"
: > "$T/mode.svg" && chmod 600 "$T/mode.svg"
"$PLOT" -o "$T/mode.svg" "$T/nn.csv" && [ "$(stat -c %a "$T/mode.svg")" = 600 ] && ok ||
    bad "the file's mode was not kept"
mkfifo "$T/fifo"
expect 1 "no process is reading it" -- -o "$T/fifo" "$T/nn.csv"
[ -p "$T/fifo" ] && ok || bad "the FIFO was replaced by a file"
[ -z "$(find "$T" -name '*.tmp.*')" ] && ok || bad "a temporary file was left behind"
"$PLOT" -o - "$T/nn.csv" | grep -q '</svg>' && ok || bad "-o - does not write standard output"
finish
