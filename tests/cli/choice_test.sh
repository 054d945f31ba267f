#!/usr/bin/env bash
# choice_test.sh KGEN SMALL.txt -- `kgen choice` without a GPU (--arch sm_90):
# which configuration kg_matmul runs for a shape and layout, and why, with a
# catalogue whose choices are known (tests/cli/precompile_catalogue.txt:
# kernel 1, a 4-byte 32x32 `matmul`, timed in nn and tn; kernel 2, a 16-byte
# 64x128 `matmul_warp`, faster, in nn only); the embedded catalogue; bad input.
set -u
KGEN=$1
SMALL=$2
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
unset KGEN_CATALOGUE
export KGEN_DB=$tmp/none.db KGEN_CACHE_DIR=$tmp/cache

export KGEN_CATALOGUE=$SMALL
"$KGEN" choice --m 1024 --n 1024 --k 1024 --arch sm_90 >"$tmp/a" 2>"$tmp/a.err"
check "exits 0 ($(cat "$tmp/a.err"))" test $? = 0
check "one line and its reason" test "$(wc -l <"$tmp/a")" = 2
check "aligned nn: kernel 2, the faster, in nn ($(head -n 1 "$tmp/a"))" \
    grep -q '^nn 1024x1024x1024 matmul_warp bm=64 bn=128 bk=16 .* layout=nn$' "$tmp/a"
check "... the reason names the catalogue and the kernel" \
    grep -q "^    catalogue sm_90 ($SMALL: synthetic (no GPU), 2026-11-23, 132 SMs): kernel 2 matmul_warp 64x128, predicted 120 us" "$tmp/a"
"$KGEN" choice --m 1023 --n 1023 --k 1023 --arch sm_90 --brief >"$tmp/b"
check "rows not 16-byte vectors: kernel 1, the 4-byte matmul ($(cat "$tmp/b"))" \
    test "$(cat "$tmp/b")" = "nn 1023x1023x1023 matmul bm=32 bn=32 bk=32 tm=2 tn=2 pad=1 vec=1 bounds=1 layout=nn"
"$KGEN" choice --m 1024 --n 1024 --k 1024 --layout tn --arch sm_90 --brief >"$tmp/c"
check "tn: kernel 1, the only one with times there" grep -q '^tn 1024x1024x1024 matmul bm=32 bn=32 bk=32 .* layout=tn$' "$tmp/c"
"$KGEN" choice --m 1024 --n 1024 --k 1024 --layout nt --arch sm_90 >"$tmp/d"
check "nt, no kernel timed there: the model-only choice, said so" \
    grep -q "^    no usable kernel in the catalogue for sm_90: model-only choice" "$tmp/d"
printf '# a comment\nsq 1024 1024 1024\nodd 1023 1023 1023\n' >"$tmp/shapes.txt"
"$KGEN" choice --shapes "$tmp/shapes.txt" --layout all --arch sm_90 --brief >"$tmp/e" 2>"$tmp/e.err"
check "--shapes, --layout all: a line per shape and layout" test "$(wc -l <"$tmp/e")" = 8
check "... each with its tag, shapes in order, layouts nn nt tn tt" \
    test "$(cut -d' ' -f1-3 "$tmp/e" | tr '\n' ',')" = \
    "sq nn 1024x1024x1024,sq nt 1024x1024x1024,sq tn 1024x1024x1024,sq tt 1024x1024x1024,odd nn 1023x1023x1023,odd nt 1023x1023x1023,odd tn 1023x1023x1023,odd tt 1023x1023x1023,"
check "... the same choices as one at a time" test "$(sed -n 1p "$tmp/e")" = "sq $(head -n 1 "$tmp/a")"
check "... and the same as --brief alone" test "$(sed -n 5p "$tmp/e")" = "odd $(cat "$tmp/b")"
# KGEN_DB read as kg_matmul reads it (here a database not made yet)
check "the tuning database named in the reason" grep -q "no tuning database at $tmp/none.db yet" "$tmp/d"

# the embedded catalogue: 8192x8192x16 nn runs one of its kernels, and the reason names it
unset KGEN_CATALOGUE
"$KGEN" choice --m 8192 --n 8192 --k 16 --arch sm_90 >"$tmp/f"
check "the embedded catalogue chooses one of its kernels" grep -q "^    catalogue sm_90 (catalogue/sm_90.txt: .*): kernel [0-9]* " "$tmp/f"
"$KGEN" choice --m 8192 --n 8192 --k 16 >"$tmp/g" 2>"$tmp/g.err"
if "$KGEN" device >/dev/null 2>&1; then
    check "without --arch on a GPU: its choice" test -s "$tmp/g"
else
    check "without --arch or a GPU: sm_90's table stands in, said so" \
        grep -q "no GPU found: kgen's table for sm_90 stands in; use --arch" "$tmp/g.err"
    check "... the same choice as --arch sm_90" cmp -s "$tmp/f" "$tmp/g"
fi

# bad input: named, exit 2 (1 where the catalogue does not read), nothing on standard output
quiet() { expect "$@"; check "... nothing on standard output ($3 ${4:-})" test ! -s "$tmp/out"; }
quiet 2 "choice needs --m, --n and --k, or --shapes FILE" choice --m 64 --n 64
quiet 2 "not both" choice --m 64 --n 64 --k 64 --shapes "$tmp/shapes.txt"
quiet 2 "--layout" choice --m 64 --n 64 --k 64 --layout xy
quiet 2 "choice takes no template or parameters" choice --m 64 --n 64 --k 64 --bm 64
quiet 2 "choice takes no template or parameters" choice --m 64 --n 64 --k 64 --template matmul_warp
quiet 2 "choice takes no template or parameters" choice --m 64 --n 64 --k 64 --template=matmul_warp
quiet 2 "--brief given twice" choice --m 64 --n 64 --k 64 --brief --brief
quiet 2 "--m" choice --m 0 --n 64 --k 64
quiet 2 "cannot open" choice --shapes "$tmp/none.txt"
: >"$tmp/empty.txt"
quiet 2 "has no shapes" choice --shapes "$tmp/empty.txt"
# a bad line after a good one (the shapes reader freed its list twice: an abort)
printf 'a 64 64 64\nb 64 64\n' >"$tmp/badline.txt"
quiet 2 "--shapes $tmp/badline.txt:2: 'b' is not an integer" choice --shapes "$tmp/badline.txt" --arch sm_90
printf 'a2345678901234567890123456789012 64 64 64\n' >"$tmp/longtag.txt"
quiet 2 "the tag 'a2345678901234567890123456789012' is longer than 31 characters" choice --shapes "$tmp/longtag.txt" \
    --arch sm_90
KGEN_CATALOGUE=$tmp/none.txt quiet 1 "KGEN_CATALOGUE" choice --shapes "$tmp/shapes.txt" --layout all --arch sm_90
check "... one error, not one per shape and layout" test "$(grep -c KGEN_CATALOGUE "$tmp/err")" = 1
finish
