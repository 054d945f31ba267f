/*
 * test_gpu.c -- kernels on a GPU against the float64 reference (label gpu;
 * exits 77, shown as skipped, where there is no GPU).
 *
 * Every configuration below, in every layout, runs on every shape of the
 * suite: 1x1x1, M=1, N=1, K=1, primes, tile sizes plus and minus one, and
 * thousand-sized shapes, with alpha = 0.75 and beta = -1.25 (C random, so an
 * element the kernel does not write keeps a wrong value) and again with
 * beta = 0 on a C poisoned with NaN. Leading dimensions are padded; the
 * padding of A and B is NaN (a kernel that reads it fails) and that of C a
 * sentinel that must survive bit for bit. Kernels without bound checks must
 * refuse the shapes that are not multiples of their tile. NaN placed in A
 * and B must come out in its row and column. Then kg_matmul (defaults,
 * alignment fallbacks, its choice cache), a template with a `pre` kernel,
 * beta passes launched to overlap the kernel before them, the driver's
 * limits, and the timing helper.
 *
 * argv[1]: the directory of the test templates (prebeta.lua).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_problem.h"
#include "runtime/driver.h"
#include "runtime/internal.h"
#include "testutil.h"

static const char *const configs[] = {
    "bm=16 bn=16 bk=16 tm=1 tn=1 pad=0",
    "bm=16 bn=16 bk=16 tm=1 tn=1 pad=1",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=1",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=0 bounds=0",
    "bm=1 bn=1 bk=1 tm=1 tn=1 pad=0",
    "bm=8 bn=8 bk=8 tm=1 tn=1 pad=1",
    "bm=64 bn=64 bk=16 tm=4 tn=4",
    "bm=64 bn=64 bk=8 tm=8 tn=8 vec=4",
    "bm=128 bn=128 bk=8 tm=8 tn=8 vec=4 pad=4",
    "bm=128 bn=128 bk=16 tm=8 tn=8 vec=4 pad=4",
    "bm=128 bn=64 bk=16 tm=8 tn=4 vec=2",
    "bm=64 bn=128 bk=16 tm=4 tn=8 vec=2",
    "bm=128 bn=128 bk=32 tm=8 tn=8 vec=4",
    "bm=256 bn=128 bk=16 tm=16 tn=8 vec=4",
    "bm=32 bn=32 bk=32 tm=2 tn=2 pad=2",
    "bm=48 bn=48 bk=12 tm=3 tn=3 pad=3",
    "bm=96 bn=96 bk=24 tm=6 tn=6 pad=5",
    "bm=80 bn=40 bk=20 tm=5 tn=5 pad=7 vec=4",
    "bm=70 bn=70 bk=7 tm=7 tn=7 pad=1",
    "bm=33 bn=31 bk=5 tm=3 tn=1 pad=0",
    "bm=16 bn=64 bk=16 tm=1 tn=4 vec=4 pad=8",
    "bm=64 bn=16 bk=16 tm=4 tn=1 vec=4 pad=8",
    "bm=11 bn=13 bk=3 tm=11 tn=13 pad=0",
    "bm=8 bn=8 bk=128 tm=2 tn=2 pad=4 vec=2",
    "bm=256 bn=128 bk=32 tm=16 tn=8 vec=4 pad=1",  /* 50 KB: dynamic shared memory */
    "bm=128 bn=128 bk=64 tm=8 tn=8 vec=4 pad=4",   /* 68 KB */
    "bm=64 bn=64 bk=16 tm=4 tn=4 bounds=0 vec=4",
    "bm=128 bn=128 bk=8 tm=8 tn=8 bounds=0 vec=4 pad=0",
    "bm=64 bn=64 bk=4 tm=4 tn=4 vec=4",
    "bm=128 bn=32 bk=8 tm=4 tn=4",
    "bm=96 bn=64 bk=8 tm=6 tn=8 vec=2",
    "bm=64 bn=96 bk=12 tm=8 tn=6 vec=4",
    "bm=32 bn=32 bk=32 tm=2 tn=2 pad=1 vec=4 bounds=0",
};
#define NCONFIG ((int)(sizeof configs / sizeof *configs))
static const char *const layouts[] = {"nn", "nt", "tn", "tt"};

typedef struct shape {
    int m, n, k;
    int beta0;     /* also run with beta = 0 on a poisoned C */
} shape;

static const shape shapes[] = {
    {1, 1, 1, 1},        {1, 67, 33, 1},     {45, 1, 70, 0},    {64, 64, 1, 1},     {33, 17, 1, 0},
    {1, 1, 300, 0},      {127, 131, 137, 0}, {257, 251, 263, 0}, {63, 65, 64, 0},   {127, 129, 128, 1},
    {129, 127, 255, 0},  {255, 257, 17, 0},  {128, 128, 128, 1}, {256, 256, 256, 0}, {1024, 1024, 1024, 0},
    {1031, 997, 1009, 0}, {2048, 512, 1536, 0},
};
#define NSHAPE ((int)(sizeof shapes / sizeof *shapes))

#define ALPHA GP_ALPHA
#define BETA GP_BETA
static int runs, refused, nan_runs, matmul_runs;

static void config_text(char *buf, size_t len, int c, int l)
{
    snprintf(buf, len, "%s layout=%s", configs[c], layouts[l]);
}

/* Kernel i of the precompile: configuration i / 4 in layout i % 4. */
static int config_i(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud)
{
    (void)tmpl, (void)tlen, (void)ud;
    config_text(cfg, clen, i / 4, i % 4);
    return 1;
}

/* Runs `kern` on the problem (beta = BETA, or 0 on a poisoned C) and
 * returns its error, +Inf when C's padding changed; -1 when refused. */
static double run_kernel(kg_context *ctx, const kg_kernel *kern, gp_problem *p, int beta0, const char *what)
{
    kg_status st;
    const char *why;
    double err = gp_run(ctx, kern, p, beta0, &st, &why);
    CHECK_MSG(st == KG_OK || st == KG_ERR_SHAPE, "%s: %s", what, why);
    return err;
}

static void test_configs(kg_context *ctx)
{
    kg_kernel *kern[NCONFIG][4];
    for (int c = 0; c < NCONFIG; c++)
        for (int l = 0; l < 4; l++) {
            char cfg[512];
            config_text(cfg, sizeof cfg, c, l);
            kern[c][l] = NULL;
            kg_status st = kg_kernel_get(ctx, NULL, cfg, &kern[c][l]);
            CHECK_MSG(st == KG_OK, "[%s]: %s", cfg, kg_last_error(ctx));
        }
    for (int l = 0; l < 4; l++)
        for (int s = 0; s < NSHAPE; s++) {
            const shape *sh = &shapes[s];
            gp_problem p;
            int ok = gp_init(ctx, &p, layouts[l], sh->m, sh->n, sh->k, 0, 1000 + 17 * s + l);
            CHECK_MSG(ok, "%s %dx%dx%d: setup failed: %s", layouts[l], sh->m, sh->n, sh->k, kg_last_error(ctx));
            double tol = kgi_gemm_tolerance(sh->k), worst = 0;
            for (int c = 0; ok && c < NCONFIG; c++) {
                if (!kern[c][l])
                    continue;
                for (int b0 = 0; b0 <= sh->beta0; b0++) {
                    char what[640];
                    snprintf(what, sizeof what, "[%s layout=%s] %dx%dx%d beta=%g", configs[c], layouts[l], sh->m,
                             sh->n, sh->k, b0 ? 0.0 : BETA);
                    double e = run_kernel(ctx, kern[c][l], &p, b0, what);
                    if (e < 0) {
                        /* only a kernel without bound checks may refuse, and only a non-multiple */
                        CHECK_MSG(strstr(configs[c], "bounds=0"), "%s: refused", what);
                        CHECK_MSG(strstr(kg_last_error(ctx), "is not a multiple of"), "%s: %s", what,
                                  kg_last_error(ctx));
                        refused++;
                        continue;
                    }
                    runs++;
                    CHECK_MSG(e <= tol, "%s: error %.3g over tolerance %.3g", what, e, tol);
                    if (e > worst)
                        worst = e;
                }
            }
            printf("%s %5dx%5dx%5d  worst error %.3g (tolerance %.3g)\n", layouts[l], sh->m, sh->n, sh->k, worst, tol);
            gp_free(ctx, &p);
        }
    printf("configurations %d x layouts 4 x shapes %d: %d runs checked, %d refused (bounds=0, shape not a multiple)\n",
           NCONFIG, NSHAPE, runs, refused);

    /* NaN in A (row 5 of op(A)) and B (column 20 of op(B)) must come out */
    for (int l = 0; l < 4; l++) {
        gp_problem p;
        CHECK(gp_init(ctx, &p, layouts[l], 67, 45, 33, 0, 77 + l));
        int at = layouts[l][0] == 't', bt = layouts[l][1] == 't';
        p.a[at ? (size_t)7 * p.lda + 5 : (size_t)5 * p.lda + 7] = NAN;
        p.b[bt ? (size_t)20 * p.ldb + 10 : (size_t)10 * p.ldb + 20] = NAN;
        CHECK(kgi_dev_upload(ctx, p.da, p.a, p.na * 4) == KG_OK && kgi_dev_upload(ctx, p.db, p.b, p.nb * 4) == KG_OK);
        kgi_ref_gemm(p.layout, p.m, p.n, p.k, ALPHA, p.a, p.lda, p.b, p.ldb, BETA, p.c, p.ldc, p.ref);
        CHECK(isnan(p.ref[5 * 45 + 0]) && isnan(p.ref[0 * 45 + 20]) && !isnan(p.ref[6 * 45 + 21]));
        for (int c = 0; c < NCONFIG; c++) {
            if (!kern[c][l])
                continue;
            char what[640];
            snprintf(what, sizeof what, "NaN: [%s layout=%s]", configs[c], layouts[l]);
            double e = run_kernel(ctx, kern[c][l], &p, 0, what);
            if (e < 0)
                continue;
            nan_runs++;
            CHECK_MSG(e <= kgi_gemm_tolerance(33), "%s: NaN vanished or the rest is wrong (error %.3g)", what, e);
            int row = 1, col = 1;
            for (int j = 0; j < 45; j++)
                row &= isnan(p.out[5 * p.ldc + j]);
            for (int i = 0; i < 67; i++)
                col &= isnan(p.out[i * p.ldc + 20]);
            CHECK_MSG(row && col, "%s: NaN row %d column %d", what, row, col);
        }
        gp_free(ctx, &p);
    }
    printf("NaN propagation: %d runs\n", nan_runs);

    /* what the driver says of a kernel with dynamic shared memory */
    kg_kernel_info ki;
    CHECK(kg_kernel_query(ctx, kern[24][0], &ki) == KG_OK);
    CHECK_MSG(ki.compile.smem_dynamic == 4 * (256 * 33 + 32 * 129) && ki.compile.smem_static == 0,
              "dynamic %zu static %zu", ki.compile.smem_dynamic, ki.compile.smem_static);
    CHECK(ki.max_blocks_per_sm >= 1 && ki.compile.registers > 0 && ki.threads == 256 && ki.block[0] == 16 &&
          ki.block[1] == 16);
    CHECK(strcmp(ki.template_name, "matmul") == 0 && strstr(ki.config, "bm=256") && strstr(ki.entry, "kgen_matmul_nn"));
    double e;
    CHECK(kgi_verify_kernel(ctx, kern[6][2], 77, 55, 99, 1.5f, 0.5f, 5, 42, &e) == KG_OK && e < 1e-5);
    CHECK(kgi_verify_kernel(ctx, kern[0][3], 1, 1, 1, -1.0f, 0.0f, 0, 43, &e) == KG_OK);
    CHECK(kgi_verify_kernel(ctx, kern[8][0], 30, 30, 30, 1.0f, 0.0f, 1, 44, &e) == KG_ERR_SHAPE); /* lda 31 with vec=4 */
}

/* kg_matmul on device buffers: its pick must be right whatever it is. */
static void check_matmul(kg_context *ctx, const char *layout, int m, int n, int k, int offset_a, const char *expect)
{
    gp_problem p;
    CHECK(gp_init(ctx, &p, layout, m, n, k, 0, 500 + m + n + k));
    void *da = p.da;
    if (offset_a) { /* A one float in: only scalar loads may read it */
        void *shifted;
        CHECK(kgi_dev_alloc(ctx, (p.na + 1) * 4, &shifted) == KG_OK);
        CHECK(kgi_dev_upload(ctx, (float *)shifted + 1, p.a, p.na * 4) == KG_OK);
        da = (float *)shifted + 1;
    }
    for (int rep = 0; rep < 2; rep++) { /* the second call takes the cached choice */
        CHECK(kgi_dev_upload(ctx, p.dc, p.c, p.nc * 4) == KG_OK);
        kg_status st = kg_matmul(ctx, layout, m, n, k, ALPHA, da, p.lda, p.db, p.ldb, BETA, p.dc, p.ldc, NULL);
        CHECK_MSG(st == KG_OK, "kg_matmul %s %dx%dx%d: %s", layout, m, n, k, kg_last_error(ctx));
        CHECK(kgi_dev_sync(ctx) == KG_OK && kgi_dev_download(ctx, p.out, p.dc, p.nc * 4) == KG_OK);
        double e = kgi_gemm_error_mag(m, n, p.out, p.ldc, p.ref, p.mag);
        CHECK_MSG(e <= kgi_gemm_tolerance(k), "kg_matmul %s %dx%dx%d: error %.3g", layout, m, n, k, e);
        matmul_runs++;
    }
    char config[512], why[2048];
    CHECK(kg_matmul_explain(ctx, layout, m, n, k, config, sizeof config, why, sizeof why) == KG_OK);
    /* the reason names its source: a tuning entry, the catalogue, or the model-only choice */
    CHECK_MSG(strstr(why, "tuned: ") || strstr(why, "catalogue sm_") || strstr(why, "model-only choice"), "%s", why);
    if (offset_a) {
        /* recorded (KGEN_VERBOSE=1): the unaligned call's choice is the only one, and it reads A without
         * vectors: no vector loads at all, packed operands, or vector loads of B alone (in nn and nt a
         * transposing copy through cp.async reads A as single floats) */
        char tmpl[64] = "";
        sscanf(why, "[template %63[^]]", tmpl);
        kg_source *src = NULL;
        CHECK_MSG(tmpl[0] && kg_render(ctx, tmpl, config, &src) == KG_OK, "%s / %s: %s", config, why,
                  kg_last_error(ctx));
        int a_free = src && (src->geo.pack_multiple || (src->geo.ld_multiple <= 1 && src->geo.align <= 4) ||
                             src->geo.vec_operands == 2);
        CHECK_MSG(strstr(why, "recorded by kg_matmul") && a_free &&
                      (strstr(why, "A is not") || strstr(why, "no vector loads")),
                  "%s / %s", config, why);
        kg_source_free(src);
        kgi_dev_free(ctx, (float *)da - 1);
    } else if (expect && strstr(config, "bounds=")) {
        /* (a template without the parameter, as matmul_skinny, takes any shape) */
        CHECK_MSG(strstr(config, expect), "%s %dx%dx%d: expected %s in %s (%s)", layout, m, n, k, expect, config, why);
    }
    printf("kg_matmul %s %dx%dx%d%s: %s\n  %s\n", layout, m, n, k, offset_a ? " (A unaligned)" : "", config, why);
    gp_free(ctx, &p);
}

/*
 * A vector operand stored as one row in the call's own layout (M = 1, A
 * "t", lda = 1; N = 1, B "n", ldb = 1) runs in the layout that reads it as
 * a row; minimal leading dimensions, beta = BETA and beta = 0 on a C
 * poisoned with NaN, each twice (the second call takes the cached
 * choice). `folds`: whether the recorded reason must say so.
 */
static void check_folded(kg_context *ctx, const char *layout, int m, int n, int k, int minimal, int folds)
{
    gp_problem p;
    CHECK(gp_init(ctx, &p, layout, m, n, k, minimal ? 2 : 0, 900 + m + n + k));
    for (int rep = 0; rep < 4; rep++) {
        int beta0 = rep >= 2;
        memcpy(p.cin, p.c, p.nc * 4);
        if (beta0)
            for (int r = 0; r < m; r++)
                gp_fill_bits(p.cin + (size_t)r * p.ldc, (size_t)n, GP_POISON);
        CHECK(kgi_dev_upload(ctx, p.dc, p.cin, p.nc * 4) == KG_OK);
        kg_status st = kg_matmul(ctx, layout, m, n, k, ALPHA, p.da, p.lda, p.db, p.ldb, beta0 ? 0.0f : BETA, p.dc,
                                 p.ldc, NULL);
        CHECK_MSG(st == KG_OK, "kg_matmul %s %dx%dx%d: %s", layout, m, n, k, kg_last_error(ctx));
        CHECK(kgi_dev_sync(ctx) == KG_OK && kgi_dev_download(ctx, p.out, p.dc, p.nc * 4) == KG_OK);
        double e = kgi_gemm_error_mag(m, n, p.out, p.ldc, beta0 ? p.ref0 : p.ref, beta0 ? p.mag0 : p.mag);
        CHECK_MSG(e <= kgi_gemm_tolerance(k), "kg_matmul %s %dx%dx%d lda=%d ldb=%d beta=%g: error %.3g", layout, m,
                  n, k, p.lda, p.ldb, beta0 ? 0.0 : BETA, e);
        for (int r = 0; r < m; r++)
            CHECK_MSG(memcmp(p.out + (size_t)r * p.ldc + n, p.cin + (size_t)r * p.ldc + n,
                             (size_t)(p.ldc - n) * 4) == 0,
                      "kg_matmul %s %dx%dx%d: wrote past N in row %d", layout, m, n, k, r);
        matmul_runs++;
    }
    char config[512], why[2048];
    CHECK(kg_matmul_explain(ctx, layout, m, n, k, config, sizeof config, why, sizeof why) == KG_OK);
    CHECK_MSG(strstr(why, "recorded by kg_matmul"), "%s", why);
    if (folds && strncmp(why + (strncmp(why, "[template ", 10) == 0 ? strcspn(why, "]") + 2 : 0), "tuned: ", 7) == 0)
        printf("kg_matmul %s %dx%dx%d: a tuning entry for its own layout, so not folded (check skipped)\n", layout,
               m, n, k);
    else
        CHECK_MSG((strstr(why, " read as ") != NULL) == folds, "%s %dx%dx%d: %s", layout, m, n, k, why);
    printf("kg_matmul %s %dx%dx%d lda=%d ldb=%d: %s\n  %s\n", layout, m, n, k, p.lda, p.ldb, config, why);
    gp_free(ctx, &p);
}

static void test_matmul(kg_context *ctx)
{
    for (int l = 0; l < 4; l++) {
        check_matmul(ctx, layouts[l], 1, 1, 1, 0, "bounds=1");
        check_matmul(ctx, layouts[l], 100, 37, 19, 0, "bounds=1");
        check_matmul(ctx, layouts[l], 1000, 999, 1001, 0, "bounds=1"); /* padded leading dimensions */
        check_matmul(ctx, layouts[l], 96, 160, 64, 1, NULL);
    }
    /* whatever the catalogue (or the model-only choice) picks, on shapes
     * that make few tiles, many, split K, or forbid vector loads */
    check_matmul(ctx, "nn", 2048, 2048, 256, 0, NULL);
    check_matmul(ctx, "nn", 2048, 2048, 320, 1, NULL); /* no vector loads */
    check_matmul(ctx, "tt", 1024, 1024, 1024, 0, NULL);
    check_matmul(ctx, "nt", 1000, 1000, 300, 0, NULL);
    for (int l = 0; l < 4; l++) /* small output, long K */
        check_matmul(ctx, layouts[l], 64, 512, 4096, 0, NULL);
    for (int l = 0; l < 4; l++) { /* vectors stored as one row (minimal leading dimensions) or not */
        int at = layouts[l][0] == 't', bt = layouts[l][1] == 't';
        check_folded(ctx, layouts[l], 1, 8192, 2048, 1, at);
        check_folded(ctx, layouts[l], 1, 2999, 701, 1, at);
        check_folded(ctx, layouts[l], 4096, 1, 4096, 1, !bt);
        check_folded(ctx, layouts[l], 1, 1, 333, 1, at || !bt);
        /* the same shapes with lda = 8 for a "t" A, ldb = 8 for an "n" B (strided
         * vectors, not folded; the alignment class the folded calls had, K being a
         * multiple of 4) after them: their own choices, not the cached folded ones */
        check_folded(ctx, layouts[l], 1, 8192, 2048, 0, 0);
        check_folded(ctx, layouts[l], 4096, 1, 4096, 0, 0);
    }
    printf("kg_matmul: %d calls checked\n", matmul_runs);

    /* refusals name what is wrong */
    void *d;
    CHECK(kgi_dev_alloc(ctx, 64 * 64 * 4, &d) == KG_OK);
    CHECK(kg_matmul(ctx, "nn", 8, 8, 8, 1, NULL, 8, d, 8, 0, d, 8, NULL) == KG_ERR_SHAPE);
    CHECK_MSG(strstr(kg_last_error(ctx), "A is a NULL pointer"), "%s", kg_last_error(ctx));
    CHECK(kg_matmul(ctx, "nn", 8, 8, 16, 1, d, 8, d, 8, 0, d, 8, NULL) == KG_ERR_SHAPE);
    CHECK_MSG(strstr(kg_last_error(ctx), "lda=8 is less than K"), "%s", kg_last_error(ctx));
    CHECK(kg_matmul(ctx, "nx", 8, 8, 8, 1, d, 8, d, 8, 0, d, 8, NULL) == KG_ERR_INVALID_ARG);
    CHECK(kg_matmul(ctx, "nn", 8, 0, 8, 1, d, 8, d, 8, 0, d, 8, NULL) == KG_ERR_INVALID_ARG);
    kg_kernel *b0;
    CHECK(kg_kernel_get(ctx, NULL, "bm=32 bn=32 bk=32 tm=2 tn=2 bounds=0", &b0) == KG_OK);
    kg_gemm g = {33, 32, 32, 1, 0, d, 32, d, 32, d, 32};
    CHECK(kg_kernel_launch(ctx, b0, &g, NULL) == KG_ERR_SHAPE);
    CHECK_MSG(strstr(kg_last_error(ctx), "M=33 is not a multiple of 32"), "%s", kg_last_error(ctx));
    kgi_dev_free(ctx, d);
}

static void test_device(kg_context *ctx)
{
    kg_device_info info;
    CHECK(kg_device_query(ctx, KG_DEVICE_NONE, &info) == KG_OK);
    int arch = info.cc_major * 10 + info.cc_minor;
    const kgi_limits *lim = kgi_context_limits(ctx);
    CHECK(arch == kg_arch(ctx) && lim->sm == arch);
    CHECK(info.name[0] && info.sm_count > 0 && info.warp_size == 32 && info.total_mem > 0);
    CHECK(lim->smem_per_block_optin == info.smem_per_block_optin && lim->regs_per_sm == info.regs_per_sm);
    CHECK(lim->max_threads_per_sm == info.max_threads_per_sm && lim->ref_sm_count == info.sm_count);
    CHECK(info.peak_fp32_tflops > 1 && info.peak_bandwidth_gbs > 100 && info.l2_bytes > 0);
    CHECK(kg_set_arch(ctx, arch == 80 ? 90 : 80) == KG_ERR_INVALID_ARG);
    int count = 0;
    CHECK(kg_device_count(ctx, &count) == KG_OK && count >= 1);
    kg_context *other;
    CHECK(kg_context_open(&other, 999) == KG_ERR_NO_DEVICE);
    CHECK_MSG(strstr(kg_last_error(other), "999"), "%s", kg_last_error(other));
    kg_context_close(other);
    printf("device: %s, sm_%d, %d SMs\n", info.name, arch, info.sm_count);
}

static void test_pre_kernel(kg_context *ctx, const char *dir)
{
    CHECK(kg_set_template_path(ctx, dir) == KG_OK);
    for (int l = 0; l < 4; l++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "side=16 layout=%s", layouts[l]);
        kg_kernel *k;
        kg_status st = kg_kernel_get(ctx, "prebeta", cfg, &k);
        CHECK_MSG(st == KG_OK, "prebeta: %s", kg_last_error(ctx));
        if (st != KG_OK)
            continue;
        double e;
        st = kgi_verify_kernel(ctx, k, 70, 45, 33, ALPHA, BETA, 3, 9 + l, &e);
        CHECK_MSG(st == KG_OK, "prebeta %s beta=%g: %s", layouts[l], BETA, kg_last_error(ctx));
        st = kgi_verify_kernel(ctx, k, 70, 45, 33, ALPHA, 0.0f, 0, 19 + l, &e);
        CHECK_MSG(st == KG_OK, "prebeta %s beta=0: %s", layouts[l], kg_last_error(ctx));
    }
    CHECK(kg_set_template_path(ctx, NULL) == KG_OK);
}

/*
 * A beta pass launched to overlap the kernel before it (sm_90: the template
 * promises `waits`) must wait for that kernel before it reads C or lets the
 * main kernel read A and B. The kernel before lets its dependents launch at
 * once (griddepcontrol.launch_dependents, as a kernel made for programmatic
 * launch may) and writes A, B and C after spinning about 0.2 ms, over NaN:
 * a pass or main kernel that starts early reads NaN, or scales a C that is
 * then overwritten. Split-K, stream-K and matmul_skinny's beta passes
 * (three templates' texts), each layout once.
 */
static const char late_copy_src[] =
    "extern \"C\" __global__ void kgen_test_late_copy(const float* __restrict__ sa, float* __restrict__ a,\n"
    "    const float* __restrict__ sb, float* __restrict__ b, const float* __restrict__ sc, float* __restrict__ c,\n"
    "    unsigned long long na, unsigned long long nb, unsigned long long nc, long long spin)\n"
    "{\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "    asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
    "#endif\n"
    "    const long long t0 = clock64();\n"
    "    while (clock64() - t0 < spin) { }\n"
    "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < na + nb + nc; i += step) {\n"
    "        if (i < na) a[i] = sa[i];\n"
    "        else if (i < na + nb) b[i - na] = sb[i - na];\n"
    "        else c[i - na - nb] = sc[i - na - nb];\n"
    "    }\n"
    "}\n";

static void test_chain(kg_context *ctx)
{
    static const struct {
        const char *tmpl, *config;
        int m, n, k;
    } cases[] = {
        {"matmul_warp", "bm=64 bn=64 bk=8 wm=32 wn=32 tm=4 tn=4 ln=8 vec=4 stages=2 splitk=4", 1500, 2000, 256},
        {"matmul_warp", "bm=128 bn=128 bk=8 wm=64 wn=64 tm=4 tn=4 ln=8 vec=4 stages=2 sk=2", 1100, 1300, 900},
        {"matmul_skinny", "small=m ms=2 vec=4 kc=512", 2, 8192, 2048},
    };
    kgi_nvrtc_result r;
    char *err = NULL;
    kg_status st = kgi_nvrtc_compile(late_copy_src, "late_copy.cu", kg_arch(ctx), &r, &err);
    CHECK_MSG(st == KG_OK, "the late copy kernel: %s", err ? err : "");
    free(err);
    if (st != KG_OK)
        return;
    const kgi_cu *cu = ctx->drv->cu;
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CHECK((st = kgi_drv_enter(ctx)) == KG_OK);
    if (st == KG_OK) {
        CHECK(cu->ModuleLoadData(&mod, r.cubin) == CUDA_SUCCESS &&
              cu->ModuleGetFunction(&fn, mod, "kgen_test_late_copy") == CUDA_SUCCESS);
        kgi_drv_leave(ctx);
    }
    kgi_nvrtc_result_free(&r);
    if (!fn)
        return;
    int checked = 0, chained = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (int l = 0; l < 4; l++) {
            char cfg[256];
            snprintf(cfg, sizeof cfg, "%s layout=%s", cases[c].config, layouts[l]);
            kg_kernel *kern;
            kg_kernel_info ki;
            st = kg_kernel_get(ctx, cases[c].tmpl, cfg, &kern);
            CHECK_MSG(st == KG_OK && kg_kernel_query(ctx, kern, &ki) == KG_OK, "%s %s: %s", cases[c].tmpl, cfg,
                      kg_last_error(ctx));
            if (st != KG_OK)
                continue;
            chained += ki.overlap == 2;
            gp_problem p;
            int ok = gp_init(ctx, &p, layouts[l], cases[c].m, cases[c].n, cases[c].k, 0, 500u + (unsigned)(4 * c + l));
            CHECK(ok);
            void *sa = NULL, *sb = NULL, *sc = NULL;
            ok = ok && kgi_dev_alloc(ctx, p.na * 4, &sa) == KG_OK && kgi_dev_alloc(ctx, p.nb * 4, &sb) == KG_OK &&
                 kgi_dev_alloc(ctx, p.nc * 4, &sc) == KG_OK && kgi_dev_copy(ctx, sa, p.da, p.na * 4) == KG_OK &&
                 kgi_dev_copy(ctx, sb, p.db, p.nb * 4) == KG_OK && kgi_dev_upload(ctx, sc, p.c, p.nc * 4) == KG_OK &&
                 kgi_dev_fill32(ctx, p.da, GP_POISON, p.na) == KG_OK &&
                 kgi_dev_fill32(ctx, p.db, GP_POISON, p.nb) == KG_OK &&
                 kgi_dev_fill32(ctx, p.dc, GP_POISON, p.nc) == KG_OK && kgi_dev_sync(ctx) == KG_OK;
            CHECK_MSG(ok, "%s %s: device memory: %s", cases[c].tmpl, cfg, kg_last_error(ctx));
            if (ok) {
                unsigned long long na = p.na, nb = p.nb, nc = p.nc;
                long long spin = 400000; /* clocks: about 0.2 ms at 2 GHz */
                void *args[] = {&sa, &p.da, &sb, &p.db, &sc, &p.dc, &na, &nb, &nc, &spin};
                kg_gemm g = {p.m, p.n, p.k, GP_ALPHA, GP_BETA, p.da, p.lda, p.db, p.ldb, p.dc, p.ldc};
                CHECK((st = kgi_drv_enter(ctx)) == KG_OK);
                if (st == KG_OK) {
                    CUresult rc = cu->LaunchKernel(fn, 264, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
                    kgi_drv_leave(ctx);
                    CHECK_MSG(rc == CUDA_SUCCESS, "the late copy's launch: %d", (int)rc);
                    st = rc == CUDA_SUCCESS ? kg_kernel_launch(ctx, kern, &g, NULL) : KG_ERR_DRIVER;
                    CHECK_MSG(st == KG_OK, "%s %s: %s", cases[c].tmpl, cfg, kg_last_error(ctx));
                }
                if (st == KG_OK && kgi_dev_sync(ctx) == KG_OK &&
                    kgi_dev_download(ctx, p.out, p.dc, p.nc * 4) == KG_OK) {
                    double e = kgi_gemm_error_mag(p.m, p.n, p.out, p.ldc, p.ref, p.mag);
                    CHECK_MSG(e <= kgi_gemm_tolerance(p.k), "%s %s %dx%dx%d after a late writer: error %g",
                              cases[c].tmpl, cfg, p.m, p.n, p.k, e);
                    checked++;
                }
            }
            kgi_dev_free(ctx, sa);
            kgi_dev_free(ctx, sb);
            kgi_dev_free(ctx, sc);
            gp_free(ctx, &p);
        }
    }
    CHECK((st = kgi_drv_enter(ctx)) == KG_OK);
    if (st == KG_OK) {
        cu->ModuleUnload(mod);
        kgi_drv_leave(ctx);
    }
    const char *off = getenv("KGEN_OVERLAP");
    if (kg_arch(ctx) >= 90 && !(off && strcmp(off, "0") == 0))
        CHECK_MSG(chained == 12, "%d of 12 kernels launch their beta pass to overlap the kernel before it", chained);
    printf("beta passes after a late writer: %d checks, %d of them launched to overlap it\n", checked, chained);
}

/* More row tiles than grid.y holds (65,535): the launch is split into row
 * chunks on offset pointers. bm=1 makes grid.y = M, so M = 70,001 needs two
 * chunks while staying small. */
static void test_chunked(kg_context *ctx)
{
    for (int l = 0; l < 4; l++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "bm=1 bn=32 bk=8 tm=1 tn=1 pad=1 layout=%s", layouts[l]);
        kg_kernel *k;
        kg_status st = kg_kernel_get(ctx, NULL, cfg, &k);
        CHECK_MSG(st == KG_OK, "[%s]: %s", cfg, kg_last_error(ctx));
        if (st != KG_OK)
            continue;
        gp_problem p;
        CHECK(gp_init(ctx, &p, layouts[l], 70001, 33, 17, 0, 77 + l));
        for (int beta0 = 0; beta0 < 2; beta0++) {
            double e = run_kernel(ctx, k, &p, beta0, cfg);
            CHECK_MSG(e >= 0 && e <= kgi_gemm_tolerance(17), "chunked %s beta0=%d: error %g", layouts[l], beta0, e);
        }
        gp_free(ctx, &p);
    }
}

static void test_timing(kg_context *ctx)
{
    kg_kernel *k;
    CHECK(kg_kernel_get(ctx, NULL, "bm=64 bn=64 bk=16 tm=4 tn=4 vec=4", &k) == KG_OK);
    gp_problem p;
    CHECK(gp_init(ctx, &p, "nn", 1024, 1024, 1024, 0, 3));
    void *c0;
    CHECK(kgi_dev_alloc(ctx, p.nc * 4, &c0) == KG_OK && kgi_dev_upload(ctx, c0, p.c, p.nc * 4) == KG_OK);
    kg_gemm g = {1024, 1024, 1024, ALPHA, BETA, p.da, p.lda, p.db, p.ldb, p.dc, p.ldc};
    kgi_timing t;
    CHECK_MSG(kgi_time_kernel(ctx, k, &g, c0, 1, 2.0, &t) == KG_OK, "%s", kg_last_error(ctx));
    CHECK(t.reps >= 10 && t.reps <= 1000 && t.min_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    printf("timing 1024^3 64x64x16: median %.4f ms over %d runs (spread %.1f%%)\n", t.median_ms, t.reps,
           100 * t.spread);
    CHECK(kgi_time_kernel_reps(ctx, k, &g, c0, 0, 25, 25, 2.0, &t) == KG_OK && t.reps == 25);
    /* C was restored before each run: the result is one update, not 25 */
    CHECK(kgi_dev_download(ctx, p.out, p.dc, p.nc * 4) == KG_OK);
    CHECK(kgi_gemm_error_mag(1024, 1024, p.out, p.ldc, p.ref, p.mag) <= kgi_gemm_tolerance(1024));
    kgi_dev_free(ctx, c0);
    gp_free(ctx, &p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TEST_TEMPLATE_DIR\n", argv[0]);
        return 2;
    }
    char dir[] = "/tmp/kgen-test-gpu-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("KGEN_CACHE_DIR", dir, 1);
    unsetenv("KGEN_CACHE");
    setenv("KGEN_VERBOSE", "1", 1);
    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    if (st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE) {
        printf("%s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        rmdir(dir);
        TEST_SKIP("no GPU here");
    }
    CHECK_MSG(st == KG_OK, "%s", kg_last_error(ctx));
    if (st != KG_OK)
        TEST_DONE();
    if (kgi_arch_limits(kg_arch(ctx)))
        gp_precompile(kg_arch(ctx), NCONFIG * 4, config_i, NULL);
    test_device(ctx);
    test_configs(ctx);
    test_matmul(ctx);
    test_timing(ctx);
    test_chunked(ctx);
    test_pre_kernel(ctx, argv[1]);
    test_chain(ctx);
    kg_context_close(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
