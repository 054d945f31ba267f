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
row() { echo "$1,64,64,64,1,1,$3,0.1,0.1,1e-7,${4:-1},matmul_warp,bm=64 bn=64,NVIDIA H200,$2,64,64,64,1,0"; }
{ echo $H; row 'a<b' nn 2.0; row sq2 nn 0.5; row big nn 1.25 0; } > "$T/nn.csv"
{ echo $H; row 'a<b' tt 1.0; row sq2 tt 1.0; row sq2 tt 1.1; } > "$T/tt.csv"
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
[ ! -e "$T/x.svg" ] && ok || bad "an SVG was written for bad input"
expect 1 "cannot write" -- -o "$T/no/such/dir/p.svg" "$T/nn.csv"
finish
