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
#include <sys/wait.h>
#include <unistd.h>

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
    {700, 4, 33, 0},   {8, 2053, 2063, 1}, {1031, 997, 1009, 1}, {300, 700, 4099, 1},
};
#define NSHAPE ((int)(sizeof shapes / sizeof *shapes))

static const float ALPHA = 0.75f, BETA = -1.25f;
static const unsigned POISON = 0x7fc00000u, SENTINEL = 0x7fc0dea1u;

static void fill_bits(float *x, size_t n, unsigned bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, 4);
}

/* A leading dimension for `cols` columns: 16-byte multiple with room, or odd. */
static int ld_for(int cols, int odd) { return odd ? (cols % 2 ? cols + 2 : cols + 1) : (cols + 3) / 4 * 4 + 4; }

typedef struct problem {
    const char *layout;
    int m, n, k, lda, ldb, ldc, arows, acols, brows, bcols;
    size_t na, nb, nc;
    float *a, *b, *c, *out, *cin;
    double *ref, *mag, *ref0, *mag0;
    void *da, *db, *dc;
} problem;

static int problem_init(kg_context *ctx, problem *p, const char *layout, const shape *s, int odd,
                        unsigned long long seed)
{
    memset(p, 0, sizeof *p);
    int at = layout[0] == 't', bt = layout[1] == 't';
    p->layout = layout;
    p->m = s->m, p->n = s->n, p->k = s->k;
    p->arows = at ? s->k : s->m, p->acols = at ? s->m : s->k;
    p->brows = bt ? s->n : s->k, p->bcols = bt ? s->k : s->n;
    p->lda = ld_for(p->acols, odd), p->ldb = ld_for(p->bcols, odd), p->ldc = s->n + 3;
    p->na = (size_t)p->arows * p->lda, p->nb = (size_t)p->brows * p->ldb, p->nc = (size_t)s->m * p->ldc;
    p->a = malloc(p->na * 4), p->b = malloc(p->nb * 4), p->c = malloc(p->nc * 4);
    p->out = malloc(p->nc * 4), p->cin = malloc(p->nc * 4);
    size_t mn = (size_t)s->m * s->n;
    p->ref = malloc(mn * 8), p->mag = malloc(mn * 8), p->ref0 = malloc(mn * 8), p->mag0 = malloc(mn * 8);
    if (!p->a || !p->b || !p->c || !p->out || !p->cin || !p->ref || !p->mag || !p->ref0 || !p->mag0)
        return 0;
    kgi_fill_random(p->a, p->na, seed);
    kgi_fill_random(p->b, p->nb, seed + 1);
    kgi_fill_random(p->c, p->nc, seed + 2);
    /* padding: NaN in A and B (a kernel that reads it poisons C), a sentinel in C */
    for (int r = 0; r < p->arows; r++)
        fill_bits(p->a + (size_t)r * p->lda + p->acols, (size_t)(p->lda - p->acols), POISON);
    for (int r = 0; r < p->brows; r++)
        fill_bits(p->b + (size_t)r * p->ldb + p->bcols, (size_t)(p->ldb - p->bcols), POISON);
    for (int r = 0; r < s->m; r++)
        fill_bits(p->c + (size_t)r * p->ldc + s->n, (size_t)(p->ldc - s->n), SENTINEL);
    kgi_ref_gemm(layout, s->m, s->n, s->k, ALPHA, p->a, p->lda, p->b, p->ldb, BETA, p->c, p->ldc, p->ref);
    kgi_gemm_magnitude(layout, s->m, s->n, s->k, ALPHA, p->a, p->lda, p->b, p->ldb, BETA, p->c, p->ldc, p->mag);
    for (int i = 0; i < s->m; i++)
        for (int j = 0; j < s->n; j++) {
            double cb = (double)BETA * p->c[(size_t)i * p->ldc + j];
            p->ref0[(size_t)i * s->n + j] = p->ref[(size_t)i * s->n + j] - cb;
            p->mag0[(size_t)i * s->n + j] = p->mag[(size_t)i * s->n + j] - fabs(cb);
        }
    return kgi_dev_alloc(ctx, p->na * 4, &p->da) == KG_OK && kgi_dev_alloc(ctx, p->nb * 4, &p->db) == KG_OK &&
           kgi_dev_alloc(ctx, p->nc * 4, &p->dc) == KG_OK && kgi_dev_upload(ctx, p->da, p->a, p->na * 4) == KG_OK &&
           kgi_dev_upload(ctx, p->db, p->b, p->nb * 4) == KG_OK;
}

static void problem_free(kg_context *ctx, problem *p)
{
    kgi_dev_free(ctx, p->da);
    kgi_dev_free(ctx, p->db);
    kgi_dev_free(ctx, p->dc);
    free(p->a), free(p->b), free(p->c), free(p->out), free(p->cin);
    free(p->ref), free(p->mag), free(p->ref0), free(p->mag0);
}

/* Error of one run (beta = BETA, or 0 on a C poisoned with NaN); +Inf when
 * C's padding changed or the launch failed; -1 refused, with *why. */
static double run(kg_context *ctx, const kg_kernel *kern, problem *p, int beta0, const char **why)
{
    memcpy(p->cin, p->c, p->nc * 4);
    if (beta0)
        for (int r = 0; r < p->m; r++)
            fill_bits(p->cin + (size_t)r * p->ldc, (size_t)p->n, POISON);
    if (kgi_dev_upload(ctx, p->dc, p->cin, p->nc * 4) != KG_OK)
        return INFINITY;
    kg_gemm g = {p->m, p->n, p->k, ALPHA, beta0 ? 0.0f : BETA, p->da, p->lda, p->db, p->ldb, p->dc, p->ldc};
    kg_status st = kg_kernel_launch(ctx, kern, &g, NULL);
    *why = kg_last_error(ctx);
    if (st == KG_ERR_SHAPE)
        return -1;
    if (st != KG_OK || kgi_dev_sync(ctx) != KG_OK || kgi_dev_download(ctx, p->out, p->dc, p->nc * 4) != KG_OK)
        return INFINITY;
    double err = kgi_gemm_error_mag(p->m, p->n, p->out, p->ldc, beta0 ? p->ref0 : p->ref, beta0 ? p->mag0 : p->mag);
    for (int r = 0; r < p->m; r++)
        if (memcmp(p->out + (size_t)r * p->ldc + p->n, p->cin + (size_t)r * p->ldc + p->n,
                   (size_t)(p->ldc - p->n) * 4) != 0)
            return INFINITY;
    return isnan(err) ? INFINITY : err;
}

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

/* NVRTC is slow: compile every (kernel, layout) first, in parallel
 * processes, into the disk cache (the children touch no CUDA). */
static void precompile(const kgi_catalogue *c, int arch)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int procs = cores > 16 ? 16 : cores < 1 ? 1 : (int)cores;
    pid_t pids[16];
    for (int p = 0; p < procs; p++) {
        if ((pids[p] = fork()) != 0)
            continue;
        kg_context *ctx;
        int bad = kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_set_arch(ctx, arch) != KG_OK;
        for (int i = p; !bad && i < c->nkernels * 4; i += procs) {
            char cfg[1024];
            kg_cubin *cu;
            if (!used_in(c, i / 4, i % 4))
                continue;
            config_of(c, i / 4, i % 4, cfg, sizeof cfg);
            if (kg_compile(ctx, c->kernels[i / 4].tmpl, cfg, arch, &cu) == KG_OK)
                kg_cubin_free(cu);
        }
        kg_context_close(ctx);
        _exit(0);
    }
    for (int p = 0; p < procs; p++)
        if (pids[p] > 0)
            waitpid(pids[p], NULL, 0);
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
    precompile(c, arch);
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
                problem p;
                int ok = problem_init(ctx, &p, kgi_layout_name(l), &shapes[s], odd, 7000 + 31 * s + 7 * l + odd);
                CHECK_MSG(ok, "%s %dx%dx%d: setup failed: %s", kgi_layout_name(l), shapes[s].m, shapes[s].n,
                          shapes[s].k, kg_last_error(ctx));
                int align = KGI_ALIGN(p.lda % 4 ? (p.lda % 2 ? 1 : 2) : 4, p.ldb % 4 ? (p.ldb % 2 ? 1 : 2) : 4);
                double tol = kgi_gemm_tolerance(shapes[s].k), worst = 0;
                for (int j = 0; ok && j < nk; j++) {
                    const kg_kernel *k = kern[j * 4 + l];
                    if (!k)
                        continue;
                    for (int b0 = 0; b0 <= !quick; b0++) {
                        const char *why = "";
                        double e = run(ctx, k, &p, b0, &why);
                        char what[1400];
                        snprintf(what, sizeof what, "kernel %d [%s %s] %s %dx%dx%d lda %d ldb %d beta=%g", j + 1,
                                 c->kernels[j].tmpl, c->kernels[j].config, kgi_layout_name(l), p.m, p.n, p.k, p.lda,
                                 p.ldb, b0 ? 0.0 : BETA);
                        if (e < 0) {
                            /* refused: only where kg_matmul would not pick it */
                            int fair = !kgi_catalogue_admits(&c->kernels[j], align) || strstr(why, "exceeds");
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
                problem_free(ctx, &p);
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
