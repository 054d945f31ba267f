/*
 * cmd_emit.c -- `kgen emit` (write one .cu file) and `kgen params`.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "runtime/internal.h"

int kgc_cmd_emit(int argc, char **argv)
{
    const char *output = NULL;
    const kgc_opt own[] = {{"-o", "--output", 1, &output}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto out;
    kg_source *src;
    kg_status st = kg_render(ctx, args.tmpl, args.config, &src);
    if (st != KG_OK) {
        rc = kgc_report(ctx, st, NULL);
        goto out;
    }
    size_t len;
    const char *text = kg_source_text(src, &len);
    rc = kgc_write_file(output, text, len) == 0 ? KGC_OK : KGC_FAIL;
    kg_source_free(src);
out:
    kg_context_close(ctx);
    return rc;
}

int kgc_cmd_params(int argc, char **argv)
{
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, NULL, 0, &args)) != KGC_OK)
        goto out;
    if (args.nparam > 0) {
        fprintf(stderr, "kgen: params takes no parameter options (only --template, --template-dir)\n");
        rc = KGC_USAGE;
        goto out;
    }
    char err[2048];
    kgi_template_info info;
    if (kgi_host_template_info(ctx->host, args.tmpl, &info, err, sizeof err) != KG_OK) {
        fprintf(stderr, "kgen: %s\n", err);
        rc = KGC_FAIL;
        goto out;
    }
    printf("template %s, version %d\n\n", info.name, info.version);
    printf("%-8s %-8s %-14s %s\n", "name", "default", "allowed", "meaning");
    for (int i = 0; i < info.nparams; i++) {
        const kgi_param *p = &info.param[i];
        printf("%-8s %-8s %-14s %s\n", p->name, p->dflt, p->allowed, p->doc);
    }
    /* the example uses this template's own first parameter; --tile only where it has bm, bn, bk, tm and tn */
    const kgi_param *p0 = info.nparams > 0 ? &info.param[0] : NULL;
    int tiled = 0;
    for (int i = 0; i < info.nparams; i++)
        tiled += !strcmp(info.param[i].name, "bm") || !strcmp(info.param[i].name, "bn") ||
                 !strcmp(info.param[i].name, "bk") || !strcmp(info.param[i].name, "tm") || !strcmp(info.param[i].name, "tn");
    if (p0)
        printf("\nSet them as options (--%s %s) or as --config \"%s=%s\"%s\n", p0->name, p0->dflt, p0->name, p0->dflt,
               tiled == 5 ? ";\n--tile T is short for bm=bn=bk=T tm=tn=1." : ".");
    rc = KGC_OK;
out:
    kg_context_close(ctx);
    return rc;
}
