/*
 * resources.c -- reading a template's resources() table into kgi_res (see
 * space.h), for pruning and the analytic model. Fields a template leaves
 * out take the values of a plain kernel: no prefetch, one slice of K
 * stored directly, one block per tile, no register cap, no packing.
 */
#include <stdio.h>
#include <string.h>

#include <lua.h>

#include "autotune/space.h"

static double num_field(lua_State *L, int idx, const char *name, double dflt)
{
    lua_getfield(L, idx, name);
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : dflt;
    lua_pop(L, 1);
    return v;
}

/* The index of string field `name` in `names` (NULL-terminated), or dflt. */
static int enum_field(lua_State *L, int idx, const char *name, const char *const *names, int dflt)
{
    int v = dflt;
    if (lua_getfield(L, idx, name) == LUA_TSTRING)
        for (int i = 0; names[i]; i++)
            if (strcmp(lua_tostring(L, -1), names[i]) == 0)
                v = i;
    lua_pop(L, 1);
    return v;
}

void kgi_res_read(lua_State *L, int idx, kgi_res *r)
{
    static const char *const combine[] = {"store", "atomic", "cluster", NULL};
    static const char *const beta[] = {"none", "all", "spread", NULL};
    memset(r, 0, sizeof *r);
    r->threads = (int)num_field(L, idx, "threads", 0);
    r->smem = (long)(num_field(L, idx, "smem_static", 0) + num_field(L, idx, "smem_dynamic", 0));
    r->outputs = (int)num_field(L, idx, "outputs_per_thread", 0);
    r->loads_a = num_field(L, idx, "loads_a", 0);
    r->loads_b = num_field(L, idx, "loads_b", 0);
    r->flops_per_phase = num_field(L, idx, "flops_per_phase", 0);
    if (lua_getfield(L, idx, "tile") == LUA_TTABLE) {
        int t = lua_gettop(L);
        r->tile_m = (int)num_field(L, t, "m", 0);
        r->tile_n = (int)num_field(L, t, "n", 0);
        r->tile_k = (int)num_field(L, t, "k", 0);
    }
    lua_pop(L, 1);
    snprintf(r->layout, sizeof r->layout, "nn");
    if (lua_getfield(L, idx, "layout") == LUA_TSTRING && strlen(lua_tostring(L, -1)) == 2)
        snprintf(r->layout, sizeof r->layout, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    r->registers = (int)num_field(L, idx, "registers", 0);
    r->min_blocks = (int)num_field(L, idx, "min_blocks", 1);
    r->stages = (int)num_field(L, idx, "stages", 0);
    r->async_copy = (int)num_field(L, idx, "async_copy", 0);
    r->copy_a = (int)num_field(L, idx, "copy_a", 1);
    r->copy_b = (int)num_field(L, idx, "copy_b", 1);
    r->smem_reads = num_field(L, idx, "smem_reads", 0);
    r->smem_loads = num_field(L, idx, "smem_loads", 0);
    r->raster = (int)num_field(L, idx, "raster", 1);
    r->kslices = (int)num_field(L, idx, "kslices", 1);
    r->combine = (kgi_combine)enum_field(L, idx, "combine", combine, KGI_COMBINE_STORE);
    r->atomic_width = (int)num_field(L, idx, "atomic_width", 1);
    r->beta_pass = (kgi_beta_pass)enum_field(L, idx, "beta_pass", beta, KGI_BETA_NONE);
    r->persistent = (int)num_field(L, idx, "persistent", 0);
    r->spread_waves = (int)num_field(L, idx, "spread_waves", 0);
    r->pack = (int)num_field(L, idx, "pack", 0);
    if (r->min_blocks < 1)
        r->min_blocks = 1;
    if (r->raster < 1)
        r->raster = 1;
    if (r->kslices < 1)
        r->kslices = 1;
    if (r->atomic_width < 1)
        r->atomic_width = 1;
}
