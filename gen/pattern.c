/*
 * pattern.c -- Lua's string patterns for templates, with a step budget.
 *
 * Why not the string library's own matcher: it is a backtracking matcher
 * that runs in C, where Lua's instruction-count hook never fires, so
 * string.find(string.rep("a", 40000), ".-.-.-.-.-.-.-b") runs for hours
 * inside one call and no limit on the template's instructions can stop it.
 * A static bound on a pattern's cost would have to refuse common idioms
 * (gmatch("(.-)\n") over a rendered kernel is quadratic in the worst case),
 * and a watchdog cannot stop C code safely. So the template state gets this
 * matcher instead: the same pattern language and the same results (Lua 5.4
 * manual, section 6.4.1), where every step -- each attempt to match an item
 * at a position, each character a quantifier, %b or a back reference scans
 * -- is counted and charged, in chunks, to the same budget as the
 * template's instructions (kgi_host_charge). A pattern that would take too
 * long ends with the template's "instruction limit" error at the line that
 * called it. A plain find is charged for its comparisons too.
 */
#include <ctype.h>
#include <string.h>

#include <lauxlib.h>

#include "pattern.h"

#define MAX_CAPTURES 32
#define MAX_DEPTH 200         /* recursion of the matcher, as Lua's */
#define CHARGE_CHUNK 4096     /* steps counted locally between charges */
#define CAP_OPEN (-1)         /* a capture still open */
#define CAP_POSITION (-2)     /* a () position capture */

typedef struct mstate {
    const char *src, *src_end; /* the subject */
    const char *pat_end;
    lua_State *L;
    int depth;
    int level; /* captures so far */
    unsigned long steps;
    struct {
        const char *init;
        ptrdiff_t len;
    } cap[MAX_CAPTURES];
} mstate;

static void step(mstate *ms, unsigned long n)
{
    ms->steps += n;
    if (ms->steps >= CHARGE_CHUNK) {
        unsigned long s = ms->steps;
        ms->steps = 0;
        kgi_host_charge(ms->L, s);
    }
}

static void reset(mstate *ms)
{
    ms->level = 0;
    ms->depth = MAX_DEPTH;
}

static const char *match(mstate *ms, const char *s, const char *p);

/* The end of the single-character class that starts at p. */
static const char *class_end(mstate *ms, const char *p)
{
    char c = *p++;
    if (c == '%') {
        if (p >= ms->pat_end)
            luaL_error(ms->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (p < ms->pat_end && *p == '^')
            p++;
        do { /* the first character of a set may be ']' itself */
            if (p >= ms->pat_end)
                luaL_error(ms->L, "malformed pattern (missing ']')");
            c = *p++;
            if (c == '%' && p < ms->pat_end)
                p++;
        } while (p >= ms->pat_end || *p != ']');
        return p + 1;
    }
    return p;
}

/* Whether c belongs to the class %cl. */
static int in_class(int c, int cl)
{
    int r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    case 'z': r = c == 0; break; /* deprecated in Lua, still accepted */
    default: return cl == c;
    }
    if (isupper(cl))
        r = !r;
    return r != 0;
}

/* Whether c belongs to the set [...] from p ('[') to ec (its ']'). */
static int in_set(int c, const char *p, const char *ec)
{
    int yes = 1;
    if (*(p + 1) == '^') {
        yes = 0;
        p++;
    }
    while (++p < ec) {
        if (*p == '%') {
            p++;
            if (in_class(c, (unsigned char)*p))
                return yes;
        } else if (*(p + 1) == '-' && p + 2 < ec) {
            p += 2;
            if ((unsigned char)*(p - 2) <= c && c <= (unsigned char)*p)
                return yes;
        } else if ((unsigned char)*p == c) {
            return yes;
        }
    }
    return !yes;
}

/* Whether the single item p..ep matches the character at s. */
static int single(mstate *ms, const char *s, const char *p, const char *ep)
{
    step(ms, 1);
    if (s >= ms->src_end)
        return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case '%': return in_class(c, (unsigned char)*(p + 1));
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *balance(mstate *ms, const char *s, const char *p)
{
    if (p + 1 >= ms->pat_end)
        luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= ms->src_end || *s != *p)
        return NULL;
    int open = *p, close = *(p + 1), depth = 1;
    while (++s < ms->src_end) {
        step(ms, 1);
        if (*s == close) {
            if (--depth == 0)
                return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *greedy(mstate *ms, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (single(ms, s + i, p, ep))
        i++;
    for (; i >= 0; i--) { /* the longest run first, giving back one at a time */
        const char *r = match(ms, s + i, ep + 1);
        if (r)
            return r;
    }
    return NULL;
}

static const char *lazy(mstate *ms, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = match(ms, s, ep + 1);
        if (r)
            return r;
        if (!single(ms, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *open_capture(mstate *ms, const char *s, const char *p, ptrdiff_t what)
{
    if (ms->level >= MAX_CAPTURES)
        luaL_error(ms->L, "too many captures");
    ms->cap[ms->level].init = s;
    ms->cap[ms->level].len = what;
    ms->level++;
    const char *r = match(ms, s, p);
    if (!r)
        ms->level--;
    return r;
}

static const char *close_capture(mstate *ms, const char *s, const char *p)
{
    int l = ms->level - 1;
    while (l >= 0 && ms->cap[l].len != CAP_OPEN)
        l--;
    if (l < 0)
        luaL_error(ms->L, "invalid pattern capture");
    ms->cap[l].len = s - ms->cap[l].init;
    const char *r = match(ms, s, p);
    if (!r)
        ms->cap[l].len = CAP_OPEN;
    return r;
}

static const char *back_reference(mstate *ms, const char *s, int c)
{
    int l = c - '1';
    if (l < 0 || l >= ms->level || ms->cap[l].len == CAP_OPEN)
        luaL_error(ms->L, "invalid capture index %%%d", l + 1);
    size_t len = (size_t)ms->cap[l].len;
    step(ms, len);
    if ((size_t)(ms->src_end - s) >= len && memcmp(ms->cap[l].init, s, len) == 0)
        return s + len;
    return NULL;
}

/* Matches pattern p at subject position s: the end of the match, or NULL. */
static const char *match(mstate *ms, const char *s, const char *p)
{
    if (ms->depth-- == 0)
        luaL_error(ms->L, "pattern too complex");
    for (;;) {
        step(ms, 1);
        if (p == ms->pat_end)
            break;
        if (*p == '(') {
            if (p + 1 < ms->pat_end && *(p + 1) == ')')
                s = open_capture(ms, s, p + 2, CAP_POSITION);
            else
                s = open_capture(ms, s, p + 1, CAP_OPEN);
            break;
        }
        if (*p == ')') {
            s = close_capture(ms, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == ms->pat_end) {
            if (s != ms->src_end)
                s = NULL;
            break;
        }
        if (*p == '%' && p + 1 < ms->pat_end && *(p + 1) == 'b') {
            s = balance(ms, s, p + 2);
            if (!s)
                break;
            p += 4;
            continue;
        }
        if (*p == '%' && p + 1 < ms->pat_end && *(p + 1) == 'f') {
            p += 2;
            if (p >= ms->pat_end || *p != '[')
                luaL_error(ms->L, "missing '[' after '%%f' in pattern");
            const char *ep = class_end(ms, p);
            int prev = s == ms->src ? '\0' : (unsigned char)*(s - 1);
            int cur = s < ms->src_end ? (unsigned char)*s : '\0';
            if (!in_set(prev, p, ep - 1) && in_set(cur, p, ep - 1)) {
                p = ep;
                continue;
            }
            s = NULL;
            break;
        }
        if (*p == '%' && p + 1 < ms->pat_end && isdigit((unsigned char)*(p + 1))) {
            s = back_reference(ms, s, (unsigned char)*(p + 1));
            if (!s)
                break;
            p += 2;
            continue;
        }
        const char *ep = class_end(ms, p);
        char q = ep < ms->pat_end ? *ep : '\0';
        if (!single(ms, s, p, ep)) {
            if (q == '*' || q == '?' || q == '-') { /* these accept none */
                p = ep + 1;
                continue;
            }
            s = NULL;
            break;
        }
        if (q == '?') {
            const char *r = match(ms, s + 1, ep + 1);
            if (r) {
                s = r;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (q == '+') {
            s = greedy(ms, s + 1, p, ep);
            break;
        }
        if (q == '*') {
            s = greedy(ms, s, p, ep);
            break;
        }
        if (q == '-') {
            s = lazy(ms, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    ms->depth++;
    return s;
}

/* Pushes capture i of the match s..e (the whole match when there are none). */
static void push_capture(mstate *ms, int i, const char *s, const char *e)
{
    if (i >= ms->level) {
        if (i != 0)
            luaL_error(ms->L, "invalid capture index %%%d", i + 1);
        lua_pushlstring(ms->L, s, (size_t)(e - s));
        return;
    }
    ptrdiff_t len = ms->cap[i].len;
    if (len == CAP_OPEN)
        luaL_error(ms->L, "unfinished capture");
    if (len == CAP_POSITION)
        lua_pushinteger(ms->L, (ms->cap[i].init - ms->src) + 1);
    else
        lua_pushlstring(ms->L, ms->cap[i].init, (size_t)len);
}

static int push_captures(mstate *ms, const char *s, const char *e)
{
    int n = (ms->level == 0 && s) ? 1 : ms->level;
    luaL_checkstack(ms->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        push_capture(ms, i, s, e);
    return n;
}

static void prepare(mstate *ms, lua_State *L, const char *s, size_t ls, const char *p, size_t lp)
{
    ms->L = L;
    ms->src = s;
    ms->src_end = s + ls;
    ms->pat_end = p + lp;
    ms->steps = 0;
    reset(ms);
}

/* A 1-based start position (negative: from the end) as a 0-based offset. */
static size_t start_offset(lua_Integer pos, size_t len)
{
    if (pos > 0)
        return (size_t)pos - 1;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 0;
    return len - (size_t)(-pos);
}

static int has_specials(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (strchr("^$*+?.([%-", p[i]) && p[i])
            return 1;
    return 0;
}

/* The first occurrence of p in s (a plain find), every comparison charged. */
static const char *plain_find(lua_State *L, const char *s, size_t ls, const char *p, size_t lp)
{
    if (lp == 0)
        return s;
    if (lp > ls)
        return NULL;
    mstate ms;
    prepare(&ms, L, s, ls, p, lp);
    const char *end = s + (ls - lp) + 1;
    while (s < end) {
        const char *c = memchr(s, *p, (size_t)(end - s));
        if (!c)
            break;
        step(&ms, (unsigned long)(c - s) / 16 + lp);
        if (memcmp(c, p, lp) == 0)
            return c;
        s = c + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, int find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *hit = plain_find(L, s + init, ls - init, p, lp);
        if (!hit) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (hit - s) + 1);
        lua_pushinteger(L, (lua_Integer)((hit - s) + lp));
        return 2;
    }
    mstate ms;
    int anchor = lp > 0 && *p == '^';
    if (anchor)
        p++, lp--;
    prepare(&ms, L, s, ls, p, lp);
    const char *s1 = s + init;
    do {
        reset(&ms);
        const char *e = match(&ms, s1, p);
        if (e) {
            if (find) {
                lua_pushinteger(L, (s1 - s) + 1);
                lua_pushinteger(L, e - s);
                return push_captures(&ms, NULL, NULL) + 2;
            }
            return push_captures(&ms, s1, e);
        }
    } while (s1++ < ms.src_end && !anchor);
    luaL_pushfail(L);
    return 1;
}

static int p_find(lua_State *L) { return find_or_match(L, 1); }
static int p_match(lua_State *L) { return find_or_match(L, 0); }

typedef struct gmatch_state {
    const char *next, *last; /* where to go on; the end of the last match */
    const char *p;
    mstate ms;
} gmatch_state;

static int gmatch_next(lua_State *L)
{
    gmatch_state *g = lua_touserdata(L, lua_upvalueindex(3));
    g->ms.L = L;
    for (const char *s = g->next; s <= g->ms.src_end; s++) {
        reset(&g->ms);
        const char *e = match(&g->ms, s, g->p);
        if (e && e != g->last) {
            g->next = g->last = e;
            return push_captures(&g->ms, s, e);
        }
    }
    return 0;
}

static int p_gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    if (init > ls)
        init = ls + 1;
    lua_settop(L, 2);
    gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    prepare(&g->ms, L, s, ls, p, lp);
    g->next = s + init;
    g->last = NULL;
    g->p = p;
    lua_pushcclosure(L, gmatch_next, 3); /* the subject and pattern stay alive */
    return 1;
}

/* Appends the replacement for the match s..e to b. */
static void add_replacement(mstate *ms, luaL_Buffer *b, const char *s, const char *e, int kind)
{
    lua_State *L = ms->L;
    if (kind == LUA_TSTRING || kind == LUA_TNUMBER) {
        size_t l;
        const char *r = lua_tolstring(L, 3, &l);
        step(ms, l);
        for (size_t i = 0; i < l; i++) {
            if (r[i] != '%') {
                luaL_addchar(b, r[i]);
                continue;
            }
            i++;
            if (i < l && r[i] == '%') {
                luaL_addchar(b, '%');
            } else if (i < l && r[i] == '0') {
                luaL_addlstring(b, s, (size_t)(e - s));
            } else if (i < l && isdigit((unsigned char)r[i])) {
                push_capture(ms, r[i] - '1', s, e);
                luaL_tolstring(L, -1, NULL);
                lua_remove(L, -2);
                luaL_addvalue(b);
            } else {
                luaL_error(L, "invalid use of '%%' in replacement string");
            }
        }
        return;
    }
    if (kind == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(ms, s, e);
        lua_call(L, n, 1);
    } else {
        push_capture(ms, 0, s, e);
        lua_gettable(L, 3);
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: keep the original text */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    } else {
        luaL_addvalue(b);
    }
}

static int p_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int kind = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE,
                     3, "string/function/table");
    int anchor = lp > 0 && *p == '^';
    if (anchor)
        p++, lp--;
    mstate ms;
    prepare(&ms, L, src, ls, p, lp);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *last = NULL;
    lua_Integer n = 0;
    while (n < max) {
        reset(&ms);
        const char *e = match(&ms, src, p);
        if (e && e != last) {
            n++;
            add_replacement(&ms, &b, src, e, kind);
            src = last = e;
        } else if (src < ms.src_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor)
            break;
    }
    luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
    luaL_pushresult(&b);
    lua_pushinteger(L, n);
    return 2;
}

void kgi_pattern_install(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"find", p_find}, {"match", p_match}, {"gmatch", p_gmatch}, {"gsub", p_gsub}, {NULL, NULL},
    };
    luaL_setfuncs(L, fns, 0);
}
