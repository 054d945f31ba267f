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
    double log_gain, max;
    int max_row;
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

/* best[r]: the catalogue's fastest time at row r (INFINITY: none). */
static double *row_bests(const kgi_catalogue *c)
{
    double *best = malloc((size_t)c->nrows * sizeof *best + 1);
    for (int r = 0; best && r < c->nrows; r++) {
        best[r] = INFINITY;
        for (int j = 0; j < c->nkernels; j++) {
            double t = kgi_catalogue_time(c, r, j);
            if (t > 0 && t < best[r])
                best[r] = t;
        }
    }
    return best;
}

/* The holes of kernel j in layout l (a hole with no pair: npairs 0). */
static int gather(const kgi_catalogue *c, const int *sib, const double *bests, int j, int l, double margin,
                  hole *h)
{
    memset(h, 0, sizeof *h);
    h->kernel = j, h->layout = l, h->max_row = -1;
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
        double best = bests[r];
        /* at least `margin` times, up to rounding (100 x 1.1 is 110.00000000000001) */
        if (!isfinite(elsewhere) || !isfinite(best) || best < elsewhere * margin * (1 - 1e-9))
            continue;
        double g = best / elsewhere;
        h->rows[h->npairs++] = r;
        h->log_gain += log(g);
        if (g > h->max)
            h->max = g, h->max_row = r;
    }
    return 0;
}

/* The call the tuner times at a training pair: packed operands, aligned pointers. */
static void pair_gemm(const kgi_catalogue *c, int r, kg_gemm *g)
{
    const kgi_cat_row *w = &c->rows[r];
    kgi_packed_gemm(w->m, w->n, w->k, kgi_layout_name(w->layout), 1.0f, 0.0f, g);
}

/* Text from the template host or NVRTC made one line, in place: its first
 * line and, where a later line names an error ("error:", as an NVRTC log's
 * do), the first such line after it. */
static void one_line(char *s)
{
    char *nl = strchr(s, '\n');
    if (nl) {
        char *err = strstr(nl + 1, "error:");
        if (err) {
            while (err > nl + 1 && err[-1] != '\n')
                err--;
            char *end = strchr(err, '\n');
            size_t len = end ? (size_t)(end - err) : strlen(err);
            memmove(nl + 1, err, len);
            nl[1 + len] = 0;
        } else {
            *nl = 0;
        }
    }
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = 0;
    for (char *c = s; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
}

/* Renders and compiles tmpl/config (with layout) as the tuner would, with
 * `kgen tune`'s default rules; gate: a pair it must run, or NULL. */
static void compile_as_tune(kg_context *ctx, const char *tmpl, const char *config, const kg_gemm *gate,
                            kgi_compiled *cc)
{
    kgi_prune_rules rules = KGI_PRUNE_RULES_DEFAULT;
    kgi_compile_candidate(ctx, &ctx->limits, &rules, ctx->arch, tmpl, config, gate, cc);
    one_line(cc->reason);
}

/* Why kernel k has no time at the pairs of hole h: the reason at the first
 * pair (largest gain first) where it is kept out, as `kgen tune` would
 * prune it there. 1 where nothing keeps it out at any pair (it runs there
 * and was only not timed), 0 otherwise, -1 out of memory. */
static int hole_reason(kg_context *ctx, const kgi_catalogue *c, const kgi_cat_kernel *k, const hole *h,
                       char *why, size_t whylen)
{
    char cfg[640];
    const char *name = kgi_layout_name(h->layout);
    snprintf(cfg, sizeof cfg, "%s layout=%s", k->config, name);
    kgi_compiled *cc = malloc(sizeof *cc);
    if (!cc)
        return -1;
    /* the largest-gain pair first, then the others */
    int runs = 1;
    for (int i = -1; i < h->npairs && runs; i++) {
        int r = i < 0 ? h->max_row : h->rows[i];
        if (i >= 0 && r == h->max_row)
            continue;
        kg_gemm g;
        pair_gemm(c, r, &g);
        compile_as_tune(ctx, k->tmpl, cfg, &g, cc);
        const char *reason = cc->reason;
        if (!strncmp(reason, "render: ", 8))
            reason += 8;
        const kgi_cat_row *w = &c->rows[r];
        runs = cc->prune == KGI_OUT_NONE;
        switch (cc->prune) {
        case KGI_OUT_NONE:
            break;
        case KGI_OUT_PRUNED_CHECK:
            snprintf(why, whylen, "check() refuses it in %s: %.400s", name, reason);
            break;
        case KGI_OUT_PRUNED_SHAPE:
            snprintf(why, whylen, "its preconditions refuse %dx%dx%d in %s: %.400s", w->m, w->n, w->k, name, reason);
            break;
        case KGI_OUT_COMPILE_ERROR:
            snprintf(why, whylen, "it does not compile in %s: %.400s", name, reason);
            break;
        default:
            snprintf(why, whylen, "in %s it is pruned: %.400s", name, reason);
            break;
        }
    }
    const kgi_cat_row *w = &c->rows[h->max_row];
    if (runs && h->npairs == 1)
        snprintf(why, whylen, "it runs in %s at %dx%dx%d and was not timed there: time it there", name, w->m, w->n,
                 w->k);
    else if (runs)
        snprintf(why, whylen, "it runs in %s at all %d pairs and was not timed there: time it there", name,
                 h->npairs);
    free(cc);
    return runs;
}

/* The work a kernel does, which a twin keeps. */
static int same_work(const kgi_res *a, const kgi_res *b)
{
    return a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->tile_k == b->tile_k && a->kslices == b->kslices &&
           a->persistent == b->persistent && a->threads == b->threads;
}

/* What the walks of one hole met, for a report when no twin is found. */
typedef struct tally {
    int walked, other_work, unrendered, refused, known, pruned;
    int held_id, held_distance;   /* the nearest catalogue kernel met (0: none) */
    char last_pruned[160];
} tally;

/* A twin under consideration. */
typedef struct cand {
    char config[2048];         /* with layout */
    double pred;               /* the model's summed log time over the hole pairs */
    int kind;                  /* kgi_cat_kind */
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

/* The id of the catalogue's kernel tmpl/config (without layout), or 0. */
static int in_catalogue(const kgi_catalogue *c, const char *tmpl, const char *config)
{
    for (int j = 0; j < c->nkernels; j++)
        if (!strcmp(c->kernels[j].tmpl, tmpl) && !strcmp(c->kernels[j].config, config))
            return c->kernels[j].id;
    return 0;
}

/* Appends " name=v1,v2,..": every value the template's `space` and each of
 * its `space_groups` list for the parameter (none: nothing appended, and
 * the walk takes its default). 0, or -1 with err set. */
static int append_values(kgi_host *host, const char *tmpl, const char *name, char *out, size_t len, size_t *used,
                         char *err, size_t errlen)
{
    char vals[KGI_SPACE_MAX_VALUES][32];
    int n = kgi_host_space_values(host, tmpl, name, vals, KGI_SPACE_MAX_VALUES);
    char group[2048];
    int r;
    for (int g = 0; (r = kgi_host_space_group(host, tmpl, g, group, sizeof group)) != 0; g++) {
        if (r < 0) {
            snprintf(err, errlen, "%.400s", group);
            return -1;
        }
        kgi_config gc;
        if (kgi_config_parse(&gc, group, err, errlen) != 0)
            return -1;
        int i = kgi_config_find(&gc, name);
        if (i < 0)
            continue;
        for (char *v = gc.param[i].value; v && *v;) {
            char *comma = strchr(v, ',');
            size_t l = comma ? (size_t)(comma - v) : strlen(v);
            int seen = 0;
            for (int j = 0; j < n && !seen; j++)
                seen = strlen(vals[j]) == l && !strncmp(vals[j], v, l);
            if (!seen && n < KGI_SPACE_MAX_VALUES && l < sizeof vals[0])
                snprintf(vals[n++], sizeof vals[0], "%.*s", (int)l, v);
            v = comma ? comma + 1 : NULL;
        }
    }
    for (int j = 0; j < n; j++) {
        int w = j ? snprintf(out + *used, len - *used, ",%s", vals[j])
                  : snprintf(out + *used, len - *used, "%s%s=%s", *used ? " " : "", name, vals[j]);
        if (w < 0 || (size_t)w >= len - *used) {
            snprintf(err, errlen, "the values of %s do not fit", name);
            return -1;
        }
        *used += (size_t)w;
    }
    return 0;
}

/* Walks the configurations of k's template that differ from k in exactly the
 * parameters `free` (over their values in the space and its groups), in the
 * hole's layout; appends those that keep k's work, are admitted at every
 * hole pair and are not in the catalogue to *cs. */
static kg_status walk_mask(kg_context *ctx, const kgi_catalogue *c, const kgi_cat_kernel *k,
                           const kgi_template_info *info, const kgi_config *kc, const kgi_res *work, const hole *h,
                           const int *free, int nfree, cand **cs, int *n, int *cap, tally *y, char *err,
                           size_t errlen)
{
    char over[4096] = "", fixed[32];
    size_t used = 0;
    for (int p = 0; p < info->nparams; p++) {
        const char *name = info->param[p].name;
        int is_free = 0;
        for (int f = 0; f < nfree; f++)
            is_free |= free[f] == p;
        if (is_free && append_values(ctx->host, k->tmpl, name, over, sizeof over, &used, err, errlen) != 0)
            return KG_ERR_TEMPLATE;
        if (is_free || !strcmp(name, "layout"))
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
        if (kgi_cat_strip_layout(q->config, stripped, sizeof stripped, why, sizeof why) != 0) {
            y->unrendered++;
            continue;
        }
        int held = in_catalogue(c, k->tmpl, stripped);
        if (held > 0) {
            y->known++;
            if (!y->held_id || nfree < y->held_distance)
                y->held_id = held, y->held_distance = nfree;
            continue;
        }
        kg_source *src;
        if (kgi_host_render(ctx->host, k->tmpl, q->config, &ctx->limits, &src, why, sizeof why) != KG_OK) {
            y->unrendered++;
            continue;
        }
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
        e->kind = kgi_cat_kind(&q->res);
    }
    kgi_space_free(&sp);
    return st;
}

/* Whether catalogue kernel j has a time at every pair of hole h. */
static int measured_at(const kgi_catalogue *c, int j, const hole *h)
{
    for (int p = 0; p < h->npairs; p++)
        if (!(kgi_catalogue_time(c, h->rows[p], j) > 0))
            return 0;
    return 1;
}

/* Says in t->why_none why no twin was found (y: what the walks met). */
static void none_found(kgi_twin *t, const char *tmpl, int d, const char *layout, const tally *y, int tried)
{
    int n = snprintf(t->why_none, sizeof t->why_none,
                     "of the %d configurations of %s within %d parameters that check() passes in %s, %d do other "
                     "work (tile, K slices, grid, threads), %d are refused at a hole pair, %d are in the catalogue",
                     y->walked, tmpl, d, layout, y->other_work, y->refused, y->known);
    if (n > 0 && (size_t)n < sizeof t->why_none && y->unrendered)
        n += snprintf(t->why_none + n, sizeof t->why_none - (size_t)n, ", %d do not render", y->unrendered);
    if (n > 0 && (size_t)n < sizeof t->why_none && tried)
        snprintf(t->why_none + n, sizeof t->why_none - (size_t)n,
                 ", and the model's fastest %d of the rest compile pruned (%.160s)", tried, y->last_pruned);
}

/* The nearest twins of hole h's kernel (distance 1, then 2, ...): the
 * model's fastest, and with per_hole > 1 the fastest of other kinds at that
 * distance. A problem
 * with this hole's kernel (its template, its resources) is said in
 * t->why_none; only running out of memory ends the command. */
static kg_status find_twin(kg_context *ctx, const kgi_catalogue *c, const hole *h, int max_distance, int per_hole,
                           kgi_twin *t, char *err, size_t errlen)
{
    const kgi_cat_kernel *k = &c->kernels[h->kernel];
    const char *lname = kgi_layout_name(h->layout);
    kgi_template_info *info = malloc(sizeof *info);
    if (!info)
        return KG_ERR_NOMEM;
    kgi_config kc;
    char why[512], cfg[640];
    kgi_resources r;
    /* the kernel's work: its resources() in the hole's layout */
    snprintf(cfg, sizeof cfg, "%s layout=%s", k->config, lname);
    if (kgi_host_template_info(ctx->host, k->tmpl, info, why, sizeof why) != KG_OK ||
        kgi_config_parse(&kc, k->config, why, sizeof why) != 0 ||
        kgi_host_resources(ctx->host, k->tmpl, cfg, &r, why, sizeof why) != KG_OK) {
        one_line(why);
        snprintf(t->why_none, sizeof t->why_none, "kernel %d's work in %s is unknown: %.400s", k->id, lname, why);
        free(info);
        return KG_OK;
    }
    kgi_res work;
    kgi_res_from(&r, &work);
    int params[KGI_MAX_PARAMS], np = 0;
    for (int p = 0; p < info->nparams; p++)
        if (strcmp(info->param[p].name, "layout") != 0)
            params[np++] = p;
    if (np == 0)
        snprintf(t->why_none, sizeof t->why_none, "%s has no parameter but its layout", k->tmpl);
    cand *cs = NULL;
    int n = 0, cap = 0;
    tally y = {0};
    kg_status st = KG_OK;
    kgi_compiled *cc = malloc(sizeof *cc);
    if (!cc)
        st = KG_ERR_NOMEM;
    for (int d = 1; d <= max_distance && d <= np && d <= 8 && st == KG_OK && !t->found; d++) {
        /* every set of d parameters, in order */
        int idx[8];
        n = 0;
        for (int i = 0; i < d; i++)
            idx[i] = i;
        for (;;) {
            int free[8];
            for (int i = 0; i < d; i++)
                free[i] = params[idx[i]];
            st = walk_mask(ctx, c, k, info, &kc, &work, h, free, d, &cs, &n, &cap, &y, why, sizeof why);
            if (st != KG_OK)
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
        if (st == KG_ERR_NOMEM)
            break;
        if (st != KG_OK) {
            one_line(why);
            snprintf(t->why_none, sizeof t->why_none, "the walk of %s's space failed: %.400s", k->tmpl, why);
            st = KG_OK;
            break;
        }
        /* a twin the catalogue holds, measured at every hole pair: the hole is its layout's own cost */
        if (y.held_id && measured_at(c, y.held_id - 1, h)) {
            t->filled_by = y.held_id;
            snprintf(t->why_none, sizeof t->why_none,
                     "kernel %d, its twin in the catalogue (%d parameter%s away), is measured at every hole pair",
                     y.held_id, y.held_distance, y.held_distance == 1 ? "" : "s");
            break;
        }
        qsort(cs, (size_t)n, sizeof *cs, cmp_cand);
        /* in the model's order, the first of each kind that compiles without being pruned, up to per_hole
         * twins; at most 8 compiles for each twin sought */
        int tried = 0, kinds = 0;
        for (int i = 0; i < n && t->found < per_hole && tried < 8 * (t->found + 1); i++) {
            if (kinds & (1 << cs[i].kind))
                continue;
            compile_as_tune(ctx, k->tmpl, cs[i].config, NULL, cc);
            if (cc->prune != KGI_OUT_NONE) {
                tried++;
                y.pruned++;
                snprintf(y.last_pruned, sizeof y.last_pruned, "%.159s", cc->reason);
                continue;
            }
            kgi_twin_cfg *tw = &t->twin[t->found];
            kgi_config qc;
            if (kgi_config_parse(&qc, cs[i].config, NULL, 0) != 0 ||
                kgi_cat_strip_layout(cs[i].config, tw->config, sizeof tw->config, why, sizeof why) != 0)
                continue;
            tw->distance = distance(info, &kc, &qc, tw->changes, sizeof tw->changes);
            snprintf(tw->tmpl, sizeof tw->tmpl, "%s", k->tmpl);
            tw->same_as = -1;
            kinds |= 1 << cs[i].kind;
            t->found++;
        }
        if (!t->found)
            none_found(t, k->tmpl, d, lname, &y, tried);
    }
    if (y.held_id && !t->filled_by)
        t->held_id = y.held_id, t->held_distance = y.held_distance;
    free(cc);
    free(cs);
    free(info);
    if (st == KG_ERR_NOMEM)
        snprintf(err, errlen, "out of memory");
    return st;
}

kg_status kgi_catalogue_twins(kg_context *ctx, const kgi_catalogue *cat, const kgi_twin_opts *o, kgi_twins *out,
                              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (o->per_hole < 1 || o->per_hole > KGI_TWINS_PER_HOLE || o->max_distance < 1) {
        snprintf(err, errlen, "per_hole must be 1 to %d and max_distance at least 1", KGI_TWINS_PER_HOLE);
        return KG_ERR_INVALID_ARG;
    }
    if (ctx->arch != cat->arch) {
        snprintf(err, errlen, "the context's architecture is sm_%d, the catalogue's sm_%d", ctx->arch, cat->arch);
        return KG_ERR_INVALID_ARG;
    }
    int *sib = siblings(cat);
    double *bests = row_bests(cat);
    hole *hs = calloc((size_t)cat->nkernels * 4 + 1, sizeof *hs);
    int nh = 0;
    kg_status st = KG_ERR_NOMEM;
    if (!sib || !bests || !hs)
        goto done;
    for (int j = 0; j < cat->nkernels; j++)
        for (int l = 0; l < 4; l++) {
            if (gather(cat, sib, bests, j, l, o->margin, &hs[nh]) != 0)
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
        const kgi_cat_row *w = &cat->rows[h->max_row];
        t->kernel = h->kernel, t->layout = h->layout, t->pairs = h->npairs;
        t->gain = exp(h->log_gain / h->npairs), t->max_gain = h->max;
        t->m = w->m, t->n = w->n, t->k = w->k;
        t->runs = hole_reason(ctx, cat, &cat->kernels[h->kernel], h, t->reason, sizeof t->reason);
        if (t->runs < 0) {
            st = KG_ERR_NOMEM;
            break;
        }
        if (t->runs) {
            snprintf(t->why_none, sizeof t->why_none, "the kernel itself runs there");
            continue;
        }
        if (h->npairs < o->min_pairs) {
            snprintf(t->why_none, sizeof t->why_none, "fewer than %d pairs: not sought", o->min_pairs);
            continue;
        }
        st = find_twin(ctx, cat, h, o->max_distance, o->per_hole, t, err, errlen);
        for (int j = 0; j < t->found; j++)
            for (int e = 0; e < out->n - 1 && t->twin[j].same_as < 0; e++)
                for (int f = 0; f < out->t[e].found; f++)
                    if (out->t[e].twin[f].same_as < 0 && !strcmp(out->t[e].twin[f].tmpl, t->twin[j].tmpl) &&
                        !strcmp(out->t[e].twin[f].config, t->twin[j].config))
                        t->twin[j].same_as = e;
    }
done:
    for (int i = 0; i < nh; i++)
        free(hs[i].rows);
    free(hs);
    free(bests);
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
