/*
 * verify.c -- the float64 reference every kernel is checked against.
 *
 * The reference is computed in double precision from the same fp32 inputs,
 * so it is exact to about 1e-16 and any difference is the kernel's. The
 * error of an element is |c - ref| divided by that element's magnitude
 * bound |alpha| sum_k |a_ik b_kj| + |beta c_ij|: the scale that rounding
 * errors of fp32 accumulation are proportional to, so the measure is
 * meaningful where ref itself is near zero (cancellation), and independent
 * of the inputs' scale.
 *
 * The pass bound, kgi_gemm_tolerance(K): summing K products in fp32 in any
 * order has an error of at most about K u times the magnitude bound
 * (u = 2^-24, the unit roundoff; Higham, "Accuracy and Stability of
 * Numerical Algorithms", 3.1), plus a few roundings for alpha, beta and the
 * update. That worst case is reached only when every rounding goes the same
 * way; with the random inputs of [-1, 1) used here the errors behave like a
 * random walk, about sqrt(K) u. The bound is the worst case up to K = 1024
 * and 32 sqrt(K) u beyond -- still far above what a correct kernel shows
 * (measured on an H200: under 6 u), yet low enough that one product of
 * average size missing from a sum of K = 4096 (an error of about 1/K) fails.
 *
 * The references of large shapes are computed on every core (pthreads).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

void kgi_fill_random(float *x, size_t n, unsigned long long seed)
{
    unsigned long long s = seed;
    for (size_t i = 0; i < n; i++) {
        /* splitmix64 */
        unsigned long long z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        /* (2m + 1 - 2^24) / 2^24 for a 24-bit m: odd numerator, so never 0,
         * and exact in fp32; uniform over (-1, 1) */
        long m = (long)(z >> 40);
        x[i] = (float)(2 * m + 1 - (1L << 24)) / 16777216.0f;
    }
}

double kgi_gemm_tolerance(int k)
{
    double t = (k > 0 ? k : 1) + 4.0;
    return ldexp(fmin(t, 32.0 * sqrt(t)) + 4.0, -24);
}

/* ------------------------------------------------------------ reference */

typedef struct job {
    int m, n, k;
    int a_trans;
    const float *a;
    int lda;
    const double *bp;        /* op(B), K x N row-major, in double (|x| when abs) */
    int abs;                 /* sum |a||b| instead of a b */
    double *out;             /* M x N */
    int row0, row1;
} job;

/* Rows [row0, row1) of op(A) x op(B): an axpy per k, contiguous in N, for
 * a block of rows at a time so that each row of op(B) is read from memory
 * once per block rather than once per row. */
static void *rows(void *arg)
{
    enum { RB = 16 };
    const job *j = arg;
    for (int i0 = j->row0; i0 < j->row1; i0 += RB) {
        int i1 = i0 + RB < j->row1 ? i0 + RB : j->row1;
        for (int i = i0; i < i1; i++)
            for (int c = 0; c < j->n; c++)
                j->out[(size_t)i * j->n + c] = 0.0;
        for (int kk = 0; kk < j->k; kk++) {
            const double *b = j->bp + (size_t)kk * j->n;
            for (int i = i0; i < i1; i++) {
                double av = j->a_trans ? j->a[(size_t)kk * j->lda + i] : j->a[(size_t)i * j->lda + kk];
                if (j->abs)
                    av = fabs(av);
                double *o = j->out + (size_t)i * j->n;
                for (int c = 0; c < j->n; c++)
                    o[c] += av * b[c];
            }
        }
    }
    return NULL;
}

/* out = op(A) op(B) (or |op(A)| |op(B)|) for an M x N row-major `out`,
 * split by rows over the machine's cores when the work is large. */
static int product(const char *layout, int m, int n, int k, const float *a, int lda, const float *b, int ldb, int abs,
                   double *out)
{
    double *bp = malloc((size_t)k * n * sizeof *bp);
    if (!bp)
        return -1;
    int bt = layout[1] == 't';
    for (int kk = 0; kk < k; kk++)
        for (int c = 0; c < n; c++) {
            double v = bt ? b[(size_t)c * ldb + kk] : b[(size_t)kk * ldb + c];
            bp[(size_t)kk * n + c] = abs ? fabs(v) : v;
        }
    job base = {m, n, k, layout[0] == 't', a, lda, bp, abs, out, 0, m};
    double work = (double)m * n * k;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = work < (1 << 22) || cores < 2 ? 1 : (int)(cores > 64 ? 64 : cores);
    if (nt > m)
        nt = m;
    job jobs[64];
    pthread_t tid[64];
    int joined[64] = {0};
    for (int t = 0; t < nt; t++) {
        jobs[t] = base;
        jobs[t].row0 = (int)((long long)m * t / nt);
        jobs[t].row1 = (int)((long long)m * (t + 1) / nt);
    }
    for (int t = 1; t < nt; t++) {
        if (pthread_create(&tid[t], NULL, rows, &jobs[t]) == 0)
            joined[t] = 1;
        else
            rows(&jobs[t]); /* no thread to be had: do its rows here */
    }
    rows(&jobs[0]);
    for (int t = 1; t < nt; t++)
        if (joined[t])
            pthread_join(tid[t], NULL);
    free(bp);
    return 0;
}

void kgi_ref_gemm(const char *layout, int m, int n, int k, double alpha, const float *a, int lda, const float *b,
                  int ldb, double beta, const float *c_in, int ldc, double *out)
{
    if (product(layout, m, n, k, a, lda, b, ldb, 0, out) != 0) {
        for (size_t i = 0; i < (size_t)m * n; i++)
            out[i] = NAN; /* no memory: a reference nothing can match */
        return;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double *o = &out[(size_t)i * n + j];
            *o = alpha * *o + (beta != 0.0 ? beta * (double)c_in[(size_t)i * ldc + j] : 0.0);
        }
}

kg_status kgi_gemm_magnitude(const char *layout, int m, int n, int k, double alpha, const float *a, int lda,
                             const float *b, int ldb, double beta, const float *c_in, int ldc, double *mag)
{
    if (product(layout, m, n, k, a, lda, b, ldb, 1, mag) != 0)
        return KG_ERR_NOMEM;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double *o = &mag[(size_t)i * n + j];
            *o = fabs(alpha) * *o + (beta != 0.0 ? fabs(beta * (double)c_in[(size_t)i * ldc + j]) : 0.0);
        }
    return KG_OK;
}

double kgi_gemm_error_mag(int m, int n, const float *c, int ldc, const double *ref, const double *mag)
{
    double worst = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double r = ref[(size_t)i * n + j], x = c[(size_t)i * ldc + j], e;
            if (isnan(r))
                e = isnan(x) ? 0.0 : INFINITY;        /* NaN in the inputs must come out */
            else if (isinf(r))
                e = x == r ? 0.0 : INFINITY;
            else if (!isfinite(x))
                e = INFINITY;                         /* unwritten (poison) or overflow */
            else {
                double bound = mag[(size_t)i * n + j], d = fabs(x - r);
                e = bound > 0.0 ? d / bound : (d == 0.0 ? 0.0 : INFINITY);
            }
            if (!(e <= worst))
                worst = e;
        }
    return worst;
}

double kgi_gemm_error(const char *layout, int m, int n, int k, double alpha, const float *a, int lda, const float *b,
                      int ldb, double beta, const float *c_in, const float *c, int ldc, const double *ref)
{
    double *mag = malloc((size_t)m * n * sizeof *mag);
    if (!mag || kgi_gemm_magnitude(layout, m, n, k, alpha, a, lda, b, ldb, beta, c_in, ldc, mag) != KG_OK) {
        free(mag);
        return INFINITY;
    }
    double e = kgi_gemm_error_mag(m, n, c, ldc, ref, mag);
    free(mag);
    return e;
}

/* ------------------------------------------------------------ a kernel's check */

#define POISON 0x7fc00000u    /* quiet NaN: what an unwritten output keeps */
#define SENTINEL 0x7fc0dea1u  /* another NaN, in padding nobody may write */

static void fill_bits(float *x, size_t n, unsigned bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, sizeof bits);
}

kg_status kgi_verify_kernel(kg_context *ctx, const kg_kernel *kern, int m, int n, int k, float alpha, float beta,
                            int ld_pad, unsigned long long seed, double *error)
{
    return kgi_verify_kernel_at(ctx, kern, m, n, k, alpha, beta, ld_pad, 0, seed, error);
}

kg_status kgi_verify_kernel_at(kg_context *ctx, const kg_kernel *kern, int m, int n, int k, float alpha, float beta,
                               int ld_pad, int c_shift, unsigned long long seed, double *error)
{
    *error = INFINITY;
    if (!ctx || !kern || m < 1 || n < 1 || k < 1 || ld_pad < 0 || c_shift < 0 || c_shift > 3)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG,
                              "kgi_verify_kernel: bad arguments (M=%d N=%d K=%d ld_pad=%d c_shift=%d)", m, n, k,
                              ld_pad, c_shift)
                   : KG_ERR_INVALID_ARG;
    const char *layout = kern->geo.layout[0] ? kern->geo.layout : "nn";
    int at = layout[0] == 't', bt = layout[1] == 't';
    int arows = at ? k : m, acols = at ? m : k, brows = bt ? n : k, bcols = bt ? k : n;
    int lda = acols + ld_pad, ldb = bcols + ld_pad, ldc = n + ld_pad;
    /* C is the last nc of the cs floats of hc and dc (device allocations are 256-byte aligned) */
    size_t na = (size_t)arows * lda, nb = (size_t)brows * ldb, nc = (size_t)m * ldc, cs = nc + (size_t)c_shift;
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hcs = malloc(cs * 4), *outs = malloc(cs * 4);
    float *hc = hcs ? hcs + c_shift : NULL, *out = outs ? outs + c_shift : NULL;
    double *ref = malloc((size_t)m * n * sizeof *ref);
    void *da = NULL, *db = NULL, *dcs = NULL;
    kg_status st = KG_OK;
    if (!ha || !hb || !hcs || !outs || !ref) {
        st = kgi_fail(ctx, KG_ERR_NOMEM, "out of host memory for a %dx%dx%d check", m, n, k);
        goto done;
    }
    /* Inputs random, their padding NaN (a kernel that reads it fails); C
     * random when beta != 0, else poisoned; C's padding a sentinel that must
     * survive the run bit for bit. */
    kgi_fill_random(ha, na, seed);
    kgi_fill_random(hb, nb, seed ^ 0x5851f42d4c957f2dULL);
    kgi_fill_random(hc, nc, seed ^ 0x14057b7ef767814fULL);
    for (int r = 0; r < arows; r++)
        fill_bits(ha + (size_t)r * lda + acols, (size_t)ld_pad, POISON);
    for (int r = 0; r < brows; r++)
        fill_bits(hb + (size_t)r * ldb + bcols, (size_t)ld_pad, POISON);
    for (int r = 0; r < m; r++) {
        if (beta == 0.0f)
            fill_bits(hc + (size_t)r * ldc, (size_t)n, POISON);
        fill_bits(hc + (size_t)r * ldc + n, (size_t)ld_pad, SENTINEL);
    }
    fill_bits(hcs, (size_t)c_shift, SENTINEL);
    if ((st = kgi_dev_alloc(ctx, na * 4, &da)) != KG_OK || (st = kgi_dev_alloc(ctx, nb * 4, &db)) != KG_OK ||
        (st = kgi_dev_alloc(ctx, cs * 4, &dcs)) != KG_OK || (st = kgi_dev_upload(ctx, da, ha, na * 4)) != KG_OK ||
        (st = kgi_dev_upload(ctx, db, hb, nb * 4)) != KG_OK || (st = kgi_dev_upload(ctx, dcs, hcs, cs * 4)) != KG_OK)
        goto done;
    kg_gemm g = {m, n, k, alpha, beta, da, lda, db, ldb, (float *)dcs + c_shift, ldc};
    if ((st = kg_kernel_launch(ctx, kern, &g, NULL)) != KG_OK || (st = kgi_dev_sync(ctx)) != KG_OK ||
        (st = kgi_dev_download(ctx, outs, dcs, cs * 4)) != KG_OK)
        goto done;
    if (memcmp(outs, hcs, (size_t)c_shift * 4) != 0) {
        st = kgi_fail(ctx, KG_ERR_WRONG, "%s wrote before C (C placed %d floats past a 16-byte boundary)",
                      kern->info.entry, c_shift);
        goto done;
    }
    for (int r = 0; r < m; r++)
        if (ld_pad && memcmp(out + (size_t)r * ldc + n, hc + (size_t)r * ldc + n, (size_t)ld_pad * 4) != 0) {
            st = kgi_fail(ctx, KG_ERR_WRONG, "%s wrote outside C's %dx%d region (row %d, past column %d)",
                          kern->info.entry, m, n, r, n);
            goto done;
        }
    kgi_ref_gemm(layout, m, n, k, alpha, ha, lda, hb, ldb, beta, hc, ldc, ref);
    *error = kgi_gemm_error(layout, m, n, k, alpha, ha, lda, hb, ldb, beta, hc, out, ldc, ref);
    double tol = kgi_gemm_tolerance(k);
    if (!(*error <= tol)) {
        /* name the first element that is off, for the report */
        int bi = 0, bj = 0;
        for (int i = 0, found = 0; i < m && !found; i++)
            for (int j = 0; j < n && !found; j++) {
                double r = ref[(size_t)i * n + j], x = out[(size_t)i * ldc + j];
                if (!isfinite(x) || fabs(x - r) > tol * (fabs(r) + 1.0))
                    bi = i, bj = j, found = 1;
            }
        st = kgi_fail(ctx, KG_ERR_WRONG,
                      "%s on %s M=%d N=%d K=%d: error %.3g exceeds the tolerance %.3g (C[%d][%d] = %.9g, reference %.9g)",
                      kern->info.entry, layout, m, n, k, *error, tol, bi, bj, out[(size_t)bi * ldc + bj],
                      ref[(size_t)bi * n + bj]);
    }
done:
    kgi_dev_free(ctx, da);
    kgi_dev_free(ctx, db);
    kgi_dev_free(ctx, dcs);
    free(ha);
    free(hb);
    free(hcs);
    free(outs);
    free(ref);
    return st;
}
