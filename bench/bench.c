/*
 * bench.c -- kgen-bench: kgen's fp32 GEMM against cuBLAS, side by side.
 *
 *   kgen-bench [--shapes FILE] [--csv FILE] [--layout nn|nt|tn|tt]
 *              [--template NAME --config "k=v ..."] [--samples N]
 *              [--min-ms T] [--device N]
 *
 * For each shape ("tag M N K" lines) it makes random A and B on the GPU,
 * runs kg_matmul -- the tuned configuration for this device and shape, or
 * with --config the given one -- and cuBLAS SGEMM (FP32, pedantic math: no
 * TF32) in the same process on the same buffers, checks kgen's C against
 * cuBLAS's (C poisoned with NaN first; once more with alpha and beta not 0
 * or 1), times both with CUDA events and prints
 *
 *   tag M N K kgen_TFLOP/s cublas_TFLOP/s ratio error configuration
 *
 * Timing: a warm-up, then samples of back-to-back calls (each sample at
 * least --min-ms long), the median per call; kgen and cuBLAS are each timed
 * twice, alternating, and the faster median of the two passes is kept, so
 * that a clock or thermal drift during the run falls on both alike. The L2
 * cache is not flushed between calls (for both).
 *
 * Exit status: 0 all correct; 1 a wrong result or a failure (no GPU: the
 * message starts "kgen-bench: no GPU:"); 2 usage or an invalid
 * configuration. With --csv the file is written at the end (temporary
 * file, then rename) once every shape has run, wrong results marked in its
 * `ok` column; a run that fails part-way writes none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kgen.h"

#ifndef KGEN_SOURCE_DIR
#define KGEN_SOURCE_DIR "."
#endif

typedef struct opts {
    const char *shapes, *csv, *layout, *tmpl, *config;
    int samples, device;
    double min_ms;
} opts;

typedef struct run_arg {
    kg_context *ctx;
    const kg_kernel *kern;   /* --config: this kernel; NULL: kg_matmul */
    cublasHandle_t blas;
    const kgb_problem *p;
    float alpha, beta;
    float *c;
} run_arg;

static int run_kgen(void *arg)
{
    const run_arg *r = arg;
    const kgb_problem *p = r->p;
    kg_status st;
    if (r->kern) {
        const kg_gemm g = {p->m, p->n, p->k, r->alpha, r->beta, p->a, p->lda, p->b, p->ldb, r->c, p->ldc};
        st = kg_kernel_launch(r->ctx, r->kern, &g, NULL);
    } else {
        st = kg_matmul(r->ctx, p->layout, p->m, p->n, p->k, r->alpha, p->a, p->lda, p->b, p->ldb, r->beta, r->c,
                       p->ldc, NULL);
    }
    if (st != KG_OK) {
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
 * c_init (beta != 0) or NaN (kgen, beta == 0). Sets *err. */
static int check(run_arg *kg, run_arg *cb, float alpha, float beta, double *err)
{
    const kgb_problem *p = kg->p;
    kg->alpha = cb->alpha = alpha;
    kg->beta = cb->beta = beta;
    if (kgb_restore(p, p->c_ref) || run_cublas(cb) || (beta == 0.0f ? kgb_poison(p->c, p->c_count) : kgb_restore(p, p->c)) ||
        run_kgen(kg) || kgb_cuda_ok(cudaDeviceSynchronize(), "kgen run"))
        return -1;
    return kgb_compare(p, p->c, p->c_ref, err);
}

static const char *find_shapes(const char *given)
{
    if (given)
        return given;
    static const char *const candidates[] = {"bench/shapes.txt", KGEN_SOURCE_DIR "/bench/shapes.txt",
                                             "../shared/bench/shapes.txt"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        FILE *f = fopen(candidates[i], "r");
        if (f) {
            fclose(f);
            return candidates[i];
        }
    }
    return candidates[0]; /* its open fails with a message naming it */
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kgen-bench [--shapes FILE] [--csv FILE] [--layout nn|nt|tn|tt]\n"
               "                  [--template NAME --config \"k=v ...\"] [--samples N] [--min-ms T] [--device N]\n"
               "  Times kg_matmul (or the --config kernel) against cuBLAS FP32 (pedantic, no TF32) on each\n"
               "  shape of FILE (default bench/shapes.txt), checks them against each other, prints\n"
               "  tag M N K kgen_TFLOP/s cublas_TFLOP/s ratio error configuration.\n");
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){NULL, NULL, "nn", NULL, NULL, 15, 0, 2.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "kgen-bench: %s needs a value (see --help)\n", a);
            return -1;
        }
        const char *v = argv[++i];
        char *end = NULL;
        if (strcmp(a, "--shapes") == 0) o->shapes = v;
        else if (strcmp(a, "--csv") == 0) o->csv = v;
        else if (strcmp(a, "--layout") == 0) o->layout = v;
        else if (strcmp(a, "--template") == 0) o->tmpl = v;
        else if (strcmp(a, "--config") == 0) o->config = v;
        else if (strcmp(a, "--samples") == 0) o->samples = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--device") == 0) o->device = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--min-ms") == 0) o->min_ms = strtod(v, &end);
        else {
            fprintf(stderr, "kgen-bench: unknown option '%s' (see --help)\n", a);
            return -1;
        }
        if (end && (*end || end == v)) {
            fprintf(stderr, "kgen-bench: %s: '%s' is not a number\n", a, v);
            return -1;
        }
    }
    if (strcmp(o->layout, "nn") && strcmp(o->layout, "nt") && strcmp(o->layout, "tn") && strcmp(o->layout, "tt")) {
        fprintf(stderr, "kgen-bench: --layout must be nn, nt, tn or tt (got '%s')\n", o->layout);
        return -1;
    }
    if (o->samples < 1 || o->samples > 1000 || o->device < 0 || !(o->min_ms >= 0.0 && o->min_ms <= 1000.0)) {
        fprintf(stderr, "kgen-bench: --samples must be 1..1000, --device >= 0, --min-ms 0..1000\n");
        return -1;
    }
    if (o->tmpl && !o->config) {
        fprintf(stderr, "kgen-bench: --template needs --config (without either, kg_matmul chooses)\n");
        return -1;
    }
    return 0;
}

/* The forced configuration with the layout added when it names none. */
static void forced_config(const opts *o, char *buf, size_t len)
{
    if (strstr(o->config, "layout="))
        snprintf(buf, len, "%s", o->config);
    else
        snprintf(buf, len, "%s layout=%s", o->config, o->layout);
}

/* Checks --config against its template before any GPU work (exit 2). */
static int validate_config(const opts *o)
{
    if (!o->config)
        return 0;
    kg_context *cpu;
    kg_status st = kg_context_open(&cpu, KG_DEVICE_NONE);
    char config[1200];
    forced_config(o, config, sizeof config);
    kg_source *src = NULL;
    if (st == KG_OK)
        st = kg_render(cpu, o->tmpl ? o->tmpl : "matmul", config, &src);
    if (st != KG_OK)
        fprintf(stderr, "kgen-bench: --config: %s\n", cpu ? kg_last_error(cpu) : kg_strerror(st));
    kg_source_free(src);
    kg_context_close(cpu);
    return st == KG_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) || validate_config(&o))
        return 2;
    const char *shapes_path = find_shapes(o.shapes);
    kgb_shape *shapes;
    int ns = kgb_read_shapes(shapes_path, &shapes);
    if (ns < 0)
        return 2;
    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, o.device);
    if (st != KG_OK) {
        fprintf(stderr, "kgen-bench: %s%s\n",
                st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE ? "no GPU: " : "", kg_last_error(ctx));
        kg_context_close(ctx);
        free(shapes);
        return 1;
    }
    kg_device_info info;
    cublasHandle_t blas;
    int rc = 0, completed = 0;
    char *table = NULL; /* the CSV text, written at the end */
    size_t table_len = 0;
    FILE *mem = open_memstream(&table, &table_len);
    if (!mem || kg_device_query(ctx, o.device, &info) != KG_OK || kgb_cuda_ok(cudaSetDevice(o.device), "cudaSetDevice") ||
        kgb_cublas_open(&blas)) {
        fprintf(stderr, "kgen-bench: setting up the device failed%s%s\n", mem ? ": " : "", mem ? kg_last_error(ctx) : "");
        if (mem)
            fclose(mem);
        free(table);
        kg_context_close(ctx);
        free(shapes);
        return 1;
    }
    kg_kernel *forced = NULL;
    char config[1200] = "", why[1024] = "";
    if (o.config) {
        forced_config(&o, config, sizeof config);
        if (kg_kernel_get(ctx, o.tmpl ? o.tmpl : "matmul", config, &forced) != KG_OK) {
            fprintf(stderr, "kgen-bench: --config: %s\n", kg_last_error(ctx));
            rc = 1;
            goto done;
        }
    }
    printf("# %s (sm_%d%d, %d SMs), shapes %s, layout %s; cuBLAS SGEMM pedantic FP32; %s\n", info.name,
           info.cc_major, info.cc_minor, info.sm_count, shapes_path, o.layout,
           forced ? "forced configuration" : "kg_matmul's choice");
    printf("%-8s %6s %6s %6s %9s %9s %7s %9s  %s\n", "tag", "M", "N", "K", "kgen", "cublas", "ratio", "error",
           "configuration");
    fprintf(mem, "tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device\n");
    for (int s = 0; s < ns; s++) {
        const kgb_shape *sh = &shapes[s];
        kgb_problem p;
        if (kgb_problem_init(&p, o.layout, sh->m, sh->n, sh->k, 1, 7919u * (unsigned)(s + 1))) {
            rc = 1;
            break;
        }
        run_arg kg = {ctx, forced, blas, &p, 1.0f, 0.0f, p.c};
        run_arg cb = {ctx, NULL, blas, &p, 1.0f, 0.0f, p.c_ref};
        double err1 = INFINITY, err2 = INFINITY, tk[2], tb[2];
        int bad = check(&kg, &cb, 0.75f, -1.5f, &err2) || check(&kg, &cb, 1.0f, 0.0f, &err1);
        if (!bad)
            for (int pass = 0; pass < 2 && !bad; pass++)
                bad = kgb_time(run_cublas, &cb, o.samples, o.min_ms, &tb[pass]) ||
                      kgb_time(run_kgen, &kg, o.samples, o.min_ms, &tk[pass]);
        if (bad) {
            fprintf(stderr, "kgen-bench: %s: failed (see above); a fault ends the run\n", sh->tag);
            kgb_problem_free(&p);
            rc = 1;
            break;
        }
        double err = err1 > err2 ? err1 : err2;
        int ok = err <= kgb_tolerance(sh->k);
        if (!ok)
            rc = 1;
        double t_k = tk[0] < tk[1] ? tk[0] : tk[1], t_b = tb[0] < tb[1] ? tb[0] : tb[1];
        double flop = 2.0 * sh->m * (double)sh->n * sh->k;
        char tmpl[64] = "matmul";
        if (forced) {
            snprintf(tmpl, sizeof tmpl, "%s", o.tmpl ? o.tmpl : "matmul");
        } else {
            if (kg_matmul_explain(ctx, o.layout, sh->m, sh->n, sh->k, config, sizeof config, why, sizeof why) != KG_OK)
                snprintf(config, sizeof config, "(unknown: %s)", kg_last_error(ctx));
            const char *t = strstr(why, "[template ");
            if (t)
                sscanf(t + 10, "%63[^]]", tmpl);
        }
        printf("%-8s %6d %6d %6d %9.2f %9.2f %7.3f %9.2e  %s%s %s\n", sh->tag, sh->m, sh->n, sh->k, flop / (t_k * 1e9),
               flop / (t_b * 1e9), t_b / t_k, err, ok ? "" : "WRONG ", tmpl, config);
        fprintf(mem, "%s,%d,%d,%d,%.3f,%.3f,%.4f,%.5f,%.5f,%.3e,%d,%s,%s,%s\n", sh->tag, sh->m, sh->n, sh->k,
                flop / (t_k * 1e9), flop / (t_b * 1e9), t_b / t_k, t_k, t_b, err, ok, tmpl, config, info.name);
        completed++;
        fflush(stdout);
        kgb_problem_free(&p);
    }
done:
    fclose(mem);
    if (o.csv && completed == ns) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", o.csv);
        FILE *f = fopen(tmp, "w");
        if (!f || fwrite(table, 1, table_len, f) != table_len || fclose(f) != 0 || rename(tmp, o.csv) != 0) {
            fprintf(stderr, "kgen-bench: cannot write %s\n", o.csv);
            remove(tmp);
            rc = 1;
        }
    } else if (o.csv) {
        fprintf(stderr, "kgen-bench: %s not written: the run stopped after %d of %d shapes\n", o.csv, completed, ns);
    }
    free(table);
    cublasDestroy(blas);
    kg_context_close(ctx);
    free(shapes);
    return rc;
}
