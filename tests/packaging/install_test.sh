#!/usr/bin/env bash
# shellcheck disable=SC2046 # pkg-config's flags are meant to be split
# `cmake --install` into a fresh prefix, then programs built against the
# installed tree both ways a user would: find_package(kgen) and pkg-config,
# each with the shared and the static library, and examples/matmul_example.c.
# usage: install_test.sh BUILD_DIR SOURCE_DIR CUDA_INCLUDE_DIR CUDA_LIBRARY_DIR
set -euo pipefail
build=$1
src=$2
cuda_inc=$3
cuda_lib=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export KGEN_CACHE=0
p=$d/prefix
cmake --install "$build" --prefix "$p" > "$d/install.log" || { cat "$d/install.log"; fail "cmake --install"; }
libdir=$(dirname "$(find "$p" -name libkgen.a | head -1)")
for f in bin/kgen include/kgen.h; do [ -f "$p/$f" ] || fail "$f not installed"; done
for f in libkgen.a libkgen.so cmake/kgen/kgenConfig.cmake cmake/kgen/kgenConfigVersion.cmake \
         pkgconfig/kgen.pc pkgconfig/kgen-static.pc; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
"$p/bin/kgen" --tile 16 -o - | grep -q __global__ || fail "the installed kgen does not emit"

# CMake: find_package(kgen) -> kgen::kgen (shared) and kgen::kgen_static.
cmake -S "$src/tests/packaging/consumer" -B "$d/cmake" -DCMAKE_PREFIX_PATH="$p" -DEXAMPLES_DIR="$src/examples" \
      > "$d/cmake.log" 2>&1 || { cat "$d/cmake.log"; fail "configuring a find_package(kgen) project"; }
cmake --build "$d/cmake" > "$d/build.log" 2>&1 || { cat "$d/build.log"; fail "building against kgen::kgen"; }
"$d/cmake/consumer_shared" || fail "consumer_shared (kgen::kgen) failed"
"$d/cmake/consumer_static" || fail "consumer_static (kgen::kgen_static) failed"
readelf -d "$d/cmake/consumer_shared" | grep -q 'NEEDED.*libkgen\.so' || fail "consumer_shared does not use libkgen.so"
[ -x "$d/cmake/matmul_example" ] || fail "examples/matmul_example.c not built"

# pkg-config: kgen (shared) and kgen-static.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -o "$d/pc_shared" "$src/tests/packaging/consumer/consumer.c" $(pkg-config --cflags --libs kgen) -Wl,-rpath,"$libdir" \
    || fail "building with pkg-config kgen"
"$d/pc_shared" || fail "pc_shared failed"
cc -o "$d/pc_static" "$src/tests/packaging/consumer/consumer.c" $(pkg-config --cflags --libs kgen-static) \
    || fail "building with pkg-config kgen-static"
"$d/pc_static" || fail "pc_static failed"
cc -o "$d/pc_example" "$src/examples/matmul_example.c" -I"$cuda_inc" $(pkg-config --cflags --libs kgen) \
    -Wl,-rpath,"$libdir" "$cuda_lib/libcudart_static.a" -lpthread -ldl -lrt || fail "building matmul_example with pkg-config"

# No installed file needs the CUDA driver, and the tree may be moved.
for f in "$p/bin/kgen" "$libdir"/libkgen.so; do
    readelf -d "$f" | grep -q 'NEEDED.*libcuda' && fail "$f needs libcuda"
done
mv "$p" "$d/moved"
PKG_CONFIG_PATH=$d/moved/${libdir#"$p"/}/pkgconfig pkg-config --cflags kgen | grep -q "$d/moved" \
    || fail "kgen.pc does not follow a moved prefix"
echo "install_test: ok"
