#!/usr/bin/env bash
# catalogue_test.sh -- `kgen catalogue candidates|make|kernels`, no GPU: the model's
# candidates for a few shapes, and a catalogue made from a measured export
# (data/catalogue_pilot_h200.csv: 10 configurations timed by `kgen tune
# --configs` at 10 training shapes in nn and nt on an H200, 2026-11-23).
#
#   catalogue_test.sh KGEN SOURCE_DIR
set -u
KGEN=$1 SRC=$2
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
export KGEN_CACHE_DIR=$tmp/cache
DATA=$SRC/data/catalogue_pilot_h200.csv

# candidates: a --configs list the tuner reads back
printf 'a 100 200 300\nb 64 64 64\nc 1000 1001 17\nd 2048 2048 2048\n' >"$tmp/shapes.txt"
"$KGEN" catalogue candidates --shapes "$tmp/shapes.txt" --template matmul --max 4 --per-shape 8 --per-kind 0 \
    -o "$tmp/cands.txt" 2>"$tmp/c.err"
check "candidates exits 0" test $? = 0
n=$(grep -c '^matmul ' "$tmp/cands.txt")
check "between 1 and 4 candidates ($n)" test "$n" -ge 1 -a "$n" -le 4
check "no layout in a candidate" sh -c "! grep -q 'layout=' '$tmp/cands.txt'"
"$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/cands.txt" --m 64 --n 64 --k 64 >/dev/null 2>"$tmp/d.err"
check "the tuner reads the list" grep -q "strategy exhaustive: $n evaluated" "$tmp/d.err"
# one kernel listed twice, spelt two ways (a seed beside a candidate): timed once
printf 'matmul_warp bm=64 stages=3\nmatmul_warp bm=64 bn=128 stages=3 raster=1\n' >"$tmp/twice.txt"
"$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/twice.txt" --m 64 --n 64 --k 64 >/dev/null 2>"$tmp/d2.err"
check "a kernel listed twice is timed once" grep -q "strategy exhaustive: 1 evaluated" "$tmp/d2.err"
# --per-kind: the best of each kind besides (matmul's kinds: 16-byte copies or not)
"$KGEN" catalogue candidates --shapes "$tmp/shapes.txt" --template matmul --max 1 --per-shape 8 --per-kind 1 \
    -o "$tmp/kinds.txt" 2>/dev/null
check "--per-kind 1 adds a kernel of the other copy width" sh -c "grep -q 'vec=1' '$tmp/kinds.txt' && grep -q 'vec=4' '$tmp/kinds.txt'"
expect 2 "needs --shapes" catalogue candidates --template matmul
expect 2 "--max" catalogue candidates --shapes "$tmp/shapes.txt" --max 0
expect 2 "unknown catalogue command 'bake'" catalogue bake

# make: three kernels from the pilot's measurements
"$KGEN" catalogue make "$DATA" --max-kernels 3 --date 2026-11-23 --driver "580.159.04" -o "$tmp/cat.txt" \
    2>"$tmp/m.err"
check "make exits 0" test $? = 0
cat "$tmp/m.err"
check "make reports its choice" grep -q "8 kernels measured over 20 (layout, shape) pairs; 3 chosen" "$tmp/m.err"
check "header: version" grep -qx "kgen-catalogue 3" "$tmp/cat.txt"
check "header: arch" grep -qx "arch 90" "$tmp/cat.txt"
check "header: SMs" grep -qx "sms 132" "$tmp/cat.txt"
check "header: device" grep -qx "device NVIDIA H200" "$tmp/cat.txt"
check "header: driver" grep -qx "driver 580.159.04" "$tmp/cat.txt"
check "header: date" grep -qx "date 2026-11-23" "$tmp/cat.txt"
check "three kernels, numbered" test "$(grep '^kernel ' "$tmp/cat.txt" | cut -d' ' -f2 | tr '\n' ' ')" = "1 2 3 "
check "twenty time lines" test "$(grep -c '^time ' "$tmp/cat.txt")" = 20
check "each time line: layout, M N K and three times" \
    awk '/^time /{ if (NF != 8) exit 1 } END { exit 0 }' "$tmp/cat.txt"
# the first pick is the kernel with the least regret over all pairs: recompute it from the CSV
first=$(awk -F, 'NR > 1 && ($12 == "ok" || $12 == "slow") {
        cfg = $11; sub(/ layout=[a-z]+$/, "", cfg); key = $4 " " cfg; pair = $7 " " $8 " " $9 " " $10
        t[key, pair] = $14; keys[key] = 1; pairs[pair] = 1
        if (!(pair in best) || $14 < best[pair]) best[pair] = $14 }
    END { for (k in keys) { s = 0; for (p in pairs) s += ((k, p) in t) ? log(t[k, p] / best[p]) : log(8)
              if (bk == "" || s < bs) { bs = s; bk = k } }
          print bk }' "$DATA")
check "kernel 1 is the least-regret kernel ($first)" grep -q "^kernel 1 ${first%% *} [0-9]* [0-9]* [0-9]* [0-9]* [0-9]* [0-9]* [12] ${first#* }\$" "$tmp/cat.txt"
# a kernel's times are its measured ones, in microseconds
t1=$(awk -F, -v k="${first#* }" 'NR > 1 && $7 == "nn" && $8 == 512 && $9 == 512 && $10 == 512 {
        cfg = $11; sub(/ layout=[a-z]+$/, "", cfg); if (cfg == k) printf "%.2f", $14 * 1000 }' "$DATA")
check "kernel 1 at nn 512^3 is its measured $t1 us" grep -q "^time nn 512 512 512 $t1 " "$tmp/cat.txt"
# passes: several exports of one measurement, each (kernel, pair) the median of the passes that timed it (of two,
# their geometric mean). Passes 2 and 3 time only nn 512^3: kernel 1 there 1.5x and 3x as long as in pass 1,
# every other kernel 0.5x and 0.9x
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
for p in 2 3; do
    awk -F, -v OFS=, -v k="${first#* }" -v p=$p 'NR == 1 { print; next }
        $7 == "nn" && $8 == 512 && $9 == 512 && $10 == 512 && $12 == "ok" && !/"/ {
            cfg = $11; sub(/ layout=[a-z]+$/, "", cfg); $14 = (cfg == k ? (p == 2 ? 1.5 : 3) : (p == 2 ? 0.5 : 0.9)) * $14
            print }' "$DATA" >"$tmp/pass$p.csv"
done
check "the second pass holds nn 512^3 only ($(($(wc -l <"$tmp/pass2.csv") - 1)) rows)" \
    test "$(($(wc -l <"$tmp/pass2.csv") - 1))" -ge 3
# nn 512^3's times as `make` writes them: each kernel of cat.txt's (in its order) pass 1 time x factor f1 (kernel
# 1) or f (the others), in microseconds to two places
at512() {
    awk -v f1="$1" -v f="$2" -v k="${first#* }" 'FNR == NR { if (/^kernel /) { c = $11; for (i = 12; i <= NF; i++)
            c = c " " $i; id[c] = $2; n++ } next }
        FNR > 1 && $7 == "nn" && $8 == 512 && $9 == 512 && $10 == 512 {
            c = $11; sub(/ layout=[a-z]+$/, "", c); if (c in id) t[id[c]] = sprintf("%.2f", $14 * 1000 * (c == k ? f1 : f)) }
        END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), t[i]; print "" }' "$tmp/cat.txt" FS=, "$DATA"
}
"$KGEN" catalogue make "$DATA" "$tmp/pass2.csv" "$tmp/pass3.csv" --kernels "$tmp/cat.txt" --date 2026-11-23 \
    -o "$tmp/three.txt" 2>"$tmp/three.err"
check "make with three passes exits 0" test $? = 0
check "three passes: nn 512^3 the median, kernel 1's 1.5x, the others' 0.9x ($(at512 1.5 0.9))" \
    test "$(grep '^time nn 512 512 512 ' "$tmp/three.txt" | cut -d' ' -f6-)" = "$(at512 1.5 0.9)"
"$KGEN" catalogue make "$DATA" "$tmp/pass2.csv" --kernels "$tmp/cat.txt" --date 2026-11-23 -o "$tmp/two.txt" \
    2>"$tmp/two.err"
check "two passes: nn 512^3 their geometric mean ($(at512 1.224744871 0.707106781))" \
    test "$(grep '^time nn 512 512 512 ' "$tmp/two.txt" | cut -d' ' -f6-)" = "$(at512 1.224744871 0.707106781)"
check "one pass: nn 512^3 as measured ($(at512 1 1))" \
    test "$(grep '^time nn 512 512 512 ' "$tmp/cat.txt" | cut -d' ' -f6-)" = "$(at512 1 1)"
check "two passes: the header says one pair was timed in two" grep -q "^# 1 of the pairs, .* timed in 2 passes" "$tmp/two.txt"
check "one pass: no such line" sh -c "! grep -q 'timed in [0-9]* passes' '$tmp/cat.txt'"
check "three passes: every other pair as the one pass that timed it" \
    test "$(grep '^time ' "$tmp/three.txt" | grep -v '^time nn 512 512 512 ')" = \
    "$(grep '^time ' "$tmp/cat.txt" | grep -v '^time nn 512 512 512 ')"
"$KGEN" catalogue make "$tmp/pass3.csv" "$DATA" "$tmp/pass2.csv" --kernels "$tmp/cat.txt" --date 2026-11-23 \
    -o "$tmp/three-r.txt" 2>/dev/null
check "three passes: their order does not change a time" \
    test "$(grep '^time ' "$tmp/three.txt")" = "$(grep '^time ' "$tmp/three-r.txt")"
expect 2 "unexpected argument" catalogue make "$DATA" "$DATA" "$DATA" "$DATA" "$DATA" "$DATA" "$DATA" "$DATA" "$DATA" \
    --date 2026-11-23 -o "$tmp/x.txt"
printf 'device,cc\nnot,an export\n' >"$tmp/junk.csv"
expect 1 "catalogue make: $tmp/junk.csv: line 2: column cc" catalogue make "$DATA" "$tmp/junk.csv" --date 2026-11-23 -o "$tmp/x.txt"
check "a pass that cannot be read writes nothing" test ! -e "$tmp/x.txt"
# with room for all, a kernel joins only while it lowers the regret of kg_matmul's choice with each pair
# left out of its own prediction: more kernels, a regret no higher than the three's
"$KGEN" catalogue make "$DATA" --max-kernels 50 --tolerance 0 --date 2026-11-23 -o "$tmp/all.txt" 2>"$tmp/a.err"
loo() { sed -n 's/.*with each pair left out: \([0-9.]*\) of the best.*/\1/p' "$1"; }
check "all kernels: the leave-one-out regret is reported ($(loo "$tmp/a.err"), three: $(loo "$tmp/m.err"))" \
    test -n "$(loo "$tmp/a.err")" -a -n "$(loo "$tmp/m.err")"
check "all kernels: more than three chosen" test "$(grep -c '^kernel ' "$tmp/all.txt")" -gt 3
check "all kernels: no higher leave-one-out regret than three" \
    awk -v a="$(loo "$tmp/a.err")" -v b="$(loo "$tmp/m.err")" 'BEGIN { exit !(a + 0 <= b + 0) }'
check "the header states the leave-one-out regret" grep -q "^# .*leave-one-out regret $(loo "$tmp/m.err")" "$tmp/cat.txt"
# PERSISTENT: a stream-K kernel's (sk=1, 2) depth of K per step, its bk; 0 for any other kernel
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
check "PERSISTENT is a stream-K kernel's bk, else 0 ($(grep -c ' sk=[12] ' "$tmp/all.txt") stream-K)" \
    awk '/^kernel / { sk = 0; bk = -1
            for (i = 11; i <= NF; i++) { if ($i ~ /^sk=[12]$/) sk = 1; if ($i ~ /^bk=/) bk = substr($i, 4) }
            n++; if ($8 != (sk ? bk : 0)) bad++; if (sk) s++ }
        END { exit !(n > 0 && s > 0 && bad == 0) }' "$tmp/all.txt"

# LAUNCHES: 2 for a kernel with a beta pass (split-K without a cluster, stream-K, matmul_skinny with kc > 0),
# else 1
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
check "LAUNCHES: 2 where a beta pass comes first, else 1 ($(awk '/^kernel / && $10 == 2' "$tmp/all.txt" | wc -l) of 2)" \
    awk '/^kernel / { beta = 0; s = 0; cl = 0
            for (i = 11; i <= NF; i++) { if ($i ~ /^splitk=/) s = substr($i, 8); if ($i ~ /^cl=/) cl = substr($i, 4)
                if ($i ~ /^sk=[12]$/ || ($i ~ /^kc=/ && $i != "kc=0")) beta = 1 }
            if (s + 0 > 1 && cl == 0) beta = 1
            n++; if ($10 != 1 + beta) bad++; two += beta }
        END { exit !(n > 0 && two > 0 && two < n && bad == 0) }' "$tmp/all.txt"

# --kernels: a catalogue measured again keeps exactly its kernels, in its order, with the export's times.
# The three-kernel catalogue reversed stands for a committed one
# shellcheck disable=SC2016 # awk programs: their $i are awk's fields
{ grep -v '^kernel \|^time ' "$tmp/cat.txt"
  grep '^kernel ' "$tmp/cat.txt" | sort -k2,2nr | awk '{ $2 = NR; print }'
  awk '/^time /{ print $1, $2, $3, $4, $5, $8, $7, $6 }' "$tmp/cat.txt"; } >"$tmp/rev.txt"
"$KGEN" catalogue make "$DATA" --kernels "$tmp/rev.txt" --date 2026-11-25 -o "$tmp/keep.txt" 2>"$tmp/k.err"
check "--kernels: exits 0" test $? = 0
cut_kernels() { grep '^kernel ' "$1" | cut -d' ' -f3,11-; }
check "--kernels: the catalogue's kernels in its order" \
    test "$(cut_kernels "$tmp/keep.txt")" = "$(cut_kernels "$tmp/rev.txt")"
check "--kernels: that order is not make's own" test "$(cut_kernels "$tmp/keep.txt")" != "$(cut_kernels "$tmp/cat.txt")"
check "--kernels: the header names the catalogue measured again" \
    grep -q "^# kgen kernel catalogue for sm_90: the 3 kernels of $tmp/rev.txt measured again" "$tmp/keep.txt"
# the first kept kernel's times are the third chosen one's: the same measurements
check "--kernels: each kernel's times are its measured ones" \
    test "$(awk '/^time /{ print $2, $3, $4, $5, $6 }' "$tmp/keep.txt")" = \
    "$(awk '/^time /{ print $2, $3, $4, $5, $8 }' "$tmp/cat.txt")"
# --add: a catalogue that gains a kernel. Its first two kernels and --add naming the third give the
# three-kernel catalogue, in its order, with the same times
# shellcheck disable=SC2016 # awk programs: their $i are awk's fields
{ grep -v '^kernel 3 \|^time ' "$tmp/cat.txt"
  awk '/^time /{ print $1, $2, $3, $4, $5, $6, $7 }' "$tmp/cat.txt"; } >"$tmp/first2.txt"
grep '^kernel 3 ' "$tmp/cat.txt" | awk '{ printf "%s", $3; for (i = 11; i <= NF; i++) printf " %s", $i; print "" }' \
    >"$tmp/third.cfg"
"$KGEN" catalogue make "$DATA" --kernels "$tmp/first2.txt" --add "$tmp/third.cfg" --date 2026-11-23 \
    -o "$tmp/added.txt" 2>"$tmp/a.err"
check "--add: exits 0" test $? = 0
check "--add: the two kernels, then the added one" test "$(cut_kernels "$tmp/added.txt")" = "$(cut_kernels "$tmp/cat.txt")"
check "--add: the same times" test "$(grep '^time ' "$tmp/added.txt")" = "$(grep '^time ' "$tmp/cat.txt")"
check "--add: the header names both lists" \
    grep -q "the 2 kernels of $tmp/first2.txt and the 1 of $tmp/third.cfg, measured again" "$tmp/added.txt"
check "--add: the report says so" grep -q "the 2 of $tmp/first2.txt kept, and those of $tmp/third.cfg" "$tmp/a.err"
# a list line is matched in the template's canonical form: its parameters in another order match the export
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
awk '{ printf "%s", $1; for (i = NF; i >= 2; i--) printf " %s", $i; print "" }' "$tmp/third.cfg" >"$tmp/third-rev.cfg"
check "--add: a line in another order is another text" sh -c "! cmp -s '$tmp/third.cfg' '$tmp/third-rev.cfg'"
"$KGEN" catalogue make "$DATA" --kernels "$tmp/first2.txt" --add "$tmp/third-rev.cfg" --date 2026-11-23 \
    -o "$tmp/added-rev.txt" 2>"$tmp/a.err"
check "--add: parameters in another order: exits 0" test $? = 0
check "--add: parameters in another order: the same kernels" \
    test "$(cut_kernels "$tmp/added-rev.txt")" = "$(cut_kernels "$tmp/cat.txt")"
printf 'matmul bm=16 nosuch=1\n' >"$tmp/badparam.cfg"
expect 2 "badparam.cfg:1: .*nosuch" catalogue make "$DATA" --kernels "$tmp/first2.txt" --add "$tmp/badparam.cfg" \
    --date 2026-11-23 -o "$tmp/x.txt"
expect 2 "--add appends kernels to those of --kernels" catalogue make "$DATA" --add "$tmp/third.cfg" \
    --date 2026-11-23 -o "$tmp/x.txt"
expect 2 "third.cfg:1: .* is kernel 3 already" catalogue make "$DATA" --kernels "$tmp/cat.txt" \
    --add "$tmp/third.cfg" --date 2026-11-23 -o "$tmp/x.txt"
printf 'matmul bm=16 bn=16 bk=16 tm=1 tn=1 pad=0 vec=1 bounds=1\n' >"$tmp/unmeasured.cfg"
expect 2 "unmeasured.cfg:1: matmul bm=16 .* has no measurement in the export" catalogue make "$DATA" \
    --kernels "$tmp/first2.txt" --add "$tmp/unmeasured.cfg" --date 2026-11-23 -o "$tmp/x.txt"
expect 1 "catalogue make --add: .*nosuch.cfg" catalogue make "$DATA" --kernels "$tmp/first2.txt" --add "$tmp/nosuch.cfg" \
    --date 2026-11-23 -o "$tmp/x.txt"
check "--add refused: nothing written" test ! -e "$tmp/x.txt"
# --add-best: at most N of the listed kernels, each the one that most lowers the leave-one-out regret given the kept
# and those added before it, written in the list's order. Two measured kernels the catalogue does not hold are
# made fast in the export, one in nn (X, 0.5 of its times) and one in nt (Z, 0.4: the larger gain, so the cover
# takes it first), a third slow everywhere (Y, 3 times its times): a list Y, X, Z gains X and Z, in that order
# (rows with a quoted field, a failure's reason, are left as they are: they hold no time).
# shellcheck disable=SC2016 # awk programs: their $i are awk's fields
awk -F, 'NR > 1 && !index($0, "\"") && $12 == "ok" { c = $11; sub(/ layout=[a-z]+$/, "", c); print $4 " " c }' "$DATA" |
    sort -u >"$tmp/measured.cfg"
cut_kernels "$tmp/cat.txt" >"$tmp/chosen.cfg"
grep -v -x -F -f "$tmp/chosen.cfg" "$tmp/measured.cfg" | head -n 3 >"$tmp/others.cfg"
check "--add-best: three measured kernels outside the catalogue" test "$(wc -l <"$tmp/others.cfg")" = 3
X=$(sed -n 1p "$tmp/others.cfg") Y=$(sed -n 2p "$tmp/others.cfg") Z=$(sed -n 3p "$tmp/others.cfg")
awk -F, -v OFS=, -v x="$X" -v y="$Y" -v z="$Z" 'NR > 1 && !index($0, "\"") {
        c = $11; sub(/ layout=[a-z]+$/, "", c); c = $4 " " c
        f = (c == x && $7 == "nn") ? 0.5 : (c == z && $7 == "nt") ? 0.4 : c == y ? 3 : 1; $14 = $14 * f } { print }' \
    "$DATA" >"$tmp/best.csv"
printf '%s\n%s\n%s\n' "$Y" "$X" "$Z" >"$tmp/yxz.cfg"
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 3 \
    --date 2026-11-23 -o "$tmp/best.txt" 2>"$tmp/b.err"
check "--add-best: exits 0" test $? = 0
check "--add-best: the kept two, then X and Z in the list's order" \
    test "$(cut_kernels "$tmp/best.txt")" = "$(cut_kernels "$tmp/first2.txt"; echo "$X"; echo "$Z")"
check "--add-best: the header says 2 of the 3" \
    grep -q "the 2 kernels of $tmp/first2.txt and 2 of the 3 of $tmp/yxz.cfg (--add-best 3" "$tmp/best.txt"
check "--add-best: the report says 2 of the 3" grep -q "and 2 of the 3 of $tmp/yxz.cfg (--add-best 3)" "$tmp/b.err"
check "--add-best: the report gives the order taken, Z (line 3) first" \
    test "$(sed -n 's/^kgen catalogue: --add-best: .* line \([0-9]*\) taken \([a-z]*\): .*/\1 \2/p' "$tmp/b.err" |
        tr '\n' ' ')" = "3 first 2 next "
# shellcheck disable=SC2016
gain=$(sed -n 's/.*against the fastest of all 5: \([0-9.]*\), where the kept alone score \([0-9.]*\)$/\1 \2/p' \
    "$tmp/b.err")
check "--add-best: the regret against the fastest of all falls ($gain)" \
    awk -v g="$gain" 'BEGIN { split(g, v, " "); exit !(v[1] != "" && v[1] + 0 < v[2] + 0) }'
# with --max-compile too: the report counts the kept catalogue's kernels and all those measured as before the
# fit dropped any (the fit's own line says which went)
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 3 \
    --max-compile 1e5 --date 2026-11-23 -o "$tmp/bestf.txt" 2>"$tmp/bf.err"
btotal=$(sed -n 's/.*NVRTC took \([0-9.]*\) s over.*/\1/p' "$tmp/bf.err")
bsome=$(awk -v t="$btotal" 'BEGIN { printf "%.3f", t * 0.5 }')
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 3 \
    --max-compile "$bsome" --max-regret 100 --date 2026-11-23 -o "$tmp/bestf.txt" 2>"$tmp/bf.err"
check "--add-best with --max-compile $bsome (of $btotal s): exits 0, a kernel dropped ($(tail -n 1 "$tmp/bf.err"))" \
    test "$(grep -c '^kernel ' "$tmp/bestf.txt")" -lt 4
check "--add-best with --max-compile: the report says the 2 of the catalogue kept and 2 of the 3, as before the fit" \
    grep -q "the 2 of $tmp/first2.txt kept, and 2 of the 3 of $tmp/yxz.cfg (--add-best 3)" "$tmp/bf.err"
check "--add-best with --max-compile: against the fastest of all 5, as before the fit" \
    grep -q "against the fastest of all 5: " "$tmp/bf.err"
fitall=$(sed -n 's/^kgen catalogue: --max-compile .* (against the fastest of all 5: \([0-9.]*\))$/\1/p' "$tmp/bf.err")
check "--add-best with --max-compile: the fit's line gives the set written against the fastest of all 5 ($fitall)" \
    test -n "$fitall"
check "--add-best with --max-compile: the header gives that figure, the set written's" \
    grep -q "^# $fitall of the fastest of all 5 " "$tmp/bestf.txt"
# --max-compile kept: the budget is what the kept catalogue's kernels take, measured in the same run, so the two
# added must make room for themselves (or go)
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 3 \
    --max-compile kept --max-regret 100 --date 2026-11-23 -o "$tmp/bestk.txt" 2>"$tmp/bk.err"
check "--max-compile kept: exits 0 ($(grep -e '--max-compile kept' "$tmp/bk.err"))" test $? = 0
# shellcheck disable=SC2016
kept_fit=$(sed -n 's/.*--max-compile kept (\([0-9.]*\) s, what those of --kernels took): NVRTC took \([0-9.]*\) s.*, leaving \([0-9.]*\) s;.*/\1 \2 \3/p' \
    "$tmp/bk.err")
check "--max-compile kept: the budget is below what all four took, and the set left within it ($kept_fit)" \
    awk -v f="$kept_fit" 'BEGIN { n = split(f, v, " "); exit !(n == 3 && v[1] + 0 > 0 && v[1] + 0 < v[2] + 0 && v[3] + 0 <= v[1] + 0) }'
check "--max-compile kept: a kernel dropped" test "$(grep -c '^kernel ' "$tmp/bestk.txt")" -lt 4
check "--max-compile kept: the header says so" grep -q "^# Fitted to --max-compile kept: at most the [0-9.]* s of NVRTC that the 2 of $tmp/first2.txt took" "$tmp/bestk.txt"
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --max-compile kept --date 2026-11-23 \
    -o "$tmp/bestk0.txt" 2>"$tmp/bk0.err"
check "--max-compile kept, nothing added: nothing dropped" grep -q "; 0 dropped, leaving" "$tmp/bk0.err"
expect 2 "--max-compile kept fits the set to what the kernels of --kernels" catalogue make "$tmp/best.csv" \
    --max-compile kept --date 2026-11-23 -o "$tmp/x.txt"
check "--max-compile kept without --kernels: nothing written" test ! -e "$tmp/x.txt"
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 1 \
    --date 2026-11-23 -o "$tmp/best1.txt" 2>/dev/null
check "--add-best 1: Z alone, the larger gain" \
    test "$(cut_kernels "$tmp/best1.txt")" = "$(cut_kernels "$tmp/first2.txt"; echo "$Z")"
"$KGEN" catalogue make "$tmp/best.csv" --kernels "$tmp/first2.txt" --add "$tmp/yxz.cfg" --add-best 3 \
    --tolerance 0.05 --max-regret 3 --date 2026-11-23 -o "$tmp/best2.txt" 2>/dev/null
check "--add-best admits --tolerance and --max-regret (test_exchange checks what they do)" test $? = 0
expect 2 "--add-best K chooses among the kernels of --add" catalogue make "$DATA" --kernels "$tmp/first2.txt" \
    --add-best 1 --date 2026-11-23 -o "$tmp/x.txt"
expect 2 "--add-best must be 1..1000 (got '0')" catalogue make "$DATA" --kernels "$tmp/first2.txt" \
    --add "$tmp/yxz.cfg" --add-best 0 --date 2026-11-23 -o "$tmp/x.txt"
expect 2 "--kernels keeps that catalogue's kernels" catalogue make "$DATA" --kernels "$tmp/first2.txt" \
    --add "$tmp/yxz.cfg" --tolerance 0.05 --date 2026-11-23 -o "$tmp/x.txt"
check "--add-best refused: nothing written" test ! -e "$tmp/x.txt"
sed 's/^kernel 2 /kernel 7 /' "$tmp/rev.txt" >"$tmp/bad.txt"
# --measured: a catalogue's times stand in where no export timed that kernel at that pair. An export of the nn
# rows alone, with the catalogue of all: the nt times come from the catalogue, the nn ones from the export
awk -F, 'NR == 1 || $7 == "nn"' "$DATA" >"$tmp/nn.csv"
"$KGEN" catalogue make "$tmp/nn.csv" --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 \
    --driver "580.159.04" -o "$tmp/meas.txt" 2>"$tmp/meas.err"
check "--measured: exits 0" test $? = 0
check "--measured: every time as in the catalogue made from all rows" \
    test "$(grep '^time ' "$tmp/meas.txt")" = "$(grep '^time ' "$tmp/cat.txt")"
nt=$(grep '^time nt ' "$tmp/cat.txt" | tr ' ' '\n' | grep -c '^[0-9.]*$')
nt=$((nt - 3 * $(grep -c '^time nt ' "$tmp/cat.txt")))
check "--measured: the header counts the $nt nt times taken from it" \
    grep -q "^# $nt of the times are those $tmp/cat.txt held before" "$tmp/meas.txt"
"$KGEN" catalogue make "$tmp/nn.csv" --kernels "$tmp/cat.txt" --date 2026-11-23 -o "$tmp/nomeas.txt" 2>/dev/null
check "--measured: without it, no nt rows" sh -c "! grep -q '^time nt ' '$tmp/nomeas.txt'"
# an export's time replaces the catalogue's (a pair measured again): nn 512^3 timed again at twice the time
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
awk -F, -v OFS=, 'NR == 1 { print; next }
    $7 == "nn" && $8 == 512 && $9 == 512 && $10 == 512 && $12 == "ok" && !/"/ { $14 = 2 * $14; print }' "$DATA" \
    >"$tmp/slow512.csv"
"$KGEN" catalogue make "$tmp/slow512.csv" --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 \
    -o "$tmp/meas2.txt" 2>/dev/null
check "--measured: an export's time wins over the catalogue's ($(at512 2 2))" \
    test "$(grep '^time nn 512 512 512 ' "$tmp/meas2.txt" | cut -d' ' -f6-)" = "$(at512 2 2)"
check "--measured: every other time the catalogue's" \
    test "$(grep '^time ' "$tmp/meas2.txt" | grep -v '^time nn 512 512 512 ')" = \
    "$(grep '^time ' "$tmp/cat.txt" | grep -v '^time nn 512 512 512 ')"
# a kernel the catalogue holds keeps the catalogue's blocks per SM (BPS) where an export timed it again: the
# export's occupancy is that of whichever layout came first. Kernel 1's BPS changed in a copy of the catalogue
bps1=$(awk '$1 == "kernel" && $2 == 1 { print $9 }' "$tmp/cat.txt")
awk -v b=$((bps1 + 3)) '$1 == "kernel" && $2 == 1 { $9 = b } { print }' "$tmp/cat.txt" >"$tmp/bps.txt"
"$KGEN" catalogue make "$tmp/nn.csv" --kernels "$tmp/bps.txt" --measured "$tmp/bps.txt" --date 2026-11-23 \
    -o "$tmp/meas3.txt" 2>/dev/null
check "--measured: a kernel keeps the catalogue's blocks per SM ($((bps1 + 3)), the export's $bps1)" \
    test "$(awk '$1 == "kernel" && $2 == 1 { print $9 }' "$tmp/meas3.txt")" = $((bps1 + 3))
check "--measured: its times are still the export's and the catalogue's" \
    test "$(grep '^time ' "$tmp/meas3.txt")" = "$(grep '^time ' "$tmp/cat.txt")"
sed 's/^device NVIDIA H200$/device NVIDIA H100 80GB HBM3/' "$tmp/cat.txt" >"$tmp/h100.txt"
expect 2 "$tmp/h100.txt was measured on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), the exports on NVIDIA H200" \
    catalogue make "$DATA" --measured "$tmp/h100.txt" --date 2026-11-23 -o "$tmp/x.txt"
check "--measured from another device: nothing written" test ! -e "$tmp/x.txt"
expect 2 "catalogue make --measured: $tmp/bad.txt" catalogue make "$DATA" --measured "$tmp/bad.txt" --date 2026-11-23 \
    -o "$tmp/x.txt"
# --measured with no export: the catalogue's own times, kernels and blocks per SM, as they were (a refit)
"$KGEN" catalogue make --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 -o "$tmp/self.txt" \
    2>"$tmp/self.err"
check "--measured alone: exits 0" test $? = 0
check "--measured alone: kernels, times and driver as the catalogue's" \
    test "$(grep -v -e '^#' -e '^command ' "$tmp/self.txt")" = "$(grep -v -e '^#' -e '^command ' "$tmp/cat.txt")"
check "--measured alone: the header says whose times" grep -q "^# Its times are those $tmp/cat.txt held" "$tmp/self.txt"
expect 2 "one EXPORT file .* or more (none with --measured" catalogue make --kernels "$tmp/cat.txt" --date 2026-11-23 \
    -o "$tmp/x.txt"
# --max-compile: each kernel compiled in the layouts it has times in (NVRTC, no GPU); a budget above the set's
# takes nothing out, one below it drops kernels, the rest are the catalogue's in its order; one no set can
# meet is an error, nothing written
"$KGEN" catalogue make --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 --max-compile 1e5 \
    -o "$tmp/fit0.txt" 2>"$tmp/fit0.err"
check "--max-compile above the set's: exits 0" test $? = 0
check "--max-compile above the set's: every kernel kept" \
    test "$(grep -v '^#' "$tmp/fit0.txt")" = "$(grep -v '^#' "$tmp/self.txt")"
check "--max-compile: the report gives NVRTC's seconds, none dropped" \
    grep -q "kgen catalogue: --max-compile 1e5 (100000.0 s): NVRTC took [0-9.]* s over the set's kernels in their layouts; 0 dropped" \
    "$tmp/fit0.err"
total=$(sed -n 's/.*NVRTC took \([0-9.]*\) s over.*/\1/p' "$tmp/fit0.err")
half=$(awk -v t="$total" 'BEGIN { printf "%.3f", t / 2 }')
"$KGEN" catalogue make --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 --max-compile "$half" \
    -o "$tmp/fit.txt" 2>"$tmp/fit.err"
rc=$?
if [ "$rc" = 0 ]; then
    left=$(sed -n 's/.* dropped, leaving \([0-9.]*\) s;.*/\1/p' "$tmp/fit.err")
    check "--max-compile $half (half of $total s): the kernels left take at most that ($left s)" \
        awk -v l="$left" -v h="$half" 'BEGIN { exit !(l <= h) }'
    check "--max-compile: kernels dropped" test "$(grep -c '^kernel ' "$tmp/fit.txt")" -lt "$(grep -c '^kernel ' "$tmp/cat.txt")"
    awk '$1 == "kernel" { $1 = $2 = ""; print }' "$tmp/fit.txt" >"$tmp/fit.k"
    awk '$1 == "kernel" { $1 = $2 = ""; print }' "$tmp/cat.txt" | grep -F -x -f "$tmp/fit.k" >"$tmp/cat.k"
    check "--max-compile: those kept are the catalogue's, in its order" cmp -s "$tmp/fit.k" "$tmp/cat.k"
    check "--max-compile: the header says what was dropped" grep -q "^# Dropped, by their IDs before: " "$tmp/fit.txt"
else
    check "--max-compile $half: refused only where no kernel can go ($(cat "$tmp/fit.err"))" \
        grep -q "dropping any of them would leave" "$tmp/fit.err"
fi
expect 2 "dropping any of them would leave kg_matmul's choice at some (layout, shape) more than 2.00 times slower" \
    catalogue make --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" --date 2026-11-23 --max-compile 0.001 \
    -o "$tmp/x.txt"
check "--max-compile no set meets: nothing written" test ! -e "$tmp/x.txt"
expect 2 "--max-compile must be" catalogue make --kernels "$tmp/cat.txt" --measured "$tmp/cat.txt" \
    --date 2026-11-23 --max-compile 0 -o "$tmp/x.txt"
# kernels: a catalogue's kernels as a --configs list, in its order (what build-catalogue.sh times for KEEP)
"$KGEN" catalogue kernels "$tmp/rev.txt" -o "$tmp/rev.cfg"
check "kernels: exits 0" test $? = 0
check "kernels: template and configuration of each, in the file's order" \
    test "$(cat "$tmp/rev.cfg")" = "$(cut_kernels "$tmp/rev.txt")"
expect 2 "kernels: $tmp/bad.txt" catalogue kernels "$tmp/bad.txt"
expect 2 "one CATALOGUE file" catalogue kernels
# --layout: only the kernels with times in the layout (those kg_matmul runs there), each with layout=; here
# kernel 2 loses its nt times, and nothing was measured in tn
awk '/^time nt /{ $7 = "-" } { print }' "$tmp/rev.txt" >"$tmp/nont2.txt"
"$KGEN" catalogue kernels "$tmp/nont2.txt" --layout nn -o "$tmp/nn.cfg"
check "kernels --layout nn: every kernel, with layout=nn" \
    test "$(cat "$tmp/nn.cfg")" = "$(sed 's/$/ layout=nn/' "$tmp/rev.cfg")"
"$KGEN" catalogue kernels "$tmp/nont2.txt" --layout nt -o "$tmp/nt.cfg"
check "kernels --layout nt: kernel 2, unmeasured in nt, left out" \
    test "$(cat "$tmp/nt.cfg")" = "$(sed -n '1p;3p' "$tmp/rev.cfg" | sed 's/$/ layout=nt/')"
"$KGEN" catalogue kernels "$tmp/nont2.txt" --layout tn -o "$tmp/tn.cfg"
check "kernels --layout tn: none measured there, an empty list" test -e "$tmp/tn.cfg" -a ! -s "$tmp/tn.cfg"
expect 2 "--layout must be nn, nt, tn or tt (got 'xx')" catalogue kernels "$tmp/rev.txt" --layout xx
# -o onto the file a command reads: refused, the file as it was (make --kernels FILE -o FILE stays allowed)
cp "$tmp/rev.txt" "$tmp/rev.keep"
expect 2 "-o '$tmp/rev.txt' is '$tmp/rev.txt', which this command reads" catalogue kernels "$tmp/rev.txt" -o "$tmp/rev.txt"
cp "$DATA" "$tmp/export.csv"
expect 2 "which this command reads" catalogue make "$tmp/export.csv" --date 2026-11-25 -o "$tmp/export.csv"
check "the export left as it was" cmp -s "$tmp/export.csv" "$DATA"
check "the catalogue left as it was" cmp -s "$tmp/rev.txt" "$tmp/rev.keep"
expect 2 "which this command reads" catalogue candidates --shapes "$tmp/shapes.txt" -o "$tmp/./shapes.txt"
# --date by the catalogue's own rule, at once
expect 2 "catalogue make --date: date 2026-13-45 is not a real date" catalogue make "$DATA" --date 2026-13-45 -o "$tmp/x.txt"
expect 2 "catalogue make --date: date '26-1-1' is not YYYY-MM-DD" catalogue make "$DATA" --date 26-1-1 -o "$tmp/x.txt"
check "the shapes left as they were" grep -q '^d 2048 2048 2048$' "$tmp/shapes.txt"
check "--kernels: its report says kept, against the fastest of them" \
    grep -q "the 3 of $tmp/rev.txt kept. kg_matmul's choice from them" "$tmp/k.err"
# a kernel the export did not measure, another architecture's catalogue: an error naming it, nothing written
sed '/^kernel 2 /s/ bk=[0-9]* / bk=64 /' "$tmp/cat.txt" >"$tmp/other.txt"
expect 2 "kernel 2 of $tmp/other.txt" catalogue make "$DATA" --kernels "$tmp/other.txt" --date 2026-11-25 -o "$tmp/x.txt"
# (an sm_80 catalogue: its kernels without sm_90's clusters, vector reductions and skinny clusters)
sed 's/^arch 90$/arch 80/; s/ cl=1 / cl=0 /; s/ red=4 / red=1 /; s/ cs=[248] / cs=1 /' "$tmp/cat.txt" >"$tmp/sm80.txt"
expect 2 "$tmp/sm80.txt is a catalogue for sm_80; the export measured sm_90" catalogue make "$DATA" \
    --kernels "$tmp/sm80.txt" --date 2026-11-25 -o "$tmp/x.txt"
# a kernel its template rejects (unknown, a parameter out of range, a rule of check()): the line named, at once
sed 's/^arch 90$/arch 80/' "$tmp/cat.txt" >"$tmp/sm80bad.txt"
expect 2 "sm80bad.txt:[0-9]*: kernel [0-9] (matmul_warp): .*(target sm_80)" catalogue kernels "$tmp/sm80bad.txt"
sed '/^kernel 1 /s/ \([a-z_]*\) / nosuch /' "$tmp/cat.txt" >"$tmp/unknown.txt"
expect 2 "unknown.txt:[0-9]*: kernel 1 (nosuch): unknown template" catalogue kernels "$tmp/unknown.txt"
expect 2 "unknown.txt:[0-9]*: kernel 1 (nosuch)" catalogue make "$DATA" --kernels "$tmp/unknown.txt" --date 2026-11-25 \
    -o "$tmp/x.txt"
# a kernel written in another spelling (two parameters swapped): the same kernel
awk '/^kernel 1 /{ t = $11; $11 = $12; $12 = t } { print }' "$tmp/rev.txt" >"$tmp/spelled.txt"
check "a respelled kernel line differs from the original" test "$(cat "$tmp/spelled.txt")" != "$(cat "$tmp/rev.txt")"
"$KGEN" catalogue make "$DATA" --kernels "$tmp/spelled.txt" --date 2026-11-25 -o "$tmp/spelled_out.txt" 2>/dev/null
check "--kernels: a kernel in another spelling is matched by its canonical text" \
    test "$(grep '^time ' "$tmp/spelled_out.txt")" = "$(grep '^time ' "$tmp/keep.txt")"
# one kernel twice, the second time in another spelling: named, for --kernels and --start alike
# shellcheck disable=SC2016 # an awk program: its $i are awk's fields
awk '/^kernel 2 /{ print; $2 = 3; t = $11; $11 = $12; $12 = t; k3 = $0; next } /^kernel 3 /{ print k3; next } { print }' \
    "$tmp/rev.txt" >"$tmp/twice.txt"
expect 2 "kernel 3 of $tmp/twice.txt is its kernel 2 in another spelling" catalogue make "$DATA" --kernels "$tmp/twice.txt" \
    --date 2026-11-25 -o "$tmp/x.txt"
expect 2 "kernel 3 of $tmp/twice.txt is its kernel 2 in another spelling" catalogue make "$DATA" --start "$tmp/twice.txt" \
    --date 2026-11-25 -o "$tmp/x.txt"
"$KGEN" catalogue kernels "$tmp/spelled.txt" -o "$tmp/spelled.cfg"
check "kernels: the canonical text of each kernel" cmp -s "$tmp/spelled.cfg" "$tmp/rev.cfg"
# an architecture kgen has no limits table for: parameters checked and made canonical, no check(), said so
sed 's/^arch 90$/arch 100/' "$tmp/spelled.txt" >"$tmp/sm100.txt"
expect 0 "sm100.txt: kgen has no limits table for sm_100: each kernel's parameters are checked" \
    catalogue kernels "$tmp/sm100.txt" -o "$tmp/sm100.cfg"
check "kernels (sm_100): the canonical text of each kernel" cmp -s "$tmp/sm100.cfg" "$tmp/rev.cfg"
sed '/^kernel 1 /s/ \([a-z_]*\) / nosuch /' "$tmp/sm100.txt" >"$tmp/sm100bad.txt"
expect 2 "sm100bad.txt:[0-9]*: kernel 1 (nosuch): unknown template" catalogue kernels "$tmp/sm100bad.txt"
expect 2 "keeps that catalogue's kernels" catalogue make "$DATA" --kernels "$tmp/cat.txt" --max-kernels 3 \
    --date 2026-11-25 -o "$tmp/x.txt"
expect 1 "cannot open" catalogue make "$DATA" --kernels "$tmp/none.txt" --date 2026-11-25 -o "$tmp/x.txt"
check "--kernels: nothing written on an error" test ! -e "$tmp/x.txt"

# --start (a rebuild): the catalogue's kernels, improved by swaps, where they score better than the choice from
# scratch, by the regret both minimise; its report gives both, and what was kept is the lower
start_report() { sed -n 's/.*--start [^ ]*: \(.*\) ([0-9]* of its kernels replaced; regret both minimise, geometric mean \([0-9.]*\), from scratch \([0-9.]*\)).*/\1|\2|\3/p' "$1"; }
"$KGEN" catalogue make "$DATA" --max-kernels 3 --start "$tmp/rev.txt" --date 2026-11-25 -o "$tmp/st.txt" 2>"$tmp/st.err"
check "--start: exits 0" test $? = 0
IFS='|' read -r what sc fc <<<"$(start_report "$tmp/st.err")"
check "--start: reports both scores ($what: $sc, from scratch $fc)" test -n "$sc" -a -n "$fc"
check "--start: kept where it scores no worse than from scratch" \
    awk -v w="$what" -v a="$sc" -v b="$fc" 'BEGIN { exit !((w == "kept") == (a + 0 <= b + 0)) }'
check "--start: the header says which" grep -q "^# A rebuild of $tmp/rev.txt: its 3 kernels\|^# Chosen from scratch: the kernels of $tmp/rev.txt" \
    "$tmp/st.txt"
# one kernel, the slowest on geometric mean of those timed at every pair, to start from: three kernels from
# scratch score better
# shellcheck disable=SC2016 # awk programs: their $i are awk's fields
id=$(awk '/^time /{ for (i = 6; i <= NF; i++) if ($i == "-") gone[i] = 1; else s[i] += log($i) }
    END { for (i in s) if (!(i in gone) && (b == "" || s[i] > s[b])) b = i; print b - 5 }' "$tmp/all.txt")
# shellcheck disable=SC2016
{ grep -v '^kernel \|^time ' "$tmp/cat.txt"; grep "^kernel $id " "$tmp/all.txt" | sed 's/^kernel [0-9]* /kernel 1 /'
  awk -v c="$((5 + id))" '/^time /{ print $1, $2, $3, $4, $5, $c }' "$tmp/all.txt"; } >"$tmp/one.txt"
check "the one-kernel start is a catalogue of one kernel (kernel $id of all)" test "$(grep -c '^kernel ' "$tmp/one.txt")" = 1
"$KGEN" catalogue make "$DATA" --max-kernels 3 --start "$tmp/one.txt" --date 2026-11-25 -o "$tmp/st1.txt" 2>"$tmp/st1.err"
IFS='|' read -r what sc fc <<<"$(start_report "$tmp/st1.err")"
check "--start of one slow kernel: the choice from scratch kept ($what: $sc, from scratch $fc)" \
    test "$what" = "a choice from scratch scored better"
check "... the same kernels as without --start" test "$(cut_kernels "$tmp/st1.txt")" = "$(cut_kernels "$tmp/cat.txt")"
expect 2 "--kernels keeps that catalogue's kernels; --start improves on another's" catalogue make "$DATA" \
    --kernels "$tmp/cat.txt" --start "$tmp/rev.txt" --date 2026-11-25 -o "$tmp/x.txt"
expect 2 "$tmp/rev.txt has 3 kernels, more than --max-kernels (2)" catalogue make "$DATA" --start "$tmp/rev.txt" \
    --max-kernels 2 --date 2026-11-25 -o "$tmp/x.txt"
expect 2 "kernel 2 of $tmp/other.txt" catalogue make "$DATA" --start "$tmp/other.txt" --date 2026-11-25 -o "$tmp/x.txt"
expect 1 "cannot open" catalogue make "$DATA" --start "$tmp/none.txt" --date 2026-11-25 -o "$tmp/x.txt"
check "--start: nothing written on an error" test ! -e "$tmp/x.txt"

# the tuner's default strategy measures the catalogue's picks for the shape first (autotune/README.md):
# with this three-kernel catalogue, its kernels that the default space holds are among the first 4 timed
KGEN_CATALOGUE=$tmp/cat.txt "$KGEN" tune --dry-run --arch sm_90 --m 512 --n 512 --k 512 --layout nn --budget 4 \
    --top 0 --db "$tmp/t.db" >/dev/null 2>"$tmp/t.err"
check "auto: a dry run exits 0" test $? = 0
# the progress lines count what the budget counts: never more done than planned (it read 92/64, and 6/4
# here with the embedded catalogue, counting candidates pruned after compiling, which cost no budget)
"$KGEN" tune --dry-run --arch sm_90 --m 512 --n 512 --k 512 --layout nn --budget 4 --top 0 --db "$tmp/p.db" \
    >/dev/null 2>"$tmp/p.err"
over=$(awk '/ done, / { split($4, a, "/"); if (a[1] + 0 > a[2] + 0) print }' "$tmp/t.err" "$tmp/p.err" | head -n 1)
check "progress: done never passes planned (${over:-ok})" test -z "$over"
check "progress: lines were printed" grep -q "512x512x512 [0-9]*/4 done" "$tmp/p.err"
moved=$(sed -n "s/.*strategy auto (the catalogue's \([0-9]*\) first).*/\1/p" "$tmp/t.err")
check "auto: the catalogue's picks first (${moved:-none})" test "${moved:-0}" -ge 1
inspace=0
while read -r _ _ tmpl _ _ _ _ _ _ _ cfg; do
    grep -qF "$tmpl $cfg layout=nn" "$tmp/t.err" && inspace=$((inspace + 1))
done < <(grep '^kernel ' "$tmp/cat.txt")
check "auto: the $moved moved kernels are among those timed ($inspace of the catalogue's found)" \
    test "$inspace" -ge "${moved:-1}"
KGEN_CATALOGUE=$tmp/cat.txt "$KGEN" tune --dry-run --arch sm_90 --m 512 --n 512 --k 512 --strategy model \
    --budget 4 --db "$tmp/t.db" >/dev/null 2>"$tmp/t2.err"
check "model: the model's order alone" sh -c "! grep -q \"the catalogue's\" '$tmp/t2.err'"

# bad input: a clear message, nothing written
expect 2 "needs --date" catalogue make "$DATA" -o "$tmp/x.txt"
expect 2 "is not YYYY-MM-DD" catalogue make "$DATA" --date 23/11/2026 -o "$tmp/x.txt"
expect 2 "--tolerance" catalogue make "$DATA" --date 2026-11-23 --tolerance 2 -o "$tmp/x.txt"
expect 2 "--max-regret" catalogue make "$DATA" --date 2026-11-23 --max-regret 0.5 -o "$tmp/x.txt"
expect 2 "one EXPORT file" catalogue make --date 2026-11-23 -o "$tmp/x.txt"
expect 1 "cannot open" catalogue make "$tmp/none.csv" --date 2026-11-23 -o "$tmp/x.txt"
sed '2s/NVIDIA H200/NVIDIA H100 80GB HBM3/' "$DATA" >"$tmp/two.csv"
expect 2 "several devices" catalogue make "$tmp/two.csv" --date 2026-11-23 -o "$tmp/x.txt"
"$KGEN" catalogue make "$tmp/two.csv" --device "NVIDIA H200" --date 2026-11-23 -o "$tmp/one.txt" 2>/dev/null
check "--device picks one device's rows" grep -qx "device NVIDIA H200" "$tmp/one.txt"
head -n 1 "$DATA" >"$tmp/empty.csv"
expect 2 "no timed rows" catalogue make "$tmp/empty.csv" --date 2026-11-23 -o "$tmp/x.txt"
check "no partial output" test ! -e "$tmp/x.txt"

finish
