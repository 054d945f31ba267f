#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2034 # checks are quoted strings, expanded when they run
# precompile_test.sh KGEN SYNTHETIC.txt SMALL.txt -- `kgen precompile` without a
# GPU (--arch sm_90): every kernel of a catalogue in each layout it has times
# for compiles into a fresh cache directory; a second run finds them all
# cached; failures, a missing catalogue, a disabled cache and bad options are
# errors with messages.
set -u
KGEN=$1
SYNTH=$2   # tests/runtime/data/catalogue_synthetic.txt: 7 kernels, 14 kernel-layouts
SMALL=$3   # tests/cli/precompile_catalogue.txt: 2 kernels, 3 kernel-layouts
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
unset KGEN_CACHE KGEN_CATALOGUE XDG_CACHE_HOME
cubins() { find "$1" -name '*.cubin' | wc -l; }

# --- the catalogue for sm_90 (KGEN_CATALOGUE replaces the embedded one) -------
export KGEN_CACHE_DIR=$T/cache
check 'KGEN_CATALOGUE="$SYNTH" "$KGEN" precompile --arch sm_90 --jobs 2 > "$T/out1" 2> "$T/err1"' "precompile the fixture"
cat "$T/out1" "$T/err1"
check 'grep -q "^catalogue sm_90 ($SYNTH: synthetic sm_90 (no GPU), 2026-11-23) for sm_90 into $T/cache$" "$T/out1"' \
      "summary names the catalogue and the cache"
check 'grep -q "^14 kernels (7 configurations in the layouts they have times for): 14 compiled, 0 already cached, 0 failed in .* s (2 threads)$" "$T/out1"' \
      "14 compiled"
check '[ "$(cubins "$T/cache")" -eq 14 ]' "14 cache entries"
check 'KGEN_CATALOGUE="$SYNTH" "$KGEN" precompile --arch sm_90 > "$T/out2"' "precompile again"
check 'grep -q ": 0 compiled, 14 already cached, 0 failed" "$T/out2"' "all cached the second time"
check '[ "$(cubins "$T/cache")" -eq 14 ]' "still 14 cache entries"

# --- --catalogue FILE, one thread ----------------------------------------------
check 'KGEN_CACHE_DIR=$T/cache2 "$KGEN" precompile --arch sm_90 --catalogue "$SMALL" -j 1 > "$T/out3"' "precompile --catalogue"
check 'grep -q "^3 kernels (2 configurations .*): 3 compiled, 0 already cached, 0 failed in .* s (1 thread)$" "$T/out3"' \
      "3 compiled with one thread"

# --- failures --------------------------------------------------------------------
# for sm_75 the cp.async kernel does not render: one failure named, exit 1
KGEN_CACHE_DIR=$T/cache3 "$KGEN" precompile --arch sm_75 --catalogue "$SMALL" > "$T/out4" 2> "$T/err4"
check '[ $? -eq 1 ]' "a kernel that fails: exit 1"
check 'grep -q "kernel 2 (matmul_warp, line 11) in layout nn: .*cp.async.*sm_80" "$T/err4"' "the failure named"
check 'grep -q ": 2 compiled, 0 already cached, 1 failed" "$T/out4"' "two compiled, one failed"
if ! "$KGEN" precompile --arch sm_80 --catalogue /dev/null > /dev/null 2>&1; then ok; else bad "an empty catalogue file"; fi
"$KGEN" precompile --arch sm_89 > /dev/null 2> "$T/err5"
check '[ $? -eq 1 ] && grep -q "no catalogue for sm_89 (embedded: " "$T/err5"' "no catalogue for the architecture"
KGEN_CACHE=0 "$KGEN" precompile --arch sm_90 --catalogue "$SMALL" > /dev/null 2> "$T/err6"
check '[ $? -eq 1 ] && grep -q "the disk cache cannot be used (off (KGEN_CACHE=0))" "$T/err6"' "no disk cache: exit 1"
# a cache directory kgen would not use (a file; writable by others; a symbolic link): exit 1, the reason named,
# nothing compiled into it
touch "$T/afile"
mkdir -m 777 "$T/wide" && chmod 777 "$T/wide"
mkdir "$T/real" && ln -s "$T/real" "$T/link"
for d in afile afile/sub wide link; do
    KGEN_CACHE_DIR=$T/$d "$KGEN" precompile --arch sm_90 --catalogue "$SMALL" > "$T/out8" 2> "$T/err8"
    check '[ $? -eq 1 ] && grep -q "the disk cache cannot be used (.*$T/$d.*): there is nowhere to compile into" "$T/err8" && [ ! -s "$T/out8" ]' \
          "an unusable cache directory ($d): exit 1 with the reason"
done
check '[ -z "$(ls -A "$T/wide")" ] && [ -z "$(ls -A "$T/real")" ]' "nothing written into the unusable directories"
# a kernel compiled but not stored (its entry's name taken by a folder): that kernel failed, exit 1
check 'KGEN_CACHE_DIR=$T/cache3 "$KGEN" precompile --arch sm_90 --catalogue "$SMALL" -j 1 > /dev/null' "precompile into cache3"
for f in "$T"/cache3/*.cubin; do rm "$f" && mkdir "$f"; done
KGEN_CACHE_DIR=$T/cache3 "$KGEN" precompile --arch sm_90 --catalogue "$SMALL" -j 2 > "$T/out9" 2> "$T/err9"
check '[ $? -eq 1 ] && grep -q ": 0 compiled, 0 already cached, 3 failed" "$T/out9" && [ "$(grep -c "compiled, but not stored in the disk cache: cannot write .*Is a directory" "$T/err9")" -eq 3 ]' \
      "kernels that could not be stored: failed, exit 1"
# nothing to compile: the cache directory is not created
KGEN_CACHE_DIR=$T/never/made "$KGEN" precompile --arch sm_89 > /dev/null 2>&1
check '[ $? -eq 1 ] && [ ! -e "$T/never" ]' "no catalogue: no cache directory created"
KGEN_CACHE_DIR=$T/never/made "$KGEN" precompile --arch sm_90 --catalogue "$T/missing.txt" > /dev/null 2>&1
check '[ $? -eq 1 ] && [ ! -e "$T/never" ]' "a missing --catalogue: no cache directory created"
"$KGEN" precompile --arch sm_90 --bm 64 > /dev/null 2> "$T/err7"
check '[ $? -eq 2 ] && grep -q "precompile takes no configuration" "$T/err7"' "a configuration option: exit 2"
"$KGEN" precompile --arch sm_90 --jobs 0 > /dev/null 2>&1
check '[ $? -eq 2 ]' "--jobs 0: exit 2"
check '"$KGEN" --help | grep -q "kgen precompile"' "listed in --help"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
