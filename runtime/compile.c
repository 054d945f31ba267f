/*
 * compile.c -- kg_compile: a configuration to CUBIN without a GPU.
 *
 * The configuration is checked against the limits of the architecture it is
 * compiled for: the device's own when that is the context's target, the
 * table's (arch.c) for any other, so `kgen compile --arch sm_80` on an H100
 * refuses a tile that an A100 cannot hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "runtime.h"

struct kg_cubin {
    void *data;
    size_t size;
    kg_compile_info info;
};

kg_status kg_compile(kg_context *ctx, const char *tmpl, const char *config, int arch, kg_cubin **out)
{
    if (!ctx || !out)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_compile: `out` is NULL") : KG_ERR_INVALID_ARG;
    *out = NULL;
    if (arch == 0)
        arch = ctx->arch;
    const kgi_limits *lim = arch == ctx->arch ? &ctx->limits : kgi_arch_limits(arch);
    if (!lim) {
        char known[256] = "";
        for (const kgi_limits *l = kgi_arch_table(); l->sm; l++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", known[0] ? ", " : "", l->name);
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "unknown architecture sm_%d (known: %s)", arch, known);
    }
    char err[4096];
    kg_source *src;
    kg_status st = kgi_host_render(ctx->host, tmpl, config, lim, &src, err, sizeof err);
    if (st != KG_OK)
        return kgi_fail(ctx, st, "%s", err);
    const void *cubin;
    size_t size;
    kg_compile_info info;
    st = kgi_cache_compile(ctx, src, arch, &cubin, &size, &info);
    kg_source_free(src);
    if (st != KG_OK)
        return st;
    kg_cubin *c = calloc(1, sizeof *c);
    if (!c || !(c->data = malloc(size))) {
        free(c);
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    }
    memcpy(c->data, cubin, size);
    c->size = size;
    c->info = info;
    *out = c;
    return KG_OK;
}

const void *kg_cubin_data(const kg_cubin *cubin, size_t *size)
{
    if (size)
        *size = cubin ? cubin->size : 0;
    return cubin ? cubin->data : NULL;
}

const kg_compile_info *kg_cubin_info(const kg_cubin *cubin) { return cubin ? &cubin->info : NULL; }

void kg_cubin_free(kg_cubin *cubin)
{
    if (!cubin)
        return;
    free(cubin->data);
    free(cubin);
}
