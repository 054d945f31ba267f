/*
 * explain_access.c -- evaluates a template's accesses(cfg, shape) warp by
 * warp: for every load and store statement, every warp of block (0, 0) and
 * every unrolled repetition, the byte address of each lane, turned into
 * bank-conflict wavefronts (shared) or sectors (global) by explain_model.c.
 *
 * The addresses are the template's own description of its code (the
 * contract in templates/README.md), evaluated rather than guessed: a
 * transposed store shows its conflicts because its addresses collide.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "explain.h"

#define MAX_LANES 64

typedef struct eval_state {
    const kgc_shape *shape;
    int threads, warp, tile_k;
    kgc_access *out;
    int n;
} eval_state;

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

/* Folds one warp request into the statement's totals and keeps the worst. */
static void add_shared(kgc_access *a, const kgc_bank *b, int warp, int it)
{
    a->requests++;
    a->wavefronts += b->wavefronts;
    a->ideal += b->ideal;
    if (a->requests == 1 || (long long)b->wavefronts * a->worst.ideal > (long long)a->worst.wavefronts * b->ideal) {
        a->worst = *b;
        a->worst_warp = warp;
        a->worst_iter = it;
    }
}

static void add_global(kgc_access *a, const kgc_coal *c, int warp, int it)
{
    a->requests++;
    a->requested += c->requested;
    a->unique += c->unique;
    a->sectors += c->sectors;
    a->ideal_sectors += c->ideal_sectors;
    a->lines += c->lines;
    long long lhs = (long long)c->sectors * a->gworst.ideal_sectors, rhs = (long long)a->gworst.sectors * c->ideal_sectors;
    if (a->requests == 1 || lhs > rhs || (lhs == rhs && c->sectors > a->gworst.sectors)) {
        a->gworst = *c;
        a->gworst_warp = warp;
        a->gworst_iter = it;
    }
}

/* Reads entry e (at the top of the stack) and evaluates its addresses. */
static void eval_entry(lua_State *L, eval_state *st, int e, kgc_access *a)
{
    int idx = lua_gettop(L);
    if (!lua_istable(L, idx))
        luaL_error(L, "accesses()[%d] is not a table", e);
    const char *name = need_string(L, idx, e, "name");
    snprintf(a->name, sizeof a->name, "%s", name);
    const char *space = need_string(L, idx, e, "space");
    const char *op = need_string(L, idx, e, "op");
    if (strcmp(space, "shared") != 0 && strcmp(space, "global") != 0)
        luaL_error(L, "accesses()[%d] '%s': space must be \"shared\" or \"global\", not \"%s\"", e, name, space);
    if (strcmp(op, "load") != 0 && strcmp(op, "store") != 0)
        luaL_error(L, "accesses()[%d] '%s': op must be \"load\" or \"store\", not \"%s\"", e, name, op);
    a->shared = space[0] == 's';
    a->store = op[0] == 's';
    lua_getfield(L, idx, "array");
    snprintf(a->array, sizeof a->array, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 1);
    a->width = (int)need_int(L, idx, e, name, "width", 1, 32, -1);
    a->iters = (int)need_int(L, idx, e, name, "iters", 1, 4096, 1);
    lua_getfield(L, idx, "per_phase");
    a->per_phase_given = !lua_isnil(L, -1);
    lua_pop(L, 1);
    /* Unless the template says otherwise, a shared load runs once per k step
     * of the tile (the inner product loop) and a shared store once a phase. */
    int dflt = a->shared ? (a->store ? 1 : st->tile_k) : 1;
    a->per_phase = (int)need_int(L, idx, e, name, "per_phase", 0, 1 << 20, dflt);
    if (lua_getfield(L, idx, "addr") != LUA_TFUNCTION)
        luaL_error(L, "accesses()[%d] '%s': `addr` must be a function", e, name);
    int fn = lua_gettop(L);

    long long addr[MAX_LANES];
    int nwarps = (st->threads + st->warp - 1) / st->warp;
    for (int it = 0; it < a->iters; it++) {
        for (int w = 0; w < nwarps; w++) {
            for (int l = 0; l < st->warp; l++) {
                int tid = w * st->warp + l;
                addr[l] = -1;
                if (tid >= st->threads)
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
                    if ((a->width == 8 || a->width == 16) && addr[l] % a->width != 0)
                        luaL_error(L, "accesses()[%d] '%s': thread %d, repetition %d: byte address %I is not aligned "
                                   "to the access width %d", e, name, tid, it, (lua_Integer)addr[l], a->width);
                }
                lua_pop(L, 1);
            }
            if (a->shared) {
                kgc_bank b;
                kgc_bank_request(addr, st->warp, a->width, w * st->warp, &b);
                if (b.active)
                    add_shared(a, &b, w, it);
            } else {
                kgc_coal c;
                kgc_coal_request(addr, st->warp, a->width, &c);
                if (c.active)
                    add_global(a, &c, w, it);
            }
        }
    }
    lua_settop(L, idx);
}

/* Runs under kgi_host_pcall: (state, list). */
static int eval_all(lua_State *L)
{
    eval_state *st = lua_touserdata(L, 1);
    for (int e = 0; e < st->n; e++) {
        lua_geti(L, 2, e + 1);
        eval_entry(L, st, e + 1, &st->out[e]);
        lua_pop(L, 1);
    }
    return 0;
}

kg_status kgc_eval_accesses(kgi_host *h, const char *tmpl, const char *config, const kgc_shape *shape,
                            int threads, int warp_size, int tile_k, kgc_access_set *out, int *missing,
                            char *err, size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    memset(out, 0, sizeof *out);
    *missing = 0;
    snprintf(out->config, sizeof out->config, "%s", config ? config : "");
    if (threads < 1 || warp_size < 1 || warp_size > MAX_LANES || tile_k < 1) {
        snprintf(err, errlen, "accesses: threads %d, warp size %d or tile depth %d out of range", threads, warp_size,
                 tile_k);
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
    const struct { const char *k; long long v; } dims[] = {{"M", shape->m},     {"N", shape->n},
                                                           {"K", shape->k},     {"lda", shape->lda},
                                                           {"ldb", shape->ldb}, {"ldc", shape->ldc}};
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
    int n = (int)lua_rawlen(L, -1);
    eval_state es = {shape, threads, warp_size, tile_k, NULL, n};
    if (n > 0 && !(es.out = calloc((size_t)n, sizeof *es.out))) {
        lua_settop(L, top);
        return KG_ERR_NOMEM;
    }
    lua_pushcfunction(L, eval_all);
    lua_pushlightuserdata(L, &es);
    lua_pushvalue(L, -3);
    char why[2048];
    st = kgi_host_pcall(h, 2, 0, why, sizeof why);
    lua_settop(L, top);
    if (st != KG_OK) {
        /* the message names the entry; say whose entry it is */
        snprintf(err, errlen, "template '%s': %s", tmpl ? tmpl : "matmul", why);
        free(es.out);
        return st;
    }
    out->v = es.out;
    out->n = n;
    return KG_OK;
}

static lua_Integer opt_int(lua_State *L, int idx, const char *k, lua_Integer dflt, int *bad)
{
    int t = lua_getfield(L, idx, k);
    int ok = 1;
    lua_Integer v = t == LUA_TNIL ? dflt : lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || v < 0)
        *bad = 1;
    return v;
}

static double opt_num(lua_State *L, int idx, const char *k, double dflt, int *bad)
{
    int t = lua_getfield(L, idx, k);
    int ok = 1;
    double v = t == LUA_TNIL ? dflt : lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || v < 0)
        *bad = 1;
    return v;
}

/* Calls the template's resources(cfg) and reads the configuration's layout
 * and padding: everything explain knows before compiling. */
kg_status kgc_read_resources(kgi_host *h, const char *tmpl, const char *config, kgc_resources *r, char *err,
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
    lua_getfield(L, cfg, "layout");
    snprintf(r->layout, sizeof r->layout, "%s", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "nn");
    lua_pop(L, 1);
    int bad = 0;
    r->pad = (int)opt_int(L, cfg, "pad", -1, &bad);
    lua_getfield(L, cfg - 1, "resources");
    lua_pushvalue(L, cfg);
    if ((st = kgi_host_pcall(h, 1, 1, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        return st;
    }
    int res = lua_gettop(L);
    if (!lua_istable(L, res)) {
        snprintf(err, errlen, "template '%s': resources() must return a table", tmpl);
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    bad = 0;
    r->threads = (int)opt_int(L, res, "threads", 0, &bad);
    r->smem_static = (size_t)opt_int(L, res, "smem_static", 0, &bad);
    r->smem_dynamic = (size_t)opt_int(L, res, "smem_dynamic", 0, &bad);
    r->loads_a = opt_num(L, res, "loads_a", 0, &bad);
    r->loads_b = opt_num(L, res, "loads_b", 0, &bad);
    r->flops_per_phase = opt_num(L, res, "flops_per_phase", 0, &bad);
    r->outputs_per_thread = (int)opt_int(L, res, "outputs_per_thread", 0, &bad);
    double loads = r->loads_a + r->loads_b;
    r->cgma = opt_num(L, res, "cgma", loads > 0 ? r->flops_per_phase / loads : 0, &bad);
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
        r->tile_m = (int)opt_int(L, t, "m", 0, &bad);
        r->tile_n = (int)opt_int(L, t, "n", 0, &bad);
        r->tile_k = (int)opt_int(L, t, "k", 0, &bad);
    }
    lua_settop(L, top);
    if (bad || r->threads < 1 || r->tile_m < 1 || r->tile_n < 1 || r->tile_k < 1 || loads <= 0 ||
        r->flops_per_phase <= 0) {
        snprintf(err, errlen,
                 "template '%s': resources() must give threads, tile = {m, n, k}, loads_a, loads_b and "
                 "flops_per_phase as positive numbers (see templates/README.md)", tmpl);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

void kgc_access_set_free(kgc_access_set *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
