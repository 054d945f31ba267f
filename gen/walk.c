/*
 * walk.c -- a template prepared for walking its search space (see walk.h).
 *
 * A small Lua chunk (WALK below), run once per walk, converts values with
 * lib/params.lua and builds the tables: `vals` (the configuration, one
 * entry per parameter by position), `slots` (each parameter's converted
 * values), `pos` (name -> position) and `names`. The proxy `cfg` that
 * check() and resources() receive is an empty table whose metamethods are
 * C functions sharing one small userdata (`rec`): __index records the
 * parameter read in rec's bit set and returns its value from `vals`. In C,
 * a read costs two table lookups and no Lua code runs for it (the
 * instruction-count hook of gen/host.c traps every Lua instruction, so
 * Lua metamethods on a hot path cost twice). C sets values straight into
 * `vals`: no parsing, no text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "host_lua.h"
#include "walk.h"

/* What the proxy's metamethods share; a userdata, so that a template that
 * keeps cfg beyond the walk never reaches freed memory. */
typedef struct rec {
    uint64_t reads;             /* bit p: parameter p was read */
    uint64_t all;               /* every parameter's bit */
    int written;                /* `over` holds writes of this call */
    int whole;                  /* read all at once (pairs, a write): no order */
    int nseq;
    unsigned char seq[KGI_WALK_MAX_PARAMS]; /* the parameters in the order first read */
} rec;

struct kgi_walk {
    kgi_host *h;
    int nparams;
    rec *rec;
    int vals_ref, slots_ref, over_ref, cfg_ref, check_ref, res_ref, limits_ref, add_ref, rec_ref;
    int gc_mode;                /* the collector's mode before the walk */
};

/* ... = T. Returns vals, slots, pos, names, add. */
static const char WALK[] =
    "local T = ...\n"
    "local params = require 'lib.params'\n"
    "local vals, slots, pos, names = {}, {}, {}, {}\n"
    "for i, p in ipairs(T.params) do\n"
    "  names[i], pos[p.name], vals[i], slots[i] = p.name, i - 1, p.default, {}\n"
    "end\n"
    "local function add(i, text)\n"
    "  local v, err = params.convert(T.params[i], text)\n"
    "  if v == nil then return nil, err end\n"
    "  local s = slots[i]\n"
    "  s[#s + 1] = v\n"
    "  return #s - 1, tostring(v)\n"
    "end\n"
    "return vals, slots, pos, names, add\n";

/* Upvalues of the metamethods. */
enum { UP_REC = 1, UP_POS, UP_VALS, UP_OVER, UP_NAMES, UP_NEXT, UP_COUNT = UP_NEXT };

/* cfg[k]: a value written in this call, else the parameter's (recorded). */
static int proxy_index(lua_State *L)
{
    rec *r = lua_touserdata(L, lua_upvalueindex(UP_REC));
    if (r->written) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(UP_OVER)) != LUA_TNIL)
            return 1;
        lua_pop(L, 1);
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(UP_POS)) != LUA_TNUMBER)
        return 1; /* nil: no parameter */
    lua_Integer i = lua_tointeger(L, -1);
    if (!(r->reads >> i & 1)) {
        r->reads |= (uint64_t)1 << i;
        r->seq[r->nseq++] = (unsigned char)i;
    }
    lua_rawgeti(L, lua_upvalueindex(UP_VALS), i + 1);
    return 1;
}

/* cfg[k] = v: kept for this call; counts as reading everything. */
static int proxy_newindex(lua_State *L)
{
    rec *r = lua_touserdata(L, lua_upvalueindex(UP_REC));
    r->reads = r->all;
    r->whole = 1;
    r->written = 1;
    lua_settop(L, 3);
    lua_rawset(L, lua_upvalueindex(UP_OVER));
    return 0;
}

/* pairs(cfg): a copy of the configuration (and writes); reads everything. */
static int proxy_pairs(lua_State *L)
{
    rec *r = lua_touserdata(L, lua_upvalueindex(UP_REC));
    r->reads = r->all;
    r->whole = 1;
    lua_Integer n = luaL_len(L, lua_upvalueindex(UP_NAMES));
    lua_createtable(L, 0, (int)n);
    int t = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, lua_upvalueindex(UP_NAMES), i);
        lua_rawgeti(L, lua_upvalueindex(UP_VALS), i);
        lua_rawset(L, t);
    }
    if (r->written) {
        lua_pushnil(L);
        while (lua_next(L, lua_upvalueindex(UP_OVER))) {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, t);
        }
    }
    lua_pushvalue(L, lua_upvalueindex(UP_NEXT));
    lua_insert(L, t);
    lua_pushnil(L);
    return 3;
}

static int ref_of(lua_State *L, int idx)
{
    lua_pushvalue(L, idx);
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Builds the proxy from vals, slots, pos, names at base .. base + 3. */
static void make_proxy(lua_State *L, kgi_walk *w, int base, int nparams)
{
    w->rec = lua_newuserdatauv(L, sizeof *w->rec, 0);
    memset(w->rec, 0, sizeof *w->rec);
    w->rec->all = nparams >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << nparams) - 1;
    w->rec_ref = ref_of(L, -1);
    lua_newtable(L);
    w->over_ref = ref_of(L, -1);
    int over = lua_gettop(L), ud = over - 1;
    lua_newtable(L); /* cfg */
    lua_createtable(L, 0, 3);
    static const struct { const char *name; lua_CFunction fn; } mm[] = {
        {"__index", proxy_index}, {"__newindex", proxy_newindex}, {"__pairs", proxy_pairs}};
    for (size_t i = 0; i < sizeof mm / sizeof *mm; i++) {
        lua_pushvalue(L, ud);
        lua_pushvalue(L, base + 2); /* pos */
        lua_pushvalue(L, base);     /* vals */
        lua_pushvalue(L, over);
        lua_pushvalue(L, base + 3); /* names */
        lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
        lua_getfield(L, -1, "next");
        lua_remove(L, -2);
        lua_pushcclosure(L, mm[i].fn, UP_COUNT);
        lua_setfield(L, -2, mm[i].name);
    }
    lua_setmetatable(L, -2);
    w->cfg_ref = ref_of(L, -1);
}

kg_status kgi_walk_open(kgi_host *h, const char *tmpl, const kgi_limits *lim, kgi_walk **out, char *err,
                        size_t errlen)
{
    lua_State *L = kgi_host_lua(h);
    int top = lua_gettop(L);
    *out = NULL;
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    kgi_walk *w = calloc(1, sizeof *w);
    if (!w) {
        lua_settop(L, top);
        return KG_ERR_NOMEM;
    }
    w->h = h;
    int T = lua_gettop(L);
    lua_getfield(L, T, "params");
    lua_Integer np = luaL_len(L, -1);
    lua_pop(L, 1);
    if (np > KGI_WALK_MAX_PARAMS) {
        snprintf(err, errlen, "template '%s' has %d parameters; the tuner handles %d", tmpl, (int)np,
                 KGI_WALK_MAX_PARAMS);
        free(w);
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    w->nparams = (int)np;
    if (luaL_loadbufferx(L, WALK, sizeof WALK - 1, "=walk", "t") != LUA_OK) {
        snprintf(err, errlen, "walk: %s", lua_tostring(L, -1));
        lua_settop(L, top);
        free(w);
        return KG_ERR_TEMPLATE;
    }
    lua_pushvalue(L, T);
    if ((st = kgi_host_pcall(h, 1, 5, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        free(w);
        return st;
    }
    int base = T + 1;
    w->vals_ref = ref_of(L, base);
    w->slots_ref = ref_of(L, base + 1);
    w->add_ref = ref_of(L, base + 4);
    make_proxy(L, w, base, w->nparams);
    lua_getfield(L, T, "check");
    w->check_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_getfield(L, T, "resources");
    w->res_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    kgi_host_push_limits(h, lim);
    w->limits_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, top);
    /* a check() leaves only young garbage: the generational collector's case */
    w->gc_mode = lua_gc(L, LUA_GCGEN, 0, 0);
    *out = w;
    return KG_OK;
}

void kgi_walk_close(kgi_walk *w)
{
    if (!w)
        return;
    lua_State *L = kgi_host_lua(w->h);
    if (w->gc_mode == LUA_GCINC)
        lua_gc(L, LUA_GCINC, 0, 0, 0);
    int refs[] = {w->vals_ref, w->slots_ref, w->over_ref, w->cfg_ref, w->check_ref,
                  w->res_ref,  w->limits_ref, w->add_ref, w->rec_ref};
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++)
        if (refs[i] > 0)
            luaL_unref(L, LUA_REGISTRYINDEX, refs[i]);
    free(w);
}

int kgi_walk_add_value(kgi_walk *w, int p, const char *text, char *canon, size_t canon_len, char *err,
                       size_t errlen)
{
    lua_State *L = kgi_host_lua(w->h);
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->add_ref);
    lua_pushinteger(L, p + 1);
    lua_pushstring(L, text);
    if (kgi_host_pcall(w->h, 2, 2, err, errlen) != KG_OK) {
        lua_settop(L, top);
        return -1;
    }
    if (lua_isnil(L, -2)) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "bad value");
        lua_settop(L, top);
        return -1;
    }
    int slot = (int)lua_tointeger(L, -2);
    snprintf(canon, canon_len, "%s", lua_tostring(L, -1));
    lua_settop(L, top);
    return slot;
}

void kgi_walk_set(kgi_walk *w, int p, int slot)
{
    lua_State *L = kgi_host_lua(w->h);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->vals_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->slots_ref);
    lua_rawgeti(L, -1, p + 1);
    lua_rawgeti(L, -1, slot + 1);
    lua_rawseti(L, -4, p + 1);
    lua_pop(L, 3);
}

/* Forgets the writes of the last call (they hold for one call only). */
static void forget_writes(kgi_walk *w)
{
    if (!w->rec->written)
        return;
    lua_State *L = kgi_host_lua(w->h);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->over_ref);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, -4);
    }
    lua_pop(L, 1);
    w->rec->written = 0;
}

/* resources() on the current configuration, read into res; adds its reads
 * (and those of the layout and pad kgi_read_resources reads) to rec's. */
static int call_resources(kgi_walk *w, kgi_resources *res, char *why, size_t whylen)
{
    lua_State *L = kgi_host_lua(w->h);
    int top = lua_gettop(L);
    forget_writes(w);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->cfg_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->res_ref);
    lua_pushvalue(L, top + 1);
    if (kgi_host_pcall(w->h, 1, 1, why, whylen) != KG_OK) {
        lua_settop(L, top);
        return -1;
    }
    kgi_read_resources(L, top + 1, top + 2, res);
    lua_settop(L, top);
    return 0;
}

int kgi_walk_check(kgi_walk *w, uint64_t *reads, kgi_resources *res, char *why, size_t whylen)
{
    lua_State *L = kgi_host_lua(w->h);
    int top = lua_gettop(L);
    forget_writes(w);
    w->rec->reads = 0, w->rec->nseq = 0, w->rec->whole = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->check_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->cfg_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->limits_ref);
    if (kgi_host_pcall(w->h, 2, 2, why, whylen) != KG_OK) {
        lua_settop(L, top);
        return -1;
    }
    int ok = lua_toboolean(L, top + 1);
    if (!ok) {
        const char *s = lua_tostring(L, top + 2);
        snprintf(why, whylen, "%s", s ? s : "configuration rejected by the template's check()");
    }
    lua_settop(L, top);
    if (ok && res && call_resources(w, res, why, whylen) != 0)
        return -1;
    *reads = w->rec->reads;
    return ok;
}

int kgi_walk_resources(kgi_walk *w, uint64_t *reads, kgi_resources *res, char *why, size_t whylen)
{
    w->rec->reads = 0, w->rec->nseq = 0, w->rec->whole = 0;
    if (call_resources(w, res, why, whylen) != 0)
        return -1;
    *reads = w->rec->reads;
    return 0;
}

int kgi_walk_read_order(const kgi_walk *w, const unsigned char **seq)
{
    *seq = w->rec->seq;
    return w->rec->whole ? -1 : w->rec->nseq;
}
