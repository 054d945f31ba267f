/*
 * cmd_runtime.c -- the subcommands that go through libkgen's runtime:
 * `kgen compile` (CUBIN and its resources, no GPU needed), `kgen device`
 * (what each GPU can do) and `kgen run` (one kernel on random data, checked
 * against the float64 reference and timed).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/config.h"
#include "runtime/internal.h"

/* Strict float parsing: the whole string, finite. */
static int parse_float(const char *opt, const char *text, float *out)
{
    if (!text || !text[0]) {
        fprintf(stderr, "kgen: %s: missing value\n", opt);
        return -1;
    }
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (*end || end == text || errno == ERANGE || !isfinite(v) || fabs(v) > 3.0e38) {
        fprintf(stderr, "kgen: %s: '%s' is not a finite number\n", opt, text);
        return -1;
    }
    *out = (float)v;
    return 0;
}

static const char *cache_name(int cache)
{
    return cache == 1 ? "memory cache" : cache == 2 ? "disk cache" : "compiled now";
}

/* ------------------------------------------------------------ kgen compile */

int kgc_cmd_compile(int argc, char **argv)
{
    const char *output = NULL;
    const kgc_opt own[] = {{"-o", "--output", 1, &output}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto out;
    /* No --arch: the first GPU's architecture where there is one. */
    const char *target = "--arch";
    if (!args.arch) {
        int count = 0;
        kg_device_info info;
        if (kg_device_count(ctx, &count) == KG_OK && count > 0 && kg_device_query(ctx, 0, &info) == KG_OK &&
            kg_set_arch(ctx, info.cc_major * 10 + info.cc_minor) == KG_OK)
            target = "GPU 0";
        else
            target = "default, no GPU found; use --arch";
    }
    kg_cubin *cubin;
    kg_status st = kg_compile(ctx, args.tmpl, args.config, 0, &cubin);
    if (st != KG_OK) {
        rc = kgc_report(ctx, st, NULL);
        goto out;
    }
    const kg_compile_info *ci = kg_cubin_info(cubin);
    size_t size;
    const void *data = kg_cubin_data(cubin, &size);
    printf("target          %s (%s)\n", ci->arch, target);
    printf("registers       %d per thread\n", ci->registers);
    printf("spills          %d bytes stored, %d bytes loaded; stack frame %d bytes\n", ci->spill_stores,
           ci->spill_loads, ci->stack_bytes);
    printf("shared memory   %zu bytes static, %zu bytes dynamic\n", ci->smem_static, ci->smem_dynamic);
    printf("cubin           %zu bytes\n", ci->cubin_size);
    if (ci->cache)
        printf("compile time    0 ms (from the %s)\n", cache_name(ci->cache));
    else
        printf("compile time    %.1f ms (NVRTC)\n", ci->compile_ms);
    const char *why;
    const char *dir = kgi_cache_dir(ctx, &why);
    printf("disk cache      %s%s%s\n", dir ? dir : why, dir && why[0] ? "; " : "", dir ? why : "");
    rc = output && kgc_write_file(output, data, size) != 0 ? KGC_FAIL : KGC_OK;
    kg_cubin_free(cubin);
out:
    kg_context_close(ctx);
    return rc;
}

/* ------------------------------------------------------------ kgen device */

static void print_device(const kg_device_info *d, int driver)
{
    double lanes = d->sm_count && d->sm_clock_khz ? d->peak_fp32_tflops * 1e12 / (2.0 * d->sm_count * d->sm_clock_khz * 1e3) : 0;
    if (d->ordinal >= 0)
        printf("Device %d: \"%s\"\n", d->ordinal, d->name);
    else
        printf("Offline limits: %s\n", d->name);
    if (driver)
        printf("  CUDA driver version                            %d.%d\n", driver / 1000, driver % 1000 / 10);
    printf("  NVRTC version                                  %d.%d\n", kgi_nvrtc_version() / 1000,
           kgi_nvrtc_version() % 1000 / 10);
    printf("  Compute capability                             %d.%d (sm_%d%d)\n", d->cc_major, d->cc_minor, d->cc_major,
           d->cc_minor);
    if (d->total_mem)
        printf("  Total global memory                            %zu MiB (%zu bytes)\n", d->total_mem >> 20, d->total_mem);
    printf("  Multiprocessors (SMs) x FP32 lanes per SM      %d x %.0f = %.0f FP32 lanes\n", d->sm_count, lanes,
           d->sm_count * lanes);
    printf("  GPU max clock rate                             %d MHz (%.2f GHz)\n", d->sm_clock_khz / 1000,
           d->sm_clock_khz / 1e6);
    if (d->mem_clock_khz)
        printf("  Memory clock rate                              %d MHz\n", d->mem_clock_khz / 1000);
    if (d->bus_width_bits)
        printf("  Memory bus width                               %d-bit\n", d->bus_width_bits);
    printf("  Peak memory bandwidth                          %.1f GB/s%s\n", d->peak_bandwidth_gbs,
           d->bus_width_bits ? " (2 x memory clock x bus width / 8)" : " (datasheet)");
    printf("  Peak FP32                                      %.1f TFLOP/s (SMs x lanes x 2 x clock)\n",
           d->peak_fp32_tflops);
    printf("  L2 cache size                                  %zu bytes\n", d->l2_bytes);
    printf("  Shared memory per block                        %zu bytes (opt-in maximum %zu)\n", d->smem_per_block,
           d->smem_per_block_optin);
    printf("  Shared memory per SM                           %zu bytes\n", d->smem_per_sm);
    printf("  Registers per block                            %d\n", d->regs_per_block);
    printf("  Registers per SM                               %d\n", d->regs_per_sm);
    printf("  Max threads per block                          %d\n", d->max_threads_per_block);
    printf("  Max threads per SM                             %d\n", d->max_threads_per_sm);
    printf("  Max blocks per SM                              %d\n", d->max_blocks_per_sm);
    printf("  Warp size                                      %d\n", d->warp_size);
}

int kgc_cmd_device(int argc, char **argv)
{
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, NULL, 0, &args)) != KGC_OK)
        goto out;
    if (args.nparam > 0) {
        fprintf(stderr, "kgen: device takes no parameter options (only --arch sm_XY for offline limits)\n");
        rc = KGC_USAGE;
        goto out;
    }
    kg_device_info info;
    if (args.arch) { /* the table's limits, no GPU needed */
        kg_device_query(ctx, KG_DEVICE_NONE, &info);
        print_device(&info, 0);
        goto out;
    }
    int count = 0, driver = 0;
    kg_status st = kg_device_count(ctx, &count);
    if (st != KG_OK) {
        rc = kgc_report(ctx, st, "device");
        goto out;
    }
    if (count == 0) {
        fprintf(stderr, "kgen: device: the CUDA driver found no GPU (kgen device --arch sm_XY prints a table's limits)\n");
        rc = KGC_FAIL;
        goto out;
    }
    kgi_driver_version(ctx, &driver);
    printf("Detected %d CUDA device(s)\n\n", count);
    for (int i = 0; i < count; i++) {
        if ((st = kg_device_query(ctx, i, &info)) != KG_OK) {
            rc = kgc_report(ctx, st, "device");
            goto out;
        }
        print_device(&info, driver);
        if (i + 1 < count)
            printf("\n");
    }
out:
    kg_context_close(ctx);
    return rc;
}

/* ------------------------------------------------------------ kgen run */

/* Times the kernel on fresh random data (minimal leading dimensions, L2
 * flushed, C restored between runs when beta reads it) and prints the
 * median and the rate. */
static int run_time(kg_context *ctx, const kg_kernel *kern, const kg_kernel_info *ki, const kg_device_info *dinfo,
                    int m, int n, int k, float alpha, float beta, unsigned long long seed, int reps)
{
    kgi_config cfg;
    const char *lay = kgi_config_parse(&cfg, ki->config, NULL, 0) == 0 ? kgi_config_get(&cfg, "layout") : NULL;
    int at = lay && lay[0] == 't', bt = lay && lay[0] && lay[1] == 't';
    int lda = at ? m : k, ldb = bt ? k : n, ldc = n;
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *h = malloc((na > nb ? (na > nc ? na : nc) : (nb > nc ? nb : nc)) * sizeof *h);
    void *da = NULL, *db = NULL, *dc = NULL, *dc0 = NULL;
    int rc = KGC_FAIL;
    kg_status st;
    if (!h) {
        fprintf(stderr, "kgen: run: out of memory\n");
        return KGC_FAIL;
    }
    if ((st = kgi_dev_alloc(ctx, na * 4, &da)) != KG_OK || (st = kgi_dev_alloc(ctx, nb * 4, &db)) != KG_OK ||
        (st = kgi_dev_alloc(ctx, nc * 4, &dc)) != KG_OK || (st = kgi_dev_alloc(ctx, nc * 4, &dc0)) != KG_OK)
        goto fail;
    kgi_fill_random(h, na, seed + 11);
    if ((st = kgi_dev_upload(ctx, da, h, na * 4)) != KG_OK)
        goto fail;
    kgi_fill_random(h, nb, seed + 12);
    if ((st = kgi_dev_upload(ctx, db, h, nb * 4)) != KG_OK)
        goto fail;
    kgi_fill_random(h, nc, seed + 13);
    if ((st = kgi_dev_upload(ctx, dc0, h, nc * 4)) != KG_OK || (st = kgi_dev_upload(ctx, dc, h, nc * 4)) != KG_OK)
        goto fail;
    kg_gemm g = {m, n, k, alpha, beta, da, lda, db, ldb, dc, ldc};
    kgi_timing t;
    st = kgi_time_kernel_reps(ctx, kern, &g, beta != 0.0f ? dc0 : NULL, 1, reps ? reps : 10, reps ? reps : 1000, 5.0, &t);
    if (st != KG_OK)
        goto fail;
    double tflops = 2.0 * m * n * k / (t.median_ms * 1e-3) / 1e12;
    printf("time            median %.4f ms (min %.4f, max %.4f; %d runs, interquartile spread %.1f%%; L2 flushed)\n",
           t.median_ms, t.min_ms, t.max_ms, t.reps, 100.0 * t.spread);
    printf("throughput      %.2f TFLOP/s (%.1f%% of the %.1f TFLOP/s FP32 peak)\n", tflops,
           dinfo->peak_fp32_tflops > 0 ? 100.0 * tflops / dinfo->peak_fp32_tflops : 0.0, dinfo->peak_fp32_tflops);
    rc = KGC_OK;
fail:
    if (rc != KGC_OK)
        rc = kgc_report(ctx, st, "run");
    kgi_dev_free(ctx, da);
    kgi_dev_free(ctx, db);
    kgi_dev_free(ctx, dc);
    kgi_dev_free(ctx, dc0);
    free(h);
    return rc;
}

int kgc_cmd_run(int argc, char **argv)
{
    const char *om = NULL, *on = NULL, *ok = NULL, *oalpha = NULL, *obeta = NULL, *oseed = NULL, *odev = NULL,
               *oreps = NULL;
    const kgc_opt own[] = {{"--m", "-m", 1, &om},          {"--n", "-n", 1, &on},
                           {"--k", "-k", 1, &ok},          {"--alpha", NULL, 1, &oalpha},
                           {"--beta", NULL, 1, &obeta},    {"--seed", NULL, 1, &oseed},
                           {"--device", NULL, 1, &odev},   {"--reps", NULL, 1, &oreps},
                           {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    /* the options, parsed once on a CPU context; the device's context then
     * takes their template directory and --arch (which must agree with it) */
    kgc_args args;
    rc = kgc_parse(ctx, argc, argv, own, 0, &args);
    if (rc != KGC_OK) {
        kg_context_close(ctx);
        return rc;
    }
    long m, n, k, seed = 1, dev = 0, reps = 0;
    float alpha = 1.0f, beta = 0.0f;
    if (!om || !on || !ok) {
        fprintf(stderr, "kgen: run needs --m, --n and --k\n");
        kg_context_close(ctx);
        return KGC_USAGE;
    }
    if (kgc_int("--m", om, 1, 1 << 20, &m) || kgc_int("--n", on, 1, 1 << 20, &n) || kgc_int("--k", ok, 1, 1 << 20, &k) ||
        (oseed && kgc_int("--seed", oseed, 0, 2147483647L, &seed)) || (odev && kgc_int("--device", odev, 0, 1023, &dev)) ||
        (oreps && kgc_int("--reps", oreps, 1, 100000, &reps)) || (oalpha && parse_float("--alpha", oalpha, &alpha)) ||
        (obeta && parse_float("--beta", obeta, &beta))) {
        kg_context_close(ctx);
        return KGC_USAGE;
    }
    /* No GPU to run on: the configuration is checked on this CPU context
     * (--arch's limits, else the table's sm_90), so that a wrong one is the
     * error reported (exit 2), not the missing GPU; with a GPU, its own
     * limits decide below. */
    int count = 0;
    if (kg_device_count(ctx, &count) != KG_OK || count <= dev) {
        kg_source *src = NULL;
        kg_status rst = kg_render(ctx, args.tmpl, args.config, &src);
        kg_source_free(src);
        if (rst != KG_OK) {
            rc = kgc_report(ctx, rst, "run");
            kg_context_close(ctx);
            return rc;
        }
    }
    kg_context_close(ctx);
    ctx = NULL;
    if ((rc = kgc_open(&ctx, (int)dev, &args)) != KGC_OK)
        return rc;
    kg_kernel *kern;
    kg_status st = kg_kernel_get(ctx, args.tmpl, args.config, &kern);
    if (st != KG_OK) {
        rc = kgc_report(ctx, st, NULL);
        goto out;
    }
    kg_kernel_info ki;
    kg_kernel_query(ctx, kern, &ki);
    kg_device_info dinfo;
    kg_device_query(ctx, KG_DEVICE_NONE, &dinfo);
    printf("device          %d: %s (sm_%d%d)\n", (int)dev, dinfo.name, dinfo.cc_major, dinfo.cc_minor);
    printf("kernel          %s\n", ki.entry);
    printf("configuration   %s\n", ki.config);
    printf("resources       %d registers, %d/%d bytes spilled, %zu+%zu bytes shared, %d threads, %d blocks/SM\n",
           ki.compile.registers, ki.compile.spill_stores, ki.compile.spill_loads, ki.compile.smem_static,
           ki.compile.smem_dynamic, ki.threads, ki.max_blocks_per_sm);
    if (ki.overlap)
        printf("launch          overlapping its beta pass%s (programmatic dependent launch)\n",
               ki.overlap > 1 ? ", which overlaps the kernel before it" : "");
    if (ki.compile.cache)
        printf("compile         from the %s\n", cache_name(ki.compile.cache));
    else
        printf("compile         %.1f ms (NVRTC)\n", ki.compile.compile_ms);

    double err;
    st = kgi_verify_kernel(ctx, kern, (int)m, (int)n, (int)k, alpha, beta, 0, (unsigned long long)seed, &err);
    double tol = kgi_gemm_tolerance((int)k);
    if (st == KG_ERR_SHAPE) {
        rc = kgc_report(ctx, st, "run");
        rc = KGC_USAGE;
        goto out;
    }
    if (st != KG_OK && st != KG_ERR_WRONG) {
        rc = kgc_report(ctx, st, "run");
        goto out;
    }
    printf("check           M=%ld N=%ld K=%ld alpha=%g beta=%g seed=%ld: max error %.3g (tolerance %.3g): %s\n", m, n,
           k, alpha, beta, seed, err, tol, st == KG_OK ? "PASS" : "FAIL");
    if (st == KG_ERR_WRONG) {
        fprintf(stderr, "kgen: run: %s\n", kg_last_error(ctx));
        rc = KGC_FAIL;
        goto out;
    }
    rc = run_time(ctx, kern, &ki, &dinfo, (int)m, (int)n, (int)k, alpha, beta, (unsigned long long)seed, (int)reps);
out:
    kg_context_close(ctx);
    return rc;
}
