#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# bench/run.sh without a GPU: usage and a build without the programs (the
# bench programs, or kgen for the precompile set) exit 2,
# a machine without a GPU exits 1 with kgen-bench's "no GPU" message, and
# none of them writes a result. (On a GPU it is the reproduction itself:
# bench/README.md.)
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
# a build with the bench programs but without kgen itself (the precompile set runs it)
mkdir -p "$T/nokgen/bench"
printf '#!/bin/sh\nexit 0\n' > "$T/nokgen/bench/kgen-bench"
cp "$T/nokgen/bench/kgen-bench" "$T/nokgen/bench/kgen-bench-plot"
chmod +x "$T/nokgen/bench/kgen-bench" "$T/nokgen/bench/kgen-bench-plot"
expect 2 "cli/kgen not found" -- "$T/nokgen" "$T/out1"
KGEN_BENCH_LAYOUTS="nn xy" expect 2 "unknown layout 'xy'" -- "$B" "$T/out1"
KGEN_BENCH_SETS="grid odd" expect 2 "unknown set 'odd'" -- "$B" "$T/out1"
KGEN_BENCH_SETS="precompile suite" KGEN_BENCH_LAYOUTS="nn ab" expect 2 "unknown layout 'ab'" -- "$B" "$T/out1"
[ ! -e "$T/out1" ] && ok || bad "a refused run created its output directory"
"$RUN" --help | grep -q "<gpu>-<date>-<set>-<layout>.csv" && ok || bad "--help"
if "$B/bench/kgen-bench" --device-name > /dev/null 2>&1; then
    echo "a GPU is present: the run itself is not repeated here (bench/run.sh $B)"
else
    "$RUN" "$B" "$T/out2" > "$T/out" 2> "$T/err"; rc=$?
    grep -q "no GPU:" "$T/err" && [ $rc -eq 1 ] && [ ! -e "$T/out2" ] && ok ||
        bad "without a GPU: exit $rc (1 expected), 'no GPU' and nothing written: $(cat "$T/err")"
fi
finish
