#!/usr/bin/env bash
# The CPU test suite built with AddressSanitizer and UndefinedBehaviorSanitizer
# (any report fails the test that triggered it) into build-asan/, linked with
# --no-as-needed so that a dependency on the CUDA driver would show. GPU tests
# skip as in scripts/test.sh. packaging.install is left out: it builds programs
# against the installed tree without the sanitizers' runtime.
#   scripts/check-sanitizers.sh [CTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGEN_WERROR=ON -DKGEN_BENCH=OFF \
      -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san -Wl,--no-as-needed" \
      -DCMAKE_SHARED_LINKER_FLAGS="$san -Wl,--no-as-needed"
cmake --build build-asan -j"$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E '^packaging\.install$' "$@"
