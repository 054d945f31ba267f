/*
 * catalogue_make.c -- kgen catalogue make: a catalogue's kernels chosen from
 * measurements, by the regret of kg_matmul's choice with each training
 * shape left out of its own prediction (see catalogue.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/catalogue.h"
#include "autotune/db.h"
#include "gen/config.h"
#include "gen/host.h"
#include "runtime/catalogue.h"

typedef struct kern {
    char tmpl[64];
    char *config;              /* layout-free */
    int threads;
    double occupancy;
    int bps;                   /* > 0: blocks per SM as a catalogue says (a kernel of opts.measured) */
} kern;

typedef struct pair {
    int layout, m, n, k;
} pair;

typedef struct collect {
    const char *device;        /* wanted, or NULL */
    char seen_device[256];
    int cc, sm_count;
    int multi;                 /* rows of several devices and none chosen */
    kern *k;
    int nk, kcap;
    pair *p;
    int np, pcap;
    int pass;                  /* the export being read (kgi_catalogue_make's passes) */
    /* measurements: (kernel, pair, microseconds, pass) */
    struct meas { int k; double us; int pass; } *m;
    pair *mp;                  /* each measurement's pair */
    int nm, mcap, mpcap;
    int rows, failed;
    char err[512];
} collect;

static void *grow(void *p, int *cap, int n, size_t size)
{
    if (n < *cap)
        return p;
    int c = *cap ? 2 * *cap : 64;
    void *q = realloc(p, (size_t)c * size);
    if (q)
        *cap = c;
    return q;
}

/* The index of the measured kernel (tmpl, cfg) among c's, or -1. */
static int measured_kernel(const collect *c, const char *tmpl, const char *cfg)
{
    for (int i = 0; i < c->nk; i++)
        if (strcmp(c->k[i].tmpl, tmpl) == 0 && strcmp(c->k[i].config, cfg) == 0)
            return i;
    return -1;
}

/* The index of kernel (tmpl, cfg) among c's, added with the given figures when new (threads and occupancy from
 * an export's row; bps > 0 from a catalogue's line); -1 out of memory. */
static int kernel_index(collect *c, const char *tmpl, const char *cfg, int threads, double occupancy, int bps)
{
    int i = measured_kernel(c, tmpl, cfg);
    if (i >= 0)
        return i;
    kern *k = grow(c->k, &c->kcap, c->nk, sizeof *k);
    if (!k)
        return -1;
    c->k = k;
    if (!(k[c->nk].config = strdup(cfg)))
        return -1;
    snprintf(k[c->nk].tmpl, sizeof k[c->nk].tmpl, "%s", tmpl);
    k[c->nk].threads = threads, k[c->nk].occupancy = occupancy, k[c->nk].bps = bps;
    return c->nk++;
}

/* Kernel ki's time `us` at pair `want` in pass `pass`, the pair added when new. 0, or -1 out of memory. */
static int add_measurement(collect *c, int ki, pair want, double us, int pass)
{
    int pi = -1;
    for (int i = c->np - 1; i >= 0 && pi < 0; i--)
        if (c->p[i].layout == want.layout && c->p[i].m == want.m && c->p[i].n == want.n && c->p[i].k == want.k)
            pi = i;
    if (pi < 0) {
        pair *p = grow(c->p, &c->pcap, c->np, sizeof *p);
        if (!p)
            return -1;
        c->p = p;
        p[c->np] = want;
        pi = c->np++;
    }
    struct meas *m = grow(c->m, &c->mcap, c->nm, sizeof *m);
    if (!m)
        return -1;
    c->m = m;
    pair *mp = grow(c->mp, &c->mpcap, c->nm, sizeof *mp);
    if (!mp)
        return -1;
    c->mp = mp;
    mp[c->nm] = c->p[pi];
    m[c->nm++] = (struct meas){ki, us, pass};
    return 0;
}

static void out_of_memory(collect *c)
{
    c->failed = 1;
    snprintf(c->err, sizeof c->err, "out of memory");
}

static void on_row(void *ud, const kgi_dbkey *key, const kgi_result *res)
{
    collect *c = ud;
    if (c->failed)
        return;
    c->rows++;
    if (c->device && strcmp(key->device, c->device) != 0)
        return;
    if (!c->seen_device[0]) {
        snprintf(c->seen_device, sizeof c->seen_device, "%s", key->device);
        c->cc = key->cc, c->sm_count = key->sm_count;
    } else if (strcmp(c->seen_device, key->device) != 0 || c->cc != key->cc || c->sm_count != key->sm_count) {
        c->multi = 1;
        return;
    }
    if ((res->outcome != KGI_OUT_OK && res->outcome != KGI_OUT_SLOW) || !(res->time_ms > 0))
        return;
    int li = kgi_layout_index(key->layout);
    char cfg[2048];
    if (li < 0 || kgi_cat_strip_layout(key->config, cfg, sizeof cfg, c->err, sizeof c->err) != 0) {
        c->failed = 1;
        return;
    }
    int ki = kernel_index(c, key->tmpl, cfg, res->threads, res->occupancy, 0);
    if (ki < 0 || add_measurement(c, ki, (pair){li, key->m, key->n, key->k}, res->time_ms * 1000.0, c->pass) != 0)
        out_of_memory(c);
}

/* The kernels and times of an earlier catalogue (opts.measured) as measurements of pass `pass`, after the
 * exports: it must come from the device they do. */
static void from_catalogue(collect *c, const kgi_catalogue *cat, const char *path, int pass)
{
    if (strcmp(cat->device, c->seen_device) != 0 || cat->arch != c->cc || cat->sms != c->sm_count) {
        c->failed = 1;
        snprintf(c->err, sizeof c->err, "%s was measured on %s (sm_%d, %d SMs), the exports on %s (sm_%d, %d SMs)",
                 path, cat->device, cat->arch, cat->sms, c->seen_device, c->cc, c->sm_count);
        return;
    }
    for (int j = 0; j < cat->nkernels; j++) {
        const kgi_cat_kernel *kk = &cat->kernels[j];
        int ki = kernel_index(c, kk->tmpl, kk->config, 0, 0, kk->bps);
        if (ki < 0) {
            out_of_memory(c);
            return;
        }
        /* Its blocks per SM stay the catalogue's where an export timed it too: an export reads them from
         * the occupancy of its first row, whose layout is whichever came first (registers differ by layout:
         * catalogue kernel 1 of sm_90 fits 10 blocks in nn, 8 in nt), and timing a kernel at a few more
         * pairs must not move the model's waves at every other. */
        c->k[ki].bps = kk->bps;
        for (int r = 0; r < cat->nrows; r++) {
            const kgi_cat_row *row = &cat->rows[r];
            double us = kgi_catalogue_time(cat, r, j);
            if (us > 0 && add_measurement(c, ki, (pair){row->layout, row->m, row->n, row->k}, us, pass) != 0) {
                out_of_memory(c);
                return;
            }
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->layout != y->layout)
        return x->layout - y->layout;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Room for NEEDS: four classes and their commas ("4B,1,4,4A"). */
#define KLINE_NEEDS 16

/* What a catalogue line says of a kernel that the runtime's model needs:
 * the alignment class it needs in each layout, its tile, K slices, for a persistent grid
 * the depth of K its stream-K pieces are cut in, the tile's K (0: not
 * persistent), and the kernels a call launches, from the rendered geometry
 * and resources(). */
static kg_status describe(kgi_host *h, const kgi_limits *lim, const kern *k, char *needs, int *tm, int *tn,
                          char *slices, int *persistent, int *launches, char *err, size_t errlen)
{
    /* NEEDS per layout: a transposing copy through cp.async moves single floats, so which operands the
     * vector loads bind depends on the layout. One class where all four agree; a layout the kernel does not
     * render in (it is not measured there) takes nn's. nn's source and text serve the rest */
    char per[4][8], text[2304], other[2304];
    kg_source *src = NULL;
    snprintf(text, sizeof text, "%s layout=nn", k->config);
    kg_status st = kgi_host_render(h, k->tmpl, text, lim, &src, err, errlen);
    if (st != KG_OK)
        return st;
    for (int l = 0; l < 4; l++) {
        kg_source *s = src;
        if (l > 0) {
            snprintf(other, sizeof other, "%s layout=%s", k->config, kgi_layout_name(l));
            if (kgi_host_render(h, k->tmpl, other, lim, &s, err, errlen) != KG_OK) {
                memcpy(per[l], per[0], sizeof per[l]);
                continue;
            }
        }
        int need, op;
        kgi_geometry_needs(&s->geo, &need, &op);
        snprintf(per[l], sizeof per[l], "%d%s", need, op == 1 ? "A" : op == 2 ? "B" : "");
        if (s != src)
            kg_source_free(s);
    }
    if (!strcmp(per[0], per[1]) && !strcmp(per[0], per[2]) && !strcmp(per[0], per[3]))
        snprintf(needs, KLINE_NEEDS, "%.3s", per[0]);
    else
        snprintf(needs, KLINE_NEEDS, "%.3s,%.3s,%.3s,%.3s", per[0], per[1], per[2], per[3]);
    const kgi_geometry *g = &src->geo;
    /* a grid dimension over K (ceil(K / D) blocks): as many slices as K needs */
    int depth = 0;
    for (int i = 0; i < 3; i++)
        if (g->grid[i].dim == 'K' && g->grid[i].mul == 1)
            depth = (int)g->grid[i].div;
    /* every call launches the main kernel, and the pre kernel (a beta pass) where there is one; the packing
     * kernel and stream-K's workspace variant run only for some calls' operands */
    *launches = src->pre_entry[0] ? 2 : 1;
    kg_source_free(src);
    kgi_resources r;
    if ((st = kgi_host_resources(h, k->tmpl, text, &r, err, errlen)) != KG_OK)
        return st;
    kgi_res res;
    kgi_res_from(&r, &res);
    *tm = res.tile_m, *tn = res.tile_n;
    if (depth > 0)
        snprintf(slices, 16, "K/%d", depth);
    else
        snprintf(slices, 16, "%d", res.kslices > 0 ? res.kslices : 1);
    *persistent = res.persistent ? (res.tile_k > 1 ? res.tile_k : 1) : 0;
    if (*tm < 1 || *tn < 1) {
        snprintf(err, errlen, "%s %s: resources() gives no output tile", k->tmpl, k->config);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

/* A kernel line's fields (describe()), for every measured kernel. */
typedef struct kline {
    char needs[KLINE_NEEDS], slices[16];
    int tm, tn, persistent, bps, launches;
} kline;

/* The catalogue text of kernels pick[0..n) with their times (the header's
 * comment from `rep`, when given). */
static void write_catalogue(FILE *f, const collect *c, const kline *kl, const double *t, const int *pick, int n,
                            const kgi_cat_make_opts *o, const kgi_cat_make_report *rep)
{
    if (rep && o->keep && o->add && o->add_best > 0)
        fprintf(f,
                "# kgen kernel catalogue for sm_%d: the %d kernels of %s and %d of the %d of %s (--add-best %d: those\n"
                "# that most lowered kg_matmul's leave-one-out regret), %s, each timed over %d (layout, shape)\n"
                "# pairs by `kgen tune --configs` on %s. kg_matmul's choice from them, each shape left out of its own\n"
                "# prediction: %.3f of the fastest of them on geometric mean, %.2f at worst (%s);\n"
                "# %.4f of the fastest of all %d (%.4f with those of %s alone). Rebuild: see catalogue/README.md.\n",
                c->cc, o->keep->nkernels, o->keep_path, rep->added, o->add->n, o->add_path, o->add_best,
                o->measured ? "with new measurements" : "measured again", c->np, c->seen_device, rep->loo_geomean,
                rep->loo_worst, rep->loo_worst_pair[0] ? rep->loo_worst_pair : "none", rep->loo_fit_all,
                o->keep->nkernels + o->add->n, rep->loo_keep_all, o->keep_path);
    else if (rep && o->keep && o->add)
        fprintf(f,
                "# kgen kernel catalogue for sm_%d: the %d kernels of %s and the %d of %s, %s, each timed\n"
                "# over %d (layout, shape) pairs by `kgen tune --configs` on %s. kg_matmul's choice from them, each\n"
                "# shape left out of its own prediction: %.3f of the fastest of them on geometric mean, %.2f at worst\n"
                "# (%s). Rebuild: see catalogue/README.md.\n",
                c->cc, o->keep->nkernels, o->keep_path, o->add->n, o->add_path,
                o->measured ? "with new measurements" : "measured again", c->np, c->seen_device, rep->loo_geomean,
                rep->loo_worst, rep->loo_worst_pair[0] ? rep->loo_worst_pair : "none");
    else if (rep && o->keep)
        fprintf(f,
                "# kgen kernel catalogue for sm_%d: the %d kernels of %s %s, each timed over %d (layout,"
                " shape)\n# pairs by `kgen tune --configs` on %s. kg_matmul's choice from them, each shape left out"
                " of its\n# own prediction: %.3f of the fastest of them on geometric mean, %.2f at worst (%s).\n"
                "# Rebuild: see catalogue/README.md.\n",
                c->cc, o->keep->nkernels, o->keep_path,
                !o->measured ? "measured again" : rep->passes > 0 ? "with new measurements" : "with their times", c->np,
                c->seen_device, rep->loo_geomean, rep->loo_worst, rep->loo_worst_pair[0] ? rep->loo_worst_pair : "none");
    else if (rep)
        fprintf(f,
                "# kgen kernel catalogue for sm_%d: %d kernels chosen from %d measured, each timed over %d (layout,"
                " shape) pairs\n# by `kgen tune --configs` on %s, so that kg_matmul's choice from them comes closest"
                " to the best\n# measured where each shape is left out of its own prediction (leave-one-out regret"
                " %.3f, worst %.2f:\n# %s). Fastest of the set: within %.1f%% of the best measured kernel on"
                " geometric mean, %.1f%% at\n# worst (%s). Rebuild: see catalogue/README.md.\n",
                c->cc, n, c->nk, c->np, c->seen_device, rep->loo_geomean, rep->loo_worst,
                rep->loo_worst_pair[0] ? rep->loo_worst_pair : "none", 100 * (rep->geomean_regret - 1),
                100 * (rep->worst_regret - 1), rep->worst_pair[0] ? rep->worst_pair : "none");
    if (rep && o->max_compile_kept)
        fprintf(f,
                "# Fitted to --max-compile kept: at most the %.1f s of NVRTC that the %d of %s took, of the\n"
                "# %.1f s that all took in the layouts they have times in (a thread each, on the machine that made\n"
                "# this file); %d of them dropped, the least useful per second first, leaving %.1f s;\n"
                "# kg_matmul's leave-one-out regret %.4f before.",
                rep->compile_budget_s, o->keep->nkernels, o->keep_path, rep->compile_before_s, rep->dropped,
                rep->compile_after_s, rep->loo_before_fit);
    else if (rep && o->max_compile_s > 0)
        fprintf(f,
                "# Fitted to --max-compile %g: NVRTC took %.1f s over the kernels in the layouts they have times in\n"
                "# (a thread each, on the machine that made this file); %d of them dropped, the least useful per second\n"
                "# first, leaving %.1f s; kg_matmul's leave-one-out regret %.4f before.",
                o->max_compile_s, rep->compile_before_s, rep->dropped, rep->compile_after_s, rep->loo_before_fit);
    if (rep && (o->max_compile_kept || o->max_compile_s > 0)) {
        for (int i = 0; i < rep->dropped && i < KGI_CAT_DROPPED_MAX; i++)
            fprintf(f, "%s%d", i == 0 ? "\n# Dropped, by their IDs before: " : i % 24 == 0 ? ",\n# " : ", ",
                    rep->dropped_id[i]);
        fputs(rep->dropped > KGI_CAT_DROPPED_MAX ? ", ...\n" : "\n", f);
    }
    if (rep && rep->pass_pairs > 0)
        fprintf(f,
                "# %d of the pairs, where the host's launches bound a call, timed in %d passes, each in a process of\n"
                "# its own: a kernel's time there is the median of its passes.\n",
                rep->pass_pairs, rep->passes);
    if (rep && o->measured && rep->passes == 0)
        fprintf(f, "# Its times are those %s held (how they were measured: docs/performance.md).\n", o->measured_path);
    else if (rep && o->measured)
        fprintf(f,
                "# %d of the times are those %s held before, where the exports did not time that kernel at that pair\n"
                "# (how they were measured: docs/performance.md).\n",
                rep->measured_times, o->measured_path);
    if (rep && o->start && rep->from_start)
        fprintf(f,
                "# A rebuild of %s: its %d kernels, %d of them replaced by other measured kernels, kept over a\n"
                "# choice from scratch by the regret both minimise (geometric mean %.4f against %.4f).\n",
                o->start_path, n, rep->start_replaced, exp(rep->start_cost), exp(rep->scratch_cost));
    else if (rep && o->start)
        fprintf(f,
                "# Chosen from scratch: the kernels of %s, %d of them replaced, scored worse by the regret both\n"
                "# minimise (geometric mean %.4f against %.4f).\n",
                o->start_path, rep->start_replaced, exp(rep->start_cost), exp(rep->scratch_cost));
    const char *driver = o->driver && o->driver[0] ? o->driver : rep && rep->passes == 0 ? o->measured->driver : "unknown";
    fprintf(f, "kgen-catalogue %d\narch %d\nsms %d\ndevice %s\ndriver %s\ndate %s\ncommand %s\n", KGI_CATALOGUE_VERSION,
            c->cc, c->sm_count, c->seen_device, driver, o->date, o->command);
    fprintf(f, "# kernel ID TEMPLATE NEEDS TILE_M TILE_N KSLICES PERSISTENT BPS LAUNCHES CONFIG\n");
    for (int i = 0; i < n; i++) {
        const kline *l = &kl[pick[i]];
        fprintf(f, "kernel %d %s %s %d %d %s %d %d %d %s\n", i + 1, c->k[pick[i]].tmpl, l->needs, l->tm, l->tn,
                l->slices, l->persistent, l->bps, l->launches, c->k[pick[i]].config);
    }
    fprintf(f, "# time LAYOUT M N K, then each kernel's median time in microseconds ('-': not measured there)\n");
    for (int p = 0; p < c->np; p++) {
        fprintf(f, "time %s %d %d %d", kgi_layout_name(c->p[p].layout), c->p[p].m, c->p[p].n, c->p[p].k);
        for (int i = 0; i < n; i++) {
            double v = t[(size_t)pick[i] * c->np + p];
            if (isfinite(v))
                fprintf(f, " %.2f", v);
            else
                fputs(" -", f);
        }
        fputc('\n', f);
    }
}

/*
 * What kg_matmul's model predicts for every measured kernel at every pair
 * with that pair left out of the prediction (pred[kernel * np + pair];
 * INFINITY where the kernel cannot run at the pair's alignment class or
 * nothing calibrates it): a catalogue of all the measured kernels, ranked
 * by kgi_catalogue_rank as kg_matmul and the leave-one-out test rank.
 */
static kg_status loo_predictions(const collect *c, const kline *kl, const double *t, const kgi_cat_make_opts *o,
                                 double *pred, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int *all = malloc((size_t)c->nk * sizeof *all);
    FILE *f = all ? open_memstream(&text, &len) : NULL;
    if (!f) {
        free(all);
        snprintf(err, errlen, "out of memory");
        return KG_ERR_NOMEM;
    }
    for (int i = 0; i < c->nk; i++)
        all[i] = i;
    write_catalogue(f, c, kl, t, all, c->nk, o, NULL);
    free(all);
    if (fclose(f) != 0 || !text) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return KG_ERR_NOMEM;
    }
    kgi_catalogue *cat = NULL;
    char perr[512];
    if (kgi_catalogue_parse(text, len, "measured kernels", &cat, perr, sizeof perr) != 0) {
        free(text);
        snprintf(err, errlen, "the measured kernels as a catalogue: %s", perr);
        return KG_ERR_CONFIG;
    }
    free(text);
    kgi_pick *picks = malloc(((size_t)c->nk + 1) * sizeof *picks);
    kg_status st = picks ? KG_OK : KG_ERR_NOMEM;
    if (picks && cat->nrows != c->np) {
        snprintf(err, errlen, "the measured kernels as a catalogue: %d time lines read back for %d pairs", cat->nrows,
                 c->np);
        free(picks);
        kgi_catalogue_free(cat);
        return KG_ERR_CONFIG;
    }
    for (size_t i = 0; i < (size_t)c->nk * c->np; i++)
        pred[i] = INFINITY;
    for (int r = 0; r < c->np && st == KG_OK; r++) {
        const kgi_cat_row *row = &cat->rows[r];
        int align = kgi_natural_align(row->layout, row->m, row->n, row->k);
        int got = kgi_catalogue_rank(cat, row->layout, row->m, row->n, row->k, align, cat->sms, r, picks, c->nk);
        if (got < 0)
            st = KG_ERR_NOMEM;
        for (int i = 0; i < got && i < c->nk; i++)
            pred[(size_t)picks[i].kernel * c->np + r] = picks[i].predicted_us;
    }
    if (st != KG_OK)
        snprintf(err, errlen, "out of memory");
    free(picks);
    kgi_catalogue_free(cat);
    return st;
}

/* The measured kernel of each of catalogue k's kernels, in its order, into idx[] (--kernels, --start). */
static kg_status find_kernels(const collect *c, const kgi_catalogue *k, const char *path, int *idx, char *err,
                              size_t errlen)
{
    if (k->arch != c->cc) {
        snprintf(err, errlen, "%s is a catalogue for sm_%d; the export measured sm_%d", path, k->arch, c->cc);
        return KG_ERR_CONFIG;
    }
    if (k->nkernels > c->nk) {
        snprintf(err, errlen, "%s has %d kernels; the export measured %d", path, k->nkernels, c->nk);
        return KG_ERR_CONFIG;
    }
    for (int n = 0; n < k->nkernels; n++) {
        const kgi_cat_kernel *kk = &k->kernels[n];
        if ((idx[n] = measured_kernel(c, kk->tmpl, kk->config)) < 0) {
            snprintf(err, errlen, "kernel %d of %s (%s %s) has no measurement in the export", kk->id, path, kk->tmpl,
                     kk->config);
            return KG_ERR_CONFIG;
        }
        for (int q = 0; q < n; q++)
            if (idx[q] == idx[n]) {
                snprintf(err, errlen, "kernel %d of %s is its kernel %d in another spelling (%s %s)", kk->id, path,
                         k->kernels[q].id, kk->tmpl, kk->config);
                return KG_ERR_CONFIG;
            }
    }
    return KG_OK;
}

/* The measured kernel of each line of `add` after pick[0..*n), appended in its order (--add). A line is matched
 * in the template's canonical form (every parameter, in the template's order; the layout left out), as the tuner
 * wrote the export's rows: a list may give the parameters in any order and leave defaults out. */
static kg_status find_added(const collect *c, kgi_host *h, const kgi_config_list *add, const char *path, int *pick,
                            int *n, char *err, size_t errlen)
{
    for (int a = 0; a < add->n; a++) {
        const kgi_config_entry *e = &add->e[a];
        char canon[sizeof ((kgi_cat_kernel *)0)->config + 16], text[sizeof ((kgi_cat_kernel *)0)->config], why[256];
        if (kgi_host_check(h, e->tmpl, e->config, NULL, canon, sizeof canon, why, sizeof why) != KG_OK ||
            kgi_cat_strip_layout(canon, text, sizeof text, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%d: %s", path, e->line, why);
            return KG_ERR_CONFIG;
        }
        int q = measured_kernel(c, e->tmpl, text);
        if (q < 0) {
            snprintf(err, errlen, "%s:%d: %s %s has no measurement in the export", path, e->line, e->tmpl, text);
            return KG_ERR_CONFIG;
        }
        for (int i = 0; i < *n; i++)
            if (pick[i] == q) {
                snprintf(err, errlen, "%s:%d: %s %s is kernel %d already", path, e->line, e->tmpl, text, i + 1);
                return KG_ERR_CONFIG;
            }
        pick[(*n)++] = q;
    }
    return KG_OK;
}

/* kg_matmul's leave-one-out regret of the set set[0..nset) (its kernel predicted fastest at each pair, among those
 * measured there) against the fastest of base[0..nbase) (base NULL: all nk kernels), over the pairs where the set has
 * a prediction: the geometric mean, and in *worst (1 or more) and *worst_pair (-1: none above 1) its largest. The
 * figure the report and the header give. */
static double loo_regret(const double *t, const double *pred, int np, int nk, const int *base, int nbase,
                         const int *set, int nset, double *worst, int *worst_pair)
{
    double sum = 0;
    int counted = 0;
    *worst = 1.0, *worst_pair = -1;
    for (int p = 0; p < np; p++) {
        double best = INFINITY, e = INFINITY, chosen = INFINITY;
        for (int q = 0; q < (base ? nbase : nk); q++) {
            double v = t[(size_t)(base ? base[q] : q) * np + p];
            if (v < best)
                best = v;
        }
        for (int q = 0; q < nset; q++) {
            double v = t[(size_t)set[q] * np + p], pe = pred[(size_t)set[q] * np + p];
            if (isfinite(v) && pe < e)
                e = pe, chosen = v;
        }
        if (!isfinite(chosen) || !isfinite(best))
            continue; /* nothing else calibrates a kernel of the set measured here */
        double r = chosen / best;
        sum += log(r);
        counted++;
        if (r > *worst)
            *worst = r, *worst_pair = p;
    }
    return counted ? exp(sum / counted) : 1.0;
}

/* --add-best: pick[0..n0) are the kept kernels and pick[n0..*n) those listed; keeps at most o->add_best of the listed,
 * those the greedy cover adds to the kept (kgi_cat_greedy_from, over the kept and listed kernels alone), in the list's
 * order, and says how many and what they gain in rep. */
static kg_status choose_added(int np, const double *t, const double *pred, const kgi_cat_make_opts *o, int *pick,
                              int n0, int *n, kgi_cat_make_report *rep)
{
    int nc = *n;
    double *ts = malloc((size_t)nc * np * sizeof *ts), *ps = malloc((size_t)nc * np * sizeof *ps);
    int *sub = malloc((size_t)nc * sizeof *sub), *all = malloc((size_t)nc * sizeof *all);
    char *chosen = calloc((size_t)nc, 1);
    if (!ts || !ps || !sub || !all || !chosen) {
        free(ts), free(ps), free(sub), free(all), free(chosen);
        return KG_ERR_NOMEM;
    }
    memcpy(all, pick, (size_t)nc * sizeof *all);
    for (int i = 0; i < nc; i++) {
        memcpy(ts + (size_t)i * np, t + (size_t)pick[i] * np, (size_t)np * sizeof *ts);
        memcpy(ps + (size_t)i * np, pred + (size_t)pick[i] * np, (size_t)np * sizeof *ps);
        sub[i] = i;
    }
    double worst = o->max_regret > 0 ? o->max_regret : INFINITY;
    int m = kgi_cat_greedy_from(ts, ps, nc, np, n0, n0 + o->add_best, o->tolerance, worst, sub);
    if (m < 0) {
        free(ts), free(ps), free(sub), free(all), free(chosen);
        return KG_ERR_NOMEM;
    }
    /* sub[0..m): the set in the order taken, as places in all[] (the list's entry j at n0 + j) */
    for (int i = n0; i < m; i++) {
        chosen[sub[i]] = 1;
        if (i - n0 < KGI_CAT_ADDED_MAX)
            rep->added_line[i - n0] = o->add->e[sub[i] - n0].line;
    }
    for (int i = 0; i < m; i++)
        sub[i] = all[sub[i]];
    double w_r;
    int w_p;
    for (int i = n0; i < m && i - n0 < KGI_CAT_ADDED_MAX; i++) /* the regret after each addition */
        rep->added_loo[i - n0] = loo_regret(t, pred, np, 0, all, nc, sub, i + 1, &w_r, &w_p);
    int w = n0;
    for (int i = n0; i < nc; i++)
        if (chosen[i])
            pick[w++] = all[i];
    rep->loo_keep_all = loo_regret(t, pred, np, 0, all, nc, all, n0, &w_r, &w_p);
    rep->loo_set_all = loo_regret(t, pred, np, 0, all, nc, pick, w, &w_r, &w_p);
    rep->added = w - n0;
    *n = w;
    free(ts), free(ps), free(sub), free(all), free(chosen);
    return KG_OK;
}

/* --max-compile: the set pick[0..*n) fitted to o->max_compile_s seconds of NVRTC (with max_compile_kept, the seconds
 * of the first o->keep->nkernels, keep's own) by kgi_cat_trim, each kernel's cost
 * what o->compile_cost gives for it in every layout it has a time in (those kg_matmul and `kgen precompile` compile
 * it in). before[0..*n) is the set as it was; the regrets reported are against its fastest with --kernels (all
 * measured otherwise), as the header's are. */
static kg_status fit_compile(const collect *c, const double *t, const double *pred, const kgi_cat_make_opts *o,
                             const int *before, int *pick, int *n, kgi_cat_make_report *rep, char *err, size_t errlen)
{
    int n0 = *n, m = 0;
    const char **tmpl = malloc((size_t)n0 * 4 * sizeof *tmpl);
    char **config = calloc((size_t)n0 * 4, sizeof *config);
    int *owner = malloc((size_t)n0 * 4 * sizeof *owner), *dropped = malloc((size_t)n0 * sizeof *dropped);
    double *seconds = calloc((size_t)n0 * 4, sizeof *seconds), *cost = calloc((size_t)c->nk, sizeof *cost);
    kg_status st = KG_ERR_NOMEM;
    if (!tmpl || !config || !owner || !dropped || !seconds || !cost) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int q = 0; q < n0; q++)
        for (int l = 0; l < 4; l++) {
            int has = 0;
            for (int p = 0; p < c->np && !has; p++)
                has = c->p[p].layout == l && isfinite(t[(size_t)pick[q] * c->np + p]);
            if (!has)
                continue;
            size_t len = strlen(c->k[pick[q]].config) + 16;
            if (!(config[m] = malloc(len))) {
                snprintf(err, errlen, "out of memory");
                goto done;
            }
            snprintf(config[m], len, "%s layout=%s", c->k[pick[q]].config, kgi_layout_name(l));
            tmpl[m] = c->k[pick[q]].tmpl;
            owner[m++] = pick[q];
        }
    if (o->compile_cost(o->compile_ud, c->cc, m, tmpl, (const char *const *)config, seconds, err, errlen) != 0) {
        st = KG_ERR_COMPILE;
        goto done;
    }
    for (int i = 0; i < m; i++)
        cost[owner[i]] += seconds[i];
    for (int q = 0; q < n0; q++)
        rep->compile_before_s += cost[pick[q]];
    double worst = o->max_regret > 0 ? o->max_regret : INFINITY, w_r;
    int w_p;
    const int *base = o->keep ? before : NULL;
    rep->loo_before_fit = loo_regret(t, pred, c->np, c->nk, base, n0, before, n0, &w_r, &w_p);
    rep->compile_budget_s = o->max_compile_s;
    if (o->max_compile_kept) {
        rep->compile_budget_s = 0;
        for (int q = 0; q < o->keep->nkernels && q < n0; q++)
            rep->compile_budget_s += cost[before[q]];
    }
    int got = kgi_cat_trim(t, pred, c->nk, c->np, worst, cost, rep->compile_budget_s, pick, n, dropped);
    if (got == -2) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    rep->dropped = n0 - *n;
    for (int q = 0; q < *n; q++)
        rep->compile_after_s += cost[pick[q]];
    /* each drop's regret: the set before without the first i + 1 dropped */
    for (int i = 0; i < rep->dropped && i < KGI_CAT_DROPPED_MAX; i++) {
        int k = 0;
        for (int q = 0; q < n0; q++) {
            int gone = 0;
            for (int j = 0; j <= i; j++)
                gone |= before[q] == dropped[j];
            if (!gone)
                owner[k++] = before[q];
            if (before[q] == dropped[i])
                rep->dropped_id[i] = q + 1;
        }
        rep->dropped_s[i] = cost[dropped[i]];
        rep->dropped_loo[i] = loo_regret(t, pred, c->np, c->nk, base, n0, owner, k, &w_r, &w_p);
    }
    if (got == -1) {
        snprintf(err, errlen,
                 "--max-compile %.1f: the %d kernels left take %.1f s of NVRTC, and dropping any of them would leave "
                 "kg_matmul's choice at some (layout, shape) more than %.2f times slower than the fastest there",
                 rep->compile_budget_s, *n, rep->compile_after_s, worst);
        st = KG_ERR_CONFIG;
        goto done;
    }
    st = KG_OK;
done:
    for (int i = 0; config && i < n0 * 4; i++)
        free(config[i]);
    free(config);
    free(tmpl);
    free(owner);
    free(dropped);
    free(seconds);
    free(cost);
    return st;
}

kg_status kgi_catalogue_make(const char *const *exports, const size_t *lens, int nexports, const kgi_cat_make_opts *o,
                             FILE *f, kgi_cat_make_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    kgi_db *db = NULL;
    collect c;
    memset(&c, 0, sizeof c);
    c.device = o->device;
    double *t = NULL, *tp = NULL, *pred = NULL;
    char *again = NULL;         /* per pair: timed by a pass after the first */
    int *pick = NULL;
    int *listed = NULL, nlisted = 0; /* with --add-best: the kept and all listed kernels, before the choice */
    kline *kl = NULL;
    kgi_host *h = NULL;
    kg_status st = KG_ERR_INVALID_ARG;
    if (nexports < (o->measured ? 0 : 1) || nexports > KGI_CAT_MAX_PASSES) {
        snprintf(err, errlen, "%d exports: passes of one measurement are 1 to %d (0 with earlier measurements alone)",
                 nexports, KGI_CAT_MAX_PASSES);
        return st;
    }
    /* each export into a database of its own: one that holds the same (kernel, pair) as another is a pass of
     * its own, not an update of it */
    for (int e = 0; e < nexports; e++) {
        rep->bad_export = 0;
        if ((st = kgi_db_open(":memory:", KGI_DB_CREATE, &db, err, errlen)) != KG_OK)
            goto done;
        int ins, upd, kept;
        rep->bad_export = e + 1; /* what fails from here is this export's */
        if ((st = kgi_db_import(db, exports[e], lens[e], &ins, &upd, &kept, err, errlen)) != KG_OK)
            goto done;
        kgi_db_filter all = {0};
        c.pass = e;
        if ((st = kgi_db_show(db, &all, 0, on_row, &c)) != KG_OK) {
            snprintf(err, errlen, "reading the rows: %s", kgi_db_error(db));
            goto done;
        }
        kgi_db_close(db);
        db = NULL;
        if (c.failed)
            break;
    }
    if (!c.failed)
        rep->bad_export = 0;
    /* earlier measurements: a pass of their own after the exports', used where no export timed the kernel; with
     * no export, the only times (a catalogue refitted: --max-compile) */
    if (nexports == 0) {
        snprintf(c.seen_device, sizeof c.seen_device, "%s", o->measured->device);
        c.cc = o->measured->arch, c.sm_count = o->measured->sms;
    }
    if (!c.failed && o->measured && c.seen_device[0])
        from_catalogue(&c, o->measured, o->measured_path, nexports);
    st = KG_ERR_CONFIG;
    if (c.failed) {
        snprintf(err, errlen, "%s", c.err);
        goto done;
    }
    if (c.multi) {
        snprintf(err, errlen, "the rows come from several devices: choose one with --device NAME");
        goto done;
    }
    if (c.nm == 0) {
        snprintf(err, errlen, "no timed rows%s%s", o->device ? " for device " : "", o->device ? o->device : "");
        goto done;
    }
    qsort(c.p, (size_t)c.np, sizeof *c.p, cmp_pair);
    st = KG_ERR_NOMEM;
    t = malloc((size_t)c.nk * c.np * sizeof *t);
    int slots = nexports + (o->measured != NULL); /* the exports' passes, then the earlier measurements */
    tp = malloc((size_t)slots * c.nk * c.np * sizeof *tp);
    pred = malloc((size_t)c.nk * c.np * sizeof *pred);
    pick = malloc((size_t)c.nk * sizeof *pick);
    kl = calloc((size_t)c.nk, sizeof *kl);
    again = calloc((size_t)c.np, 1);
    if (!t || !tp || !pred || !pick || !kl || !again)
        goto done;
    /* a (kernel, pair)'s time: its fastest row within an export (the same kernel spelt for another layout), the
     * median of the exports that timed it (of two, their geometric mean). Passes of the same measurement in
     * separate processes differ where a call is bound by the host's launches, which run faster in some
     * processes than in others (by up to 1.4x, catalogue/README.md); the median is the time the passes agree
     * on, where one process's launches were slow or fast */
    for (size_t i = 0; i < (size_t)slots * c.nk * c.np; i++)
        tp[i] = INFINITY;
    for (int i = 0; i < c.nm; i++) {
        /* measurements name their pair by value: find it among the sorted ones */
        pair *p = bsearch(&c.mp[i], c.p, (size_t)c.np, sizeof *c.p, cmp_pair);
        double *cell = &tp[((size_t)c.m[i].pass * c.nk + (size_t)c.m[i].k) * c.np + (size_t)(p - c.p)];
        if (c.m[i].us < *cell)
            *cell = c.m[i].us;
        again[p - c.p] |= c.m[i].pass > 0 && c.m[i].pass < nexports;
    }
    for (size_t i = 0; i < (size_t)c.nk * c.np; i++) {
        double v[KGI_CAT_MAX_PASSES];
        int nv = 0;
        for (int e = 0; e < nexports; e++)
            if (isfinite(tp[(size_t)e * c.nk * c.np + i]))
                v[nv++] = tp[(size_t)e * c.nk * c.np + i];
        qsort(v, (size_t)nv, sizeof *v, cmp_double);
        t[i] = nv == 0 ? INFINITY : nv % 2 ? v[nv / 2] : sqrt(v[nv / 2 - 1] * v[nv / 2]);
        if (nv == 0 && slots > nexports && isfinite(tp[(size_t)nexports * c.nk * c.np + i])) {
            t[i] = tp[(size_t)nexports * c.nk * c.np + i];
            rep->measured_times++;
        }
    }
    /* the pairs a later pass timed again (the header says how many) */
    rep->passes = nexports;
    for (int p = 0; p < c.np; p++)
        rep->pass_pairs += again[p];
    /* describe each measured kernel as a catalogue line says it */
    const kgi_limits *lim = kgi_arch_limits(c.cc);
    if (!lim) {
        snprintf(err, errlen, "no limits known for sm_%d (the rows' compute capability)", c.cc);
        st = KG_ERR_CONFIG;
        goto done;
    }
    if (!(h = kgi_host_new()) || (o->template_path && kgi_host_set_path(h, o->template_path) != 0))
        goto done;
    for (int i = 0; i < c.nk; i++) {
        const kern *k = &c.k[i];
        kline *l = &kl[i];
        if ((st = describe(h, lim, k, l->needs, &l->tm, &l->tn, l->slices, &l->persistent, &l->launches, err,
                           errlen)) != KG_OK)
            goto done;
        int bps = k->bps > 0       ? k->bps
                  : k->threads > 0 ? (int)lround(k->occupancy * lim->max_threads_per_sm / k->threads)
                                   : 1;
        l->bps = bps < 1 ? 1 : bps;
    }
    if ((st = loo_predictions(&c, kl, t, o, pred, err, errlen)) != KG_OK)
        goto done;
    int n;
    if (o->keep) {
        if ((st = find_kernels(&c, o->keep, o->keep_path, pick, err, errlen)) != KG_OK)
            goto done;
        n = o->keep->nkernels;
        if (o->add && (st = find_added(&c, h, o->add, o->add_path, pick, &n, err, errlen)) != KG_OK)
            goto done;
        if (o->add && o->add_best > 0) {
            if (!(listed = malloc((size_t)n * sizeof *listed))) {
                st = KG_ERR_NOMEM;
                snprintf(err, errlen, "out of memory");
                goto done;
            }
            memcpy(listed, pick, (size_t)n * sizeof *listed);
            nlisted = n;
        }
        if (o->add && o->add_best > 0 &&
            (st = choose_added(c.np, t, pred, o, pick, o->keep->nkernels, &n, rep)) != KG_OK) {
            snprintf(err, errlen, "out of memory choosing among the kernels of %s", o->add_path);
            goto done;
        }
    } else {
        double worst = o->max_regret > 0 ? o->max_regret : INFINITY;
        n = kgi_cat_greedy(t, pred, c.nk, c.np, o->max_kernels, o->tolerance, worst, pick);
        kgi_cat_exchange(t, pred, c.nk, c.np, worst, pick, n);
        if (o->start) {
            /* a rebuild: the catalogue it replaces, improved by the same swaps, where that scores better than the
             * choice from scratch (a greedy cover's early picks are not the best set, and the `worst` rule bars a
             * kernel by where it was added, not by what the finished set does) */
            int *from = malloc((size_t)c.nk * sizeof *from);
            if (!from) {
                st = KG_ERR_NOMEM;
                goto done;
            }
            if ((st = find_kernels(&c, o->start, o->start_path, from, err, errlen)) != KG_OK) {
                free(from);
                goto done;
            }
            int ns = o->start->nkernels;
            char *was = calloc((size_t)c.nk, 1);
            if (!was) {
                free(from);
                st = KG_ERR_NOMEM;
                goto done;
            }
            for (int i = 0; i < ns; i++)
                was[from[i]] = 1;
            kgi_cat_exchange(t, pred, c.nk, c.np, worst, from, ns);
            for (int i = 0; i < ns; i++)
                rep->start_replaced += !was[from[i]];
            free(was);
            rep->scratch_cost = kgi_cat_cost(t, pred, c.nk, c.np, pick, n) / c.np;
            rep->start_cost = kgi_cat_cost(t, pred, c.nk, c.np, from, ns) / c.np;
            if (rep->start_cost <= rep->scratch_cost) {
                memcpy(pick, from, (size_t)ns * sizeof *pick);
                n = ns;
                rep->from_start = 1;
            }
            free(from);
        }
    }
    /* the set before --max-compile's fit: with --kernels, the regrets below are against its fastest */
    int nbase = n;
    int *chosen_set = malloc((size_t)(n > 0 ? n : 1) * sizeof *chosen_set);
    if (!chosen_set) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    memcpy(chosen_set, pick, (size_t)n * sizeof *chosen_set);
    const int *base = o->keep ? chosen_set : NULL;
    if ((o->max_compile_s > 0 || (o->max_compile_kept && o->keep)) && o->compile_cost &&
        (st = fit_compile(&c, t, pred, o, chosen_set, pick, &n, rep, err, errlen)) != KG_OK) {
        free(chosen_set);
        goto done;
    }
    double w_r;
    int w_p;
    /* with --add-best: the set written against the fastest of the kept and all listed (after a fit, its own) */
    rep->loo_fit_all = listed ? loo_regret(t, pred, c.np, 0, listed, nlisted, pick, n, &w_r, &w_p) : 0;
    /* the chosen set: its fastest, and kg_matmul's leave-one-out choice, against the best measured (with
     * --kernels, the best of the kept: what the header says) */
    double sum = 0;
    rep->worst_regret = 1.0;
    for (int p = 0; p < c.np; p++) {
        double best = INFINITY, chosen = INFINITY;
        for (int q = 0; q < (base ? nbase : c.nk); q++) {
            double v = t[(size_t)(base ? base[q] : q) * c.np + p];
            if (v < best)
                best = v;
        }
        for (int q = 0; q < n; q++)
            if (t[(size_t)pick[q] * c.np + p] < chosen)
                chosen = t[(size_t)pick[q] * c.np + p];
        double r = isfinite(chosen) ? chosen / best : KGI_CAT_UNCOVERED;
        sum += log(r);
        if (r > rep->worst_regret) {
            rep->worst_regret = r;
            snprintf(rep->worst_pair, sizeof rep->worst_pair, "%s %dx%dx%d", kgi_layout_name(c.p[p].layout), c.p[p].m,
                     c.p[p].n, c.p[p].k);
        }
    }
    rep->geomean_regret = c.np ? exp(sum / c.np) : 1.0;
    int lp;
    rep->loo_geomean = loo_regret(t, pred, c.np, c.nk, base, nbase, pick, n, &rep->loo_worst, &lp);
    free(chosen_set);
    if (lp >= 0)
        snprintf(rep->loo_worst_pair, sizeof rep->loo_worst_pair, "%s %dx%dx%d", kgi_layout_name(c.p[lp].layout),
                 c.p[lp].m, c.p[lp].n, c.p[lp].k);
    rep->rows = c.rows, rep->kernels_measured = c.nk, rep->pairs = c.np, rep->kernels = n;
    write_catalogue(f, &c, kl, t, pick, n, o, rep);
    st = ferror(f) ? KG_ERR_IO : KG_OK;
    if (st != KG_OK)
        snprintf(err, errlen, "writing the catalogue failed");
done:
    kgi_db_close(db);
    kgi_host_free(h);
    for (int i = 0; i < c.nk; i++)
        free(c.k[i].config);
    free(c.k);
    free(c.p);
    free(c.m);
    free(t);
    free(tp);
    free(again);
    free(pred);
    free(pick);
    free(listed);
    free(kl);
    free(c.mp);
    return st;
}
