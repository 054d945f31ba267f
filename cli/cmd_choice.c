/*
 * cmd_choice.c -- `kgen choice`: which configuration kg_matmul runs for a
 * shape and layout, and why (kg_matmul_explain), without running it: on
 * this machine's GPU 0, or for an architecture with no GPU (--arch), with the
 * catalogue built into libkgen or KGEN_CATALOGUE's, and the tuning database
 * kg_matmul would read. One line per (shape, layout):
 *
 *   [TAG] LAYOUT MxNxK TEMPLATE CONFIG
 *       WHY                                  (unless --brief)
 *
 * so that two catalogues' choices over a shape list compare with diff. The
 * first choice that fails (a catalogue KGEN_CATALOGUE names that does not
 * read, say) is reported and ends the command, with nothing on standard
 * output.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/tune.h"
#include "cli.h"
#include "why.h"

int kgc_cmd_choice(int argc, char **argv)
{
    const char *m = NULL, *n = NULL, *k = NULL, *shapes = NULL, *layout = NULL, *brief = NULL;
    const kgc_opt own[] = {{"--m", "-m", 1, &m},           {"--n", "-n", 1, &n},          {"--k", "-k", 1, &k},
                           {"--shapes", NULL, 1, &shapes}, {"--layout", NULL, 1, &layout}, {"--brief", NULL, 0, &brief},
                           {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgi_tune_shape one, *list = NULL;
    int nshapes = 0;
    FILE *mem = NULL;
    char *buf = NULL;
    size_t blen = 0;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    if (args.nparam > 0 || args.tmpl_given) {
        fprintf(stderr, "kgen: choice takes no template or parameters: it says which kg_matmul would run\n");
        goto done;
    }
    if (!shapes && !(m && n && k)) {
        fprintf(stderr, "kgen: choice needs --m, --n and --k, or --shapes FILE\n");
        goto done;
    }
    if (shapes && (m || n || k)) {
        fprintf(stderr, "kgen: choice takes --shapes FILE or --m, --n and --k, not both\n");
        goto done;
    }
    /* the layouts: one, or all four */
    const char *layouts[4] = {"nn"};
    int nlayouts = 1;
    if (layout && strcmp(layout, "all") == 0) {
        static const char *const all[4] = {"nn", "nt", "tn", "tt"};
        memcpy(layouts, all, sizeof all);
        nlayouts = 4;
    } else if (layout) {
        if (kgc_layout("--layout", layout) != 0)
            goto done;
        layouts[0] = layout;
    }
    if (shapes) {
        if (kgc_read_shapes(shapes, &list, &nshapes) != 0)
            goto done;
    } else {
        long v[3];
        if (kgc_int("--m", m, 1, INT_MAX, &v[0]) || kgc_int("--n", n, 1, INT_MAX, &v[1]) ||
            kgc_int("--k", k, 1, INT_MAX, &v[2]))
            goto done;
        one.tag[0] = '\0';
        one.m = (int)v[0], one.n = (int)v[1], one.k = (int)v[2];
        list = &one;
        nshapes = 1;
    }
    /* No --arch: GPU 0, as kg_matmul there sees it (its SM count); else the table's default, said so */
    const char *target = NULL;
    if (!args.arch) {
        int count = 0;
        if (kg_device_count(ctx, &count) == KG_OK && count > 0) {
            kg_context_close(ctx);
            ctx = NULL;
            if ((rc = kgc_open(&ctx, 0, &args)) != KGC_OK)
                goto done;
            rc = KGC_USAGE;
        } else {
            target = "no GPU found: kgen's table for sm_90 stands in; use --arch";
        }
    }
    if (target)
        fprintf(stderr, "kgen choice: %s\n", target);
    rc = KGC_FAIL;
    if (!(mem = open_memstream(&buf, &blen))) {
        fprintf(stderr, "kgen: choice: out of memory\n");
        goto done;
    }
    rc = KGC_OK;
    for (int s = 0; s < nshapes && rc == KGC_OK; s++) {
        const kgi_tune_shape *sh = &list[s];
        for (int l = 0; l < nlayouts && rc == KGC_OK; l++) {
            char config[1024], why[4096];
            kg_status st = kg_matmul_explain(ctx, layouts[l], sh->m, sh->n, sh->k, config, sizeof config, why,
                                             sizeof why);
            if (st != KG_OK) {
                fprintf(stderr, "kgen: choice: %s%s%s %dx%dx%d: %s\n", sh->tag, sh->tag[0] ? " " : "", layouts[l],
                        sh->m, sh->n, sh->k, kg_last_error(ctx));
                rc = KGC_FAIL;
                continue;
            }
            /* the template goes on the first line */
            char tmpl[64];
            const char *rest = kgwhy_template(why, tmpl, sizeof tmpl);
            fprintf(mem, "%s%s%s %dx%dx%d %s %s\n", sh->tag, sh->tag[0] ? " " : "", layouts[l], sh->m, sh->n, sh->k,
                    tmpl, config);
            if (!brief)
                fprintf(mem, "    %s\n", rest);
        }
    }
    if (fclose(mem) != 0 && rc == KGC_OK) {
        fprintf(stderr, "kgen: choice: out of memory\n");
        rc = KGC_FAIL;
    }
    mem = NULL;
    if (rc == KGC_OK && (fwrite(buf, 1, blen, stdout) != blen || fflush(stdout) != 0)) {
        fprintf(stderr, "kgen: choice: writing standard output failed\n");
        rc = KGC_FAIL;
    }
done:
    if (mem)
        fclose(mem);
    free(buf);
    if (list != &one)
        free(list);
    kg_context_close(ctx);
    return rc;
}
