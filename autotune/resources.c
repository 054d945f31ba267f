/*
 * resources.c -- what the host read of a template's resources() (gen/host.h)
 * as kgi_res (see space.h), for pruning and the analytic model. Fields a
 * template leaves out take the values of a plain kernel: no prefetch, one
 * slice of K stored directly, one block per tile, no register cap, no
 * packing.
 */
#include <stdio.h>
#include <string.h>

#include "autotune/space.h"

/* The index of `v` in `names` (NULL-terminated), or dflt. */
static int enum_value(const char *v, const char *const *names, int dflt)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return dflt;
}

static int at_least_1(double v) { return v >= 1 ? (int)v : 1; }

void kgi_res_from(const kgi_resources *in, kgi_res *r)
{
    static const char *const combine[] = {"store", "atomic", "cluster", NULL};
    static const char *const beta[] = {"none", "all", "spread", NULL};
    memset(r, 0, sizeof *r);
    r->threads = (int)in->threads;
    r->smem = (long)(in->smem_static + in->smem_dynamic);
    r->outputs = (int)in->outputs_per_thread;
    r->loads_a = in->loads_a;
    r->loads_b = in->loads_b;
    r->flops_per_phase = in->flops_per_phase;
    r->tile_m = (int)in->tile_m;
    r->tile_n = (int)in->tile_n;
    r->tile_k = (int)in->tile_k;
    memcpy(r->layout, strlen(in->layout) == 2 ? in->layout : "nn", 3);
    r->registers = (int)in->registers;
    r->min_blocks = at_least_1(in->min_blocks);
    r->stages = (int)in->stages;
    r->async_copy = (int)in->async_copy;
    r->copy_a = at_least_1(in->copy_a);
    r->copy_b = at_least_1(in->copy_b);
    r->smem_reads = in->smem_reads;
    r->smem_loads = in->smem_loads;
    r->raster = at_least_1(in->raster);
    r->kslices = at_least_1(in->kslices);
    r->combine = (kgi_combine)enum_value(in->combine, combine, KGI_COMBINE_STORE);
    r->atomic_width = at_least_1(in->atomic_width);
    r->beta_pass = (kgi_beta_pass)enum_value(in->beta_pass, beta, KGI_BETA_NONE);
    r->persistent = (int)in->persistent;
    r->spread_waves = (int)in->spread_waves;
    r->pack = (int)in->pack;
}
