/*
 * test_catalogue_gpu.c -- every kernel of this GPU's catalogue, in every
 * layout it has times for, on the boundary shapes: M, N or K of 1, tile
 * sizes +-1, primes, K cut into several split-K pieces, leading dimensions
 * aligned and odd, beta != 0 and beta = 0 on a poisoned C. Each result is
 * compared with a float64 reference; C's padding must come back untouched;
 * NaN never passes (the error of a NaN is +Inf).
 *
 * A kernel may refuse a call only for a reason kg_matmul would not have
 * picked it for: its NEEDS (16-byte loads) is more than the call allows, or
 * the call's M or N exceeds what a small-M/N kernel takes. Anything else,
 * and a kernel that ran nowhere, fails.
 *
 *   rt_test_catalogue_gpu [--quick]    (--quick: the small shapes and beta
 *                                       != 0 only, for compute-sanitizer)
 * Exit 77 (skipped) without a GPU or without a catalogue for its
 * architecture.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_problem.h"
#include "runtime/catalogue.h"
#include "runtime/internal.h"
#include "testutil.h"

typedef struct shape {
    int m, n, k;
    int big; /* left out with --quick */
} shape;

static const shape shapes[] = {
    {1, 1, 1, 0},      {1, 67, 33, 0},    {45, 1, 70, 0},     {33, 17, 1, 0},     {1, 1, 300, 0},
    {3, 517, 129, 0},  {517, 5, 129, 0},  {16, 1031, 67, 0},  {1031, 16, 67, 0},  {17, 263, 1031, 0},
    {63, 65, 64, 0},   {65, 63, 31, 0},   {127, 129, 128, 0}, {129, 127, 255, 0}, {255, 257, 17, 0},
    {257, 255, 1031, 0}, {127, 131, 137, 0}, {2, 300, 513, 0},  {300, 2, 513, 0},   {4, 700, 33, 0},
    {700, 4, 33, 0},   {1, 260, 515, 0},  {515, 1, 260, 0},   {8, 2053, 2063, 1}, {1031, 997, 1009, 1},
    {300, 700, 4099, 1},
};
#define NSHAPE ((int)(sizeof shapes / sizeof *shapes))

/* Does kernel j have times in layout l (kg_matmul uses it only there)? */
static int used_in(const kgi_catalogue *c, int j, int l)
{
    for (int r = 0; r < c->nrows; r++)
        if (c->rows[r].layout == l && kgi_catalogue_time(c, r, j) > 0)
            return 1;
    return 0;
}

static void config_of(const kgi_catalogue *c, int j, int l, char *buf, size_t len)
{
    snprintf(buf, len, "%s layout=%s", c->kernels[j].config, kgi_layout_name(l));
}

/* Kernel i of the precompile: catalogue kernel i / 4 in layout i % 4, where it has times. */
static int config_i(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud)
{
    const kgi_catalogue *c = ud;
    if (!used_in(c, i / 4, i % 4))
        return 0;
    snprintf(tmpl, tlen, "%s", c->kernels[i / 4].tmpl);
    config_of(c, i / 4, i % 4, cfg, clen);
    return 1;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char dir[] = "/tmp/kgen-test-catgpu-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("KGEN_CACHE_DIR", dir, 1);
    unsetenv("KGEN_CACHE");
    unsetenv("KGEN_CATALOGUE");
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
    int arch = kg_arch(ctx);
    const kgi_catalogue *c = NULL;
    CHECK(kgi_catalogue_for(ctx, arch, &c) == KG_OK);
    if (!c) {
        kg_context_close(ctx);
        rmdir(dir);
        printf("no catalogue for sm_%d: nothing to check\n", arch);
        TEST_SKIP("no catalogue for this GPU's architecture");
    }
    gp_precompile(arch, c->nkernels * 4, config_i, (void *)c);
    int nk = c->nkernels;
    kg_kernel **kern = calloc((size_t)nk * 4, sizeof *kern);
    int *ran = calloc((size_t)nk * 4, sizeof *ran);
    int runs = 0, refused = 0, pairs = 0;
    for (int j = 0; j < nk && kern; j++)
        for (int l = 0; l < 4; l++) {
            if (!used_in(c, j, l))
                continue;
            char cfg[1024];
            config_of(c, j, l, cfg, sizeof cfg);
            pairs++;
            st = kg_kernel_get(ctx, c->kernels[j].tmpl, cfg, &kern[j * 4 + l]);
            CHECK_MSG(st == KG_OK, "kernel %d [%s %s]: %s", j + 1, c->kernels[j].tmpl, cfg, kg_last_error(ctx));
        }
    for (int l = 0; l < 4 && kern && ran; l++)
        for (int s = 0; s < NSHAPE; s++) {
            if (quick && shapes[s].big)
                continue;
            for (int odd = 0; odd <= 1; odd++) {
                gp_problem p;
                int ok = gp_init(ctx, &p, kgi_layout_name(l), shapes[s].m, shapes[s].n, shapes[s].k, odd,
                                 7000 + 31 * s + 7 * l + odd);
                CHECK_MSG(ok, "%s %dx%dx%d: setup failed: %s", kgi_layout_name(l), shapes[s].m, shapes[s].n,
                          shapes[s].k, kg_last_error(ctx));
                int align = KGI_ALIGN(kgi_ld_class(p.lda), kgi_ld_class(p.ldb), kgi_ld_class(p.ldc));
                double tol = kgi_gemm_tolerance(shapes[s].k), worst = 0;
                for (int j = 0; ok && j < nk; j++) {
                    const kg_kernel *k = kern[j * 4 + l];
                    if (!k)
                        continue;
                    for (int b0 = 0; b0 <= !quick; b0++) {
                        const char *why = "";
                        kg_status st_run;
                        double e = gp_run(ctx, k, &p, b0, &st_run, &why);
                        char what[1400];
                        snprintf(what, sizeof what, "kernel %d [%s %s] %s %dx%dx%d lda %d ldb %d beta=%g", j + 1,
                                 c->kernels[j].tmpl, c->kernels[j].config, kgi_layout_name(l), p.m, p.n, p.k, p.lda,
                                 p.ldb, b0 ? 0.0 : GP_BETA);
                        if (e < 0) {
                            /* refused: only where kg_matmul would not pick it */
                            int fair = !kgi_catalogue_admits(&c->kernels[j], l, align) || strstr(why, "exceeds");
                            CHECK_MSG(fair, "%s: refused: %s", what, why);
                            refused++;
                            break;
                        }
                        runs++;
                        ran[j * 4 + l]++;
                        CHECK_MSG(e <= tol, "%s: error %.3g over tolerance %.3g", what, e, tol);
                        if (e > worst)
                            worst = e;
                    }
                }
                printf("%s %5dx%5dx%5d lda %5d ldb %5d  worst error %.3g (tolerance %.3g)\n", kgi_layout_name(l), p.m,
                       p.n, p.k, p.lda, p.ldb, worst, tol);
                gp_free(ctx, &p);
            }
        }
    for (int j = 0; j < nk && ran; j++)
        for (int l = 0; l < 4; l++)
            if (kern[j * 4 + l])
                CHECK_MSG(ran[j * 4 + l] >= 4, "kernel %d in %s ran on %d shapes only", j + 1, kgi_layout_name(l),
                          ran[j * 4 + l]);
    printf("catalogue sm_%d: %d kernels, %d (kernel, layout) pairs; %d runs checked, %d refused (NEEDS or M/N over "
           "the kernel's limit)\n",
           arch, nk, pairs, runs, refused);
    CHECK(runs > 0);
    free(kern); /* the kernels belong to the context */
    free(ran);
    kg_context_close(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
