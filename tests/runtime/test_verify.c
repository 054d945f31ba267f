/*
 * test_verify.c -- the float64 reference and the error measure every kernel
 * is judged by (runtime/verify.c). Needs no GPU.
 *
 * The reference is compared with a naive triple loop over explicitly
 * transposed operands in every layout (small shapes, and one large enough
 * to take the multi-threaded path); the error measure must accept rounding,
 * reject a wrong element, an unwritten (poisoned) element, a lost product
 * at K = 4096, a NaN that vanished or one that appeared. And how many
 * launches one timing sample holds (kgi_loop_count, runtime/timing.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "testutil.h"

static const char *const layouts[] = {"nn", "nt", "tn", "tt"};

/* op(X)[r][c] of a stored matrix, the way the layout letter says. */
static double op(const float *x, int ld, int trans, int r, int c)
{
    return trans ? x[(size_t)c * ld + r] : x[(size_t)r * ld + c];
}

static void naive(const char *layout, int m, int n, int k, double alpha, const float *a, int lda, const float *b,
                  int ldb, double beta, const float *c, int ldc, double *out)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += op(a, lda, layout[0] == 't', i, p) * op(b, ldb, layout[1] == 't', p, j);
            out[(size_t)i * n + j] = alpha * s + (beta != 0 ? beta * c[(size_t)i * ldc + j] : 0);
        }
}

static void test_random(void)
{
    enum { N = 100000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    kgi_fill_random(x, N, 42);
    kgi_fill_random(y, N, 42);
    CHECK(memcmp(x, y, N * sizeof *x) == 0); /* deterministic */
    kgi_fill_random(y, N, 43);
    CHECK(memcmp(x, y, N * sizeof *x) != 0); /* the seed matters */
    int bad = 0, neg = 0;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        bad += !(x[i] > -1.0f && x[i] < 1.0f) || x[i] == 0.0f;
        neg += x[i] < 0;
        sum += x[i];
    }
    CHECK_MSG(bad == 0, "%d values outside (-1, 1) or zero", bad);
    CHECK_MSG(neg > N * 0.48 && neg < N * 0.52, "%d of %d negative", neg, N);
    CHECK_MSG(fabs(sum / N) < 0.01, "mean %g", sum / N);
    free(x);
    free(y);
}

/* kgi_ref_gemm against the naive loop, with padded leading dimensions. */
static void test_reference(int m, int n, int k, int pad)
{
    for (int l = 0; l < 4; l++) {
        const char *lay = layouts[l];
        int at = lay[0] == 't', bt = lay[1] == 't';
        int lda = (at ? m : k) + pad, ldb = (bt ? k : n) + pad, ldc = n + pad;
        size_t na = (size_t)(at ? k : m) * lda, nb = (size_t)(bt ? n : k) * ldb, nc = (size_t)m * ldc;
        float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4);
        double *r1 = malloc((size_t)m * n * 8), *r2 = malloc((size_t)m * n * 8);
        kgi_fill_random(a, na, 1 + l);
        kgi_fill_random(b, nb, 100 + l);
        kgi_fill_random(c, nc, 200 + l);
        kgi_ref_gemm(lay, m, n, k, 0.75, a, lda, b, ldb, -1.25, c, ldc, r1);
        naive(lay, m, n, k, 0.75, a, lda, b, ldb, -1.25, c, ldc, r2);
        double worst = 0;
        for (size_t i = 0; i < (size_t)m * n; i++)
            worst = fmax(worst, fabs(r1[i] - r2[i]));
        CHECK_MSG(worst < 1e-9, "%s %dx%dx%d: reference differs from the naive loop by %g", lay, m, n, k, worst);
        /* beta == 0: C is not read, so NaN in it must not matter */
        for (size_t i = 0; i < nc; i++)
            c[i] = NAN;
        kgi_ref_gemm(lay, m, n, k, 2.0, a, lda, b, ldb, 0.0, c, ldc, r1);
        int nans = 0;
        for (size_t i = 0; i < (size_t)m * n; i++)
            nans += isnan(r1[i]);
        CHECK_MSG(nans == 0, "%s: beta == 0 read C", lay);
        free(a);
        free(b);
        free(c);
        free(r1);
        free(r2);
    }
}

/* One product dropped from a sum of K: the size of a typical indexing bug. */
static void test_error_measure(void)
{
    const int m = 24, n = 20, k = 4096, lda = k, ldb = n, ldc = n;
    float *a = malloc((size_t)m * k * 4), *b = malloc((size_t)k * n * 4), *c = malloc((size_t)m * n * 4);
    float *out = malloc((size_t)m * n * 4);
    double *ref = malloc((size_t)m * n * 8), *mag = malloc((size_t)m * n * 8);
    kgi_fill_random(a, (size_t)m * k, 7);
    kgi_fill_random(b, (size_t)k * n, 8);
    kgi_fill_random(c, (size_t)m * n, 9);
    double alpha = 0.75, beta = -1.25, tol = kgi_gemm_tolerance(k);
    kgi_ref_gemm("nn", m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ref);

    /* an fp32 kernel: sequential fp32 accumulation, the worst plain order */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int p = 0; p < k; p++)
                s = fmaf(a[(size_t)i * lda + p], b[(size_t)p * ldb + j], s);
            out[i * ldc + j] = (float)alpha * s + (float)beta * c[i * ldc + j];
        }
    double e = kgi_gemm_error("nn", m, n, k, alpha, a, lda, b, ldb, beta, c, out, ldc, ref);
    CHECK_MSG(e <= tol, "sequential fp32 sum: error %g over tolerance %g", e, tol);
    CHECK_MSG(e < tol / 8, "sequential fp32 sum: error %g is not well inside the tolerance %g", e, tol);
    CHECK(kgi_gemm_magnitude("nn", m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, mag) == KG_OK);
    CHECK(kgi_gemm_error_mag(m, n, out, ldc, ref, mag) == e);

    /* the same result missing one product of average size (|ab| is 1/4 on
     * average for these inputs) in one element */
    int lost = 0;
    while (lost < k && fabsf(a[(size_t)5 * lda + lost] * b[(size_t)lost * ldb + 7]) < 0.25f)
        lost++;
    CHECK(lost < k);
    float saved = out[5 * ldc + 7];
    out[5 * ldc + 7] -= (float)alpha * a[(size_t)5 * lda + lost] * b[(size_t)lost * ldb + 7];
    e = kgi_gemm_error_mag(m, n, out, ldc, ref, mag);
    CHECK_MSG(e > tol, "one lost product at K=%d: error %g not over tolerance %g", k, e, tol);
    out[5 * ldc + 7] = saved;

    /* unwritten (poisoned) element, Inf, and a NaN that appeared */
    out[3] = NAN;
    CHECK(isinf(kgi_gemm_error_mag(m, n, out, ldc, ref, mag)));
    out[3] = INFINITY;
    CHECK(isinf(kgi_gemm_error_mag(m, n, out, ldc, ref, mag)));
    out[3] = saved = (float)ref[3];
    CHECK(kgi_gemm_error_mag(m, n, out, ldc, ref, mag) <= tol);

    /* NaN in A: its row of the reference is NaN and must stay NaN */
    a[(size_t)2 * lda + 17] = NAN;
    kgi_ref_gemm("nn", m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ref);
    CHECK(isnan(ref[2 * n + 0]) && isnan(ref[2 * n + n - 1]) && !isnan(ref[3 * n]));
    CHECK(isinf(kgi_gemm_error_mag(m, n, out, ldc, ref, mag))); /* the NaN vanished */
    for (int j = 0; j < n; j++)
        out[2 * ldc + j] = NAN;
    CHECK(kgi_gemm_error_mag(m, n, out, ldc, ref, mag) <= tol);  /* it propagated */

    /* tolerance: grows with K, never below a few roundings */
    CHECK(kgi_gemm_tolerance(1) > 4 * ldexp(1, -24) && kgi_gemm_tolerance(1) < 1e-6);
    CHECK(kgi_gemm_tolerance(64) < kgi_gemm_tolerance(4096));
    CHECK(kgi_gemm_tolerance(4096) < 1.0 / 4096); /* a lost product at K = 4096 fails */
    free(a);
    free(b);
    free(c);
    free(out);
    free(ref);
    free(mag);
}

/* ceil(sample / per launch), 1 to 1000; no time per launch: the most */
static void test_loop_count(void)
{
    CHECK(kgi_loop_count(1.0, 0.003) == 334);
    CHECK(kgi_loop_count(2.0, 0.5) == 4);
    CHECK(kgi_loop_count(2.0, 0.3) == 7);
    CHECK(kgi_loop_count(1.0, 5.0) == 1);
    CHECK(kgi_loop_count(1.0, 1e-9) == 1000);
    CHECK(kgi_loop_count(1.0, 0.0) == 1000);
    CHECK(kgi_loop_count(1.0, -1.0) == 1000);
}

int main(void)
{
    test_loop_count();
    test_random();
    test_reference(1, 1, 1, 0);
    test_reference(7, 5, 3, 2);
    test_reference(33, 17, 65, 1);
    test_reference(1, 40, 9, 0);
    test_reference(40, 1, 9, 3);
    test_reference(256, 160, 128, 3); /* 5.2M products: the threaded path */
    test_error_measure();
    TEST_DONE();
}
