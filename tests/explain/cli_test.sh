#!/usr/bin/env bash
# shellcheck disable=SC2016 # checks are quoted strings, expanded when they run
# cli_test.sh KGEN SRCDIR -- `kgen explain` on the command line, without a GPU:
# the seeds' worked numbers (CGMA of the naive and tiled kernels; their
# occupancy example through a limits file), a transposed store that
# conflicts without padding and not with pad=1, coalescing, JSON and SVG
# output, a template without accesses(), and bad input (exit 2 or 1 with a
# message naming the problem, no output file left behind).
set -u
KGEN=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
# has FILE TEXT: a fixed string in the file
has() { grep -qF -- "$2" "$1"; }

explain() { "$KGEN" explain "$@" > "$T/out" 2> "$T/err"; }

# --- the seeds' compute-to-global-memory-access ratio ---------------------------
explain --tile 1 --arch sm_90; rc=$?
check '[ $rc -eq 0 ]' "explain --tile 1 exits 0 ($(cat "$T/err"))"
check 'has "$T/out" "CGMA = 2 FLOPs / 2 loads = 1.00 FLOP per load"' "naive kernel: 1:1"
check 'has "$T/out" "arithmetic intensity = 1.00 / 4 bytes = 0.250 FLOP/B"' "naive kernel: 0.25 FLOP/B"
for t in 2 8 16 32; do
    explain --tile $t --arch sm_90
    check 'has "$T/out" "= $t.00 FLOP per load"' "a ${t}x$t tile raises the ratio to $t"
done
explain --tile 16 --pad 0 --arch sm_90
check 'has "$T/out" "65,536 blocks x 256 phases"' "16x16 tiles at 4096^3: blocks and phases"
check 'has "$T/out" "34.43 GB"' "16x16 tiles at 4096^3: bytes the tiles request"
check 'has "$T/out" "201.3 MB -> 682.7 FLOP/B"' "each matrix once"
check 'has "$T/out" "registers per thread  " && grep -q "NVRTC 1[0-9]\.[0-9] for sm_90" "$T/out"' "registers from NVRTC"
check 'has "$T/out" "66.9 TFLOP/s" && has "$T/out" "3,352 GB/s"' "sm_90 roofline figures"
check 'has "$T/out" "predicted bound:"' "a predicted bound"
check 'has "$T/out" "not measured: the target is an offline architecture"' "offline: says it did not measure"

# --- the seeds' occupancy example through a limits file --------------------------
cat > "$T/seeds.limits" <<'EOF'
# The course notes' example SM ("Memory Limits to Parallelism")
base = sm_86
name = seeds-example
max_threads_per_sm = 1536
regs_per_sm = 16384
reg_alloc_unit = 1
max_blocks_per_sm = 8
smem_per_sm = 16K          # "a device has 16K of shared memory"
smem_reserved_per_block = 0
smem_alloc_unit = 1
EOF
blk512=(--bm 16 --bn 32 --bk 16 --tm 1 --tn 1)
explain --limits "$T/seeds.limits" "${blk512[@]}" --regs 10; rc=$?
check '[ $rc -eq 0 ]' "seeds limits file accepted ($(cat "$T/err"))"
check 'has "$T/out" "16,384 registers / 1,536 threads = 10 registers per thread for full occupancy"' "10 registers"
check 'has "$T/out" "-> 3 blocks = 48 warps = 1,536 threads per SM (100% occupancy)"' "10 registers: 1,536 threads"
check 'has "$T/out" "target: limits file $T/seeds.limits"' "the report names the limits file"
explain --limits "$T/seeds.limits" "${blk512[@]}" --regs 11
check 'has "$T/out" "-> 2 blocks = 32 warps = 1,024 threads per SM (67% occupancy), limited by registers"' "11 registers: 1,024 threads"
check 'has "$T/out" "11 x 32 threads = 352 per warp"' "11 registers: per-warp arithmetic"
explain --limits "$T/seeds.limits" "${blk512[@]}" --regs 17
check 'has "$T/out" "-> 1 block = 16 warps = 512 threads per SM (33% occupancy), limited by registers"' "17 registers: 512 threads"
explain --limits "$T/seeds.limits" --tile 16 --pad 0 --regs 10
check 'has "$T/out" "16,384 B / 2,048 B per block = 8 blocks"' "16x16 tiles: 2 KB each, 8 blocks in 16 KB"

# --- bank conflicts: a transposed store, with and without padding ---------------
explain --tile 32 --layout tn --pad 0 --arch sm_90
check 'grep -Eq "^   store A tile to As +4 B +1\* +32-way +32-way +1-way +1-way" "$T/out"' \
    "tn, pad=0: the A store is 32-way, and 1-way with pad=1"
check 'has "$T/out" "pad=0 (configured), store A tile to As (warp 0, repetition 0): bank 0 holds floats 0, 32, 64"' \
    "the conflict is explained from the addresses"
explain --tile 32 --layout tn --pad 1 --arch sm_90
check 'grep -Eq "^   store A tile to As +4 B +1\* +1-way +1-way +32-way +32-way" "$T/out"' \
    "tn, pad=1: no conflict, and 32-way without padding"
explain --tile 32 --pad 0 --arch sm_90
n_all=$(grep -cE "^   (store|load) .*-way" "$T/out")
n_free=$(grep -cE "^   (store|load) .* B +[0-9]+\*? +1-way +1-way" "$T/out")
check '[ "$n_all" -eq 4 ] && [ "$n_free" -eq 4 ]' "nn, pad=0: every shared access conflict-free ($n_free of $n_all)"
check 'grep -Eq "^   load a from As \(inner loop\) +4 B +32\* +1-way +1-way" "$T/out"' "As[ty][kk]: a broadcast, no conflict"

# --- coalescing -----------------------------------------------------------------
explain --tile 32 --arch sm_90
check 'grep -Eq "^   load A tile from A +4 B +128\.0 +4\.00 +4\.00 +1\.00 +100\.0%" "$T/out"' "a row of 32 floats: 4 sectors, 1 line"
explain --tile 32 --arch sm_90 --k 4095
check 'grep -Eq "^   load A tile from A +4 B +128\.0 +4\.[0-9]+ +4\.00" "$T/out" && grep -Eq "5 sectors for 128 B" "$T/out"' \
    "lda = 4095: misaligned rows touch a fifth sector"

# --- JSON and SVG -----------------------------------------------------------------
explain --tile 16 --pad 1 --arch sm_90 --json; rc=$?
check '[ $rc -eq 0 ] && head -c1 "$T/out" | grep -q "{"' "--json prints JSON"
if command -v python3 > /dev/null; then
    check 'python3 - "$T/out" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tile"]["cgma"] == 16 and abs(d["tile"]["intensity"] - 4) < 1e-12
assert d["occupancy"]["blocks_per_sm"] >= 1 and d["roofline"]["predicted_gflops"] > 0
stores = [a for a in d["accesses"] if a["name"] == "store A tile to As"]
assert stores and stores[0]["worst_degree"] == 2, stores          # pad=1 on 16-wide rows: 2-way
alt = [a for a in d["accesses_alt"]["list"] if a["name"] == "store A tile to As"]
assert d["accesses_alt"]["pad"] == 0 and alt[0]["worst_degree"] == 1
assert d["measured"] is None
PY' "JSON fields: CGMA, occupancy, accesses with and without padding"
else
    echo "note: python3 not found; the JSON content check did not run (not counted)"
fi

explain --tile 16 --arch sm_90 --svg "$T/roof.svg"; rc=$?
check '[ $rc -eq 0 ] && [ -s "$T/roof.svg" ]' "--svg writes the file"
check 'has "$T/roof.svg" "<polyline class=\"roof\"" && has "$T/roof.svg" "class=\"predicted\""' "SVG: roof and point"
check '! ls "$T"/roof.svg.tmp.* > /dev/null 2>&1' "no temporary file left"
if command -v python3 > /dev/null; then
    check 'python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag.endswith(\"svg\")" "$T/roof.svg"' \
        "SVG parses as XML"
fi
"$KGEN" explain --tile 16 --arch sm_90 --svg - > "$T/out" 2> "$T/err"; rc=$?
check '[ $rc -eq 0 ] && head -1 "$T/out" | grep -q "^<?xml" && ! has "$T/out" "kgen explain:"' "--svg -: the SVG alone on stdout"

# --- templates: the warp-tiled one, and one without accesses() -------------------
explain --template matmul_warp --arch sm_90; rc=$?
check '[ $rc -eq 0 ] && has "$T/out" "4. Shared-memory bank conflicts" && grep -q "inner loop" "$T/out"' \
    "matmul_warp is explained ($(head -c 300 "$T/err"))"
# odd shapes: a 16-byte configuration is refused there with the kernel's own
# precondition; a 4-byte one stores C one float at a time where ldc is odd
# (and sectors show it); split-K's additions realigned to 16-byte groups;
# pack=1 reads padded copies
explain --template matmul_warp --layout tn --m 999 --n 999 --k 999 --arch sm_90; rc=$?
check '[ $rc -eq 0 ] && has "$T/out" "not available: this configuration cannot run at M=999 N=999 K=999 (lda=999 ldb=999 ldc=999): lda=999 is not a multiple of 4"' \
    "a 16-byte configuration at 999^3 in tn: the precondition that refuses it ($(grep "not available" "$T/out" | head -1))"
# in nt both of its copies transpose through cp.async, as single floats: no precondition on lda or ldb
explain --template matmul_warp --layout nt --m 999 --n 999 --k 999 --arch sm_90; rc=$?
check '[ $rc -eq 0 ] && has "$T/out" "4. Shared-memory bank conflicts" && ! has "$T/out" "not available"' \
    "the same configuration at 999^3 in nt: explained, no precondition refuses it ($(grep "not available" "$T/out" | head -1))"
w4="bm=128 bn=128 bk=8 wm=64 wn=64 vec=1 stages=2 pred=1 cc=1 sk=1 red=4"
explain --template matmul_warp --config "$w4 layout=nt" --m 1999 --n 1999 --k 1999 --arch sm_90; rc=$?
check '[ $rc -eq 0 ] && ! has "$T/out" "not available" && grep -Eq "^   store C +4 B +128\.0 +18\.00 +4\.00" "$T/out"' \
    "4-byte copies at 1999^3: C stored one float at a time, 18 sectors for 4 ($(grep "not available\|store C" "$T/out" | head -1))"
explain --template matmul_warp --config "$w4 layout=nt" --m 2000 --n 2000 --k 2000 --arch sm_90
check 'grep -Eq "^   store C +16 B +512\.0 +16\.00 +16\.00" "$T/out"' "the same at 2000^3: 16-byte stores"
explain --template matmul_warp --config "${w4/sk=1/sk=0 splitk=4} layout=nn" --m 999 --n 999 --k 999 --arch sm_90
check 'grep -Eq "^   atomicAdd to C \(realigned\) +16 B" "$T/out"' "split-K at an odd ldc: realigned 16-byte additions"
explain --template matmul_warp --config "bn=256 bk=16 wm=64 stages=1 pack=1 layout=nt" --m 1999 --n 1001 --k 257 --arch sm_90; rc=$?
check '[ $rc -eq 0 ] && has "$T/out" "lda=257 ldb=257 ldc=1001" && has "$T/out" "copies A and B into a workspace with rows padded to multiples of 4 floats" && has "$T/out" "on the copies, lda=260 ldb=260" && ! has "$T/out" "not available"' \
    "pack=1: the accesses read the padded copies"
explain --template noaccess --template-dir "$SRC/templates" --arch sm_90; rc=$?
check '[ $rc -eq 0 ]' "a template without accesses() is still explained ($(cat "$T/err"))"
check 'has "$T/out" "not available: template '"'"'noaccess'"'"' provides no accesses(cfg, shape)"' "and says what is missing"
check 'has "$T/out" "6. Roofline" && has "$T/out" "3. Occupancy"' "the rest of the report is there"

# --- architectures NVRTC cannot target, and the GPU-or-table choice ---------------
explain --tile 16 --arch sm_70; rc=$?
check '[ $rc -eq 0 ] && has "$T/out" "registers per thread  unknown:" && has "$T/out" "registers      unknown: left out"' \
    "sm_70 without a compiler for it: registers unknown, said so"
explain --tile 16 --arch sm_70 --regs 32
check 'has "$T/out" "registers per thread  32 (given with --regs)"' "--regs models a register count"
explain --tile 16 --no-measure; rc=$?
check '[ $rc -eq 0 ] && (has "$T/out" "note:   no GPU to query" || grep -q "^target: device 0:" "$T/out")' \
    "without --arch: the GPU present, or the table with a note"

# --- help --------------------------------------------------------------------------
"$KGEN" help explain > "$T/help"
for key in base regs_per_sm reg_alloc_unit max_threads_per_sm smem_per_sm peak_tflops bandwidth_gbs; do
    check 'grep -q "^    $key: " "$T/help"' "kgen help explain documents the limits key $key"
done

# --- bad input ---------------------------------------------------------------------
# expect_bad EXIT "MESSAGE" ARGS...: exit status, one message, no SVG written
# over the existing file, no temporary file.
expect_bad() {
    local want=$1 msg=$2
    shift 2
    printf 'SENTINEL\n' > "$T/keep.svg"
    "$KGEN" explain "$@" --svg "$T/keep.svg" > "$T/out" 2> "$T/err"
    local rc=$?
    if [ $rc -ne "$want" ]; then bad "kgen explain $* exited $rc, expected $want"; else ok; fi
    if grep -qF -- "$msg" "$T/err"; then ok; else bad "kgen explain $*: stderr lacks '$msg': $(cat "$T/err")"; fi
    if [ "$(cat "$T/keep.svg")" = SENTINEL ]; then ok; else bad "kgen explain $*: the SVG was written"; fi
    if ls "$T"/keep.svg.tmp.* > /dev/null 2>&1; then bad "kgen explain $*: temporary file left"; else ok; fi
    if [ "$(wc -l < "$T/err")" -le 2 ]; then ok; else bad "kgen explain $*: more than one message"; fi
}
printf 'regs_per_sm = 1000\nfoo = 3\n' > "$T/unknown.limits"
printf 'regs_per_sm = lots\n' > "$T/value.limits"
printf 'regs_per_sm = 1024\nregs_per_block = 4096\n' > "$T/contra.limits"
printf 'max_blocks_per_sm = 4\nmax_blocks_per_sm = 8\n' > "$T/twice.limits"
expect_bad 2 "cannot read limits file '$T/missing.limits'" --tile 16 --limits "$T/missing.limits"
expect_bad 2 "$T/unknown.limits:2: unknown key 'foo'" --tile 16 --limits "$T/unknown.limits"
expect_bad 2 "$T/value.limits:1: regs_per_sm: 'lots' is not a positive integer" --tile 16 --limits "$T/value.limits"
expect_bad 2 "regs_per_block (4096) exceeds regs_per_sm (1024)" --tile 16 --limits "$T/contra.limits"
expect_bad 2 "max_blocks_per_sm given twice (first on line 1)" --tile 16 --limits "$T/twice.limits"
# control characters are refused, never echoed: an escape in a value reached the report's target line
printf 'base = sm_90\nname = x\033[31mRED\n' > "$T/escape.limits"
printf 'regs_per_sm = 65536\r\n' > "$T/crlf.limits"
expect_bad 2 "$T/escape.limits:2: control character 0x1B in column 9" --tile 16 --limits "$T/escape.limits"
check '! grep -q $'"'"'\033'"'"' "$T/err" "$T/out"' "no escape byte from a limits file reaches the terminal"
expect_bad 2 "$T/crlf.limits:1: control character 0x0D in column 20" --tile 16 --limits "$T/crlf.limits"
expect_bad 2 "bytes of shared memory per block; the limit is 16384" --tile 64 --tm 4 --tn 4 --limits "$T/seeds.limits"
expect_bad 2 "--limits describes the target; it cannot be combined with --device" --tile 16 --limits "$T/seeds.limits" --device 0
expect_bad 2 "--arch names an offline target" --tile 16 --arch sm_90 --device 0
expect_bad 2 "--regs must be 1..255 (got '0')" --tile 16 --arch sm_90 --regs 0
expect_bad 2 "--m: 'abc' is not an integer" --tile 16 --arch sm_90 --m abc
expect_bad 2 "--k must be 1..1048576" --tile 16 --arch sm_90 --k 0
expect_bad 2 "--db FILE goes with --from-db" --tile 16 --arch sm_90 --db "$T/x.db"
expect_bad 1 "no tuning database at $T/none.db yet (kgen tune or kgen db import creates it)" --tile 16 --arch sm_90 --from-db --db "$T/none.db"
expect_bad 2 "1089 threads per block (33 x 33); the limit is 1024" --tile 33 --arch sm_90
expect_bad 2 "unknown option '--frob'" --tile 16 --arch sm_90 --frob 1
expect_bad 2 "unknown architecture sm_12" --tile 16 --arch sm_12
# a machine on which no block fits (registers: known once compiled): refused, no bound predicted
printf 'regs_per_sm = 1\n' > "$T/noregs.limits"
expect_bad 2 "cannot run on limits file $T/noregs.limits" --tile 16 --limits "$T/noregs.limits"
# --svg onto the limits file it reads: refused, the limits file as it was
cp "$T/seeds.limits" "$T/lim.copy"
"$KGEN" explain --tile 16 --limits "$T/seeds.limits" --svg "$T/seeds.limits" > "$T/out" 2> "$T/err"; rc=$?
check '[ $rc -eq 2 ] && has "$T/err" "which this command reads" && cmp -s "$T/seeds.limits" "$T/lim.copy"' \
    "--svg onto --limits' file: exit $rc, $(cat "$T/err")"
"$KGEN" explain --tile 16 --arch sm_90 --svg "$T/no/such/dir/r.svg" > /dev/null 2> "$T/err"; rc=$?
check '[ $rc -eq 1 ] && has "$T/err" "cannot create"' "unwritable SVG: exit 1 with a message"
"$KGEN" explain --tile 16 --arch sm_90 --svg "" > /dev/null 2> "$T/err"; rc=$?
check '[ $rc -eq 2 ] && has "$T/err" "--svg: empty value"' "empty SVG name"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
