/*
 * overhead.c -- what kg_matmul costs on the host. A measurement, not a test
 * (no pass bound); run it on a GPU.
 *
 *   rt_overhead first M N K   the first kg_matmul in a new process: context
 *                             open, then the first call (pick, render,
 *                             compile or disk-cache load, module load,
 *                             launch) to completion, then a second call.
 *                             Run it with an empty KGEN_CACHE_DIR (cold), then
 *                             again with the same one (warm disk cache).
 *   rt_overhead launch        host wall time per call of 10,000 cached
 *                             kg_matmul calls against 10,000 bare
 *                             cuLaunchKernel calls of the same kernel, on a
 *                             32x32x32 product, in batches of 100 (the
 *                             device is synchronized between batches,
 *                             outside the timed region, so the launch queue
 *                             never fills); kg_kernel_launch in between.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel.h"
#include "runtime/internal.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int die(kg_context *ctx, const char *what)
{
    fprintf(stderr, "rt_overhead: %s: %s\n", what, kg_last_error(ctx));
    kg_context_close(ctx);
    return 1;
}

static int first(int m, int n, int k)
{
    double t0 = now_us();
    kg_context *ctx;
    if (kg_context_open(&ctx, 0) != KG_OK)
        return die(ctx, "context");
    double t1 = now_us();
    void *a, *b, *c;
    if (kgi_dev_alloc(ctx, (size_t)m * k * 4, &a) || kgi_dev_alloc(ctx, (size_t)k * n * 4, &b) ||
        kgi_dev_alloc(ctx, (size_t)m * n * 4, &c) || kgi_dev_fill32(ctx, a, 0x3f800000u, (size_t)m * k) ||
        kgi_dev_fill32(ctx, b, 0x3f800000u, (size_t)k * n) || kgi_dev_sync(ctx))
        return die(ctx, "buffers");
    double t2 = now_us();
    if (kg_matmul(ctx, "nn", m, n, k, 1.0f, a, k, b, n, 0.0f, c, n, NULL) != KG_OK || kgi_dev_sync(ctx) != KG_OK)
        return die(ctx, "first kg_matmul");
    double t3 = now_us();
    if (kg_matmul(ctx, "nn", m, n, k, 1.0f, a, k, b, n, 0.0f, c, n, NULL) != KG_OK || kgi_dev_sync(ctx) != KG_OK)
        return die(ctx, "second kg_matmul");
    double t4 = now_us();
    char config[512], why[1024];
    kg_kernel *kern;
    kg_kernel_info info;
    if (kg_matmul_explain(ctx, "nn", m, n, k, config, sizeof config, why, sizeof why) != KG_OK ||
        kg_kernel_get(ctx, NULL, config, &kern) != KG_OK || kg_kernel_query(ctx, kern, &info) != KG_OK)
        return die(ctx, "explain");
    /* the product of ones is K everywhere */
    float corner;
    if (kgi_dev_download(ctx, &corner, c, 4) != KG_OK || corner != (float)k)
        return die(ctx, "result");
    const char *src[] = {"compiled with NVRTC", "memory cache", "disk cache"};
    printf("first call %dx%dx%d: context open %.1f ms; first kg_matmul %.1f ms (kernel %s, %s%s); "
           "second %.3f ms\n  config %s\n",
           m, n, k, (t1 - t0) / 1e3, (t3 - t2) / 1e3, info.entry, src[info.compile.cache],
           info.compile.cache ? "" : "", (t4 - t3) / 1e3, config);
    if (!info.compile.cache)
        printf("  NVRTC compile %.1f ms of it\n", info.compile.compile_ms);
    kgi_dev_free(ctx, a);
    kgi_dev_free(ctx, b);
    kgi_dev_free(ctx, c);
    kg_context_close(ctx);
    return 0;
}

enum { BATCH = 100, BATCHES = 100 };

/* One batch of BATCH calls of kind `which`; host microseconds per call. */
static double batch(kg_context *ctx, int which, const kg_kernel *kern, const kg_gemm *g)
{
    const kgi_cu *cu = ctx->drv->cu;
    unsigned grid[3] = {1, 1, 1};
    char why[256];
    kgi_grid_of(&kern->geo, g, kern->persist, grid, why, sizeof why);
    int m = g->m, n = g->n, k = g->k, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    float alpha = g->alpha, beta = g->beta;
    const float *a = g->a, *b = g->b;
    float *c = g->c;
    void *args[] = {&m, &n, &k, &alpha, &a, &lda, &b, &ldb, &beta, &c, &ldc};
    int bad = 0;
    double t0 = now_us();
    for (int i = 0; i < BATCH; i++) {
        if (which == 0)
            bad |= kg_matmul(ctx, "nn", m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL) != KG_OK;
        else if (which == 1)
            bad |= kg_kernel_launch(ctx, kern, g, NULL) != KG_OK;
        else
            bad |= cu->LaunchKernel(kern->fn, grid[0], grid[1], grid[2], kern->geo.block[0], kern->geo.block[1],
                                    kern->geo.block[2], (unsigned)kern->geo.smem_dynamic, NULL, args, NULL) !=
                   CUDA_SUCCESS;
    }
    double t = (now_us() - t0) / BATCH;
    if (bad || kgi_dev_sync(ctx) != KG_OK)
        return -1;
    return t;
}

static int launch_overhead(void)
{
    const int m = 32, n = 32, k = 32;
    kg_context *ctx;
    if (kg_context_open(&ctx, 0) != KG_OK)
        return die(ctx, "context");
    void *a, *b, *c;
    if (kgi_dev_alloc(ctx, m * k * 4, &a) || kgi_dev_alloc(ctx, k * n * 4, &b) || kgi_dev_alloc(ctx, m * n * 4, &c) ||
        kgi_dev_fill32(ctx, a, 0x3f800000u, m * k) || kgi_dev_fill32(ctx, b, 0x3f800000u, k * n))
        return die(ctx, "buffers");
    kg_gemm g = {m, n, k, 1.0f, 0.0f, a, k, b, n, c, n};
    if (kg_matmul(ctx, "nn", m, n, k, 1.0f, a, k, b, n, 0.0f, c, n, NULL) != KG_OK || kgi_dev_sync(ctx) != KG_OK)
        return die(ctx, "kg_matmul");
    char config[512], why[1024];
    kg_kernel *kern;
    if (kg_matmul_explain(ctx, "nn", m, n, k, config, sizeof config, why, sizeof why) != KG_OK ||
        kg_kernel_get(ctx, NULL, config, &kern) != KG_OK)
        return die(ctx, "kernel");
    /* The primary context current, as in a program that uses the CUDA
     * runtime: the bare launches need it, and kg_matmul then finds it
     * current and pushes nothing. */
    CUcontext popped;
    if (ctx->drv->cu->CtxPushCurrent(ctx->drv->primary) != CUDA_SUCCESS)
        return die(ctx, "context current");
    static double t[3][BATCHES];
    for (int w = 0; w < 3; w++) /* warm-up */
        if (batch(ctx, w, kern, &g) < 0)
            return die(ctx, "warm-up");
    for (int i = 0; i < BATCHES; i++)
        for (int w = 0; w < 3; w++)
            if ((t[w][i] = batch(ctx, w, kern, &g)) < 0)
                return die(ctx, "batch");
    ctx->drv->cu->CtxPopCurrent(&popped);
    const char *name[] = {"kg_matmul (cached choice)", "kg_kernel_launch", "bare cuLaunchKernel"};
    double med[3];
    printf("host time per call, %d calls each in batches of %d, %dx%dx%d (%s):\n", BATCH * BATCHES, BATCH, m, n, k,
           config);
    for (int w = 0; w < 3; w++) {
        double sum = 0;
        for (int i = 0; i < BATCHES; i++)
            sum += t[w][i];
        qsort(t[w], BATCHES, sizeof t[w][0], cmp);
        med[w] = t[w][BATCHES / 2];
        printf("  %-28s median %.3f us  mean %.3f us  min %.3f us\n", name[w], med[w], sum / BATCHES, t[w][0]);
    }
    printf("  kg_matmul overhead over cuLaunchKernel: %.3f us per call (median of batches)\n", med[0] - med[2]);
    kgi_dev_free(ctx, a);
    kgi_dev_free(ctx, b);
    kgi_dev_free(ctx, c);
    kg_context_close(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "first") == 0)
        return first(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (argc == 2 && strcmp(argv[1], "launch") == 0)
        return launch_overhead();
    fprintf(stderr, "usage: %s first M N K | %s launch\n", argv[0], argv[0]);
    return 2;
}
