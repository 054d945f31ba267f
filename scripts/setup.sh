#!/usr/bin/env bash
# Installs what kgen needs from Debian's packages (only what is missing) and
# builds it into build/. The CUDA toolkit (nvcc, NVRTC) must already be there;
# no GPU is needed to build, emit, compile or test the CPU side.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in cmake make gcc liblua5.4-dev libsqlite3-dev; do
    dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "setup: installing ${need[*]}"
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
fi

if ! command -v nvcc > /dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: the CUDA toolkit (nvcc and NVRTC) was not found; install it to /usr/local/cuda" >&2
    exit 1
fi
export PATH="$PATH:/usr/local/cuda/bin"

werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGEN_WERROR=$werror
cmake --build build -j"$(nproc)"
