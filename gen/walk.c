/*
 * walk.c -- a template prepared for walking its search space (see walk.h).
 *
 * The Lua side is one small chunk (WALK below) run once per walk: it holds
 * the configuration's values in a table `vals`, each parameter's converted
 * values in `slots`, and a proxy `cfg` whose __index records the parameters
 * read. C sets values straight into `vals` (no parsing, no text) and calls
 * the chunk's check and resources functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "host_lua.h"
#include "walk.h"

struct kgi_walk {
    kgi_host *h;
    int nparams;
    char names[KGI_WALK_MAX_PARAMS][32];
    int vals_ref, slots_ref, check_ref, add_ref;
    int gc_mode;                /* the collector's mode before the walk */
};

/* ... = T, limits. Returns vals, slots, check, add. check(want) returns
 * ok, why, reads and, for a pass with `want`, resources()'s result and the
 * proxy (C reads both with kgi_read_resources; the layout and pad it reads
 * of the configuration are read here first, so that they count). */
static const char WALK[] =
    "local T, limits = ...\n"
    "local params = require 'lib.params'\n"
    "local names, pos, vals, slots = {}, {}, {}, {}\n"
    "for i, p in ipairs(T.params) do\n"
    "  names[i], pos[p.name], vals[p.name], slots[i] = p.name, i - 1, p.default, {}\n"
    "end\n"
    "local ALL = #names >= 64 and -1 or (1 << #names) - 1\n"
    "local reads, over = 0, nil\n"
    "local cfg = setmetatable({}, {\n"
    "  __index = function(_, k)\n"
    "    if over then local v = over[k]; if v ~= nil then return v end end\n"
    "    local i = pos[k]\n"
    "    if i then reads = reads | (1 << i) end\n"
    "    return vals[k]\n"
    "  end,\n"
    "  __newindex = function(_, k, v) reads = ALL; over = over or {}; over[k] = v end,\n"
    "  __pairs = function()\n"
    "    reads = ALL\n"
    "    local t = {}\n"
    "    for k, v in next, vals do t[k] = v end\n"
    "    if over then for k, v in next, over do t[k] = v end end\n"
    "    return next, t, nil\n"
    "  end,\n"
    "})\n"
    "local check, resources = T.check, T.resources\n"
    "local function walk_check(want)\n"
    "  reads, over = 0, nil\n"
    "  local ok, why = check(cfg, limits)\n"
    "  if not ok or not want then return ok, why, reads end\n"
    "  over = nil\n"
    "  local res = resources(cfg)\n"
    "  local _ = cfg.layout, cfg.pad\n"
    "  return ok, why, reads, res, cfg\n"
    "end\n"
    "local function add(i, text)\n"
    "  local v, err = params.convert(T.params[i], text)\n"
    "  if v == nil then return nil, err end\n"
    "  local s = slots[i]\n"
    "  s[#s + 1] = v\n"
    "  return #s - 1, tostring(v)\n"
    "end\n"
    "return vals, slots, walk_check, add\n";

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
    lua_getfield(L, -1, "params");
    lua_Integer np = luaL_len(L, -1);
    if (np > KGI_WALK_MAX_PARAMS) {
        snprintf(err, errlen, "template '%s' has %d parameters; the tuner handles %d", tmpl, (int)np,
                 KGI_WALK_MAX_PARAMS);
        free(w);
        lua_settop(L, top);
        return KG_ERR_TEMPLATE;
    }
    for (lua_Integer i = 1; i <= np; i++) {
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "name");
        snprintf(w->names[i - 1], sizeof w->names[0], "%s", lua_tostring(L, -1));
        lua_pop(L, 2);
    }
    w->nparams = (int)np;
    lua_pop(L, 1);
    if (luaL_loadbufferx(L, WALK, sizeof WALK - 1, "=walk", "t") != LUA_OK) {
        snprintf(err, errlen, "walk: %s", lua_tostring(L, -1));
        lua_settop(L, top);
        kgi_walk_close(w);
        return KG_ERR_TEMPLATE;
    }
    lua_pushvalue(L, -2);
    kgi_host_push_limits(h, lim);
    if ((st = kgi_host_pcall(h, 2, 4, err, errlen)) != KG_OK) {
        lua_settop(L, top);
        kgi_walk_close(w);
        return st;
    }
    w->add_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    w->check_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    w->slots_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    w->vals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
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
    int refs[] = {w->vals_ref, w->slots_ref, w->check_ref, w->add_ref};
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
    lua_pushstring(L, w->names[p]);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->slots_ref);
    lua_rawgeti(L, -1, p + 1);
    lua_rawgeti(L, -1, slot + 1);
    lua_replace(L, -3);
    lua_pop(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

int kgi_walk_check(kgi_walk *w, uint64_t *reads, kgi_resources *res, char *why, size_t whylen)
{
    lua_State *L = kgi_host_lua(w->h);
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->check_ref);
    lua_pushboolean(L, res != NULL);
    if (kgi_host_pcall(w->h, 1, 5, why, whylen) != KG_OK) {
        lua_settop(L, top);
        return -1;
    }
    int base = top + 1;
    *reads = (uint64_t)lua_tointeger(L, base + 2);
    int ok = lua_toboolean(L, base);
    if (!ok) {
        const char *s = lua_tostring(L, base + 1);
        snprintf(why, whylen, "%s", s ? s : "configuration rejected by the template's check()");
    } else if (res) {
        kgi_read_resources(L, base + 4, base + 3, res);
    }
    lua_settop(L, top);
    return ok;
}
