/*
 * skinny_space.h -- the configurations of matmul_skinny's tuning space as
 * the tuner walks it for sm_90 (its `space`, then its `space_groups`;
 * autotune/space.c), without the layout, for test_skinny_render.c and
 * test_skinny_gpu.c.
 */
#ifndef KGEN_TESTS_SKINNY_SPACE_H
#define KGEN_TESTS_SKINNY_SPACE_H

#include <stdio.h>
#include <string.h>

#include "autotune/space.h"
#include "runtime/internal.h"

#define SKINNY_MAX_CONFIGS 512

/* Fills out[0..n) with the walk's canonical "name=value ..." texts, the
 * layout (the last parameter, fixed to nn for the walk) cut off; returns
 * n (0: the walk failed). */
static int skinny_space(char (*out)[256], int max)
{
    kgi_host *h = kgi_host_new();
    kgi_space sp;
    char err[1024];
    memset(&sp, 0, sizeof sp);
    int count = 0;
    if (h && kgi_space_add_template(&sp, h, "matmul_skinny", "layout=nn", NULL, kgi_arch_limits(90), err,
                                    sizeof err) == KG_OK) {
        for (int i = 0; i < sp.n && count < max; i++) {
            snprintf(out[count], 256, "%s", sp.cand[i].config);
            char *layout = strstr(out[count], " layout=");
            if (layout)
                *layout = 0;
            count++;
        }
    } else {
        fprintf(stderr, "matmul_skinny's space: %s\n", h ? err : "out of memory");
    }
    kgi_space_free(&sp);
    kgi_host_free(h);
    return count;
}

#endif
