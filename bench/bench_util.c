/*
 * bench_util.c -- shapes, operands, the cuBLAS reference, comparison and
 * timing for kgen's benchmark programs (see bench_util.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

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

/* A size field: a whole number in [lo, INT_MAX]. */
static int parse_size(const char *tok, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (errno || *end || end == tok || v < lo || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int kgb_read_shapes(const char *path, kgb_shape **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kgen-bench: cannot open shapes file '%s': %s\n", path, strerror(errno));
        return -1;
    }
    kgb_shape *list = NULL;
    int n = 0, cap = 0, lineno = 0;
    char *line = NULL; /* a whole line, however long: no tail read as a line of its own */
    size_t line_cap = 0;
    while (getline(&line, &line_cap, f) >= 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *tok[8], *save = NULL;
        int nt = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            if (nt < 8)
                tok[nt] = t;
            nt++;
        }
        if (nt == 0)
            continue; /* blank or comment */
        kgb_shape s;
        memset(&s, 0, sizeof s);
        if ((nt != 4 && nt != 7) || strlen(tok[0]) >= sizeof s.tag) {
            fprintf(stderr, "kgen-bench: %s:%d: expected 'tag M N K' or 'tag M N K LDA LDB LDC' (a tag of at most %zu "
                    "characters)\n", path, lineno, sizeof s.tag - 1);
            goto fail;
        }
        snprintf(s.tag, sizeof s.tag, "%s", tok[0]);
        s.line = lineno;
        /* The CSV and kgen-bench-plot tell shapes apart by their tag: a
         * second shape under one tag would vanish from the chart. */
        for (int i = 0; i < n; i++)
            if (strcmp(list[i].tag, s.tag) == 0) {
                fprintf(stderr, "kgen-bench: %s:%d: tag '%s' given twice (first on line %d); each shape needs a "
                        "tag of its own\n", path, lineno, s.tag, list[i].line);
                goto fail;
            }
        if (parse_size(tok[1], 1, &s.m) || parse_size(tok[2], 1, &s.n) || parse_size(tok[3], 1, &s.k)) {
            fprintf(stderr, "kgen-bench: %s:%d: expected 'tag M N K' with M, N, K >= 1 and at most 2147483647 (got '%s %s %s')\n", path,
                    lineno, tok[1], tok[2], tok[3]);
            goto fail;
        }
        if (nt == 7 && (parse_size(tok[4], 1, &s.lda) || parse_size(tok[5], 1, &s.ldb) || parse_size(tok[6], 1, &s.ldc))) {
            fprintf(stderr, "kgen-bench: %s:%d: LDA, LDB, LDC must be whole numbers >= 1 (got '%s %s %s')\n", path,
                    lineno, tok[4], tok[5], tok[6]);
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
    if (ferror(f)) {
        fprintf(stderr, "kgen-bench: cannot read shapes file '%s': %s\n", path, strerror(errno));
        goto fail;
    }
    fclose(f);
    free(line);
    if (n == 0) {
        fprintf(stderr, "kgen-bench: %s: no shapes\n", path);
        free(list);
        return -1;
    }
    *out = list;
    return n;
fail:
    fclose(f);
    free(line);
    free(list);
    return -1;
}

void kgb_packed_ld(const char *layout, int m, int n, int k, int *lda, int *ldb, int *ldc)
{
    *lda = layout[0] == 't' ? m : k;
    *ldb = layout[1] == 't' ? k : n;
    *ldc = n;
}

int kgb_check_ld(const kgb_shape *s, const char *layout)
{
    if (!s->lda)
        return 0;
    int lda, ldb, ldc;
    kgb_packed_ld(layout, s->m, s->n, s->k, &lda, &ldb, &ldc);
    const char *name = s->lda < lda ? "LDA" : s->ldb < ldb ? "LDB" : s->ldc < ldc ? "LDC" : NULL;
    if (!name)
        return 0;
    fprintf(stderr, "kgen-bench: shape %s in layout %s: %s %d is shorter than a row (LDA >= %d, LDB >= %d, LDC >= %d)\n",
            s->tag, layout, name, name[2] == 'A' ? s->lda : name[2] == 'B' ? s->ldb : s->ldc, lda, ldb, ldc);
    return -1;
}

/* Uniform in (-1, 1), never 0, exact in fp32: (2m + 1 - 2^24) / 2^24 for a
 * 24-bit m from splitmix64. */
static void fill_random(float *x, size_t n, unsigned long long seed)
{
    unsigned long long s = seed;
    for (size_t i = 0; i < n; i++) {
        unsigned long long z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        long m = (long)(z >> 40);
        x[i] = (float)(2 * m + 1 - (1L << 24)) / 16777216.0f;
    }
}

static int upload_random(float **dst, size_t count, unsigned long long seed)
{
    float *host = malloc(count * sizeof *host);
    if (!host) {
        fprintf(stderr, "kgen-bench: out of host memory (%zu floats)\n", count);
        return -1;
    }
    fill_random(host, count, seed);
    int rc = kgb_cuda_ok(cudaMalloc((void **)dst, count * sizeof *host), "cudaMalloc");
    if (rc == 0)
        rc = kgb_cuda_ok(cudaMemcpy(*dst, host, count * sizeof *host, cudaMemcpyHostToDevice), "upload");
    free(host);
    return rc;
}

int kgb_problem_init(kgb_problem *p, const char *layout, const kgb_shape *s, int ld_mult,
                     unsigned long long seed)
{
    if (ld_mult < 1)
        ld_mult = 1;
    memset(p, 0, sizeof *p);
    snprintf(p->layout, sizeof p->layout, "%s", layout);
    p->m = s->m, p->n = s->n, p->k = s->k;
    kgb_packed_ld(layout, s->m, s->n, s->k, &p->lda, &p->ldb, &p->ldc);
    if (s->lda) {
        p->lda = s->lda, p->ldb = s->ldb, p->ldc = s->ldc;
    } else {
        p->lda = (p->lda + ld_mult - 1) / ld_mult * ld_mult;
        p->ldb = (p->ldb + ld_mult - 1) / ld_mult * ld_mult;
    }
    int at = layout[0] == 't', bt = layout[1] == 't';
    p->a_count = (size_t)(at ? s->k : s->m) * p->lda; /* A stored M x K, or K x M when transposed */
    p->b_count = (size_t)(bt ? s->n : s->k) * p->ldb; /* B stored K x N, or N x K */
    p->c_count = (size_t)s->m * p->ldc;
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

int kgb_compare(const kgb_problem *p, const float *c, const float *ref, int poisoned, double *err)
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
    size_t padding_changed = 0;
    for (int r = 0; r < p->m; r++) {
        const float *cr = hc + (size_t)r * p->ldc, *rr = hr + (size_t)r * p->ldc;
        for (int j = 0; j < p->n; j++) {
            if (!isfinite(cr[j]))
                bad = 1;
            double d = fabs((double)cr[j] - (double)rr[j]);
            if (d > maxdiff)
                maxdiff = d;
            if (fabs((double)rr[j]) > maxref)
                maxref = fabs((double)rr[j]);
        }
        for (int j = p->n; j < p->ldc; j++) {
            /* kgb_poison's pattern: every byte 0xff */
            static const unsigned char poison[sizeof(float)] = {0xff, 0xff, 0xff, 0xff};
            if (memcmp(&cr[j], poisoned ? (const void *)poison : (const void *)&rr[j], sizeof(float)) != 0)
                padding_changed++;
        }
    }
    if (padding_changed)
        fprintf(stderr, "kgen-bench: %zu values of C between N = %d and ldc = %d were written\n", padding_changed,
                p->n, p->ldc);
    *err = bad || padding_changed ? INFINITY : maxdiff / (maxref > 0.0 ? maxref : 1.0);
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
