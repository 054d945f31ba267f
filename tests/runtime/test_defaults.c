/*
 * test_defaults.c -- kg_matmul's built-in choice (runtime/defaults.c) on
 * shapes that exercise each rule: the tier by tiles against SMs, split-K,
 * stream-K, packed operands and the single-float configuration; and every
 * choice renders (its template's check accepts it). No GPU needed.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/defaults.h"
#include "runtime/internal.h"
#include "testutil.h"

typedef struct want {
    int arch, sms, m, n, k, align;
    const char *layout, *tmpl, *table;
    const char *has[4];   /* name=value items the configuration must hold */
    const char *lacks[3]; /* names it must not set */
} want;

static const want cases[] = {
    /* 512 large tiles, a partial last wave: stream-K */
    {90, 132, 4096, 4096, 4096, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"sk=2", "red=4", "bn=256", "stages=1"}, {"splitk", "pack", "vec"}},
    /* the same without 16-byte alignment: packed operands pay for themselves */
    {90, 132, 4096, 4096, 4096, 1, "tn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"pack=1", "sk=2", "layout=tn", NULL}, {"splitk", NULL, NULL}},
    /* 128 tiles, one wave: the large tile as it is */
    {90, 132, 2048, 2048, 2048, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"stages=1", NULL, NULL, NULL}, {"sk", "splitk", "pack"}},
    /* unaligned, too small an output to pack: the tier's single-float configuration */
    {90, 132, 2048, 2048, 2048, 2, "nt", "matmul_warp", "table row sm_90, large tile 128x256",
     {"vec=1", "stages=3", NULL, NULL}, {"pack", "sk", NULL}},
    /* too few tiles, long K: split-K */
    {90, 132, 1000, 1000, 1000, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"splitk=4", "red=4", NULL, NULL}, {"sk", "pack", NULL}},
    {90, 132, 256, 256, 65536, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"splitk=64", NULL, NULL, NULL}, {"sk", NULL, NULL}},
    /* 64 rows: the medium tile fits inside the output, split */
    {90, 132, 64, 8192, 8192, 4, "nn", "matmul_warp", "table row sm_90, medium tile 64x128",
     {"splitk=4", "bm=64", NULL, NULL}, {NULL, NULL, NULL}},
    {90, 132, 64, 8192, 8192, 1, "nn", "matmul_warp", "table row sm_90, medium tile 64x128",
     {"splitk=4", "cc=1", "pred=1", "vec=1"}, {NULL, NULL, NULL}},
    /* tiny: the small tile */
    {90, 132, 1, 1, 1, 4, "tt", "matmul_warp", "table row sm_90, small tile 32x32", {"layout=tt", NULL, NULL, NULL},
     {"splitk", NULL, NULL}},
    /* fewer SMs move the balance: 3001 x 2999 makes 288 large tiles */
    {90, 114, 3001, 2999, 1531, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256",
     {"sk=2", NULL, NULL, NULL}, {NULL, NULL, NULL}},
    /* the seed-style template elsewhere; a newer architecture takes the newest row */
    {80, 108, 4096, 4096, 4096, 4, "nn", "matmul", "table row sm_80, large tile 128x128",
     {"bounds=0", "vec=4", NULL, NULL}, {"splitk", "sk", "pack"}},
    {75, 40, 4096, 4096, 4096, 4, "nn", "matmul", "table row sm_75, large tile 128x64",
     {"bm=128", NULL, NULL, NULL}, {NULL, NULL, NULL}},
    {80, 108, 100, 100, 100, 4, "nn", "matmul", "table row sm_80, small tile 32x32", {"bm=32", NULL, NULL, NULL},
     {NULL, NULL, NULL}},
    {100, 148, 4096, 4096, 4096, 4, "nn", "matmul_warp", "table row sm_90, large tile 128x256", {NULL, NULL, NULL, NULL},
     {NULL, NULL, NULL}},
};

int main(void)
{
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const want *w = &cases[i];
        const kg_gemm g = {w->m, w->n, w->k, 1.0f, 0.0f, NULL, 0, NULL, 0, NULL, 0};
        kgi_default d;
        char err[256], text[1024];
        int rc = kgi_default_choose(w->arch, w->sms, w->layout, &g, w->align, &d, err, sizeof err);
        CHECK_MSG(rc == 0, "case %zu: %s", i, err);
        if (rc != 0)
            continue;
        kgi_config_format(&d.config, text, sizeof text);
        CHECK_MSG(strcmp(d.tmpl, w->tmpl) == 0 && strcmp(d.table, w->table) == 0, "case %zu: %s, %s", i, d.tmpl,
                  d.table);
        for (int j = 0; j < 4 && w->has[j]; j++) {
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(w->has[j], "="), w->has[j]);
            const char *v = kgi_config_get(&d.config, name);
            CHECK_MSG(v && strcmp(v, strchr(w->has[j], '=') + 1) == 0, "case %zu: wants %s in '%s'", i, w->has[j],
                      text);
        }
        for (int j = 0; j < 3 && w->lacks[j]; j++)
            CHECK_MSG(kgi_config_find(&d.config, w->lacks[j]) < 0, "case %zu: sets %s in '%s'", i, w->lacks[j], text);
        CHECK_MSG(strcmp(kgi_config_get(&d.config, "layout"), w->layout) == 0, "case %zu: layout in '%s'", i, text);
        /* the template accepts it, for the architecture of the table's row */
        int sm = w->arch > 90 ? 90 : w->arch;
        kg_source *src = NULL;
        CHECK(kg_set_arch(ctx, sm) == KG_OK);
        CHECK_MSG(kg_render(ctx, d.tmpl, text, &src) == KG_OK, "case %zu: %s '%s': %s", i, d.tmpl, text,
                  kg_last_error(ctx));
        kg_source_free(src);
    }
    kg_context_close(ctx);
    TEST_DONE();
}
