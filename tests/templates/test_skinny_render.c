/*
 * test_skinny_render.c -- matmul_skinny without a GPU: every configuration
 * of its tuning space, in every layout, and a spread of those outside it
 * (vec=1, other slices of K) render deterministically and compile with
 * NVRTC for sm_90 without spills; what the source declares (shared memory,
 * threads, grid, the beta pass and its wait before the additions into C)
 * matches what render() returns; and the launcher takes a small side up to
 * ms and refuses ms + 1, naming it (requires.m_max / n_max), and binds
 * only the large operand to the vector loads' rules (requires.vector_operand):
 * the small one's leading dimension may be odd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_order.h"
#include "runtime/internal.h"
#include "skinny_space.h"
#include "testutil.h"

#define PTR(off) ((float *)(uintptr_t)(0x10000000u + (off)))

static const char *const layouts[] = {"nn", "nt", "tn", "tt"};

/* Checks one configuration; returns 1 when it rendered and compiled. */
static int check_config(kg_context *ctx, const char *config)
{
    kg_source *src = NULL, *again = NULL;
    kg_status st = kg_render(ctx, "matmul_skinny", config, &src);
    CHECK_MSG(st == KG_OK, "render %s: %s", config, kg_last_error(ctx));
    if (st != KG_OK)
        return 0;
    CHECK(kg_render(ctx, "matmul_skinny", config, &again) == KG_OK && again->len == src->len &&
          memcmp(again->text, src->text, src->len) == 0);
    kg_source_free(again);
    if (strstr(config, "pipe=2")) {
        /* the slice's first loads are issued before its X is staged, and one barrier serves the slice */
        const char *body = kernel_def(src->text, src->entry);
        const char *load = body ? strstr(body, "kgen_ldy") : NULL, *sync = body ? strstr(body, "__syncthreads();") : NULL;
        const char *wait = body ? strstr(body, "kgen_dep_wait();") : NULL;
        const char *again_sync = sync ? strstr(sync + 1, "__syncthreads();") : NULL;
        CHECK_MSG(load && sync && wait && load < sync && (!again_sync || again_sync > wait),
                  "%s: loads, then one barrier, before the sums", config);
    }
    char params[600];
    snprintf(params, sizeof params, "Parameters: %s", src->config);
    CHECK_MSG(strstr(src->text, params) != NULL, "%s: the header does not name every parameter", config);
    CHECK_MSG(strlen(src->entry) <= 40, "%s: entry %s is over 40 characters", config, src->entry);

    int ms = 0, kc = 0, vec = 0, cs = 1;
    char small = 0;
    const char *p;
    if ((p = strstr(src->config, "small=")))
        small = p[6];
    if ((p = strstr(src->config, "ms=")))
        ms = atoi(p + 3);
    if ((p = strstr(src->config, "kc=")))
        kc = atoi(p + 3);
    if ((p = strstr(src->config, "vec=")))
        vec = atoi(p + 4);
    if ((p = strstr(src->config, "cs=")))
        cs = atoi(p + 3);
    /* the small side is a precondition, the other side free */
    CHECK_MSG((small == 'm' ? src->geo.m_max : src->geo.n_max) == (unsigned)ms &&
                  (small == 'm' ? src->geo.n_max : src->geo.m_max) == 0,
              "%s: m_max %u n_max %u", config, src->geo.m_max, src->geo.n_max);
    CHECK(src->geo.ld_multiple == (unsigned)vec && src->geo.align == 4u * (unsigned)vec);
    CHECK(src->geo.vec_operands == (small == 'm' ? 2u : 1u));
    CHECK(src->geo.m_multiple == 1 && src->geo.n_multiple == 1 && src->geo.k_multiple == 1);
    /* grid: the large side along x, slices of K along y */
    CHECK_MSG(src->geo.grid[0].dim == (small == 'm' ? 'N' : 'M') &&
                  src->geo.grid[1].dim == (kc ? 'K' : '1') && (!kc || src->geo.grid[1].div == (unsigned)kc) &&
                  (kc || src->geo.grid[1].mul == (unsigned)cs),
              "%s: grid (%c, %c)", config, src->geo.grid[0].dim, src->geo.grid[1].dim);
    /* a beta pass exactly when K is sliced, and the wait before the first addition */
    int pre = src->pre_entry[0] != 0;
    CHECK_MSG(pre == (kc > 0) && src->pre_overlap == pre && src->pre_waits == pre, "%s: a beta pass exactly when kc > 0",
              config);
    const char *body = kernel_def(src->text, src->entry);
    const char *wait = body ? strstr(body, "kgen_dep_wait();") : NULL, *add = body ? strstr(body, "atomicAdd(") : NULL;
    CHECK_MSG(body && (pre ? (wait && add && wait < add) : (!wait && !add)),
              "%s: griddepcontrol.wait before the additions", config);
    CHECK_MSG(!pre || beta_pass_in_order(src->text, src->pre_entry),
              "%s: the beta pass waits, then launches the main kernel, then scales C", config);
    if (pre)
        CHECK(src->pre_geo.grid[0].dim == src->geo.grid[0].dim && src->pre_geo.block[0] == 256);
    /* cs > 1: the K slices one cluster of cs blocks along y, two cluster barriers */
    char dims[64];
    snprintf(dims, sizeof dims, "__cluster_dims__(1, %d, 1)", cs);
    const char *sync = strstr(src->text, "kgen_cluster_sync();");
    CHECK_MSG(cs > 1 ? (strstr(src->text, dims) && sync && strstr(sync + 1, "kgen_cluster_sync();") &&
                        strstr(src->text, "kgen_dsmem_ld(part + e, 0)"))
                     : !strstr(src->text, "__cluster_dims__"),
              "%s: a cluster of cs blocks exactly when cs > 1", config);

    kgi_nvrtc_result res;
    char *err = NULL;
    st = kgi_nvrtc_compile(src->text, "kgen.cu", 90, &res, &err);
    CHECK_MSG(st == KG_OK, "compile %s: %s", config, err ? err : "?");
    if (st == KG_OK) {
        CHECK_MSG(res.info.smem_static == src->geo.smem_static, "%s: declared %zu bytes, compiler reports %zu",
                  config, src->geo.smem_static, res.info.smem_static);
        CHECK_MSG(res.info.spill_stores == 0 && res.info.spill_loads == 0, "%s: %d bytes spilled, %d reloaded",
                  config, res.info.spill_stores, res.info.spill_loads);
        CHECK(res.info.registers > 0 && res.info.registers <= 255);
    }
    free(err);
    kgi_nvrtc_result_free(&res);

    /* the launcher: ms rows (columns) taken, ms + 1 refused by name */
    int big = 1003, k = 517, ldm = vec;
    for (int extra = 0; extra <= 1; extra++) {
        int m = small == 'm' ? ms + extra : big, n = small == 'n' ? ms + extra : big;
        int at = src->geo.layout[0] == 't', bt = src->geo.layout[1] == 't';
        /* the large operand's rows whole vectors, the small one's any (odd) */
        int lda = ((at ? m : k) + ldm - 1) / ldm * ldm, ldb = ((bt ? k : n) + ldm - 1) / ldm * ldm;
        if (small == 'm')
            lda = (at ? m : k) + 1 + (at ? m : k) % 2;
        else
            ldb = (bt ? k : n) + 1 + (bt ? k : n) % 2;
        kg_gemm g = {m, n, k, 1.0f, 0.0f, PTR(0), lda, PTR(0x1000000), ldb, PTR(0x2000000), n};
        char why[256] = "";
        int ok = kgi_geometry_admits(&src->geo, &g, why, sizeof why);
        if (extra)
            CHECK_MSG(!ok && strstr(why, small == 'm' ? "M=" : "N=") && strstr(why, "exceeds"),
                      "%s: M=%d N=%d: expected a refusal naming the small side, got '%s'", config, m, n, why);
        else
            CHECK_MSG(ok, "%s: M=%d N=%d refused: %s", config, m, n, why);
    }
    kg_source_free(src);
    return st == KG_OK;
}

int main(void)
{
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_set_arch(ctx, 90) != KG_OK) {
        fprintf(stderr, "context: %s\n", ctx ? kg_last_error(ctx) : "out of memory");
        return 1;
    }
    /* the tuning space, as the template declares it */
    static char space[SKINNY_MAX_CONFIGS][256];
    int nspace = skinny_space(space, SKINNY_MAX_CONFIGS);
    CHECK_MSG(nspace > 0, "matmul_skinny declares no space");
    int compiled = 0, total = 0;
    for (int l = 0; l < 4; l++) {
        for (int c = 0; c < nspace; c++) {
            char config[512];
            snprintf(config, sizeof config, "%.255s layout=%s", space[c], layouts[l]);
            compiled += check_config(ctx, config);
            total++;
        }
    }
    CHECK_MSG(nspace <= 128, "%d configurations in the space per layout (at most 128)", nspace);
    /* outside the space: other slices of K (4-byte loads among them), cs = 2, pipe = 1 and 2 */
    static const char *const extra[] = {
        "small=m ms=1 vec=1 kc=2048", "small=n ms=16 vec=1 kc=256", "small=m ms=16 vec=1 kc=128",
        "small=n ms=2 vec=1 kc=4096", "small=m ms=8 vec=4 kc=128", "small=n ms=4 vec=4 kc=2048",
        "small=m ms=16 vec=1 kc=256 pipe=1", "small=n ms=1 vec=1 kc=0 pipe=1",
        "small=m ms=2 vec=4 kc=1024 pipe=1", "small=n ms=16 vec=4 kc=0 pipe=1",
        "small=m ms=16 vec=1 kc=0 cs=2", "small=n ms=2 vec=4 kc=0 cs=2 pipe=1",
        "small=m ms=1 vec=4 kc=256 pipe=2", "small=n ms=2 vec=4 kc=4096 pipe=2", "small=m ms=4 vec=1 kc=256 pipe=2",
        "small=n ms=16 vec=4 kc=128 pipe=2", "small=m ms=8 vec=1 kc=512 pipe=2",
    };
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) {
        for (int l = 0; l < 4; l++) {
            char config[256];
            snprintf(config, sizeof config, "%s layout=%s", extra[i], layouts[l]);
            compiled += check_config(ctx, config);
            total++;
        }
    }
    /* a cluster takes all of K (kc=0), and needs sm_90; pipe=2 stages a slice of K (kc > 0) */
    kg_source *bad = NULL;
    CHECK(kg_render(ctx, "matmul_skinny", "small=m ms=2 kc=0 pipe=2", &bad) == KG_ERR_CONFIG && !bad);
    CHECK_MSG(strstr(kg_last_error(ctx), "pipe=2") && strstr(kg_last_error(ctx), "kc"), "got '%s'",
              kg_last_error(ctx));
    CHECK(kg_render(ctx, "matmul_skinny", "small=m ms=4 cs=4 kc=256", &bad) == KG_ERR_CONFIG && !bad);
    CHECK_MSG(strstr(kg_last_error(ctx), "cs=4") && strstr(kg_last_error(ctx), "kc=0"), "got '%s'",
              kg_last_error(ctx));
    CHECK(kg_set_arch(ctx, 80) == KG_OK);
    CHECK(kg_render(ctx, "matmul_skinny", "small=n ms=4 cs=8 kc=0", &bad) == KG_ERR_CONFIG && !bad);
    CHECK_MSG(strstr(kg_last_error(ctx), "sm_90"), "got '%s'", kg_last_error(ctx));
    printf("matmul_skinny: %d of %d configurations rendered and compiled\n", compiled, total);
    kg_context_close(ctx);
    TEST_DONE();
}
