/*
 * catalogue.c -- choosing a catalogue's candidates with the model, and the
 * greedy cover that `make` (catalogue_make.c) shares (see catalogue.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/catalogue.h"
#include "autotune/model.h"
#include "autotune/space.h"
#include "gen/config.h"
#include "gen/host.h"
#include "runtime/catalogue.h"

/* The fastest time at each pair over all nc kernels (INFINITY: none has one). */
static void pair_bests(const double *t, int nc, int np, double *best)
{
    for (int p = 0; p < np; p++) {
        best[p] = INFINITY;
        for (int c = 0; c < nc; c++)
            if (t[(size_t)c * np + p] > 0 && t[(size_t)c * np + p] < best[p])
                best[p] = t[(size_t)c * np + p];
    }
}

/* kgi_cat_cost with the pairs' best times given. */
static double set_cost(const double *t, const double *e_of, const double *best, int np, const int *pick, int n)
{
    double sum = 0;
    for (int p = 0; p < np; p++) {
        if (!isfinite(best[p]))
            continue;
        double e = INFINITY, chosen = INFINITY;
        for (int q = 0; q < n; q++) {
            size_t i = (size_t)pick[q] * np + p;
            if (t[i] > 0 && isfinite(t[i]) && isfinite(e_of[i]) && e_of[i] < e)
                e = e_of[i], chosen = t[i];
        }
        sum += isfinite(chosen) ? log(chosen / best[p]) : log(KGI_CAT_UNCOVERED);
    }
    return sum;
}

int kgi_cat_greedy(const double *t, const double *pred, int nc, int np, int max, double tol, double worst, int *pick)
{
    return kgi_cat_greedy_from(t, pred, nc, np, 0, max, tol, worst, pick);
}

int kgi_cat_greedy_from(const double *t, const double *pred, int nc, int np, int n0, int max, double tol, double worst,
                        int *pick)
{
    const double *e_of = pred ? pred : t;
    double *best = malloc((size_t)np * sizeof *best);
    int *cur = malloc((size_t)np * sizeof *cur);
    char *used = calloc((size_t)nc + 1, 1);
    int n = n0;
    if (!best || !cur || !used) {
        n = n0 > 0 ? -1 : 0; /* grown from a set: -1 says nothing could be chosen (from scratch: none chosen) */
        goto done;
    }
    pair_bests(t, nc, np, best);
    for (int p = 0; p < np; p++)
        cur[p] = -1;
    for (int i = 0; i < n0; i++) /* the preset kernels: the set's choice at each pair as for a pick */
        used[pick[i]] = 1;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < n0; i++) {
            double v = t[(size_t)pick[i] * np + p], e = e_of[(size_t)pick[i] * np + p];
            if (v > 0 && isfinite(v) && isfinite(e) && (cur[p] < 0 || e < e_of[(size_t)cur[p] * np + p]))
                cur[p] = pick[i];
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
                double before = k >= 0 ? log(t[(size_t)k * np + p] / best[p]) : log(KGI_CAT_UNCOVERED);
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

double kgi_cat_cost(const double *t, const double *pred, int nc, int np, const int *pick, int n)
{
    double *best = malloc((size_t)np * sizeof *best);
    if (!best)
        return INFINITY;
    pair_bests(t, nc, np, best);
    double sum = set_cost(t, pred ? pred : t, best, np, pick, n);
    free(best);
    return sum;
}

/* The set's choice at each pair (the kernel of the lowest `pred` with a time there; -1: none) and the one
 * after it, for kgi_cat_exchange. */
static void set_choices(const double *t, const double *e_of, int np, const int *pick, int n, int *first, int *second)
{
    for (int p = 0; p < np; p++) {
        first[p] = second[p] = -1;
        for (int q = 0; q < n; q++) {
            size_t i = (size_t)pick[q] * np + p;
            if (!(t[i] > 0) || !isfinite(t[i]) || !isfinite(e_of[i]))
                continue;
            if (first[p] < 0 || e_of[i] < e_of[(size_t)first[p] * np + p])
                second[p] = first[p], first[p] = pick[q];
            else if (second[p] < 0 || e_of[i] < e_of[(size_t)second[p] * np + p])
                second[p] = pick[q];
        }
    }
}

int kgi_cat_exchange(const double *t, const double *pred, int nc, int np, double worst, int *pick, int n)
{
    const double *e_of = pred ? pred : t;
    double *best = malloc((size_t)np * sizeof *best);
    int *first = malloc((size_t)np * sizeof *first), *second = malloc((size_t)np * sizeof *second);
    int *pos = malloc(((size_t)nc + 1) * sizeof *pos); /* a kernel's place in pick[], -1: not in the set */
    int swaps = 0;
    if (!best || !first || !second || !pos)
        goto done;
    pair_bests(t, nc, np, best);
    double cost = set_cost(t, e_of, best, np, pick, n);
    for (int c = 0; c < nc; c++)
        pos[c] = -1;
    for (int q = 0; q < n; q++)
        pos[pick[q]] = q;
    /* each kernel of the set swapped in turn is a kernel left out: at most nc - n gainful swaps per place, a
     * bound that a strictly falling sum never reaches */
    for (int round = 0; round < n * (nc - n) + 1; round++) {
        set_choices(t, e_of, np, pick, n, first, second);
        int bs = -1, bc = -1;
        double bg = 1e-9;
        for (int s = 0; s < n; s++) {
            for (int c = 0; c < nc; c++) {
                if (pos[c] >= 0)
                    continue;
                double g = 0;
                for (int p = 0; p < np && isfinite(g); p++) {
                    if (!isfinite(best[p]))
                        continue;
                    /* c takes place s: it is the choice where its prediction is the lowest, and on a tie
                     * where it comes first (set_choices' and kgi_cat_cost's order) */
                    int k = first[p], r = k == pick[s] ? second[p] : k, ch = r;
                    double v = t[(size_t)c * np + p], e = e_of[(size_t)c * np + p];
                    if (v > 0 && isfinite(v) && isfinite(e) &&
                        (r < 0 || e < e_of[(size_t)r * np + p] || (e == e_of[(size_t)r * np + p] && s < pos[r])))
                        ch = c;
                    if (ch == k)
                        continue;
                    double before = k >= 0 ? log(t[(size_t)k * np + p] / best[p]) : log(KGI_CAT_UNCOVERED);
                    double after = ch >= 0 ? log(t[(size_t)ch * np + p] / best[p]) : log(KGI_CAT_UNCOVERED);
                    if (k >= 0 && after > before && after > log(worst))
                        g = -INFINITY; /* the greedy cover's rule */
                    else
                        g += before - after;
                }
                if (g > bg)
                    bg = g, bs = s, bc = c;
            }
        }
        if (bs < 0)
            break;
        /* the gain above is the change of the sum; a swap that would not lower it ends the search */
        int out = pick[bs];
        pick[bs] = bc;
        double after = set_cost(t, e_of, best, np, pick, n);
        if (!(after < cost)) {
            pick[bs] = out;
            break;
        }
        cost = after;
        pos[out] = -1;
        pos[bc] = bs;
        swaps++;
    }
done:
    free(best);
    free(first);
    free(second);
    free(pos);
    return swaps;
}

int kgi_cat_trim(const double *t, const double *pred, int nc, int np, double worst, const double *cost, double budget,
                 int *pick, int *n, int *dropped)
{
    const double *e_of = pred ? pred : t;
    double *best = malloc((size_t)np * sizeof *best);
    int *first = malloc((size_t)np * sizeof *first), *second = malloc((size_t)np * sizeof *second);
    int out = 0;
    if (!best || !first || !second) {
        out = -2;
        goto done;
    }
    pair_bests(t, nc, np, best);
    double total = 0;
    for (int q = 0; q < *n; q++)
        total += cost[pick[q]];
    while (total > budget) {
        set_choices(t, e_of, np, pick, *n, first, second);
        int bs = -1, fs = -1; /* the least loss per unit of cost; the least loss of a drop that ends the fit */
        double bd = INFINITY, bl = INFINITY, fl = INFINITY;
        for (int s = 0; s < *n; s++) {
            if (!(cost[pick[s]] > 0))
                continue; /* nothing to gain */
            /* without pick[s], its pairs go to their next choice (or none) */
            double d = 0;
            for (int p = 0; p < np && isfinite(d); p++) {
                if (!isfinite(best[p]) || first[p] != pick[s])
                    continue;
                int r = second[p];
                double before = log(t[(size_t)pick[s] * np + p] / best[p]);
                double after = r >= 0 ? log(t[(size_t)r * np + p] / best[p]) : log(KGI_CAT_UNCOVERED);
                if (after > before && after > log(worst))
                    d = INFINITY; /* the greedy cover's rule: no pair left above `worst` */
                else
                    d += after - before;
            }
            if (!isfinite(d))
                continue;
            if (total - cost[pick[s]] <= budget && d < fl)
                fl = d, fs = s;
            if (d / cost[pick[s]] < bd)
                bd = d / cost[pick[s]], bl = d, bs = s;
        }
        /* the last drop: the one that ends the fit at the least loss, unless the best per unit (which leaves
         * more to drop) loses less by itself */
        if (fs >= 0 && fl <= bl)
            bs = fs;
        if (bs < 0) {
            out = -1;
            break;
        }
        dropped[out++] = pick[bs];
        total -= cost[pick[bs]];
        memmove(pick + bs, pick + bs + 1, (size_t)(*n - bs - 1) * sizeof *pick);
        (*n)--;
    }
done:
    free(best);
    free(first);
    free(second);
    return out;
}

int kgi_cat_strip_layout(const char *config, char *out, size_t len, char *err, size_t errlen)
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
    int *cls;                  /* what kind of kernel (kgi_cat_kind) */
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

/* What kind of kernel a candidate is, in resources()' template-neutral
 * terms: 16-byte copies or not, packed operands, split-K, a persistent
 * grid. The model's ranking is least sure between kinds (a pack pass, an
 * odd shape's narrow copies), so each kind keeps a few candidates. */
int kgi_cat_kind(const kgi_res *r)
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
    snprintf(fixed, sizeof fixed, "layout=%s", kgi_layout_name(li));
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
            pred[c] = kgi_model_admits(&sp.cand[c].res, sh->m, sh->n, sh->k)
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
        if (kgi_cat_strip_layout(sp.cand[c].config, cfg, sizeof cfg, err, errlen) != 0) {
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
        pl->cls[pl->n] = kgi_cat_kind(&sp.cand[c].res);
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
    int n = kgi_cat_greedy(t, NULL, nc, np, nc, 0.0, INFINITY, pick);
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
        int got = kgi_cat_greedy(sub, NULL, nk, np, o->per_kind, 0.0, INFINITY, sp2);
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
