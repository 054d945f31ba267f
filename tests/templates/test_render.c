/*
 * test_render.c -- renders many configurations of the matmul template,
 * compiles each with NVRTC for sm_90 and checks what the generated file
 * declares against what the compiler reports. Needs no GPU.
 *
 * The configurations are a fixed list that covers every value of every
 * enumerated parameter (vec, bounds, layout) and a spread of each integer
 * parameter, from its minimum to its maximum, including odd and non-power-of
 * -two tiles and tiles large enough to need dynamic shared memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "testutil.h"

static const char *const configs[] = {
    /* the seeds' kernels */
    "bm=16 bn=16 bk=16 tm=1 tn=1 pad=0",
    "bm=16 bn=16 bk=16 tm=1 tn=1 pad=1",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=1",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=0 bounds=0",
    "bm=1 bn=1 bk=1 tm=1 tn=1 pad=0", /* naive: one element per thread and phase */
    "bm=2 bn=2 bk=1 tm=1 tn=1 pad=0",
    "bm=8 bn=8 bk=8 tm=1 tn=1 pad=1 layout=tt",
    /* register tiles */
    "bm=64 bn=64 bk=16 tm=4 tn=4",
    "bm=64 bn=64 bk=8 tm=8 tn=8 vec=4",
    "bm=128 bn=128 bk=8 tm=8 tn=8 vec=4",
    "bm=128 bn=128 bk=16 tm=8 tn=8 vec=4 pad=4",
    "bm=128 bn=64 bk=16 tm=8 tn=4 vec=2 layout=nt",
    "bm=64 bn=128 bk=16 tm=4 tn=8 vec=2 layout=tn",
    "bm=128 bn=128 bk=32 tm=8 tn=8 vec=4 layout=tt",
    "bm=256 bn=128 bk=16 tm=16 tn=8 vec=4",
    "bm=128 bn=256 bk=8 tm=8 tn=16 vec=4 pad=0",
    "bm=256 bn=256 bk=8 tm=16 tn=16 vec=4 pad=0",
    "bm=32 bn=32 bk=32 tm=2 tn=2 pad=2",
    "bm=48 bn=48 bk=12 tm=3 tn=3 pad=3",
    "bm=96 bn=96 bk=24 tm=6 tn=6 pad=5 layout=nt",
    "bm=80 bn=40 bk=20 tm=5 tn=5 pad=7 layout=tn vec=4",
    "bm=70 bn=70 bk=7 tm=7 tn=7 pad=1",
    "bm=33 bn=31 bk=5 tm=3 tn=1 pad=0",
    "bm=30 bn=30 bk=30 tm=1 tn=1 pad=31",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=32",
    "bm=16 bn=64 bk=16 tm=1 tn=4 vec=4 pad=8",
    "bm=64 bn=16 bk=16 tm=4 tn=1 vec=4 pad=8 layout=tt",
    "bm=512 bn=16 bk=4 tm=16 tn=1 pad=0",
    "bm=16 bn=512 bk=4 tm=1 tn=16 pad=0 vec=4",
    "bm=512 bn=32 bk=2 tm=16 tn=2 pad=1 layout=nt",
    "bm=11 bn=13 bk=3 tm=11 tn=13 pad=0",
    "bm=16 bn=16 bk=256 tm=1 tn=1 pad=0 vec=4",
    "bm=8 bn=8 bk=128 tm=2 tn=2 pad=4 vec=2 layout=tn",
    /* large tiles: dynamic shared memory above 48 KB */
    "bm=256 bn=256 bk=32 tm=16 tn=16 vec=4 pad=0",
    "bm=256 bn=128 bk=64 tm=16 tn=8 vec=4 pad=1 layout=tt",
    "bm=128 bn=128 bk=64 tm=8 tn=8 vec=4 pad=4 layout=nt",
    "bm=512 bn=64 bk=32 tm=16 tn=4 vec=4 pad=0 layout=tn",
    "bm=64 bn=64 bk=256 tm=4 tn=4 vec=4 pad=1",
    /* no bound checks, every layout and width */
    "bm=64 bn=64 bk=16 tm=4 tn=4 bounds=0 layout=nn vec=1",
    "bm=64 bn=64 bk=16 tm=4 tn=4 bounds=0 layout=nt vec=2",
    "bm=64 bn=64 bk=16 tm=4 tn=4 bounds=0 layout=tn vec=4",
    "bm=64 bn=64 bk=16 tm=4 tn=4 bounds=0 layout=tt vec=4",
    "bm=128 bn=128 bk=8 tm=8 tn=8 bounds=0 vec=4 pad=0",
    "bm=128 bn=128 bk=16 tm=8 tn=8 bounds=0 vec=4 pad=4 layout=tt",
    "bm=32 bn=32 bk=32 tm=1 tn=1 bounds=0 layout=tn",
    "bm=16 bn=16 bk=16 tm=1 tn=1 bounds=0 layout=nt vec=2",
    /* ragged cooperative loads (tile not a multiple of the thread count) */
    "bm=64 bn=64 bk=4 tm=4 tn=4 vec=4",
    "bm=128 bn=32 bk=8 tm=4 tn=4 vec=1 layout=tn",
    "bm=96 bn=64 bk=8 tm=6 tn=8 vec=2 layout=nt",
    "bm=64 bn=96 bk=12 tm=8 tn=6 vec=4 layout=tt",
    /* every layout with the default tile */
    "layout=nn pad=2 vec=4",
    "layout=nt",
    "layout=tn",
    "layout=tt",
    "vec=2",
    "vec=4 layout=tt",
    "bounds=0 pad=0 vec=4",
    "pad=0",
    "pad=16 layout=nt",
    "tm=1 tn=1 bm=32 bn=32 bk=16 vec=4",
    "tm=2 tn=8 bm=32 bn=128 bk=16 vec=4 layout=tn",
    "tm=8 tn=2 bm=128 bn=32 bk=16 vec=4 layout=nt",
    "tm=16 tn=16 bm=128 bn=128 bk=8 vec=4 pad=0",
};

/* Each parameter name appears in the header comment with its value. */
static int header_names_all(const char *text, const char *canon)
{
    const char *hdr_end = strstr(text, "extern \"C\"");
    char tok[64];
    for (const char *p = canon; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(tok, sizeof tok, "%.*s", (int)n, p);
        const char *hit = strstr(text, tok);
        if (!hit || (hdr_end && hit > hdr_end))
            return 0;
        p += n;
        p += strspn(p, " ");
    }
    return 1;
}

int main(void)
{
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    CHECK(kg_set_arch(ctx, 90) == KG_OK);
    size_t nconf = sizeof configs / sizeof *configs;
    char seen[128][600];
    size_t nseen = 0;
    int dynamic = 0;
    for (size_t i = 0; i < nconf; i++) {
        kg_source *src = NULL, *again = NULL;
        kg_status st = kg_render(ctx, "matmul", configs[i], &src);
        CHECK_MSG(st == KG_OK, "render '%s': %s", configs[i], kg_last_error(ctx));
        if (st != KG_OK)
            continue;
        /* distinct configurations only */
        for (size_t j = 0; j < nseen; j++)
            CHECK_MSG(strcmp(seen[j], src->config) != 0, "duplicate configuration %s", src->config);
        snprintf(seen[nseen++], sizeof seen[0], "%s", src->config);

        /* Determinism: the same configuration gives the same bytes. */
        CHECK(kg_render(ctx, "matmul", src->config, &again) == KG_OK);
        CHECK_MSG(again && again->len == src->len && memcmp(again->text, src->text, src->len) == 0,
                  "render of %s is not deterministic", src->config);
        kg_source_free(again);

        CHECK_MSG(header_names_all(src->text, src->config), "header of %s lacks a parameter", src->config);
        CHECK(strstr(src->text, "extern \"C\" __global__ void __launch_bounds__(") != NULL);
        unsigned threads = src->geo.block[0] * src->geo.block[1] * src->geo.block[2];
        char lb[64];
        snprintf(lb, sizeof lb, "__launch_bounds__(%u)", threads);
        CHECK_MSG(strstr(src->text, lb) != NULL, "%s: %s missing", src->config, lb);
        CHECK(strstr(src->text, src->entry) != NULL);

        kgi_nvrtc_result res;
        char *err = NULL;
        st = kgi_nvrtc_compile(src->text, "kgen.cu", 90, &res, &err);
        CHECK_MSG(st == KG_OK, "compile %s: %s", src->config, err ? err : "?");
        if (st == KG_OK) {
            /* What the file declares is what the compiler allocates. */
            CHECK_MSG(res.info.smem_static == src->geo.smem_static,
                      "%s: declared %zu bytes static shared memory, compiler reports %zu", src->config,
                      src->geo.smem_static, res.info.smem_static);
            if (src->geo.smem_dynamic) {
                dynamic++;
                CHECK(src->geo.smem_dynamic > 48 * 1024);
                CHECK(strstr(src->text, "extern __shared__") != NULL);
            }
            CHECK(res.info.registers > 0 && res.info.registers <= 255);
            CHECK(res.cubin_size > 0);
        }
        free(err);
        kgi_nvrtc_result_free(&res);
        kg_source_free(src);
    }
    CHECK_MSG(nseen >= 60, "only %zu distinct configurations", nseen);
    CHECK(dynamic >= 3);
    printf("rendered and compiled %zu configurations (%d with dynamic shared memory)\n", nseen, dynamic);
    kg_context_close(ctx);
    TEST_DONE();
}
