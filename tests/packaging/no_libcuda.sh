#!/usr/bin/env bash
# No binary or library that kgen builds may record a dependency on the CUDA
# driver (libcuda.so.1): libkgen opens it with dlopen, so that every binary
# starts on a machine without a GPU. Checked two ways, so that the result does
# not depend on whether the toolchain links with --as-needed by default:
#   1. readelf -d on every ELF file in the build tree (no NEEDED libcuda);
#   2. no link command in the build tree names the driver or its stub.
# usage: no_libcuda.sh BUILD_DIR
set -euo pipefail
build=$1
command -v readelf > /dev/null || { echo "no_libcuda: readelf not found (binutils)" >&2; exit 1; }
fail=0
checked=0
while IFS= read -r -d '' f; do
    head -c 4 "$f" 2> /dev/null | grep -q $'^\x7fELF' || continue
    case "$f" in *.o) continue ;; esac
    checked=$((checked + 1))
    if readelf -d "$f" 2> /dev/null | grep -q 'NEEDED.*libcuda\.so'; then
        echo "no_libcuda: $f records a dependency on libcuda:" >&2
        readelf -d "$f" | grep NEEDED >&2
        fail=1
    fi
done < <(find "$build" -type f \( -perm -u+x -o -name '*.so*' \) -not -path '*/CMakeFiles/*' -print0)
while IFS= read -r -d '' f; do
    if grep -Eq 'libcuda\.so|stubs/libcuda|-lcuda( |$)' "$f"; then
        echo "no_libcuda: a link command names the CUDA driver: $f" >&2
        grep -Eo '[^ ]*libcuda\.so[^ ]*|-lcuda\b' "$f" | sort -u >&2
        fail=1
    fi
done < <(find "$build" \( -name link.txt -o -name build.ninja \) -print0)
[ "$checked" -gt 0 ] || { echo "no_libcuda: no ELF file found under $build" >&2; exit 1; }
[ "$fail" -eq 0 ] && echo "no_libcuda: $checked ELF files, none needs libcuda"
exit "$fail"
