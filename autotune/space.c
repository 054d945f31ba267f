/*
 * space.c -- enumerating and checking the search space (see space.h).
 *
 * The template decides what is valid (its check()); this file only forms
 * the combinations, asks, and keeps the answer. Everything runs in the
 * caller's Lua host, serially: a host is not thread-safe.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "autotune/space.h"
#include "embedded.h"
#include "gen/config.h"

#define MAX_VALUES 64

/* One parameter's list of values to enumerate. */
typedef struct dim {
    char name[32];
    char value[MAX_VALUES][32];
    int n;
} dim;

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

static int add_pruned(kgi_space *sp, int tmpl, const char *config, const char *reason)
{
    if (sp->npruned == sp->pcap) {
        int cap = sp->pcap ? 2 * sp->pcap : 256;
        kgi_pruned *p = realloc(sp->pruned, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        sp->pruned = p, sp->pcap = cap;
    }
    kgi_pruned *x = &sp->pruned[sp->npruned++];
    x->tmpl = tmpl;
    snprintf(x->config, sizeof x->config, "%s", config);
    snprintf(x->reason, sizeof x->reason, "%s", reason);
    return 0;
}

void kgi_space_free(kgi_space *sp)
{
    free(sp->cand);
    free(sp->pruned);
    free(sp->hash);
    memset(sp, 0, sizeof *sp);
}

/* ------------------------------------------------------------ templates */

/* Calls resources(cfg) for a checked configuration. */
static kg_status read_resources(kgi_host *h, const char *tmpl, const char *config, kgi_res *r, char *err,
                                size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    memset(r, 0, sizeof *r);
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    lua_getfield(L, -1, "resources");
    if ((st = kgi_host_push_config(h, tmpl, config, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    if ((st = kgi_host_pcall(h, 1, 1, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    if (lua_istable(L, -1))
        kgi_res_read(L, lua_gettop(L), r);
    lua_settop(L, top);
    return KG_OK;
}

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
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    if (kgi_host_push_template(h, tmpl, err, errlen) != KG_OK)
        return -1;
    kgi_space_tmpl *t = &sp->tmpl[sp->ntmpl];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", tmpl);
    lua_getfield(L, -1, "version");
    t->version = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    lua_getfield(L, -1, "params");
    lua_Integer np = luaL_len(L, -1);
    if (np > KGI_SPACE_MAX_DIMS) {
        snprintf(err, errlen, "template '%s' has %d parameters; the tuner handles %d", tmpl, (int)np,
                 KGI_SPACE_MAX_DIMS);
        lua_settop(L, top);
        return -1;
    }
    for (lua_Integer i = 1; i <= np; i++) {
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "name");
        snprintf(t->param[i - 1], sizeof t->param[0], "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 2);
    }
    t->nparams = (int)np;
    lua_settop(L, top);
    return sp->ntmpl++;
}

/* Finds `name=v1,v2` in a space text ("bm=64,128 tm=4"); fills d. */
static int text_values(const char *text, const char *name, dim *d, char *err, size_t errlen)
{
    kgi_config c;
    if (kgi_config_parse(&c, text, err, errlen) != 0)
        return -1;
    const char *list = kgi_config_get(&c, name);
    if (!list)
        return 0;
    d->n = 0;
    for (const char *v = list;; v += strcspn(v, ",") + 1) {
        size_t vl = strcspn(v, ",");
        if (vl == 0 || vl >= sizeof d->value[0] || d->n == MAX_VALUES) {
            snprintf(err, errlen, "%s: bad value list '%s'", name, list);
            return -1;
        }
        snprintf(d->value[d->n++], sizeof d->value[0], "%.*s", (int)vl, v);
        if (!v[vl])
            return 1;
    }
}

kg_status kgi_space_check_override(kgi_host *h, const char *const *tmpls, int ntmpl, const char *override,
                                   char *err, size_t errlen)
{
    kgi_config c;
    char why[256];
    if (kgi_config_parse(&c, override, why, sizeof why) != 0) {
        snprintf(err, errlen, "--space: %s", why);
        return KG_ERR_CONFIG;
    }
    for (int p = 0; p < c.n; p++) {
        int found = 0;
        for (int i = 0; i < ntmpl && !found; i++)
            if (kgi_host_has_param(h, tmpls[i], c.param[p].name, &found, err, errlen) != KG_OK)
                return KG_ERR_CONFIG;
        if (!found) {
            snprintf(err, errlen, "--space: no template being tuned has a parameter '%s'", c.param[p].name);
            return KG_ERR_CONFIG;
        }
    }
    return KG_OK;
}

/* Reads the template's list of values for parameter `name` into d (the
 * override, then `fixed`, then the template's space; 0 when none). */
static int dim_values(lua_State *L, const char *name, const char *fixed, const char *override, dim *d, char *err,
                      size_t errlen)
{
    snprintf(d->name, sizeof d->name, "%s", name);
    int r = text_values(override, name, d, err, errlen);
    if (r == 0)
        r = text_values(fixed, name, d, err, errlen);
    if (r != 0)
        return r;
    /* the template table is at the top of the stack */
    if (lua_getfield(L, -1, "space") != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    int t = lua_getfield(L, -1, name);
    if (t == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, -1);
        d->n = 0;
        for (lua_Integer i = 1; i <= n && d->n < MAX_VALUES; i++) {
            lua_geti(L, -1, i);
            const char *v = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
            if (v)
                snprintf(d->value[d->n++], sizeof d->value[0], "%s", v);
            lua_pop(L, 1);
        }
        r = d->n > 0;
    }
    lua_pop(L, 2);
    return r;
}

/* Adds a configuration that passed the parse: checks it, reads resources. */
static kg_status add_checked(kgi_space *sp, kgi_host *h, int ti, const char *config, const kgi_limits *lim,
                             char *err, size_t errlen)
{
    kgi_cand c;
    memset(&c, 0, sizeof c);
    c.tmpl = ti;
    char why[512];
    sp->enumerated++;
    kg_status st = kgi_host_check(h, sp->tmpl[ti].name, config, lim, c.config, sizeof c.config, why, sizeof why);
    if (st == KG_ERR_CONFIG)
        return add_pruned(sp, ti, config, why) == 0 ? KG_OK : KG_ERR_NOMEM;
    if (st != KG_OK) {
        snprintf(err, errlen, "%s", why);
        return st;
    }
    if ((st = read_resources(h, sp->tmpl[ti].name, c.config, &c.res, err, errlen)) != KG_OK)
        return st;
    return add_cand(sp, &c) == 0 ? KG_OK : KG_ERR_NOMEM;
}

kg_status kgi_space_add_template(kgi_space *sp, kgi_host *h, const char *tmpl, const char *fixed,
                                 const char *override, const kgi_limits *lim, char *err, size_t errlen)
{
    int ti = template_index(sp, h, tmpl, err, errlen);
    if (ti < 0)
        return KG_ERR_TEMPLATE;
    const kgi_space_tmpl *t = &sp->tmpl[ti];
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    dim dims[KGI_SPACE_MAX_DIMS];
    int nd = 0;
    long total = 1;
    for (int p = 0; p < t->nparams; p++) {
        int r = dim_values(L, t->param[p], fixed, override, &dims[nd], err, errlen);
        if (r < 0) {
            lua_settop(L, top);
            return KG_ERR_CONFIG;
        }
        if (r == 0)
            continue;
        /* Every value must parse for this template (check() comes later). */
        for (int v = 0; v < dims[nd].n; v++) {
            char one[96], why[512];
            snprintf(one, sizeof one, "%s=%s", dims[nd].name, dims[nd].value[v]);
            if ((st = kgi_host_push_config(h, tmpl, one, why, sizeof why)) != KG_OK) {
                snprintf(err, errlen, "template '%s': space value %s: %s", tmpl, one, why);
                lua_settop(L, top);
                return st == KG_ERR_TEMPLATE ? st : KG_ERR_CONFIG;
            }
            lua_pop(L, 1);
        }
        total *= dims[nd].n;
        if (total > KGI_SPACE_MAX_COMBINATIONS) {
            snprintf(err, errlen, "template '%s': the space has more than %ld combinations; narrow it with --space",
                     tmpl, KGI_SPACE_MAX_COMBINATIONS);
            lua_settop(L, top);
            return KG_ERR_CONFIG;
        }
        nd++;
    }
    lua_settop(L, top);
    if (nd == 0 && !(fixed && fixed[0])) {
        snprintf(err, errlen, "template '%s' declares no `space` to tune", tmpl);
        return KG_ERR_CONFIG;
    }
    /* Odometer over the value lists, last parameter fastest. */
    int idx[KGI_SPACE_MAX_DIMS] = {0};
    for (long c = 0; c < total; c++) {
        char config[512];
        size_t used = 0;
        for (int d = 0; d < nd; d++)
            used += (size_t)snprintf(config + used, sizeof config - used, "%s%s=%s", d ? " " : "", dims[d].name,
                                     dims[d].value[idx[d]]);
        if ((st = add_checked(sp, h, ti, config, lim, err, errlen)) != KG_OK)
            return st;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < dims[d].n)
                break;
            idx[d] = 0;
        }
    }
    return KG_OK;
}

kg_status kgi_space_add_config(kgi_space *sp, kgi_host *h, const char *tmpl, const char *config,
                               const kgi_limits *lim, char *err, size_t errlen)
{
    int ti = template_index(sp, h, tmpl, err, errlen);
    if (ti < 0)
        return KG_ERR_TEMPLATE;
    return add_checked(sp, h, ti, config, lim, err, errlen);
}

/* ------------------------------------------------------------ coordinates */

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

static unsigned coord_hash(int tmpl, const int *coord)
{
    return (unsigned)kgi_hash(coord, sizeof(int) * KGI_SPACE_MAX_DIMS, kgi_hash(&tmpl, sizeof tmpl, KGI_HASH_SEED));
}

kg_status kgi_space_finalize(kgi_space *sp)
{
    typedef char value[32];
    value *vals = malloc((size_t)(sp->n + 1) * sizeof *vals);
    if (!vals)
        return KG_ERR_NOMEM;
    for (int ti = 0; ti < sp->ntmpl; ti++) {
        kgi_space_tmpl *t = &sp->tmpl[ti];
        for (int p = 0; p < t->nparams; p++) {
            int nv = 0;
            for (int c = 0; c < sp->n; c++) {
                if (sp->cand[c].tmpl != ti || kgi_config_text_get(sp->cand[c].config, t->param[p], vals[nv], sizeof vals[0]) != 0)
                    continue;
                int dup = 0;
                for (int j = 0; j < nv && !dup; j++)
                    dup = strcmp(vals[j], vals[nv]) == 0;
                if (!dup)
                    nv++;
            }
            qsort(vals, (size_t)nv, sizeof *vals, cmp_values);
            t->nvalues[p] = nv;
            for (int c = 0; c < sp->n; c++) {
                char v[32];
                if (sp->cand[c].tmpl != ti || kgi_config_text_get(sp->cand[c].config, t->param[p], v, sizeof v) != 0)
                    continue;
                for (int j = 0; j < nv; j++)
                    if (strcmp(vals[j], v) == 0)
                        sp->cand[c].coord[p] = j;
            }
        }
    }
    free(vals);
    free(sp->hash);
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
    return KG_OK;
}

int kgi_space_find(const kgi_space *sp, int tmpl, const int *coord)
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

int kgi_space_lookup(const kgi_space *sp, const char *tmpl, const char *config)
{
    for (int i = 0; i < sp->n; i++)
        if (strcmp(sp->cand[i].config, config) == 0 && strcmp(sp->tmpl[sp->cand[i].tmpl].name, tmpl) == 0)
            return i;
    return -1;
}

void kgi_space_shard(kgi_space *sp, int i, int n)
{
    int w = 0;
    for (int c = 0; c < sp->n; c++)
        if (c % n == i)
            sp->cand[w++] = sp->cand[c];
    sp->n = w;
    w = 0;
    for (int c = 0; c < sp->npruned; c++)
        if (c % n == i)
            sp->pruned[w++] = sp->pruned[c];
    sp->npruned = w;
    sp->enumerated = sp->n + sp->npruned;
}

/* ------------------------------------------------------------ discovery */

/* Whether template `name` loads and declares a `space` table. */
static int has_space(kgi_host *h, const char *name)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    char err[512];
    int yes = kgi_host_push_template(h, name, err, sizeof err) == KG_OK && lua_getfield(L, -1, "space") == LUA_TTABLE;
    lua_settop(L, top);
    return yes;
}

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
                if (has_space(h, mod))
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
        if (strncmp(e->module, "lib.", 4) != 0 && has_space(h, e->module))
            n = add_name(names, n, max, e->module);
    /* Sorted, so that the space, its order and its shards are reproducible. */
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}
