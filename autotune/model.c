/*
 * model.c -- the analytic time model (see model.h).
 *
 * Per thread and phase of the K loop (tile_k deep) a register-tiled kernel
 * issues F = tile_k * outputs FMAs, S ~ tile_k * 2 sqrt(outputs) shared-memory
 * loads (a row of A and a column of B for the outer product), G = (loads_a +
 * loads_b) / threads global loads with as many shared stores, and two
 * barriers. An SM issues 4 warp instructions per clock, of which at most 4
 * FMAs (128 lanes) and 1 shared-memory access (32 banks x 4 bytes), so a
 * warp-phase costs max(F / 4, S, (F + S + 2G + barrier) / 4) clocks; latency
 * is hidden only with enough warps times independent FMAs in flight; and a
 * grid that does not fill whole waves of resident blocks wastes the rest of
 * its last wave. Memory: each block reads its A and B panels (from L2, taken
 * as 3x DRAM bandwidth) and the matrices cross DRAM at least once. The time
 * is the larger of compute and memory, over the wave efficiency.
 */
#include <math.h>
#include <stdlib.h>

#include "autotune/model.h"

void kgi_model_dev_arch(const kgi_limits *lim, kgi_model_dev *d)
{
    d->lim = *lim;
    d->sm_count = lim->ref_sm_count;
    d->clock_ghz = lim->ref_clock_ghz;
    d->bandwidth_gbs = lim->ref_bandwidth_gbs;
}

void kgi_model_dev_device(const kgi_limits *lim, const kg_device_info *info, kgi_model_dev *d)
{
    d->lim = *lim;
    d->sm_count = info->sm_count > 0 ? info->sm_count : lim->ref_sm_count;
    d->clock_ghz = info->sm_clock_khz > 0 ? info->sm_clock_khz / 1e6 : lim->ref_clock_ghz;
    d->bandwidth_gbs = info->peak_bandwidth_gbs > 0 ? info->peak_bandwidth_gbs : lim->ref_bandwidth_gbs;
}

static double ceil_div(double a, double b) { return ceil(a / b); }

double kgi_model_time_ms(const kgi_model_dev *d, const kgi_res *r, int regs, int m, int n, int k)
{
    if (r->threads <= 0 || r->tile_m <= 0 || r->tile_n <= 0 || r->tile_k <= 0 || d->sm_count <= 0 ||
        d->clock_ghz <= 0)
        return INFINITY;
    double outputs = r->outputs > 0 ? r->outputs : (double)r->tile_m * r->tile_n / r->threads;
    if (regs <= 0)
        regs = (int)fmin(255.0, outputs + 2.0 * ceil(sqrt(outputs)) + 28.0);
    kgi_occupancy o;
    kgi_occupancy_calc(&d->lim, r->threads, regs, (size_t)r->smem, &o);
    if (o.blocks_per_sm <= 0)
        return INFINITY;

    double blocks = ceil_div(m, r->tile_m) * ceil_div(n, r->tile_n);
    double phases = ceil_div(k, r->tile_k);
    double slots = (double)o.blocks_per_sm * d->sm_count;
    double waves = ceil(blocks / slots);
    double wave_eff = blocks / (waves * slots);
    /* Warps actually resident per SM: fewer when the grid is small. */
    double resident = fmin((double)o.blocks_per_sm, ceil(blocks / d->sm_count)) * o.warps_per_block;
    double hide = fmin(1.0, resident * fmin(outputs, 16.0) / 64.0);

    double F = r->tile_k * outputs;
    double S = r->tile_k * 2.0 * sqrt(outputs);
    double G = (r->loads_a + r->loads_b) / r->threads;
    double barrier = 32.0;
    double per_warp_phase = fmax(fmax(F / 4.0, S), (F + S + 2.0 * G + barrier) / 4.0);
    double warp_phases = blocks * o.warps_per_block * phases;
    double clocks = warp_phases * per_warp_phase / d->sm_count / hide;
    double t_compute = clocks / (d->clock_ghz * 1e9);

    double mnk = (double)m * n * k;
    double l2_bytes = 4.0 * (mnk / r->tile_n + mnk / r->tile_m) + 4.0 * m * n;
    double dram_bytes = 4.0 * ((double)m * k + (double)k * n + 2.0 * m * n);
    double bw = d->bandwidth_gbs > 0 ? d->bandwidth_gbs * 1e9 : 1e12;
    double t_mem = fmax(l2_bytes / (3.0 * bw), dram_bytes / bw);

    return fmax(t_compute, t_mem) / wave_eff * 1e3;
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

void kgi_model_rank(const kgi_space *sp, const kgi_model_dev *d, int m, int n, int k, int *order)
{
    ranked *r = malloc((size_t)(sp->n + 1) * sizeof *r);
    if (!r) {
        for (int i = 0; i < sp->n; i++)
            order[i] = i;
        return;
    }
    for (int i = 0; i < sp->n; i++) {
        r[i].t = kgi_model_time_ms(d, &sp->cand[i].res, 0, m, n, k);
        r[i].i = i;
    }
    qsort(r, (size_t)sp->n, sizeof *r, cmp_ranked);
    for (int i = 0; i < sp->n; i++)
        order[i] = r[i].i;
    free(r);
}
