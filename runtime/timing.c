/*
 * timing.c -- how long a kernel takes, measured the way the design asks:
 * CUDA events around each launch, warm-up first, many repetitions, the
 * median.
 *
 * Between repetitions C is restored from its initial copy (beta != 0 makes
 * each run read C, so every run must start from the same C) and, when
 * asked, the L2 cache is flushed by writing a buffer twice its size, so
 * that A and B come from device memory as they would in an application
 * whose other work evicted them. Neither the restore nor the flush is inside
 * the timed region: the start event is recorded after both.
 *
 * Repetitions stop once the interquartile spread is under 2% of the median
 * (checked every 10 runs once the minimum is done), at `max_seconds` of
 * wall time, or at the maximum (kgi_time_kernel: 10 and 1000 runs).
 *
 * kgi_time_back_to_back measures the other regime, a GEMM called in a loop:
 * many launches queued back to back between two events, L2 warm;
 * kgi_time_loop takes the median of such samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel.h"

#define WARMUP 3
/* the most launches in one sample (kgi_loop_count) */
#define LOOP_MAX_COUNT 1000

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted x[0..n) with linear interpolation. */
static double quantile(const double *x, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return x[n - 1];
    return x[i] + (pos - i) * (x[i + 1] - x[i]);
}

/* The median, extremes and interquartile spread of samples ms[0..n) (n >= 1), sorted into `sorted`. */
static void summarize(const double *ms, double *sorted, int n, kgi_timing *out)
{
    memcpy(sorted, ms, (size_t)n * sizeof *ms);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    out->median_ms = quantile(sorted, n, 0.5);
    out->min_ms = sorted[0];
    out->max_ms = sorted[n - 1];
    out->spread = out->median_ms > 0 ? (quantile(sorted, n, 0.75) - quantile(sorted, n, 0.25)) / out->median_ms : 0.0;
    out->reps = n;
}

/* The bytes of C that a launch on `g` may write: rows 0..M-1 of ldc. */
static size_t c_bytes(const kg_gemm *g) { return ((size_t)(g->m - 1) * g->ldc + g->n) * sizeof(float); }

kg_status kgi_time_kernel(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, const float *c_init,
                          int flush_l2, double max_seconds, kgi_timing *out)
{
    return kgi_time_kernel_reps(ctx, kern, g, c_init, flush_l2, 10, 1000, max_seconds, out);
}

kg_status kgi_time_kernel_reps(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, const float *c_init,
                               int flush_l2, int min_reps, int max_reps, double max_seconds, kgi_timing *out)
{
    if (!ctx || !kern || !g || !out || min_reps < 1 || max_reps < min_reps)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kgi_time_kernel: NULL argument or bad repetition bounds")
                   : KG_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    kg_status st = kgi_drv_enter(ctx);
    if (st != KG_OK)
        return st;
    const kgi_cu *cu = ctx->drv->cu;
    CUevent start = NULL, stop = NULL;
    void *flush = NULL;
    size_t flush_words = 0;
    double *ms = malloc((size_t)max_reps * sizeof *ms), *sorted = malloc((size_t)max_reps * sizeof *sorted);
    CUresult rc;
    if (!ms || !sorted) {
        st = kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = cu->EventCreate(&start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "cuEventCreate", rc);
        goto done;
    }
    if (flush_l2) {
        size_t l2 = ctx->limits.ref_l2_bytes ? ctx->limits.ref_l2_bytes : (size_t)64 << 20;
        flush_words = 2 * l2 / 4;
        if ((st = kgi_dev_alloc(ctx, flush_words * 4, &flush)) != KG_OK)
            goto done;
    }
    double t0 = wall();
    int reps = 0;
    for (int i = 0; i < WARMUP + max_reps; i++) {
        if (c_init && (st = kgi_dev_copy(ctx, g->c, c_init, c_bytes(g))) != KG_OK)
            goto done;
        if (flush && (st = kgi_dev_fill32(ctx, flush, (unsigned)i, flush_words)) != KG_OK)
            goto done;
        if ((rc = cu->EventRecord(start, NULL)) != CUDA_SUCCESS) {
            st = kgi_cu_fail(ctx, cu, "cuEventRecord", rc);
            goto done;
        }
        if ((st = kg_kernel_launch(ctx, kern, g, NULL)) != KG_OK)
            goto done;
        float t;
        if ((rc = cu->EventRecord(stop, NULL)) != CUDA_SUCCESS || (rc = cu->EventSynchronize(stop)) != CUDA_SUCCESS ||
            (rc = cu->EventElapsedTime(&t, start, stop)) != CUDA_SUCCESS) {
            st = kgi_cu_fail(ctx, cu, "timing a launch (cuEventRecord/Synchronize/ElapsedTime)", rc);
            goto done;
        }
        if (i < WARMUP)
            continue;
        ms[reps++] = t;
        if (reps < min_reps)
            continue;
        int last = reps >= max_reps || (min_reps < max_reps && wall() - t0 >= max_seconds);
        if (!last && reps % 10 != 0)
            continue;
        summarize(ms, sorted, reps, out);
        if (last || (min_reps < max_reps && out->spread < 0.02))
            break;
    }
done:
    if (start)
        cu->EventDestroy(start);
    if (stop)
        cu->EventDestroy(stop);
    kgi_dev_free(ctx, flush);
    free(ms);
    free(sorted);
    kgi_drv_leave(ctx);
    return st;
}

kg_status kgi_time_back_to_back(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, int count, double *ms)
{
    if (!ctx || !kern || !g || !ms || count < 1)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kgi_time_back_to_back: NULL argument or count < 1")
                   : KG_ERR_INVALID_ARG;
    *ms = 0;
    kg_status st = kgi_drv_enter(ctx);
    if (st != KG_OK)
        return st;
    const kgi_cu *cu = ctx->drv->cu;
    CUevent start = NULL, stop = NULL;
    CUresult rc;
    float t = 0;
    if ((rc = cu->EventCreate(&start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "cuEventCreate", rc);
        goto done;
    }
    if ((rc = cu->EventRecord(start, NULL)) != CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "cuEventRecord", rc);
        goto done;
    }
    for (int i = 0; i < count; i++)
        if ((st = kg_kernel_launch(ctx, kern, g, NULL)) != KG_OK)
            goto done;
    if ((rc = cu->EventRecord(stop, NULL)) != CUDA_SUCCESS || (rc = cu->EventSynchronize(stop)) != CUDA_SUCCESS ||
        (rc = cu->EventElapsedTime(&t, start, stop)) != CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "timing launches back to back (cuEventRecord/Synchronize/ElapsedTime)", rc);
        goto done;
    }
    *ms = (double)t / count;
done:
    if (start)
        cu->EventDestroy(start);
    if (stop)
        cu->EventDestroy(stop);
    kgi_drv_leave(ctx);
    return st;
}

int kgi_loop_count(double sample_ms, double per_launch_ms)
{
    double c = per_launch_ms > 0 ? ceil(sample_ms / per_launch_ms) : LOOP_MAX_COUNT;
    return c < 1 ? 1 : c > LOOP_MAX_COUNT ? LOOP_MAX_COUNT : (int)c;
}

kg_status kgi_time_loop(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, double sample_ms, int min_samples,
                        int max_samples, double max_seconds, kgi_timing *out)
{
    if (!ctx || !kern || !g || !out || !(sample_ms > 0) || min_samples < 1 || max_samples < min_samples)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kgi_time_loop: NULL argument or bad sample bounds")
                   : KG_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    double *ms = malloc((size_t)max_samples * sizeof *ms), *sorted = malloc((size_t)max_samples * sizeof *sorted);
    kg_status st = KG_OK;
    if (!ms || !sorted) {
        st = kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* the warm-up sizes the samples: one launch, then about a sample's worth
     * (one launch alone also carries the launch's latency) */
    double per;
    int count = 1;
    for (int pass = 0; pass < 2; pass++) {
        if ((st = kgi_time_back_to_back(ctx, kern, g, count, &per)) != KG_OK)
            goto done;
        count = kgi_loop_count(sample_ms, per);
    }
    double t0 = wall();
    for (int n = 1; n <= max_samples; n++) {
        if ((st = kgi_time_back_to_back(ctx, kern, g, count, &ms[n - 1])) != KG_OK)
            goto done;
        if (n < min_samples)
            continue;
        summarize(ms, sorted, n, out);
        if (out->spread < 0.02 || wall() - t0 >= max_seconds)
            break;
    }
done:
    free(ms);
    free(sorted);
    return st;
}
