#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Round 5 on the GPU: warp groups along K (wk) against split-K (odd1000,
# smallM, bigK, sq1024); 16-byte-copy kernels on odd4095 / odd3001 with
# lda and ldb padded to multiples of 4 (what packing would give) against
# the single-float winners; the cost of packing (a pitched copy).
# Usage: bench/scripts/round5.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
H=$B/bench/kgen-harness
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,driver_version --format=csv > $O/facts.txt 2>&1
$H --info >> $O/facts.txt 2>&1
{ timeout 150 $B/tests/bench/test_warp_gpu; echo "test_warp_gpu rc=$?"; } > $O/tests.txt 2>&1
tail -3 $O/tests.txt
timeout 200 $H --configs bench/configs/r5-wk.txt --shapes bench/configs/r5-shapes-wk.txt --csv $O/r5a-wk.csv > $O/r5a.txt 2>&1; echo "r5a rc=$?"
timeout 120 $H --configs bench/configs/r5-pack.txt --shapes bench/configs/r5-shapes-pack.txt --csv $O/r5b-unpadded.csv > $O/r5b.txt 2>&1; echo "r5b rc=$?"
timeout 120 $H --configs bench/configs/r5-pack.txt --shapes bench/configs/r5-shapes-pack.txt --ld-multiple 4 --csv $O/r5c-padded.csv > $O/r5c.txt 2>&1; echo "r5c rc=$?"
python3 - > $O/r5d-pack-cost.txt 2>&1 <<'PY'
import torch
def t(rows, cols):
    a = torch.randn(rows, cols, device="cuda")
    p = (cols + 3) // 4 * 4
    b = torch.empty(rows, p, device="cuda")
    for _ in range(5): b[:, :cols].copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(30):
        s.record(); b[:, :cols].copy_(a); e.record(); e.synchronize(); ts.append(s.elapsed_time(e) * 1000)
    ts.sort()
    print(f"pack {rows}x{cols} -> ld {p}: median {ts[15]:.1f} us ({8*rows*cols/ts[15]/1e3:.0f} GB/s read+write)")
t(4095, 4095); t(3001, 1531); t(1531, 2999)
PY
cat $O/r5d-pack-cost.txt
