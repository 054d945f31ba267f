/*
 * config.c -- configuration text <-> kgi_config (see config.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const char BLANKS[] = " \t\n\r\f\v";

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int is_name_start(char ch) { return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
static int is_name_char(char ch) { return is_name_start(ch) || (ch >= '0' && ch <= '9'); }

/* Checks one name and value (lengths given: they may point into text). */
static int check_item(const char *name, size_t nlen, const char *value, size_t vlen, char *err, size_t errlen)
{
    if (nlen == 0)
        return fail(err, errlen, "'=%.*s' has no parameter name", (int)(vlen < 60 ? vlen : 60), value);
    int ident = is_name_start(name[0]);
    for (size_t i = 1; ident && i < nlen; i++)
        ident = is_name_char(name[i]);
    if (!ident)
        return fail(err, errlen, "'%.*s' is not a parameter name (a letter or '_', then letters, digits or '_')",
                    (int)(nlen < 60 ? nlen : 60), name);
    if (nlen >= KGI_CONFIG_NAME)
        return fail(err, errlen, "parameter name '%.*s...' is too long (at most %d characters)", 20, name,
                    KGI_CONFIG_NAME - 1);
    if (vlen == 0)
        return fail(err, errlen, "%.*s: missing value", (int)nlen, name);
    for (size_t i = 0; i < vlen; i++)
        if (value[i] == '=' || strchr(BLANKS, value[i]))
            return fail(err, errlen, "%.*s: bad value '%.*s' (one word, no '=' or blanks)", (int)nlen, name,
                        (int)(vlen < 60 ? vlen : 60), value);
    if (vlen >= KGI_CONFIG_VALUE)
        return fail(err, errlen, "%.*s: value too long (at most %d characters)", (int)nlen, name,
                    KGI_CONFIG_VALUE - 1);
    return 0;
}

static int find_n(const kgi_config *c, const char *name, size_t nlen)
{
    for (int i = 0; i < c->n; i++)
        if (strlen(c->param[i].name) == nlen && memcmp(c->param[i].name, name, nlen) == 0)
            return i;
    return -1;
}

/* Sets a checked item: in place or appended. */
static int put(kgi_config *c, const char *name, size_t nlen, const char *value, size_t vlen, char *err,
               size_t errlen)
{
    int i = find_n(c, name, nlen);
    if (i < 0) {
        if (c->n == KGI_CONFIG_MAX)
            return fail(err, errlen, "%.*s: more than %d parameters", (int)nlen, name, KGI_CONFIG_MAX);
        i = c->n++;
        memcpy(c->param[i].name, name, nlen);
        c->param[i].name[nlen] = '\0';
    }
    memcpy(c->param[i].value, value, vlen);
    c->param[i].value[vlen] = '\0';
    return 0;
}

void kgi_config_init(kgi_config *c) { c->n = 0; }

int kgi_config_parse(kgi_config *c, const char *text, char *err, size_t errlen)
{
    c->n = 0;
    for (const char *p = text ? text : ""; *p;) {
        p += strspn(p, BLANKS);
        size_t len = strcspn(p, BLANKS);
        if (!len)
            break;
        const char *eq = memchr(p, '=', len);
        if (!eq) {
            c->n = 0;
            return fail(err, errlen, "'%.*s' is not of the form name=value", (int)(len < 60 ? len : 60), p);
        }
        size_t nlen = (size_t)(eq - p), vlen = len - nlen - 1;
        if (check_item(p, nlen, eq + 1, vlen, err, errlen) != 0) {
            c->n = 0;
            return -1;
        }
        int dup = find_n(c, p, nlen);
        if (dup >= 0) {
            fail(err, errlen, "%.*s given twice (%s and %.*s)", (int)nlen, p, c->param[dup].value, (int)vlen, eq + 1);
            c->n = 0;
            return -1;
        }
        if (put(c, p, nlen, eq + 1, vlen, err, errlen) != 0) {
            c->n = 0;
            return -1;
        }
        p += len;
    }
    return 0;
}

int kgi_config_find(const kgi_config *c, const char *name) { return find_n(c, name, strlen(name)); }

const char *kgi_config_get(const kgi_config *c, const char *name)
{
    int i = kgi_config_find(c, name);
    return i < 0 ? NULL : c->param[i].value;
}

int kgi_config_get_int(const kgi_config *c, const char *name, int *out, char *err, size_t errlen)
{
    const char *v = kgi_config_get(c, name);
    if (!v)
        return fail(err, errlen, "%s: not set", name);
    errno = 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE || x < INT_MIN || x > INT_MAX)
        return fail(err, errlen, "%s: '%s' is not an integer", name, v);
    *out = (int)x;
    return 0;
}

int kgi_config_set(kgi_config *c, const char *name, const char *value, char *err, size_t errlen)
{
    size_t nlen = strlen(name), vlen = strlen(value);
    if (check_item(name, nlen, value, vlen, err, errlen) != 0)
        return -1;
    return put(c, name, nlen, value, vlen, err, errlen);
}

int kgi_config_set_int(kgi_config *c, const char *name, int value, char *err, size_t errlen)
{
    char v[16];
    snprintf(v, sizeof v, "%d", value);
    return kgi_config_set(c, name, v, err, errlen);
}

int kgi_config_unset(kgi_config *c, const char *name)
{
    int i = kgi_config_find(c, name);
    if (i < 0)
        return 0;
    memmove(&c->param[i], &c->param[i + 1], (size_t)(c->n - i - 1) * sizeof c->param[0]);
    c->n--;
    return 1;
}

int kgi_config_format(const kgi_config *c, char *out, size_t len)
{
    size_t used = 0;
    if (!len)
        return -1;
    out[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        int w = snprintf(out + used, len - used, "%s%s=%s", i ? " " : "", c->param[i].name, c->param[i].value);
        if (w < 0 || (size_t)w >= len - used) {
            out[0] = '\0';
            return -1;
        }
        used += (size_t)w;
    }
    return 0;
}

int kgi_config_text_get(const char *text, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    for (const char *p = text ? text : ""; *p;) {
        p += strspn(p, BLANKS);
        size_t tok = strcspn(p, BLANKS);
        if (tok > n + 1 && memcmp(p, name, n) == 0 && p[n] == '=' && !memchr(p + n + 1, '=', tok - n - 1)) {
            if (tok - n - 1 >= len)
                return -1;
            memcpy(out, p + n + 1, tok - n - 1);
            out[tok - n - 1] = '\0';
            return 0;
        }
        p += tok;
    }
    return -1;
}
