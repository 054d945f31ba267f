/*
 * occupancy.c -- how many blocks of a kernel an SM holds, and what limits it.
 *
 * The model of the CUDA Occupancy Calculator: a block is resident only when
 * the SM has room for all of it at once, so each resource gives a whole
 * number of blocks:
 *   threads    max_warps_per_sm / warps per block
 *   blocks     max_blocks_per_sm
 *   registers  (regs_per_sm / registers per warp) / warps per block, where a
 *              warp's registers are regs/thread x 32 rounded up to the
 *              allocation unit
 *   shared     smem_per_sm / (block's shared memory + the per-block
 *              reservation, rounded up to the allocation unit)
 * and the SM holds the smallest. With an allocation unit of 1 (a limits file
 * can say so) this is the seeds' arithmetic: 16,384 registers and 512-thread
 * blocks of 11 registers give floor(16384 / 5632) = 2 blocks.
 */
#include "internal.h"

static int round_up(long v, long unit) { return unit > 1 ? (int)(((v + unit - 1) / unit) * unit) : (int)v; }

void kgi_occupancy_calc(const kgi_limits *lim, int threads, int regs, size_t smem, kgi_occupancy *o)
{
    o->threads = threads;
    o->regs_per_thread = regs;
    int warp = lim->warp_size > 0 ? lim->warp_size : 32;
    int warps = (threads + warp - 1) / warp;
    o->warps_per_block = warps;

    o->by_threads = warps > 0 ? lim->max_warps_per_sm / warps : 0;
    if (threads > lim->max_threads_per_block)
        o->by_threads = 0;
    o->by_blocks = lim->max_blocks_per_sm;

    o->regs_per_warp = round_up((long)regs * warp, lim->reg_alloc_unit);
    o->regs_per_block = o->regs_per_warp * warps;
    if (regs <= 0)
        o->by_regs = lim->max_blocks_per_sm;
    else if (regs > lim->max_regs_per_thread || o->regs_per_block > lim->regs_per_block)
        o->by_regs = 0;
    else
        o->by_regs = (lim->regs_per_sm / o->regs_per_warp) / warps;

    o->smem_per_block = smem ? (size_t)round_up((long)(smem + lim->smem_reserved_per_block),
                                                (long)lim->smem_alloc_unit)
                             : 0;
    if (smem == 0)
        o->by_smem = lim->max_blocks_per_sm;
    else if (smem > lim->smem_per_block_optin)
        o->by_smem = 0;
    else
        o->by_smem = (int)(lim->smem_per_sm / o->smem_per_block);

    struct { int n; const char *what; } by[] = {
        {o->by_threads, "threads"}, {o->by_blocks, "blocks"}, {o->by_regs, "registers"}, {o->by_smem, "shared memory"}};
    o->blocks_per_sm = by[0].n;
    o->limiter = by[0].what;
    for (int i = 1; i < 4; i++) {
        if (by[i].n < o->blocks_per_sm) {
            o->blocks_per_sm = by[i].n;
            o->limiter = by[i].what;
        }
    }
    o->warps_per_sm = o->blocks_per_sm * warps;
    o->threads_per_sm = o->blocks_per_sm * threads;
    o->occupancy = lim->max_warps_per_sm > 0 ? (double)o->warps_per_sm / lim->max_warps_per_sm : 0.0;
}

/*
 * The seeds' question turned around: how many registers a thread may use
 * before registers, rather than threads, blocks or shared memory, cut the
 * number of resident blocks. With the seeds' SM (16,384 registers, 1,536
 * threads, allocation unit 1) and 512-thread blocks that is 10: three blocks
 * need 3 x 512 x 10 = 15,360 registers, and 11 would need 16,896.
 * Returns 0 when the block cannot be resident at all.
 */
int kgi_occupancy_max_regs(const kgi_limits *lim, int threads, size_t smem_bytes)
{
    kgi_occupancy o;
    kgi_occupancy_calc(lim, threads, 0, smem_bytes, &o);
    int want = o.by_threads < o.by_blocks ? o.by_threads : o.by_blocks;
    if (o.by_smem < want)
        want = o.by_smem;
    if (want <= 0)
        return 0;
    for (int r = lim->max_regs_per_thread; r >= 1; r--) {
        kgi_occupancy_calc(lim, threads, r, smem_bytes, &o);
        if (o.by_regs >= want)
            return r;
    }
    return 0;
}
