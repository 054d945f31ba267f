/*
 * why.c -- the template a kg_matmul_explain reason names (why.h).
 */
#include "why.h"

#include <stdio.h>
#include <string.h>

const char *kgwhy_template(const char *why, char *tmpl, size_t len)
{
    static const char prefix[] = "[template ";
    const char *end;
    if (strncmp(why, prefix, sizeof prefix - 1) != 0 || !(end = strstr(why, "] "))) {
        snprintf(tmpl, len, "matmul");
        return why;
    }
    const char *name = why + sizeof prefix - 1;
    snprintf(tmpl, len, "%.*s", (int)(end - name), name);
    return end + 2;
}
