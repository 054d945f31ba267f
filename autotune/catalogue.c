/*
 * catalogue.c -- choosing a catalogue's candidates with the model and its
 * kernels from measurements (see catalogue.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/catalogue.h"
#include "autotune/db.h"
#include "autotune/model.h"
#include "autotune/space.h"
#include "gen/config.h"
#include "gen/host.h"
#include "runtime/catalogue.h"

static const char *const layouts[4] = {"nn", "nt", "tn", "tt"};

/* A (layout, shape) with no time from the chosen set counts as this many
 * times slower than its best. */
#define UNCOVERED 8.0

/*
 * Greedy choice over a kernels x pairs table of times (t[c * np + p]; not
 * finite or <= 0: no time). A set's choice at a pair is its kernel with
 * the lowest `pred` among those with a time there (pred NULL: t itself, the
 * set's fastest; kgen catalogue make passes kg_matmul's leave-one-out
 * predictions, so that the choice is the one kg_matmul would make), and its
 * regret that kernel's time over the best time there. Adds the kernel that
 * most lowers sum_p log(regret) (a pair nothing covers counts UNCOVERED),
 * until `max` kernels, or every pair is within `tol` of its best, or
 * nothing gains: a kernel fast where it was measured but mispredicted
 * between its shapes earns its place only where it lowers the regret of
 * the choice. A kernel that would replace the set's choice at a pair by
 * one worse than `worst` times its best (and worse than before) is not
 * added at all. Writes the picks in order to pick[] and returns their count.
 */
static int greedy(const double *t, const double *pred, int nc, int np, int max, double tol, double worst, int *pick)
{
    const double *e_of = pred ? pred : t;
    double *best = malloc((size_t)np * sizeof *best);
    int *cur = malloc((size_t)np * sizeof *cur);
    char *used = calloc((size_t)nc + 1, 1);
    int n = 0;
    if (!best || !cur || !used)
        goto done;
    for (int p = 0; p < np; p++) {
        best[p] = INFINITY, cur[p] = -1;
        for (int c = 0; c < nc; c++)
            if (t[(size_t)c * np + p] > 0 && t[(size_t)c * np + p] < best[p])
                best[p] = t[(size_t)c * np + p];
    }
    while (n < max) {
        int within = n > 0;
        for (int p = 0; p < np && within; p++)
            within = !isfinite(best[p]) || (cur[p] >= 0 && t[(size_t)cur[p] * np + p] <= best[p] * (1 + tol));
        if (within)
            break;
        int bc = -1;
        double bg = 0;
        for (int c = 0; c < nc; c++) {
            if (used[c])
                continue;
            double g = 0;
            for (int p = 0; p < np; p++) {
                double v = t[(size_t)c * np + p], e = e_of[(size_t)c * np + p];
                if (!(v > 0) || !isfinite(v) || !isfinite(e))
                    continue;
                int k = cur[p];
                if (k >= 0 && e_of[(size_t)k * np + p] <= e)
                    continue; /* the set's choice stays */
                double before = k >= 0 ? log(t[(size_t)k * np + p] / best[p]) : log(UNCOVERED);
                double after = log(v / best[p]);
                if (k >= 0 && after > before && after > log(worst)) {
                    g = -INFINITY; /* it would make the set's choice worse than `worst` */
                    break;
                }
                g += before - after;
            }
            if (g > bg + 1e-12) {
                bg = g;
                bc = c;
            }
        }
        if (bc < 0)
            break;
        used[bc] = 1;
        pick[n++] = bc;
        for (int p = 0; p < np; p++) {
            double v = t[(size_t)bc * np + p], e = e_of[(size_t)bc * np + p];
            if (v > 0 && isfinite(v) && isfinite(e) && (cur[p] < 0 || e < e_of[(size_t)cur[p] * np + p]))
                cur[p] = bc;
        }
    }
done:
    free(best);
    free(cur);
    free(used);
    return n;
}

/* The configuration text without `layout` (for the catalogue, which adds
 * the call's). */
static int strip_layout(const char *config, char *out, size_t len, char *err, size_t errlen)
{
    kgi_config c;
    if (kgi_config_parse(&c, config, err, errlen) != 0)
        return -1;
    kgi_config_unset(&c, "layout");
    if (kgi_config_format(&c, out, len) != 0) {
        snprintf(err, errlen, "configuration too long: %s", config);
        return -1;
    }
    return 0;
}

/* Appends (tmpl, config) to the list unless it holds it already. */
static kg_status list_add(kgi_config_list *l, const char *tmpl, const char *config)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->e[i].tmpl, tmpl) == 0 && strcmp(l->e[i].config, config) == 0)
            return KG_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        kgi_config_entry *e = realloc(l->e, (size_t)cap * sizeof *e);
        if (!e)
            return KG_ERR_NOMEM;
        l->e = e, l->cap = cap;
    }
    kgi_config_entry *e = &l->e[l->n];
    snprintf(e->tmpl, sizeof e->tmpl, "%s", tmpl);
    if (!(e->config = strdup(config)))
        return KG_ERR_NOMEM;
    e->line = 0;
    l->n++;
    return KG_OK;
}

/* ------------------------------------------------------------ candidates */

/* The model's pool for one layout: candidates in some shape's top. */
typedef struct pool {
    int *cls;                  /* what kind of kernel (kind_of) */
    char (*tmpl)[64];
    char **config;             /* layout-free */
    double *t;                 /* [c * np + p], this layout's pairs only */
    int n, cap;
} pool;

static void pool_free(pool *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->config[i]);
    free(p->cls);
    free(p->tmpl);
    free(p->config);
    free(p->t);
    memset(p, 0, sizeof *p);
}

/* Indices of the `k` smallest of pred[0..n) (finite ones) into top[];
 * returns how many. A partial insertion sort: k is small. */
static int smallest(const double *pred, int n, int k, int *top)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(pred[i]))
            continue;
        if (m == k && pred[i] >= pred[top[m - 1]])
            continue;
        int j = m < k ? m++ : m - 1;
        while (j > 0 && pred[top[j - 1]] > pred[i]) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = i;
    }
    return m;
}

/* Whether a kernel's copies allow the shape's minimal leading dimensions
 * (the tuner measures there with lda, ldb as small as the layout allows):
 * packed operands take any; else each operand's rows must hold whole
 * copies. The model does not know this; the tuner prunes such pairs. */
static int admits(const kgi_res *r, int li, const kgi_tune_shape *sh)
{
    if (r->pack > 0)
        return 1;
    int lda = li >= 2 ? sh->m : sh->k, ldb = li % 2 ? sh->k : sh->n;
    int ca = r->copy_a > 1 ? r->copy_a : 1, cb = r->copy_b > 1 ? r->copy_b : 1;
    return lda % ca == 0 && ldb % cb == 0;
}

/* What kind of kernel a candidate is, in resources()' template-neutral
 * terms: 16-byte copies or not, packed operands, split-K, a persistent
 * grid. The model's ranking is least sure between kinds (a pack pass, an
 * odd shape's narrow copies), so each kind keeps a few candidates. */
static int kind_of(const kgi_res *r)
{
    return (r->copy_a >= 4 || r->copy_b >= 4) | (r->pack > 0) << 1 | (r->kslices > 1) << 2 | (r->persistent != 0) << 3;
}

/* Walks layout li's space, marks the model's top per shape and the whole
 * of small templates, and fills the pool (times: the model's predictions at
 * every shape) and `whole` (taken without choosing). */
static kg_status layout_pool(const kgi_cat_cand_opts *o, int li, pool *pl, kgi_config_list *whole, char *err,
                             size_t errlen)
{
    const kgi_limits *lim = kgi_arch_limits(o->arch);
    kgi_model_dev dev;
    kgi_model_dev_arch(lim, &dev);
    kgi_host *h = kgi_host_new();
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    double *pred = NULL;
    int *top = NULL;
    char *mark = NULL;
    kg_status st = KG_ERR_NOMEM;
    if (!h || (o->template_path && kgi_host_set_path(h, o->template_path) != 0))
        goto done;
    char fixed[32];
    snprintf(fixed, sizeof fixed, "layout=%s", layouts[li]);
    for (int i = 0; i < o->ntmpl; i++)
        if ((st = kgi_space_add_template(&sp, h, o->tmpls[i], fixed, NULL, lim, err, errlen)) != KG_OK)
            goto done;
    st = KG_ERR_NOMEM;
    int per_tmpl[KGI_SPACE_MAX_TEMPLATES] = {0};
    for (int c = 0; c < sp.n; c++)
        per_tmpl[sp.cand[c].tmpl]++;
    pred = malloc(((size_t)sp.n + 1) * sizeof *pred);
    top = malloc(((size_t)o->per_shape + 1) * sizeof *top);
    mark = calloc((size_t)sp.n + 1, 1);
    if (!pred || !top || !mark)
        goto done;
    for (int s = 0; s < o->nshapes; s++) {
        const kgi_tune_shape *sh = &o->shapes[s];
        for (int c = 0; c < sp.n; c++)
            pred[c] = admits(&sp.cand[c].res, li, sh)
                          ? kgi_model_time_ms(&dev, &sp.cand[c].res, 0, sh->m, sh->n, sh->k)
                          : INFINITY;
        int m = smallest(pred, sp.n, o->per_shape, top);
        for (int i = 0; i < m; i++)
            mark[top[i]] = 1;
    }
    for (int c = 0; c < sp.n; c++) {
        int is_whole = per_tmpl[sp.cand[c].tmpl] <= o->whole_below;
        if (!mark[c] && !is_whole)
            continue;
        char cfg[2048];
        if (strip_layout(sp.cand[c].config, cfg, sizeof cfg, err, errlen) != 0) {
            st = KG_ERR_CONFIG;
            goto done;
        }
        const char *tn = sp.tmpl[sp.cand[c].tmpl].name;
        if (is_whole) {
            if ((st = list_add(whole, tn, cfg)) != KG_OK)
                goto done;
            st = KG_ERR_NOMEM;
            continue;
        }
        if (pl->n == pl->cap) {
            int cap = pl->cap ? 2 * pl->cap : 256;
            void *a = realloc(pl->tmpl, (size_t)cap * sizeof *pl->tmpl);
            if (a)
                pl->tmpl = a;
            void *b = a ? realloc(pl->config, (size_t)cap * sizeof *pl->config) : NULL;
            if (b)
                pl->config = b;
            void *d = b ? realloc(pl->t, (size_t)cap * o->nshapes * sizeof *pl->t) : NULL;
            if (d)
                pl->t = d;
            void *e = d ? realloc(pl->cls, (size_t)cap * sizeof *pl->cls) : NULL;
            if (!e)
                goto done;
            pl->cls = e, pl->cap = cap;
        }
        snprintf(pl->tmpl[pl->n], sizeof pl->tmpl[pl->n], "%s", tn);
        pl->cls[pl->n] = kind_of(&sp.cand[c].res);
        if (!(pl->config[pl->n] = strdup(cfg)))
            goto done;
        for (int s = 0; s < o->nshapes; s++) {
            const kgi_tune_shape *sh = &o->shapes[s];
            pl->t[(size_t)pl->n * o->nshapes + s] =
                kgi_model_time_ms(&dev, &sp.cand[c].res, 0, sh->m, sh->n, sh->k);
        }
        pl->n++;
    }
    st = KG_OK;
done:
    free(pred);
    free(top);
    free(mark);
    kgi_space_free(&sp);
    kgi_host_free(h);
    return st;
}

kg_status kgi_catalogue_candidates(const kgi_cat_cand_opts *o, kgi_config_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!kgi_arch_limits(o->arch)) {
        snprintf(err, errlen, "no limits known for sm_%d", o->arch);
        return KG_ERR_INVALID_ARG;
    }
    pool pl[4];
    memset(pl, 0, sizeof pl);
    kgi_config_list whole = {0};
    double *t = NULL;
    int *pick = NULL;
    kg_status st = KG_OK;
    for (int li = 0; li < 4 && st == KG_OK; li++)
        st = layout_pool(o, li, &pl[li], &whole, err, errlen);
    if (st != KG_OK)
        goto done;
    /* one table: a layout's pool has times at its own layout's pairs only */
    int ns = o->nshapes, np = 4 * ns, nc = 0;
    for (int li = 0; li < 4; li++)
        nc += pl[li].n;
    st = KG_ERR_NOMEM;
    if (!(t = malloc(((size_t)nc * np + 1) * sizeof *t)) || !(pick = malloc(((size_t)nc + 1) * sizeof *pick)))
        goto done;
    int c0 = 0;
    for (int li = 0; li < 4; li++) {
        for (int c = 0; c < pl[li].n; c++)
            for (int p = 0; p < np; p++)
                t[(size_t)(c0 + c) * np + p] = p / ns == li ? pl[li].t[(size_t)c * ns + p % ns] : INFINITY;
        c0 += pl[li].n;
    }
    /* picks until `max` distinct configurations (a configuration picked for
     * two layouts counts once) */
    int n = greedy(t, NULL, nc, np, nc, 0.0, INFINITY, pick);
    for (int i = 0; i < n && out->n < o->max; i++) {
        int c = pick[i], li = 0;
        while (c >= pl[li].n)
            c -= pl[li++].n;
        if ((st = list_add(out, pl[li].tmpl[c], pl[li].config[c])) != KG_OK)
            goto done;
    }
    /* and the best few of each kind, chosen the same way among that kind alone */
    for (int kind = 0; kind < 16 && o->per_kind > 0; kind++) {
        int nk = 0;
        c0 = 0;
        for (int li = 0; li < 4; li++, c0 += pl[li - 1].n)
            for (int c = 0; c < pl[li].n; c++)
                if (pl[li].cls[c] == kind)
                    pick[nk++] = c0 + c;
        if (nk == 0)
            continue;
        double *sub = malloc((size_t)nk * np * sizeof *sub);
        int *sp2 = malloc((size_t)nk * sizeof *sp2), *idx = malloc((size_t)nk * sizeof *idx);
        if (!sub || !sp2 || !idx) {
            free(sub), free(sp2), free(idx);
            st = KG_ERR_NOMEM;
            goto done;
        }
        memcpy(idx, pick, (size_t)nk * sizeof *idx);
        for (int i = 0; i < nk; i++)
            memcpy(sub + (size_t)i * np, t + (size_t)idx[i] * np, (size_t)np * sizeof *sub);
        int got = greedy(sub, NULL, nk, np, o->per_kind, 0.0, INFINITY, sp2);
        for (int i = 0; i < got && st == KG_OK; i++) {
            int c = idx[sp2[i]], li = 0;
            while (c >= pl[li].n)
                c -= pl[li++].n;
            st = list_add(out, pl[li].tmpl[c], pl[li].config[c]);
        }
        free(sub), free(sp2), free(idx);
        if (st != KG_OK)
            goto done;
    }
    for (int i = 0; i < whole.n; i++)
        if ((st = list_add(out, whole.e[i].tmpl, whole.e[i].config)) != KG_OK)
            goto done;
    st = KG_OK;
    if (out->n == 0) {
        snprintf(err, errlen, "no candidates: the templates' spaces are empty for sm_%d", o->arch);
        st = KG_ERR_CONFIG;
    }
done:
    for (int li = 0; li < 4; li++)
        pool_free(&pl[li]);
    kgi_config_list_free(&whole);
    free(t);
    free(pick);
    if (st != KG_OK)
        kgi_config_list_free(out);
    return st;
}

/* ------------------------------------------------------------ make */

typedef struct kern {
    char tmpl[64];
    char *config;              /* layout-free */
    int threads;
    double occupancy;
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
    /* measurements: (kernel, pair, microseconds) */
    struct meas { int k; double us; } *m;
    pair *mp;                  /* each measurement's pair */
    int nm, mcap, mpcap;
    int rows, failed;
    char err[512];
} collect;

static int layout_of(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, layouts[i]) == 0)
            return i;
    return -1;
}

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
    int li = layout_of(key->layout);
    char cfg[2048];
    if (li < 0 || strip_layout(key->config, cfg, sizeof cfg, c->err, sizeof c->err) != 0) {
        c->failed = 1;
        return;
    }
    int ki = -1;
    for (int i = 0; i < c->nk && ki < 0; i++)
        if (strcmp(c->k[i].tmpl, key->tmpl) == 0 && strcmp(c->k[i].config, cfg) == 0)
            ki = i;
    if (ki < 0) {
        kern *k = grow(c->k, &c->kcap, c->nk, sizeof *k);
        if (!k || !(k[c->nk].config = strdup(cfg))) {
            c->k = k ? k : c->k;
            c->failed = 1;
            snprintf(c->err, sizeof c->err, "out of memory");
            return;
        }
        c->k = k;
        snprintf(k[c->nk].tmpl, sizeof k[c->nk].tmpl, "%s", key->tmpl);
        k[c->nk].threads = res->threads, k[c->nk].occupancy = res->occupancy;
        ki = c->nk++;
    }
    int pi = -1;
    for (int i = c->np - 1; i >= 0 && pi < 0; i--)
        if (c->p[i].layout == li && c->p[i].m == key->m && c->p[i].n == key->n && c->p[i].k == key->k)
            pi = i;
    if (pi < 0) {
        pair *p = grow(c->p, &c->pcap, c->np, sizeof *p);
        if (!p) {
            c->failed = 1;
            snprintf(c->err, sizeof c->err, "out of memory");
            return;
        }
        c->p = p;
        p[c->np] = (pair){li, key->m, key->n, key->k};
        pi = c->np++;
    }
    struct meas *m = grow(c->m, &c->mcap, c->nm, sizeof *m);
    if (!m) {
        c->failed = 1;
        snprintf(c->err, sizeof c->err, "out of memory");
        return;
    }
    c->m = m;
    pair *mp = grow(c->mp, &c->mpcap, c->nm, sizeof *mp);
    if (!mp) {
        c->failed = 1;
        snprintf(c->err, sizeof c->err, "out of memory");
        return;
    }
    c->mp = mp;
    mp[c->nm] = c->p[pi];
    m[c->nm++] = (struct meas){ki, res->time_ms * 1000.0};
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

/* What a catalogue line says of a kernel that the runtime's model needs:
 * the alignment class it needs, its tile, K slices, whether its grid is
 * persistent (from the rendered geometry and resources()). */
static kg_status describe(kgi_host *h, const kgi_limits *lim, const kern *k, char *needs, int *tm, int *tn,
                          char *slices, int *persistent, char *err, size_t errlen)
{
    char text[2304];
    snprintf(text, sizeof text, "%s layout=nn", k->config);
    kg_source *src = NULL;
    kg_status st = kgi_host_render(h, k->tmpl, text, lim, &src, err, errlen);
    if (st != KG_OK)
        return st;
    const kgi_geometry *g = &src->geo;
    int need = 1;
    if (!g->pack_multiple) {
        if ((int)g->ld_multiple > need)
            need = (int)g->ld_multiple;
        if ((int)g->align / 4 > need)
            need = (int)g->align / 4;
    }
    /* the operands the vector loads bind (both, or only A or only B) */
    snprintf(needs, 4, "%d%s", need > 4 ? 4 : need,
             need == 1 || g->pack_multiple ? "" : g->vec_operands == 1 ? "A" : g->vec_operands == 2 ? "B" : "");
    /* a grid dimension over K (ceil(K / D) blocks): as many slices as K needs */
    int depth = 0;
    for (int i = 0; i < 3; i++)
        if (g->grid[i].dim == 'K' && g->grid[i].mul == 1)
            depth = (int)g->grid[i].div;
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
    *persistent = res.persistent;
    if (*tm < 1 || *tn < 1) {
        snprintf(err, errlen, "%s %s: resources() gives no output tile", k->tmpl, k->config);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

/* A kernel line's fields (describe()), for every measured kernel. */
typedef struct kline {
    char needs[4], slices[16];
    int tm, tn, persistent, bps;
} kline;

/* The catalogue text of kernels pick[0..n) with their times (the header's
 * comment from `rep`, when given). */
static void write_catalogue(FILE *f, const collect *c, const kline *kl, const double *t, const int *pick, int n,
                            const kgi_cat_make_opts *o, const kgi_cat_make_report *rep)
{
    if (rep)
        fprintf(f,
                "# kgen kernel catalogue for sm_%d: %d kernels chosen from %d measured, each timed over %d (layout,"
                " shape) pairs\n# by `kgen tune --configs` on %s, so that kg_matmul's choice from them comes closest"
                " to the best\n# measured where each shape is left out of its own prediction (leave-one-out regret"
                " %.3f, worst %.2f:\n# %s). Fastest of the set: within %.1f%% of the best measured kernel on"
                " geometric mean, %.1f%% at\n# worst (%s). Rebuild: see catalogue/README.md.\n",
                c->cc, n, c->nk, c->np, c->seen_device, rep->loo_geomean, rep->loo_worst,
                rep->loo_worst_pair[0] ? rep->loo_worst_pair : "none", 100 * (rep->geomean_regret - 1),
                100 * (rep->worst_regret - 1), rep->worst_pair[0] ? rep->worst_pair : "none");
    fprintf(f, "kgen-catalogue 1\narch %d\nsms %d\ndevice %s\ndriver %s\ndate %s\ncommand %s\n", c->cc, c->sm_count,
            c->seen_device, o->driver && o->driver[0] ? o->driver : "unknown", o->date, o->command);
    fprintf(f, "# kernel ID TEMPLATE NEEDS TILE_M TILE_N KSLICES PERSISTENT BPS CONFIG\n");
    for (int i = 0; i < n; i++) {
        const kline *l = &kl[pick[i]];
        fprintf(f, "kernel %d %s %s %d %d %s %d %d %s\n", i + 1, c->k[pick[i]].tmpl, l->needs, l->tm, l->tn, l->slices,
                l->persistent, l->bps, c->k[pick[i]].config);
    }
    fprintf(f, "# time LAYOUT M N K, then each kernel's median time in microseconds ('-': not measured there)\n");
    for (int p = 0; p < c->np; p++) {
        fprintf(f, "time %s %d %d %d", layouts[c->p[p].layout], c->p[p].m, c->p[p].n, c->p[p].k);
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

kg_status kgi_catalogue_make(const char *export_text, size_t len, const kgi_cat_make_opts *o, FILE *f,
                             kgi_cat_make_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    kgi_db *db = NULL;
    collect c;
    memset(&c, 0, sizeof c);
    c.device = o->device;
    double *t = NULL, *pred = NULL;
    int *pick = NULL;
    kline *kl = NULL;
    kgi_host *h = NULL;
    kg_status st = kgi_db_open(":memory:", KGI_DB_CREATE, &db, err, errlen);
    if (st != KG_OK)
        return st;
    int ins, upd, kept;
    if ((st = kgi_db_import(db, export_text, len, &ins, &upd, &kept, err, errlen)) != KG_OK)
        goto done;
    kgi_db_filter all = {0};
    if ((st = kgi_db_show(db, &all, 0, on_row, &c)) != KG_OK) {
        snprintf(err, errlen, "reading the rows: %s", kgi_db_error(db));
        goto done;
    }
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
    pred = malloc((size_t)c.nk * c.np * sizeof *pred);
    pick = malloc((size_t)c.nk * sizeof *pick);
    kl = calloc((size_t)c.nk, sizeof *kl);
    if (!t || !pred || !pick || !kl)
        goto done;
    for (size_t i = 0; i < (size_t)c.nk * c.np; i++)
        t[i] = INFINITY;
    for (int i = 0; i < c.nm; i++) {
        /* measurements name their pair by value: find it among the sorted ones */
        pair *p = bsearch(&c.mp[i], c.p, (size_t)c.np, sizeof *c.p, cmp_pair);
        double *cell = &t[(size_t)c.m[i].k * c.np + (p - c.p)];
        if (c.m[i].us < *cell)
            *cell = c.m[i].us;
    }
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
        if ((st = describe(h, lim, k, l->needs, &l->tm, &l->tn, l->slices, &l->persistent, err, errlen)) != KG_OK)
            goto done;
        int bps = k->threads > 0 ? (int)lround(k->occupancy * lim->max_threads_per_sm / k->threads) : 1;
        l->bps = bps < 1 ? 1 : bps;
    }
    if ((st = loo_predictions(&c, kl, t, o, pred, err, errlen)) != KG_OK)
        goto done;
    int n = greedy(t, pred, c.nk, c.np, o->max_kernels, o->tolerance, o->max_regret > 0 ? o->max_regret : INFINITY,
                   pick);
    /* the chosen set: its fastest, and kg_matmul's leave-one-out choice, against the best measured */
    double sum = 0, lsum = 0;
    int counted = 0, lcounted = 0;
    rep->worst_regret = rep->loo_worst = 1.0;
    for (int p = 0; p < c.np; p++) {
        double best = INFINITY, chosen = INFINITY, e = INFINITY;
        int lk = -1;
        for (int q = 0; q < c.nk; q++)
            if (t[(size_t)q * c.np + p] < best)
                best = t[(size_t)q * c.np + p];
        for (int q = 0; q < n; q++) {
            double v = t[(size_t)pick[q] * c.np + p], pe = pred[(size_t)pick[q] * c.np + p];
            if (v < chosen)
                chosen = v;
            if (isfinite(v) && pe < e)
                e = pe, lk = pick[q];
        }
        double r = isfinite(chosen) ? chosen / best : UNCOVERED;
        sum += log(r);
        counted++;
        if (r > rep->worst_regret) {
            rep->worst_regret = r;
            snprintf(rep->worst_pair, sizeof rep->worst_pair, "%s %dx%dx%d", layouts[c.p[p].layout], c.p[p].m,
                     c.p[p].n, c.p[p].k);
        }
        if (lk < 0)
            continue; /* nothing else calibrates a kernel of the set measured here */
        r = t[(size_t)lk * c.np + p] / best;
        lsum += log(r);
        lcounted++;
        if (r > rep->loo_worst) {
            rep->loo_worst = r;
            snprintf(rep->loo_worst_pair, sizeof rep->loo_worst_pair, "%s %dx%dx%d", layouts[c.p[p].layout],
                     c.p[p].m, c.p[p].n, c.p[p].k);
        }
    }
    rep->geomean_regret = counted ? exp(sum / counted) : 1.0;
    rep->loo_geomean = lcounted ? exp(lsum / lcounted) : 1.0;
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
    free(pred);
    free(pick);
    free(kl);
    free(c.mp);
    return st;
}
