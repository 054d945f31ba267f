/*
 * explain_report.c -- prints what cmd_explain.c computed: a readable report
 * with the arithmetic written out, as the seeds' worked examples do, or the
 * same figures as JSON (--json).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"

/* ------------------------------------------------------------ number text */

/* 16384 -> "16,384", in one of a few rotating buffers so that a printf may
 * take several. */
static const char *num(long long v)
{
    static char buf[8][32];
    static int next;
    char *out = buf[next++ % 8];
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", v < 0 ? -v : v);
    size_t n = strlen(digits), o = 0;
    if (v < 0)
        out[o++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

/* A quantity with a decimal prefix: 1.37e11 FLOP -> "137.4 G". */
static const char *si(double v)
{
    static char buf[8][32];
    static int next;
    char *out = buf[next++ % 8];
    static const char *const prefix[] = {"", " k", " M", " G", " T", " P"};
    int p = 0;
    while (fabs(v) >= 1000 && p < 5)
        v /= 1000, p++;
    snprintf(out, 32, "%.*f%s", fabs(v) >= 100 || p == 0 ? 1 : 2, v, prefix[p]);
    return out;
}

/* "1 block", "2 blocks" */
static const char *blocks(int n)
{
    static char buf[8][24];
    static int next;
    char *out = buf[next++ % 8];
    snprintf(out, 24, "%d block%s", n, n == 1 ? "" : "s");
    return out;
}

static double ratio(long long a, long long b) { return b > 0 ? (double)a / (double)b : 0.0; }

/* "2-way" for a whole ratio, "1.50x" otherwise. */
static const char *way(double r)
{
    static char buf[8][16];
    static int next;
    char *out = buf[next++ % 8];
    if (fabs(r - floor(r + 0.5)) < 1e-9)
        snprintf(out, 16, "%.0f-way", r);
    else
        snprintf(out, 16, "%.2fx", r);
    return out;
}

/* ------------------------------------------------------------ sections */

static void print_traffic(const kgc_explain *x, FILE *f)
{
    const kgc_resources *r = &x->res;
    const kgc_traffic *t = &x->traffic;
    fprintf(f, "\n1. Global memory traffic (the seeds' compute-to-global-memory-access ratio)\n");
    fprintf(f, "   A block computes a %d x %d tile of C. Each phase (bk = %d) loads %s floats of A and %s of B\n",
            r->tile_m, r->tile_n, r->tile_k, num((long long)r->loads_a), num((long long)r->loads_b));
    fprintf(f, "   from global memory and does %s FLOPs with them:\n", num((long long)r->flops_per_phase));
    fprintf(f, "     CGMA = %s FLOPs / %s loads = %.2f FLOP per load (the untiled kernel: 2 FLOPs per 2 loads = 1)\n",
            num((long long)r->flops_per_phase), num((long long)(r->loads_a + r->loads_b)), r->cgma);
    fprintf(f, "     arithmetic intensity = %.2f / 4 bytes = %.3f FLOP/B\n", r->cgma, r->cgma / 4);
    double a = 4.0 * (double)((x->shape.n + r->tile_n - 1) / r->tile_n) * (double)x->shape.m * (double)x->shape.k;
    double b = 4.0 * (double)((x->shape.m + r->tile_m - 1) / r->tile_m) * (double)x->shape.k * (double)x->shape.n;
    fprintf(f, "   For M=%lld N=%lld K=%lld: %s blocks x %s phases, %sFLOP in all.\n", x->shape.m, x->shape.n,
            x->shape.k, num(t->blocks), num(t->phases), si(t->flops));
    fprintf(f, "     bytes the tiles request: %sB (A %sB: read once per block column; B %sB: once per block row;\n"
               "       C %sB written) -> %.3f FLOP/B\n",
            si(t->bytes_tiles), si(a), si(b), si(4.0 * (double)x->shape.m * (double)x->shape.n), t->ai_tiles);
    fprintf(f, "     bytes if each matrix crossed the memory bus once (perfect caching): %sB -> %.1f FLOP/B\n",
            si(t->bytes_once), t->ai_once);
}

static void print_resources(const kgc_explain *x, FILE *f)
{
    const kgc_resources *r = &x->res;
    const kgi_limits *l = &x->mach.lim;
    fprintf(f, "\n2. Threads, shared memory, registers\n");
    fprintf(f, "   threads per block     %s (%u x %u x %u), %d warp%s; %d output%s of C per thread\n", num(r->threads),
            r->block[0], r->block[1], r->block[2], x->occ.warps_per_block, x->occ.warps_per_block == 1 ? "" : "s",
            r->outputs_per_thread, r->outputs_per_thread == 1 ? "" : "s");
    size_t smem = x->compiled ? x->ci.smem_static : r->smem_static;
    fprintf(f, "   shared memory         %s B static%s + %s B dynamic per block", num((long long)smem),
            x->compiled ? " (as compiled)" : "", num((long long)r->smem_dynamic));
    if (x->smem_block)
        fprintf(f, ";\n                         with %s B reserved per block, in units of %s B: %s B\n", num((long long)l->smem_reserved_per_block),
                num((long long)l->smem_alloc_unit), num((long long)x->occ.smem_per_block));
    else
        fprintf(f, "\n");
    if (x->regs_given && x->compiled)
        fprintf(f, "   registers per thread  %d (given with --regs; NVRTC for sm_%d uses %d)\n", x->regs, l->sm,
                x->ci.registers);
    else if (x->regs_given)
        fprintf(f, "   registers per thread  %d (given with --regs)\n", x->regs);
    else if (x->compiled)
        fprintf(f, "   registers per thread  %d (NVRTC %d.%d for sm_%d; %d B spilled, %d B stack frame)\n", x->regs,
                kgi_nvrtc_version() / 1000, kgi_nvrtc_version() % 1000 / 10, l->sm,
                x->ci.spill_stores + x->ci.spill_loads, x->ci.stack_bytes);
    else
        fprintf(f, "   registers per thread  unknown: %s\n"
                   "                         (give --regs N to model a register count)\n", x->compile_note);
    if (x->compiled && x->ci.spill_stores + x->ci.spill_loads > 0)
        fprintf(f, "   note: the compiler spills %d B to local memory: extra global traffic not counted above\n",
                x->ci.spill_stores + x->ci.spill_loads);
}

/* Every resource whose block count equals the result, for "limited by";
 * a resource the kernel does not use (no shared memory, registers unknown)
 * binds nothing. */
static void limiters(const kgi_occupancy *o, char *buf, size_t len)
{
    struct { int n, used; const char *what; } by[] = {{o->by_threads, 1, "threads"},
                                                       {o->by_blocks, 1, "blocks"},
                                                       {o->by_regs, o->regs_per_thread > 0, "registers"},
                                                       {o->by_smem, o->smem_per_block > 0, "shared memory"}};
    const char *hit[4];
    int k = 0;
    for (int i = 0; i < 4; i++)
        if (by[i].used && by[i].n == o->blocks_per_sm)
            hit[k++] = by[i].what;
    buf[0] = '\0';
    for (int i = 0; i < k; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i == 0 ? "" : i == k - 1 ? " and " : ", ", hit[i]);
}

static void print_occupancy(const kgc_explain *x, FILE *f)
{
    const kgi_limits *l = &x->mach.lim;
    const kgi_occupancy *o = &x->occ;
    fprintf(f, "\n3. Occupancy on %s: per SM %s threads (%d warps), %d blocks, %s registers, %s B shared memory\n",
            l->name, num(l->max_threads_per_sm), l->max_warps_per_sm, l->max_blocks_per_sm, num(l->regs_per_sm),
            num((long long)l->smem_per_sm));
    fprintf(f, "   threads        %d warps per SM / %d warps per block = %s\n", l->max_warps_per_sm,
            o->warps_per_block, blocks(o->by_threads));
    fprintf(f, "   blocks         at most %d blocks per SM\n", l->max_blocks_per_sm);
    if (x->have_regs)
        fprintf(f, "   registers      %d x %d threads = %s per warp (allocated in units of %d); %s / %s = %d warps;\n"
                   "                  %d / %d warps per block = %s\n",
                x->regs, l->warp_size, num(o->regs_per_warp), l->reg_alloc_unit, num(l->regs_per_sm),
                num(o->regs_per_warp), o->regs_per_warp ? l->regs_per_sm / o->regs_per_warp : 0,
                o->regs_per_warp ? l->regs_per_sm / o->regs_per_warp : 0, o->warps_per_block, blocks(o->by_regs));
    else
        fprintf(f, "   registers      unknown: left out (the result below may be too high)\n");
    if (x->smem_block)
        fprintf(f, "   shared memory  %s B / %s B per block = %s\n", num((long long)l->smem_per_sm),
                num((long long)o->smem_per_block), blocks(o->by_smem));
    else
        fprintf(f, "   shared memory  none used\n");
    char lim[96];
    limiters(o, lim, sizeof lim);
    fprintf(f, "   -> %s = %d warps = %s threads per SM (%.0f%% occupancy), limited by %s\n", blocks(o->blocks_per_sm),
            o->warps_per_sm, num(o->threads_per_sm), 100 * o->occupancy, lim);
    fprintf(f, "   %s registers / %s threads = %d registers per thread for full occupancy", num(l->regs_per_sm),
            num(l->max_threads_per_sm), x->regs_even);
    if (x->regs_full > 0)
        fprintf(f, ";\n   with %s-thread blocks, up to %d registers per thread keep registers from binding", num(o->threads),
                x->regs_full);
    if (x->have_regs)
        fprintf(f, "; this kernel uses %d", x->regs);
    fprintf(f, ".\n");
    if (x->driver_blocks > 0)
        fprintf(f, "   the driver reports %s per SM for the loaded kernel (model: %d)\n", blocks(x->driver_blocks),
                o->blocks_per_sm);
    if (x->kernel_regs > 0 && x->have_regs && x->kernel_regs != x->regs)
        fprintf(f, "   the loaded kernel uses %d registers per thread (the model above: %d)\n", x->kernel_regs, x->regs);
}

static const kgc_access *alt_of(const kgc_explain *x, int i)
{
    if (!x->have_alt)
        return NULL;
    if (i < x->alt.n && strcmp(x->alt.v[i].name, x->acc.v[i].name) == 0)
        return &x->alt.v[i];
    for (int j = 0; j < x->alt.n; j++)
        if (strcmp(x->alt.v[j].name, x->acc.v[i].name) == 0)
            return &x->alt.v[j];
    return NULL;
}

/* One line on why the worst request of a statement conflicts. */
static void print_bank_example(const kgc_access *a, const char *label, FILE *f)
{
    const kgc_bank *b = &a->worst;
    if (b->wavefronts <= b->ideal || b->nexample == 0)
        return;
    fprintf(f, "     %s, %s (warp %d, repetition %d): bank %d holds floats", label, a->name, a->worst_warp,
            a->worst_iter, b->bank);
    for (int i = 0; i < b->nexample; i++)
        fprintf(f, "%s%lld", i ? ", " : " ", b->example[i].word);
    fprintf(f, "%s of threads", b->way > b->nexample ? ", ..." : "");
    for (int i = 0; i < b->nexample; i++)
        fprintf(f, "%s%d", i ? ", " : " ", b->example[i].tid);
    fprintf(f, "%s: %d wavefronts where %d would do\n", b->way > b->nexample ? ", ..." : "", b->wavefronts, b->ideal);
}

static void print_banks(const kgc_explain *x, FILE *f)
{
    fprintf(f, "\n4. Shared-memory bank conflicts (32 banks of 4 B; a request costs, per phase -- the warp for 4-byte\n"
               "   accesses, each half-warp for 8 and 16 -- the wavefronts its busiest bank needs, against the ideal\n"
               "   for its distinct words; worst request and mean over the %d warps of block (0,0) and the\n"
               "   statement's unrolled repetitions)\n",
            x->occ.warps_per_block);
    if (!x->have_acc) {
        fprintf(f, "   not available: %s\n", x->acc_note);
        return;
    }
    char cfg[32], alt[32];
    snprintf(cfg, sizeof cfg, x->res.pad >= 0 ? "pad=%d (configured)" : "configured", x->res.pad);
    snprintf(alt, sizeof alt, "pad=%d", x->alt_pad);
    fprintf(f, "   %-36s %5s %6s   %-22s %s\n", "", "", "runs", cfg, x->have_alt ? alt : "");
    fprintf(f, "   %-36s %5s %6s   %-9s %-12s %-9s %s\n", "statement", "width", "/phase", "worst", "mean", x->have_alt ? "worst" : "",
            x->have_alt ? "mean" : "");
    int any = 0;
    for (int i = 0; i < x->acc.n; i++) {
        const kgc_access *a = &x->acc.v[i];
        if (!a->shared)
            continue;
        any = 1;
        const kgc_access *b = alt_of(x, i);
        char runs[16];
        snprintf(runs, sizeof runs, "%d%s", a->per_phase, a->per_phase_given ? "" : "*");
        fprintf(f, "   %-36.36s %3d B %6s   %-9s %-12s", a->name, a->width, runs,
                way(ratio(a->worst.wavefronts, a->worst.ideal)), way(ratio(a->wavefronts, a->ideal)));
        if (b)
            fprintf(f, " %-9s %s", way(ratio(b->worst.wavefronts, b->worst.ideal)), way(ratio(b->wavefronts, b->ideal)));
        fprintf(f, "\n");
    }
    if (!any) {
        fprintf(f, "   (the kernel makes no shared-memory accesses)\n");
        return;
    }
    if (!x->have_alt && x->alt_note[0])
        fprintf(f, "   no comparison: %s\n", x->alt_note);
    fprintf(f, "   * runs per phase assumed: shared loads once per k step of the tile (bk = %d), stores once per phase\n",
            x->res.tile_k);
    for (int i = 0; i < x->acc.n; i++) {
        if (!x->acc.v[i].shared)
            continue;
        print_bank_example(&x->acc.v[i], cfg, f);
        const kgc_access *b = alt_of(x, i);
        if (b)
            print_bank_example(b, alt, f);
    }
    if (x->have_smem_roof) {
        fprintf(f, "   A block's phase costs %s wavefronts (%s without conflicts)", num((long long)x->smem_waves),
                num((long long)x->smem_waves_ideal));
        if (x->have_alt)
            fprintf(f, "; with %s: %s", alt, num((long long)x->alt_smem_waves));
        fprintf(f, ".\n");
    }
}

static void print_coalescing(const kgc_explain *x, FILE *f)
{
    fprintf(f, "\n5. Global memory coalescing (per warp request: bytes asked for against the 32-byte sectors and\n"
               "   128-byte lines touched; mean over the warps of block (0,0) and repetitions; arrays 256-B aligned\n"
               "   as cudaMalloc returns them, lda=%lld ldb=%lld ldc=%lld)\n",
            x->shape.lda, x->shape.ldb, x->shape.ldc);
    if (x->shape_note[0])
        fprintf(f, "   (%s)\n", x->shape_note);
    if (!x->have_acc) {
        fprintf(f, "   not available: %s\n", x->acc_note);
        return;
    }
    fprintf(f, "   %-36s %5s %9s %10s %8s %6s %10s  %s\n", "statement", "width", "bytes/req", "sectors", "(ideal)",
            "lines", "efficiency", "worst request");
    for (int i = 0; i < x->acc.n; i++) {
        const kgc_access *a = &x->acc.v[i];
        if (a->shared || a->requests == 0)
            continue;
        double n = a->requests;
        fprintf(f, "   %-36.36s %3d B %9.1f %10.2f %8.2f %6.2f %9.1f%%  %d sectors for %lld B\n", a->name, a->width,
                (double)a->requested / n, (double)a->sectors / n, (double)a->ideal_sectors / n, (double)a->lines / n,
                a->sectors ? 100.0 * (double)a->unique / (32.0 * (double)a->sectors) : 0.0, a->gworst.sectors,
                a->gworst.unique);
    }
    fprintf(f, "   (efficiency: distinct bytes used / bytes of the sectors fetched)\n");
}

static void print_roofline(const kgc_explain *x, FILE *f)
{
    const kgc_machine *m = &x->mach;
    double peak = m->peak_gflops, bw = m->bandwidth_gbs;
    fprintf(f, "\n6. Roofline (%s)\n", m->part[0] ? m->part : m->lim.name);
    if (m->peak_given)
        fprintf(f, "   FP32 peak        %.1f TFLOP/s (peak_tflops of the limits file)\n", peak / 1e3);
    else
        fprintf(f, "   FP32 peak        %d SMs x %d lanes x 2 FLOP x %.3g GHz = %.1f TFLOP/s\n", m->sm_count,
                m->lim.fp32_lanes_per_sm, m->clock_ghz, peak / 1e3);
    fprintf(f, "   memory bandwidth %s GB/s; ridge point %.1f TFLOP/s / %.2f TB/s = %.2f FLOP/B\n", num((long long)(bw + 0.5)),
            peak / 1e3, bw / 1e3, x->ridge);
    if (m->sm_count > 0 && m->clock_ghz > 0)
        fprintf(f, "   shared memory    %d SMs x 128 B/clock x %.3g GHz = %.1f TB/s\n", m->sm_count, m->clock_ghz,
                m->sm_count * 128.0 * m->clock_ghz / 1e3);
    fprintf(f, "   bounds:\n");
    fprintf(f, "     tile traffic, every load from DRAM  %8.3f FLOP/B x %s GB/s -> %6.2f TFLOP/s (%s)\n",
            x->traffic.ai_tiles, num((long long)(bw + 0.5)), x->bound_tiles / 1e3,
            x->traffic.ai_tiles < x->ridge ? "memory-bound" : "compute-bound");
    fprintf(f, "     each matrix once (caching ideal)    %8.1f FLOP/B            -> %6.2f TFLOP/s (%s)\n",
            x->traffic.ai_once, x->bound_once / 1e3, x->traffic.ai_once < x->ridge ? "memory-bound" : "compute-bound");
    if (x->have_smem_roof) {
        fprintf(f, "     shared memory: %s FLOPs per %s wavefronts = %.2f FLOP/clock/SM (FP32 peak %d)\n"
                   "                                                             -> %6.2f TFLOP/s\n",
                num((long long)x->res.flops_per_phase), num((long long)x->smem_waves), x->flop_per_wave,
                2 * m->lim.fp32_lanes_per_sm, x->smem_bound_gflops / 1e3);
        if (x->have_alt && x->alt_smem_bound_gflops > 0)
            fprintf(f, "       (with pad=%d: %.2f TFLOP/s)\n", x->alt_pad, x->alt_smem_bound_gflops / 1e3);
    }
    fprintf(f, "   predicted bound: %.2f TFLOP/s, set by %s\n", x->bound_pred / 1e3, x->bound_by);
    if (!x->measured) {
        fprintf(f, "   %s\n", x->measure_note);
        return;
    }
    fprintf(f, "   measured: %lld x %lld x %lld in %.3f ms (median of %d, spread %.1f%%, L2 flushed) = %.2f TFLOP/s\n",
            x->shape.m, x->shape.n, x->shape.k, x->median_ms, x->reps, 100 * x->spread, x->tflops);
    fprintf(f, "             = %.0f%% of the predicted bound, %.0f%% of the tile-traffic roof, %.0f%% of FP32 peak\n",
            100 * x->tflops * 1e3 / x->bound_pred, 100 * x->tflops * 1e3 / x->bound_tiles, 100 * x->tflops * 1e3 / peak);
    if (x->have_smem_roof)
        fprintf(f, "             = %.0f%% of the shared-memory roof\n", 100 * x->tflops * 1e3 / x->smem_bound_gflops);
    fprintf(f, "   checked first: %dx%dx%d against the float64 reference (error %.2g), and %d entries of the timed\n"
               "   product (error %.2g)\n",
            x->verify_m, x->verify_n, x->verify_k, x->verify_error, x->spot_count, x->spot_error);
}

static void print_points(const kgc_explain *x, FILE *f)
{
    if (!x->db_note[0] && x->npoints == 0)
        return;
    fprintf(f, "\n7. Timed configurations of the sweep: %s\n", x->db_note);
    int show = x->npoints < 5 ? x->npoints : 5;
    for (int i = 0; i < show; i++)
        fprintf(f, "   %6.2f TFLOP/s at %7.2f FLOP/B  %s\n", x->points[i].tflops, x->points[i].intensity,
                x->points[i].config);
    if (x->npoints > show)
        fprintf(f, "   ... and %d more (--svg draws them all)\n", x->npoints - show);
}

void kgc_explain_print(const kgc_explain *x, FILE *f)
{
    fprintf(f, "kgen explain: %s %s\n", x->tmpl, x->config);
    fprintf(f, "target: %s\n", x->mach.what);
    if (x->machine_note[0])
        fprintf(f, "note:   %s\n", x->machine_note);
    fprintf(f, "shape:  M=%lld N=%lld K=%lld, layout %s, beta = 0 (C written, not read)\n", x->shape.m, x->shape.n,
            x->shape.k, x->res.layout);
    print_traffic(x, f);
    print_resources(x, f);
    print_occupancy(x, f);
    print_banks(x, f);
    print_coalescing(x, f);
    print_roofline(x, f);
    print_points(x, f);
}

/* ------------------------------------------------------------ JSON */

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity: such a figure is null. */
static void jnum(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

#define JKEY(k) (fprintf(f, "%s\"%s\": ", *first ? "" : ", ", k), *first = 0)
#define JS(k, v) (JKEY(k), jstr(f, v))
#define JN(k, v) (JKEY(k), jnum(f, (double)(v)))

static void json_access(FILE *f, const kgc_access *a)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JS("name", a->name);
    JS("array", a->array);
    JS("space", a->shared ? "shared" : "global");
    JS("op", a->store ? "store" : "load");
    JN("width", a->width);
    JN("iters", a->iters);
    JN("requests", a->requests);
    if (a->shared) {
        JN("per_phase", a->per_phase);
        JKEY("per_phase_assumed");
        fprintf(f, "%s", a->per_phase_given ? "false" : "true");
        JN("wavefronts", a->wavefronts);
        JN("ideal", a->ideal);
        JN("mean_degree", ratio(a->wavefronts, a->ideal));
        JN("worst_degree", ratio(a->worst.wavefronts, a->worst.ideal));
        JN("worst_warp", a->worst_warp);
        JN("worst_iter", a->worst_iter);
    } else {
        JN("bytes_requested", a->requested);
        JN("bytes_unique", a->unique);
        JN("sectors", a->sectors);
        JN("ideal_sectors", a->ideal_sectors);
        JN("lines", a->lines);
        JN("sectors_per_request", ratio(a->sectors, a->requests));
        JN("efficiency", a->sectors ? (double)a->unique / (32.0 * (double)a->sectors) : 0.0);
        JN("worst_sectors", a->gworst.sectors);
        JN("worst_warp", a->gworst_warp);
    }
    fprintf(f, "}");
}

static void json_accesses(FILE *f, const kgc_access_set *s)
{
    fprintf(f, "[");
    for (int i = 0; i < s->n; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_access(f, &s->v[i]);
    }
    fprintf(f, "]");
}

static void json_target(FILE *f, const kgc_explain *x)
{
    const kgc_machine *m = &x->mach;
    int one = 1, *first = &one;
    fprintf(f, "{");
    JS("source", m->from == KGC_SRC_DEVICE ? "device" : m->from == KGC_SRC_FILE ? "limits file" : "table");
    JS("description", m->what);
    JS("note", x->machine_note);
    JS("arch", m->lim.name);
    JN("sm", m->lim.sm);
    JS("part", m->part);
    JN("sm_count", m->sm_count);
    JN("clock_ghz", m->clock_ghz);
    JN("peak_gflops", m->peak_gflops);
    JN("bandwidth_gbs", m->bandwidth_gbs);
    fprintf(f, "}");
}

static void json_tile(FILE *f, const kgc_explain *x)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JN("m", x->res.tile_m);
    JN("n", x->res.tile_n);
    JN("k", x->res.tile_k);
    JN("loads_a", x->res.loads_a);
    JN("loads_b", x->res.loads_b);
    JN("flops_per_phase", x->res.flops_per_phase);
    JN("cgma", x->res.cgma);
    JN("intensity", x->res.cgma / 4);
    fprintf(f, "}");
}

static void json_traffic(FILE *f, const kgc_explain *x)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JN("flops", x->traffic.flops);
    JN("bytes_tiles", x->traffic.bytes_tiles);
    JN("bytes_once", x->traffic.bytes_once);
    JN("intensity_tiles", x->traffic.ai_tiles);
    JN("intensity_once", x->traffic.ai_once);
    JN("blocks", x->traffic.blocks);
    JN("phases", x->traffic.phases);
    fprintf(f, "}");
}

static void json_resources(FILE *f, const kgc_explain *x)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JN("threads", x->res.threads);
    JN("smem_static", x->compiled ? x->ci.smem_static : x->res.smem_static);
    JN("smem_dynamic", x->res.smem_dynamic);
    JKEY("registers");
    if (x->have_regs)
        fprintf(f, "%d", x->regs);
    else
        fprintf(f, "null");
    JS("registers_from", x->regs_given ? "--regs" : x->compiled ? "nvrtc" : "unknown");
    JN("compiled_registers", x->compiled ? x->ci.registers : 0);
    JS("compile_note", x->compile_note);
    JN("spill_bytes", x->compiled ? x->ci.spill_stores + x->ci.spill_loads : 0);
    fprintf(f, "}");
}

static void json_occupancy(FILE *f, const kgc_explain *x)
{
    const kgi_occupancy *o = &x->occ;
    int one = 1, *first = &one;
    char lim[96];
    limiters(o, lim, sizeof lim);
    fprintf(f, "{");
    JN("by_threads", o->by_threads);
    JN("by_blocks", o->by_blocks);
    JKEY("by_registers");
    if (x->have_regs)
        fprintf(f, "%d", o->by_regs);
    else
        fprintf(f, "null");
    JN("by_smem", o->by_smem);
    JN("blocks_per_sm", o->blocks_per_sm);
    JN("warps_per_sm", o->warps_per_sm);
    JN("threads_per_sm", o->threads_per_sm);
    JN("occupancy", o->occupancy);
    JS("limited_by", lim);
    JN("regs_per_warp", o->regs_per_warp);
    JN("smem_per_block", o->smem_per_block);
    JN("regs_for_full_occupancy", x->regs_even);
    JN("regs_before_registers_bind", x->regs_full);
    JN("driver_blocks_per_sm", x->driver_blocks);
    fprintf(f, "}");
}

static void json_roofline(FILE *f, const kgc_explain *x)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JN("ridge", x->ridge);
    JN("bound_tiles_gflops", x->bound_tiles);
    JN("bound_once_gflops", x->bound_once);
    JN("smem_wavefronts_per_phase", x->have_smem_roof ? x->smem_waves : 0);
    JN("smem_bound_gflops", x->have_smem_roof ? x->smem_bound_gflops : 0);
    JN("smem_bound_alt_gflops", x->alt_smem_bound_gflops);
    JN("predicted_gflops", x->bound_pred);
    JS("predicted_by", x->bound_by);
    fprintf(f, "}");
}

static void json_measured(FILE *f, const kgc_explain *x)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JN("median_ms", x->median_ms);
    JN("min_ms", x->min_ms);
    JN("max_ms", x->max_ms);
    JN("reps", x->reps);
    JN("spread", x->spread);
    JN("tflops", x->tflops);
    JN("share_of_predicted", x->tflops * 1e3 / x->bound_pred);
    JN("verify_error", x->verify_error);
    JN("spot_error", x->spot_error);
    JN("kernel_registers", x->kernel_regs);
    fprintf(f, "}");
}

static void json_points(FILE *f, const kgc_explain *x)
{
    fprintf(f, "[");
    for (int i = 0; i < x->npoints; i++) {
        int one = 1, *first = &one;
        fprintf(f, "%s{", i ? ", " : "");
        JS("config", x->points[i].config);
        JN("intensity", x->points[i].intensity);
        JN("tflops", x->points[i].tflops);
        fprintf(f, "}");
    }
    fprintf(f, "]");
}

void kgc_explain_json(const kgc_explain *x, FILE *f)
{
    int one = 1, *first = &one;
    fprintf(f, "{");
    JS("template", x->tmpl);
    JS("config", x->config);
    JKEY("shape");
    fprintf(f, "{\"M\": %lld, \"N\": %lld, \"K\": %lld, \"lda\": %lld, \"ldb\": %lld, \"ldc\": %lld}", x->shape.m,
            x->shape.n, x->shape.k, x->shape.lda, x->shape.ldb, x->shape.ldc);
    JKEY("target");
    json_target(f, x);
    JKEY("tile");
    json_tile(f, x);
    JKEY("traffic");
    json_traffic(f, x);
    JKEY("resources");
    json_resources(f, x);
    JKEY("occupancy");
    json_occupancy(f, x);
    JKEY("accesses");
    if (x->have_acc)
        json_accesses(f, &x->acc);
    else
        fprintf(f, "null");
    JS("accesses_note", x->acc_note);
    JS("shape_note", x->shape_note);
    JKEY("accesses_alt");
    if (x->have_alt) {
        fprintf(f, "{\"pad\": %d, \"list\": ", x->alt_pad);
        json_accesses(f, &x->alt);
        fprintf(f, "}");
    } else {
        fprintf(f, "null");
    }
    JKEY("roofline");
    json_roofline(f, x);
    JKEY("measured");
    if (x->measured)
        json_measured(f, x);
    else
        fprintf(f, "null");
    JS("measure_note", x->measure_note);
    JKEY("sweep");
    json_points(f, x);
    JS("sweep_note", x->db_note);
    fprintf(f, "}\n");
}
