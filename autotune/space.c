/*
 * space.c -- enumerating and checking the search space (see space.h).
 *
 * The template decides what is valid (its check()); this file only forms
 * the combinations, asks, and keeps the answer. It asks through a walk
 * (gen/walk.h), which also says which parameters check() read, so that a
 * rejection skips every combination the same reading would reject.
 * Everything runs in the caller's Lua host, serially: a host is not
 * thread-safe.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/memo.h"
#include "autotune/space.h"
#include "gen/config.h"
#include "gen/embedded.h"
#include "gen/walk.h"

/* How often (check() calls) the walk calls sp->tick. */
#define TICK_EVERY 256

/* One parameter's values to enumerate: walk slots, canonical texts and the
 * template's raw value index of each, sorted. */
typedef struct dim {
    int param;
    int n;
    int slot[KGI_SPACE_MAX_VALUES];
    int raw[KGI_SPACE_MAX_VALUES];
    char text[KGI_SPACE_MAX_VALUES][32];
    char piece[KGI_SPACE_MAX_VALUES][72]; /* " name=value" */
    /* bit s: the value is one of walk s's values for this parameter (a
     * template's space, then its groups, are walked in turn: a combination
     * all of whose values an earlier walk had is that walk's already) */
    unsigned char seen[KGI_SPACE_MAX_VALUES];
} dim;

/* Walks of one template: its space and at most this many groups. */
#define MAX_GROUPS 7

/* ------------------------------------------------------------ arena */

typedef struct block {
    struct block *next;
    size_t used, cap;
    char data[];
} block;

/* A copy of s in the space's arena (blocks never move), or NULL. */
static const char *keep(kgi_space *sp, const char *s)
{
    size_t len = strlen(s) + 1;
    block *b = sp->arena;
    if (!b || b->cap - b->used < len) {
        size_t cap = len > (1u << 20) ? len : (1u << 20);
        block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->next = b, nb->used = 0, nb->cap = cap;
        sp->arena = b = nb;
    }
    char *p = b->data + b->used;
    memcpy(p, s, len);
    b->used += len;
    return p;
}

/* ------------------------------------------------------------ growing arrays */

static int add_cand(kgi_space *sp, const kgi_cand *c)
{
    if (sp->n == sp->cap) {
        int cap = sp->cap ? 2 * sp->cap : 256;
        kgi_cand *p = realloc(sp->cand, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        sp->cand = p, sp->cap = cap;
    }
    sp->cand[sp->n++] = *c;
    return 0;
}

int kgi_space_put_pruned(kgi_space *sp, const kgi_pruned *p)
{
    if (sp->npruned == KGI_SPACE_KEEP_PRUNED)
        return 0;
    if (sp->npruned == sp->pcap) {
        int cap = sp->pcap ? 2 * sp->pcap : 256;
        kgi_pruned *np = realloc(sp->pruned, (size_t)cap * sizeof *np);
        if (!np)
            return -1;
        sp->pruned = np, sp->pcap = cap;
    }
    kgi_pruned *x = &sp->pruned[sp->npruned];
    *x = *p;
    if (!(x->config = keep(sp, p->config)) || !(x->reason = keep(sp, p->reason)) || !(x->free = keep(sp, p->free)))
        return -1;
    sp->npruned++;
    return 0;
}

int kgi_space_put_cand(kgi_space *sp, const kgi_cand *c, const char *config)
{
    kgi_cand x = *c;
    return (x.config = keep(sp, config)) && add_cand(sp, &x) == 0 ? 0 : -1;
}

/* Counts a rejected subtree; keeps its details while fewer than
 * KGI_SPACE_KEEP_PRUNED are kept. */
static int add_pruned(kgi_space *sp, int tmpl, const char *config, const char *reason, const char *free_params,
                      long count)
{
    sp->subtrees++;
    sp->rejected += count;
    sp->enumerated += count;
    kgi_pruned p = {.tmpl = tmpl, .config = config, .reason = reason, .free = free_params, .count = count};
    return kgi_space_put_pruned(sp, &p);
}

void kgi_space_free(kgi_space *sp)
{
    free(sp->cand);
    free(sp->pruned);
    free(sp->hash);
    for (int i = 0; i < sp->ntmpl; i++)
        free(sp->tmpl[i].value);
    for (block *b = sp->arena, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    memset(sp, 0, sizeof *sp);
}

/* ------------------------------------------------------------ templates */

/* Registers template `tmpl` in sp (name, version, parameter names). */
static int template_index(kgi_space *sp, kgi_host *h, const char *tmpl, char *err, size_t errlen)
{
    for (int i = 0; i < sp->ntmpl; i++)
        if (strcmp(sp->tmpl[i].name, tmpl) == 0)
            return i;
    if (sp->ntmpl == KGI_SPACE_MAX_TEMPLATES) {
        snprintf(err, errlen, "too many templates (at most %d)", KGI_SPACE_MAX_TEMPLATES);
        return -1;
    }
    kgi_template_info info;
    if (kgi_host_template_info(h, tmpl, &info, err, errlen) != KG_OK)
        return -1;
    int np = info.nparams;
    if (np > KGI_SPACE_MAX_DIMS) {
        snprintf(err, errlen, "template '%s' has %d parameters; the tuner handles %d", tmpl, np, KGI_SPACE_MAX_DIMS);
        return -1;
    }
    kgi_space_tmpl *t = &sp->tmpl[sp->ntmpl];
    memset(t, 0, sizeof *t);
    if (!(t->value = calloc(KGI_SPACE_MAX_DIMS, sizeof *t->value))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(t->name, sizeof t->name, "%s", tmpl);
    t->version = info.version < 0 ? 0 : info.version;
    for (int p = 0; p < np; p++) {
        snprintf(t->param[p], sizeof t->param[0], "%s", info.param[p].name);
        if (info.param[p].omit_default)
            snprintf(t->omitted[p], sizeof t->omitted[0], "%s", info.param[p].dflt);
    }
    t->nparams = np;
    return sp->ntmpl++;
}

int kgi_space_piece(const kgi_space_tmpl *t, int p, const char *value, char *out, size_t len)
{
    if (t->omitted[p][0] && strcmp(value, t->omitted[p]) == 0) {
        out[0] = '\0';
        return 0;
    }
    int n = snprintf(out, len, " %.31s=%.31s", t->param[p], value);
    return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

/* Parameter p's value `text` among its first n values, or -1. */
static int value_index(const kgi_space_tmpl *t, int p, const char *text, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t->value[p][i], text) == 0)
            return i;
    return -1;
}

/* The raw index of value `text` of parameter p (added when new), or -1. */
static int raw_index(kgi_space_tmpl *t, int p, const char *text)
{
    int i = value_index(t, p, text, t->nraw[p]);
    if (i >= 0)
        return i;
    if (t->nraw[p] == KGI_SPACE_MAX_VALUES)
        return -1;
    snprintf(t->value[p][t->nraw[p]], 32, "%s", text);
    return t->nraw[p]++;
}

/* Finds `name=v1,v2` in a space text ("bm=64,128 tm=4"); fills vals. */
static int text_values(const char *text, const char *name, char (*vals)[32], int *n, char *err, size_t errlen)
{
    kgi_config c;
    if (kgi_config_parse(&c, text, err, errlen) != 0)
        return -1;
    const char *list = kgi_config_get(&c, name);
    if (!list)
        return 0;
    *n = 0;
    for (const char *v = list;; v += strcspn(v, ",") + 1) {
        size_t vl = strcspn(v, ",");
        if (vl == 0 || vl >= 32 || *n == KGI_SPACE_MAX_VALUES) {
            snprintf(err, errlen, "%s: bad value list '%s'", name, list);
            return -1;
        }
        snprintf(vals[(*n)++], 32, "%.*s", (int)vl, v);
        if (!v[vl])
            return 1;
    }
}

/* The first parameter of `c` that none of the templates has (NULL: none;
 * *failed and the reason in err when a template does not load). */
static const char *unknown_param(kgi_host *h, const char *const *tmpls, int ntmpl, const kgi_config *c, int *failed,
                                 char *err, size_t errlen)
{
    *failed = 0;
    for (int p = 0; p < c->n; p++) {
        int found = 0;
        for (int i = 0; i < ntmpl && !found; i++)
            if (kgi_host_has_param(h, tmpls[i], c->param[p].name, &found, err, errlen) != KG_OK) {
                *failed = 1;
                return NULL;
            }
        if (!found)
            return c->param[p].name;
    }
    return NULL;
}

kg_status kgi_space_check_override(kgi_host *h, const char *const *tmpls, int ntmpl, const char *override,
                                   char *err, size_t errlen)
{
    kgi_config c;
    char why[256];
    int failed;
    if (kgi_config_parse(&c, override, why, sizeof why) != 0) {
        snprintf(err, errlen, "--space: %s", why);
        return KG_ERR_CONFIG;
    }
    const char *name = unknown_param(h, tmpls, ntmpl, &c, &failed, err, errlen);
    if (name)
        snprintf(err, errlen, "--space: no template being tuned has a parameter '%s'", name);
    return name || failed ? KG_ERR_CONFIG : KG_OK;
}

static int is_int(const char *s)
{
    char *end;
    strtol(s, &end, 10);
    return s[0] && !*end;
}

static int cmp_values(const void *a, const void *b)
{
    const char *x = a, *y = b;
    if (is_int(x) && is_int(y)) {
        long u = strtol(x, NULL, 10), v = strtol(y, NULL, 10);
        return (u > v) - (u < v);
    }
    return strcmp(x, y);
}

/* Parameter p's values: the override, then `fixed` (the other way round
 * for a group: `fixed_first`), then the template's space, else its default;
 * converted by the walk, deduplicated and sorted. */
static kg_status dim_values(kgi_host *h, kgi_walk *w, kgi_space_tmpl *t, const kgi_template_info *info, int p,
                            const char *fixed, const char *override, int fixed_first, dim *d, char *err,
                            size_t errlen)
{
    char given[KGI_SPACE_MAX_VALUES][32], canon[KGI_SPACE_MAX_VALUES][32];
    int n = 0;
    const char *name = t->param[p];
    int r = text_values(fixed_first ? fixed : override, name, given, &n, err, errlen);
    if (r == 0)
        r = text_values(fixed_first ? override : fixed, name, given, &n, err, errlen);
    if (r < 0)
        return KG_ERR_CONFIG;
    if (r == 0 && (n = kgi_host_space_values(h, t->name, name, given, KGI_SPACE_MAX_VALUES)) == 0)
        snprintf(given[n++], 32, "%s", info->param[p].dflt);
    /* every value must parse for this template (check() comes later) */
    int nc = 0;
    for (int i = 0; i < n; i++) {
        char why[512];
        if (kgi_walk_add_value(w, p, given[i], canon[nc], sizeof canon[0], why, sizeof why) < 0) {
            snprintf(err, errlen, "template '%s': space value %s=%s: %s", t->name, name, given[i], why);
            return KG_ERR_CONFIG;
        }
        int dup = 0;
        for (int j = 0; j < nc && !dup; j++)
            dup = strcmp(canon[j], canon[nc]) == 0;
        nc += !dup;
    }
    qsort(canon, (size_t)nc, sizeof canon[0], cmp_values);
    d->param = p;
    d->n = nc;
    for (int i = 0; i < nc; i++) {
        char why[512], again[32];
        memcpy(d->text[i], canon[i], sizeof d->text[0]);
        kgi_space_piece(t, p, canon[i], d->piece[i], sizeof d->piece[0]);
        d->slot[i] = kgi_walk_add_value(w, p, canon[i], again, sizeof again, why, sizeof why);
        d->raw[i] = raw_index(t, p, canon[i]);
        if (d->slot[i] < 0 || d->raw[i] < 0) {
            snprintf(err, errlen, "template '%s': %s: %s", t->name, name,
                     d->slot[i] < 0 ? why : "too many distinct values");
            return KG_ERR_CONFIG;
        }
    }
    return KG_OK;
}

/* The canonical text of the current combination: every parameter in order
 * (the walk's hot path: " name=value" pieces are formed once, in dim_values). */
static void config_text(const kgi_space_tmpl *t, const dim *dims, const int *idx, char *out, size_t len)
{
    size_t used = 0;
    for (int p = 0; p < t->nparams; p++) {
        const char *piece = dims[p].piece[idx[p]];
        if (used == 0 && piece[0] == ' ')
            piece++;
        size_t n = strlen(piece);
        if (used + n >= len)
            break;
        memcpy(out + used, piece, n);
        used += n;
    }
    out[used] = '\0';
}

/* Mixed-radix position of idx over order[from..nv) (0: the subtree's first). */
static long subtree_offset(const dim *dims, const int *order, int from, int nv, const int *idx, long *size)
{
    long off = 0, n = 1;
    for (int q = from; q < nv; q++) {
        off = off * dims[order[q]].n + idx[order[q]];
        n *= dims[order[q]].n;
    }
    *size = n;
    return off;
}

/* Moves idx to the next combination over order[from..nv); 0 past the last
 * (idx then back at the subtree's first). */
static int next_in(const dim *dims, const int *order, int from, int nv, int *idx)
{
    for (int q = nv - 1; q >= from; q--) {
        if (++idx[order[q]] < dims[order[q]].n)
            return 1;
        idx[order[q]] = 0;
    }
    return 0;
}

/*
 * The order of the walk: the varying parameters by how many of up to 256
 * combinations spread over the space check() reads them, most read first,
 * then (among equals) by how many check() with resources() for a pass
 * reads them (ties in the template's order), so that the parameters a
 * verdict seldom depends on come last, those neither reads last of all,
 * and the subtree below the deepest parameter read, over which verdict and
 * resources cannot change, is large. (Ranking by the second count alone
 * lets parameters only resources() reads, such as matmul_warp's raster,
 * come before ones check() reads: 138,072 calls for the default space
 * instead of 127,066.) Any order is sound: the walk skips only what the
 * reads prove.
 */
static kg_status walk_order(kgi_walk *w, const dim *dims, const int *vary, int nv, int *order, char *err,
                            size_t errlen)
{
    int seen[KGI_SPACE_MAX_DIMS] = {0}, seen_all[KGI_SPACE_MAX_DIMS] = {0};
    int idx[KGI_SPACE_MAX_DIMS] = {0};
    long total = 1;
    for (int q = 0; q < nv; q++)
        total *= dims[vary[q]].n;
    long step = total / 256 > 1 ? total / 256 : 1;
    for (long c = 0; c < total; c += step) {
        long r = c;
        for (int q = nv - 1; q >= 0; q--) {
            idx[vary[q]] = (int)(r % dims[vary[q]].n);
            r /= dims[vary[q]].n;
            kgi_walk_set(w, vary[q], dims[vary[q]].slot[idx[vary[q]]]);
        }
        uint64_t reads, all;
        kgi_resources res;
        char why[1024];
        if (kgi_walk_check(w, &reads, NULL, why, sizeof why) < 0 ||
            kgi_walk_check(w, &all, &res, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s", why);
            return KG_ERR_TEMPLATE;
        }
        for (int q = 0; q < nv; q++) {
            seen[q] += (int)(reads >> vary[q] & 1);
            seen_all[q] += (int)(all >> vary[q] & 1);
        }
    }
    for (int q = 0; q < nv; q++)
        order[q] = q;
    for (int i = 1; i < nv; i++) /* insertion sort: stable, most read first */
        for (int j = i; j > 0 && (seen[order[j]] > seen[order[j - 1]] || (seen[order[j]] == seen[order[j - 1]] &&
                                                                         seen_all[order[j]] > seen_all[order[j - 1]]));
             j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    for (int q = 0; q < nv; q++)
        order[q] = vary[order[q]];
    return KG_OK;
}

/* The deepest position of order[0..nv) whose parameter is in `reads`
 * (at least `floor`): the walk advances there. */
static int deepest(const int *order, int nv, uint64_t reads, int floor)
{
    int j = nv - 1;
    while (j > floor && !(reads >> order[j] & 1))
        j--;
    return j;
}

/* Calls sp->tick every TICK_EVERY calls into the template; 1: stop. */
static int tick(kgi_space *sp, long calls)
{
    if (calls % TICK_EVERY == 0 && sp->tick && sp->tick(sp->tick_ud, sp)) {
        sp->stopped = 1;
        return 1;
    }
    return 0;
}

/* Sets the walk's configuration to idx where it differs from cur. */
static void set_changed(kgi_walk *w, const dim *dims, const int *order, int nv, const int *idx, int *cur)
{
    for (int q = 0; q < nv; q++)
        if (cur[order[q]] != idx[order[q]]) {
            cur[order[q]] = idx[order[q]];
            kgi_walk_set(w, order[q], dims[order[q]].slot[idx[order[q]]]);
        }
}

/*
 * Walks the combinations of dims (one per parameter) in odometer order
 * over `order` (last fastest). After each check(), the combinations that
 * agree with this one up to the deepest parameter it read (position j)
 * get the same verdict: a rejection counts them in one pruned entry; a
 * pass makes them all candidates, and within that subtree resources()
 * alone runs, each call likewise holding for the combinations that agree
 * up to the deepest parameter it read. (A parameter only resources()
 * reads, such as matmul_warp's raster, so costs one resources() call per
 * value, not one check() as well.)
 */
/* resources() results by what they read (memo.h): the tree and its leaves. */
typedef struct res_memo {
    kgi_memo *tree;
    struct leaf {
        kgi_res res;
        uint64_t reads;
    } *leaf;
    int n, cap;
} res_memo;

/* resources() of the current combination idx into *res, *reads: from the
 * memo, else called (and remembered). 0, -1 with why on a template error. */
static int resources_of(kgi_space *sp, kgi_walk *w, res_memo *rm, const int *idx, kgi_res *res, uint64_t *reads,
                        char *why, size_t whylen)
{
    int e = kgi_memo_find(rm->tree, idx);
    if (e >= 0) {
        *res = rm->leaf[e].res, *reads = rm->leaf[e].reads;
        return 0;
    }
    sp->resource_calls++;
    kgi_resources r;
    if (kgi_walk_resources(w, reads, &r, why, whylen) != 0)
        return -1;
    kgi_res_from(&r, res);
    const unsigned char *seq;
    int ns = kgi_walk_read_order(w, &seq);
    if (ns < 0)
        return 0;
    if (rm->n == rm->cap) {
        int cap = rm->cap ? 2 * rm->cap : 1024;
        struct leaf *l = realloc(rm->leaf, (size_t)cap * sizeof *l);
        if (!l)
            return 0; /* not remembered: only slower */
        rm->leaf = l, rm->cap = cap;
    }
    rm->leaf[rm->n] = (struct leaf){*res, *reads};
    rm->n += kgi_memo_put(rm->tree, seq, ns, idx, rm->n) == 0;
    return 0;
}

static kg_status walk_tree(kgi_space *sp, kgi_walk *w, int ti, const dim *dims, res_memo *rm, char *err,
                           size_t errlen);

/* Whether an earlier walk of the template (see dim.seen) had combination idx. */
static int walked_before(const dim *dims, int np, const int *idx)
{
    unsigned mask = 0xff;
    for (int p = 0; p < np && mask; p++)
        mask &= dims[p].seen[idx[p]];
    return mask != 0;
}

static kg_status walk(kgi_space *sp, kgi_walk *w, int ti, const dim *dims, char *err, size_t errlen)
{
    int nvalues[KGI_SPACE_MAX_DIMS];
    for (int p = 0; p < sp->tmpl[ti].nparams; p++)
        nvalues[p] = dims[p].n;
    res_memo rm = {.tree = kgi_memo_new(nvalues, sp->tmpl[ti].nparams)};
    if (!rm.tree)
        return KG_ERR_NOMEM;
    kg_status st = walk_tree(sp, w, ti, dims, &rm, err, errlen);
    kgi_memo_free(rm.tree);
    free(rm.leaf);
    return st;
}

static kg_status walk_tree(kgi_space *sp, kgi_walk *w, int ti, const dim *dims, res_memo *rm, char *err,
                           size_t errlen)
{
    const kgi_space_tmpl *t = &sp->tmpl[ti];
    int np = t->nparams, idx[KGI_SPACE_MAX_DIMS] = {0}, cur[KGI_SPACE_MAX_DIMS] = {0};
    int vary[KGI_SPACE_MAX_DIMS], order[KGI_SPACE_MAX_DIMS], nv = 0; /* parameters with several values */
    for (int p = 0; p < np; p++)
        if (dims[p].n > 1)
            vary[nv++] = p;
    kg_status st = walk_order(w, dims, vary, nv, order, err, errlen);
    if (st != KG_OK)
        return st;
    for (int p = 0; p < np; p++)
        kgi_walk_set(w, p, dims[p].slot[0]);
    char config[2048], why[1024];
    for (;;) {
        if (tick(sp, ++sp->checks + sp->resource_calls))
            return KG_OK;
        set_changed(w, dims, order, nv, idx, cur);
        uint64_t reads = 0;
        int ok = kgi_walk_check(w, &reads, NULL, why, sizeof why);
        if (ok < 0) {
            snprintf(err, errlen, "%s", why);
            return KG_ERR_TEMPLATE;
        }
        int j = deepest(order, nv, reads, -1); /* the odometer advances here */
        if (ok) {
            kgi_cand c;
            memset(&c, 0, sizeof c);
            c.tmpl = ti;
            int jr; /* the deepest position resources() read, j or deeper */
            do {
                if (tick(sp, sp->checks + sp->resource_calls + 1))
                    return KG_OK;
                set_changed(w, dims, order, nv, idx, cur);
                if (resources_of(sp, w, rm, idx, &c.res, &reads, why, sizeof why) != 0) {
                    snprintf(err, errlen, "%s", why);
                    return KG_ERR_TEMPLATE;
                }
                jr = deepest(order, nv, reads, j);
                do {
                    if (walked_before(dims, np, idx))
                        continue;
                    config_text(t, dims, idx, config, sizeof config);
                    for (int p = 0; p < np; p++)
                        c.coord[p] = (unsigned char)dims[p].raw[idx[p]];
                    if (!(c.config = keep(sp, config)) || add_cand(sp, &c) != 0)
                        return KG_ERR_NOMEM;
                    sp->enumerated++;
                } while (next_in(dims, order, jr + 1, nv, idx));
            } while (jr > j && next_in(dims, order, j + 1, jr + 1, idx));
        } else {
            long size, offset = subtree_offset(dims, order, j + 1, nv, idx, &size);
            char free_params[512] = "";
            size_t fl = 0;
            for (int q = j + 1; q < nv && fl < sizeof free_params; q++)
                fl += (size_t)snprintf(free_params + fl, sizeof free_params - fl, "%s%s", fl ? ", " : "",
                                       t->param[order[q]]);
            config_text(t, dims, idx, config, sizeof config);
            if (add_pruned(sp, ti, config, why, free_params, size - offset) != 0)
                return KG_ERR_NOMEM;
            for (int q = j + 1; q < nv; q++)
                idx[order[q]] = 0;
        }
        /* past the subtree: advance at position j */
        if (j < 0 || !next_in(dims, order, 0, j + 1, idx))
            return KG_OK;
    }
}

kg_status kgi_space_add_template(kgi_space *sp, kgi_host *h, const char *tmpl, const char *fixed,
                                 const char *override, const kgi_limits *lim, char *err, size_t errlen)
{
    int ti = template_index(sp, h, tmpl, err, errlen);
    if (ti < 0)
        return KG_ERR_TEMPLATE;
    if (!kgi_host_has_space(h, tmpl) && !(fixed && fixed[0])) {
        snprintf(err, errlen, "template '%s' declares no `space` to tune", tmpl);
        return KG_ERR_CONFIG;
    }
    kgi_walk *w;
    kg_status st = kgi_walk_open(h, tmpl, lim, &w, err, errlen);
    if (st != KG_OK)
        return st == KG_ERR_CONFIG ? KG_ERR_TEMPLATE : st;
    dim *dims = calloc(KGI_SPACE_MAX_DIMS, sizeof *dims);
    dim(*prev)[KGI_SPACE_MAX_DIMS] = calloc(MAX_GROUPS + 1, sizeof *prev); /* each walk's values */
    kgi_template_info *info = malloc(sizeof *info);
    if (!dims || !prev || !info) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    if ((st = kgi_host_template_info(h, tmpl, info, err, errlen)) != KG_OK)
        goto done;
    int np = sp->tmpl[ti].nparams;
    /* the space, then each of its groups (not with an override: a space
     * given by hand is the whole space) */
    int multi = !(override && override[0]);
    for (int g = -1; g <= (multi ? MAX_GROUPS : -1) && !sp->stopped; g++) {
        char group[2048];
        const char *over = override;
        if (g >= 0) {
            int r = kgi_host_space_group(h, tmpl, g, group, sizeof group);
            if (r == 0)
                break;
            if (g == MAX_GROUPS) {
                snprintf(err, errlen, "template '%s': more than %d space_groups", tmpl, MAX_GROUPS);
                st = KG_ERR_TEMPLATE;
                goto done;
            }
            kgi_config gc;
            char why[256];
            int failed;
            if (r < 0 || kgi_config_parse(&gc, group, why, sizeof why) != 0) {
                snprintf(err, errlen, "template '%s': %s", tmpl, r < 0 ? group : why);
                st = KG_ERR_TEMPLATE;
                goto done;
            }
            const char *name = unknown_param(h, &tmpl, 1, &gc, &failed, err, errlen);
            if (name || failed) {
                if (name)
                    snprintf(err, errlen, "template '%s': space_groups[%d] names no parameter of the template: '%s'",
                             tmpl, g + 1, name);
                st = KG_ERR_TEMPLATE;
                goto done;
            }
            over = group;
        }
        for (int p = 0; p < np; p++) {
            dim d;
            if ((st = dim_values(h, w, &sp->tmpl[ti], info, p, fixed, over, g >= 0, &d, err, errlen)) != KG_OK)
                goto done;
            /* which earlier walks had each value */
            for (int i = 0; i < d.n; i++) {
                d.seen[i] = 0;
                for (int e = 0; e <= g; e++)
                    for (int j = 0; j < prev[e][p].n; j++)
                        if (strcmp(prev[e][p].text[j], d.text[i]) == 0)
                            d.seen[i] |= (unsigned char)(1u << e);
            }
            dims[p] = d;
        }
        if ((st = walk(sp, w, ti, dims, err, errlen)) != KG_OK)
            goto done;
        memcpy(prev[g + 1], dims, KGI_SPACE_MAX_DIMS * sizeof *dims);
    }
done:
    free(info);
    free(dims);
    free(prev);
    kgi_walk_close(w);
    return st;
}

/* Parameter q's value in canonical `config` of template t (its default
 * where the text leaves it out); 0, or -1 where it has neither. */
static int param_text(const kgi_space_tmpl *t, const char *config, int q, char *v, size_t len)
{
    if (kgi_config_text_get(config, t->param[q], v, len) == 0)
        return 0;
    if (!t->omitted[q][0])
        return -1;
    snprintf(v, len, "%s", t->omitted[q]); /* left out at its default */
    return 0;
}

kg_status kgi_space_add_config(kgi_space *sp, kgi_host *h, const char *tmpl, const char *config,
                               const kgi_limits *lim, char *err, size_t errlen)
{
    int ti = template_index(sp, h, tmpl, err, errlen);
    if (ti < 0)
        return KG_ERR_TEMPLATE;
    kgi_cand c;
    memset(&c, 0, sizeof c);
    c.tmpl = ti;
    char canon[2048], why[1024];
    /* a parameter that is unknown or out of its range is the list's mistake, on any device; a rule of
     * check() (limits, combinations) prunes the configuration as a walk does */
    kg_status st = kgi_host_parse(h, tmpl, config, err, errlen);
    if (st != KG_OK)
        return st;
    st = kgi_host_check(h, tmpl, config, lim, canon, sizeof canon, why, sizeof why);
    if (st == KG_ERR_CONFIG)
        return add_pruned(sp, ti, config, why, "", 1) == 0 ? KG_OK : KG_ERR_NOMEM;
    if (st != KG_OK) {
        snprintf(err, errlen, "%s", why);
        return st;
    }
    /* coordinates: the raw index of each parameter's canonical value */
    kgi_space_tmpl *t = &sp->tmpl[ti];
    for (int q = 0; q < t->nparams; q++) {
        char v[32];
        if (param_text(t, canon, q, v, sizeof v) != 0) {
            snprintf(err, errlen, "template '%s': its canonical configuration '%s' has no %s", tmpl, canon,
                     t->param[q]);
            return KG_ERR_TEMPLATE;
        }
        int raw = raw_index(t, q, v);
        if (raw < 0) {
            snprintf(err, errlen, "template '%s': %s: too many distinct values", tmpl, t->param[q]);
            return KG_ERR_CONFIG;
        }
        c.coord[q] = (unsigned char)raw;
    }
    kgi_resources res;
    if ((st = kgi_host_resources(h, tmpl, canon, &res, err, errlen)) != KG_OK)
        return st;
    kgi_res_from(&res, &c.res);
    if (!(c.config = keep(sp, canon)) || add_cand(sp, &c) != 0)
        return KG_ERR_NOMEM;
    sp->enumerated++;
    return KG_OK;
}

void kgi_space_drop_repeats(kgi_space *sp)
{
    int w = 0;
    for (int i = 0; i < sp->n; i++) {
        int seen = 0;
        for (int j = 0; j < w && !seen; j++)
            seen = sp->cand[j].tmpl == sp->cand[i].tmpl && strcmp(sp->cand[j].config, sp->cand[i].config) == 0;
        if (!seen)
            sp->cand[w++] = sp->cand[i];
    }
    sp->enumerated -= sp->n - w;
    sp->n = w;
}

/* ------------------------------------------------------------ coordinates */

_Static_assert(KGI_SPACE_MAX_VALUES <= 256, "a coordinate is one byte");

static unsigned coord_hash(int tmpl, const unsigned char *coord)
{
    return (unsigned)kgi_hash(coord, KGI_SPACE_MAX_DIMS, kgi_hash(&tmpl, sizeof tmpl, KGI_HASH_SEED));
}

/* qsort context for ranking raw values: the value table of one parameter. */
typedef struct ranked {
    const char *text;
    int raw;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_values(((const ranked *)a)->text, ((const ranked *)b)->text);
}

/* The coordinates' hash over the candidates as they stand. */
static kg_status build_hash(kgi_space *sp)
{
    free(sp->hash);
    sp->hash = NULL;
    sp->hash_n = 0;
    sp->hash_size = 16;
    while (sp->hash_size < 2 * sp->n + 1)
        sp->hash_size *= 2;
    if (!(sp->hash = malloc((size_t)sp->hash_size * sizeof *sp->hash)))
        return KG_ERR_NOMEM;
    for (int i = 0; i < sp->hash_size; i++)
        sp->hash[i] = -1;
    for (int c = 0; c < sp->n; c++) {
        unsigned hs = coord_hash(sp->cand[c].tmpl, sp->cand[c].coord) & (unsigned)(sp->hash_size - 1);
        while (sp->hash[hs] >= 0)
            hs = (hs + 1) & (unsigned)(sp->hash_size - 1);
        sp->hash[hs] = c;
    }
    sp->hash_n = sp->n;
    return KG_OK;
}

kg_status kgi_space_finalize(kgi_space *sp)
{
    sp->whole_n = sp->n;
    /* raw value indices -> ranks among the values the candidates take
     * (one pass over the candidates to see the values used, one to rank) */
    for (int ti = 0; ti < sp->ntmpl; ti++) {
        kgi_space_tmpl *t = &sp->tmpl[ti];
        unsigned char used[KGI_SPACE_MAX_DIMS][KGI_SPACE_MAX_VALUES];
        int rank[KGI_SPACE_MAX_DIMS][KGI_SPACE_MAX_VALUES];
        memset(used, 0, sizeof used);
        for (int c = 0; c < sp->n; c++)
            if (sp->cand[c].tmpl == ti)
                for (int p = 0; p < t->nparams; p++)
                    used[p][sp->cand[c].coord[p]] = 1;
        for (int p = 0; p < t->nparams; p++) {
            ranked r[KGI_SPACE_MAX_VALUES];
            int nv = 0;
            for (int i = 0; i < t->nraw[p]; i++)
                if (used[p][i])
                    r[nv++] = (ranked){t->value[p][i], i};
            qsort(r, (size_t)nv, sizeof *r, cmp_ranked);
            for (int i = 0; i < nv; i++)
                rank[p][r[i].raw] = i;
            /* keep the value table in rank order, so that it stays the
             * table of raw indices (finalize may run again) */
            char sorted[KGI_SPACE_MAX_VALUES][32];
            for (int i = 0; i < nv; i++)
                memcpy(sorted[i], r[i].text, 32);
            memcpy(t->value[p], sorted, sizeof sorted[0] * (size_t)nv);
            t->nraw[p] = nv;
            t->nvalues[p] = nv;
        }
        for (int c = 0; c < sp->n; c++)
            if (sp->cand[c].tmpl == ti)
                for (int p = 0; p < t->nparams; p++)
                    sp->cand[c].coord[p] = rank[p][sp->cand[c].coord[p]];
    }
    return build_hash(sp);
}

int kgi_space_find(const kgi_space *sp, int tmpl, const unsigned char *coord)
{
    if (!sp->hash)
        return -1;
    unsigned hs = coord_hash(tmpl, coord) & (unsigned)(sp->hash_size - 1);
    for (; sp->hash[hs] >= 0; hs = (hs + 1) & (unsigned)(sp->hash_size - 1)) {
        const kgi_cand *c = &sp->cand[sp->hash[hs]];
        if (c->tmpl == tmpl && memcmp(c->coord, coord, sizeof c->coord) == 0)
            return sp->hash[hs];
    }
    return -1;
}

/* The coordinates of canonical `config` in template t of a finalized space
 * (each value's rank among the values its parameter takes there), or -1
 * when a value is not among them. */
static int coord_of(const kgi_space_tmpl *t, const char *config, unsigned char *coord)
{
    memset(coord, 0, KGI_SPACE_MAX_DIMS);
    for (int q = 0; q < t->nparams; q++) {
        char v[32];
        if (param_text(t, config, q, v, sizeof v) != 0)
            return -1;
        int r = value_index(t, q, v, t->nvalues[q]);
        if (r < 0)
            return -1;
        coord[q] = (unsigned char)r;
    }
    return 0;
}

int kgi_space_lookup(const kgi_space *sp, const char *tmpl, const char *config)
{
    /* The candidates in the coordinates' hash through it (a space of
     * 369,326 would otherwise be read whole for each call); those added
     * since (kgi_space_add_config after kgi_space_finalize) one by one. */
    int from = 0;
    if (sp->hash) {
        for (int ti = 0; ti < sp->ntmpl; ti++) {
            unsigned char coord[KGI_SPACE_MAX_DIMS];
            if (strcmp(sp->tmpl[ti].name, tmpl) != 0 || coord_of(&sp->tmpl[ti], config, coord) != 0)
                continue;
            int c = kgi_space_find(sp, ti, coord);
            if (c >= 0 && strcmp(sp->cand[c].config, config) == 0)
                return c;
        }
        from = sp->hash_n;
    }
    for (int i = from; i < sp->n; i++)
        if (strcmp(sp->cand[i].config, config) == 0 && strcmp(sp->tmpl[sp->cand[i].tmpl].name, tmpl) == 0)
            return i;
    return -1;
}

kg_status kgi_space_shard(kgi_space *sp, int i, int n)
{
    int w = 0;
    for (int c = 0; c < sp->n; c++)
        if (c % n == i)
            sp->cand[w++] = sp->cand[c];
    sp->n = w;
    /* rejected subtrees are not part of any shard's work: each shard
     * reports the whole space's count, and keeps its slice of the details */
    w = 0;
    for (int c = 0; c < sp->npruned; c++)
        if (c % n == i)
            sp->pruned[w++] = sp->pruned[c];
    sp->npruned = w;
    sp->enumerated = sp->n + sp->rejected;
    /* the hash held the whole space's indices: the slice's own, so that
     * kgi_space_find (neighbours) and kgi_space_lookup answer in it */
    return sp->hash ? build_hash(sp) : KG_OK;
}

/* ------------------------------------------------------------ discovery */

static int cmp_names(const void *a, const void *b) { return strcmp(a, b); }

static int add_name(char names[][64], int n, int max, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return n;
    if (n < max)
        snprintf(names[n++], 64, "%s", name);
    return n;
}

int kgi_space_templates(kgi_host *h, const char *path, char names[][64], int max)
{
    int n = 0;
    for (const char *p = path; p && *p;) {
        size_t len = strcspn(p, ":");
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)len, p);
        DIR *d = len ? opendir(dir) : NULL;
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t el = strlen(e->d_name);
            if (el > 4 && el < 64 && strcmp(e->d_name + el - 4, ".lua") == 0) {
                char mod[64];
                snprintf(mod, sizeof mod, "%.*s", (int)(el - 4), e->d_name);
                if (kgi_host_has_space(h, mod))
                    n = add_name(names, n, max, mod);
            }
        }
        if (d)
            closedir(d);
        p += len;
        if (*p == ':')
            p++;
    }
    for (const kgi_embedded *e = kgi_embedded_files; e->module; e++)
        if (strncmp(e->module, "lib.", 4) != 0 && kgi_host_has_space(h, e->module))
            n = add_name(names, n, max, e->module);
    /* Sorted, so that the space, its order and its shards are reproducible. */
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}
