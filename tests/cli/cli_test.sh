#!/usr/bin/env bash
# shellcheck disable=SC2016 # checks are quoted strings, expanded when they run
# cli_test.sh KGEN SRCDIR [NVCC] -- the kgen command line: the seeds' kernel,
# nvcc compilation, determinism, `kgen params`, user templates, and every kind
# of bad input (exit 2 with a message naming the problem, no output file, an
# existing output file left untouched, no crash).
set -u
KGEN=$1
SRC=$2
NVCC=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

# --- the seeds' 32x32 tiled kernel -------------------------------------------
check '"$KGEN" --tile 32 --pad 1 -o "$T/mm.cu"' "kgen --tile 32 --pad 1 -o mm.cu"
check 'grep -q "__shared__ float As\[32\]\[33\];" "$T/mm.cu"' "32x33 A tile"
check 'grep -q "__shared__ float Bs\[32\]\[33\];" "$T/mm.cu"' "32x33 B tile"
check 'grep -q "__launch_bounds__(1024)" "$T/mm.cu"' "1024 threads"
check 'grep -q "threads per block   1024" "$T/mm.cu"' "header: 1024 threads"
check 'grep -q "if (r < M && c < N)" "$T/mm.cu"' "bound-checked store"
check 'grep -q "(gl < M && gc < K)" "$T/mm.cu"' "bound-checked A load"
check 'grep -q "bounds=1" "$T/mm.cu"' "header names bounds=1"
if [ -n "$NVCC" ] && [ -x "$NVCC" ]; then
    check '"$NVCC" -arch=sm_90 -c "$T/mm.cu" -o "$T/mm.o"' "nvcc -arch=sm_90 -c mm.cu"
    "$KGEN" --bm 128 --bn 128 --bk 16 --tm 8 --tn 8 --vec 4 --layout tt --bounds 0 -o "$T/big.cu"
    check '"$NVCC" -arch=sm_90 -c "$T/big.cu" -o "$T/big.o"' "nvcc compiles a vec=4 tt kernel"
    "$KGEN" --bm 256 --bn 256 --bk 32 --tm 16 --tn 16 --vec 4 --pad 0 -o "$T/dyn.cu"
    check '"$NVCC" -arch=sm_90 -c "$T/dyn.cu" -o "$T/dyn.o"' "nvcc compiles a dynamic-smem kernel"
else
    echo "note: nvcc not found; the nvcc compilation checks did not run (NVRTC checks in templates.render_compile did)"
fi

# --- stdout, determinism, equivalent spellings -------------------------------
check '"$KGEN" --tile 32 --pad 1 > "$T/a.cu" && cmp -s "$T/a.cu" "$T/mm.cu"' "stdout equals -o output"
check '"$KGEN" emit --config "bm=32 bn=32 bk=32 tm=1 tn=1 pad=1" > "$T/b.cu" && cmp -s "$T/b.cu" "$T/mm.cu"' \
    "--config spelling gives the same file"
check '"$KGEN" --bm=32 --bn=32 --bk=32 --tm=1 --tn=1 --pad=1 > "$T/c.cu" && cmp -s "$T/c.cu" "$T/mm.cu"' \
    "--name=value spelling gives the same file"
check '"$KGEN" --layout tt --vec 4 > "$T/d1.cu" && "$KGEN" --layout tt --vec 4 > "$T/d2.cu" && cmp -s "$T/d1.cu" "$T/d2.cu"' \
    "deterministic output"
check '! cmp -s "$T/d1.cu" "$T/mm.cu"' "different configurations give different files"

# --- params, help, version ----------------------------------------------------
"$KGEN" params > "$T/params.txt"; rc=$?
check '[ $rc -eq 0 ]' "kgen params exits 0"
for p in bm bn bk tm tn pad vec bounds layout; do
    check 'grep -q "^$p " "$T/params.txt"' "kgen params lists $p"
done
check 'grep -q "nn,nt,tn,tt" "$T/params.txt"' "kgen params lists layout values"
check 'grep -q "0\.\.32" "$T/params.txt"' "kgen params gives pad's range"
check '"$KGEN" --help | grep -q "Usage: kgen"' "kgen --help"
check '"$KGEN" --version | grep -q "^kgen [0-9]"' "kgen --version"
check '"$KGEN" help emit | grep -q -- "--output"' "kgen help emit"

# --- bad input ----------------------------------------------------------------
# expect_bad EXIT "MESSAGE" ARGS...: exit status, a message on stderr, the
# existing output file untouched and no temporary file left beside it.
expect_bad() {
    local want=$1 msg=$2
    shift 2
    printf 'SENTINEL\n' > "$T/out.cu"
    "$KGEN" "$@" -o "$T/out.cu" > "$T/stdout" 2> "$T/stderr"
    local rc=$?
    if [ $rc -ne "$want" ]; then bad "kgen $* exited $rc, expected $want"; else ok; fi
    if grep -qF -- "$msg" "$T/stderr"; then ok; else bad "kgen $*: stderr lacks '$msg': $(cat "$T/stderr")"; fi
    if [ "$(cat "$T/out.cu")" = SENTINEL ]; then ok; else bad "kgen $*: existing output file changed"; fi
    if ls "$T"/out.cu.tmp.* > /dev/null 2>&1; then bad "kgen $*: temporary file left"; else ok; fi
    if [ "$(wc -l < "$T/stderr")" -le 2 ]; then ok; else bad "kgen $*: more than one message"; fi
}
expect_bad 2 "bm must be 1..512 (got 0)" --bm 0
expect_bad 2 "bm must be 1..512 (got -4)" --bm -4
expect_bad 2 "bm: 'abc' is not an integer" --bm abc
expect_bad 2 "bm: '1.5' is not an integer" --bm 1.5
expect_bad 2 "is out of range" --bm 99999999999999999999
expect_bad 2 "is out of range" --tm 4294967297
expect_bad 2 "--bm needs a value" --bm
expect_bad 2 "--bm: missing value" --bm ""
expect_bad 2 "--bm: bad value '4 5'" --bm "4 5"
expect_bad 2 "unknown option '--foo'" --foo 3
expect_bad 2 "unknown option '-x'" -x
expect_bad 2 "--foo needs a value, or is no option of this command" --foo
# an architecture kgen knows and this NVRTC does not compile for (sm_70 since CUDA 13): compile says which it
# does, and tune --dry-run stops at once (exit 2) instead of failing every candidate
"$KGEN" compile --tile 16 --arch sm_70 -o "$T/v100.cubin" > /dev/null 2> "$T/v100.err"; rc=$?
if [ $rc -ne 0 ]; then
    check '[ $rc -eq 1 ] && grep -q "does not compile for sm_70 (it compiles for sm_[0-9]* to sm_[0-9]*)" "$T/v100.err"' \
        "compile for sm_70: exit $rc, $(cat "$T/v100.err")"
    "$KGEN" tune --dry-run --arch sm_70 --m 64 --n 64 --k 64 > /dev/null 2> "$T/v100.err"; rc=$?
    check '[ $rc -eq 2 ] && grep -q "kgen: tune: NVRTC .* does not compile for sm_70" "$T/v100.err"' \
        "tune --dry-run for sm_70: exit $rc, $(cat "$T/v100.err")"
else
    echo "note: this NVRTC compiles for sm_70; the unsupported-architecture checks did not run"
fi
# params: the footer's example is the template's own; --tile only where the template has a tile
"$KGEN" params --template matmul_skinny > "$T/params.txt"
check 'grep -q -- "--small m" "$T/params.txt" && ! grep -q -- "--tile" "$T/params.txt"' "params footer for matmul_skinny"
check '"$KGEN" help help | grep -q "^Usage: kgen COMMAND"' "kgen help help"
# an option is given once: a second one is an error, not the one that wins
expect_bad 2 "-o given twice" --tile 16 -o "$T/twice1.cu" -o "$T/twice2.cu"
check '[ ! -e "$T/twice1.cu" ] && [ ! -e "$T/twice2.cu" ]' "-o given twice: nothing written"
expect_bad 2 "--template given twice" --template matmul --template matmul_warp
expect_bad 2 "bm=70 is not a multiple of tm=4" --bm 70 --tm 4
expect_bad 2 "bn=30 is not a multiple of tn=4" --bn 30
expect_bad 2 "1089 threads per block (33 x 33); the limit is 1024" --tile 33
expect_bad 2 "the limit is 1024" --bm 256 --bn 256 --tm 2 --tn 2
# kgen run: a wrong configuration is a usage error (exit 2) with or without a GPU; it was exit 1, the missing
# GPU's, where there was none
"$KGEN" run --m 64 --n 64 --k 64 --tile 33 > /dev/null 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q "1089 threads per block (33 x 33); the limit is 1024" "$T/stderr"' \
    "kgen run --tile 33: exit $rc, $(cat "$T/stderr")"
"$KGEN" run --m 64 --n 64 --k 64 --bm 256 --bn 256 --bk 128 --tm 8 --tn 8 > /dev/null 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q "need 263680 bytes of shared memory per block" "$T/stderr"' \
    "kgen run over sm_90's shared memory: exit $rc, $(cat "$T/stderr")"
expect_bad 2 "bytes of shared memory per block; the limit is 232448 (sm_90)" --bm 512 --bn 512 --bk 256 --tm 16 --tn 16
expect_bad 2 "the limit is 65536 (sm_75)" --arch sm_75 --bm 256 --bn 256 --bk 64 --tm 16 --tn 16
expect_bad 2 "layout: unknown value 'xy' (allowed: nn, nt, tn, tt)" --layout xy
expect_bad 2 "pad must be 0..32 (got 33)" --pad 33
expect_bad 2 "vec must be one of 1, 2, 4 (got 3)" --vec 3
expect_bad 2 "bounds must be one of 0, 1 (got 2)" --bounds 2
expect_bad 2 "vec=4 needs bk" --vec 4 --bk 6
expect_bad 2 "bm given twice (--tile 32 and --bm 64)" --tile 32 --bm 64
expect_bad 2 "bm given twice (--config bm=64 and --bm 32)" --config "bm=64" --bm 32
expect_bad 2 "bk given twice" --config "bk=8 bk=16"
expect_bad 2 "--config: 'bm' is not of the form name=value" --config "bm"
expect_bad 2 "unknown parameter 'foo'" --config "foo=1"
expect_bad 2 "--tile: 'abc' is not an integer" --tile abc
expect_bad 2 "--tile must be 1..512" --tile 0
expect_bad 2 "--config given twice" --config "bm=32" --config "bn=32"
expect_bad 2 "unknown template 'nope'" --template nope
expect_bad 2 "unknown architecture sm_12" --arch sm_12
expect_bad 2 "--arch: 'foo' is not an integer" --arch foo
expect_bad 2 "--template-dir: '$T/missing' is not a directory" --template-dir "$T/missing"
expect_bad 2 "unexpected argument 'stray'" --tile 16 stray

"$KGEN" frobnicate > /dev/null 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q "unknown command" "$T/stderr"' "unknown command exits 2"
"$KGEN" --tile 16 -o "$T/no/such/dir/out.cu" 2> "$T/stderr"; rc=$?
check '[ $rc -eq 1 ] && grep -q "cannot create" "$T/stderr"' "unwritable output exits 1 with a message"
"$KGEN" -o 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q -- "-o needs a value" "$T/stderr"' "-o without a file"

# --- user templates: override directory, errors with file:line ------------------
mkdir -p "$T/tpl"
cat > "$T/tpl/tiny.lua" <<'LUA'
local emit = require "lib.emit"
local T = { name = "tiny", version = 3 }
T.params = { { name = "n", type = "int", default = 4, min = 1, max = 8, doc = "a number" } }
function T.check(cfg, limits) if cfg.n == 7 then return nil, "n=7 is unlucky" end return true end
function T.resources(cfg) return { threads = 32 } end
function T.render(cfg, meta)
  local w = emit.writer()
  w:line("// tiny n=%d", cfg.n)
  w:line('extern "C" __global__ void __launch_bounds__(32) tiny(float* x) { x[threadIdx.x] = %d; }', cfg.n)
  return { source = w:text(), entry = "tiny", block = { 32, 1, 1 },
           grid = { { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } } }
end
return T
LUA
check '"$KGEN" --template tiny --template-dir "$T/tpl" --n 5 | grep -q "tiny n=5"' "user template via --template-dir"
check 'KGEN_TEMPLATE_PATH="$T/tpl" "$KGEN" --template tiny | grep -q "tiny n=4"' "user template via KGEN_TEMPLATE_PATH"
check 'KGEN_TEMPLATE_PATH="$T/tpl" "$KGEN" params --template tiny | grep -q "^n "' "kgen params of a user template"
expect_bad 2 "n=7 is unlucky" --template tiny --template-dir "$T/tpl" --n 7
expect_bad 2 "unknown option '--bm'" --template tiny --template-dir "$T/tpl" --bm 4
expect_bad 2 "--tile: template 'tiny' has no parameter bm" --template tiny --template-dir "$T/tpl" --tile 4

mkdir -p "$T/over"
sed 's/Regenerate rather than edit/OVERRIDDEN COPY/' "$SRC/../../templates/matmul.lua" > "$T/over/matmul.lua"
check 'KGEN_TEMPLATE_PATH="$T/over" "$KGEN" --tile 16 | grep -q "OVERRIDDEN COPY"' "a directory overrides the embedded matmul"

printf 'local T = {}\nT.params = {}\nlocal x = nil\nreturn x.field\n' > "$T/tpl/broken.lua"
expect_bad 1 "broken.lua:4:" --template broken --template-dir "$T/tpl"
printf 'local T = {\nreturn T\n' > "$T/tpl/syntax.lua"
expect_bad 1 "syntax.lua:2:" --template syntax --template-dir "$T/tpl"
sed 's/^function T.render(cfg, meta)$/function T.render(cfg, meta)\n  local f = io.open("x")/' "$T/tpl/tiny.lua" > "$T/tpl/io.lua"
expect_bad 1 "io.lua:7: attempt to index a nil value (global 'io')" --template io --template-dir "$T/tpl"
printf 'return 42\n' > "$T/tpl/number.lua"
expect_bad 1 "template 'number' does not return a table" --template number --template-dir "$T/tpl"

"$KGEN" --tile 8 -o "" 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q -- "-o: empty value" "$T/stderr"' "-o with an empty file name is a usage error"
"$KGEN" db export -o "" 2> "$T/stderr"; rc=$?
check '[ $rc -eq 2 ] && grep -q -- "-o: empty value" "$T/stderr"' "db export -o '' is a usage error"
expect_bad 2 "--arch given twice" --arch sm_90 --arch sm_80
expect_bad 2 "--template-dir given twice" --template-dir "$T" --template-dir "$T"
printf 'old\n' > "$T/target.cu"; chmod 640 "$T/target.cu"; ln -sf "$T/target.cu" "$T/link.cu"
check '"$KGEN" --tile 8 -o "$T/link.cu" && [ -L "$T/link.cu" ] && grep -q "kgen_matmul" "$T/target.cu"' \
    "-o writes through a symbolic link"
check '[ "$(stat -c %a "$T/target.cu")" = 640 ]' "-o keeps an existing file's permissions"

# malformed templates: an error message and exit 1, never an abort
expect_bad 1 "grid must be a list" --template badgrid --template-dir "$SRC/../gen/templates"
expect_bad 1 "params[1]: not a table" --template badparams --template-dir "$SRC/../gen/templates"
"$KGEN" params --template badparams --template-dir "$SRC/../gen/templates" > /dev/null 2> "$T/stderr"; rc=$?
check '[ $rc -eq 1 ] && grep -q "params\[1\]" "$T/stderr"' "kgen params on a malformed template exits 1"
expect_bad 2 "invalid template name '../x'" --template ../x
expect_bad 2 "invalid template name 'lib.params'" --template lib.params

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
