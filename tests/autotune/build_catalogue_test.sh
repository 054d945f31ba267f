#!/usr/bin/env bash
# build_catalogue_test.sh -- scripts/build-catalogue.sh without a GPU: the
# training shapes it writes are the committed ones, byte for byte; step 2b's
# choice of shapes (--cublas-shapes) and of new candidates (--tuned-winners)
# on small exports; bad input refused before anything runs.
#
#   build_catalogue_test.sh SOURCE_ROOT KGEN
set -u
SRC=$1
KGEN_BIN=$2
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
SCRIPT=$SRC/scripts/build-catalogue.sh

# --make-shapes writes catalogue/train-shapes.txt of the tree it lies in: a copy here
mkdir -p "$tmp/repo/scripts" "$tmp/repo/catalogue"
cp "$SCRIPT" "$tmp/repo/scripts/"
sh "$tmp/repo/scripts/build-catalogue.sh" --make-shapes >/dev/null
check "--make-shapes exits 0" test $? = 0
check "--make-shapes writes the committed training shapes" cmp -s "$tmp/repo/catalogue/train-shapes.txt" \
    "$SRC/catalogue/train-shapes.txt"

# step 2b's shapes: the fastest candidate's time over cuBLAS's, the highest over the layouts. 2000^3: nt's
# 0.5 ms against 0.2 (2.5; nn's 1.0 against 0.8 is 1.25); 4000x32x4000: nn's 0.3 against 0.15 (2.0; tt's
# 0.2 against 0.25 is 0.8); 3000^3: 2.0 against 1.25 (1.6; its refused row's 0.001 ms not counted, which
# would make it 0.0008); M = 8 (matmul_skinny's, 10) is never chosen, nor 100^3 (cuBLAS slower: 0.5), nor
# 500^3, which no candidate ran
cat >"$tmp/export.csv" <<'CSV'
device,layout,m,n,k,config,outcome,reason,time_ms,final_ms
GPU,nn,2000,2000,2000,bm=64,ok,,1.0,0
GPU,nt,2000,2000,2000,bm=64,ok,,0.5,0
GPU,nn,4000,32,4000,bm=64,ok,,0.3,0
GPU,tt,4000,32,4000,bm=32,ok,,0.2,0
GPU,nn,8,4096,4096,bm=64,ok,,1.0,0
GPU,nn,100,100,100,bm=64,ok,,1.0,0
GPU,nn,3000,3000,3000,bm=64,pruned_shape,"3000x3000x3000: lda=3000, too odd",0.001,0
GPU,nn,3000,3000,3000,bm=64,ok,,2.0,0
CSV
cat >"$tmp/bench-nn.csv" <<'CSV'
tag,M,N,K,kgen_ms,cublas_ms,layout
a,2000,2000,2000,0.9,0.8,nn
b,4000,32,4000,0.3,0.15,nn
c,8,4096,4096,0.1,0.1,nn
d,100,100,100,0.01,2.0,nn
e,3000,3000,3000,1.3,1.25,nn
CSV
cat >"$tmp/bench-nt.csv" <<'CSV'
tag,M,N,K,kgen_ms,cublas_ms,layout
a,2000,2000,2000,0.4,0.2,nt
f,500,500,500,0.1,0.01,nt
CSV
cat >"$tmp/bench-tt.csv" <<'CSV'
tag,M,N,K,kgen_ms,cublas_ms,layout
b,4000,32,4000,0.3,0.25,tt
CSV
out=$(sh "$SCRIPT" --cublas-shapes 5 "$tmp/export.csv" "$tmp/bench-nn.csv" "$tmp/bench-nt.csv" "$tmp/bench-tt.csv")
check "--cublas-shapes exits 0" test $? = 0
check "the shapes furthest below cuBLAS first, M or N <= 16 and those cuBLAS is slower at left out ($out)" \
    test "$out" = "$(printf 'tune01 2000 2000 2000\ntune02 4000 32 4000\ntune03 3000 3000 3000')"
out=$(sh "$SCRIPT" --cublas-shapes 1 "$tmp/export.csv" "$tmp/bench-nn.csv" "$tmp/bench-nt.csv" "$tmp/bench-tt.csv")
check "--cublas-shapes 1: one shape ($out)" test "$out" = "tune01 2000 2000 2000"
out=$(sh "$SCRIPT" --cublas-shapes 5 "$tmp/export.csv" "$tmp/bench-tt.csv")
check "--cublas-shapes: none where cuBLAS is slower everywhere, and exit 0 ($? '$out')" test -z "$out"

# step 2b's new candidates. nn 512^3: the final stage's fastest (B, 0.9 ms) wins over a faster search time
# (C, 0.5 ms, no final time); nt 512^3 has no final time at all: the fastest search time (E, 0.7 ms, not
# D at 0.8: the comparison must not drown the times in a large offset); nn 64^3's winner A is a measured
# candidate already; tt 512^3's winner F is listed (not yet measured); B wins twice, listed once; tn 256^3:
# G (0.5 ms) wins, not H, which was refused (pruned, no time: not a time of 0)
cat >"$tmp/ok.csv" <<'CSV'
device,template,config,layout,m,n,k,outcome,time_ms,final_ms
GPU,matmul_warp,bm=32 layout=nn,nn,64,64,64,ok,0.01,0
CSV
cat >"$tmp/tuned.csv" <<'CSV'
device,template,config,layout,m,n,k,outcome,time_ms,final_ms
GPU,matmul_warp,bm=128 layout=nn,nn,512,512,512,ok,1.0,0.9
GPU,matmul_warp,bm=64 layout=nn,nn,512,512,512,ok,0.5,0
GPU,matmul_warp,bm=16 layout=nt,nt,512,512,512,ok,0.8,0
GPU,matmul_warp,bm=8 layout=nt,nt,512,512,512,ok,0.7,0
GPU,matmul_warp,bm=32 layout=nn,nn,64,64,64,ok,0.01,0.01
GPU,matmul_warp,bm=256 layout=tt,tt,512,512,512,ok,1.0,1.0
GPU,matmul_warp,bm=128 layout=tn,tn,512,512,512,ok,1.0,1.0
GPU,matmul_warp,bm=4 layout=tn,tn,256,256,256,pruned_spills,,0
GPU,matmul_warp,bm=2 layout=tn,tn,256,256,256,ok,0.5,0
CSV
printf 'matmul_warp bm=32\nmatmul_warp bm=256\n' >"$tmp/cands.txt"
out=$(sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/ok.csv" "$tmp/tuned.csv")
check "--tuned-winners exits 0" test $? = 0
check "the winners not yet candidates, each once ($(echo "$out" | tr '\n' ';'))" \
    test "$out" = "$(printf 'matmul_warp bm=128\nmatmul_warp bm=2\nmatmul_warp bm=8')"
out=$(cd "$tmp" && sh "$SCRIPT" --tuned-winners cands.txt ok.csv tuned.csv)
check "--tuned-winners reads paths relative to where it is run ($out)" \
    test "$out" = "$(printf 'matmul_warp bm=128\nmatmul_warp bm=2\nmatmul_warp bm=8')"
# with BEAT (the times to beat): nn 512^3's winner B (0.9 ms) is not 3 % faster than 0.92 there, nor is it at
# tn 512^3 (1.0 against 1.0), where it won too; tn 256^3's G (0.5) is than 0.6 (the fastest of BEAT's two);
# nt 512^3, where BEAT has no time, keeps its winner E
printf 'layout,m,n,k,outcome,time_ms\nnn,512,512,512,ok,0.92\ntn,512,512,512,ok,1.0\ntn,256,256,256,ok,0.7\ntn,256,256,256,ok,0.6\n' \
    >"$tmp/beat.csv"
out=$(sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/ok.csv" "$tmp/tuned.csv" "$tmp/beat.csv")
check "--tuned-winners with BEAT: only those 3 % faster than its fastest, or where it has none ($(echo "$out" | tr '\n' ';'))" \
    test "$out" = "$(printf 'matmul_warp bm=2\nmatmul_warp bm=8')"
out=$(cd "$tmp" && sh "$SCRIPT" --cublas-shapes 1 export.csv bench-nn.csv)
check "--cublas-shapes too ($out)" test "$out" = "tune01 4000 32 4000"

# bad input: exit 2 (usage) or 1, a message naming what was wrong, nothing written
run() {
    local code=$1 pattern=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$code" ] && grep -q -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $* exited $rc (want $code), stdout: $(cat "$tmp/out") stderr: $(cat "$tmp/err")"
    fi
}
run 2 "not a count '0'" sh "$SCRIPT" --cublas-shapes 0 "$tmp/export.csv" "$tmp/bench-nn.csv"
run 2 "cannot read '$tmp/none.csv'" sh "$SCRIPT" --cublas-shapes 3 "$tmp/export.csv" "$tmp/bench-nn.csv" "$tmp/none.csv"
printf 'm,n,k,time_ms\n4000,32,4000,0.2\n' >"$tmp/cols.csv"
run 1 "cols.csv: no column layout" sh "$SCRIPT" --cublas-shapes 3 "$tmp/cols.csv" "$tmp/bench-nn.csv"
run 1 "export.csv: no column M" sh "$SCRIPT" --cublas-shapes 3 "$tmp/export.csv" "$tmp/export.csv"
: >"$tmp/empty.csv"
run 1 "empty.csv: empty, no header line" sh "$SCRIPT" --cublas-shapes 3 "$tmp/export.csv" "$tmp/empty.csv" \
    "$tmp/bench-nn.csv"
run 1 "empty.csv: empty, no header line" sh "$SCRIPT" --cublas-shapes 3 "$tmp/empty.csv" "$tmp/bench-nn.csv"
mkdir -p "$tmp/adir"
run 2 "'$tmp/adir' is not a file" sh "$SCRIPT" --cublas-shapes 3 "$tmp/export.csv" "$tmp/adir"
run 2 "'$tmp/adir' is not a file" sh "$SCRIPT" --tuned-winners "$tmp/adir" "$tmp/ok.csv" "$tmp/tuned.csv"
run 1 "empty.csv: empty, no header line" sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/ok.csv" "$tmp/empty.csv"
run 1 "empty.csv: empty, no header line" sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/empty.csv" "$tmp/tuned.csv"
run 2 "usage: scripts/build-catalogue.sh --cublas-shapes N EXPORT BENCH_CSV" sh "$SCRIPT" --cublas-shapes 3 \
    "$tmp/export.csv"
run 2 "usage: scripts/build-catalogue.sh --cublas-shapes N EXPORT BENCH_CSV" sh "$SCRIPT" --cublas-shapes
run 2 "usage: scripts/build-catalogue.sh --tuned-winners CANDIDATES EXPORT TUNED" sh "$SCRIPT" --tuned-winners a b
run 2 "usage: scripts/build-catalogue.sh --make-shapes" sh "$SCRIPT" --make-shapes extra
run 2 "cannot read '$tmp/none.csv'" sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/ok.csv" "$tmp/none.csv"
run 1 "cols.csv: no column template" sh "$SCRIPT" --tuned-winners "$tmp/cands.txt" "$tmp/ok.csv" "$tmp/cols.csv"
run 2 "usage: scripts/build-catalogue.sh BUILD_DIR" sh "$SCRIPT"
run 2 "$tmp/nobuild/cli/kgen not found" sh "$SCRIPT" "$tmp/nobuild"
# a bad count is refused before kgen runs (a stand-in that records being run)
mkdir -p "$tmp/b/cli"
printf '#!/bin/sh\ntouch "%s/ran"\nexit 1\n' "$tmp" >"$tmp/b/cli/kgen"
chmod +x "$tmp/b/cli/kgen"
KGEN_CATALOGUE_TUNE=abc run 2 "KGEN_CATALOGUE_TUNE: not a count 'abc'" sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_KERNELS=-5 run 2 "KGEN_CATALOGUE_KERNELS: not a count '-5'" sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_CANDIDATES=0 run 2 "KGEN_CATALOGUE_CANDIDATES: not a count '0'" sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_LAYOUTS=" " run 2 "KGEN_CATALOGUE_LAYOUTS: no layout" sh "$SCRIPT" "$tmp/b" "$tmp/work"
check "kgen was not run for a bad KGEN_CATALOGUE_TUNE" test ! -e "$tmp/ran"
KGEN_CATALOGUE_LAYOUTS="nn xx" run 2 "unknown layout 'xx'" sh "$SCRIPT" "$tmp/b" "$tmp/work"
check "a bad setting is refused before WORK_DIR is made" test ! -e "$tmp/work"
check "kgen was not run for a bad layout" test ! -e "$tmp/ran"
KGEN_CATALOGUE_KEEP="$tmp/none.txt" run 2 "KGEN_CATALOGUE_KEEP: '$tmp/none.txt' must be a readable catalogue" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_KEEP="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_KERNELS=12 run 2 "it keeps its own kernels" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_KEEP="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=4 run 2 "it keeps its own kernels" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
check "kgen was not run for a bad KGEN_CATALOGUE_KEEP" test ! -e "$tmp/ran"
KGEN_CATALOGUE_BASE="$tmp/none.txt" run 2 "KGEN_CATALOGUE_BASE: cannot read the catalogue '$tmp/none.txt'" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_KEEP="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" \
    run 2 "no KGEN_CATALOGUE_KERNELS, KGEN_CATALOGUE_TUNE or KGEN_CATALOGUE_BASE" sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_BASE="$tmp/adir" run 2 "KGEN_CATALOGUE_BASE: cannot read the catalogue '$tmp/adir'" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_KEEP="$tmp/adir" run 2 "KGEN_CATALOGUE_KEEP: '$tmp/adir' must be a readable catalogue" \
    sh "$SCRIPT" "$tmp/b" "$tmp/work"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_NEW_CANDIDATES=1 \
    run 2 "the candidates are the one or the other" sh "$SCRIPT" "$tmp/b" "$tmp/work"
check "kgen was not run for a bad KGEN_CATALOGUE_BASE" test ! -e "$tmp/ran"
# KEEP on a WORK_DIR that holds other candidates: refused before anything is timed (a stand-in kgen that
# answers `device`, passes `catalogue` to the real one and records any other command)
mkdir -p "$tmp/d/cli" "$tmp/kw"
# shellcheck disable=SC2016 # the stand-in's own $1 and $@
printf '#!/bin/sh
[ "$1" = device ] && { echo "  Compute capability 9.0 (sm_90)"; exit 0; }
[ "$1" = catalogue ] && exec "%s" "$@"
touch "%s/ran2"
exit 1
' "$KGEN_BIN" "$tmp" >"$tmp/d/cli/kgen"
chmod +x "$tmp/d/cli/kgen"
echo "matmul_warp bm=64 bn=64" >"$tmp/kw/candidates.txt"
KGEN_CATALOGUE_KEEP="$SRC/catalogue/sm_90.txt" sh "$SCRIPT" "$tmp/d" "$tmp/kw" >"$tmp/out" 2>"$tmp/err"
check "KEEP on a WORK_DIR of other candidates exits 1" test $? = 1
check "... saying so" grep -q "candidates.txt is not the kernels of catalogue/sm_90.txt" "$tmp/err"
check "... before any timing" test ! -e "$tmp/ran2"
check "... its candidates untouched" test "$(cat "$tmp/kw/candidates.txt")" = "matmul_warp bm=64 bn=64"
# BASE: the catalogue's kernels are the candidates (the stand-in fails the timing that follows); a WORK_DIR
# resumed must start with them (step 2b's winners may follow), else it is refused before any timing
"$KGEN_BIN" catalogue kernels "$SRC/catalogue/sm_90.txt" -o "$tmp/base.cfg"
check "kgen catalogue kernels of the committed catalogue" test -s "$tmp/base.cfg"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=0 sh "$SCRIPT" "$tmp/d" "$tmp/bw" >"$tmp/out" 2>"$tmp/err"
check "BASE on a fresh WORK_DIR: the stand-in's failed timing exits 1" test $? = 1
check "... its candidates are the catalogue's kernels" cmp -s "$tmp/bw/candidates.txt" "$tmp/base.cfg"
check "... said so" grep -q "candidates: the $(wc -l <"$tmp/base.cfg") kernels of catalogue/sm_90.txt" "$tmp/out"
check "... then timed them" test -e "$tmp/ran2"
rm -f "$tmp/ran2"
echo "matmul_warp bm=32 bn=32" >>"$tmp/bw/candidates.txt"
cp "$tmp/bw/candidates.txt" "$tmp/bw.cfg"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=0 sh "$SCRIPT" "$tmp/d" "$tmp/bw" >"$tmp/out" 2>"$tmp/err"
check "BASE resumed with a winner after the kernels: goes on to the timing" test -e "$tmp/ran2"
check "... its candidates kept" cmp -s "$tmp/bw/candidates.txt" "$tmp/bw.cfg"
check "... said so" grep -q "resuming with $tmp/bw/candidates.txt (the kernels of catalogue/sm_90.txt first)" "$tmp/out"
rm -f "$tmp/ran2"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=0 sh "$SCRIPT" "$tmp/d" "$tmp/kw" >"$tmp/out" 2>"$tmp/err"
check "BASE on a WORK_DIR of other candidates exits 1" test $? = 1
check "... saying so" grep -q "candidates.txt does not start with the kernels of catalogue/sm_90.txt" "$tmp/err"
check "... before any timing" test ! -e "$tmp/ran2"
check "... its candidates untouched" test "$(cat "$tmp/kw/candidates.txt")" = "matmul_warp bm=64 bn=64"
# standin DIR ROWS: a stand-in kgen in DIR/cli: `device` says sm_90, `catalogue make` records its arguments in
# $tmp/make-args, the other `catalogue` commands are the real kgen's, `db export` writes an export of ROWS (printf
# text after the header line; $c in it is bm=64, or bm=128 in tune.db, step 2b's), `tune` records its arguments in
# $tmp/tune-args and creates the database it is given
standin() {
    mkdir -p "$1/cli"
    # shellcheck disable=SC2016 # the stand-in's own $1, $@ and $c
    printf '#!/bin/sh
case "$1 $2" in
device*) echo "  Compute capability 9.0 (sm_90)" ;;
"catalogue make") printf "%%s\\n" "$@" > "%s/make-args" ;;
catalogue*) exec "%s" "$@" ;;
"db export") c=bm=64; case "$*" in *tune.db*) c=bm=128 ;; esac
  for a in "$@"; do [ "$prev" = -o ] && printf "device,template,config,layout,m,n,k,outcome,time_ms,final_ms\\n%s" > "$a"; prev=$a; done ;;
tune*) echo "$@" >> "%s/tune-args"; for a in "$@"; do [ "$prev" = --db ] && : > "$a"; prev=$a; done ;;
esac
exit 0
' "$tmp" "$KGEN_BIN" "$2" "$tmp" >"$1/cli/kgen"
    chmod +x "$1/cli/kgen"
}
# the header's command says whether step 2b's winners are among the candidates, also where an earlier run of
# the WORK_DIR added them (the stand-in's export: one row, 2000^3 nn in 1 ms by bm=64, or by bm=128 from tune.db)
# shellcheck disable=SC2016 # $c is the stand-in's
standin "$tmp/e" 'GPU,matmul_warp,$c layout=nn,nn,2000,2000,2000,ok,1.0,0\n'
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=0 sh "$SCRIPT" "$tmp/e" "$tmp/ew" >"$tmp/out" 2>"$tmp/err"
check "BASE with no tunes runs to make ($(cat "$tmp/err"))" grep -q "candidates: the kernels of catalogue/sm_90.txt)" \
    "$tmp/make-args"
check "... make starts from BASE's kernels (--start)" \
    test "$(grep -A1 -x -- --start "$tmp/make-args" | tail -n 1)" = catalogue/sm_90.txt
cp "$tmp/base.cfg" "$tmp/ew2.cfg" && mkdir -p "$tmp/ew2" && mv "$tmp/ew2.cfg" "$tmp/ew2/candidates.txt"
printf '# kgen tune'"'"'s winners\nmatmul_warp bm=32 bn=32\n' >>"$tmp/ew2/candidates.txt"
printf 'tune01 100 100 100\ntune02 200 200 200\ntune03 300 300 300\n' >"$tmp/ew2/tune-shapes.txt"
rm -f "$tmp/make-args"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=0 sh "$SCRIPT" "$tmp/e" "$tmp/ew2" >"$tmp/out" 2>"$tmp/err"
check "BASE resumed with winners listed: the header says so ($(grep -- "training shapes" "$tmp/make-args"))" \
    grep -q "candidates: the kernels of catalogue/sm_90.txt, with kgen tune's winners at 3 shapes furthest below cuBLAS)" \
    "$tmp/make-args"
# a rebuild keeps at most KGEN_CATALOGUE_KERNELS: fewer than BASE's kernels refused before anything is made
rm -f "$tmp/tune-args"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_KERNELS=3 sh "$SCRIPT" "$tmp/e" "$tmp/ew4" >"$tmp/out" \
    2>"$tmp/err"
check "BASE with more kernels than KGEN_CATALOGUE_KERNELS exits 2" test $? = 2
check "... saying so" grep -q "KGEN_CATALOGUE_KERNELS: 3 is fewer than the $(grep -c '^kernel ' "$SRC/catalogue/sm_90.txt") kernels" "$tmp/err"
check "... before anything is made" test ! -e "$tmp/ew4"
check "... or timed" test ! -e "$tmp/tune-args"
# step 2b needs kgen-bench (cuBLAS's times): without it, refused before any timing
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 sh "$SCRIPT" "$tmp/e" "$tmp/ew3" >"$tmp/out" 2>"$tmp/err"
check "step 2b without kgen-bench exits 2" test $? = 2
check "... saying so" grep -q "bench/kgen-bench, which is not there" "$tmp/err"
check "... before any timing" test ! -e "$tmp/tune-args"
# step 2b with a stand-in kgen-bench (cuBLAS 0.5 ms at 2000^3 nn, where the export's candidate takes 1 ms):
# 2000^3 is tuned in each layout, its winner (tune.db's bm=128) joins the candidates, the header says so
mkdir -p "$tmp/e/bench"
# shellcheck disable=SC2016 # the stand-in's own $1 and $@
printf '#!/bin/sh
for a in "$@"; do [ "$prev" = --csv ] && printf "tag,M,N,K,cublas_ms,layout\\na,2000,2000,2000,0.5,nn\\n" > "$a"; prev=$a; done
exit 0
' >"$tmp/e/bench/kgen-bench"
chmod +x "$tmp/e/bench/kgen-bench"
KGEN_CATALOGUE_BASE="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 sh "$SCRIPT" "$tmp/e" "$tmp/ew3" >"$tmp/out" 2>"$tmp/err"
check "step 2b with kgen-bench exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... the shape furthest below cuBLAS, the one above it" test "$(cat "$tmp/ew3/tune-shapes.txt")" = "tune01 2000 2000 2000"
check "... kgen-bench's CSVs kept for a resumed run" test -s "$tmp/ew3/cublas-tt.csv"
check "... kgen tune with its defaults there in the four layouts" \
    test "$(grep -c -- "--shapes $tmp/ew3/tune-shapes.txt" "$tmp/tune-args")" = 4
check "... the winner joins the candidates" test "$(tail -n 1 "$tmp/ew3/candidates.txt")" = "matmul_warp bm=128"
check "... the header says so" grep -q "with kgen tune's winners at 1 shapes furthest below cuBLAS)" "$tmp/make-args"
# step 2c: the launch-bound shapes timed again. A stand-in kgen whose export (nn only) times 10^3 at 5 us (the
# fastest anywhere), 100^3 at 12 us (under 3 x 5) and 1000^3 at 1 ms; the training shapes a file of those three
# and one never timed
standin "$tmp/p" 'GPU,matmul_warp,bm=64 layout=nn,nn,10,10,10,ok,0.005,0\nGPU,matmul_warp,bm=64 layout=nn,nn,100,100,100,ok,0.012,0\nGPU,matmul_warp,bm=64 layout=nn,nn,1000,1000,1000,ok,1.0,0\n'
printf '# shapes\na 10 10 10\nb 100 100 100\nc 1000 1000 1000\nd 20 20 20\n' >"$tmp/pshapes.txt"
echo "matmul_warp bm=64" >"$tmp/pcand.txt"
mkdir -p "$tmp/pw" && cp "$tmp/pcand.txt" "$tmp/pw/candidates.txt"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_SHAPES="$tmp/pshapes.txt" sh "$SCRIPT" "$tmp/p" "$tmp/pw" >"$tmp/out" 2>"$tmp/err"
check "step 2c: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... the shapes under 3x the fastest time, in the training file's order" \
    test "$(cat "$tmp/pw/pass-shapes-nn.txt")" = "$(printf 'a 10 10 10\nb 100 100 100')"
check "... none in a layout with no time under it" test -e "$tmp/pw/pass-shapes-nt.txt" -a ! -s "$tmp/pw/pass-shapes-nt.txt"
check "... passes 2 and 3 time them in nn, each in a database of its own" \
    test "$(grep -c -- "--shapes $tmp/pw/pass-shapes-nn.txt --layout nn --db $tmp/pw/pass-[23].db" "$tmp/tune-args")" = 2
check "... and nothing in the other layouts" test "$(grep -c -- "pass-shapes" "$tmp/tune-args")" = 2
check "... make reads the three exports, the full one first" \
    test "$(sed -n '3,5p' "$tmp/make-args")" = "$(printf '%s\n' "$tmp/pw/measured.csv" "$tmp/pw/pass-2.csv" "$tmp/pw/pass-3.csv")"
check "... the header says so" grep -q "; 2 launch-bound pairs timed in 3 passes)" "$tmp/make-args"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_SHAPES="$tmp/pshapes.txt" KGEN_CATALOGUE_PASSES=1 KGEN_CATALOGUE_PASS_BELOW=500 sh "$SCRIPT" "$tmp/p" \
    "$tmp/pw1" >"$tmp/out" 2>"$tmp/err"
check "KGEN_CATALOGUE_PASSES=1: no pass timed ($(cat "$tmp/err"))" sh -c "! grep -q pass- '$tmp/tune-args'"
check "... make reads the one export" test "$(sed -n '3,4p' "$tmp/make-args")" = "$(printf '%s\n' "$tmp/pw1/measured.csv" --date)"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_SHAPES="$tmp/pshapes.txt" KGEN_CATALOGUE_PASSES=2 KGEN_CATALOGUE_PASS_BELOW=250 sh "$SCRIPT" "$tmp/p" \
    "$tmp/pw2" >"$tmp/out" 2>"$tmp/err"
check "KGEN_CATALOGUE_PASS_BELOW=250: 1000^3 too ($(cat "$tmp/err"))" test "$(wc -l <"$tmp/pw2/pass-shapes-nn.txt")" = 3
check "KGEN_CATALOGUE_PASSES=2: one more pass" test "$(grep -c -- "--db $tmp/pw2/pass-2.db" "$tmp/tune-args")" = 1
# a header's command line is one line of at most 255 characters: a long training shapes path is cut, not refused
# after the timing
long=$tmp/$(printf 'd%.0s' $(seq 1 240))
mkdir -p "$long" && cp "$tmp/pshapes.txt" "$long/"
rm -f "$tmp/make-args"
KGEN_CATALOGUE_SHAPES="$long/pshapes.txt" sh "$SCRIPT" "$tmp/p" "$tmp/pw3" >"$tmp/out" 2>"$tmp/err"
cmdline=$(grep -A1 -x -- --command "$tmp/make-args" | tail -n 1)
check "a long command line: cut to 255 characters (${#cmdline})" test "${#cmdline}" = 255
check "... ending in '...'" test "${cmdline%...}" != "$cmdline"
for v in 0 9 x; do
    KGEN_CATALOGUE_PASSES=$v sh "$SCRIPT" "$tmp/p" "$tmp/pbad" >"$tmp/out" 2>"$tmp/err"
    check "KGEN_CATALOGUE_PASSES='$v' exits 2" test $? = 2
    check "... saying so" grep -q "KGEN_CATALOGUE_PASSES: not a count from 1 to 8 '$v'" "$tmp/err"
done
for v in x 1.2.3 -1 .; do
    KGEN_CATALOGUE_PASS_BELOW=$v sh "$SCRIPT" "$tmp/p" "$tmp/pbad" >"$tmp/out" 2>"$tmp/err"
    check "KGEN_CATALOGUE_PASS_BELOW='$v' exits 2" test $? = 2
    check "... saying so" grep -q "KGEN_CATALOGUE_PASS_BELOW: not a number '$v'" "$tmp/err"
done
check "... before anything is made" test ! -e "$tmp/pbad"
# KGEN_CATALOGUE_EXTEND: the catalogue's kernels timed only at the training pairs it has no times for, the
# added kernels (KGEN_CATALOGUE_ADD) at every pair, make keeps the catalogue's kernels and times. Training
# shapes: two the committed catalogue timed in every layout (512x160x42, 4.1 us at best in nn: launch-bound;
# 2896x35x1184) and two it did not; the stand-in's export times 10^3 at 4 us and 700^3 at 0.5 ms
standin "$tmp/x" 'GPU,matmul_warp,bm=64 layout=nn,nn,10,10,10,ok,0.004,0\nGPU,matmul_warp,bm=64 layout=nn,nn,700,700,700,ok,0.5,0\n'
printf '# shapes\ng01 512 160 42\ng03 2896 35 1184\nx1 700 700 700\nx2 10 10 10\n' >"$tmp/xshapes.txt"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" \
    "$tmp/xw" >"$tmp/out" 2>"$tmp/err"
check "EXTEND: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... the candidates are the catalogue's kernels" cmp -s "$tmp/xw/candidates.txt" "$tmp/base.cfg"
check "... the shapes it has no times for, per layout" \
    test "$(cat "$tmp/xw/new-shapes-nn.txt")" = "$(printf 'x1 700 700 700\nx2 10 10 10')"
check "... timed there in each layout, and nothing else" \
    test "$(grep -c -- "--configs $tmp/xw/candidates.txt --shapes $tmp/xw/new-shapes-" "$tmp/tune-args")" = 4
check "... step 2c: the launch-bound pairs among them (10^3, not 512x160x42, which the catalogue timed)" \
    test "$(cat "$tmp/xw/pass-shapes-nn.txt")" = "x2 10 10 10"
check "... make keeps the catalogue's kernels and times" \
    test "$(grep -A1 -x -e --kernels -e --measured "$tmp/make-args" | grep -vx -e -- -e --kernels -e --measured)" = \
    "$(printf 'catalogue/sm_90.txt\ncatalogue/sm_90.txt')"
check "... adds none" sh -c "! grep -qx -- --add '$tmp/make-args'"
check "... the header says how" grep -q "candidates: the kernels of catalogue/sm_90.txt, timed at the training pairs it had no times for; 1 launch-bound pairs timed in 3 passes)" "$tmp/make-args"
printf '# a kernel to add\nmatmul_warp bm=32 bn=32\n' >"$tmp/add.cfg"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
check "EXTEND and ADD: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... the added kernels at every training pair in each layout" \
    test "$(grep -c -- "--configs $tmp/xw2/added.txt --shapes $tmp/xshapes.txt" "$tmp/tune-args")" = 4
check "... the catalogue's at the new ones" \
    test "$(grep -c -- "--configs $tmp/xw2/candidates.txt --shapes $tmp/xw2/new-shapes-" "$tmp/tune-args")" = 4
check "... step 2c: the added kernels at every launch-bound pair, by the catalogue's times too" \
    test "$(grep -c -- "--configs $tmp/xw2/added.txt --shapes $tmp/xw2/pass-shapes-nn.txt" "$tmp/tune-args")" = 2 \
    -a "$(cat "$tmp/xw2/pass-shapes-nn.txt")" = "$(printf 'g01 512 160 42\nx2 10 10 10')"
check "... the catalogue's at the new one" \
    test "$(grep -c -- "--configs $tmp/xw2/candidates.txt --shapes $tmp/xw2/pass-new-shapes-nn.txt" "$tmp/tune-args")" = 2
check "... make adds them" test "$(grep -A1 -x -- --add "$tmp/make-args" | tail -n 1)" = "$tmp/add.cfg"
check "... the WORK_DIR keeps their list (without comments) to check a resumed run by" \
    test "$(cat "$tmp/xw2/added.txt")" = "matmul_warp bm=32 bn=32"
check "... the header names it" grep -q "and those of $tmp/add.cfg at every pair" "$tmp/make-args"
check "... all of them kept" sh -c "! grep -qx -- --add-best '$tmp/make-args'"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_ADD_BEST=1 \
    KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
check "ADD_BEST: exits 0, the run resumed ($(cat "$tmp/err"))" test $? = 0
check "... make keeps at most that many" test "$(grep -A1 -x -- --add-best "$tmp/make-args" | tail -n 1)" = 1
check "... the header says so" grep -q "and those of $tmp/add.cfg at every pair (at most 1 kept)" "$tmp/make-args"
for bad in 0 01 x -1; do
    KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_ADD_BEST=$bad \
        KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
    check "ADD_BEST=$bad: refused (2)" test $? = 2
    check "... saying why" grep -q "KGEN_CATALOGUE_ADD_BEST: '$bad' is not a count of kernels" "$tmp/err"
done
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_MAX_COMPILE=55.5 \
    KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
check "MAX_COMPILE: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... make fits the set to it" test "$(grep -A1 -x -- --max-compile "$tmp/make-args" | tail -n 1)" = 55.5
check "... the header says so" grep -q -- "^scripts/build-catalogue.sh (--max-compile 55.5, training shapes" "$tmp/make-args"
for bad in x 1.2.3 .5 5. -1; do
    KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_MAX_COMPILE=$bad \
        KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
    check "MAX_COMPILE=$bad: refused (2)" test $? = 2
    check "... saying why" grep -q "KGEN_CATALOGUE_MAX_COMPILE: '$bad' is not a number of seconds" "$tmp/err"
done
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add.cfg" KGEN_CATALOGUE_MAX_COMPILE=kept \
    KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
check "MAX_COMPILE=kept with EXTEND: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... make fits the set to what the kept take" test "$(grep -A1 -x -- --max-compile "$tmp/make-args" | tail -n 1)" = kept
KGEN_CATALOGUE_MAX_COMPILE=kept KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw4" \
    >"$tmp/out" 2>"$tmp/err"
check "MAX_COMPILE=kept with no kept catalogue: refused (2)" test $? = 2
check "... saying why" grep -q "KGEN_CATALOGUE_MAX_COMPILE=kept fits the set to what a kept catalogue's kernels take" "$tmp/err"
check "... nothing made" test ! -e "$tmp/xw4/db.sqlite"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD_BEST=2 KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xw3" >"$tmp/out" 2>"$tmp/err"
check "ADD_BEST without ADD: refused (2)" test $? = 2
check "... saying why" grep -q "KGEN_CATALOGUE_ADD_BEST chooses among the kernels of KGEN_CATALOGUE_ADD" "$tmp/err"
# EXTEND with step 2b (KGEN_CATALOGUE_TUNE): cuBLAS at the training shapes, kgen tune at those furthest below
# it by the catalogue's times and those just measured, and the winners that beat them by more than 3 % added.
# A stand-in kgen whose exports time bm=64 at 2000^3 and 1500^3 nn in 1 ms (the catalogue has no time there),
# and whose tunes (tune.db) won 2000^3 with bm=128 in 0.5 ms (final stage) and 1500^3 with bm=96 in 0.99 ms
# (not 3 % faster: left out), or with TUNED_MS set, 2000^3 in that; a stand-in kgen-bench: cuBLAS 0.5 ms at both
mkdir -p "$tmp/t/cli" "$tmp/t/bench"
# shellcheck disable=SC2016 # the stand-ins' own $1, $@, $a, $r and $prev
printf '#!/bin/sh
case "$1 $2" in
device*) echo "  Compute capability 9.0 (sm_90)" ;;
"catalogue make") printf "%%s\\n" "$@" > "%s/make-args" ;;
catalogue*) exec "%s" "$@" ;;
"db export") r="GPU,matmul_warp,bm=64 layout=nn,nn,2000,2000,2000,ok,1.0,0\\nGPU,matmul_warp,bm=64 layout=nn,nn,1500,1500,1500,ok,1.0,0\\n"
  case "$*" in *tune.db*) r="GPU,matmul_warp,bm=128 layout=nn,nn,2000,2000,2000,ok,0.6,${TUNED_MS:-0.5}\\nGPU,matmul_warp,bm=96 layout=nn,nn,1500,1500,1500,ok,0.99,0\\n" ;; esac
  for a in "$@"; do [ "$prev" = -o ] && printf "device,template,config,layout,m,n,k,outcome,time_ms,final_ms\\n$r" > "$a"; prev=$a; done ;;
tune*) echo "$@" >> "%s/tune-args"; for a in "$@"; do [ "$prev" = --db ] && : > "$a"; prev=$a; done ;;
esac
exit 0
' "$tmp" "$KGEN_BIN" "$tmp" >"$tmp/t/cli/kgen"
# shellcheck disable=SC2016
printf '#!/bin/sh
for a in "$@"; do [ "$prev" = --csv ] && printf "tag,M,N,K,cublas_ms,layout\\na,2000,2000,2000,0.5,nn\\nb,1500,1500,1500,0.5,nn\\n" > "$a"; prev=$a; done
exit 0
' >"$tmp/t/bench/kgen-bench"
chmod +x "$tmp/t/cli/kgen" "$tmp/t/bench/kgen-bench"
printf 'x1 2000 2000 2000\nx2 1500 1500 1500\n' >"$tmp/tshapes.txt"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_ADD_BEST=3 \
    KGEN_CATALOGUE_SHAPES="$tmp/tshapes.txt" sh "$SCRIPT" "$tmp/t" "$tmp/tw" >"$tmp/out" 2>"$tmp/err"
check "EXTEND and TUNE: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... tunes at the two shapes furthest below cuBLAS" \
    test "$(cat "$tmp/tw/tune-shapes.txt")" = "$(printf 'tune01 1500 1500 1500\ntune02 2000 2000 2000')"
check "... in the four layouts" test "$(grep -c -- "--shapes $tmp/tw/tune-shapes.txt" "$tmp/tune-args")" = 4
check "... the winner 3 % faster than the fastest there added, not the other" \
    test "$(cat "$tmp/tw/winners.txt")" = "matmul_warp bm=128"
check "... timed at every training pair in each layout" \
    test "$(grep -c -- "--configs $tmp/tw/winners.txt --shapes $tmp/tshapes.txt" "$tmp/tune-args")" = 4
check "... the candidates are still the catalogue's kernels" cmp -s "$tmp/tw/candidates.txt" "$tmp/base.cfg"
check "... make adds it" test "$(grep -A1 -x -- --add "$tmp/make-args" | tail -n 1)" = "$tmp/tw/adding.txt" \
    -a "$(cat "$tmp/tw/adding.txt")" = "matmul_warp bm=128"
check "... at most KGEN_CATALOGUE_ADD_BEST of them" test "$(grep -A1 -x -- --add-best "$tmp/make-args" | tail -n 1)" = 3
check "... the header says how" grep -q "it had no times for, with kgen tune's winners at 2 shapes furthest below cuBLAS (at most 3 kept)" \
    "$tmp/make-args"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_ADD="$tmp/add.cfg" \
    KGEN_CATALOGUE_SHAPES="$tmp/tshapes.txt" sh "$SCRIPT" "$tmp/t" "$tmp/tw2" >"$tmp/out" 2>"$tmp/err"
check "EXTEND, ADD and TUNE: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... make adds the list's kernels, then the winner" \
    test "$(cat "$tmp/tw2/adding.txt")" = "$(printf 'matmul_warp bm=32 bn=32\nmatmul_warp bm=128')"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_ADD="$tmp/add.cfg" \
    KGEN_CATALOGUE_SHAPES="$tmp/tshapes.txt" sh "$SCRIPT" "$tmp/t" "$tmp/tw2" >"$tmp/out" 2>"$tmp/err"
check "... resumed: exits 0, no cuBLAS timed again ($(cat "$tmp/err"))" test $? = 0 -a ! -s "$tmp/err"
check "... the same kernels added" \
    test "$(cat "$tmp/tw2/adding.txt")" = "$(printf 'matmul_warp bm=32 bn=32\nmatmul_warp bm=128')"
rm -f "$tmp/make-args" "$tmp/tune-args"
TUNED_MS=0.98 KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_ADD_BEST=2 \
    KGEN_CATALOGUE_SHAPES="$tmp/tshapes.txt" sh "$SCRIPT" "$tmp/t" "$tmp/tw3" >"$tmp/out" 2>"$tmp/err"
check "EXTEND and TUNE with no winner 3 % faster: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... nothing added, and no --add-best" \
    sh -c "! grep -qx -e --add -e --add-best '$tmp/make-args' && test ! -s '$tmp/tw3/winners.txt'"
# every pair timed already and no winner: nothing written (g01 is a pair of the catalogue, 512x160x42)
printf 'g01 512 160 42\n' >"$tmp/told.txt"
rm -f "$tmp/make-args" "$tmp/tune-args"
TUNED_MS=0.98 KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_SHAPES="$tmp/told.txt" \
    sh "$SCRIPT" "$tmp/t" "$tmp/tw5" >"$tmp/out" 2>"$tmp/err"
check "EXTEND and TUNE, every pair timed, no winner: exits 0 ($(cat "$tmp/err"))" test $? = 0
check "... saying so" grep -q "step 2b found no kernel to add: nothing to time, nothing written" "$tmp/out"
check "... nothing made" test ! -e "$tmp/make-args"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_TUNE=2 KGEN_CATALOGUE_SHAPES="$tmp/tshapes.txt" \
    sh "$SCRIPT" "$tmp/x" "$tmp/tw4" >"$tmp/out" 2>"$tmp/err"
check "EXTEND and TUNE without kgen-bench: refused (2)" test $? = 2
check "... saying so, before any timing ($(cat "$tmp/err"))" grep -q "kgen-bench, which is not there" "$tmp/err"
check "... before any timing" test ! -e "$tmp/tune-args"
# resumed with another list to add, or none: refused before any timing
printf 'matmul_warp bm=64 bn=32\n' >"$tmp/add2.cfg"
rm -f "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/add2.cfg" KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xw2" >"$tmp/out" 2>"$tmp/err"
check "EXTEND resumed with another ADD list exits 1" test $? = 1
check "... saying so" grep -q "added.txt is not the configurations of $tmp/add2.cfg" "$tmp/err"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" sh "$SCRIPT" "$tmp/x" "$tmp/xw2" \
    >"$tmp/out" 2>"$tmp/err"
check "EXTEND resumed without the ADD list exits 1" test $? = 1
check "... saying so" grep -q "holds kernels to add and KGEN_CATALOGUE_ADD is not set" "$tmp/err"
check "... before any timing" test ! -e "$tmp/tune-args"
# nothing to time: the catalogue has times at every training pair, and no kernel to add
printf 'g01 512 160 42\n' >"$tmp/xold.txt"
rm -f "$tmp/make-args" "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_SHAPES="$tmp/xold.txt" sh "$SCRIPT" "$tmp/x" \
    "$tmp/xw3" >"$tmp/out" 2>"$tmp/err"
check "EXTEND with every pair timed: exits 0" test $? = 0
check "... saying so" grep -q "nothing to time, nothing written" "$tmp/out"
check "... nothing timed or made" test ! -e "$tmp/tune-args" -a ! -e "$tmp/make-args"
# refused before anything runs
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_KERNELS=12 run 2 "it keeps its own kernels" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_KEEP="$SRC/catalogue/sm_90.txt" \
    run 2 "it keeps its own kernels" sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
KGEN_CATALOGUE_EXTEND="$tmp/none.txt" run 2 "KGEN_CATALOGUE_EXTEND: '$tmp/none.txt' must be a readable catalogue" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
KGEN_CATALOGUE_ADD="$tmp/add.cfg" run 2 "or more, and it adds to KGEN_CATALOGUE_EXTEND's catalogue" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/nosuch.cfg" run 2 \
    "KGEN_CATALOGUE_ADD: '$tmp/nosuch.cfg' must be a readable" sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
printf '# comments only\n\n' >"$tmp/empty.cfg"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/empty.cfg" run 2 \
    "KGEN_CATALOGUE_ADD: '$tmp/empty.cfg' must be a readable --configs list of one configuration or more" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xbad"
check "... before anything is made" test ! -e "$tmp/xbad"
# a kernel the catalogue holds already: refused before any timing (make would refuse it after)
sed -n 3p "$tmp/base.cfg" >"$tmp/dup.cfg"
rm -f "$tmp/tune-args"
KGEN_CATALOGUE_EXTEND="$SRC/catalogue/sm_90.txt" KGEN_CATALOGUE_ADD="$tmp/dup.cfg" KGEN_CATALOGUE_SHAPES="$tmp/xshapes.txt" \
    sh "$SCRIPT" "$tmp/x" "$tmp/xw4" >"$tmp/out" 2>"$tmp/err"
check "ADD of a kernel the catalogue holds exits 2" test $? = 2
check "... saying so" grep -q "KGEN_CATALOGUE_ADD: already a kernel of catalogue/sm_90.txt: $(cat "$tmp/dup.cfg")" "$tmp/err"
check "... before any timing" test ! -e "$tmp/tune-args"
finish
