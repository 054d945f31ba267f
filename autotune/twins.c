/*
 * twins.c -- a catalogue's layout holes and the twins that would fill them
 * (twins.h).
 */
#include "autotune/twins.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/catalogue.h"
#include "autotune/model.h"
#include "autotune/pool.h"
#include "autotune/space.h"
#include "gen/config.h"
#include "gen/host.h"

/* A hole's pairs (rows of the catalogue in its layout) while it is gathered. */
typedef struct hole {
    int kernel, layout, npairs;
    int *rows;                 /* in the hole's layout */
    double log_gain, worst;
    int worst_row;
} hole;

static int cmp_hole(const void *a, const void *b)
{
    const hole *x = a, *y = b;
    if (x->log_gain != y->log_gain)
        return x->log_gain < y->log_gain ? 1 : -1;
    return x->kernel != y->kernel ? x->kernel - y->kernel : x->layout - y->layout;
}

/* sib[r * 4 + l]: the row of r's shape in layout l, or -1. */
static int *siblings(const kgi_catalogue *c)
{
    int *sib = malloc((size_t)c->nrows * 4 * sizeof *sib + 1);
    if (!sib)
        return NULL;
    for (int i = 0; i < c->nrows * 4; i++)
        sib[i] = -1;
    for (int r = 0; r < c->nrows; r++)
        for (int q = 0; q < c->nrows; q++) {
            const kgi_cat_row *a = &c->rows[r], *b = &c->rows[q];
            if (a->m == b->m && a->n == b->n && a->k == b->k)
                sib[r * 4 + b->layout] = q;
        }
    return sib;
}

static double row_best(const kgi_catalogue *c, int r)
{
    double best = INFINITY;
    for (int j = 0; j < c->nkernels; j++) {
        double t = kgi_catalogue_time(c, r, j);
        if (t > 0 && t < best)
            best = t;
    }
    return best;
}

/* The holes of kernel j in layout l (a hole with no pair: npairs 0). */
static int gather(const kgi_catalogue *c, const int *sib, int j, int l, double margin, hole *h)
{
    memset(h, 0, sizeof *h);
    h->kernel = j, h->layout = l, h->worst_row = -1;
    h->rows = malloc((size_t)c->nrows * sizeof *h->rows + 1);
    if (!h->rows)
        return -1;
    for (int r = 0; r < c->nrows; r++) {
        if (c->rows[r].layout != l || kgi_catalogue_time(c, r, j) > 0)
            continue;
        double elsewhere = INFINITY;
        for (int o = 0; o < 4; o++) {
            int q = sib[r * 4 + o];
            double t = q >= 0 && o != l ? kgi_catalogue_time(c, q, j) : 0;
            if (t > 0 && t < elsewhere)
                elsewhere = t;
        }
        double best = row_best(c, r);
        if (!isfinite(elsewhere) || !isfinite(best) || elsewhere * margin >= best)
            continue;
        double g = best / elsewhere;
        h->rows[h->npairs++] = r;
        h->log_gain += log(g);
        if (g > h->worst)
            h->worst = g, h->worst_row = r;
    }
    return 0;
}

/* The call the tuner times at a training pair: packed operands, aligned pointers. */
static void pair_gemm(const kgi_catalogue *c, int r, kg_gemm *g)
{
    const kgi_cat_row *w = &c->rows[r];
    kgi_packed_gemm(w->m, w->n, w->k, kgi_layout_name(w->layout), 1.0f, 0.0f, g);
}

/* Compiles tmpl/config (with layout) and applies the tuner's default
 * post-compile rules: 0 runnable, else 1 and why (or -1: it did not compile). */
static int compile_pruned(kg_context *ctx, const char *tmpl, const char *config, const kgi_geometry *geo, char *why,
                          size_t whylen)
{
    kg_cubin *cubin;
    kg_status st = kg_compile(ctx, tmpl, config, ctx->arch, &cubin);
    if (st != KG_OK) {
        snprintf(why, whylen, "does not compile: %.400s", kg_last_error(ctx));
        return -1;
    }
    kgi_compiled cc;
    memset(&cc, 0, sizeof cc);
    cc.info = *kg_cubin_info(cubin);
    cc.geo = *geo;
    kg_cubin_free(cubin);
    kgi_prune_rules rules = KGI_PRUNE_RULES_DEFAULT;
    kgi_prune_compiled(&ctx->limits, &rules, &cc);
    if (cc.prune == KGI_OUT_NONE)
        return 0;
    snprintf(why, whylen, "%.400s", cc.reason);
    return 1;
}

/* Why kernel k has no time at row r of its hole's layout. */
static void hole_reason(kg_context *ctx, const kgi_catalogue *c, const kgi_cat_kernel *k, int l, int r, char *why,
                        size_t whylen)
{
    char cfg[640], canon[2048], w[512];
    snprintf(cfg, sizeof cfg, "%s layout=%s", k->config, kgi_layout_name(l));
    if (kgi_host_check(ctx->host, k->tmpl, cfg, &ctx->limits, canon, sizeof canon, w, sizeof w) != KG_OK) {
        snprintf(why, whylen, "check() refuses it in %s: %.400s", kgi_layout_name(l), w);
        return;
    }
    kg_source *src;
    if (kgi_host_render(ctx->host, k->tmpl, cfg, &ctx->limits, &src, w, sizeof w) != KG_OK) {
        snprintf(why, whylen, "it does not render in %s: %.400s", kgi_layout_name(l), w);
        return;
    }
    kgi_geometry geo = src->geo;
    kg_source_free(src);
    kg_gemm g;
    pair_gemm(c, r, &g);
    if (!kgi_pool_admits(&geo, &g, w, sizeof w)) {
        snprintf(why, whylen, "its preconditions refuse %dx%dx%d in %s: %.400s", c->rows[r].m, c->rows[r].n,
                 c->rows[r].k, kgi_layout_name(l), w);
        return;
    }
    int p = compile_pruned(ctx, k->tmpl, cfg, &geo, w, sizeof w);
    if (p != 0)
        snprintf(why, whylen, "in %s it %s%.400s", kgi_layout_name(l), p > 0 ? "is pruned: " : "", w);
    else
        snprintf(why, whylen, "it runs in %s and was not timed there", kgi_layout_name(l));
}

/* The work a kernel does, which a twin keeps. */
static int same_work(const kgi_res *a, const kgi_res *b)
{
    return a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->tile_k == b->tile_k && a->kslices == b->kslices &&
           a->persistent == b->persistent && a->threads == b->threads;
}

/* What the walks of one hole met, for a report when no twin is found. */
typedef struct tally {
    int walked, other_work, refused, known;
} tally;

/* A twin under consideration. */
typedef struct cand {
    char config[2048];         /* with layout */
    double pred;               /* the model's summed log time over the hole pairs */
    kgi_geometry geo;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->pred != y->pred)
        return x->pred < y->pred ? -1 : 1;
    return strcmp(x->config, y->config);
}

/* Parameters whose values differ between two configurations of one template
 * (layout aside), as "name=a->b ..." in `out`; their count. */
static int distance(const kgi_template_info *info, const kgi_config *a, const kgi_config *b, char *out, size_t len)
{
    int d = 0;
    size_t used = 0;
    out[0] = 0;
    for (int p = 0; p < info->nparams; p++) {
        const char *name = info->param[p].name;
        if (!strcmp(name, "layout"))
            continue;
        int ia = kgi_config_find(a, name), ib = kgi_config_find(b, name);
        const char *va = ia >= 0 ? a->param[ia].value : info->param[p].dflt;
        const char *vb = ib >= 0 ? b->param[ib].value : info->param[p].dflt;
        if (!strcmp(va, vb))
            continue;
        d++;
        int n = snprintf(out + used, len - used, "%s%s=%s->%s", used ? " " : "", name, va, vb);
        if (n > 0 && (size_t)n < len - used)
            used += (size_t)n;
    }
    return d;
}

/* Whether the catalogue already holds tmpl/config (without layout). */
static int in_catalogue(const kgi_catalogue *c, const char *tmpl, const char *config)
{
    for (int j = 0; j < c->nkernels; j++)
        if (!strcmp(c->kernels[j].tmpl, tmpl) && !strcmp(c->kernels[j].config, config))
            return 1;
    return 0;
}

/* Walks the configurations of k's template that differ from k in exactly the
 * parameters of `mask` (over their space values), in layout l; appends those
 * that keep k's work, are admitted at every hole pair and are not in the
 * catalogue to *cs. */
static kg_status walk_mask(kg_context *ctx, const kgi_catalogue *c, const kgi_cat_kernel *k,
                           const kgi_template_info *info, const kgi_config *kc, const kgi_res *work, const hole *h,
                           const int *free, int nfree, cand **cs, int *n, int *cap, tally *y, char *err,
                           size_t errlen)
{
    char over[2048] = "", fixed[32];
    size_t used = 0;
    for (int p = 0; p < info->nparams; p++) {
        const char *name = info->param[p].name;
        int is_free = !strcmp(name, "layout");
        for (int f = 0; f < nfree; f++)
            is_free |= free[f] == p;
        if (is_free)
            continue;
        int i = kgi_config_find(kc, name);
        int w = snprintf(over + used, sizeof over - used, "%s%s=%s", used ? " " : "", name,
                         i >= 0 ? kc->param[i].value : info->param[p].dflt);
        if (w < 0 || (size_t)w >= sizeof over - used) {
            snprintf(err, errlen, "kernel %d: its configuration is too long", k->id);
            return KG_ERR_CONFIG;
        }
        used += (size_t)w;
    }
    snprintf(fixed, sizeof fixed, "layout=%s", kgi_layout_name(h->layout));
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    kg_status st = kgi_space_add_template(&sp, ctx->host, k->tmpl, fixed, over, &ctx->limits, err, errlen);
    kgi_model_dev dev;
    kgi_model_dev_arch(&ctx->limits, &dev);
    for (int i = 0; st == KG_OK && i < sp.n; i++) {
        const kgi_cand *q = &sp.cand[i];
        kgi_config qc;
        char changes[256], stripped[2048], why[512];
        if (kgi_config_parse(&qc, q->config, NULL, 0) != 0 || distance(info, kc, &qc, changes, sizeof changes) != nfree)
            continue;
        y->walked++;
        if (!same_work(&q->res, work)) {
            y->other_work++;
            continue;
        }
        if (kgi_cat_strip_layout(q->config, stripped, sizeof stripped, why, sizeof why) != 0 ||
            in_catalogue(c, k->tmpl, stripped)) {
            y->known++;
            continue;
        }
        kg_source *src;
        if (kgi_host_render(ctx->host, k->tmpl, q->config, &ctx->limits, &src, why, sizeof why) != KG_OK)
            continue;
        kgi_geometry geo = src->geo;
        kg_source_free(src);
        double pred = 0;
        int ok = 1;
        for (int p = 0; p < h->npairs && ok; p++) {
            kg_gemm g;
            pair_gemm(c, h->rows[p], &g);
            ok = kgi_pool_admits(&geo, &g, why, sizeof why);
            pred += log(kgi_model_time_ms(&dev, &q->res, 0, g.m, g.n, g.k));
        }
        if (!ok) {
            y->refused++;
            continue;
        }
        for (int e = 0; e < *n; e++)
            if (!strcmp((*cs)[e].config, q->config))
                ok = 0;
        if (!ok)
            continue;
        if (*n == *cap) {
            int ncap = *cap ? 2 * *cap : 64;
            cand *a = realloc(*cs, (size_t)ncap * sizeof *a);
            if (!a) {
                st = KG_ERR_NOMEM;
                break;
            }
            *cs = a, *cap = ncap;
        }
        cand *e = &(*cs)[(*n)++];
        snprintf(e->config, sizeof e->config, "%s", q->config);
        e->pred = pred;
        e->geo = geo;
    }
    kgi_space_free(&sp);
    return st;
}

/* The nearest twin of hole h's kernel: distance 1, then 2, ... */
static kg_status find_twin(kg_context *ctx, const kgi_catalogue *c, const hole *h, int max_distance, kgi_twin *t,
                           char *err, size_t errlen)
{
    const kgi_cat_kernel *k = &c->kernels[h->kernel];
    kgi_template_info *info = malloc(sizeof *info);
    kgi_config kc;
    if (!info)
        return KG_ERR_NOMEM;
    kg_status st = kgi_host_template_info(ctx->host, k->tmpl, info, err, errlen);
    if (st == KG_OK && kgi_config_parse(&kc, k->config, err, errlen) != 0)
        st = KG_ERR_CONFIG;
    /* the kernel's work: its resources() in the hole's layout, or in nn where it is refused there */
    kgi_resources r;
    kgi_res work;
    char cfg[640], why[512];
    if (st == KG_OK) {
        snprintf(cfg, sizeof cfg, "%s layout=%s", k->config, kgi_layout_name(h->layout));
        if (kgi_host_resources(ctx->host, k->tmpl, cfg, &r, why, sizeof why) != KG_OK) {
            snprintf(cfg, sizeof cfg, "%s layout=nn", k->config);
            st = kgi_host_resources(ctx->host, k->tmpl, cfg, &r, err, errlen);
        }
    }
    if (st != KG_OK) {
        free(info);
        return st;
    }
    kgi_res_from(&r, &work);
    int params[KGI_MAX_PARAMS], np = 0;
    for (int p = 0; p < info->nparams; p++)
        if (strcmp(info->param[p].name, "layout") != 0)
            params[np++] = p;
    cand *cs = NULL;
    int n = 0, cap = 0, refused = 0;
    tally y = {0};
    for (int d = 1; d <= max_distance && st == KG_OK && !t->found; d++) {
        /* every set of d parameters, in order */
        int idx[8];
        if (d > 8 || d > np)
            break;
        n = 0;
        for (int i = 0; i < d; i++)
            idx[i] = i;
        for (;;) {
            int free[8];
            for (int i = 0; i < d; i++)
                free[i] = params[idx[i]];
            if ((st = walk_mask(ctx, c, k, info, &kc, &work, h, free, d, &cs, &n, &cap, &y, err, errlen)) != KG_OK)
                break;
            int i = d - 1;
            while (i >= 0 && idx[i] == np - d + i)
                i--;
            if (i < 0)
                break;
            idx[i]++;
            for (int j = i + 1; j < d; j++)
                idx[j] = idx[j - 1] + 1;
        }
        if (n == 0)
            snprintf(t->why_none, sizeof t->why_none,
                     "of the %d configurations of %s within %d parameters that check() passes in %s, %d do other "
                     "work (tile, K slices, grid, threads), %d are refused at a hole pair, %d are in the catalogue",
                     y.walked, k->tmpl, d, kgi_layout_name(h->layout), y.other_work, y.refused, y.known);
        qsort(cs, (size_t)n, sizeof *cs, cmp_cand);
        /* the model's fastest that compiles without being pruned; a few tries */
        for (int i = 0; i < n && i < 8 && st == KG_OK; i++) {
            int p = compile_pruned(ctx, k->tmpl, cs[i].config, &cs[i].geo, why, sizeof why);
            if (p != 0) {
                refused++;
                snprintf(t->why_none, sizeof t->why_none, "the nearest (%d parameters) compiled, %d of them pruned: %.160s",
                         d, refused, why);
                continue;
            }
            kgi_config qc;
            if (kgi_config_parse(&qc, cs[i].config, err, errlen) != 0 ||
                kgi_cat_strip_layout(cs[i].config, t->config, sizeof t->config, err, errlen) != 0) {
                st = KG_ERR_CONFIG;
                break;
            }
            t->distance = distance(info, &kc, &qc, t->changes, sizeof t->changes);
            snprintf(t->tmpl, sizeof t->tmpl, "%s", k->tmpl);
            t->found = 1;
            break;
        }
    }
    free(cs);
    free(info);
    return st;
}

kg_status kgi_catalogue_twins(kg_context *ctx, const kgi_catalogue *cat, const kgi_twin_opts *o, kgi_twins *out,
                              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (ctx->arch != cat->arch) {
        snprintf(err, errlen, "the context's architecture is sm_%d, the catalogue's sm_%d", ctx->arch, cat->arch);
        return KG_ERR_INVALID_ARG;
    }
    int *sib = siblings(cat);
    hole *hs = calloc((size_t)cat->nkernels * 4 + 1, sizeof *hs);
    int nh = 0;
    kg_status st = KG_ERR_NOMEM;
    if (!sib || !hs)
        goto done;
    for (int j = 0; j < cat->nkernels; j++)
        for (int l = 0; l < 4; l++) {
            if (gather(cat, sib, j, l, o->margin, &hs[nh]) != 0)
                goto done;
            if (hs[nh].npairs > 0)
                nh++;
            else
                free(hs[nh].rows);
        }
    qsort(hs, (size_t)nh, sizeof *hs, cmp_hole);
    if (!(out->t = calloc((size_t)nh + 1, sizeof *out->t)))
        goto done;
    st = KG_OK;
    for (int i = 0; i < nh && st == KG_OK; i++) {
        const hole *h = &hs[i];
        kgi_twin *t = &out->t[out->n++];
        const kgi_cat_row *w = &cat->rows[h->worst_row];
        t->kernel = h->kernel, t->layout = h->layout, t->pairs = h->npairs, t->same_as = -1;
        t->gain = exp(h->log_gain / h->npairs), t->worst_gain = h->worst;
        t->m = w->m, t->n = w->n, t->k = w->k;
        hole_reason(ctx, cat, &cat->kernels[h->kernel], h->layout, h->worst_row, t->reason, sizeof t->reason);
        if (h->npairs < o->min_pairs) {
            snprintf(t->why_none, sizeof t->why_none, "fewer than %d pairs: not sought", o->min_pairs);
            continue;
        }
        st = find_twin(ctx, cat, h, o->max_distance, t, err, errlen);
        for (int e = 0; e < out->n - 1 && t->found; e++)
            if (out->t[e].found && out->t[e].same_as < 0 && !strcmp(out->t[e].tmpl, t->tmpl) &&
                !strcmp(out->t[e].config, t->config))
                t->same_as = e;
    }
done:
    for (int i = 0; i < nh; i++)
        free(hs[i].rows);
    free(hs);
    free(sib);
    if (st == KG_ERR_NOMEM)
        snprintf(err, errlen, "out of memory");
    if (st != KG_OK)
        kgi_twins_free(out);
    return st;
}

void kgi_twins_free(kgi_twins *t)
{
    free(t->t);
    t->t = NULL;
    t->n = 0;
}
