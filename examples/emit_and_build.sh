#!/bin/sh
# emit_and_build.sh -- write a kernel with `kgen emit` and build it with nvcc,
# as a user who wants the .cu file in their own project would.
#
#   emit_and_build.sh [KGEN] [NVCC] [OUTDIR] [ARCH]
#
# Defaults: kgen and nvcc from PATH, the current directory, sm_90. Prints
# what nvcc's resource report says of the kernel. Needs no GPU.
set -eu
KGEN=${1:-kgen}
NVCC=${2:-nvcc}
OUT=${3:-.}
ARCH=${4:-sm_90}

# A 128 x 64 tile, 8 x 4 outputs per thread, float4 loads, any shape.
"$KGEN" emit --bm 128 --bn 64 --bk 16 --tm 8 --tn 4 --vec 4 --pad 4 --layout nn -o "$OUT/matmul_128x64.cu"
echo "wrote $OUT/matmul_128x64.cu ($(wc -l < "$OUT/matmul_128x64.cu") lines)"

# An object file to link into a CUDA program, and a CUBIN to load with
# cuModuleLoad; --resource-usage prints registers and shared memory.
"$NVCC" -arch="$ARCH" --resource-usage -c "$OUT/matmul_128x64.cu" -o "$OUT/matmul_128x64.o"
"$NVCC" -arch="$ARCH" -cubin "$OUT/matmul_128x64.cu" -o "$OUT/matmul_128x64.cubin"
test -s "$OUT/matmul_128x64.o" && test -s "$OUT/matmul_128x64.cubin"
echo "built $OUT/matmul_128x64.o and $OUT/matmul_128x64.cubin for $ARCH"
