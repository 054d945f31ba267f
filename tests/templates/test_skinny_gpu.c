/*
 * test_skinny_gpu.c -- matmul_skinny's kernels on a GPU against the float64
 * reference (label gpu; exits 77, shown as skipped, without a GPU).
 *
 * Every configuration of the template's tuning space, in every layout, and
 * a few outside it (other slices of K, cs=4, pipe=1 and 2), runs on every small
 * extent S in {1, 2, 3, 7, 8, 15, 16} up to its ms, times K in {1, 2, 7, 33,
 * 1000, 4097} (one value of k, a partial vector, a tail past the unrolled
 * loads, several slices of K with a ragged last one), with a large side
 * that is prime and odd (1031 for short K, 257 for long: several blocks, the
 * last one ragged, a vector that straddles the end of a row). Leading
 * dimensions are larger than the minimum: odd for 4-byte loads and for the
 * small operand (read by floats at any vec); for the large operand's 16-byte
 * loads the next multiple of 4 plus 4. Each shape runs with alpha = 1.25,
 * beta = -0.5 (C random) and with alpha = -0.75, beta = 0 on C poisoned with
 * NaN; inputs are fresh random numbers, their padding NaN (a kernel that
 * reads it fails), C's padding a sentinel that must survive. NaN never
 * passes. A shape one wider than ms must be refused (KG_ERR_SHAPE).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu_problem.h"
#include "runtime/internal.h"
#include "skinny_space.h"
#include "testutil.h"

#define NAN_BITS 0x7fc00000u
#define SENTINEL 0x7fc0dea1u

static const char *const layouts[] = {"nn", "nt", "tn", "tt"};
static const int smalls[] = {1, 2, 3, 7, 8, 15, 16};
static const int ks[] = {1, 2, 7, 33, 1000, 4097};

static void fill_bits(float *x, size_t n, unsigned bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, sizeof bits);
}

/* Runs `kern` on one shape with leading dimensions lda, ldb, ldc and
 * compares with the float64 reference; *error as kgi_gemm_error. */
static kg_status verify(kg_context *ctx, const kg_kernel *kern, const char *layout, int m, int n, int k, int lda,
                        int ldb, int ldc, float alpha, float beta, unsigned long long seed, double *error)
{
    int at = layout[0] == 't', bt = layout[1] == 't';
    int arows = at ? k : m, acols = at ? m : k, brows = bt ? n : k, bcols = bt ? k : n;
    size_t na = (size_t)arows * lda, nb = (size_t)brows * ldb, nc = (size_t)m * ldc;
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hc = malloc(nc * 4), *out = malloc(nc * 4);
    double *ref = malloc((size_t)m * n * sizeof *ref);
    void *da = NULL, *db = NULL, *dc = NULL;
    kg_status st = KG_ERR_NOMEM;
    *error = INFINITY;
    if (!ha || !hb || !hc || !out || !ref)
        goto done;
    kgi_fill_random(ha, na, seed);
    kgi_fill_random(hb, nb, seed ^ 0x5851f42d4c957f2dULL);
    kgi_fill_random(hc, nc, seed ^ 0x14057b7ef767814fULL);
    for (int r = 0; r < arows; r++)
        fill_bits(ha + (size_t)r * lda + acols, (size_t)(lda - acols), NAN_BITS);
    for (int r = 0; r < brows; r++)
        fill_bits(hb + (size_t)r * ldb + bcols, (size_t)(ldb - bcols), NAN_BITS);
    for (int r = 0; r < m; r++) {
        if (beta == 0.0f)
            fill_bits(hc + (size_t)r * ldc, (size_t)n, NAN_BITS);
        fill_bits(hc + (size_t)r * ldc + n, (size_t)(ldc - n), SENTINEL);
    }
    if ((st = kgi_dev_alloc(ctx, na * 4, &da)) != KG_OK || (st = kgi_dev_alloc(ctx, nb * 4, &db)) != KG_OK ||
        (st = kgi_dev_alloc(ctx, nc * 4, &dc)) != KG_OK || (st = kgi_dev_upload(ctx, da, ha, na * 4)) != KG_OK ||
        (st = kgi_dev_upload(ctx, db, hb, nb * 4)) != KG_OK || (st = kgi_dev_upload(ctx, dc, hc, nc * 4)) != KG_OK)
        goto done;
    kg_gemm g = {m, n, k, alpha, beta, da, lda, db, ldb, dc, ldc};
    if ((st = kg_kernel_launch(ctx, kern, &g, NULL)) != KG_OK || (st = kgi_dev_sync(ctx)) != KG_OK ||
        (st = kgi_dev_download(ctx, out, dc, nc * 4)) != KG_OK)
        goto done;
    for (int r = 0; r < m; r++)
        if (memcmp(out + (size_t)r * ldc + n, hc + (size_t)r * ldc + n, (size_t)(ldc - n) * 4) != 0) {
            st = kgi_fail(ctx, KG_ERR_WRONG, "wrote outside C (row %d, past column %d)", r, n);
            goto done;
        }
    kgi_ref_gemm(layout, m, n, k, alpha, ha, lda, hb, ldb, beta, hc, ldc, ref);
    *error = kgi_gemm_error(layout, m, n, k, alpha, ha, lda, hb, ldb, beta, hc, out, ldc, ref);
    for (size_t i = 0; i < (size_t)m && *error == *error; i++)
        for (int j = 0; j < n; j++)
            if (isnan(out[i * (size_t)ldc + (size_t)j]))
                *error = NAN;
    st = *error <= kgi_gemm_tolerance(k) ? KG_OK : kgi_fail(ctx, KG_ERR_WRONG, "error %.3g", *error);
done:
    kgi_dev_free(ctx, da);
    kgi_dev_free(ctx, db);
    kgi_dev_free(ctx, dc);
    free(ha);
    free(hb);
    free(hc);
    free(out);
    free(ref);
    return st;
}

/* A leading dimension larger than `cols`: odd for 4-byte loads, else the
 * next multiple of `mult` plus `mult`. */
static int ld_for(int cols, int mult)
{
    if (mult <= 1)
        return cols % 2 ? cols + 2 : cols + 1;
    return (cols + mult - 1) / mult * mult + mult;
}

/* Every shape of the suite for one configuration; returns checks run, -1
 * after a fault (the context is poisoned). */
static int run_config(kg_context *ctx, const char *config, int *failed)
{
    kg_kernel *kern;
    kg_status st = kg_kernel_get(ctx, "matmul_skinny", config, &kern);
    CHECK_MSG(st == KG_OK, "%s: %s", config, kg_last_error(ctx));
    if (st != KG_OK)
        return 0;
    const char *layout = strstr(config, "layout=") + 7;
    int small_m = strstr(config, "small=m") != NULL, ms = atoi(strstr(config, "ms=") + 3);
    int vec = atoi(strstr(config, "vec=") + 4);
    int at = layout[0] == 't', bt = layout[1] == 't', checks = 0;
    for (size_t si = 0; si < sizeof smalls / sizeof *smalls; si++) {
        int s = smalls[si];
        if (s > ms)
            break;
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
            int k = ks[ki], big = k >= 1000 ? 257 : 1031;
            int m = small_m ? s : big, n = small_m ? big : s;
            /* the small operand is read by floats: its rows may be ragged at any vec */
            int lda = ld_for(at ? m : k, small_m ? 1 : vec), ldb = ld_for(bt ? k : n, small_m ? vec : 1);
            int ldc = ld_for(n, 1);
            for (int pass = 0; pass < 2; pass++) {
                float alpha = pass ? -0.75f : 1.25f, beta = pass ? 0.0f : -0.5f;
                double err;
                unsigned long long seed = 1000003ULL * (unsigned long long)(si * 16 + ki) + (unsigned)pass;
                st = verify(ctx, kern, layout, m, n, k, lda, ldb, ldc, alpha, beta, seed, &err);
                CHECK_MSG(st == KG_OK, "%s M=%d N=%d K=%d lda=%d ldb=%d ldc=%d alpha %g beta %g: error %.3g: %s",
                          config, m, n, k, lda, ldb, ldc, alpha, beta, err, kg_last_error(ctx));
                if (st != KG_OK)
                    (*failed)++;
                if (st == KG_ERR_DRIVER)
                    return -1;
                checks += st == KG_OK;
            }
        }
    }
    /* one wider than ms: refused, naming the small side */
    int m = small_m ? ms + 1 : 1031, n = small_m ? 1031 : ms + 1, k = 64;
    double err;
    st = verify(ctx, kern, layout, m, n, k, ld_for(at ? m : k, vec), ld_for(bt ? k : n, vec), ld_for(n, 1), 1.0f,
                0.0f, 7, &err);
    CHECK_MSG(st == KG_ERR_SHAPE && strstr(kg_last_error(ctx), "exceeds"), "%s M=%d N=%d: %s, not refused: %s",
              config, m, n, kg_strerror(st), kg_last_error(ctx));
    return checks;
}

/* configurations outside the space, beside it */
static const char *const extra[] = {
    "small=m ms=1 vec=1 kc=2048", "small=n ms=16 vec=1 kc=256", "small=m ms=16 vec=1 kc=128",
    "small=n ms=2 vec=1 kc=4096", "small=m ms=8 vec=4 kc=128", "small=n ms=4 vec=4 kc=2048",
    "small=m ms=2 vec=1 kc=1024", "small=n ms=8 vec=1 kc=0 cs=4",
    "small=m ms=16 vec=1 kc=256 pipe=1", "small=n ms=1 vec=1 kc=0 pipe=1",
    "small=m ms=4 vec=1 kc=128 pipe=1", "small=n ms=16 vec=1 kc=2048 pipe=1",
    "small=m ms=8 vec=4 kc=1024", "small=n ms=2 vec=4 kc=1024 pipe=1", "small=m ms=16 vec=4 kc=256 pipe=1",
    "small=n ms=8 vec=4 kc=0 pipe=1",
    "small=m ms=1 vec=4 kc=256 pipe=2", "small=n ms=2 vec=4 kc=4096 pipe=2", "small=m ms=4 vec=1 kc=256 pipe=2",
    "small=n ms=16 vec=4 kc=128 pipe=2", "small=m ms=8 vec=1 kc=512 pipe=2", "small=n ms=1 vec=1 kc=2048 pipe=2",
};
#define NEXTRA (int)(sizeof extra / sizeof *extra)

typedef struct space_list {
    char (*space)[256];
    int nspace;
} space_list;

/* Configuration c in layout l, in the order main gets them: the space's, then extra[]. */
static void config_text(char *cfg, size_t len, const space_list *sl, int c, int l)
{
    if (c < sl->nspace)
        snprintf(cfg, len, "%.255s layout=%s", sl->space[c], layouts[l]);
    else
        snprintf(cfg, len, "%s layout=%s", extra[c - sl->nspace], layouts[l]);
}

/* Kernel i of the precompile: configuration i % (space + extra) in layout i / (space + extra). */
static int config_i(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud)
{
    const space_list *sl = ud;
    int per = sl->nspace + NEXTRA;
    snprintf(tmpl, tlen, "matmul_skinny");
    config_text(cfg, clen, sl, i % per, i / per);
    return 1;
}

int main(void)
{
    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    if (st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE) {
        printf("%s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        TEST_SKIP("no GPU: matmul_skinny's kernels cannot run here");
    }
    CHECK_MSG(st == KG_OK, "kg_context_open: %s", kg_last_error(ctx));
    if (st != KG_OK) {
        kg_context_close(ctx);
        TEST_DONE();
    }
    static char space[SKINNY_MAX_CONFIGS][256];
    int nspace = skinny_space(space, SKINNY_MAX_CONFIGS);
    CHECK_MSG(nspace > 0, "matmul_skinny declares no space");
    space_list sl = {space, nspace};
    /* NVRTC one kernel at a time is about half the run: compiled first, in parallel, into the disk cache (where on) */
    const char *why;
    if (kgi_arch_limits(kg_arch(ctx)) && kgi_cache_dir(ctx, &why))
        gp_precompile(kg_arch(ctx), 4 * (nspace + NEXTRA), config_i, &sl);
    int checks = 0, configs = 0, failed = 0;
    for (int l = 0; l < 4; l++) {
        for (int c = 0; c < nspace + NEXTRA; c++) {
            char config[512];
            config_text(config, sizeof config, &sl, c, l);
            int n = run_config(ctx, config, &failed);
            if (n < 0) {
                kg_context_close(ctx);
                TEST_DONE();
            }
            checks += n, configs++;
        }
    }
    printf("matmul_skinny: %d configurations, %d checks against the float64 reference, %d wrong\n", configs, checks,
           failed);
    kg_context_close(ctx);
    TEST_DONE();
}
