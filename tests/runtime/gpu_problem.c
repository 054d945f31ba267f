/*
 * gpu_problem.c -- one GEMM on the GPU against the float64 reference (see
 * gpu_problem.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_problem.h"

void gp_fill_bits(float *x, size_t n, unsigned bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, 4);
}

/* A leading dimension for `cols` columns: 16-byte multiple with room, odd, or minimal (odd = 2). */
static int ld_for(int cols, int odd)
{
    return odd == 2 ? cols : odd ? (cols % 2 ? cols + 2 : cols + 1) : (cols + 3) / 4 * 4 + 4;
}

int gp_init(kg_context *ctx, gp_problem *p, const char *layout, int m, int n, int k, int odd,
            unsigned long long seed)
{
    memset(p, 0, sizeof *p);
    int at = layout[0] == 't', bt = layout[1] == 't';
    p->layout = layout;
    p->m = m, p->n = n, p->k = k;
    p->arows = at ? k : m, p->acols = at ? m : k;
    p->brows = bt ? n : k, p->bcols = bt ? k : n;
    p->lda = ld_for(p->acols, odd), p->ldb = ld_for(p->bcols, odd), p->ldc = n + 3;
    p->na = (size_t)p->arows * p->lda, p->nb = (size_t)p->brows * p->ldb, p->nc = (size_t)m * p->ldc;
    p->a = malloc(p->na * 4), p->b = malloc(p->nb * 4), p->c = malloc(p->nc * 4);
    p->out = malloc(p->nc * 4), p->cin = malloc(p->nc * 4);
    size_t mn = (size_t)m * n;
    p->ref = malloc(mn * 8), p->mag = malloc(mn * 8), p->ref0 = malloc(mn * 8), p->mag0 = malloc(mn * 8);
    if (!p->a || !p->b || !p->c || !p->out || !p->cin || !p->ref || !p->mag || !p->ref0 || !p->mag0)
        return 0;
    kgi_fill_random(p->a, p->na, seed);
    kgi_fill_random(p->b, p->nb, seed + 1);
    kgi_fill_random(p->c, p->nc, seed + 2);
    for (int r = 0; r < p->arows; r++)
        gp_fill_bits(p->a + (size_t)r * p->lda + p->acols, (size_t)(p->lda - p->acols), GP_POISON);
    for (int r = 0; r < p->brows; r++)
        gp_fill_bits(p->b + (size_t)r * p->ldb + p->bcols, (size_t)(p->ldb - p->bcols), GP_POISON);
    for (int r = 0; r < m; r++)
        gp_fill_bits(p->c + (size_t)r * p->ldc + n, (size_t)(p->ldc - n), GP_SENTINEL);
    kgi_ref_gemm(layout, m, n, k, GP_ALPHA, p->a, p->lda, p->b, p->ldb, GP_BETA, p->c, p->ldc, p->ref);
    kgi_gemm_magnitude(layout, m, n, k, GP_ALPHA, p->a, p->lda, p->b, p->ldb, GP_BETA, p->c, p->ldc, p->mag);
    /* beta = 0: the same without the C term (exact enough in double) */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double cb = (double)GP_BETA * p->c[(size_t)i * p->ldc + j];
            p->ref0[(size_t)i * n + j] = p->ref[(size_t)i * n + j] - cb;
            p->mag0[(size_t)i * n + j] = p->mag[(size_t)i * n + j] - fabs(cb);
        }
    return kgi_dev_alloc(ctx, p->na * 4, &p->da) == KG_OK && kgi_dev_alloc(ctx, p->nb * 4, &p->db) == KG_OK &&
           kgi_dev_alloc(ctx, p->nc * 4, &p->dc) == KG_OK && kgi_dev_upload(ctx, p->da, p->a, p->na * 4) == KG_OK &&
           kgi_dev_upload(ctx, p->db, p->b, p->nb * 4) == KG_OK;
}

void gp_free(kg_context *ctx, gp_problem *p)
{
    kgi_dev_free(ctx, p->da);
    kgi_dev_free(ctx, p->db);
    kgi_dev_free(ctx, p->dc);
    free(p->a), free(p->b), free(p->c), free(p->out), free(p->cin);
    free(p->ref), free(p->mag), free(p->ref0), free(p->mag0);
}

double gp_run(kg_context *ctx, const kg_kernel *kern, gp_problem *p, int beta0, kg_status *st, const char **why)
{
    memcpy(p->cin, p->c, p->nc * 4);
    if (beta0)
        for (int r = 0; r < p->m; r++)
            gp_fill_bits(p->cin + (size_t)r * p->ldc, (size_t)p->n, GP_POISON);
    kg_gemm g = {p->m, p->n, p->k, GP_ALPHA, beta0 ? 0.0f : GP_BETA, p->da, p->lda, p->db, p->ldb, p->dc, p->ldc};
    if ((*st = kgi_dev_upload(ctx, p->dc, p->cin, p->nc * 4)) == KG_OK)
        *st = kg_kernel_launch(ctx, kern, &g, NULL);
    *why = kg_last_error(ctx);
    if (*st == KG_ERR_SHAPE)
        return -1;
    if (*st == KG_OK)
        *st = kgi_dev_sync(ctx);
    if (*st == KG_OK)
        *st = kgi_dev_download(ctx, p->out, p->dc, p->nc * 4);
    if (*st != KG_OK) {
        *why = kg_last_error(ctx);
        return INFINITY;
    }
    double err = kgi_gemm_error_mag(p->m, p->n, p->out, p->ldc, beta0 ? p->ref0 : p->ref, beta0 ? p->mag0 : p->mag);
    for (int r = 0; r < p->m; r++)
        if (memcmp(p->out + (size_t)r * p->ldc + p->n, p->cin + (size_t)r * p->ldc + p->n,
                   (size_t)(p->ldc - p->n) * 4) != 0)
            return INFINITY; /* wrote outside the M x N region */
    return err;
}

void gp_precompile(int arch, int n, int (*config)(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud),
                   void *ud)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int procs = cores > 16 ? 16 : cores < 1 ? 1 : (int)cores;
    pid_t pids[16];
    for (int p = 0; p < procs; p++) {
        if ((pids[p] = fork()) != 0)
            continue;
        kg_context *ctx;
        int bad = kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_set_arch(ctx, arch) != KG_OK;
        for (int i = p; !bad && i < n; i += procs) {
            char tmpl[64] = "", cfg[1024];
            kg_cubin *c;
            if (config(i, tmpl, sizeof tmpl, cfg, sizeof cfg, ud) &&
                kg_compile(ctx, tmpl[0] ? tmpl : NULL, cfg, arch, &c) == KG_OK)
                kg_cubin_free(c);
        }
        kg_context_close(ctx);
        _exit(0);
    }
    for (int p = 0; p < procs; p++)
        if (pids[p] > 0)
            waitpid(pids[p], NULL, 0);
}
