/*
 * fuzz_pattern.c -- the template sandbox's pattern matcher (gen/pattern.c)
 * against Lua's own string library: find, match, gmatch and gsub must give
 * the same results and the same errors. Input: one byte choosing the
 * function and start, then the pattern, a NUL, and the subject. Patterns
 * are kept short (32 bytes, 3 quantifiers; subjects 64 bytes), so that Lua's matcher
 * (which has no step limit) ends quickly too.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fuzz.h"
#include "gen/host.h"
#include "gen/host_lua.h"

static const char CHUNK[] =
    "local op, s, p, init = ...\n"
    "local function ser(...)\n"
    "  local t = {}\n"
    "  for i = 1, select('#', ...) do t[#t + 1] = tostring((select(i, ...))) end\n"
    "  return table.concat(t, ',')\n"
    "end\n"
    "if op == 0 then return ser(pcall(string.find, s, p, init)) end\n"
    "if op == 1 then return ser(pcall(string.match, s, p, init)) end\n"
    "if op == 2 then return ser(pcall(string.find, s, p, init, true)) end\n"
    "if op == 3 then\n"
    "  local t, n = {}, 0\n"
    "  local ok, e = pcall(function()\n"
    "    for a, b in string.gmatch(s, p, init) do\n"
    "      n = n + 1\n"
    "      t[#t + 1] = tostring(a) .. '|' .. tostring(b)\n"
    "      if n > 1000 then break end\n"
    "    end\n"
    "  end)\n"
    "  return tostring(ok) .. table.concat(t, ';') .. tostring(e)\n"
    "end\n"
    "if op == 4 then return ser(pcall(string.gsub, s, p, '<%0%1>', init)) end\n"
    "return ser(pcall(string.gsub, s, p, function(a, b) return b and a or nil end))\n";

/* Runs CHUNK in L (the function at the registry's "fuzz.chunk"); the result
 * string, malloc'ed. */
static char *run(lua_State *L, kgi_host *h, int op, const char *s, size_t ls, const char *p, size_t lp, int init)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.chunk");
    lua_pushinteger(L, op);
    lua_pushlstring(L, s, ls);
    lua_pushlstring(L, p, lp);
    lua_pushinteger(L, init);
    char err[512];
    int ok = h ? kgi_host_pcall(h, 4, 1, err, sizeof err) == KG_OK : lua_pcall(L, 4, 1, 0) == LUA_OK;
    size_t n;
    const char *r = ok ? lua_tolstring(L, -1, &n) : NULL;
    char *copy = r ? malloc(n + 1) : NULL;
    if (copy)
        memcpy(copy, r, n + 1);
    if (ok)
        lua_pop(L, 1);
    else if (!h)
        lua_pop(L, 1);
    return copy;
}

static void load(lua_State *L)
{
    if (luaL_loadbufferx(L, CHUNK, sizeof CHUNK - 1, "=fuzz", "t") != LUA_OK)
        abort();
    lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.chunk");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static lua_State *ref;
    static kgi_host *host;
    if (!ref) {
        ref = luaL_newstate();
        luaL_openlibs(ref);
        host = kgi_host_new();
        if (!ref || !host)
            abort();
        load(ref);
        load(kgi_host_lua(host));
    }
    if (size < 2)
        return 0;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    if (!nul)
        return 0;
    size_t lp = (size_t)(nul - p), ls = (size_t)(end - nul - 1);
    int quantifiers = 0;
    for (size_t i = 0; i < lp; i++)
        quantifiers += strchr("*+-?", p[i]) && p[i];
    if (lp > 32 || ls > 64 || quantifiers > 3)
        return 0;
    int op = data[0] % 6, init = (int)(signed char)data[0] / 6;
    char *want = run(ref, NULL, op, nul + 1, ls, p, lp, init);
    char *got = run(kgi_host_lua(host), host, op, nul + 1, ls, p, lp, init);
    if (!want || !got || strcmp(want, got) != 0)
        abort(); /* the matchers disagree (or a call failed outside pcall) */
    free(want);
    free(got);
    return 0;
}
