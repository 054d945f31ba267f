/*
 * bench_util.c -- shapes, operands, the cuBLAS reference, comparison and
 * timing for kgen's benchmark programs (see bench_util.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "runtime/internal.h"

int kgb_cuda_ok(cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess)
        return 0;
    fprintf(stderr, "kgen-bench: %s: %s (%s)\n", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
    return -1;
}

static int cublas_ok(cublasStatus_t rc, const char *what)
{
    if (rc == CUBLAS_STATUS_SUCCESS)
        return 0;
    fprintf(stderr, "kgen-bench: %s: cuBLAS status %d\n", what, (int)rc);
    return -1;
}

int kgb_read_shapes(const char *path, kgb_shape **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kgen-bench: cannot open shapes file '%s'\n", path);
        return -1;
    }
    kgb_shape *list = NULL;
    int n = 0, cap = 0, lineno = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        kgb_shape s;
        char extra[2];
        int got = sscanf(line, "%31s %d %d %d %1s", s.tag, &s.m, &s.n, &s.k, extra);
        if (got <= 0)
            continue; /* blank or comment */
        if (got != 4 || s.m < 1 || s.n < 1 || s.k < 1) {
            fprintf(stderr, "kgen-bench: %s:%d: expected 'tag M N K' with M, N, K >= 1\n", path, lineno);
            goto fail;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            kgb_shape *grown = realloc(list, (size_t)cap * sizeof *grown);
            if (!grown) {
                fprintf(stderr, "kgen-bench: out of memory\n");
                goto fail;
            }
            list = grown;
        }
        list[n++] = s;
    }
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "kgen-bench: %s: no shapes\n", path);
        free(list);
        return -1;
    }
    *out = list;
    return n;
fail:
    fclose(f);
    free(list);
    return -1;
}

static int upload_random(float **dst, size_t count, unsigned long long seed)
{
    float *host = malloc(count * sizeof *host);
    if (!host) {
        fprintf(stderr, "kgen-bench: out of host memory (%zu floats)\n", count);
        return -1;
    }
    kgi_fill_random(host, count, seed); /* libkgen's: uniform in (-1, 1), never 0 */
    int rc = kgb_cuda_ok(cudaMalloc((void **)dst, count * sizeof *host), "cudaMalloc");
    if (rc == 0)
        rc = kgb_cuda_ok(cudaMemcpy(*dst, host, count * sizeof *host, cudaMemcpyHostToDevice), "upload");
    free(host);
    return rc;
}

int kgb_problem_init(kgb_problem *p, const char *layout, int m, int n, int k, int ld_mult,
                     unsigned long long seed)
{
    if (ld_mult < 1)
        ld_mult = 1;
    memset(p, 0, sizeof *p);
    snprintf(p->layout, sizeof p->layout, "%s", layout);
    p->m = m, p->n = n, p->k = k;
    int at = layout[0] == 't', bt = layout[1] == 't';
    p->lda = at ? m : k; /* A stored M x K, or K x M when transposed */
    p->ldb = bt ? k : n; /* B stored K x N, or N x K */
    p->lda = (p->lda + ld_mult - 1) / ld_mult * ld_mult;
    p->ldb = (p->ldb + ld_mult - 1) / ld_mult * ld_mult;
    p->ldc = n;
    p->a_count = (size_t)(at ? k : m) * p->lda;
    p->b_count = (size_t)(bt ? n : k) * p->ldb;
    p->c_count = (size_t)m * n;
    if (upload_random(&p->a, p->a_count, seed) || upload_random(&p->b, p->b_count, seed + 1) ||
        upload_random(&p->c_init, p->c_count, seed + 2) ||
        kgb_cuda_ok(cudaMalloc((void **)&p->c, p->c_count * sizeof(float)), "cudaMalloc C") ||
        kgb_cuda_ok(cudaMalloc((void **)&p->c_ref, p->c_count * sizeof(float)), "cudaMalloc C")) {
        kgb_problem_free(p);
        return -1;
    }
    return 0;
}

void kgb_problem_free(kgb_problem *p)
{
    cudaFree(p->a);
    cudaFree(p->b);
    cudaFree(p->c);
    cudaFree(p->c_ref);
    cudaFree(p->c_init);
    memset(p, 0, sizeof *p);
}

int kgb_poison(float *c, size_t count)
{
    /* 0xff bytes are a NaN pattern in every float. */
    return kgb_cuda_ok(cudaMemset(c, 0xff, count * sizeof(float)), "poison C");
}

int kgb_restore(const kgb_problem *p, float *c)
{
    return kgb_cuda_ok(cudaMemcpy(c, p->c_init, p->c_count * sizeof(float), cudaMemcpyDeviceToDevice),
                       "restore C");
}

int kgb_cublas_open(cublasHandle_t *h)
{
    if (cublas_ok(cublasCreate(h), "cublasCreate"))
        return -1;
    if (cublas_ok(cublasSetMathMode(*h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode(PEDANTIC)")) {
        cublasDestroy(*h);
        return -1;
    }
    return 0;
}

int kgb_cublas(cublasHandle_t h, const kgb_problem *p, float alpha, float beta, float *c)
{
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T; a
     * row-major matrix read column-major is its transpose, so each operand
     * keeps its own op letter. */
    cublasOperation_t ta = p->layout[0] == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p->layout[1] == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    return cublas_ok(cublasSgemm(h, tb, ta, p->n, p->m, p->k, &alpha, p->b, p->ldb, p->a, p->lda, &beta, c,
                                 p->ldc),
                     "cublasSgemm");
}

int kgb_compare(const kgb_problem *p, const float *c, const float *ref, double *err)
{
    size_t n = p->c_count;
    float *hc = malloc(n * sizeof *hc), *hr = malloc(n * sizeof *hr);
    int rc = -1;
    if (!hc || !hr) {
        fprintf(stderr, "kgen-bench: out of host memory comparing results\n");
        goto out;
    }
    if (kgb_cuda_ok(cudaMemcpy(hc, c, n * sizeof *hc, cudaMemcpyDeviceToHost), "download C") ||
        kgb_cuda_ok(cudaMemcpy(hr, ref, n * sizeof *hr, cudaMemcpyDeviceToHost), "download C"))
        goto out;
    double maxdiff = 0.0, maxref = 0.0;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(hc[i]))
            bad = 1;
        double d = fabs((double)hc[i] - (double)hr[i]);
        if (d > maxdiff)
            maxdiff = d;
        if (fabs((double)hr[i]) > maxref)
            maxref = fabs((double)hr[i]);
    }
    *err = bad ? INFINITY : maxdiff / (maxref > 0.0 ? maxref : 1.0);
    rc = 0;
out:
    free(hc);
    free(hr);
    return rc;
}

double kgb_tolerance(int k) { return 5e-6 * sqrt((double)k) + 1e-6; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int kgb_time(kgb_run_fn run, void *arg, int samples, double min_ms, double *median_ms)
{
    cudaEvent_t e0, e1;
    if (kgb_cuda_ok(cudaEventCreate(&e0), "cudaEventCreate"))
        return -1;
    if (kgb_cuda_ok(cudaEventCreate(&e1), "cudaEventCreate")) {
        cudaEventDestroy(e0);
        return -1;
    }
    double *t = malloc((size_t)samples * sizeof *t);
    int rc = -1;
    float ms = 0.0f;
    if (!t)
        goto out;
    /* Warm-up, then one timed run to size the batches. */
    if (run(arg) || kgb_cuda_ok(cudaDeviceSynchronize(), "warm-up run"))
        goto out;
    if (kgb_cuda_ok(cudaEventRecord(e0, 0), "cudaEventRecord") || run(arg) ||
        kgb_cuda_ok(cudaEventRecord(e1, 0), "cudaEventRecord") ||
        kgb_cuda_ok(cudaEventSynchronize(e1), "timed run") ||
        kgb_cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime"))
        goto out;
    int batch = ms > 0.0f ? (int)ceil(min_ms / ms) : 100;
    if (batch < 1)
        batch = 1;
    if (batch > 1000)
        batch = 1000;
    for (int s = 0; s < samples; s++) {
        if (kgb_cuda_ok(cudaEventRecord(e0, 0), "cudaEventRecord"))
            goto out;
        for (int b = 0; b < batch; b++)
            if (run(arg))
                goto out;
        if (kgb_cuda_ok(cudaEventRecord(e1, 0), "cudaEventRecord") ||
            kgb_cuda_ok(cudaEventSynchronize(e1), "timed runs") ||
            kgb_cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime"))
            goto out;
        t[s] = (double)ms / batch;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    *median_ms = samples % 2 ? t[samples / 2] : 0.5 * (t[samples / 2 - 1] + t[samples / 2]);
    rc = 0;
out:
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}
