/*
 * skinny_space.h -- the configurations of matmul_skinny's tuning space, as
 * the template declares it (every parameter its `space` lists, the cross
 * product of their values; the layout left out), for test_skinny_render.c
 * and test_skinny_gpu.c.
 */
#ifndef KGEN_TESTS_SKINNY_SPACE_H
#define KGEN_TESTS_SKINNY_SPACE_H

#include <stdio.h>
#include <string.h>

#include "runtime/internal.h"

#define SKINNY_MAX_CONFIGS 512

/* Fills out[0..n) with "name=value ..." texts; returns n (0: no space). */
static int skinny_space(char (*out)[256], int max)
{
    kgi_host *h = kgi_host_new();
    static kgi_template_info info;
    char err[256];
    if (!h || kgi_host_template_info(h, "matmul_skinny", &info, err, sizeof err) != KG_OK) {
        kgi_host_free(h);
        return 0;
    }
    static char vals[KGI_MAX_PARAMS][16][32];
    int nv[KGI_MAX_PARAMS], np = 0, idx[KGI_MAX_PARAMS];
    const char *names[KGI_MAX_PARAMS];
    for (int p = 0; p < info.nparams; p++) {
        int n = kgi_host_space_values(h, "matmul_skinny", info.param[p].name, vals[np], 16);
        if (n > 0)
            names[np] = info.param[p].name, nv[np] = n, idx[np] = 0, np++;
    }
    kgi_host_free(h);
    int count = 0;
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

#endif
