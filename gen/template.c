/*
 * template.c -- what C reads from a template besides its rendered source:
 * name, version and parameters (the command line, `kgen params`, the
 * tuner), the tuner's `space`, resources(cfg) (the tuner's model, explain)
 * and accesses(cfg, shape) evaluated lane by lane (explain, tests).
 *
 * Every function leaves the Lua stack as it found it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "host_lua.h"

/* ------------------------------------------------------------ name, version, parameters */

/* The allowed values of the parameter declaration at the top of the stack. */
static void allowed_text(lua_State *L, char *buf, size_t len)
{
    buf[0] = '\0';
    if (lua_getfield(L, -1, "values") == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, -1);
        size_t used = 0;
        for (lua_Integer i = 1; i <= n && used < len; i++) {
            lua_geti(L, -1, i);
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 1 ? "," : "", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "min");
    lua_getfield(L, -2, "max");
    snprintf(buf, len, "%s..%s", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 2);
}

/* The string (or number, as text) at the top of the stack into buf; "" otherwise. */
static void text_of(lua_State *L, char *buf, size_t len)
{
    snprintf(buf, len, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
}

/* With the template at the top: its integer version, or -1. */
static int version_of(lua_State *L)
{
    lua_getfield(L, -1, "version");
    int v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1;
    lua_pop(L, 1);
    return v;
}

kg_status kgi_host_template_info(kgi_host *h, const char *tmpl, kgi_template_info *out, char *err, size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    memset(out, 0, sizeof *out);
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    lua_getfield(L, -1, "name");
    text_of(L, out->name, sizeof out->name);
    lua_pop(L, 1);
    out->version = version_of(L);
    /* params.validate has run: a list of tables with string names and docs */
    lua_getfield(L, -1, "params");
    lua_Integer n = luaL_len(L, -1);
    if (n > KGI_MAX_PARAMS) {
        snprintf(err, errlen, "template '%s' has %d parameters; kgen handles %d", tmpl ? tmpl : "matmul", (int)n,
                 KGI_MAX_PARAMS);
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    for (lua_Integer i = 1; i <= n; i++) {
        kgi_param *p = &out->param[i - 1];
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "name");
        text_of(L, p->name, sizeof p->name);
        lua_getfield(L, -2, "default");
        text_of(L, p->dflt, sizeof p->dflt);
        lua_getfield(L, -3, "omit_default");
        p->omit_default = lua_toboolean(L, -1);
        lua_pop(L, 3);
        allowed_text(L, p->allowed, sizeof p->allowed);
        lua_getfield(L, -1, "doc");
        text_of(L, p->doc, sizeof p->doc);
        lua_pop(L, 2);
    }
    out->nparams = (int)n;
    lua_settop(L, top);
    return KG_OK;
}

int kgi_template_param(const kgi_template_info *info, const char *name)
{
    for (int i = 0; i < info->nparams; i++)
        if (strcmp(info->param[i].name, name) == 0)
            return i;
    return -1;
}

kg_status kgi_host_has_param(kgi_host *h, const char *tmpl, const char *name, int *has, char *err, size_t errlen)
{
    kgi_template_info info;
    *has = 0;
    kg_status st = kgi_host_template_info(h, tmpl, &info, err, errlen);
    if (st == KG_OK && name)
        *has = kgi_template_param(&info, name) >= 0;
    return st;
}

int kgi_host_template_version(kgi_host *h, const char *tmpl)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    char err[512];
    int v = kgi_host_push_template(h, tmpl, err, sizeof err) == KG_OK ? version_of(L) : -1;
    lua_settop(L, top);
    return v;
}

/* ------------------------------------------------------------ space */

int kgi_host_has_space(kgi_host *h, const char *tmpl)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    char err[512];
    int yes = kgi_host_push_template(h, tmpl, err, sizeof err) == KG_OK && lua_getfield(L, -1, "space") == LUA_TTABLE;
    lua_settop(L, top);
    return yes;
}

int kgi_host_space_values(kgi_host *h, const char *tmpl, const char *param, char (*values)[32], int max)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    char err[512];
    int n = 0;
    if (kgi_host_push_template(h, tmpl, err, sizeof err) == KG_OK && lua_getfield(L, -1, "space") == LUA_TTABLE &&
        lua_getfield(L, -1, param) == LUA_TTABLE) {
        lua_Integer len = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= len && n < max; i++) {
            lua_geti(L, -1, i);
            if (lua_isstring(L, -1))
                snprintf(values[n++], sizeof values[0], "%s", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    lua_settop(L, top);
    return n;
}

int kgi_host_space_group(kgi_host *h, const char *tmpl, int g, char *text, size_t len)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L), rc = 0;
    char err[512];
    size_t used = 0;
    text[0] = '\0';
    if (kgi_host_push_template(h, tmpl, err, sizeof err) != KG_OK || lua_getfield(L, -1, "space_groups") != LUA_TTABLE ||
        lua_geti(L, -1, g + 1) == LUA_TNIL)
        goto out;
    rc = -1;
    if (!lua_istable(L, -1)) {
        snprintf(text, len, "space_groups[%d] is not a table", g + 1);
        goto out;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        /* key at -2, its list at -1 */
        if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1) || luaL_len(L, -1) < 1) {
            snprintf(text, len, "space_groups[%d]: each entry must be `name = { values }`, with one value or more", g + 1);
            goto out;
        }
        int n = snprintf(text + used, len - used, "%s%s=", used ? " " : "", lua_tostring(L, -2));
        if (n < 0 || (size_t)n >= len - used)
            goto too_long;
        used += (size_t)n;
        lua_Integer vn = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= vn; i++) {
            int t = lua_geti(L, -1, i);
            if (t != LUA_TNUMBER && t != LUA_TSTRING) {
                snprintf(text, len, "space_groups[%d].%s: values must be numbers or strings", g + 1, lua_tostring(L, -3));
                goto out;
            }
            n = snprintf(text + used, len - used, "%s%s", i > 1 ? "," : "", lua_tostring(L, -1));
            lua_pop(L, 1);
            if (n < 0 || (size_t)n >= len - used)
                goto too_long;
            used += (size_t)n;
        }
        lua_pop(L, 1);
    }
    rc = 1;
    goto out;
too_long:
    snprintf(text, len, "space_groups[%d] is too long", g + 1);
out:
    lua_settop(L, top);
    return rc;
}

/* ------------------------------------------------------------ resources */

/* A number field of the table at `idx` (0 when absent or not a number);
 * *bad when it is present and not a non-negative number, or not an integer
 * where `integer`. */
static double num_field(lua_State *L, int idx, const char *k, int integer, int *bad)
{
    int t = lua_getfield(L, idx, k);
    int ok = 1;
    double v = 0;
    if (t != LUA_TNIL) {
        if (integer) {
            lua_Integer i = lua_tointegerx(L, -1, &ok);
            v = ok ? (double)i : (lua_isnumber(L, -1) ? lua_tonumber(L, -1) : 0);
        } else {
            v = lua_tonumberx(L, -1, &ok);
        }
        if (!ok || v < 0)
            *bad = 1;
    }
    lua_pop(L, 1);
    return v;
}

/* A string field into buf ("" when absent or not a string). */
static void str_field(lua_State *L, int idx, const char *k, char *buf, size_t len)
{
    const char *v = lua_getfield(L, idx, k) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    snprintf(buf, len, "%s", v);
    lua_pop(L, 1);
}

void kgi_read_resources(lua_State *L, int cfg, int res, kgi_resources *r)
{
    memset(r, 0, sizeof *r);
    lua_getfield(L, cfg, "layout");
    snprintf(r->layout, sizeof r->layout, "%s", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "nn");
    lua_pop(L, 1);
    int ok = 1;
    r->pad = lua_getfield(L, cfg, "pad") == LUA_TNIL ? -1 : (int)lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!lua_istable(L, res))
        return;
    r->table = 1;
    r->threads = num_field(L, res, "threads", 1, &r->bad);
    r->smem_static = num_field(L, res, "smem_static", 1, &r->bad);
    r->smem_dynamic = num_field(L, res, "smem_dynamic", 1, &r->bad);
    r->loads_a = num_field(L, res, "loads_a", 0, &r->bad);
    r->loads_b = num_field(L, res, "loads_b", 0, &r->bad);
    r->flops_per_phase = num_field(L, res, "flops_per_phase", 0, &r->bad);
    r->outputs_per_thread = num_field(L, res, "outputs_per_thread", 1, &r->bad);
    lua_getfield(L, res, "cgma");
    r->has_cgma = !lua_isnil(L, -1);
    lua_pop(L, 1);
    r->cgma = num_field(L, res, "cgma", 0, &r->bad);
    if (lua_getfield(L, res, "block") == LUA_TTABLE) {
        for (int i = 0; i < 3; i++) {
            lua_geti(L, -1, i + 1);
            r->block[i] = lua_isinteger(L, -1) ? (unsigned)lua_tointeger(L, -1) : 1;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (lua_getfield(L, res, "tile") == LUA_TTABLE) {
        int t = lua_gettop(L);
        r->has_tile = 1;
        r->tile_m = num_field(L, t, "m", 1, &r->bad);
        r->tile_n = num_field(L, t, "n", 1, &r->bad);
        r->tile_k = num_field(L, t, "k", 1, &r->bad);
    }
    lua_pop(L, 1);
    r->registers = num_field(L, res, "registers", 0, &r->bad);
    r->min_blocks = num_field(L, res, "min_blocks", 0, &r->bad);
    r->stages = num_field(L, res, "stages", 0, &r->bad);
    r->async_copy = num_field(L, res, "async_copy", 0, &r->bad);
    r->copy_a = num_field(L, res, "copy_a", 0, &r->bad);
    r->copy_b = num_field(L, res, "copy_b", 0, &r->bad);
    r->smem_reads = num_field(L, res, "smem_reads", 0, &r->bad);
    r->smem_loads = num_field(L, res, "smem_loads", 0, &r->bad);
    r->raster = num_field(L, res, "raster", 0, &r->bad);
    r->kslices = num_field(L, res, "kslices", 0, &r->bad);
    r->atomic_width = num_field(L, res, "atomic_width", 0, &r->bad);
    r->persistent = num_field(L, res, "persistent", 0, &r->bad);
    r->spread_waves = num_field(L, res, "spread_waves", 0, &r->bad);
    r->pack = num_field(L, res, "pack", 0, &r->bad);
    str_field(L, res, "combine", r->combine, sizeof r->combine);
    str_field(L, res, "beta_pass", r->beta_pass, sizeof r->beta_pass);
}

kg_status kgi_host_resources(kgi_host *h, const char *tmpl, const char *config, kgi_resources *r, char *err,
                             size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    memset(r, 0, sizeof *r);
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK || (st = kgi_host_push_config(h, tmpl, config, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    int cfg = lua_gettop(L);
    lua_getfield(L, cfg - 1, "resources");
    lua_pushvalue(L, cfg);
    if ((st = kgi_host_pcall(h, 1, 1, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    kgi_read_resources(L, cfg, lua_gettop(L), r);
    lua_settop(L, top);
    return KG_OK;
}

/* ------------------------------------------------------------ accesses */

typedef struct walk_state {
    const kgi_access_walk *w;
    int n;
} walk_state;

/* A string field of the entry at `idx`; raises when it is missing. */
static const char *need_string(lua_State *L, int idx, int e, const char *field)
{
    lua_getfield(L, idx, field);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1); /* the entry still holds the string */
    if (!s)
        luaL_error(L, "accesses()[%d]: `%s` must be a string", e, field);
    return s;
}

/* An integer field in lo..hi; `dflt` >= 0 when it may be left out. */
static lua_Integer need_int(lua_State *L, int idx, int e, const char *name, const char *field, lua_Integer lo,
                            lua_Integer hi, lua_Integer dflt)
{
    int t = lua_getfield(L, idx, field);
    int ok = 1;
    lua_Integer v = t == LUA_TNIL && dflt >= 0 ? dflt : lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if ((t != LUA_TNIL || dflt < 0) && (!ok || t != LUA_TNUMBER))
        luaL_error(L, "accesses()[%d] '%s': `%s` must be an integer", e, name, field);
    if (v < lo || v > hi)
        luaL_error(L, "accesses()[%d] '%s': `%s` = %d is outside %d..%d", e, name, field, (int)v, (int)lo, (int)hi);
    return v;
}

/* Reads entry e (1-based, at the top of the stack) and walks its addresses. */
static void walk_entry(lua_State *L, const kgi_access_walk *w, int e)
{
    int idx = lua_gettop(L);
    if (!lua_istable(L, idx))
        luaL_error(L, "accesses()[%d] is not a table", e);
    kgi_access_decl d;
    const char *name = need_string(L, idx, e, "name");
    d.name = name;
    const char *space = need_string(L, idx, e, "space");
    const char *op = need_string(L, idx, e, "op");
    if (strcmp(space, "shared") != 0 && strcmp(space, "global") != 0)
        luaL_error(L, "accesses()[%d] '%s': space must be \"shared\" or \"global\", not \"%s\"", e, name, space);
    if (strcmp(op, "load") != 0 && strcmp(op, "store") != 0)
        luaL_error(L, "accesses()[%d] '%s': op must be \"load\" or \"store\", not \"%s\"", e, name, op);
    d.shared = space[0] == 's';
    d.store = op[0] == 's';
    lua_getfield(L, idx, "array"); /* stays on the stack while the entry is walked */
    d.array = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
    d.width = (int)need_int(L, idx, e, name, "width", 1, 32, -1);
    d.iters = (int)need_int(L, idx, e, name, "iters", 1, 4096, 1);
    lua_getfield(L, idx, "per_phase");
    int given = !lua_isnil(L, -1);
    lua_pop(L, 1);
    d.per_phase = given ? (int)need_int(L, idx, e, name, "per_phase", 0, 1 << 20, -1) : -1;
    if (lua_getfield(L, idx, "addr") != LUA_TFUNCTION)
        luaL_error(L, "accesses()[%d] '%s': `addr` must be a function", e, name);
    int fn = lua_gettop(L);
    w->entry(w->ud, e - 1, &d);

    long long addr[KGI_MAX_LANES];
    int nwarps = (w->threads + w->warp - 1) / w->warp;
    for (int it = 0; it < d.iters; it++) {
        for (int wi = 0; wi < nwarps; wi++) {
            for (int l = 0; l < w->warp; l++) {
                int tid = wi * w->warp + l;
                addr[l] = -1;
                if (tid >= w->threads)
                    continue;
                lua_pushvalue(L, fn);
                lua_pushinteger(L, tid);
                lua_pushinteger(L, it);
                lua_call(L, 2, 1);
                if (!lua_isnil(L, -1)) {
                    int ok = 0;
                    lua_Integer off = lua_tointegerx(L, -1, &ok);
                    if (!ok || off < 0 || off > (1LL << 52))
                        luaL_error(L, "accesses()[%d] '%s': addr(%d, %d) returned %s, not a float offset >= 0", e,
                                   name, tid, it, luaL_tolstring(L, -1, NULL));
                    addr[l] = (long long)off * 4;
                    /* Widths of 8 and 16 bytes are vector accesses: the GPU
                     * faults on a misaligned one, so the template is wrong. */
                    if ((d.width == 8 || d.width == 16) && addr[l] % d.width != 0)
                        luaL_error(L, "accesses()[%d] '%s': thread %d, repetition %d: byte address %I is not aligned "
                                   "to the access width %d", e, name, tid, it, (lua_Integer)addr[l], d.width);
                }
                lua_pop(L, 1);
            }
            w->request(w->ud, e - 1, it, wi, addr);
        }
    }
    lua_settop(L, idx);
}

/* Runs under kgi_host_pcall: (state, list). */
static int walk_all(lua_State *L)
{
    walk_state *ws = lua_touserdata(L, 1);
    for (int e = 0; e < ws->n; e++) {
        lua_geti(L, 2, e + 1);
        walk_entry(L, ws->w, e + 1);
        lua_pop(L, 1);
    }
    return 0;
}

kg_status kgi_host_accesses(kgi_host *h, const char *tmpl, const char *config, const kgi_access_walk *w,
                            int *missing, char *err, size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    *missing = 0;
    if (w->threads < 1 || w->warp < 1 || w->warp > KGI_MAX_LANES) {
        snprintf(err, errlen, "accesses: threads %d or warp size %d out of range", w->threads, w->warp);
        return KG_ERR_INVALID_ARG;
    }
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    if (lua_getfield(L, -1, "accesses") != LUA_TFUNCTION) {
        *missing = 1;
        snprintf(err, errlen, "template '%s' provides no accesses(cfg, shape), so its loads and stores cannot be "
                 "analysed (see templates/README.md)", tmpl ? tmpl : "matmul");
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    if ((st = kgi_host_push_config(h, tmpl, config, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    lua_createtable(L, 0, 6);
    const struct { const char *k; long long v; } dims[] = {{"M", w->m},     {"N", w->n},     {"K", w->k},
                                                           {"lda", w->lda}, {"ldb", w->ldb}, {"ldc", w->ldc}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
        lua_pushinteger(L, (lua_Integer)dims[i].v);
        lua_setfield(L, -2, dims[i].k);
    }
    if ((st = kgi_host_pcall(h, 2, 1, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "template '%s': accesses() must return a list", tmpl ? tmpl : "matmul");
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    walk_state ws = {w, (int)lua_rawlen(L, -1)};
    if (w->begin(w->ud, ws.n) != 0) {
        lua_settop(L, top);
        return KG_ERR_NOMEM;
    }
    lua_pushcfunction(L, walk_all);
    lua_pushlightuserdata(L, &ws);
    lua_pushvalue(L, -3);
    char why[2048];
    st = kgi_host_pcall(h, 2, 0, why, sizeof why);
    lua_settop(L, top);
    if (st != KG_OK) /* the message names the entry; say whose entry it is */
        snprintf(err, errlen, "template '%s': %s", tmpl ? tmpl : "matmul", why);
    return st;
}
