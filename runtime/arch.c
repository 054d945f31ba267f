/*
 * arch.c -- limits of each GPU architecture kgen targets offline.
 *
 * On a GPU the context reads its limits from the driver; without one (kgen
 * emit, compile --arch, explain --arch, tune --dry-run) these figures stand
 * in. Per-SM and per-block limits come from the CUDA C++ Programming Guide,
 * "Features and Technical Specifications", table "Technical Specifications
 * per Compute Capability" (CUDA 12/13 editions); allocation granularities
 * from the CUDA Occupancy Calculator's GPU data sheet. The reference part of
 * each architecture (SM count, boost clock, memory bandwidth, L2) is the
 * vendor's datasheet for that part; it is used only for offline roofline
 * figures and named wherever kgen prints them.
 */
#include <stddef.h>

#include "internal.h"

#define KB 1024

static const kgi_limits table[] = {
    /* sm_70, Volta. Guide: 2048 threads, 32 blocks, 64 warps, 64K regs per SM;
     * 96 KB shared per SM and per block (opt-in). 64 FP32 lanes per SM.
     * Reference: Tesla V100-SXM2 (80 SMs, 1530 MHz, 900 GB/s, 6 MB L2). */
    {"sm_70", 70, 1024, 2048, 32, 64, 32, 65536, 65536, 255, 256,
     96 * KB, 48 * KB, 96 * KB, 0, 256, 64,
     "Tesla V100-SXM2", 80, 1.530, 900.0, 6 * KB * KB},
    /* sm_75, Turing. Guide: 1024 threads, 16 blocks, 32 warps per SM; 64 KB
     * shared per SM and per block (opt-in). 64 FP32 lanes per SM.
     * Reference: Tesla T4 (40 SMs, 1590 MHz, 320 GB/s, 4 MB L2). */
    {"sm_75", 75, 1024, 1024, 16, 32, 32, 65536, 65536, 255, 256,
     64 * KB, 48 * KB, 64 * KB, 0, 256, 64,
     "Tesla T4", 40, 1.590, 320.0, 4 * KB * KB},
    /* sm_80, Ampere GA100. Guide: 2048 threads, 32 blocks, 64 warps per SM;
     * 164 KB shared per SM, 163 KB per block (opt-in), 1 KB reserved per block.
     * 64 FP32 lanes per SM.
     * Reference: A100-SXM4-40GB (108 SMs, 1410 MHz, 1555 GB/s, 40 MB L2). */
    {"sm_80", 80, 1024, 2048, 32, 64, 32, 65536, 65536, 255, 256,
     164 * KB, 48 * KB, 163 * KB, 1 * KB, 128, 64,
     "A100-SXM4-40GB", 108, 1.410, 1555.0, 40 * KB * KB},
    /* sm_86, Ampere GA10x. Guide: 1536 threads, 16 blocks, 48 warps per SM;
     * 100 KB shared per SM, 99 KB per block (opt-in). 128 FP32 lanes per SM.
     * Reference: GeForce RTX 3070, the seeds' device query (46 SMs, 1725 MHz,
     * 7001 MHz x 256-bit = 448 GB/s, 4 MB L2). */
    {"sm_86", 86, 1024, 1536, 16, 48, 32, 65536, 65536, 255, 256,
     100 * KB, 48 * KB, 99 * KB, 1 * KB, 128, 128,
     "GeForce RTX 3070", 46, 1.725, 448.0, 4 * KB * KB},
    /* sm_89, Ada. Guide: 1536 threads, 24 blocks, 48 warps per SM; 100 KB
     * shared per SM, 99 KB per block (opt-in). 128 FP32 lanes per SM.
     * Reference: L4 (58 SMs, 2040 MHz, 300 GB/s, 48 MB L2). */
    {"sm_89", 89, 1024, 1536, 24, 48, 32, 65536, 65536, 255, 256,
     100 * KB, 48 * KB, 99 * KB, 1 * KB, 128, 128,
     "L4", 58, 2.040, 300.0, 48 * KB * KB},
    /* sm_90, Hopper. Guide: 2048 threads, 32 blocks, 64 warps per SM; 228 KB
     * shared per SM, 227 KB per block (opt-in). 128 FP32 lanes per SM.
     * Reference: H100 SXM5 80GB (132 SMs, 1980 MHz, 3352 GB/s, 50 MB L2). */
    {"sm_90", 90, 1024, 2048, 32, 64, 32, 65536, 65536, 255, 256,
     228 * KB, 48 * KB, 227 * KB, 1 * KB, 128, 128,
     "H100 SXM5", 132, 1.980, 3352.0, 50 * KB * KB},
    {"", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", 0, 0.0, 0.0, 0},
};

const kgi_limits *kgi_arch_table(void) { return table; }

const kgi_limits *kgi_arch_limits(int sm)
{
    for (const kgi_limits *l = table; l->sm; l++)
        if (l->sm == sm)
            return l;
    return NULL;
}
