/*
 * model.c -- the analytic time model (see model.h).
 *
 * It reads only the template-neutral terms of resources() (kgi_res), never a
 * template's parameter names, and adds up what a kernel of that description
 * costs on an SM and across the GPU:
 *
 *   registers  the template's estimate, capped by __launch_bounds__ (threads
 *              x min_blocks must fit the register file): what does not fit
 *              spills, which slows every phase;
 *   one phase  (a tile of K, per block) costs the larger of its issue time
 *              (FMAs, shared loads, global copies and their shared stores,
 *              loop and barrier overhead, over the SM's 4 schedulers) and its
 *              shared-memory time (the fragments' bytes at 128 per clock);
 *   the grid   tiles of C x slices of K (or, persistent, SMs x resident
 *              blocks walking the tiles, the trailing waves cut along K): the
 *              busiest SM's share of phases and epilogues (wave quantisation),
 *              over a latency-hiding factor from the warps resident; and no
 *              less than the chain of blocks one slot runs one after
 *              another, each phase at least the memory latency over the
 *              tiles of K in flight (stages), each block paying a fill;
 *   memory     L2 -> SM traffic of every block's panels, at a multiple of the
 *              DRAM bandwidth; DRAM traffic of A and B once when they fit the
 *              L2, else per wave of concurrent blocks the rows of A and
 *              columns of B that wave covers (raster groups shrink it), and C;
 *   passes     split-K's atomic additions into C, a cluster's exchange
 *              through distributed shared memory, a beta pass over C (all of
 *              it, or the tiles a persistent grid spreads) and the pack pass
 *              that copies operands whose rows are not 16-byte granular,
 *              each a launch plus its bytes at DRAM bandwidth.
 *
 * The constants in `K` are device-independent rates and latencies in
 * clocks, calibrated once by fitting these dozen numbers (not per shape or
 * configuration) against a recorded sweep of matmul_warp on an H200
 * (tests/autotune/data/warp_sweep_h200.csv, tests/autotune/test_model.c).
 */
#include <math.h>
#include <stdlib.h>

#include "autotune/model.h"

/* Shared memory delivers 128 bytes per clock per SM (32 banks x 4 bytes). */
#define SMEM_BYTES_PER_CLOCK 128.0

/* The calibrated constants. */
static const struct {
    double copy_issue;         /* issue slots per global copy or shared store (address math, predicates) */
    double phase_issue;        /* issue slots per warp per phase: loop, barrier, pipeline bookkeeping */
    double latency;            /* clocks a phase waits for its copies when nothing else is in flight */
    double hide_warps;         /* warps per scheduler that hide the FMA and shared-load latencies */
    double l2_bw_multiple;     /* L2 -> SM bandwidth, as a multiple of DRAM bandwidth */
    double atomic_ns;          /* ns of the GPU per atomic addition into C (a vector of atomic_width floats is one) */
    double launch_us;          /* a further kernel launch (beta or pack pass), back to back */
    double block_fill;         /* clocks a block spends before its first phase and after its last */
    double spill_slowdown;     /* time per phase grows by this times the fraction of registers spilled */
    double cluster_sync;       /* clocks of a cluster's barriers around the exchange */
    double dsmem_bytes_clock;  /* bytes per clock a block reads from its cluster's shared memory */
    double store_issue;        /* issue slots per 4 outputs a thread stores or adds at the end */
} K = {
    .copy_issue = 16,
    .phase_issue = 32,
    .latency = 600,
    .hide_warps = 1.25,
    .l2_bw_multiple = 0.5,
    .atomic_ns = 0.001,
    .launch_us = 4,
    .block_fill = 2000,
    .spill_slowdown = 0.125,
    .cluster_sync = 2000,
    .dsmem_bytes_clock = 10,
    .store_issue = 10,
};

void kgi_model_dev_arch(const kgi_limits *lim, kgi_model_dev *d)
{
    d->lim = *lim;
    d->sm_count = lim->ref_sm_count;
    d->clock_ghz = lim->ref_clock_ghz;
    d->bandwidth_gbs = lim->ref_bandwidth_gbs;
    d->l2_bytes = (double)lim->ref_l2_bytes;
}

void kgi_model_dev_device(const kgi_limits *lim, const kg_device_info *info, kgi_model_dev *d)
{
    d->lim = *lim;
    d->sm_count = info->sm_count > 0 ? info->sm_count : lim->ref_sm_count;
    d->clock_ghz = info->sm_clock_khz > 0 ? info->sm_clock_khz / 1e6 : lim->ref_clock_ghz;
    d->bandwidth_gbs = info->peak_bandwidth_gbs > 0 ? info->peak_bandwidth_gbs : lim->ref_bandwidth_gbs;
    d->l2_bytes = info->l2_bytes > 0 ? (double)info->l2_bytes : (double)lim->ref_l2_bytes;
}

static double ceil_div(double a, double b) { return ceil(a / b); }

/* Registers per thread the kernel gets (regs: ptxas's count, or 0) and the
 * fraction of what it needs that spills under the launch-bounds cap. */
static int registers(const kgi_model_dev *d, const kgi_res *r, int regs, double *spill)
{
    *spill = 0;
    if (regs > 0)
        return regs;
    double need = r->registers > 0 ? r->registers : fmin(255.0, r->outputs + 2.0 * ceil(sqrt(r->outputs)) + 28.0);
    int unit = 8; /* registers per thread are allocated in steps of 8 (256 per warp) */
    int cap = d->lim.regs_per_sm / (r->threads * r->min_blocks) / unit * unit;
    if (cap > d->lim.max_regs_per_thread)
        cap = d->lim.max_regs_per_thread;
    if (cap <= 0)
        return 0;
    if (need > cap)
        *spill = (need - cap) / cap;
    return (int)fmin(need, cap);
}

/* How the grid's work lands on the SMs. */
typedef struct sched {
    double sm_phases;          /* phases the busiest SM runs */
    double sm_blocks;          /* blocks (or pieces of tiles) it runs */
    double resident;           /* blocks it holds at once */
    double chain_phases;       /* phases one slot runs one after another */
    double chain_blocks;       /* blocks (pieces) that slot runs */
    double all_phases;         /* phases of all blocks */
    double spread_tiles;       /* persistent: tiles cut along K (their pieces add atomically) */
} sched;

static void schedule(const kgi_model_dev *d, const kgi_res *r, int bps, double tiles, double phases, sched *s)
{
    double slots = (double)bps * d->sm_count;
    s->spread_tiles = 0;
    if (r->persistent) {
        /* Whole waves of tiles one per block; the trailing partial wave (and,
         * with spread_waves = 2, the full one before it) cut into phases
         * shared out evenly over all blocks. */
        double rest = fmod(tiles, slots), whole = tiles;
        if (rest > 0)
            whole = r->spread_waves >= 2 ? (tiles >= 2 * slots ? tiles - rest - slots : 0) : tiles - rest;
        s->spread_tiles = tiles - whole;
        s->chain_phases = ceil_div(whole, slots) * phases + ceil_div(s->spread_tiles * phases, slots);
        s->chain_blocks = ceil_div(whole, slots) + (s->spread_tiles > 0);
        s->resident = bps;
        s->sm_phases = bps * s->chain_phases;
        s->sm_blocks = bps * s->chain_blocks;
        s->all_phases = tiles * phases;
    } else {
        /* One block per tile and slice of K; the busiest SM gets the ceiling
         * of its share: the last wave's quantisation. */
        double per_block = ceil_div(phases, r->kslices), blocks = tiles * r->kslices;
        double per_sm = ceil_div(blocks, d->sm_count);
        s->resident = fmin(bps, per_sm);
        s->sm_phases = per_sm * per_block;
        s->sm_blocks = per_sm;
        s->chain_blocks = ceil_div(per_sm, s->resident);
        s->chain_phases = s->chain_blocks * per_block;
        s->all_phases = blocks * per_block;
    }
}

double kgi_model_time_ms(const kgi_model_dev *d, const kgi_res *r, int regs, int m, int n, int k)
{
    if (r->threads <= 0 || r->tile_m <= 0 || r->tile_n <= 0 || r->tile_k <= 0 || d->sm_count <= 0 ||
        d->clock_ghz <= 0 || r->min_blocks <= 0 || r->kslices <= 0)
        return INFINITY;
    double spill;
    regs = registers(d, r, regs, &spill);
    kgi_occupancy o;
    kgi_occupancy_calc(&d->lim, r->threads, regs, (size_t)r->smem, &o);
    if (regs <= 0 || o.blocks_per_sm <= 0)
        return INFINITY;
    double bm = r->tile_m, bn = r->tile_n, bk = r->tile_k, warps = o.warps_per_block;
    double outputs = r->outputs > 0 ? r->outputs : bm * bn / r->threads;

    /* One phase of one block, in SM clocks. A template that does not count
     * its shared reads reads a row and a column of scalars per k. */
    double fma = bm * bn * bk / r->threads;
    double reads = r->smem_reads > 0 ? r->smem_reads : 2.0 * sqrt(outputs) * bk;
    double lds = r->smem_loads > 0 ? r->smem_loads : reads;
    double copies = (bm * bk / (r->copy_a > 0 ? r->copy_a : 1) + bn * bk / (r->copy_b > 0 ? r->copy_b : 1)) /
                    r->threads;
    double sts = r->async_copy ? 0 : copies; /* copies through registers also store to shared memory */
    double issue = warps * (fma + lds + K.copy_issue * (copies + sts) + K.phase_issue) / 4.0;
    double smem = warps * reads * 32 * 4 / SMEM_BYTES_PER_CLOCK;
    double phase = fmax(issue, smem) * (1.0 + K.spill_slowdown * spill);
    /* Tiles of K whose copies are in flight while one is multiplied. */
    double inflight = r->async_copy ? fmax(1.0, r->stages - 1.0) : (r->stages >= 1 ? 1.0 : 0.5);

    double tiles_m = ceil_div(m, bm), tiles_n = ceil_div(n, bn), tiles = tiles_m * tiles_n;
    double phases = ceil_div(k, bk);
    sched s;
    schedule(d, r, o.blocks_per_sm, tiles, phases, &s);

    /* A block's end: its outputs stored (or added); a cluster's slices
     * exchange their partial tiles through distributed shared memory. */
    double epilogue = warps * outputs / 4.0 * K.store_issue / 4.0;
    if (r->combine == KGI_COMBINE_CLUSTER)
        epilogue += K.cluster_sync + 4.0 * bm * bn / K.dsmem_bytes_clock;
    double hide = fmin(1.0, s.resident * warps / 4.0 / K.hide_warps);
    double throughput = (s.sm_phases * phase + s.sm_blocks * epilogue) / hide;
    double chain = s.chain_phases * fmax(phase, K.latency / inflight) + s.chain_blocks * (K.block_fill + epilogue);
    double t = fmax(throughput, chain) / (d->clock_ghz * 1e9);

    /* Memory. */
    double bw = d->bandwidth_gbs > 0 ? d->bandwidth_gbs * 1e9 : 1e12;
    double l2_bytes = 4.0 * s.all_phases * (bm + bn) * bk;
    t = fmax(t, l2_bytes / (K.l2_bw_multiple * bw));
    double ab = 4.0 * ((double)m * k + (double)k * n), dram = ab;
    if (d->l2_bytes > 0 && ab > d->l2_bytes / 2) {
        double wave = fmin((double)o.blocks_per_sm * d->sm_count, tiles), rows, cols;
        if (r->raster > 1) {
            rows = fmin(r->raster, tiles_m);
            cols = fmin(tiles_n, ceil_div(wave, rows));
        } else {
            cols = fmin(wave, tiles_n);
            rows = fmin(tiles_m, ceil_div(wave, tiles_n));
        }
        dram = fmax(ab, fmin(l2_bytes, tiles / wave * 4.0 * (rows * bm + cols * bn) * k));
    }
    t = fmax(t, (dram + 4.0 * m * n) / bw);

    /* Passes and combining. */
    if (r->combine == KGI_COMBINE_ATOMIC) {
        double adds = r->persistent ? 2.0 * s.spread_tiles * bm * bn : (double)r->kslices * m * n;
        t += adds * K.atomic_ns * 1e-9 / r->atomic_width;
    }
    if (r->beta_pass == KGI_BETA_ALL)
        t += K.launch_us * 1e-6 + 8.0 * m * n / bw;
    else if (r->beta_pass == KGI_BETA_SPREAD && s.spread_tiles > 0)
        t += K.launch_us * 1e-6 + 8.0 * s.spread_tiles * bm * bn / bw;
    if (r->pack > 0) {
        /* Rows along K (op n for A, t for B) or along M, N; packed when not a
         * multiple of `pack` floats: read and written once. */
        double a_row = r->layout[0] == 't' ? m : k, b_row = r->layout[1] == 't' ? k : n, bytes = 0;
        if (fmod(a_row, r->pack) != 0)
            bytes += 8.0 * m * k;
        if (fmod(b_row, r->pack) != 0)
            bytes += 8.0 * k * n;
        if (bytes > 0)
            t += K.launch_us * 1e-6 + bytes / bw;
    }
    return t * 1e3;
}

int kgi_model_admits(const kgi_res *r, int m, int n, int k)
{
    if (r->pack > 0)
        return 1;
    int lda = r->layout[0] == 't' ? m : k, ldb = r->layout[1] == 't' ? k : n;
    int ca = r->copy_a > 1 ? r->copy_a : 1, cb = r->copy_b > 1 ? r->copy_b : 1;
    return lda % ca == 0 && ldb % cb == 0;
}

typedef struct ranked {
    double t;
    int i;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

void kgi_model_rank(const kgi_space *sp, const kgi_model_dev *d, int m, int n, int k, int *order, double *pred)
{
    ranked *r = malloc((size_t)(sp->n + 1) * sizeof *r);
    for (int i = 0; i < sp->n; i++) {
        const kgi_res *res = &sp->cand[i].res;
        double t = kgi_model_admits(res, m, n, k) ? kgi_model_time_ms(d, res, 0, m, n, k) : INFINITY;
        if (pred)
            pred[i] = t;
        if (r)
            r[i] = (ranked){t, i};
        else
            order[i] = i;
    }
    if (!r)
        return;
    qsort(r, (size_t)sp->n, sizeof *r, cmp_ranked);
    for (int i = 0; i < sp->n; i++)
        order[i] = r[i].i;
    free(r);
}
