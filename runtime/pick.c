/*
 * pick.c -- the catalogue's model: its kernels ranked for a call (see
 * catalogue.h; the reasoning in catalogue/README.md).
 *
 * A kernel's time at a shape is its work under the wave model times an
 * efficiency (microseconds per unit of work). The wave model counts what
 * the GPU's slots do: T = ceil(M/TILE_M) ceil(N/TILE_N) tiles, U = T
 * KSLICES units, S = SMs x BPS slots; a grid of units runs in ceil(U/S)
 * waves (a persistent, stream-K grid spreads them evenly: U/S, which may be
 * under 1), each wave a tile of ceil(K/KSLICES) steps:
 *   work = waves x TILE_M x TILE_N x ceil(K/KSLICES).
 * The efficiency comes from the measurements: at each measured shape, e =
 * t / work (with the catalogue's SM count), and at the call's shape the
 * weighted mean of log e over the kernel's nearest measured shapes in the
 * layout (weights 1/d^2, d the distance in log2 M, log2 N, log2 K; a
 * measured shape is its own value), then t = e x work (the call's SM
 * count). So what the measurements say about a kernel carries over to
 * nearby shapes, while the wave model moves it where the tile count
 * crosses a wave boundary.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"

double kgi_wave_work(int tile_m, int tile_n, int kslices, int persistent, int bps, int m, int n, int k, int sms,
                     double *waves)
{
    double tiles = ceil((double)m / tile_m) * ceil((double)n / tile_n);
    double units = tiles * kslices, slots = (double)(sms > 0 ? sms : 1) * (bps > 0 ? bps : 1);
    double w = persistent ? units / slots : ceil(units / slots);
    if (waves)
        *waves = w;
    return w * tile_m * tile_n * ceil((double)k / kslices);
}

static double work_of(const kgi_cat_kernel *kk, int m, int n, int k, int sms, double *waves)
{
    return kgi_wave_work(kk->tile_m, kk->tile_n, kk->kslices, kk->persistent, kk->bps, m, n, k, sms, waves);
}

static int by_time(const void *a, const void *b)
{
    const kgi_pick *x = a, *y = b;
    if (x->predicted_us != y->predicted_us)
        return x->predicted_us < y->predicted_us ? -1 : 1;
    return x->kernel - y->kernel;
}

/* Sorts picks[0..n) and copies the first `max` to out; returns n. */
static int finish(kgi_pick *picks, int n, kgi_pick *out, int max)
{
    qsort(picks, (size_t)n, sizeof *picks, by_time);
    if (out && max > 0)
        memcpy(out, picks, (size_t)(n < max ? n : max) * sizeof *out);
    free(picks);
    return n;
}

static double sq(double x) { return x * x; }

int kgi_catalogue_rank(const kgi_catalogue *c, int layout, int m, int n, int k, int align, int sms, int skip,
                       kgi_pick *out, int max)
{
    kgi_pick *picks = calloc((size_t)c->nkernels + 1, sizeof *picks);
    if (!picks)
        return -1;
    double lm = log2(m), ln = log2(n), lk = log2(k);
    int np = 0;
    for (int j = 0; j < c->nkernels; j++) {
        const kgi_cat_kernel *kk = &c->kernels[j];
        if (kk->needs > align)
            continue;
        /* the nearest measured shapes in the layout, by insertion */
        int near[KGI_PICK_NEAR], nn = 0;
        double dist[KGI_PICK_NEAR];
        for (int r = 0; r < c->nrows; r++) {
            const kgi_cat_row *row = &c->rows[r];
            if (r == skip || row->layout != layout || kgi_catalogue_time(c, r, j) <= 0)
                continue;
            double d = sq(log2(row->m) - lm) + sq(log2(row->n) - ln) + sq(log2(row->k) - lk);
            int at = nn < KGI_PICK_NEAR ? nn++ : KGI_PICK_NEAR;
            while (at > 0 && dist[at - 1] > d) {
                if (at < KGI_PICK_NEAR) {
                    dist[at] = dist[at - 1];
                    near[at] = near[at - 1];
                }
                at--;
            }
            if (at < KGI_PICK_NEAR) {
                dist[at] = d;
                near[at] = r;
            }
        }
        if (nn == 0)
            continue;
        kgi_pick *p = &picks[np++];
        p->kernel = j;
        p->nnear = nn;
        memcpy(p->near, near, sizeof near);
        p->exact = dist[0] == 0;
        double sum = 0, wsum = 0;
        for (int i = 0; i < (p->exact ? 1 : nn); i++) {
            const kgi_cat_row *row = &c->rows[near[i]];
            double e = kgi_catalogue_time(c, near[i], j) / work_of(kk, row->m, row->n, row->k, c->sms, NULL);
            double w = p->exact ? 1 : 1 / dist[i];
            sum += w * log(e);
            wsum += w;
        }
        if (p->exact)
            p->nnear = 1;
        p->predicted_us = exp(sum / wsum) * work_of(kk, m, n, k, sms, &p->waves);
    }
    return finish(picks, np, out, max);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int kgi_catalogue_rank_median(const kgi_catalogue *c, int layout, int m, int n, int k, int align, int sms,
                              kgi_pick *out, int max)
{
    kgi_pick *picks = calloc((size_t)c->nkernels + 1, sizeof *picks);
    double *e = calloc((size_t)c->nrows + 1, sizeof *e);
    if (!picks || !e) {
        free(picks);
        free(e);
        return -1;
    }
    int np = 0;
    for (int j = 0; j < c->nkernels; j++) {
        const kgi_cat_kernel *kk = &c->kernels[j];
        if (kk->needs > align)
            continue;
        int ne = 0;
        for (int pass = 0; pass < 2 && ne == 0; pass++) /* the layout's times, else all */
            for (int r = 0; r < c->nrows; r++) {
                const kgi_cat_row *row = &c->rows[r];
                double t = kgi_catalogue_time(c, r, j);
                if (t > 0 && (pass == 1 || row->layout == layout))
                    e[ne++] = t / work_of(kk, row->m, row->n, row->k, c->sms, NULL);
            }
        if (ne == 0)
            continue;
        qsort(e, (size_t)ne, sizeof *e, by_value);
        double med = ne % 2 ? e[ne / 2] : sqrt(e[ne / 2 - 1] * e[ne / 2]);
        kgi_pick *p = &picks[np++];
        p->kernel = j;
        p->predicted_us = med * work_of(kk, m, n, k, sms, &p->waves);
    }
    free(e);
    return finish(picks, np, out, max);
}
