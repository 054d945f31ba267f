/*
 * bench.c -- kgen-bench: kgen's fp32 GEMM against cuBLAS, side by side.
 *
 *   kgen-bench [--shapes FILE] [--layout nn|nt|tn|tt|all] [--csv FILE]
 *              [--no-db] [--template NAME --config "k=v ..." | --configs FILE]
 *              [--alpha A] [--beta B] [--ld-multiple L]
 *              [--samples N] [--min-ms T] [--device N]
 *   kgen-bench --device-name [--device N]
 *
 * For each shape ("tag M N K [LDA LDB LDC]" lines) and layout it makes
 * random A, B and C on the GPU, runs kg_matmul -- the tuned configuration
 * for this device and shape, its built-in choice with --no-db, or each
 * explicit kernel of --config / --configs (kg_kernel_get and
 * kg_kernel_launch) -- and cuBLAS SGEMM (FP32, pedantic math: no TF32) in
 * the same process on the same buffers, checks kgen's C against cuBLAS's
 * (C poisoned with NaN first when beta is 0, the padding between N and ldc
 * checked untouched; twice, with the timed alpha and beta and with a pair
 * of the other kind), times both with CUDA events and prints
 *
 *   tag layout M N K kgen_TFLOP/s cublas_TFLOP/s ratio error template configuration
 *
 * Explicit kernels are compiled first in parallel threads (CPU-only
 * contexts filling the disk cache), then loaded with kg_kernel_get.
 *
 * Timing: a warm-up, then samples of back-to-back calls (each sample at
 * least --min-ms long), the median per call; kgen and cuBLAS are each timed
 * twice, alternating, and the faster median of the two passes is kept, so
 * that a clock or thermal drift during the run falls on both alike. The L2
 * cache is not flushed between calls (for both).
 *
 * An explicit kernel whose preconditions a shape breaks (KG_ERR_SHAPE: e.g.
 * a bounds=0 kernel on a shape that is not a multiple of its tile) is
 * reported as skipped for that shape. Exit status: 0 all correct; 1 a wrong
 * result or a failure (no GPU: the message starts "kgen-bench: no GPU:"); 2
 * bad input, found before any GPU work (the --csv path too: its folder must
 * exist and be writable). With --csv the file is written at the end, as kgen
 * writes its files (common/write_file.c: a temporary file of a fresh name,
 * then rename; through a symbolic link; a device in place), once every
 * shape has run, wrong results marked in its `ok` column; a run that fails
 * part-way writes none.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "kgen.h"
#include "why.h"
#include "write_file.h"

#ifndef KGEN_SOURCE_DIR
#define KGEN_SOURCE_DIR "."
#endif

typedef struct run_arg {
    kg_context *ctx;
    const kg_kernel *kern;   /* an explicit kernel; NULL: kg_matmul */
    cublasHandle_t blas;
    const kgb_problem *p;
    float alpha, beta;
    float *c;
    kg_status status;        /* kgen's last status */
} run_arg;

static int run_kgen(void *arg)
{
    run_arg *r = arg;
    const kgb_problem *p = r->p;
    if (r->kern) {
        const kg_gemm g = {p->m, p->n, p->k, r->alpha, r->beta, p->a, p->lda, p->b, p->ldb, r->c, p->ldc};
        r->status = kg_kernel_launch(r->ctx, r->kern, &g, NULL);
    } else {
        r->status = kg_matmul(r->ctx, p->layout, p->m, p->n, p->k, r->alpha, p->a, p->lda, p->b, p->ldb, r->beta,
                              r->c, p->ldc, NULL);
    }
    if (r->status == KG_ERR_SHAPE && r->kern)
        return -1; /* the caller reports the shape as skipped */
    if (r->status != KG_OK) {
        fprintf(stderr, "kgen-bench: kgen: %s\n", kg_last_error(r->ctx));
        return -1;
    }
    return 0;
}

static int run_cublas(void *arg)
{
    const run_arg *r = arg;
    return kgb_cublas(r->blas, r->p, r->alpha, r->beta, r->c);
}

/* kgen and cuBLAS on the same operands with (alpha, beta): C starts as
 * c_init for both (beta != 0), or as NaN for kgen (beta == 0). Sets *err. */
static int check(run_arg *kg, run_arg *cb, float alpha, float beta, double *err)
{
    const kgb_problem *p = kg->p;
    kg->alpha = cb->alpha = alpha;
    kg->beta = cb->beta = beta;
    if (kgb_restore(p, p->c_ref) || run_cublas(cb) ||
        (beta == 0.0f ? kgb_poison(p->c, p->c_count) : kgb_restore(p, p->c)) || run_kgen(kg) ||
        kgb_cuda_ok(cudaDeviceSynchronize(), "kgen run"))
        return -1;
    return kgb_compare(p, p->c, p->c_ref, beta == 0.0f, err);
}

static const char *find_shapes(const char *given)
{
    if (given)
        return given;
    static const char *const candidates[] = {"bench/shapes.txt", KGEN_SOURCE_DIR "/bench/shapes.txt"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        FILE *f = fopen(candidates[i], "r");
        if (f) {
            fclose(f);
            return candidates[i];
        }
    }
    return candidates[0]; /* its open fails with a message naming it */
}

/* A CSV field: commas become semicolons. */
static void csv_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == ',' ? ';' : *s, f);
}

typedef struct bench {
    const kgb_opts *o;
    kg_context *ctx;
    cublasHandle_t blas;
    kg_device_info info;
    kg_kernel **kernels;     /* [spec * 4 + layout index], NULL where a spec does not run */
    FILE *csv;
    int wrong, skipped;
} bench;

/* One kgen runner (kg_matmul, or explicit kernel `spec`) on one problem:
 * checks, times, prints a row. Returns 0, or -1 on a failure that ends the
 * run (a fault may have left the CUDA context unusable). */
static int measure(bench *b, const kgb_shape *sh, kgb_problem *p, int spec, const kg_kernel *kern)
{
    const kgb_opts *o = b->o;
    run_arg kg = {b->ctx, kern, b->blas, p, 1.0f, 0.0f, p->c, KG_OK};
    run_arg cb = {b->ctx, NULL, b->blas, p, 1.0f, 0.0f, p->c_ref, KG_OK};
    /* The timed scalars, then a pair of the other kind: beta != 0 reads C,
     * beta == 0 must overwrite the poison. */
    float a2 = 0.75f, b2 = o->beta == 0.0f ? -1.5f : 0.0f;
    double err1 = INFINITY, err2 = INFINITY, tk[2], tb[2];
    int bad = check(&kg, &cb, a2, b2, &err2) || check(&kg, &cb, o->alpha, o->beta, &err1);
    if (bad && kg.status == KG_ERR_SHAPE && kern) {
        printf("%-8s %-2s %6d %6d %6d  skipped: %s  %s %s\n", sh->tag, p->layout, p->m, p->n, p->k,
               kg_last_error(b->ctx), o->specs[spec].tmpl, o->specs[spec].config);
        b->skipped++;
        return kgb_cuda_ok(cudaDeviceSynchronize(), "after a refused launch");
    }
    for (int pass = 0; pass < 2 && !bad; pass++)
        bad = kgb_time(run_cublas, &cb, o->samples, o->min_ms, &tb[pass]) ||
              kgb_time(run_kgen, &kg, o->samples, o->min_ms, &tk[pass]);
    if (bad) {
        fprintf(stderr, "kgen-bench: %s %s: failed (see above); a fault ends the run\n", sh->tag, p->layout);
        return -1;
    }
    double err = err1 > err2 ? err1 : err2;
    int ok = err <= kgb_tolerance(sh->k);
    b->wrong += !ok;
    double t_k = tk[0] < tk[1] ? tk[0] : tk[1], t_b = tb[0] < tb[1] ? tb[0] : tb[1];
    double flop = 2.0 * sh->m * (double)sh->n * sh->k;
    char tmpl[64] = "matmul", config[1200] = "", why[2048] = "";
    kg_kernel_info ki;
    if (kern) {
        snprintf(tmpl, sizeof tmpl, "%s", o->specs[spec].tmpl);
        if (kg_kernel_query(b->ctx, kern, &ki) == KG_OK)
            snprintf(config, sizeof config, "%s", ki.config); /* canonical: every parameter */
        else
            kgb_spec_config(&o->specs[spec], p->layout, config, sizeof config);
    } else {
        if (kg_matmul_explain(b->ctx, p->layout, sh->m, sh->n, sh->k, config, sizeof config, why, sizeof why) !=
            KG_OK)
            snprintf(config, sizeof config, "(unknown: %s)", kg_last_error(b->ctx));
        /* the template that ran, named at the reason's start ("[template T] tuned: ..."), where a tuned
         * entry's reason then says "tuned" */
        const char *rest = kgwhy_template(why, tmpl, sizeof tmpl);
        if (o->no_db && strncmp(rest, "tuned", 5) == 0) {
            fprintf(stderr, "kgen-bench: --no-db, but kg_matmul used a tuning database: %s\n", why);
            return -1;
        }
    }
    printf("%-8s %-2s %6d %6d %6d %9.2f %9.2f %7.3f %9.2e  %s%s %s\n", sh->tag, p->layout, sh->m, sh->n, sh->k,
           flop / (t_k * 1e9), flop / (t_b * 1e9), t_b / t_k, err, ok ? "" : "WRONG ", tmpl, config);
    fprintf(b->csv, "%s,%d,%d,%d,%.3f,%.3f,%.4f,%.5f,%.5f,%.3e,%d,", sh->tag, sh->m, sh->n, sh->k,
            flop / (t_k * 1e9), flop / (t_b * 1e9), t_b / t_k, t_k, t_b, err, ok);
    csv_text(b->csv, tmpl);
    fputc(',', b->csv);
    csv_text(b->csv, config);
    fputc(',', b->csv);
    csv_text(b->csv, b->info.name);
    fprintf(b->csv, ",%s,%d,%d,%d,%g,%g\n", p->layout, p->lda, p->ldb, p->ldc, o->alpha, o->beta);
    fflush(stdout);
    return 0;
}

/* Every runner on one shape in one layout. */
static int run_shape(bench *b, const kgb_shape *sh, int s, int l)
{
    const kgb_opts *o = b->o;
    kgb_problem p;
    if (kgb_problem_init(&p, o->layouts[l], sh, o->ld_mult, 7919u * (unsigned)(s + 1) + 31u * (unsigned)l))
        return -1;
    int rc = 0;
    if (o->nspecs == 0)
        rc = measure(b, sh, &p, -1, NULL);
    for (int i = 0; i < o->nspecs && rc == 0; i++)
        if (b->kernels[i * 4 + l])
            rc = measure(b, sh, &p, i, b->kernels[i * 4 + l]);
    kgb_problem_free(&p);
    return rc;
}

/* Precompiling: NVRTC runs in parallel threads, each with a CPU-only
 * context of its own, and fills the disk cache that kg_kernel_get then
 * reads, so that many --configs kernels do not compile one at a time. A
 * failure here is left to kg_kernel_get to report. */
typedef struct pool {
    const kgb_opts *o;
    int arch, next, total;
    pthread_mutex_t lock;
} pool;

static void *precompile_worker(void *arg)
{
    pool *pl = arg;
    const kgb_opts *o = pl->o;
    kg_context *cpu = NULL;
    if (kg_context_open(&cpu, KG_DEVICE_NONE) == KG_OK && kg_set_arch(cpu, pl->arch) == KG_OK) {
        for (;;) {
            pthread_mutex_lock(&pl->lock);
            int j = pl->next++;
            pthread_mutex_unlock(&pl->lock);
            if (j >= pl->total)
                break;
            char config[1200];
            const kgb_spec *spec = &o->specs[j / o->nlayouts];
            if (kgb_spec_config(spec, o->layouts[j % o->nlayouts], config, sizeof config))
                continue;
            kg_cubin *cubin = NULL;
            kg_compile(cpu, spec->tmpl, config, 0, &cubin);
            kg_cubin_free(cubin);
        }
    }
    kg_context_close(cpu);
    return NULL;
}

static void precompile(const kgb_opts *o, int arch)
{
    const char *cache = getenv("KGEN_CACHE");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    pool pl = {o, arch, 0, o->nspecs * o->nlayouts, PTHREAD_MUTEX_INITIALIZER};
    int nthreads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
    if (nthreads > pl.total)
        nthreads = pl.total;
    if (pl.total < 2 || nthreads < 2 || (cache && strcmp(cache, "0") == 0))
        return; /* nothing to gain, or no disk cache to fill */
    pthread_t th[16];
    int started = 0;
    while (started < nthreads && pthread_create(&th[started], NULL, precompile_worker, &pl) == 0)
        started++;
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&pl.lock);
}

/* Builds every explicit kernel in every layout it runs in (exit 1 on a
 * failure: the configuration rendered on the CPU, so the device refused it). */
static int get_kernels(bench *b)
{
    const kgb_opts *o = b->o;
    if (o->nspecs == 0)
        return 0;
    b->kernels = calloc((size_t)o->nspecs * 4, sizeof *b->kernels);
    if (!b->kernels) {
        fprintf(stderr, "kgen-bench: out of memory\n");
        return -1;
    }
    for (int i = 0; i < o->nspecs; i++)
        for (int l = 0; l < o->nlayouts; l++) {
            char config[1200];
            if (kgb_spec_config(&o->specs[i], o->layouts[l], config, sizeof config))
                continue;
            if (kg_kernel_get(b->ctx, o->specs[i].tmpl, config, &b->kernels[i * 4 + l]) != KG_OK) {
                fprintf(stderr, "kgen-bench: %s: %s\n", o->specs[i].origin, kg_last_error(b->ctx));
                return -1;
            }
        }
    return 0;
}

/* Opens the GPU; 0, or the exit status after printing why. */
static int open_device(bench *b)
{
    kg_status st = kg_context_open(&b->ctx, b->o->device);
    if (st != KG_OK) {
        fprintf(stderr, "kgen-bench: %s%s\n", st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE ? "no GPU: " : "",
                b->ctx ? kg_last_error(b->ctx) : kg_strerror(st));
        return 1;
    }
    if (kg_device_query(b->ctx, b->o->device, &b->info) != KG_OK) {
        fprintf(stderr, "kgen-bench: %s\n", kg_last_error(b->ctx));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    kgb_opts o;
    int prc = kgb_parse(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    bench b;
    memset(&b, 0, sizeof b);
    b.o = &o;
    if (o.device_name) {
        int rc = open_device(&b);
        if (rc == 0)
            printf("%s\n", b.info.name);
        kg_context_close(b.ctx);
        return rc;
    }
    /* kg_matmul keeps each shape's choice for kg_matmul_explain, which then
     * reports the kernel that ran (on these leading dimensions) rather than
     * the choice for packed operands. */
    if (setenv("KGEN_VERBOSE", "1", 1) != 0 || (o.no_db && kgb_no_db_begin(&o)))
        return 1;
    int rc = 0, ns = 0, completed = 0, total = 0;
    kgb_shape *shapes = NULL;
    const char *shapes_path = find_shapes(o.shapes);
    char *table = NULL; /* the CSV text, written at the end */
    size_t table_len = 0;
    if (kgw_not_input("kgen-bench", "--csv", o.csv, shapes_path) ||
        kgw_not_input("kgen-bench", "--csv", o.csv, o.configs) || kgb_load_specs(&o) ||
        (ns = kgb_read_shapes(shapes_path, &shapes)) < 0) {
        rc = 2;
        goto out;
    }
    for (int s = 0; s < ns; s++)
        for (int l = 0; l < o.nlayouts; l++)
            if (kgb_check_ld(&shapes[s], o.layouts[l]))
                rc = 2;
    if (rc || (rc = open_device(&b)) != 0)
        goto out;
    b.csv = open_memstream(&table, &table_len);
    if (!b.csv || kgb_cuda_ok(cudaSetDevice(o.device), "cudaSetDevice") || kgb_cublas_open(&b.blas)) {
        fprintf(stderr, "kgen-bench: setting up the device failed\n");
        rc = 1;
        goto out;
    }
    precompile(&o, b.info.cc_major * 10 + b.info.cc_minor);
    if (get_kernels(&b)) {
        rc = 1;
        goto out;
    }
    printf("# %s (sm_%d%d, %d SMs), shapes %s, layout%s", b.info.name, b.info.cc_major, b.info.cc_minor,
           b.info.sm_count, shapes_path, o.nlayouts > 1 ? "s" : "");
    for (int l = 0; l < o.nlayouts; l++)
        printf(" %s", o.layouts[l]);
    printf("; alpha %g, beta %g; cuBLAS SGEMM pedantic FP32; %s\n", o.alpha, o.beta,
           o.nspecs ? "explicit configurations"
                    : o.no_db ? "kg_matmul's choice without a tuning database" : "kg_matmul's choice");
    printf("%-8s %-2s %6s %6s %6s %9s %9s %7s %9s  %s\n", "tag", "ly", "M", "N", "K", "kgen", "cublas", "ratio",
           "error", "template configuration");
    fprintf(b.csv, "tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device,"
                   "layout,lda,ldb,ldc,alpha,beta\n");
    total = ns * o.nlayouts;
    for (int s = 0; s < ns && rc == 0; s++)
        for (int l = 0; l < o.nlayouts && rc == 0; l++) {
            if (run_shape(&b, &shapes[s], s, l))
                rc = 1;
            else
                completed++;
        }
    if (b.wrong)
        rc = 1;
    if (b.skipped)
        printf("# %d runs skipped: the shape breaks the kernel's preconditions\n", b.skipped);
out:
    if (b.csv)
        fclose(b.csv);
    if (o.csv && table && completed == total && total > 0) {
        if (kgw_write_file("kgen-bench", o.csv, table, table_len))
            rc = 1;
    } else if (o.csv && total > 0) {
        fprintf(stderr, "kgen-bench: %s not written: the run stopped after %d of %d shapes and layouts\n", o.csv,
                completed, total);
    }
    free(table);
    free(b.kernels);
    if (b.blas)
        cublasDestroy(b.blas);
    kg_context_close(b.ctx);
    kgb_free_specs(&o);
    free(shapes);
    kgb_no_db_end(&o);
    return rc;
}
