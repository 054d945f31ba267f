#!/usr/bin/env bash
# Installs what kgen needs from Debian's packages (only what is missing) and
# builds it into build/. The CUDA toolkit (nvcc, NVRTC) must already be there;
# no GPU is needed to build, emit, compile or test the CPU side.
set -euo pipefail
cd "$(dirname "$0")/.."

# The build, and the tests' tools: readelf (binutils) and pkg-config.
scripts/need.sh cmake make gcc libc6-dev binutils pkg-config liblua5.4-dev libsqlite3-dev

if ! command -v nvcc > /dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: the CUDA toolkit (nvcc and NVRTC) was not found; install it to /usr/local/cuda" >&2
    exit 1
fi
export PATH="$PATH:/usr/local/cuda/bin"

werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGEN_WERROR=$werror
cmake --build build -j"$(nproc)"
