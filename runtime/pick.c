/*
 * pick.c -- the catalogue's model: its kernels ranked for a call (see
 * catalogue.h; the reasoning in catalogue/README.md).
 *
 * The wave model counts what the GPU's slots do: T = ceil(M/TILE_M)
 * ceil(N/TILE_N) tiles, U = T KSLICES units, S = SMs x BPS slots; a grid of
 * units runs in ceil(U/S) waves (a persistent, stream-K grid spreads them
 * evenly: U/S, which may be under 1), each wave a tile of ceil(K/KSLICES)
 * steps: work = waves x TILE_M x TILE_N x ceil(K/KSLICES). A kernel's time
 * in a layout is a linear model in that work and a few more features
 * (launch, waves, L2 and DRAM traffic, split-K's and stream-K's partial
 * sums, C's single stores, units per slot or the busiest SM's work; see
 * features()), fitted to its measured times there, twice (with that
 * feature and without), a tiled kernel's fit weighted toward the shapes
 * nearest the call; each fitted model's error at the nearest measured
 * shapes is carried to the call's shape, shrunk toward the model, and the
 * prediction is the geometric mean of the two. A measured shape is its
 * measured time. No prediction is under what streaming A, B and C at the
 * fastest rate measured takes, nor under the host's cost of the kernel's
 * launches (kgi_launch_floor()).
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
    return kgi_wave_work(kk->tile_m, kk->tile_n, kgi_kernel_slices(kk, k), kk->persistent, kk->bps, m, n, k, sms,
                         waves);
}

static int by_time(const void *a, const void *b)
{
    const kgi_pick *x = a, *y = b;
    if (x->predicted_us != y->predicted_us)
        return x->predicted_us < y->predicted_us ? -1 : 1;
    if (x->model_us != y->model_us) /* both at a floor (streaming, launches): the model's own order */
        return x->model_us < y->model_us ? -1 : 1;
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

/*
 * The host's floor under a prediction: each kernel a call launches costs
 * the host at least the catalogue's fastest call of one launch (launch_us),
 * and at shapes this small the host's launches, not the GPU, set the time.
 * A kernel with a beta pass launches two; where the model (fitted to times
 * that move by up to 1.4x between processes at such shapes: passes of one
 * measurement, catalogue/README.md) puts it level with a kernel of one
 * launch, the second launch decides. 0 where the catalogue does not say
 * (version 1) or measured no kernel of one launch.
 */
double kgi_launch_floor(const kgi_catalogue *c, const kgi_cat_kernel *kk)
{
    return kk->launches > 0 ? kk->launches * c->launch_us : 0;
}

/*
 * The time model fitted per kernel and layout: t = c . x, with x
 *   1                 a launch and its fixed costs
 *   waves             per wave of units (prologue, epilogue, the tail)
 *   work              the wave model's work (tile elements x K steps, per wave)
 *   L2 traffic        A read once per column of tiles, B once per row of tiles
 *   split-K partials  M x N x KSLICES additions into C (KSLICES > 1)
 *   stream-K pieces   a persistent grid whose last wave is partial cuts each
 *                     of its tiles into about slots / tiles pieces, but no
 *                     more than the tile has steps of K (PERSISTENT's depth),
 *                     summed one after another; STREAMK_SINGLE_ADDS times as
 *                     many where C's rows are not 16-byte vectors, whose
 *                     pieces are added one float at a time instead of four
 *   C's single stores M x N where C's rows are not 16-byte vectors, for a
 *                     matmul_warp kernel (below)
 *   DRAM traffic      A, B and C once each, for a kernel that streams
 *                     them (streams_operands(), below)
 *   units per slot    for a matmul_skinny kernel: the waves without
 *                     rounding up: the blocks of a partial last wave,
 *                     short or bound by memory, run at more bandwidth
 *                     each, and the time is closer to this than to the
 *                     rounded waves (matmul_skinny's 4-column kernel at
 *                     9162x1x563: 1.09 of a wave, 7.0 us where its fit
 *                     from rounded waves alone said 11).
 *   (x[8])            For a tiled kernel instead the busiest SM's work:
 *                     ceil(U / SMs) blocks x TILE_M x TILE_N x ceil(K /
 *                     KSLICES). The blocks resident on one SM share its
 *                     arithmetic, so where they are bound by it the time
 *                     follows the blocks per SM, which one wave of BPS
 *                     slots per SM does not see: catalogue kernel 15
 *                     (64x64, 6 blocks per SM) at 2848x944x272 nn is one
 *                     wave of 5.1 blocks per SM; three of its four
 *                     nearest measured shapes were one wave of 0.7-2.5,
 *                     and it was predicted at 40.9 us and ran 47.9
 *                     (docs/performance.md row 120). A persistent grid's
 *                     units spread evenly and the waves already count
 *                     them (U / S): there it stays U / S, which fit()
 *                     leaves out as a copy of the waves
 *   stream-K additions (x[9]) the elements the pieces add into C in all:
 *                     a tile's area per piece, about slots + P pieces for
 *                     the P = tiles mod slots tiles of the partial wave (a
 *                     worker's range of K steps ends at most once inside
 *                     each tile), no more than those tiles' steps of K;
 *                     STREAMK_SINGLE_ADDS times as many where C's rows are
 *                     not 16-byte vectors. The pieces feature is the depth
 *                     of one tile's additions, this their traffic: with
 *                     few tiles the depth grows as 1 / P while the traffic
 *                     stays near slots tiles, and with the depth alone the
 *                     4-byte twin of catalogue kernel 10 (32 x 32, not
 *                     kept) was predicted at 0.62 of its time at 26-50
 *                     tiles (docs/performance.md row 99). A kernel with
 *                     sk = 1 also shares the full wave before the partial
 *                     one where there is one (templates/lib/warp/
 *                     schedule.lua): both features count the partial
 *                     wave's tiles only, so there about slots tiles of
 *                     additions go uncounted
 * (millions of elements), coefficients >= 0, by least squares on the
 * relative error over the kernel's measured shapes in the layout. Two
 * models are fitted, with x[8] (units per slot, or the busiest SM's work)
 * and without (the rounded waves alone), and the prediction is the
 * geometric mean of the two, each calibrated at the nearest shapes
 * (calibrated()): at a large grid the two wave counts are nearly
 * collinear, and one fit with both moved near-ties between tiled
 * kernels by chance (8192x8192x128 nt: 9 % slower than the choice of
 * either model alone). The last two features and the
 * pair of models (docs/performance.md row 89) took the leave-one-out
 * regret from 1.0244 to 1.0216 (at the 592 training pairs under 20 us
 * 1.0292 to 1.0241, the others unchanged); the stream-K additions took it
 * from 1.0230 to 1.0220 (row 99), and the busiest SM's work in place of
 * a tiled kernel's units per slot from 1.0180 to 1.0167 (row 120).
 */
#define NF 10
#define UNITS_PER_SLOT 8 /* the feature the second model leaves out (x[8]) */
/* Where C's rows are not whole 16-byte vectors (ldc or the pointer), a
 * stream-K kernel adds its pieces into C one float at a time: 4 additions
 * where a kernel with 16-byte reductions makes one. Measured (H200,
 * docs/performance.md row 70): at 45 (shape, layout) pairs of held-out
 * shapes where this changes the choice, 0.82x the time on geometric mean. */
#define STREAMK_SINGLE_ADDS 4.0

/* Where C's rows are not 16-byte vectors, a kernel that stores C four
 * floats at a time stores single floats instead, each store a quarter as
 * wide across a warp: every matmul_warp kernel (tn = 4 in all of them,
 * whose epilogue tests C's alignment at run time), whatever its copies of
 * A and B. Without the feature a 16-byte kernel's fit carried none of that
 * cost: it meets an odd C only where the layout leaves C's rows odd and A's
 * and B's whole (nt and tt at N not a multiple of 4), too few of its
 * nearest shapes; the model chose kernel 20 at nt 24835x319x16, 2.6x the
 * time of the kernel it chooses with it (docs/performance.md row 74). A
 * kernel with single-float copies meets an odd C wherever its A's or B's
 * rows are odd too, and without the feature its fit put the cost of C's
 * stores, 5 % of kernel 9's time at 1999^3 (row 82), on its other
 * features: a 64x64 single-float kernel, 1.4-1.6x faster than any other at
 * products such as 29744x64x30, was chosen at 8-byte C rows where it runs
 * 2.1x slower (row 77), and leave-one-out kept it out of the catalogue. In
 * a layout where a kernel never met an odd C the feature is 0 at every
 * shape and leaves its fit. matmul_skinny and matmul kernels store C
 * otherwise and do not get it. */
static int single_c_stores(const kgi_cat_kernel *kk, int c_class)
{
    return c_class != 4 && strcmp(kk->tmpl, "matmul_warp") == 0;
}

/* A kernel whose time is its DRAM traffic (the DRAM feature): a
 * matmul_skinny kernel streams its large operand once. A tiled kernel's
 * traffic is already its L2 feature, and DRAM traffic beside it, nearly
 * collinear at its larger shapes, made its leave-one-out regret at the
 * training pairs of 20-200 us 1.0199 in a single fit where it is 1.0182
 * without (docs/performance.md row 89). */
static int streams_operands(const kgi_cat_kernel *kk) { return strcmp(kk->tmpl, "matmul_skinny") == 0; }

static void features(const kgi_cat_kernel *kk, int m, int n, int k, int sms, int c_class, double *x, double *waves)
{
    double tiles = ceil((double)m / kk->tile_m) * ceil((double)n / kk->tile_n);
    double sm = sms > 0 ? sms : 1, slots = sm * (kk->bps > 0 ? kk->bps : 1);
    int slices = kgi_kernel_slices(kk, k);
    double work = kgi_wave_work(kk->tile_m, kk->tile_n, slices, kk->persistent, kk->bps, m, n, k, sms, waves);
    double partial = fmod(tiles, slots), steps = ceil((double)k / (kk->persistent > 0 ? kk->persistent : 1));
    x[0] = 1;
    x[1] = *waves;
    x[2] = work * 1e-6;
    x[3] = ((double)m * k * ceil((double)n / kk->tile_n) + (double)k * n * ceil((double)m / kk->tile_m)) * 1e-6;
    x[4] = slices > 1 ? (double)m * n * slices * 1e-6 : 0;
    x[5] = kk->persistent && partial > 0 ? fmin(ceil(slots / partial), steps) * kk->tile_m * kk->tile_n * 1e-6 : 0;
    x[6] = single_c_stores(kk, c_class) ? (double)m * n * 1e-6 : 0;
    x[7] = streams_operands(kk) ? ((double)m * k + (double)k * n + (double)m * n) * 1e-6 : 0;
    if (streams_operands(kk) || kk->persistent)
        x[8] = tiles * slices / slots;
    else /* the busiest SM's blocks, each a tile of ceil(K / KSLICES) steps */
        x[8] = ceil(tiles * slices / sm) * kk->tile_m * kk->tile_n * ceil((double)k / slices) * 1e-6;
    x[9] = kk->persistent && partial > 0 ? fmin(slots + partial, partial * steps) * kk->tile_m * kk->tile_n * 1e-6 : 0;
    if (c_class != 4) {
        x[5] *= STREAMK_SINGLE_ADDS;
        x[9] *= STREAMK_SINGLE_ADDS;
    }
}

/* Least squares of sum(w_i ((c.x_i - t_i) / t_i)^2) over n points with
 * c >= 0 (w_i = 1 where w is NULL), i.e. min |A c - b| with rows
 * A_i = sqrt(w_i) x_i / t_i and b_i = sqrt(w_i), by QR (modified
 * Gram-Schmidt; the features' sizes differ by many orders, which normal
 * equations would not survive). A feature whose coefficient comes out
 * negative leaves, the most negative first, and the rest is fitted again;
 * one that is 0 at every point, or a multiple of those before it, stays
 * out. 0, or -1 when nothing fits. */
static int fit(const double (*x)[NF], const double *t, const double *w, int n, double *co)
{
    int act[NF], na = NF;
    for (int i = 0; i < NF; i++)
        act[i] = i;
    double *q = malloc(((size_t)n * NF + 1) * sizeof *q), *b = malloc(((size_t)n + 1) * sizeof *b);
    int rc = -1;
    while (q && b && na > 0) {
        double r[NF][NF] = {{0}}, qb[NF], c[NF];
        int kept[NF], nk = 0;
        for (int p = 0; p < n; p++)
            b[p] = w ? sqrt(w[p]) : 1;
        for (int i = 0; i < na; i++) {
            double *v = q + (size_t)nk * n, norm0 = 0, norm = 0;
            for (int p = 0; p < n; p++) {
                v[p] = x[p][act[i]] / t[p] * b[p];
                norm0 += v[p] * v[p];
            }
            for (int j = 0; j < nk; j++) {
                const double *u = q + (size_t)j * n;
                double d = 0;
                for (int p = 0; p < n; p++)
                    d += u[p] * v[p];
                r[j][nk] = d;
                for (int p = 0; p < n; p++)
                    v[p] -= d * u[p];
            }
            for (int p = 0; p < n; p++)
                norm += v[p] * v[p];
            if (!(norm > 1e-20 * norm0) || norm0 == 0)
                continue; /* nothing new in this feature */
            norm = sqrt(norm);
            for (int p = 0; p < n; p++)
                v[p] /= norm;
            r[nk][nk] = norm;
            kept[nk++] = act[i];
        }
        if (nk == 0)
            break;
        for (int j = 0; j < nk; j++) {
            const double *u = q + (size_t)j * n;
            double d = 0;
            for (int p = 0; p < n; p++)
                d += u[p] * b[p];
            qb[j] = d;
        }
        for (int j = nk - 1; j >= 0; j--) {
            double s = qb[j];
            for (int l = j + 1; l < nk; l++)
                s -= r[j][l] * c[l];
            c[j] = s / r[j][j];
        }
        int worst = -1;
        for (int j = 0; j < nk; j++)
            if (c[j] < 0 && (worst < 0 || c[j] < c[worst]))
                worst = j;
        if (worst < 0) {
            memset(co, 0, NF * sizeof *co);
            for (int j = 0; j < nk; j++)
                co[kept[j]] = c[j];
            rc = 0;
            break;
        }
        na = 0;
        for (int j = 0; j < nk; j++)
            if (j != worst)
                act[na++] = kept[j];
    }
    free(q);
    free(b);
    return rc;
}

static double dot(const double *co, const double *x)
{
    double s = 0;
    for (int i = 0; i < NF; i++)
        s += co[i] * x[i];
    return s;
}

/* How much the residuals of the nearest measured shapes count against the
 * fitted model's own prediction: their weights are 1/d^2 (d in log2 units),
 * the model's this much. */
#define RESIDUAL_PRIOR 0.25
/* A measured shape whose rows of A, B or C take other vectors than the
 * call's (16-byte, 8-byte or single loads and stores, vector or single
 * atomics) ran other code: each matrix whose alignment class differs adds
 * this to its squared distance (log2 units: as far as a factor of 4 in
 * one of M, N, K), so that a prediction leans on shapes aligned like the
 * call. Chosen by the leave-one-out regret over the training shapes
 * (catalogue/README.md). */
#define ALIGN_DISTANCE 4.0
/* Fewer measured shapes than this: no fit, the wave model's efficiency.
 * Twice the six features most kernels' fits have: 1, waves, work, L2
 * traffic, x[8], and DRAM traffic (matmul_skinny) or C's single
 * stores (matmul_warp, split-K's partial sums beside them). A stream-K
 * kernel has eight (its pieces and their additions); its fit, from 12
 * shapes up too, leaves out a feature that is 0 at every shape or a
 * multiple of those before it, and one whose coefficient comes out
 * negative (fit()). */
#define MIN_FIT_POINTS 12
/* A tiled kernel's fit weights each measured shape (1 + d)^-NEAR_POWER, d
 * its squared distance from the call (log2 units and ALIGN_DISTANCE, as
 * for the nearest shapes): a linear model holds for such a kernel only
 * locally (how well its copies, L2 traffic and per-tile costs overlap its
 * arithmetic changes across the shape space), and the unweighted fit, led
 * by the many shapes far from the call, was 20-30 % high for the 64x64
 * kernel 41 at a large output over a short K (3881x3549x131: kernel 22
 * chosen, 1.17x its time; docs/performance.md row 104; with the weights
 * 15 % high, and chosen in tn and tt). A matmul_skinny
 * kernel's time is its traffic everywhere, and weighting its fit too made
 * thin products slower (row 107: 8x4096x8192 nt 1.10x the time). Measured
 * (row 108): leave-one-out 1.0254 -> 1.0226 (power 1, 2, 4: 1.0228,
 * 1.0234, 1.0228; d / 2, d / 4, 2 d in place of d: 1.0228, 1.0225,
 * 1.0226); at 60 products drawn for it (H200), the 26 (layout, shape)
 * pairs whose choice it changed took 0.870x the time. */
#define NEAR_POWER 3.0

/* The model of the features in `keep` (a bit per feature; the others left
 * out) fitted to a kernel's npts measured shapes (features xs, times ts,
 * weights ws, or NULL: fit()) and evaluated at x, times its error at the
 * nearest shapes (near[0..nn), at distances dist), shrunk toward the
 * model: the prediction, or 0 where
 * no fit is usable. xw: room for npts rows (the features kept, where some
 * are left out). */
static double calibrated(const double (*xs)[NF], const double *ts, const double *ws, int npts, const double *x,
                         const int *near, const double *dist, int nn, unsigned keep, double (*xw)[NF])
{
    /* a fit needs more shapes than features to say anything between them */
    if (npts < MIN_FIT_POINTS)
        return 0;
    double xk[NF], co[NF];
    const double(*xf)[NF] = xs;
    for (int f = 0; f < NF; f++)
        xk[f] = keep >> f & 1 ? x[f] : 0;
    if (keep != (1u << NF) - 1) {
        for (int q = 0; q < npts; q++)
            for (int f = 0; f < NF; f++)
                xw[q][f] = keep >> f & 1 ? xs[q][f] : 0;
        xf = (const double(*)[NF])xw;
    }
    if (fit(xf, ts, ws, npts, co) != 0)
        return 0;
    double model = dot(co, xk);
    if (!(model > 0))
        return 0;
    /* the nearest shapes' residuals (log measured / fitted), shrunk toward the model */
    double sum = 0, wsum = RESIDUAL_PRIOR;
    for (int i = 0; i < nn; i++) {
        double fitted = dot(co, xf[near[i]]);
        if (fitted > 0) {
            sum += log(ts[near[i]] / fitted) / dist[i];
            wsum += 1 / dist[i];
        }
    }
    return model * exp(sum / wsum);
}

int kgi_catalogue_rank(const kgi_catalogue *c, int layout, int m, int n, int k, int align, int sms, int skip,
                       kgi_pick *out, int max)
{
    kgi_pick *picks = calloc((size_t)c->nkernels + 1, sizeof *picks);
    double(*xs)[NF] = malloc(((size_t)c->nrows + 1) * sizeof *xs);
    double(*xw)[NF] = malloc(((size_t)c->nrows + 1) * sizeof *xw);
    double *ts = malloc(((size_t)c->nrows + 1) * sizeof *ts);
    double *ws = malloc(((size_t)c->nrows + 1) * sizeof *ws);
    int *rs = malloc(((size_t)c->nrows + 1) * sizeof *rs);
    if (!picks || !xs || !xw || !ts || !ws || !rs) {
        free(picks);
        free(xs);
        free(xw);
        free(ts);
        free(ws);
        free(rs);
        return -1;
    }
    double lm = log2(m), ln = log2(n), lk = log2(k);
    int np = 0;
    for (int j = 0; j < c->nkernels; j++) {
        const kgi_cat_kernel *kk = &c->kernels[j];
        if (!kgi_catalogue_admits(kk, layout, align))
            continue;
        /* the kernel's measured shapes in the layout; the nearest, by insertion */
        int near[KGI_PICK_NEAR], nn = 0, npts = 0;
        double dist[KGI_PICK_NEAR], w;
        for (int r = 0; r < c->nrows; r++) {
            const kgi_cat_row *row = &c->rows[r];
            if (r == skip || row->layout != layout || kgi_catalogue_time(c, r, j) <= 0)
                continue;
            int ra = kgi_natural_align(row->layout, row->m, row->n, row->k);
            features(kk, row->m, row->n, row->k, c->sms, KGI_ALIGN_C(ra), xs[npts], &w);
            ts[npts] = kgi_catalogue_time(c, r, j);
            rs[npts++] = r;
            double d = sq(log2(row->m) - lm) + sq(log2(row->n) - ln) + sq(log2(row->k) - lk) +
                       ALIGN_DISTANCE * ((KGI_ALIGN_A(ra) != KGI_ALIGN_A(align)) + (KGI_ALIGN_B(ra) != KGI_ALIGN_B(align)) +
                                         (KGI_ALIGN_C(ra) != KGI_ALIGN_C(align)));
            ws[npts - 1] = pow(1 + d, -NEAR_POWER);
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
                near[at] = npts - 1;
            }
        }
        if (nn == 0)
            continue;
        kgi_pick *p = &picks[np++];
        p->kernel = j;
        p->nnear = nn;
        for (int i = 0; i < nn; i++)
            p->near[i] = rs[near[i]];
        p->exact = dist[0] == 0;
        double x[NF];
        features(kk, m, n, k, sms, KGI_ALIGN_C(align), x, &p->waves);
        if (p->exact) {
            /* measured here: the measurement, moved by the wave model to this GPU's SM count */
            p->nnear = 1;
            double ignore;
            p->predicted_us = ts[near[0]] * kgi_wave_work(kk->tile_m, kk->tile_n, kgi_kernel_slices(kk, k), kk->persistent,
                                                          kk->bps, m, n, k, sms, &ignore) /
                              kgi_wave_work(kk->tile_m, kk->tile_n, kgi_kernel_slices(kk, k), kk->persistent, kk->bps, m, n, k,
                                            c->sms, &ignore);
            p->model_us = p->predicted_us;
            continue;
        }
        const double(*xc)[NF] = (const double(*)[NF])xs;
        unsigned all = (1u << NF) - 1, no_units = all & ~(1u << UNITS_PER_SLOT);
        const double *wk = streams_operands(kk) ? NULL : ws;
        double with = calibrated(xc, ts, wk, npts, x, near, dist, nn, all, xw),
               rounded = calibrated(xc, ts, wk, npts, x, near, dist, nn, no_units, xw);
        double model = with > 0 && rounded > 0 ? sqrt(with * rounded) : with > 0 ? with : rounded;
        if (!(model > 0)) {
            /* no usable fit (too few shapes): the wave model's efficiency at the nearest shapes */
            double sum = 0, wsum = 0;
            for (int i = 0; i < nn; i++) {
                const kgi_cat_row *row = &c->rows[rs[near[i]]];
                double e = ts[near[i]] / work_of(kk, row->m, row->n, row->k, c->sms, NULL);
                sum += log(e) / dist[i];
                wsum += 1 / dist[i];
            }
            p->predicted_us = exp(sum / wsum) * work_of(kk, m, n, k, sms, &p->waves);
            /* the work of a small shape is no measure of a launch: no faster than the fastest measured */
            double fastest = ts[0];
            for (int i = 1; i < npts; i++)
                fastest = ts[i] < fastest ? ts[i] : fastest;
            if (p->predicted_us < fastest)
                p->predicted_us = fastest;
            goto floor;
        }
        p->predicted_us = model;
    floor:
        p->model_us = p->predicted_us;
        /* no kernel streams faster than the catalogue's fastest measurement: A and B read once, C written
         * once, or read and written by each slice of split-K */
        if (c->bytes_per_us > 0) {
            int s = kgi_kernel_slices(kk, k);
            double bytes = 4.0 * ((double)m * k + (double)k * n + (double)m * n * (s > 1 ? 2.0 * s : 1.0));
            if (p->predicted_us < bytes / c->bytes_per_us)
                p->predicted_us = bytes / c->bytes_per_us;
        }
        if (p->predicted_us < kgi_launch_floor(c, kk))
            p->predicted_us = kgi_launch_floor(c, kk);
    }
    free(xs);
    free(xw);
    free(ts);
    free(ws);
    free(rs);
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
        if (!kgi_catalogue_admits(kk, layout, align))
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
        p->model_us = p->predicted_us;
        if (p->predicted_us < kgi_launch_floor(c, kk))
            p->predicted_us = kgi_launch_floor(c, kk);
    }
    free(e);
    return finish(picks, np, out, max);
}
