/*
 * configs.c -- the list of configurations `kgen tune --configs` evaluates
 * (see configs.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/configs.h"
#include "gen/config.h"

void kgi_config_list_free(kgi_config_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->e[i].config);
    free(l->e);
    memset(l, 0, sizeof *l);
}

/* A template's module name: letters, digits and '_', not starting with a digit. */
static int module_name(const char *s, size_t len)
{
    if (len == 0 || len >= 64 || isdigit((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

static kg_status add_line(kgi_config_list *out, const char *p, const char *end, const char *name, int lineno,
                          char *err, size_t errlen)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    if (p == end || *p == '#')
        return KG_OK;
    const char *t = p;
    while (p < end && !isspace((unsigned char)*p))
        p++;
    if (!module_name(t, (size_t)(p - t))) {
        snprintf(err, errlen, "%s:%d: '%.*s' is not a template name (a line is TEMPLATE k=v k=v ...)", name, lineno,
                 (int)(p - t > 64 ? 64 : p - t), t);
        return KG_ERR_CONFIG;
    }
    while (p < end && isspace((unsigned char)*p))
        p++;
    char *text = malloc((size_t)(end - p) + 1);
    if (!text)
        return KG_ERR_NOMEM;
    memcpy(text, p, (size_t)(end - p));
    text[end - p] = '\0';
    kgi_config c;
    char why[256];
    if (kgi_config_parse(&c, text, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%d: %s", name, lineno, why);
        free(text);
        return KG_ERR_CONFIG;
    }
    if (kgi_config_find(&c, "layout") >= 0) {
        snprintf(err, errlen, "%s:%d: a line may not set layout (the run's --layout applies to every line)", name,
                 lineno);
        free(text);
        return KG_ERR_CONFIG;
    }
    if (out->n == out->cap) {
        int cap = out->cap ? 2 * out->cap : 32;
        kgi_config_entry *e = realloc(out->e, (size_t)cap * sizeof *e);
        if (!e) {
            free(text);
            return KG_ERR_NOMEM;
        }
        out->e = e, out->cap = cap;
    }
    kgi_config_entry *e = &out->e[out->n++];
    snprintf(e->tmpl, sizeof e->tmpl, "%.*s", (int)(strcspn(t, " \t\r\n")), t);
    e->config = text;
    e->line = lineno;
    return KG_OK;
}

kg_status kgi_config_list_parse(const char *text, size_t len, const char *name, kgi_config_list *out, char *err,
                                size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    const char *p = text, *end = text + len;
    int lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lineno++;
        if (memchr(p, '\0', (size_t)(le - p))) {
            snprintf(err, errlen, "%s:%d: a NUL byte (not a text file)", name, lineno);
            kgi_config_list_free(out);
            return KG_ERR_CONFIG;
        }
        kg_status st = add_line(out, p, le, name, lineno, err, errlen);
        if (st != KG_OK) {
            kgi_config_list_free(out);
            return st;
        }
        p = nl ? nl + 1 : end;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "%s: no configurations (lines TEMPLATE k=v k=v ...)", name);
        return KG_ERR_CONFIG;
    }
    return KG_OK;
}

kg_status kgi_config_list_read(const char *path, kgi_config_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char name[512];
    snprintf(name, sizeof name, "--configs %s", path);
    size_t len;
    char *buf = kgi_read_file("--configs", path, (size_t)64 << 20, &len, err, errlen);
    if (!buf)
        return KG_ERR_IO;
    kg_status st = kgi_config_list_parse(buf, len, name, out, err, errlen);
    free(buf);
    return st;
}
