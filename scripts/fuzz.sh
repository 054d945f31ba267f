#!/usr/bin/env bash
# Fuzzes each harness in tests/fuzz with libFuzzer (clang; installed when
# missing) for FUZZ_SECONDS seconds (default 25), with AddressSanitizer and
# UndefinedBehaviorSanitizer, starting from the committed seed corpus
# (tests/fuzz/corpus/NAME/, which is not modified: new inputs go to
# build-fuzz/corpus/NAME/). Prints each harness's executions and coverage.
# A crash fails the script; its input is in build-fuzz/artifacts/NAME/: fix
# the bug and add the input to tests/fuzz/crashes/NAME/, where every build's
# fuzz.replay_NAME test replays it from then on.
#   scripts/fuzz.sh [NAME...]     (default: config limits import cache_entry pattern catalogue)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang > /dev/null 2>&1 || scripts/need.sh clang
export PATH="$PATH:/usr/local/cuda/bin"
secs=${FUZZ_SECONDS:-25}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(config limits import cache_entry pattern catalogue)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGEN_BENCH=OFF -DKGEN_FUZZ=ON \
      -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
      -DCMAKE_SHARED_LINKER_FLAGS="$san" > build-fuzz.log 2>&1 || { cat build-fuzz.log; exit 1; }
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" >> build-fuzz.log 2>&1 || { tail -50 build-fuzz.log; exit 1; }
rm -f build-fuzz.log
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
printf '%-12s %10s %8s %8s %9s  %s\n' harness executions cov ft corpus result
for n in "${names[@]}"; do
    work=build-fuzz/corpus/$n
    mkdir -p "$work" "build-fuzz/artifacts/$n"
    log=build-fuzz/fuzz_$n.log
    result=ok
    if ! "build-fuzz/tests/fuzz/fuzz_$n" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="build-fuzz/artifacts/$n/" "$work" "tests/fuzz/corpus/$n" > "$log" 2>&1; then
        result="FAILED: see $log and build-fuzz/artifacts/$n/"
        failed=1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '#[0-9]+.*cov: ' "$log" | tail -1)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<< "$last")
    printf '%-12s %10s %8s %8s %9s  %s\n' "$n" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
    [ "$result" = ok ] || tail -40 "$log"
done
exit "$failed"
