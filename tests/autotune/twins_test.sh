#!/usr/bin/env bash
# twins_test.sh -- `kgen catalogue twins`, no GPU: a catalogue written here whose
# kernels each miss one layout where another layout's time says they would win,
# each for another reason (its vector copies' needs, a spill, check()), and the
# twins proposed for them.
#
#   twins_test.sh KGEN
set -u
KGEN=$1
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
export KGEN_CACHE_DIR=$tmp/cache

# kernels 1 and 2: copies of single floats; 3: 16-byte copies of B in nn (NEEDS 4B), refused in tn by
# check() (cc=1 changes nothing there); 4: 16-byte copies of B in nn and tn; 5 spills in nn (pred=1);
# 6: a 2-row matmul_skinny kernel with 16-byte copies of B, whose space lists vec=4 only (vec=1 is in
# its space_groups)
k1='bm=32 bn=64 bk=8 wm=32 wn=64 wk=1 tm=2 tn=4 ln=8 at=1 bt=0 pad=4 vec=1 pack=0 stages=3 ba=0 mid=0 pred=0 xb=0 raster=1 splitk=1 cl=0 cc=1 sk=1 red=4 minb=2 bounds=1'
k3='bm=32 bn=64 bk=8 wm=32 wn=32 wk=1 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 pack=0 stages=3 ba=0 mid=0 pred=0 xb=0 raster=1 splitk=8 cl=0 cc=1 sk=0 red=4 minb=2 bounds=1'
k4='bm=32 bn=32 bk=8 wm=32 wn=32 wk=1 tm=2 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 pack=0 stages=3 ba=0 mid=0 pred=0 xb=0 raster=1 splitk=1 cl=0 cc=0 sk=1 red=4 minb=1 bounds=1'
k5='bm=256 bn=64 bk=8 wm=64 wn=64 wk=1 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=1 pack=0 stages=2 ba=0 mid=0 pred=1 xb=0 raster=1 splitk=1 cl=0 cc=1 sk=1 red=4 minb=1 bounds=1'
k6='small=m ms=2 vec=4 kc=512 cs=1 pipe=2'
# write_cat FILE [EXTRA_KERNEL_LINE EXTRA_NN_TIME_AT_3000x256x4000]
write_cat() {
    local x=${2:+ -} y=${3:-}
    {
        printf 'kgen-catalogue 3\narch 90\nsms 132\ndevice NVIDIA H200\ndriver 580.159.04\ndate 2026-11-28\ncommand written by twins_test.sh\n'
        printf 'kernel 1 matmul_warp 1 32 64 1 8 8 2 %s\n' "$k1"
        printf 'kernel 2 matmul_warp 1 32 64 1 8 8 2 %s\n' "${k1/minb=2/minb=1}"
        printf 'kernel 3 matmul_warp 4B,1,4B,4A 32 64 8 0 9 2 %s\n' "$k3"
        printf 'kernel 4 matmul_warp 4B,1,4,4A 32 32 1 8 12 2 %s\n' "$k4"
        printf 'kernel 5 matmul_warp 1 256 64 1 8 2 2 %s\n' "$k5"
        printf 'kernel 6 matmul_skinny 4B 2 128 K/512 0 2 2 %s\n' "$k6"
        [ -n "${2:-}" ] && printf '%s\n' "$2"
        # 3000x25x2000: kernel 4 runs nt in 100 us; nn and tn refuse it (N = 25), the best there 150
        printf 'time nn 3000 25 2000 150 160 - - 200 -%s\n' "$x"
        printf 'time nt 3000 25 2000 150 160 300 100 200 -%s\n' "$x"
        printf 'time tn 3000 25 2000 150 160 300 - 200 -%s\n' "$x"
        # 3000x256x4000: kernel 5 runs tn in 300 us, spills in nn, where the best is 500
        printf 'time nn 3000 256 4000 500 510 600 550 - -%s\n' "${y:+ $y}"
        printf 'time tn 3000 256 4000 700 710 - 800 300 -%s\n' "$x"
        # 1000x512x1000: kernel 3 runs nn in 50 us, check() refuses it in tn, where the best is 80
        printf 'time nn 1000 512 1000 90 95 50 60 120 -%s\n' "$x"
        printf 'time tn 1000 512 1000 80 85 - 90 100 -%s\n' "$x"
        # 2x7984x1257: kernel 6 runs nn in 10 us; tt refuses it (ldb = K = 1257), the best there 20
        printf 'time nn 2 7984 1257 20 20 20 20 20 10%s\n' "$x"
        printf 'time tt 2 7984 1257 20 20 20 20 20 -%s\n' "$x"
        # 2000^3: kernel 2 runs nt in 80 us and was not timed in nn, where it runs too (the best 100)
        printf 'time nn 2000 2000 2000 100 - 120 130 140 -%s\n' "$x"
        printf 'time nt 2000 2000 2000 100 80 120 130 140 -%s\n' "$x"
    } >"$1"
}
write_cat "$tmp/cat.txt"
"$KGEN" catalogue twins "$tmp/cat.txt" -o "$tmp/tw.txt" 2>"$tmp/tw.err"
check "twins exits 0" test $? = 0
cat "$tmp/tw.err"
check "six holes, four twins" grep -q "^kgen catalogue twins: 4 twins for 6 holes" "$tmp/tw.err"
check "kernel 4's hole in nn, 1.50x, its needs named" \
    grep -q "kernel 4 in nn: 1 pair, 1.50x .*ldb=25 is not a multiple of 4" "$tmp/tw.err"
check "kernel 5's hole in nn, 1.67x, its spill named" grep -q "kernel 5 in nn: 1 pair, 1.67x .*is pruned: spills" "$tmp/tw.err"
check "kernel 3's hole in tn, 1.60x, check() named" grep -q "kernel 3 in tn: 1 pair, 1.60x .*check() refuses it in tn" "$tmp/tw.err"
check "kernel 2 runs in nn: said, no twin sought" \
    sh -c "grep -A 1 'kernel 2 in nn: 1 pair, 1.25x .*it runs in nn at 2000x2000x2000' '$tmp/tw.err' | grep -q 'no twin: the kernel itself runs there'"
check "the largest gain first" sh -c "grep '^kgen catalogue twins: kernel' '$tmp/tw.err' | head -n 1 | grep -q 'kernel 6 in tt'"
check "kernel 5's twin changes one parameter" \
    sh -c "grep -A 1 'kernel 5 in nn' '$tmp/tw.txt' | grep -qx '# twin: [a-z]*=[0-9a-z]*->[0-9a-z]*'"
check "kernel 5's twin keeps its tile" sh -c "grep -A 2 'kernel 5 in nn' '$tmp/tw.txt' | grep -q '^matmul_warp bm=256 bn=64 '"
check "kernel 6's twin: vec=1, a value of its template's space_groups" grep -qxF "matmul_skinny ${k6/vec=4/vec=1}" "$tmp/tw.txt"
check "each twin follows the hole it fills" sh -c "grep -A 2 'kernel 3 in tn' '$tmp/tw.txt' | grep -q '^# twin: '"
check "kernel 4's holes in nn and tn share one twin" \
    sh -c "grep -A 1 'kernel 4 in tn' '$tmp/tw.txt' | grep -q '^# twin: one above (kernel 4 in nn)'"
check "four configurations listed" test "$(grep -c '^matmul_' "$tmp/tw.txt")" = 4
"$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/tw.txt" --layout nn --m 3000 --n 25 --k 2000 >/dev/null 2>"$tmp/d.err"
check "the tuner reads the list" grep -q "strategy exhaustive: 4 evaluated" "$tmp/d.err"
# each twin runs in its hole's layout at its hole's pair (not pruned there: would-be-timed)
twin_runs() { # HOLE LAYOUT M N K
    grep -A 2 "$1" "$tmp/tw.txt" | grep '^matmul_' >"$tmp/one.txt"
    "$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/one.txt" --layout "$2" --m "$3" --n "$4" --k "$5" \
        >/dev/null 2>"$tmp/one.err"
    grep -q "would-be-timed 1" "$tmp/one.err"
}
check "kernel 3's twin runs in tn at its hole" twin_runs 'kernel 3 in tn' tn 1000 512 1000
check "kernel 4's twin runs in nn at its hole" twin_runs 'kernel 4 in nn' nn 3000 25 2000
check "kernel 4's twin runs in tn there too" twin_runs 'kernel 4 in nn' tn 3000 25 2000
check "kernel 5's twin compiles in nn without spills" twin_runs 'kernel 5 in nn' nn 3000 256 4000
check "kernel 6's twin runs in tt at its hole" twin_runs 'kernel 6 in tt' tt 2 7984 1257
check "kernel 4's twin: the model's first, single-float copies" grep -qxF "matmul_warp ${k4/vec=4/vec=1}" "$tmp/tw.txt"
check "kernel 4's twin keeps its tile and changes one parameter" \
    sh -c "grep -A 2 'kernel 4 in nn' '$tmp/tw.txt' | grep -q '^# twin: [a-z]*=[0-9a-z]*->[0-9a-z]*\$'"

# a twin the catalogue holds already is not proposed again: kernel 7 is kernel 5 with pred=0, slower in nn
write_cat "$tmp/cat6.txt" "kernel 7 matmul_warp 1 256 64 1 8 2 2 ${k5/pred=1/pred=0}" 450
"$KGEN" catalogue twins "$tmp/cat6.txt" -o "$tmp/tw6.txt" 2>"$tmp/tw6.err"
check "with kernel 7: exits 0" test $? = 0
check "with kernel 7: kernel 5's hole is still there (1.50x)" grep -q "kernel 5 in nn: 1 pair, 1.50x" "$tmp/tw6.err"
check "with kernel 7: its configuration is not proposed" sh -c "! grep -qxF 'matmul_warp ${k5/pred=1/pred=0}' '$tmp/tw6.txt'"
check "with kernel 7, measured at the hole: the hole is filled, no twin sought" \
    grep -q "no twin: kernel 7, its twin in the catalogue (1 parameter away), is measured at every hole pair" "$tmp/tw6.err"
# kernel 7 without a time at the hole (refused there, say): it is named, and another twin is proposed
write_cat "$tmp/cat7.txt" "kernel 7 matmul_warp 1 256 64 1 8 2 2 ${k5/pred=1/pred=0}" -
"$KGEN" catalogue twins "$tmp/cat7.txt" -o "$tmp/tw7.txt" 2>"$tmp/tw7.err"
check "kernel 7 unmeasured at the hole: named as a nearer kernel" \
    grep -q "kernel 7 of the catalogue is 1 parameter from kernel 5: not proposed" "$tmp/tw7.err"
check "kernel 7 unmeasured at the hole: another twin for kernel 5" \
    sh -c "grep -A 2 'kernel 5 in nn' '$tmp/tw7.txt' | grep '^matmul_warp bm=256' | grep -qv 'pred=0 xb=0 raster=1 splitk=1 cl=0 cc=1 sk=1 red=4 minb=1 bounds=1$'"

# a hole of two pairs: kernel 4 also refused at 3000x25x4000 in nn (1.40x), runs nt there
sed 's/^time nn 3000 25 2000 /&/' "$tmp/cat.txt" | awk '{ print } /^time nt 3000 25 2000/ {
    print "time nn 3000 25 4000 280 300 - - 400 -"; print "time nt 3000 25 4000 280 300 560 200 400 -" }' >"$tmp/two.txt"
"$KGEN" catalogue twins "$tmp/two.txt" -o "$tmp/tw2.txt" 2>"$tmp/tw2.err"
check "two pairs: one hole, its gain their geometric mean (sqrt(1.5 x 1.4) = 1.45), the largest 1.50x" \
    grep -q "kernel 4 in nn: 2 pairs, 1.45x on geometric mean (1.50x at 3000x25x2000)" "$tmp/tw2.err"
grep -A 2 'kernel 4 in nn' "$tmp/tw2.txt" | grep '^matmul_' >"$tmp/two4.txt"
check "two pairs: the twin runs at the second pair" twin_runs 'kernel 4 in nn' nn 3000 25 4000
"$KGEN" catalogue twins "$tmp/two.txt" --min-pairs 2 -o "$tmp/tw2m.txt" 2>"$tmp/tw2m.err"
check "--min-pairs 2: the two-pair hole alone gets a twin" grep -q "^kgen catalogue twins: 1 twin for 6 holes" "$tmp/tw2m.err"
# kernel 4 untimed at 3000x24x2000 in nn, where it runs (2.00x, the largest gain), and refused at 3000x25x2000:
# the hole is not "runs there"; the reason is the refusal
awk '{ print } /^time nt 3000 25 2000/ {
    print "time nn 3000 24 2000 150 160 - - 200 -"; print "time nt 3000 24 2000 150 160 300 75 200 -" }' "$tmp/cat.txt" \
    >"$tmp/mixed.txt"
"$KGEN" catalogue twins "$tmp/mixed.txt" -o "$tmp/twm.txt" 2>"$tmp/twm.err"
check "a pair where it runs and one where it is refused: the refusal is the reason" \
    grep -q "kernel 4 in nn: 2 pairs, 1.73x on geometric mean (2.00x at 3000x24x2000); its preconditions refuse 3000x25x2000" \
    "$tmp/twm.err"
check "... and a twin is sought" sh -c "grep -A 2 'kernel 4 in nn' '$tmp/twm.txt' | grep -q '^matmul_warp '"

# thresholds
"$KGEN" catalogue twins "$tmp/cat.txt" --margin 1.62 -o "$tmp/m.txt" 2>"$tmp/m.err"
check "--margin 1.62: kernel 6's 2.00x and 5's 1.67x are holes, 3's 1.60x is not" \
    grep -q "^kgen catalogue twins: 2 twins for 2 holes" "$tmp/m.err"
"$KGEN" catalogue twins "$tmp/cat.txt" --margin 2 -o "$tmp/m2.txt" 2>"$tmp/m2.err"
check "--margin 2: a ratio of exactly 2.00 is a hole (at least F)" grep -q "^kgen catalogue twins: 1 twin for 1 hole" "$tmp/m2.err"
"$KGEN" catalogue twins "$tmp/cat.txt" --max-distance 1 -o "$tmp/d1.txt" 2>"$tmp/d1.err"
check "--max-distance 1: the twins change one parameter each" sh -c "grep '^# twin: ' '$tmp/d1.txt' | grep -q . &&
    ! grep '^# twin: ' '$tmp/d1.txt' | grep -q -- '->[^ ]* [a-z]*='"
"$KGEN" catalogue twins "$tmp/cat.txt" --per-hole 2 -o "$tmp/p2.txt" 2>"$tmp/p2.err"
grep -A 5 'kernel 4 in nn' "$tmp/p2.txt" | sed -n '2,5p' | grep '^matmul_' >"$tmp/p2k4.txt"
check "--per-hole 2: two twins for kernel 4's hole ($(wc -l <"$tmp/p2k4.txt"))" test "$(wc -l <"$tmp/p2k4.txt")" = 2
check "--per-hole 2: of two kinds, one packing its operands" \
    sh -c "grep -c 'pack=1' '$tmp/p2k4.txt' | grep -qx 1"
check "--per-hole 2: kernel 4's tn hole shares both twins of its nn hole" \
    test "$(grep -A 3 'kernel 4 in tn' "$tmp/p2.txt" | grep -c '^# twin: one above (kernel 4 in nn)')" = 2
check "--per-hole 2: the count is of configurations listed" \
    grep -q "^kgen catalogue twins: $(grep -c '^matmul_' "$tmp/p2.txt") twins for 6 holes" "$tmp/p2.err"
check "--per-hole 2: the model's first as before" \
    sh -c "head -n 1 '$tmp/p2k4.txt' | grep -qxF \"\$(grep -A 2 'kernel 4 in nn' '$tmp/tw.txt' | grep '^matmul_')\""
"$KGEN" catalogue twins "$tmp/cat.txt" --min-pairs 2 -o "$tmp/p.txt" 2>"$tmp/p.err"
check "--min-pairs 2: holes reported, no twin sought" grep -q "^kgen catalogue twins: 0 twins for 6 holes" "$tmp/p.err"
check "--min-pairs 2: the list is comments only" sh -c "! grep -q '^[^#]' '$tmp/p.txt'"

# no hole: nothing proposed
awk '$1 != "time" || ($2 == "nn" && $3 != 2000)' "$tmp/cat.txt" >"$tmp/none.txt"
"$KGEN" catalogue twins "$tmp/none.txt" -o "$tmp/n.txt" 2>"$tmp/n.err"
check "no hole: exits 0, says so" grep -q "^kgen catalogue twins: 0 twins for 0 holes" "$tmp/n.err"

# bad input: a clear message, nothing written
expect 2 "--margin" catalogue twins "$tmp/cat.txt" --margin 0.5 -o "$tmp/x.txt"
expect 2 "--max-distance" catalogue twins "$tmp/cat.txt" --max-distance 9 -o "$tmp/x.txt"
expect 2 "--per-hole" catalogue twins "$tmp/cat.txt" --per-hole 5 -o "$tmp/x.txt"
expect 2 "one CATALOGUE file" catalogue twins -o "$tmp/x.txt"
expect 2 "the architecture is the catalogue's" catalogue twins "$tmp/cat.txt" --arch sm_80 -o "$tmp/x.txt"
expect 1 "cannot open\|No such file" catalogue twins "$tmp/nothing.txt" -o "$tmp/x.txt"
sed 's/^time nn 3000 25 2000 150 /time nn 3000 25 2000 abc /' "$tmp/cat.txt" >"$tmp/bad.txt"
expect 2 "bad.txt:" catalogue twins "$tmp/bad.txt" -o "$tmp/x.txt"
check "no partial output" test ! -e "$tmp/x.txt"
expect 2 "which this command reads" catalogue twins "$tmp/cat.txt" -o "$tmp/cat.txt"

finish
