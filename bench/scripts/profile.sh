#!/bin/bash
# shellcheck disable=SC2086,SC2129,SC2012 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Source-level stall sampling (ncu) of kgen's 128x256 register-prefetch kernel and of
# cuBLAS's kernel at 4096^3, as CSV source pages for bench/tools/ncu_stalls.py.
# Usage: bench/scripts/profile.sh BUILD_DIR OUT_DIR
B=${1:-build-final}; O=$2
cd "$(dirname "$0")/../.." || exit 1
export HOME=/tmp/home KGEN_CACHE_DIR=/tmp/kgen-cache; mkdir -p $HOME
N=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $N"; $N --version | tail -1
echo "matmul_warp bm=128 bn=256 bk=16 wm=64 wn=64 tm=4 tn=4 ln=8 at=1 bt=0 pad=4 vec=4 stages=1 raster=8 layout=nn" > /tmp/c.txt
printf 'sq4096 4096 4096 4096\n' > /tmp/s.txt
for k in kgen_mmw sm80_xmma; do
  timeout 200 $N -k regex:$k --launch-count 1 --section SourceCounters --section WarpStateStats --import-source no \
    -o $O/prof-$k $B/bench/kgen-harness --configs /tmp/c.txt --shapes /tmp/s.txt --samples 1 --min-ms 0 > $O/run-$k.txt 2>&1
  echo "$k rc=$?"
  timeout 100 $N -i $O/prof-$k.ncu-rep --page source --print-source sass --csv > $O/source-$k.csv 2> $O/source-$k.err
  echo "source rc=$? $(wc -l < $O/source-$k.csv) lines"; head -c 300 $O/source-$k.err
  timeout 100 $N -i $O/prof-$k.ncu-rep --page details --print-details all > $O/details-$k.txt 2>&1
done
