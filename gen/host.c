/*
 * host.c -- the embedded Lua host: loads templates, parses configurations,
 * calls check() and render().
 *
 * Templates run in a Lua state with only the pure libraries (base without
 * file loading, string, table, math, utf8): a template computes text, it
 * does no I/O. `require` is ours: it searches the template path (the user's
 * directories, `.` in a module name becoming `/`) and then the templates
 * compiled into the binary. Chunk names are file paths, so a template's
 * error reads `templates/matmul.lua:42: message`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "config.h"
#include "embedded.h"
#include "host_lua.h"
#include "pattern.h"

#ifndef KGEN_VERSION
#define KGEN_VERSION KG_VERSION
#endif

struct kgi_host {
    lua_State *L;
    char *path;     /* colon-separated directories, or NULL */
    int traceback;  /* append a Lua traceback to template errors */
    size_t mem;     /* bytes the Lua state holds */
    long ticks;     /* instruction-count hook calls since the last pcall */
    unsigned long pattern_steps; /* pattern-matching steps not yet counted as a tick */
};

/* A template that loops or grows without bound fails instead of hanging
 * or exhausting the process: limits far above any real template's needs.
 * The instruction-count hook bounds Lua code; two things run without it and
 * are closed off: pattern matching, which runs in C (gen/pattern.c counts
 * its steps into the same budget), and __gc finalizers, which Lua runs with
 * hooks off (during any allocation, and at lua_close) -- a template may not
 * set one (SANDBOX's setmetatable): templates hold no resources to release. */
#define MEM_LIMIT ((size_t)512 << 20)
#define TICK_INSTRUCTIONS 1000000
#define TICK_LIMIT 2000 /* 2e9 instructions, several seconds */

static const char ENV_KEY[] = "kgen.env";

/* Run once per state: makes the libraries read-only, closes the ways to
 * load bytecode, and returns the read-only view of the globals that every
 * module's own environment inherits from. */
static const char SANDBOX[] =
    "local G = _G\n"
    "local function readonly(t, what)\n"
    "  return setmetatable({}, { __index = t, __metatable = false,\n"
    "    __newindex = function(_, k) error(what .. ' is read-only (assignment to ' .. tostring(k) .. ')', 2) end })\n"
    "end\n"
    "string.dump = nil\n"
    "local env = nil\n"
    "local real_load = load\n"
    "G.load = function(chunk, name, mode, e) return real_load(chunk, name, 't', e or setmetatable({}, { __index = env })) end\n"
    "G.rawset = nil\n"
    "local real_setmetatable = setmetatable\n"
    "G.setmetatable = function(t, mt)\n"
    "  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then\n"
    "    error('a template may not set a __gc finalizer (finalizers run outside the instruction limit)', 2)\n"
    "  end\n"
    "  return real_setmetatable(t, mt)\n"
    "end\n"
    "for _, lib in ipairs({ 'string', 'table', 'math', 'utf8' }) do G[lib] = readonly(G[lib], lib) end\n"
    "local smt = getmetatable('')\n"
    "smt.__index = G.string\n"
    "smt.__metatable = false\n"
    "env = readonly(G, 'the global environment')\n"
    "return env, readonly\n";

static const char LOADED_KEY[] = "kgen.loaded";
static const char HOST_KEY[] = "kgen.host";

static kgi_host *host_of(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY);
    kgi_host *h = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return h;
}

static int valid_module_name(const char *name)
{
    if (!name[0] || name[0] == '.')
        return 0;
    for (const char *p = name; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              *p == '_' || (*p == '.' && p[1] != '.' && p[1] != '\0')))
            return 0;
    return 1;
}

int kgi_template_name_valid(const char *name)
{
    return valid_module_name(name) && strncmp(name, "lib.", 4) != 0;
}

/* Gives the function at the top of the stack a fresh environment whose
 * reads fall through to the read-only globals: a module's globals stay its
 * own. */
static void own_environment(lua_State *L)
{
    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, ENV_KEY);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
}

/* The file for module `name` in the template path: 1 with its name in
 * file, 0 when the path has none. */
static int path_file(const kgi_host *h, const char *name, char *file, size_t len)
{
    char rel[256];
    size_t n = strlen(name);
    if (n + 5 > sizeof rel)
        return 0;
    for (size_t i = 0; i <= n; i++)
        rel[i] = name[i] == '.' ? '/' : name[i];
    strcat(rel, ".lua");
    for (const char *p = h->path; p && *p;) {
        size_t dl = strcspn(p, ":");
        FILE *f = dl > 0 && (size_t)snprintf(file, len, "%.*s/%s", (int)dl, p, rel) < len ? fopen(file, "rb") : NULL;
        if (f) {
            fclose(f);
            return 1;
        }
        p += dl;
        if (*p == ':')
            p++;
    }
    return 0;
}

/* Loads the chunk for `name` onto the stack; returns 0 when not found. */
static int find_module(lua_State *L, kgi_host *h, const char *name)
{
    char file[4096];
    if (path_file(h, name, file, sizeof file)) {
        if (luaL_loadfilex(L, file, "t") != LUA_OK)
            lua_error(L);
        own_environment(L);
        return 1;
    }
    for (const kgi_embedded *e = kgi_embedded_files; e->module; e++) {
        if (strcmp(e->module, name) == 0) {
            char chunk[300];
            snprintf(chunk, sizeof chunk, "@%s", e->path);
            if (luaL_loadbufferx(L, e->text, e->len, chunk, "t") != LUA_OK)
                lua_error(L);
            own_environment(L);
            return 1;
        }
    }
    return 0;
}

static int probe_module(lua_State *L)
{
    kgi_host *h = lua_touserdata(L, 1);
    lua_pushboolean(L, find_module(L, h, lua_tostring(L, 2)));
    return 1;
}

/* Whether `name` is in the template path or embedded (without loading it). */
static int module_exists(kgi_host *h, const char *name)
{
    lua_State *L = h->L;
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
    int loaded = lua_getfield(L, -1, name) != LUA_TNIL;
    lua_settop(L, top);
    if (loaded)
        return 1;
    /* find_module raises on a syntax error: that still means "exists". */
    lua_pushcfunction(L, probe_module);
    lua_pushlightuserdata(L, h);
    lua_pushstring(L, name);
    int rc = lua_pcall(L, 2, 1, 0);
    int found = rc != LUA_OK || lua_toboolean(L, -1);
    lua_settop(L, top);
    return found;
}

/* require(name): our module loader, cached per host in the registry. */
static int l_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (!valid_module_name(name))
        return luaL_error(L, "invalid module name '%s'", name);
    lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
    lua_getfield(L, -1, name);
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    if (!find_module(L, host_of(L), name))
        return luaL_error(L, "module '%s' not found (searched the template path and the embedded templates)", name);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    /* Modules are shared by every template: hand out read-only views. */
    if (lua_istable(L, -1)) {
        lua_getfield(L, LUA_REGISTRYINDEX, "kgen.readonly");
        lua_insert(L, -2);
        lua_pushfstring(L, "module '%s'", name);
        lua_call(L, 2, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    kgi_host *h = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        h->mem -= old;
        return NULL;
    }
    if (nsize > old && h->mem - old + nsize > MEM_LIMIT)
        return NULL; /* Lua raises "not enough memory" in the template */
    void *p = realloc(ptr, nsize);
    if (p)
        h->mem = h->mem - old + nsize;
    return p;
}

static void count_tick(lua_State *L, kgi_host *h)
{
    if (++h->ticks > TICK_LIMIT)
        luaL_error(L, "template exceeded the instruction limit (%d million instructions)",
                   TICK_LIMIT * (TICK_INSTRUCTIONS / 1000000));
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    count_tick(L, host_of(L));
}

void kgi_host_charge(lua_State *L, unsigned long steps)
{
    kgi_host *h = host_of(L);
    h->pattern_steps += steps;
    while (h->pattern_steps >= TICK_INSTRUCTIONS) {
        h->pattern_steps -= TICK_INSTRUCTIONS;
        count_tick(L, h);
    }
}

kgi_host *kgi_host_new(void)
{
    kgi_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->L = lua_newstate(limited_alloc, h);
    if (!h->L) {
        free(h);
        return NULL;
    }
    lua_State *L = h->L;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, TICK_INSTRUCTIONS);
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL},
    };
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        if (lib->func == luaopen_string)
            kgi_pattern_install(L);
        lua_pop(L, 1);
    }
    /* No file access from templates. */
    static const char *const removed[] = {"dofile", "loadfile", "collectgarbage", "print", NULL};
    for (const char *const *r = removed; *r; r++) {
        lua_pushnil(L);
        lua_setglobal(L, *r);
    }
    lua_pushcfunction(L, l_require);
    lua_setglobal(L, "require");
    if (luaL_loadbufferx(L, SANDBOX, sizeof SANDBOX - 1, "=sandbox", "t") != LUA_OK ||
        lua_pcall(L, 0, 2, 0) != LUA_OK) {
        lua_close(L);
        free(h);
        return NULL;
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "kgen.readonly");
    lua_setfield(L, LUA_REGISTRYINDEX, ENV_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
    lua_pushlightuserdata(L, h);
    lua_setfield(L, LUA_REGISTRYINDEX, HOST_KEY);
    const char *v = getenv("KGEN_VERBOSE");
    h->traceback = v && v[0] && strcmp(v, "0") != 0;
    return h;
}

void kgi_host_free(kgi_host *h)
{
    if (!h)
        return;
    lua_close(h->L);
    free(h->path);
    free(h);
}

int kgi_host_set_path(kgi_host *h, const char *path)
{
    char *copy = NULL;
    if (path && path[0] && !(copy = strdup(path)))
        return -1;
    free(h->path);
    h->path = copy;
    /* Modules already loaded may come from the old path: forget them. */
    lua_newtable(h->L);
    lua_setfield(h->L, LUA_REGISTRYINDEX, LOADED_KEY);
    return 0;
}

lua_State *kgi_host_lua(kgi_host *h) { return h->L; }

/* Message handler: the error as `file:line: message`, and with
 * KGEN_VERBOSE=1 the Lua traceback under it. */
static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg = luaL_tolstring(L, 1, NULL);
    if (host_of(L)->traceback)
        luaL_traceback(L, L, msg, 1);
    else
        lua_pushstring(L, msg);
    return 1;
}

kg_status kgi_host_pcall(kgi_host *h, int nargs, int nresults, char *err, size_t errlen)
{
    lua_State *L = h->L;
    int base = lua_gettop(L) - nargs;
    h->ticks = 0;
    h->pattern_steps = 0;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    int rc = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    if (rc != LUA_OK) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
        lua_pop(L, 1);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

/* Calls require(name) under the traceback handler. */
static kg_status require_module(kgi_host *h, const char *name, char *err, size_t errlen)
{
    lua_pushcfunction(h->L, l_require);
    lua_pushstring(h->L, name);
    return kgi_host_pcall(h, 1, 1, err, errlen);
}

kg_status kgi_host_push_template(kgi_host *h, const char *tmpl, char *err, size_t errlen)
{
    lua_State *L = h->L;
    if (!tmpl)
        tmpl = "matmul";
    if (!valid_module_name(tmpl) || strncmp(tmpl, "lib.", 4) == 0) {
        snprintf(err, errlen, "invalid template name '%s' (letters, digits, '_' and single dots)", tmpl);
        return KG_ERR_CONFIG;
    }
    if (!module_exists(h, tmpl)) {
        size_t n = (size_t)snprintf(err, errlen, "unknown template '%s' (available:", tmpl);
        for (const kgi_embedded *e = kgi_embedded_files; e->module && n < errlen; e++)
            if (strncmp(e->module, "lib.", 4) != 0)
                n += (size_t)snprintf(err + n, errlen - n, " %s", e->module);
        if (n < errlen)
            snprintf(err + n, errlen - n, "%s)", h->path ? ", or a .lua file in the template path" : "");
        return KG_ERR_CONFIG;
    }
    kg_status st = require_module(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    static const char *const fields[] = {"params", "check", "resources", "render"};
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        snprintf(err, errlen, "template '%s' does not return a table", tmpl);
        return KG_ERR_TEMPLATE;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        int t = lua_getfield(L, -1, fields[i]);
        lua_pop(L, 1);
        int want = i == 0 ? LUA_TTABLE : LUA_TFUNCTION;
        if (t != want) {
            lua_pop(L, 1);
            snprintf(err, errlen, "template '%s' lacks its '%s' %s", tmpl, fields[i],
                     want == LUA_TTABLE ? "table" : "function");
            return KG_ERR_TEMPLATE;
        }
    }
    /* params.validate(T.params): the C side walks the list unchecked later */
    char why[1024];
    if ((st = require_module(h, "lib.params", why, sizeof why)) == KG_OK) {
        lua_getfield(L, -1, "validate");
        lua_getfield(L, -3, "params");
        lua_remove(L, -3);
        st = kgi_host_pcall(h, 1, 0, why, sizeof why);
    }
    if (st != KG_OK) {
        lua_pop(L, 1);
        snprintf(err, errlen, "template '%s': %s", tmpl, why);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

/* With the template at the top: parses config; leaves [tmpl, cfg]. */
static kg_status parse_config(kgi_host *h, const char *config, char *err, size_t errlen)
{
    lua_State *L = h->L;
    kg_status st = require_module(h, "lib.params", err, errlen);
    if (st != KG_OK)
        return st;
    /* given, msg = params.parse_given(T.params, config) */
    lua_getfield(L, -1, "parse_given");
    lua_getfield(L, -3, "params");
    lua_pushstring(L, config ? config : "");
    if ((st = kgi_host_pcall(h, 2, 2, err, errlen)) != KG_OK) {
        lua_pop(L, 1);
        return st;
    }
    if (lua_isnil(L, -2)) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1));
        lua_pop(L, 3);
        return KG_ERR_CONFIG;
    }
    lua_pop(L, 1);
    /* cfg = params.complete(T.params, given) */
    lua_getfield(L, -2, "complete");
    lua_getfield(L, -4, "params");
    lua_pushvalue(L, -3);
    if ((st = kgi_host_pcall(h, 2, 1, err, errlen)) != KG_OK) {
        lua_pop(L, 2);
        return st;
    }
    lua_replace(L, -3); /* [tmpl, cfg, given] */
    lua_pop(L, 1);
    return KG_OK;
}

kg_status kgi_host_push_config(kgi_host *h, const char *tmpl, const char *config, char *err, size_t errlen)
{
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        return st;
    if ((st = parse_config(h, config, err, errlen)) != KG_OK) {
        lua_pop(h->L, 1);
        return st;
    }
    lua_remove(h->L, -2);
    return KG_OK;
}

kg_status kgi_host_parse(kgi_host *h, const char *tmpl, const char *config, char *err, size_t errlen)
{
    int top = lua_gettop(h->L);
    kg_status st = kgi_host_push_config(h, tmpl, config, err, errlen);
    lua_settop(h->L, top);
    return st;
}

void kgi_host_push_limits(kgi_host *h, const kgi_limits *lim)
{
    lua_State *L = h->L;
    lua_createtable(L, 0, 16);
    lua_pushstring(L, lim->name); lua_setfield(L, -2, "name");
    lua_pushinteger(L, lim->sm); lua_setfield(L, -2, "sm");
#define INT_FIELD(f) (lua_pushinteger(L, (lua_Integer)lim->f), lua_setfield(L, -2, #f))
    INT_FIELD(max_threads_per_block);
    INT_FIELD(max_threads_per_sm);
    INT_FIELD(max_blocks_per_sm);
    INT_FIELD(warp_size);
    INT_FIELD(regs_per_sm);
    INT_FIELD(regs_per_block);
    INT_FIELD(max_regs_per_thread);
    INT_FIELD(smem_per_sm);
    INT_FIELD(smem_per_block);
    INT_FIELD(smem_per_block_optin);
#undef INT_FIELD
}

/* With [tmpl, cfg] on the stack: canonical text of cfg into canon. */
static kg_status canonical(kgi_host *h, char *canon, size_t len, char *err, size_t errlen)
{
    lua_State *L = h->L;
    kg_status st = require_module(h, "lib.params", err, errlen);
    if (st != KG_OK)
        return st;
    lua_getfield(L, -1, "canonical");
    lua_getfield(L, -4, "params");
    lua_pushvalue(L, -4);
    if ((st = kgi_host_pcall(h, 2, 1, err, errlen)) != KG_OK) {
        lua_pop(L, 1);
        return st;
    }
    snprintf(canon, len, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 2);
    return KG_OK;
}

/* With [tmpl, cfg]: calls tmpl.check(cfg, limits). */
static kg_status run_check(kgi_host *h, const kgi_limits *lim, char *err, size_t errlen)
{
    lua_State *L = h->L;
    lua_getfield(L, -2, "check");
    lua_pushvalue(L, -2);
    kgi_host_push_limits(h, lim);
    kg_status st = kgi_host_pcall(h, 2, 2, err, errlen);
    if (st != KG_OK)
        return st;
    if (!lua_toboolean(L, -2)) {
        const char *why = lua_tostring(L, -1);
        snprintf(err, errlen, "%s", why ? why : "configuration rejected by the template's check()");
        st = KG_ERR_CONFIG;
    }
    lua_pop(L, 2);
    return st;
}

kg_status kgi_host_check(kgi_host *h, const char *tmpl, const char *config, const kgi_limits *lim,
                         char *canon, size_t canon_len, char *err, size_t errlen)
{
    lua_State *L = h->L;
    int top = lua_gettop(L);
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st == KG_OK && (st = parse_config(h, config, err, errlen)) == KG_OK &&
        (!lim || (st = run_check(h, lim, err, errlen)) == KG_OK) && canon)
        st = canonical(h, canon, canon_len, err, errlen);
    lua_settop(L, top);
    return st;
}

/* Reads an optional non-negative integer field of the table at `idx`. */
static lua_Integer int_field(lua_State *L, int idx, const char *what, const char *name, lua_Integer dflt,
                             lua_Integer lo)
{
    int t = lua_getfield(L, idx, name);
    lua_Integer v = dflt;
    if (t != LUA_TNIL) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < lo || lua_tointeger(L, -1) > UINT32_MAX)
            luaL_error(L, "render(): %s.%s must be an integer >= %d", what, name, (int)lo);
        v = lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* lua_CFunction: reads render()'s geometry (argument 1, a table) into the
 * kgi_geometry at argument 2. Raises on any malformed field, so a broken
 * template yields an error message, never a crash. */
static int l_read_geometry(lua_State *L)
{
    kgi_geometry *g = lua_touserdata(L, 2);
    memset(g, 0, sizeof *g);
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "block") != LUA_TTABLE)
        return luaL_error(L, "render(): block must be a table {x, y, z}");
    for (int i = 0; i < 3; i++) {
        int t = lua_geti(L, -1, i + 1);
        if (t != LUA_TNIL && (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > 1024))
            return luaL_error(L, "render(): block[%d] must be an integer 1..1024", i + 1);
        g->block[i] = t == LUA_TNIL ? 1 : (unsigned)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "grid") != LUA_TTABLE)
        return luaL_error(L, "render(): grid must be a list of three {dim, div, mul}");
    for (int i = 0; i < 3; i++) {
        if (lua_geti(L, -1, i + 1) != LUA_TTABLE)
            return luaL_error(L, "render(): grid[%d] must be a table {dim, div, mul}", i + 1);
        lua_getfield(L, -1, "dim");
        const char *dim = lua_tostring(L, -1);
        if (!dim || !strchr("MNK1P", dim[0]) || !dim[0] || dim[1])
            return luaL_error(L, "render(): grid[%d].dim must be \"M\", \"N\", \"K\", \"1\" or \"P\"", i + 1);
        if (dim[0] == 'P' && i != 0)
            return luaL_error(L, "render(): grid[%d].dim \"P\" (a persistent grid) is allowed only along x", i + 1);
        g->grid[i].dim = dim[0];
        lua_pop(L, 1);
        g->grid[i].div = (unsigned)int_field(L, -1, "grid", "div", 1, 1);
        g->grid[i].mul = (unsigned)int_field(L, -1, "grid", "mul", 1, 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    g->smem_static = (size_t)int_field(L, 1, "result", "smem_static", 0, 0);
    g->smem_dynamic = (size_t)int_field(L, 1, "result", "smem_dynamic", 0, 0);
    int t = lua_getfield(L, 1, "requires");
    if (t != LUA_TNIL && t != LUA_TTABLE)
        return luaL_error(L, "render(): requires must be a table");
    int req = t == LUA_TTABLE ? lua_gettop(L) : 0;
    g->m_multiple = req ? (unsigned)int_field(L, req, "requires", "m_multiple", 1, 1) : 1;
    g->n_multiple = req ? (unsigned)int_field(L, req, "requires", "n_multiple", 1, 1) : 1;
    g->k_multiple = req ? (unsigned)int_field(L, req, "requires", "k_multiple", 1, 1) : 1;
    g->m_max = req ? (unsigned)int_field(L, req, "requires", "m_max", 0, 1) : 0;
    g->n_max = req ? (unsigned)int_field(L, req, "requires", "n_max", 0, 1) : 0;
    g->ld_multiple = req ? (unsigned)int_field(L, req, "requires", "ld_multiple", 1, 1) : 1;
    g->align = req ? (unsigned)int_field(L, req, "requires", "align", 4, 1) : 4;
    g->vec_operands = 3;
    if (req && lua_getfield(L, req, "vector_operand") != LUA_TNIL) {
        const char *op = lua_tostring(L, -1);
        if (lua_type(L, -1) != LUA_TSTRING || (strcmp(op, "A") != 0 && strcmp(op, "B") != 0))
            return luaL_error(L, "render(): requires.vector_operand must be \"A\" or \"B\"");
        g->vec_operands = op[0] == 'A' ? 1 : 2;
    }
    if (req)
        lua_pop(L, 1);
    lua_pop(L, 1);
    t = lua_getfield(L, 1, "layout");
    const char *layout = lua_tostring(L, -1);
    if (t != LUA_TNIL && (!layout || strlen(layout) != 2 || !strchr("nt", layout[0]) || !strchr("nt", layout[1])))
        return luaL_error(L, "render(): layout must be \"nn\", \"nt\", \"tn\" or \"tt\"");
    snprintf(g->layout, sizeof g->layout, "%s", layout ? layout : "nn");
    return 0;
}

/* Reads the geometry of the table at the top of the stack, protected. */
static kg_status read_geometry(kgi_host *h, kgi_geometry *g, char *err, size_t errlen)
{
    lua_State *L = h->L;
    lua_pushcfunction(L, l_read_geometry);
    lua_pushvalue(L, -2);
    lua_pushlightuserdata(L, g);
    return kgi_host_pcall(h, 2, 0, err, errlen);
}

/* The string field `key` of the table at the top of the stack into buf
 * ("" when it is not a string). */
static void field_text(lua_State *L, const char *key, char *buf, size_t len)
{
    lua_getfield(L, -1, key);
    snprintf(buf, len, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 1);
}

/* With render()'s result at the top of the stack: its optional kernels
 * besides the main one (pre, pack, workspace) into src. */
static kg_status read_side_kernels(kgi_host *h, kg_source *src, char *err, size_t errlen)
{
    lua_State *L = h->L;
    int top = lua_gettop(L);
    kg_status st = KG_OK;
    if (lua_getfield(L, -1, "pre") == LUA_TTABLE) {
        field_text(L, "entry", src->pre_entry, sizeof src->pre_entry);
        if (!src->pre_entry[0]) {
            snprintf(err, errlen, "template '%s': render().pre needs an `entry` string", src->template_name);
            st = KG_ERR_TEMPLATE;
            goto done;
        }
        if ((st = read_geometry(h, &src->pre_geo, err, errlen)) != KG_OK)
            goto done;
        lua_getfield(L, -1, "overlap");
        src->pre_overlap = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "waits");
        src->pre_waits = src->pre_overlap && lua_toboolean(L, -1);
        lua_pop(L, 1);
        /* the pre kernel receives the same arguments: the same layout */
        memcpy(src->pre_geo.layout, src->geo.layout, sizeof src->pre_geo.layout);
    }
    lua_settop(L, top);
    if (lua_getfield(L, -1, "pack") == LUA_TTABLE) {
        field_text(L, "entry", src->pack_entry, sizeof src->pack_entry);
        lua_getfield(L, -1, "multiple");
        lua_Integer mult = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
        if (!src->pack_entry[0] || mult != 4) {
            snprintf(err, errlen, "template '%s': render().pack needs an `entry` string and `multiple` = 4",
                     src->template_name);
            st = KG_ERR_TEMPLATE;
            goto done;
        }
        src->geo.pack_multiple = (unsigned)mult;
    }
    lua_settop(L, top);
    if (lua_getfield(L, -1, "workspace") == LUA_TTABLE) {
        lua_Integer v[3] = {0, 0, 0};
        static const char *const key[3] = {"tile_m", "tile_n", "waves"};
        for (int i = 0; i < 3; i++) {
            lua_getfield(L, -1, key[i]);
            v[i] = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
            lua_pop(L, 1);
        }
        field_text(L, "entry", src->ws_entry, sizeof src->ws_entry);
        int post = lua_getfield(L, -1, "post") == LUA_TTABLE;
        if (post)
            field_text(L, "entry", src->post_entry, sizeof src->post_entry);
        if (!post || !src->ws_entry[0] || !src->post_entry[0] || v[0] < 1 || v[0] > 1024 || v[1] < 1 ||
            v[1] > 1024 || v[2] < 1 || v[2] > 16) {
            snprintf(err, errlen,
                     "template '%s': render().workspace needs an `entry` string, tile_m and tile_n (1-1024), "
                     "waves (1-16) and `post` = { entry, block, grid }",
                     src->template_name);
            st = KG_ERR_TEMPLATE;
            goto done;
        }
        if ((st = read_geometry(h, &src->post_geo, err, errlen)) != KG_OK)
            goto done;
        memcpy(src->post_geo.layout, src->geo.layout, sizeof src->post_geo.layout);
        src->geo.ws_tile_m = (unsigned)v[0];
        src->geo.ws_tile_n = (unsigned)v[1];
        src->geo.ws_waves = (unsigned)v[2];
    }
done:
    lua_settop(L, top);
    return st;
}

kg_status kgi_host_render(kgi_host *h, const char *tmpl, const char *config, const kgi_limits *lim,
                          kg_source **out, char *err, size_t errlen)
{
    lua_State *L = h->L;
    int top = lua_gettop(L);
    *out = NULL;
    kg_source *src = calloc(1, sizeof *src);
    if (!src)
        return KG_ERR_NOMEM;
    kg_status st = kgi_host_push_template(h, tmpl, err, errlen);
    if (st != KG_OK)
        goto fail;
    snprintf(src->template_name, sizeof src->template_name, "%s", tmpl ? tmpl : "matmul");
    lua_getfield(L, -1, "version");
    src->template_version = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if ((st = parse_config(h, config, err, errlen)) != KG_OK ||
        (st = run_check(h, lim, err, errlen)) != KG_OK ||
        (st = canonical(h, src->config, sizeof src->config, err, errlen)) != KG_OK)
        goto fail;
    /* result = tmpl.render(cfg, meta) */
    lua_getfield(L, -2, "render");
    lua_pushvalue(L, -2);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, KGEN_VERSION);
    lua_setfield(L, -2, "kgen_version");
    lua_pushstring(L, lim->name);
    lua_setfield(L, -2, "target");
    if ((st = kgi_host_pcall(h, 2, 1, err, errlen)) != KG_OK)
        goto fail;
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "template '%s': render() must return a table", src->template_name);
        st = KG_ERR_TEMPLATE;
        goto fail;
    }
    lua_getfield(L, -1, "source");
    size_t len = 0;
    const char *text = lua_tolstring(L, -1, &len);
    lua_getfield(L, -2, "entry");
    const char *entry = lua_tostring(L, -1);
    if (!text || !entry || !entry[0]) {
        snprintf(err, errlen, "template '%s': render() must return `source` and `entry` strings",
                 src->template_name);
        st = KG_ERR_TEMPLATE;
        goto fail;
    }
    if (!(src->text = malloc(len + 1))) {
        st = KG_ERR_NOMEM;
        goto fail;
    }
    memcpy(src->text, text, len + 1);
    src->len = len;
    snprintf(src->entry, sizeof src->entry, "%s", entry);
    lua_pop(L, 2);
    if ((st = read_geometry(h, &src->geo, err, errlen)) != KG_OK)
        goto fail;
    if ((st = read_side_kernels(h, src, err, errlen)) != KG_OK)
        goto fail;
    lua_settop(L, top);
    *out = src;
    return KG_OK;
fail:
    lua_settop(L, top);
    free(src->text);
    free(src);
    return st;
}

/* ------------------------------------------------------------ the loaded modules' hash */

static int cmp_module_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* 64-bit FNV-1a, chained (gen/ sits below runtime/'s kgi_hash). */
static unsigned long long fnv(const void *data, size_t n, unsigned long long h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Hashes module `name`'s text as find_module would find it. */
static unsigned long long hash_module(kgi_host *h, const char *name, unsigned long long hs)
{
    char file[4096], buf[8192];
    FILE *f = path_file(h, name, file, sizeof file) ? fopen(file, "rb") : NULL;
    if (f) {
        hs = fnv("file", 5, hs);
        for (size_t got; (got = fread(buf, 1, sizeof buf, f)) > 0;)
            hs = fnv(buf, got, hs);
        fclose(f);
        return hs;
    }
    for (const kgi_embedded *e = kgi_embedded_files; e->module; e++)
        if (strcmp(e->module, name) == 0)
            return fnv(e->text, e->len, fnv("embedded", 9, hs));
    return fnv("missing", 8, hs);
}

unsigned long long kgi_host_modules_hash(kgi_host *h, unsigned long long seed)
{
    lua_State *L = h->L;
    int top = lua_gettop(L);
    const char *names[512];
    int n = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING && n < (int)(sizeof names / sizeof *names))
            names[n++] = lua_tostring(L, -1); /* the keys stay in the table on the stack */
    }
    qsort(names, (size_t)n, sizeof *names, cmp_module_names);
    unsigned long long hs = fnv(&n, sizeof n, seed);
    for (int i = 0; i < n; i++)
        hs = hash_module(h, names[i], fnv(names[i], strlen(names[i]) + 1, hs));
    lua_settop(L, top);
    return hs;
}
