/*
 * harness.c -- kgen-harness: times many explicit kernel configurations
 * against cuBLAS, for exploring a template's space by hand before (and
 * beside) the tuner.
 *
 *   kgen-harness --configs FILE [--shapes FILE] [--csv FILE] [--alpha A]
 *                [--beta B] [--samples N] [--min-ms T] [--ld-multiple L]
 *                [--overlap 0-4] [--compile-only DIR]
 *
 * FILE of configurations: one per line, "TEMPLATE k=v k=v ..." ('#'
 * comments). Every configuration is rendered with libkgen and compiled with
 * NVRTC for sm_90 in parallel threads (the same compiler and options as
 * kg_matmul); --compile-only writes the CUBINs and the ptxas report there
 * and needs no GPU. Otherwise each configuration runs on every shape (in the
 * layout its configuration names) on fresh random operands, after cuBLAS
 * (FP32, pedantic) on the same buffers: the harness checks kgen's C against
 * cuBLAS's (C poisoned with NaN first) and times both with CUDA events.
 *
 * It launches through the CUDA runtime's library API (cudaLibraryLoadData),
 * not kg_kernel_launch, so that it runs independently of libkgen's
 * launcher; the launch geometry is the template's, read from kg_source.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "runtime/internal.h"

#define MAX_CONFIGS 256

typedef struct cand {
    char tmpl[64];
    char config[1024];
    kg_source *src;
    kgi_nvrtc_result bin;
    char *err;            /* compile error, or NULL */
    cudaLibrary_t lib;
    cudaKernel_t kern, pre;
    unsigned persist;      /* a persistent grid ("P"): SMs x the kernel's blocks per SM */
} cand;

typedef struct launch_arg {
    const cand *c;         /* kgen's kernel, or NULL for cuBLAS */
    cublasHandle_t blas;
    const kgb_problem *p;
    float alpha, beta;
    float *out;
} launch_arg;

static unsigned grid_dim(const kgi_geometry *g, int i, const kgb_problem *p, unsigned persist)
{
    unsigned v = 1;
    switch (g->grid[i].dim) {
    case 'P': v = persist; break;
    case 'M': v = (unsigned)p->m; break;
    case 'N': v = (unsigned)p->n; break;
    case 'K': v = (unsigned)p->k; break;
    default: v = 1; break;
    }
    return (v + g->grid[i].div - 1) / g->grid[i].div * g->grid[i].mul;
}

/* How a main kernel whose pre kernel allows it (kg_source.pre_overlap) is
 * launched: 0 after the pre kernel; 1 overlapping it (programmatic stream
 * serialization, sm_90); 2 overlapping, both kernels preferring the largest
 * shared-memory carveout; 3 overlapping, the pre kernel preferring the
 * largest carveout; 4 (libkgen's launcher) overlapping, the pre kernel
 * preferring the carveout the main kernel needs. */
static int overlap_pre = 4;

static int launch_one(cudaKernel_t k, const kgi_geometry *g, unsigned persist, const launch_arg *la, int overlap)
{
    const kgb_problem *p = la->p;
    int m = p->m, n = p->n, kk = p->k, lda = p->lda, ldb = p->ldb, ldc = p->ldc;
    float alpha = la->alpha, beta = la->beta;
    const float *a = p->a, *b = p->b;
    float *c = la->out;
    void *args[] = {&m, &n, &kk, &alpha, &a, &lda, &b, &ldb, &beta, &c, &ldc};
    dim3 grid = {grid_dim(g, 0, p, persist), grid_dim(g, 1, p, persist), grid_dim(g, 2, p, persist)};
    dim3 block = {g->block[0], g->block[1], g->block[2]};
    if (overlap) {
        cudaLaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t lc;
        memset(&lc, 0, sizeof lc);
        lc.gridDim = grid;
        lc.blockDim = block;
        lc.dynamicSmemBytes = g->smem_dynamic;
        lc.stream = 0;
        lc.attrs = &attr;
        lc.numAttrs = 1;
        return kgb_cuda_ok(cudaLaunchKernelExC(&lc, (const void *)k, args), "launch (overlapped)");
    }
    return kgb_cuda_ok(cudaLaunchKernel((const void *)k, grid, block, args, g->smem_dynamic, 0), "launch");
}

/* One kgen run: the pre kernel (split-K's beta pass), then the kernel. */
static int run_kgen(void *arg)
{
    const launch_arg *la = arg;
    if (la->c->pre && launch_one(la->c->pre, &la->c->src->pre_geo, la->c->persist, la, 0))
        return -1;
    return launch_one(la->c->kern, &la->c->src->geo, la->c->persist, la,
                      la->c->pre && la->c->src->pre_overlap && overlap_pre);
}

static int run_cublas(void *arg)
{
    const launch_arg *la = arg;
    return kgb_cublas(la->blas, la->p, la->alpha, la->beta, la->out);
}

/* NVRTC is thread-safe: compile candidates in parallel. */
typedef struct pool {
    cand *cands;
    int n, next;
    pthread_mutex_t lock;
} pool;

static void *compile_worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        int i = pl->next++;
        pthread_mutex_unlock(&pl->lock);
        if (i >= pl->n)
            return NULL;
        cand *c = &pl->cands[i];
        if (c->src)
            kgi_nvrtc_compile(c->src->text, c->src->entry, 90, &c->bin, &c->err);
    }
}

static int read_configs(const char *path, cand *cands, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kgen-harness: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[1200];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char tmpl[64];
        int used = 0;
        if (sscanf(line, "%63s %n", tmpl, &used) != 1)
            continue;
        if (n == max) {
            fprintf(stderr, "kgen-harness: %s: more than %d configurations\n", path, max);
            fclose(f);
            return -1;
        }
        memset(&cands[n], 0, sizeof cands[n]);
        snprintf(cands[n].tmpl, sizeof cands[n].tmpl, "%s", tmpl);
        snprintf(cands[n].config, sizeof cands[n].config, "%s", line + used);
        cands[n].config[strcspn(cands[n].config, "\r\n")] = '\0';
        n++;
    }
    fclose(f);
    return n;
}

static int write_file(const char *dir, const char *name, const char *ext, const void *data, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "kgen-harness: cannot write %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* Which precondition of the kernel the shape breaks, or NULL. */
static const char *refuses(const kgi_geometry *g, const kgb_problem *p)
{
    if (g->pack_multiple > 1)
        return "pack=1 needs libkgen's launcher (the packed operands' workspace): time it with kgen-bench --config";
    if (p->m % (int)g->m_multiple || p->n % (int)g->n_multiple || p->k % (int)g->k_multiple)
        return "shape not a multiple of the tile";
    if (p->lda % (int)g->ld_multiple || p->ldb % (int)g->ld_multiple)
        return "lda/ldb not a multiple of vec";
    return NULL;
}

/* The device and its two ceilings' inputs: a device-to-device copy's
 * bandwidth (bytes read plus written) and the SM clock. */
static int device_info(void)
{
    int dev = 0, sms = 0, clock_khz = 0, l2 = 0;
    char name[256] = "";
    struct cudaDeviceProp prop;
    if (kgb_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice") ||
        kgb_cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties") ||
        kgb_cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "attribute") ||
        kgb_cuda_ok(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev), "attribute") ||
        kgb_cuda_ok(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "attribute"))
        return -1;
    snprintf(name, sizeof name, "%s", prop.name);
    size_t bytes = (size_t)2 << 30;
    void *a, *b;
    if (kgb_cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc") || kgb_cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc"))
        return -1;
    cudaEvent_t e0, e1;
    float best = 1e30f;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int r = 0; r < 6; r++) {
        float ms;
        if (kgb_cuda_ok(cudaEventRecord(e0, 0), "record") ||
            kgb_cuda_ok(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "copy") ||
            kgb_cuda_ok(cudaEventRecord(e1, 0), "record") || kgb_cuda_ok(cudaEventSynchronize(e1), "sync") ||
            kgb_cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed"))
            return -1;
        if (r > 0 && ms < best)
            best = ms;
    }
    printf("device %s: %d SMs, SM clock %.0f MHz (FP32 peak %.1f TFLOP/s at 128 lanes/SM), L2 %d MB\n", name, sms,
           clock_khz / 1e3, sms * 128.0 * 2.0 * clock_khz / 1e9, l2 >> 20);
    printf("device-to-device copy of %zu MB: %.0f GB/s (read + write, best of 5)\n", bytes >> 20,
           2.0 * bytes / (best * 1e6));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kgen-harness --configs FILE [--shapes FILE] [--csv FILE] [--alpha A] [--beta B]\n"
               "                    [--samples N] [--min-ms T] [--ld-multiple L] [--compile-only DIR]\n"
               "                    [--overlap 0-4]\n"
               "       (--ld-multiple: lda and ldb rounded up to a multiple of L, as packed operands;\n"
               "        --overlap: split-K's beta pass and main kernel 0 one after the other, 1 overlapped,\n"
               "        2 overlapped with both preferring the largest shared-memory carveout, 3 with the beta\n"
               "        pass preferring it, 4 (default, as libkgen) with the beta pass preferring the main\n"
               "        kernel's carveout)\n"
               "       kgen-harness --info    (the device, its SM clock and copy bandwidth)\n");
}

int main(int argc, char **argv)
{
    const char *cfg_path = NULL, *shapes_path = "bench/shapes.txt", *csv_path = NULL, *outdir = NULL;
    float alpha = 1.0f, beta = 0.0f;
    int samples = 15, ld_mult = 1;
    double min_ms = 2.0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(o, "--info") == 0)
            return device_info() ? 1 : 0;
        if (!v) {
            fprintf(stderr, "kgen-harness: %s needs a value\n", o);
            return 2;
        }
        i++;
        if (strcmp(o, "--configs") == 0) cfg_path = v;
        else if (strcmp(o, "--shapes") == 0) shapes_path = v;
        else if (strcmp(o, "--csv") == 0) csv_path = v;
        else if (strcmp(o, "--compile-only") == 0) outdir = v;
        else if (strcmp(o, "--alpha") == 0) alpha = strtof(v, NULL);
        else if (strcmp(o, "--beta") == 0) beta = strtof(v, NULL);
        else if (strcmp(o, "--samples") == 0) samples = atoi(v);
        else if (strcmp(o, "--min-ms") == 0) min_ms = atof(v);
        else if (strcmp(o, "--ld-multiple") == 0) ld_mult = atoi(v);
        else if (strcmp(o, "--overlap") == 0) overlap_pre = atoi(v);
        else {
            fprintf(stderr, "kgen-harness: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
    }
    if (!cfg_path || samples < 1 || samples > 1000 || !(min_ms >= 0.0) || ld_mult < 1 || ld_mult > 64) {
        usage(stderr);
        return 2;
    }
    static cand cands[MAX_CONFIGS];
    int nc = read_configs(cfg_path, cands, MAX_CONFIGS);
    if (nc <= 0) {
        fprintf(stderr, "kgen-harness: no configurations in %s\n", cfg_path);
        return nc < 0 ? 1 : 2;
    }
    kg_context *ctx = NULL;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_set_arch(ctx, 90) != KG_OK) {
        fprintf(stderr, "kgen-harness: %s\n", ctx ? kg_last_error(ctx) : "out of memory");
        kg_context_close(ctx);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < nc; i++)
        if (kg_render(ctx, cands[i].tmpl, cands[i].config, &cands[i].src) != KG_OK) {
            fprintf(stderr, "kgen-harness: %s %s: %s\n", cands[i].tmpl, cands[i].config, kg_last_error(ctx));
            cands[i].src = NULL;
            rc = 2;
        }
    pool pl = {cands, nc, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[16];
    int nth = nc < 16 ? nc : 16;
    for (int t = 0; t < nth; t++)
        pthread_create(&th[t], NULL, compile_worker, &pl);
    for (int t = 0; t < nth; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < nc; i++) {
        cand *c = &cands[i];
        if (!c->src)
            continue;
        if (c->err) {
            fprintf(stderr, "kgen-harness: %s: %s\n", c->src->config, c->err);
            rc = 1;
            continue;
        }
        const kg_compile_info *ci = &c->bin.info;
        printf("compiled %-3d regs %3d spill %d/%d stack %d smem %zu+%zu  %s\n", i, ci->registers,
               ci->spill_stores, ci->spill_loads, ci->stack_bytes, c->src->geo.smem_static,
               c->src->geo.smem_dynamic, c->src->config);
        if (outdir) {
            mkdir(outdir, 0777);
            if (write_file(outdir, c->src->entry, "cubin", c->bin.cubin, c->bin.cubin_size) ||
                write_file(outdir, c->src->entry, "cu", c->src->text, c->src->len))
                rc = 1;
        }
    }
    if (outdir) {
        kg_context_close(ctx);
        return rc;
    }

    /* Load every compiled candidate on the device. */
    for (int i = 0; i < nc; i++) {
        cand *c = &cands[i];
        if (!c->src || c->err)
            continue;
        if (kgb_cuda_ok(cudaLibraryLoadData(&c->lib, c->bin.cubin, NULL, NULL, 0, NULL, NULL, 0), "load") ||
            kgb_cuda_ok(cudaLibraryGetKernel(&c->kern, c->lib, c->src->entry), c->src->entry) ||
            (c->src->pre_entry[0] &&
             kgb_cuda_ok(cudaLibraryGetKernel(&c->pre, c->lib, c->src->pre_entry), c->src->pre_entry)) ||
            (c->src->geo.smem_dynamic > 0 &&
             kgb_cuda_ok(cudaFuncSetAttribute((const void *)c->kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)c->src->geo.smem_dynamic),
                         "raise dynamic shared memory"))) {
            kg_context_close(ctx);
            return 1;
        }
        /* --overlap 2: both kernels prefer the largest shared-memory carveout;
         * 3: only the pre kernel does (an SM runs blocks of both only when
         * their carveouts agree) */
        if (c->pre && overlap_pre >= 2 &&
            ((overlap_pre == 2 &&
              kgb_cuda_ok(cudaFuncSetAttribute((const void *)c->kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                                               cudaSharedmemCarveoutMaxShared), "carveout")) ||
             kgb_cuda_ok(cudaFuncSetAttribute((const void *)c->pre, cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared), "carveout (pre)"))) {
            kg_context_close(ctx);
            return 1;
        }
        int blocks = 0, sms = 0, dev = 0;
        const kgi_geometry *g = &c->src->geo;
        if (kgb_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice") ||
            kgb_cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count") ||
            kgb_cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)c->kern,
                                                                      (int)(g->block[0] * g->block[1] * g->block[2]),
                                                                      g->smem_dynamic),
                        "occupancy")) {
            kg_context_close(ctx);
            return 1;
        }
        c->persist = (unsigned)(sms * (blocks > 0 ? blocks : 1));
        /* --overlap 4: the pre kernel prefers the carveout the main kernel
         * needs at its occupancy (sm_90's capacities), so that an SM holding
         * both is configured as the main kernel alone would be */
        if (c->pre && overlap_pre == 4) {
            int reserved = 0, smem_sm = 0;
            if (kgb_cuda_ok(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev),
                            "reserved shared memory") ||
                kgb_cuda_ok(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev),
                            "shared memory per SM") ||
                kgb_cuda_ok(cudaFuncSetAttribute((const void *)c->pre, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                 kgi_carveout_percent((size_t)smem_sm, (size_t)reserved, blocks,
                                                                      g->smem_static + g->smem_dynamic)),
                            "carveout (pre, matched)")) {
                kg_context_close(ctx);
                return 1;
            }
        }
    }
    kgb_shape *shapes;
    int ns = kgb_read_shapes(shapes_path, &shapes);
    if (ns < 0) {
        kg_context_close(ctx);
        return 2;
    }
    cublasHandle_t blas;
    if (kgb_cublas_open(&blas)) {
        kg_context_close(ctx);
        return 1;
    }
    FILE *csv = NULL;
    if (csv_path) {
        if (!(csv = fopen(csv_path, "w"))) {
            fprintf(stderr, "kgen-harness: cannot write %s\n", csv_path);
            return 1;
        }
        fprintf(csv, "tag,layout,M,N,K,kgen_ms,kgen_tflops,cublas_ms,cublas_tflops,ratio,error,regs,config\n");
    }
    printf("%-8s %-2s %5s %5s %5s %8s %8s %6s %9s %4s  %s\n", "tag", "ly", "M", "N", "K", "kgen", "cublas",
           "ratio", "error", "regs", "config");
    static const char *layouts[] = {"nn", "nt", "tn", "tt"};
    for (int s = 0; s < ns; s++) {
        const kgb_shape *sh = &shapes[s];
        double flop = 2.0 * sh->m * (double)sh->n * sh->k;
        for (int l = 0; l < 4; l++) {
            int any = 0;
            for (int i = 0; i < nc; i++)
                any |= cands[i].src && !cands[i].err && strcmp(cands[i].src->geo.layout, layouts[l]) == 0;
            if (!any)
                continue;
            kgb_problem p;
            if (kgb_problem_init(&p, layouts[l], sh->m, sh->n, sh->k, ld_mult, 1000u + 17u * (unsigned)s)) {
                rc = 1;
                goto done;
            }
            launch_arg ref = {NULL, blas, &p, alpha, beta, p.c_ref};
            double t_blas;
            if (kgb_restore(&p, p.c_ref) || run_cublas(&ref) || kgb_cuda_ok(cudaDeviceSynchronize(), "cuBLAS") ||
                kgb_time(run_cublas, &ref, samples, min_ms, &t_blas) || kgb_restore(&p, p.c_ref) ||
                run_cublas(&ref) || kgb_cuda_ok(cudaDeviceSynchronize(), "cuBLAS")) {
                rc = 1;
                kgb_problem_free(&p);
                goto done;
            }
            for (int i = 0; i < nc; i++) {
                cand *c = &cands[i];
                if (!c->src || c->err || strcmp(c->src->geo.layout, layouts[l]) != 0)
                    continue;
                const char *why = refuses(&c->src->geo, &p);
                if (why) {
                    printf("%-8s %-2s %5d %5d %5d  skipped: %s  %s\n", sh->tag, p.layout, p.m, p.n, p.k, why,
                           c->src->config);
                    continue;
                }
                launch_arg la = {c, blas, &p, alpha, beta, p.c};
                double err = INFINITY, t = 0.0;
                int bad = (beta == 0.0f ? kgb_poison(p.c, p.c_count) : kgb_restore(&p, p.c)) || run_kgen(&la) ||
                          kgb_cuda_ok(cudaDeviceSynchronize(), c->src->entry) || kgb_compare(&p, p.c, p.c_ref, &err);
                if (bad) {
                    /* A fault poisons the CUDA context: nothing after it can be trusted. */
                    printf("%-8s FAILED to run: %s\n", sh->tag, c->src->config);
                    rc = 1;
                    kgb_problem_free(&p);
                    goto done;
                }
                int ok = err <= kgb_tolerance(p.k);
                if (ok && kgb_time(run_kgen, &la, samples, min_ms, &t)) {
                    rc = 1;
                    kgb_problem_free(&p);
                    goto done;
                }
                if (!ok)
                    rc = 1;
                double tf = ok ? flop / (t * 1e9) : 0.0, tb = flop / (t_blas * 1e9);
                printf("%-8s %-2s %5d %5d %5d %8.2f %8.2f %6.3f %9.2e %4d  %s%s\n", sh->tag, p.layout, p.m, p.n,
                       p.k, tf, tb, ok ? t_blas / t : 0.0, err, c->bin.info.registers, ok ? "" : "WRONG ",
                       c->src->config);
                if (csv)
                    fprintf(csv, "%s,%s,%d,%d,%d,%.5f,%.3f,%.5f,%.3f,%.4f,%.3e,%d,%s\n", sh->tag, p.layout, p.m,
                            p.n, p.k, t, tf, t_blas, tb, ok ? t_blas / t : 0.0, err, c->bin.info.registers,
                            c->src->config);
                fflush(stdout);
            }
            /* cuBLAS again: how much the clocks drifted while the candidates ran */
            double t_again;
            if (kgb_time(run_cublas, &ref, samples, min_ms, &t_again) == 0)
                printf("%-8s %-2s cuBLAS again: %.2f TFLOP/s (first %.2f)\n", sh->tag, p.layout, flop / (t_again * 1e9),
                       flop / (t_blas * 1e9));
            kgb_problem_free(&p);
        }
    }
done:
    if (csv)
        fclose(csv);
    cublasDestroy(blas);
    free(shapes);
    for (int i = 0; i < nc; i++) {
        if (cands[i].lib)
            cudaLibraryUnload(cands[i].lib);
        kgi_nvrtc_result_free(&cands[i].bin);
        free(cands[i].err);
        kg_source_free(cands[i].src);
    }
    kg_context_close(ctx);
    return rc;
}
