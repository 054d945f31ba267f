#!/usr/bin/env python3
"""Writes tests/runtime/data/catalogue_synthetic.txt: a SYNTHETIC catalogue
(no GPU measured it) for the runtime's catalogue tests until the real
catalogue/sm_90.txt exists. Its times come from a made-up performance model
that differs from the runtime's (launch latency, a per-tile pipeline fill,
memory-bound floors, split-K's atomics, stream-K's fix-up, per-layout
penalties, +-3% deterministic noise), so that the leave-one-out test has
something to get wrong. Kernels are real sm_90 configurations (they render).
    python3 tests/runtime/data/make_fixture.py > tests/runtime/data/catalogue_synthetic.txt
"""
import math

SMS = 132
# id: (template, needs, tile_m, tile_n, kslices, persistent, bps, config, speed, layout penalty nn nt tn tt)
KERNELS = [
    ("matmul_warp", 4, 128, 256, 1, 0, 1, "bn=256 bk=16 wm=64 raster=8 stages=1", 1.00, (1.0, 1.08, 1.04, 1.12)),
    ("matmul_warp", 4, 128, 256, 1, 1, 1, "bn=256 bk=16 wm=64 raster=8 stages=1 sk=2 red=4", 0.97, (1.0, 1.08, 1.04, 1.12)),
    ("matmul_warp", 4, 128, 128, 4, 0, 1, "bk=16 wm=64 stages=3 raster=8 splitk=4 red=4", 0.93, (1.0, 1.05, 1.05, 1.10)),
    ("matmul_warp", 4, 64, 128, 1, 0, 2, "bm=64 bk=16 wn=32 stages=3 raster=8", 0.85, (1.0, 1.03, 1.02, 1.06)),
    ("matmul_warp", 1, 64, 128, 1, 0, 2, "bm=64 bk=16 stages=3 raster=8 cc=1 pred=1 vec=1", 0.70, (1.0, 1.02, 1.02, 1.04)),
    ("matmul_warp", 4, 32, 32, 1, 0, 8, "bm=32 bn=32 bk=16 wm=16 wn=32 tm=2 stages=3", 0.45, (1.0, 1.01, 1.01, 1.02)),
    ("matmul", 1, 32, 32, 1, 0, 4, "bm=32 bn=32 bk=32 tm=2 tn=2 vec=1", 0.30, (1.0, 1.10, 1.00, 1.10)),
]
SIZES = [64, 256, 1000, 1024, 3001, 4096]
KS = [64, 512, 4096]
LAYOUTS = ["nn", "tn"]


def align(layout, m, n, k):
    lda = m if layout[0] == "t" else k
    ldb = k if layout[1] == "t" else n
    for v in (4, 2):
        if lda % v == 0 and ldb % v == 0:
            return v
    return 1


def noise(*key):
    h = 2166136261
    for x in key:
        for ch in str(x).encode():
            h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return 1 + 0.03 * ((h % 2001) / 1000.0 - 1)


def time_us(j, layout, m, n, k):
    tmpl, needs, tm, tn, ks, pers, bps, cfg, speed, pen = KERNELS[j]
    tiles = math.ceil(m / tm) * math.ceil(n / tn)
    units = tiles * ks
    slots = SMS * bps
    kk = math.ceil(k / ks)
    # one unit: 2 tm tn kk flops at 0.45 TFLOP/s per SM shared by bps blocks,
    # plus a pipeline fill of 48 K-steps
    unit_us = 2.0 * tm * tn * (kk + 48) / (0.45e6 * speed) * bps
    waves = units / slots if pers else math.ceil(units / slots)
    t = waves * unit_us
    if pers and units % slots:
        t += 3.0
    if ks > 1:
        t += m * n * 4 * ks / 2.0e6  # atomics into C
    t = max(t, (m * k + k * n + m * n) * 4 / 3.5e6)  # memory floor at 3.5 TB/s
    return (4.0 + t) * pen[["nn", "nt", "tn", "tt"].index(layout)] * noise(j, layout, m, n, k)


def main():
    print("# SYNTHETIC catalogue for kgen's tests: no GPU measured these times.")
    print("# Rebuild: python3 tests/runtime/data/make_fixture.py > tests/runtime/data/catalogue_synthetic.txt")
    print("kgen-catalogue 1")
    print("arch 90")
    print(f"sms {SMS}")
    print("device synthetic sm_90 (no GPU)")
    print("driver none")
    print("date 2026-11-23")
    print("command python3 tests/runtime/data/make_fixture.py")
    for j, (tmpl, needs, tm, tn, ks, pers, bps, cfg, _, _) in enumerate(KERNELS):
        print(f"kernel {j + 1} {tmpl} {needs} {tm} {tn} {ks} {pers} {bps} {cfg}")
    for layout in LAYOUTS:
        for m in SIZES:
            for n in SIZES:
                for k in KS:
                    a = align(layout, m, n, k)
                    ts = []
                    for j, kern in enumerate(KERNELS):
                        ts.append("-" if kern[1] > a else f"{time_us(j, layout, m, n, k):.2f}")
                    print(f"time {layout} {m} {n} {k} " + " ".join(ts))


main()
