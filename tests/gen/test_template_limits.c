/*
 * test_template_limits.c -- every call into a template ends: a __gc
 * finalizer (which Lua runs with hooks off) is refused, and pattern matching
 * with catastrophic backtracking ends with the instruction-limit error that
 * names the template's file. The sandbox's pattern functions (gen/pattern.c)
 * must give the same results and errors as Lua's own string library: a list
 * of cases runs in both and the outputs are compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "gen/host.h"
#include "gen/host_lua.h"
#include "testutil.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs every pattern function over a list of cases; returns one line each. */
static const char CASES[] =
    "local cases = {\n"
    "  {'hello world', 'o w'}, {'hello', 'l+'}, {'  x = 12 ', '^%s*(%w+)%s*=%s*(%d+)'}, {'abc', ''},\n"
    "  {'', ''}, {'', 'a*'}, {'aaa', 'a-'}, {'aaab', 'a-b'}, {'ab', 'a?b'}, {'b', 'a?b'}, {'xyz', '()y()'},\n"
    "  {'f(a(b)c)d', '%b()'}, {'f(a(b c', '%b()'}, {'THE (quick) fox', '%f[%a]%a+'}, {'a]b', '[]]'},\n"
    "  {'a]b', '[^]]+'}, {'a-b', '[a-]+'}, {'zz-a', '[%a-]+'}, {'x\\0y', '%z'}, {'x\\0y', '[\\0]'},\n"
    "  {'hello hello', '(h%a+) %1'}, {'abab', '(ab)%1'}, {'end', 'd$'}, {'end$', 'd%$'}, {'a$b', '$b'},\n"
    "  {'aaa', '^a'}, {'aaa', 'a$'}, {'abc', '[a-c]+', 2}, {'abc', 'c', -1}, {'abc', 'a', -10}, {'abc', 'a', 10},\n"
    "  {'abc', 'b', 1, true}, {'a.c', '.', 1, true}, {'a+b', '+', 1, true}, {'one\\ntwo\\n', '(.-)\\n'},\n"
    "  {'key=val; k2=v2', '(%w+)=(%w+)'}, {'%d', '%%d'}, {'abc', '%'}, {'abc', '[a'}, {'abc', '(a'},\n"
    "  {'abc', 'a)'}, {'abc', '%1'}, {'abc', '(a)%2'}, {'abc', '%b'}, {'abc', '%f'}, {'abc', '%fa'},\n"
    "  {'\\xff\\x80a', '[\\x80-\\xff]+'}, {'Tab\\there', '%c'}, {'a1_B2', '[%w_]+'}, {'a,b,,c', '([^,]*)'},\n"
    "  {'aaa', 'a*?'}, {'x', '[%]'}, {'-x-', '%-x%-'}, {'abcabc', 'b', 3}, {'ab', '()', 3}, {'abc', '.-$'},\n"
    "  {string.rep('(', 40), string.rep('%(', 40)}, {'hello', '%A'}, {'a.b', '%p'}, {'AbC', '%u%l%u'},\n"
    "  {'0x1F', '%x+'}, {'  ', '%S'}, {'a b', '%s'}, {'\\1\\2', '%C'}, {'x', 'x*()'},\n"
    "}\n"
    "local function ser(...)\n"
    "  local t = {}\n"
    "  for i = 1, select('#', ...) do t[#t + 1] = tostring((select(i, ...))) end\n"
    "  return table.concat(t, ',')\n"
    "end\n"
    "local out = {}\n"
    "for i, c in ipairs(cases) do\n"
    "  out[#out + 1] = i .. ' find ' .. ser(pcall(string.find, c[1], c[2], c[3], c[4]))\n"
    "  out[#out + 1] = i .. ' match ' .. ser(pcall(string.match, c[1], c[2], c[3]))\n"
    "  local g = {}\n"
    "  local ok, err = pcall(function()\n"
    "    for a, b in string.gmatch(c[1], c[2], c[3]) do g[#g + 1] = tostring(a) .. '|' .. tostring(b) end\n"
    "  end)\n"
    "  out[#out + 1] = i .. ' gmatch ' .. tostring(ok) .. ' ' .. table.concat(g, ';') .. (ok and '' or err)\n"
    "  out[#out + 1] = i .. ' gsub ' .. ser(pcall(string.gsub, c[1], c[2], '<%0>'))\n"
    "  out[#out + 1] = i .. ' gsub1 ' .. ser(pcall(string.gsub, c[1], c[2], '[%1]'))\n"
    "  out[#out + 1] = i .. ' gsubf ' .. ser(pcall(string.gsub, c[1], c[2], function(x) return x:upper() end))\n"
    "  out[#out + 1] = i .. ' gsubt ' .. ser(pcall(string.gsub, c[1], c[2], { hello = 'HI', a = false }, 2))\n"
    "end\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'abc', 'b', '%x'))\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'abc', 'b', 5))\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'abc', 'b', true))\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'abc', 'b', function() return {} end))\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'abc', '', '-'))\n"
    "out[#out + 1] = ser(pcall(string.gsub, 'hello world', '%w+', '%0 %0', 1))\n"
    "out[#out + 1] = ser(pcall(string.find, 'abc', string.rep('(', 40)))\n"
    "out[#out + 1] = ser(pcall(string.match, string.rep('a', 300), string.rep('a?', 300)))\n"
    "return table.concat(out, '\\n')\n";

static char *run_cases(lua_State *L)
{
    if (luaL_loadbufferx(L, CASES, sizeof CASES - 1, "=cases", "t") != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
        fprintf(stderr, "cases: %s\n", lua_tostring(L, -1));
        return NULL;
    }
    char *s = strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    return s;
}

static void test_same_as_lua(void)
{
    lua_State *ref = luaL_newstate();
    luaL_openlibs(ref);
    kgi_host *h = kgi_host_new();
    CHECK(ref && h);
    char *want = run_cases(ref), *got = run_cases(kgi_host_lua(h));
    CHECK(want && got);
    if (want && got && strcmp(want, got) != 0) {
        /* print the first line that differs */
        const char *a = want, *b = got;
        while (*a && *b) {
            const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
            size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
            if (la != lb || memcmp(a, b, la) != 0) {
                fprintf(stderr, "lua:  %.*s\nkgen: %.*s\n", (int)la, a, (int)lb, b);
                break;
            }
            a += la + (ea != NULL);
            b += lb + (eb != NULL);
        }
        CHECK(!"the sandbox's pattern functions differ from Lua's");
    } else {
        CHECK(want && got);
    }
    free(want);
    free(got);
    kgi_host_free(h);
    lua_close(ref);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_template_limits TEMPLATE_DIR\n");
        return 2;
    }
    test_same_as_lua();

    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    CHECK(kg_set_template_path(ctx, argv[1]) == KG_OK);
    static const struct {
        const char *how, *error;
    } cases[] = {
        {"gc", "__gc"},
        {"gc_later", "__gc"},
        {"find", "instruction limit"},
        {"match", "instruction limit"},
        {"gmatch", "instruction limit"},
        {"gsub", "instruction limit"},
        {"plain", "instruction limit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "how=%s", cases[i].how);
        kg_source *src = NULL;
        double t0 = now();
        kg_status st = kg_render(ctx, "hostile", cfg, &src);
        double dt = now() - t0;
        const char *e = kg_last_error(ctx);
        CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(e, cases[i].error) && strstr(e, "hostile.lua"), "%s: %s (%s)",
                  cases[i].how, e, kg_strerror(st));
        printf("hostile %-8s %6.2f s  %s\n", cases[i].how, dt, e);
        kg_source_free(src);
    }
    kg_source *src = NULL;
    CHECK_MSG(kg_render(ctx, "hostile", "how=fine", &src) == KG_OK, "fine: %s", kg_last_error(ctx));
    CHECK(src && strcmp(src->text, "one+twoa#b#") == 0);
    kg_source_free(src);
    kg_context_close(ctx);
    TEST_DONE();
}
