#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# bench/run.sh without a GPU: usage and a build without the programs (the
# bench programs, or kgen for the precompile set) exit 2,
# a machine without a GPU exits 1 with kgen-bench's "no GPU" message, and
# none of them writes a result; the precompile set, run with stand-ins for
# the programs, times a cold `kgen precompile` into the facts file. (On a
# GPU it is the reproduction itself: bench/README.md.)
# Usage: run_script.sh RUN_SH BUILD_DIR
RUN=$1; B=$2
PROG=$RUN
# shellcheck source=tests/bench/checks.sh
. "$(dirname "$0")/checks.sh"
expect 2 "usage: bench/run.sh" --
expect 2 "usage: bench/run.sh" -- "$B" "$T/out1" extra
expect 2 "no build directory" -- "$T/none" "$T/out1"
mkdir "$T/empty"
expect 2 "kgen-bench not found" -- "$T/empty" "$T/out1"
KGEN_BENCH_LAYOUTS="nn xy" expect 2 "unknown layout 'xy'" -- "$B" "$T/out1"
KGEN_BENCH_SETS="grid odd" expect 2 "unknown set 'odd'" -- "$B" "$T/out1"
KGEN_BENCH_SETS="precompile suite" KGEN_BENCH_LAYOUTS="nn ab" expect 2 "unknown layout 'ab'" -- "$B" "$T/out1"
[ ! -e "$T/out1" ] && ok || bad "a refused run created its output directory"
"$RUN" --help | grep -q "<gpu>-<date>-<set>-<layout>.csv" && ok || bad "--help"
# The precompile set with stand-ins for the programs (no GPU needed): kgen
# precompile runs cold (an empty disk cache of its own, CUDA_CACHE_DISABLE=1)
# and alone (kgen-bench only names the GPU); its summary and exit status go
# into the facts file; a failed compile fails the run, a GPU without a
# catalogue (nothing to precompile) does not; its temporary folder is gone
# afterwards, also when the run is interrupted. kgen itself is needed only
# for that set.
mkdir -p "$T/fake/bench" "$T/fake/cli" "$T/tmp"
cat > "$T/fake/bench/kgen-bench" << 'END'
#!/bin/sh
echo "$*" >> "$CALLS"
[ "$1" = --device-name ] && echo "NVIDIA Fake GPU"
exit 0
END
cp "$T/fake/bench/kgen-bench" "$T/fake/bench/kgen-bench-plot"
cat > "$T/fake/cli/kgen" << 'END'
#!/bin/sh
[ "$1" = precompile ] || exit 9
echo "cache ${KGEN_CACHE_DIR:-unset} files $(ls "${KGEN_CACHE_DIR:-/nonexistent}" 2> /dev/null | wc -l) cuda ${CUDA_CACHE_DISABLE:-unset} $2 $3"
case $FAKE in
    ok) echo "158 kernels (40 configurations): 158 compiled, 0 already cached, 0 failed in 9.9 s (16 threads)" ;;
    fail) echo "158 kernels (40 configurations): 157 compiled, 0 already cached, 1 failed in 9.9 s (16 threads)"; exit 1 ;;
    nocat) echo "kgen: precompile: no catalogue for sm_80 (embedded: sm_90); nothing to compile" >&2; exit 1 ;;
    slow) sleep 30 ;;
esac
END
chmod +x "$T/fake/bench/kgen-bench" "$T/fake/bench/kgen-bench-plot" "$T/fake/cli/kgen"
export CALLS=$T/calls
for f in ok fail nocat; do
    rm -f "$CALLS"
    FAKE=$f TMPDIR=$T/tmp KGEN_BENCH_SETS=precompile "$RUN" "$T/fake" "$T/pc-$f" > "$T/out" 2> "$T/err"; rc=$?
    facts=$(cat "$T"/pc-$f/fake-gpu-*-facts.txt 2> /dev/null)
    want=0; [ $f = fail ] && want=1
    case $f in ok) line="0 failed in 9.9 s" ;; fail) line="1 failed in 9.9 s" ;; nocat) line="no catalogue for sm_80" ;; esac
    status="exit status 0, "; [ $f = ok ] || status="exit status 1, "
    [ $rc -eq $want ] && grep -q "cache $T/tmp/.*/kgen files 0 cuda 1 --jobs [1-9]" "$T/out" &&
        printf '%s\n' "$facts" | grep -q "kgen precompile --jobs [1-9][0-9]* (cold" &&
        printf '%s\n' "$facts" | grep -q "$line" && printf '%s\n' "$facts" | grep -q "$status" &&
        [ "$(cat "$CALLS")" = --device-name ] && [ -z "$(ls -A "$T/tmp")" ] && ok ||
        bad "precompile set, $f: exit $rc ($want expected), kgen-bench called with '$(cat "$CALLS")', left in TMPDIR: '$(ls -A "$T/tmp")': $(cat "$T/out" "$T/err") facts: $facts"
done
# stopped while kgen precompile runs (SIGTERM to its process group, as a
# terminal's ^C or a CI timeout stops it): exit 143, nothing left behind
FAKE=slow TMPDIR=$T/tmp KGEN_BENCH_SETS=precompile setsid "$RUN" "$T/fake" "$T/pc-int" > "$T/out" 2> "$T/err" &
pid=$!
for _ in $(seq 100); do cat "$T"/tmp/*/log 2> /dev/null | grep -q "^cache " && break; sleep 0.1; done
kill -TERM -- -"$pid"; wait $pid; rc=$?
[ $rc -eq 143 ] && [ -z "$(ls -A "$T/tmp")" ] && ok || bad "stopped: exit $rc (143 expected), left in TMPDIR: '$(ls -A "$T/tmp")'"
# without cli/kgen: refused with the precompile set, not without it
mkdir -p "$T/nokgen"
cp -r "$T/fake/bench" "$T/nokgen/"
expect 2 "cli/kgen not found" -- "$T/nokgen" "$T/out3"
rm -f "$CALLS"
KGEN_BENCH_SETS=grid KGEN_BENCH_LAYOUTS=nn "$RUN" "$T/nokgen" "$T/out4" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ! grep -q "not found" "$T/err" && grep -q -- "--no-db --shapes bench/grid.txt --layout nn" "$CALLS" && ok ||
    bad "without cli/kgen, grid alone: exit $rc (0 expected): $(cat "$T/err")"
if "$B/bench/kgen-bench" --device-name > /dev/null 2>&1; then
    echo "a GPU is present: the run itself is not repeated here (bench/run.sh $B)"
else
    "$RUN" "$B" "$T/out2" > "$T/out" 2> "$T/err"; rc=$?
    grep -q "no GPU:" "$T/err" && [ $rc -eq 1 ] && [ ! -e "$T/out2" ] && ok ||
        bad "without a GPU: exit $rc (1 expected), 'no GPU' and nothing written: $(cat "$T/err")"
fi
finish
