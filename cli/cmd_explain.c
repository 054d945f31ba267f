/*
 * cmd_explain.c -- `kgen explain`: why one configuration is as fast as it
 * is. It computes what the seed documents work out by hand -- the
 * compute-to-global-memory-access ratio, occupancy and its limiter, bank
 * conflicts with and without padding, coalescing, the roofline -- for any
 * configuration and target, and on a GPU measures the kernel beside the
 * prediction.
 *
 * The target is, in this order: a limits file (--limits), the offline table
 * (--arch), or the GPU present (device 0 or --device); without a GPU the
 * table's sm_90 stands in and the report says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli/cli.h"
#include "explain/explain.h"
#include "gen/config.h"

#define DEFAULT_DIM 4096

const char kgc_explain_usage[] =
    "kgen explain [OPTIONS] [--arch sm_XY | --limits FILE] [--m M --n N --k K]\n"
    "  Explains one configuration the way the seed notes work their examples: FLOPs per\n"
    "  global load (CGMA) and arithmetic intensity; threads, shared memory and registers\n"
    "  (compiled with NVRTC); occupancy and the resource that limits it; the bank conflicts\n"
    "  of every shared-memory access with and without padding; the 32-byte sectors of\n"
    "  every global access; the roofline. On a GPU it also checks the kernel against a\n"
    "  float64 reference and times it beside the prediction.\n"
    "  Target: --limits FILE, else --arch sm_XY (kgen's offline table), else the GPU\n"
    "  present (without one the table's sm_90 stands in, and the report says so).\n"
    "  --m, --n, --k N      the problem's shape (default 4096 each)\n"
    "  --regs N             model N registers per thread instead of the compiled count\n"
    "  --json               the figures as JSON instead of the report\n"
    "  --svg FILE           draw the roofline with this configuration's point (FILE '-':\n"
    "                       the SVG on standard output instead of the report)\n"
    "  --from-db            also report and plot every configuration a tuning sweep timed\n"
    "                       at this shape and layout (on this GPU; offline: its arch)\n"
    "  --db FILE            the tuning database (default $KGEN_DB, else\n"
    "                       $XDG_DATA_HOME/kgen/tune.db or ~/.local/share/kgen/tune.db)\n"
    "  --device N           the GPU to query and measure on (default 0)\n"
    "  --no-measure         on a GPU: analyse, do not run\n"
    "  A limits file describes another device: `key = value` lines, '#' starts a comment,\n"
    "  sizes in bytes may end in K or M; keys not given keep the value of the table entry\n"
    "  named by `base`; unknown keys, repeated keys and bad values are errors. Keys:\n"
    KGC_LIMITS_KEYS(KGC_KEY_HELP)
    "  Example, the seeds' SM: base = sm_86, max_threads_per_sm = 1536,\n"
    "  regs_per_sm = 16384, reg_alloc_unit = 1 (one per line).\n"
    "  Exit status 2 for a bad option, configuration or limits file; 1 when the kernel\n"
    "  fails its check on the GPU or a file cannot be written.\n";

/* ------------------------------------------------------------ the target */

/* The device's limits and figures, as the driver reports them. */
static kg_status machine_from_device(kg_context *dev, int ordinal, kgc_machine *m)
{
    kg_device_info info;
    kg_status st = kg_device_query(dev, ordinal, &info);
    if (st != KG_OK)
        return st;
    memset(m, 0, sizeof *m);
    m->lim = *kgi_context_limits(dev);
    m->from = KGC_SRC_DEVICE;
    snprintf(m->part, sizeof m->part, "%.127s", info.name);
    m->sm_count = info.sm_count;
    m->clock_ghz = info.sm_clock_khz / 1e6;
    m->bandwidth_gbs = info.peak_bandwidth_gbs;
    m->peak_gflops = info.peak_fp32_tflops * 1e3;
    snprintf(m->what, sizeof m->what,
             "device %d: %s (sm_%d%d, %d SMs at %.3g GHz, %d-bit memory at %.3g GHz; queried from the driver)",
             ordinal, info.name, info.cc_major, info.cc_minor, info.sm_count, m->clock_ghz, info.bus_width_bits,
             info.mem_clock_khz / 1e6);
    return KG_OK;
}

/* ------------------------------------------------------------ analysis steps */

/* Registers come from compiling the configuration for the target's
 * architecture (NVRTC, no GPU needed), unless --regs gives a what-if. */
static void compile_for_registers(kg_context *ctx, kgc_explain *x)
{
    char err[4096];
    kg_source *src = NULL;
    kg_status st = kgi_host_render(ctx->host, x->tmpl, x->config, &x->mach.lim, &src, err, sizeof err);
    if (st != KG_OK) {
        snprintf(x->compile_note, sizeof x->compile_note, "render failed: %.1000s", err);
        return;
    }
    x->geo = src->geo;
    x->have_geo = 1;
    kgi_nvrtc_result r;
    char *cerr = NULL;
    st = kgi_nvrtc_compile(src->text, src->entry, x->mach.lim.sm, &r, &cerr);
    if (st == KG_OK) {
        x->compiled = 1;
        x->ci = r.info;
        if (!x->regs_given) {
            x->have_regs = 1;
            x->regs = r.info.registers;
        }
    } else {
        /* First lines of the log are enough to say why (an unsupported
         * architecture, usually). */
        const char *msg = cerr ? cerr : kg_strerror(st);
        snprintf(x->compile_note, sizeof x->compile_note, "NVRTC %d.%d could not compile for sm_%d: %.400s",
                 kgi_nvrtc_version() / 1000, kgi_nvrtc_version() % 1000 / 10, x->mach.lim.sm, msg);
        for (char *p = x->compile_note; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
    free(cerr);
    kgi_nvrtc_result_free(&r);
    kg_source_free(src);
}

/* The configuration text with pad=`pad` instead of its own value. */
static int with_pad(const char *config, int pad, char *out, size_t len)
{
    kgi_config c;
    if (kgi_config_parse(&c, config, NULL, 0) != 0 || kgi_config_find(&c, "pad") < 0 ||
        kgi_config_set_int(&c, "pad", pad, NULL, 0) != 0)
        return -1;
    return kgi_config_format(&c, out, len);
}

/* Shared-memory wavefronts one block spends per K phase. */
static double phase_waves(const kgc_access_set *s, int ideal)
{
    double w = 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].shared)
            w += (double)(ideal ? s->v[i].ideal : s->v[i].wavefronts) * s->v[i].per_phase;
    return w;
}

/* The call the accesses describe, as the launcher would make it: 0 with
 * acc_note saying why when the kernel's preconditions refuse the shape
 * (kg_matmul runs another kernel there); where the kernel reads packed
 * copies of A or B (pack=1), their padded leading dimensions. */
static int as_launched(kgc_explain *x)
{
    x->acc_shape = x->shape;
    if (!x->have_geo)
        return 1; /* not rendered: compile_note says why, and the accesses' own evaluation fails alike */
    /* stand-in device pointers, aligned as cudaMalloc's (the analysis assumes the same) */
    const float *p = (const float *)(uintptr_t)4096;
    kg_gemm g = {(int)x->shape.m, (int)x->shape.n, (int)x->shape.k, 1.0f, 0.0f, p, (int)x->shape.lda, p,
                 (int)x->shape.ldb, (float *)(uintptr_t)4096, (int)x->shape.ldc};
    char why[512];
    if (!kgi_geometry_admits(&x->geo, &g, why, sizeof why)) {
        snprintf(x->acc_note, sizeof x->acc_note,
                 "this configuration cannot run at M=%lld N=%lld K=%lld (lda=%lld ldb=%lld ldc=%lld): %s",
                 x->shape.m, x->shape.n, x->shape.k, x->shape.lda, x->shape.ldb, x->shape.ldc, why);
        return 0;
    }
    int packed = kgi_packed_operands(&x->geo, &g);
    kgc_shape *s = &x->acc_shape;
    if (packed & 1)
        s->lda = kgi_packed_ld(&x->geo, (int)(x->res.layout[0] == 't' ? s->m : s->k));
    if (packed & 2)
        s->ldb = kgi_packed_ld(&x->geo, (int)(x->res.layout[1] == 't' ? s->k : s->n));
    if (packed)
        snprintf(x->shape_note, sizeof x->shape_note,
                 "pack=1: the launcher first copies %s into a workspace with rows padded to multiples of %u floats; "
                 "the accesses are the kernel's on the copies, lda=%lld ldb=%lld",
                 packed == 3 ? "A and B" : packed == 1 ? "A" : "B", x->geo.pack_multiple, s->lda, s->ldb);
    return 1;
}

static void analyse_accesses(kg_context *ctx, kgc_explain *x)
{
    char err[4096];
    int missing = 0;
    if (!as_launched(x))
        return;
    kg_status st = kgc_eval_accesses(ctx->host, x->tmpl, x->config, &x->acc_shape, x->res.threads,
                                     x->mach.lim.warp_size, x->res.tile_k, &x->acc, &missing, err, sizeof err);
    if (st != KG_OK) {
        snprintf(x->acc_note, sizeof x->acc_note, "%.1000s", err);
        return;
    }
    x->have_acc = 1;
    /* The comparison: without padding, or with one float of it when the
     * configuration has none. */
    if (x->res.pad < 0) {
        snprintf(x->alt_note, sizeof x->alt_note, "template '%s' has no pad parameter", x->tmpl);
    } else {
        x->alt_pad = x->res.pad > 0 ? 0 : 1;
        char alt[512], canon[512];
        if (with_pad(x->config, x->alt_pad, alt, sizeof alt) != 0) {
            snprintf(x->alt_note, sizeof x->alt_note, "cannot form the configuration with pad=%d", x->alt_pad);
        } else if (kgi_host_check(ctx->host, x->tmpl, alt, &x->mach.lim, canon, sizeof canon, err, sizeof err) != KG_OK) {
            snprintf(x->alt_note, sizeof x->alt_note, "pad=%d does not fit: %.400s", x->alt_pad, err);
        } else if (kgc_eval_accesses(ctx->host, x->tmpl, canon, &x->acc_shape, x->res.threads, x->mach.lim.warp_size,
                                     x->res.tile_k, &x->alt, &missing, err, sizeof err) != KG_OK) {
            snprintf(x->alt_note, sizeof x->alt_note, "pad=%d: %.400s", x->alt_pad, err);
        } else {
            x->have_alt = 1;
        }
    }
    /* The shared-memory roof: an SM's 32 banks each deliver 32 bits per
     * clock (CUDA C++ Programming Guide, compute capabilities 5.x and later,
     * "Shared Memory"), one 128-byte wavefront per clock -- NVIDIA's forum
     * gives the same 128 B/cycle for L1/shared return bandwidth on Volta and
     * later. So a block's phase of flops_per_phase FLOPs needs at least its
     * wavefronts in clocks, whatever else overlaps. */
    double waves = phase_waves(&x->acc, 0);
    if (waves > 0 && x->mach.sm_count > 0 && x->mach.clock_ghz > 0) {
        x->have_smem_roof = 1;
        x->smem_waves = waves;
        x->smem_waves_ideal = phase_waves(&x->acc, 1);
        x->flop_per_wave = x->res.flops_per_phase / waves;
        x->smem_bound_gflops = x->mach.sm_count * x->mach.clock_ghz * x->flop_per_wave;
        double alt = x->have_alt ? phase_waves(&x->alt, 0) : 0;
        if (alt > 0) {
            x->alt_smem_waves = alt;
            x->alt_smem_bound_gflops = x->mach.sm_count * x->mach.clock_ghz * x->res.flops_per_phase / alt;
        }
    }
}

/* Blocks per SM and the binding resource, with the seeds' register budget. */
static void occupancy(kgc_explain *x)
{
    const kgi_limits *l = &x->mach.lim;
    x->smem_block = x->compiled ? x->ci.smem_static + x->res.smem_dynamic : x->res.smem_static + x->res.smem_dynamic;
    kgi_occupancy_calc(l, x->res.threads, x->have_regs ? x->regs : 0, x->smem_block, &x->occ);
    x->regs_full = kgi_occupancy_max_regs(l, x->res.threads, x->smem_block);
    x->regs_even = l->max_threads_per_sm > 0 ? l->regs_per_sm / l->max_threads_per_sm : 0;
}

static void roofline(kgc_explain *x)
{
    const kgc_machine *m = &x->mach;
    x->ridge = m->bandwidth_gbs > 0 ? m->peak_gflops / m->bandwidth_gbs : 0;
    x->bound_tiles = kgc_roof(m, x->traffic.ai_tiles);
    x->bound_once = kgc_roof(m, x->traffic.ai_once);
    x->bound_pred = m->peak_gflops;
    x->bound_by = "the FP32 peak";
    if (x->bound_tiles < x->bound_pred) {
        x->bound_pred = x->bound_tiles;
        x->bound_by = "device-memory bandwidth (every tile load from DRAM)";
    }
    if (x->have_smem_roof && x->smem_bound_gflops < x->bound_pred) {
        x->bound_pred = x->smem_bound_gflops;
        x->bound_by = "shared-memory bandwidth";
    }
}

/* ------------------------------------------------------------ the command */

static int dim_option(const char *name, const char *text, long long dflt, long long *out)
{
    long v = (long)dflt;
    if (text && kgc_int(name, text, 1, 1L << 20, &v) != 0)
        return -1;
    *out = v;
    return 0;
}

/* Chooses the target; opens the device context when the GPU is the target.
 * Returns an exit code (0 to go on). */
static int choose_machine(kg_context *ctx, const kgc_args *args, const char *limits, const char *device,
                          kg_context **dev, kgc_explain *x)
{
    char err[4096];
    if (limits) {
        if (device) {
            fprintf(stderr, "kgen: explain: --limits describes the target; it cannot be combined with --device\n");
            return KGC_USAGE;
        }
        if (kgc_machine_from_file(limits, args->arch ? args->arch : kg_arch(ctx), &x->mach, err, sizeof err) != 0) {
            fprintf(stderr, "kgen: explain: %s\n", err);
            return KGC_USAGE;
        }
        return KGC_OK;
    }
    if (args->arch) {
        if (device) {
            fprintf(stderr, "kgen: explain: --arch names an offline target; it cannot be combined with --device\n");
            return KGC_USAGE;
        }
        kgc_machine_from_table(args->arch, &x->mach);
        return KGC_OK;
    }
    long ordinal = 0;
    if (device && kgc_int("--device", device, 0, 1024, &ordinal) != 0)
        return KGC_USAGE;
    kg_status st = kg_context_open(dev, (int)ordinal);
    if (st == KG_OK && args->template_dir)
        st = kg_set_template_path(*dev, args->template_dir);
    if (st == KG_OK)
        st = machine_from_device(*dev, (int)ordinal, &x->mach);
    if (st == KG_OK)
        return KGC_OK;
    if (device) /* asked for explicitly: no stand-in */
        return kgc_report(*dev, st, "--device");
    snprintf(x->machine_note, sizeof x->machine_note,
             "no GPU to query (%s); the offline table's sm_%d stands in (choose with --arch or --limits)",
             kg_last_error(*dev)[0] ? kg_last_error(*dev) : kg_strerror(st), kg_arch(ctx));
    kg_context_close(*dev);
    *dev = NULL;
    kgc_machine_from_table(kg_arch(ctx), &x->mach);
    return KGC_OK;
}

int kgc_cmd_explain(int argc, char **argv)
{
    const char *om = NULL, *on = NULL, *ok = NULL, *limits = NULL, *regs = NULL, *json = NULL, *svg = NULL;
    const char *fromdb = NULL, *dbpath = NULL, *device = NULL, *nomeasure = NULL;
    const kgc_opt own[] = {
        {"--m", NULL, 1, &om},           {"--n", NULL, 1, &on},         {"--k", NULL, 1, &ok},
        {"--limits", NULL, 1, &limits},  {"--regs", NULL, 1, &regs},    {"--json", NULL, 0, &json},
        {"--svg", NULL, 1, &svg},        {"--from-db", NULL, 0, &fromdb}, {"--db", NULL, 1, &dbpath},
        {"--device", NULL, 1, &device},  {"--no-measure", NULL, 0, &nomeasure}, {NULL, NULL, 0, NULL}};
    kg_context *ctx, *dev = NULL;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_explain *x = calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "kgen: out of memory\n");
        kg_context_close(ctx);
        return KGC_FAIL;
    }
    kgc_args args;
    char err[4096];
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto out;
    rc = KGC_USAGE;
    if (dim_option("--m", om, DEFAULT_DIM, &x->shape.m) || dim_option("--n", on, DEFAULT_DIM, &x->shape.n) ||
        dim_option("--k", ok, DEFAULT_DIM, &x->shape.k))
        goto out;
    if (regs) {
        long r;
        if (kgc_int("--regs", regs, 1, 255, &r) != 0)
            goto out;
        x->regs_given = x->have_regs = 1;
        x->regs = (int)r;
    }
    if (svg && json && strcmp(svg, "-") == 0) {
        fprintf(stderr, "kgen: explain: --json and --svg - would both write to standard output\n");
        goto out;
    }
    if (dbpath && !fromdb) {
        fprintf(stderr, "kgen: explain: --db FILE goes with --from-db\n");
        goto out;
    }
    if (kgc_not_input("--svg", svg, limits) != 0 || kgc_not_input("--svg", svg, dbpath) != 0)
        goto out;
    snprintf(x->tmpl, sizeof x->tmpl, "%s", args.tmpl);
    if ((rc = choose_machine(ctx, &args, limits, device, &dev, x)) != KGC_OK)
        goto out;

    /* The configuration, strictly checked against the target's limits. */
    kg_status st = kgi_host_check(ctx->host, x->tmpl, args.config, &x->mach.lim, x->config, sizeof x->config, err,
                                  sizeof err);
    if (st == KG_OK)
        st = kgc_read_resources(ctx->host, x->tmpl, x->config, &x->res, err, sizeof err);
    if (st != KG_OK) {
        fprintf(stderr, "kgen: explain: %s\n", err);
        rc = st == KG_ERR_CONFIG ? KGC_USAGE : KGC_FAIL;
        goto out;
    }
    x->shape.lda = x->res.layout[0] == 't' ? x->shape.m : x->shape.k;
    x->shape.ldb = x->res.layout[1] == 't' ? x->shape.k : x->shape.n;
    x->shape.ldc = x->shape.n;

    compile_for_registers(ctx, x);
    occupancy(x);
    if (x->occ.blocks_per_sm < 1) {
        /* shared memory and threads per block are the template's check(); registers are known once compiled */
        char rtext[64] = "registers not known";
        if (x->have_regs)
            snprintf(rtext, sizeof rtext, "%d registers per thread", x->regs);
        fprintf(stderr, "kgen: explain: %s cannot run on %s: no block fits on an SM (%d threads per block, %s;"
                        " the SM has %d threads, %d registers)\n", x->config, x->mach.what, x->res.threads, rtext,
                x->mach.lim.max_threads_per_sm, x->mach.lim.regs_per_sm);
        rc = KGC_USAGE;
        goto out;
    }
    kgc_traffic_calc(&x->shape, x->res.tile_m, x->res.tile_n, x->res.tile_k, &x->traffic);
    analyse_accesses(ctx, x);
    roofline(x);
    int measure_failed = 0;
    if (dev && !nomeasure)
        measure_failed = kgc_explain_measure(dev, x) != 0;
    else if (dev)
        snprintf(x->measure_note, sizeof x->measure_note, "not measured (--no-measure)");
    else
        snprintf(x->measure_note, sizeof x->measure_note, "not measured: %s",
                 limits ? "the target is a limits file" : args.arch ? "the target is an offline architecture (--arch)"
                                                                    : "no GPU");
    if (fromdb) {
        if (kgc_explain_points(dbpath, x->mach.from == KGC_SRC_DEVICE ? x->mach.part : NULL, x, ctx->host, err,
                               sizeof err) != 0) {
            fprintf(stderr, "kgen: explain: --from-db: %s\n", err);
            rc = KGC_FAIL;
            goto out;
        }
    }

    if (svg) {
        char *text = kgc_explain_svg(x);
        if (!text) {
            fprintf(stderr, "kgen: out of memory\n");
            rc = KGC_FAIL;
            goto out;
        }
        int wrc = kgc_write_file(svg, text, strlen(text));
        free(text);
        if (wrc != 0) {
            rc = KGC_FAIL;
            goto out;
        }
    }
    if (json)
        kgc_explain_json(x, stdout);
    else if (!svg || strcmp(svg, "-") != 0)
        kgc_explain_print(x, stdout);
    rc = fflush(stdout) == 0 && !measure_failed ? KGC_OK : KGC_FAIL;
    if (measure_failed)
        fprintf(stderr, "kgen: explain: %s\n", x->measure_note);
out:
    if (x) {
        kgc_access_set_free(&x->acc);
        kgc_access_set_free(&x->alt);
        free(x->points);
        free(x);
    }
    kg_context_close(dev);
    kg_context_close(ctx);
    return rc;
}
