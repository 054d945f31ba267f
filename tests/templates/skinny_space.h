/*
 * skinny_space.h -- the configurations of matmul_skinny's tuning space, as
 * the template declares it (every parameter its `space` lists, the cross
 * product of their values, then each of its `space_groups`; the layout left
 * out), for test_skinny_render.c and test_skinny_gpu.c.
 */
#ifndef KGEN_TESTS_SKINNY_SPACE_H
#define KGEN_TESTS_SKINNY_SPACE_H

#include <stdio.h>
#include <string.h>

#include "runtime/internal.h"

#define SKINNY_MAX_CONFIGS 512

/* The cross product of the value lists vals[0..np) into out[count..max);
 * returns the new count. */
static int skinny_product(char (*out)[256], int count, int max, int np, const char **names,
                          char (*vals)[16][32], const int *nv)
{
    int idx[KGI_MAX_PARAMS] = {0};
    for (;;) {
        if (count == max)
            return count;
        size_t len = 0;
        out[count][0] = 0;
        for (int p = 0; p < np; p++)
            len += (size_t)snprintf(out[count] + len, 256 - len, "%s%s=%.31s", p ? " " : "", names[p], vals[p][idx[p]]);
        count++;
        int p = np - 1;
        while (p >= 0 && ++idx[p] == nv[p])
            idx[p--] = 0;
        if (p < 0)
            return count;
    }
}

/* Fills out[0..n) with "name=value ..." texts, the space's cross product
 * and then each of its space_groups' (the group's lists replacing the
 * space's for the parameters it names); returns n (0: no space). */
static int skinny_space(char (*out)[256], int max)
{
    kgi_host *h = kgi_host_new();
    static kgi_template_info info;
    char err[256];
    if (!h || kgi_host_template_info(h, "matmul_skinny", &info, err, sizeof err) != KG_OK) {
        kgi_host_free(h);
        return 0;
    }
    static char vals[KGI_MAX_PARAMS][16][32], base[KGI_MAX_PARAMS][16][32];
    int nv[KGI_MAX_PARAMS], nbase[KGI_MAX_PARAMS], np = 0;
    const char *names[KGI_MAX_PARAMS];
    for (int p = 0; p < info.nparams; p++) {
        int n = kgi_host_space_values(h, "matmul_skinny", info.param[p].name, base[np], 16);
        if (n > 0)
            names[np] = info.param[p].name, nbase[np] = n, np++;
    }
    memcpy(vals, base, sizeof vals);
    memcpy(nv, nbase, sizeof nv);
    int count = skinny_product(out, 0, max, np, names, vals, nv);
    char group[1024];
    for (int g = 0; kgi_host_space_group(h, "matmul_skinny", g, group, sizeof group) == 1; g++) {
        memcpy(vals, base, sizeof vals);
        memcpy(nv, nbase, sizeof nv);
        /* "name=v1,v2 name=v ...": a parameter the space does not list is added */
        int ng = np;
        char *save = NULL;
        for (char *tok = strtok_r(group, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '='), *vsave = NULL;
            if (!eq)
                continue;
            *eq = 0;
            int p = 0;
            while (p < ng && strcmp(names[p], tok) != 0)
                p++;
            if (p == ng) {
                if (ng == KGI_MAX_PARAMS)
                    continue;
                names[ng++] = tok;
            }
            nv[p] = 0;
            for (char *v = strtok_r(eq + 1, ",", &vsave); v && nv[p] < 16; v = strtok_r(NULL, ",", &vsave))
                snprintf(vals[p][nv[p]++], 32, "%s", v);
        }
        count = skinny_product(out, count, max, ng, names, vals, nv);
    }
    kgi_host_free(h);
    return count;
}

#endif
