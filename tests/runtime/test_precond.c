/*
 * test_precond.c -- what kg_kernel_launch refuses, without a GPU: a kernel
 * without bound checks on a shape that is not a multiple of its tile, a
 * vector-load kernel on unaligned leading dimensions or pointers, leading
 * dimensions below the minimum, grids beyond the device's limits; each
 * refusal names the broken precondition (kgi_geometry_admits, which
 * kg_kernel_launch calls). And kg_matmul's pick (kg_matmul_explain), from
 * a catalogue (argv[1] as KGEN_CATALOGUE) or the model-only choice, never
 * uses bounds=0 on a shape that is not a multiple, nor vec>1 where the
 * alignment does not allow it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "testutil.h"

static kgi_geometry geometry(kg_context *ctx, const char *config)
{
    kg_source *src;
    kgi_geometry g;
    memset(&g, 0, sizeof g);
    if (kg_render(ctx, NULL, config, &src) == KG_OK) {
        g = src->geo;
        kg_source_free(src);
    }
    return g;
}

/* A fake device address: only its alignment matters here. */
#define PTR(off) ((float *)(uintptr_t)(0x10000000u + (off)))

static int admits(const kgi_geometry *geo, kg_gemm g, const char *expect)
{
    char why[256] = "";
    int ok = kgi_geometry_admits(geo, &g, why, sizeof why);
    if (expect) {
        CHECK_MSG(!ok && strstr(why, expect), "M=%d N=%d K=%d lda=%d ldb=%d ldc=%d: expected a refusal naming '%s', got %s '%s'",
                  g.m, g.n, g.k, g.lda, g.ldb, g.ldc, expect, ok ? "acceptance" : "refusal", why);
    } else {
        CHECK_MSG(ok, "M=%d N=%d K=%d lda=%d ldb=%d: refused: %s", g.m, g.n, g.k, g.lda, g.ldb, why);
    }
    return ok;
}

static kg_gemm gemm(int m, int n, int k, int lda, int ldb, int ldc)
{
    kg_gemm g = {m, n, k, 1.0f, 0.0f, PTR(0), lda, PTR(0x100000), ldb, PTR(0x200000), ldc};
    return g;
}

int main(int argc, char **argv)
{
    setenv("KGEN_CACHE", "0", 1);
    setenv("KGEN_DB", "/nonexistent/kgen-test.db", 1);
    if (argc == 2) /* a catalogue for sm_90 (the synthetic fixture) */
        setenv("KGEN_CATALOGUE", argv[1], 1);
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);

    /* no bound checks: M, N, K multiples of the tile */
    kgi_geometry b0 = geometry(ctx, "bm=64 bn=32 bk=16 tm=4 tn=2 bounds=0");
    CHECK(b0.m_multiple == 64 && b0.n_multiple == 32 && b0.k_multiple == 16);
    admits(&b0, gemm(128, 64, 32, 32, 64, 64), NULL);
    admits(&b0, gemm(100, 64, 32, 32, 64, 64), "M=100 is not a multiple of 64");
    admits(&b0, gemm(128, 48, 32, 32, 48, 48), "N=48 is not a multiple of 32");
    admits(&b0, gemm(128, 64, 33, 33, 64, 64), "K=33 is not a multiple of 16");
    admits(&b0, gemm(1, 1, 1, 1, 1, 1), "M=1");
    /* with bound checks the same shapes run */
    kgi_geometry b1 = geometry(ctx, "bm=64 bn=32 bk=16 tm=4 tn=2 bounds=1");
    admits(&b1, gemm(100, 48, 33, 33, 48, 48), NULL);
    admits(&b1, gemm(1, 1, 1, 1, 1, 1), NULL);

    /* vector loads: lda, ldb multiples of vec, A and B aligned */
    kgi_geometry v4 = geometry(ctx, "bm=64 bn=64 bk=16 tm=4 tn=4 vec=4");
    CHECK(v4.ld_multiple == 4 && v4.align == 16);
    admits(&v4, gemm(100, 100, 100, 100, 100, 100), NULL);
    admits(&v4, gemm(100, 100, 99, 99, 100, 100), "lda=99 is not a multiple of 4");
    admits(&v4, gemm(100, 99, 100, 100, 99, 99), "ldb=99 is not a multiple of 4");
    kg_gemm g = gemm(100, 100, 100, 100, 100, 100);
    g.a = PTR(4);
    admits(&v4, g, "A is not 16-byte aligned");
    g = gemm(100, 100, 100, 100, 100, 100);
    g.b = PTR(8);
    admits(&v4, g, "B is not 16-byte aligned");
    kgi_geometry v2 = geometry(ctx, "bm=64 bn=64 bk=16 tm=4 tn=4 vec=2");
    g.b = PTR(0x100008);
    admits(&v2, g, NULL);

    /* pack=1: any lda, ldb and float-aligned pointers; the launcher packs an
     * operand whose ld or pointer is not 16-byte granular, or whose
     * contiguous extent is M or N and not a multiple of 4 */
    {
        kg_source *src = NULL;
        CHECK(kg_render(ctx, "matmul_warp", "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4 pack=1", &src) == KG_OK);
        kgi_geometry pk = src ? src->geo : v4;
        kg_source_free(src);
        CHECK(pk.pack_multiple == 4 && pk.ld_multiple == 1 && pk.align == 4);
        admits(&pk, gemm(4095, 4095, 4095, 4095, 4095, 4095), NULL);
        CHECK(kgi_packed_operands(&pk, &(kg_gemm){4095, 4095, 4095, 1, 0, PTR(0), 4095, PTR(0x100000), 4095,
                                                  PTR(0x200000), 4095}) == 3);
        g = gemm(4096, 4096, 4096, 4096, 4096, 4096);
        CHECK(kgi_packed_operands(&pk, &g) == 0);
        g = gemm(4096, 4094, 4094, 4096, 4096, 4096); /* K along A's rows: no; N along B's: yes */
        CHECK(kgi_packed_operands(&pk, &g) == 2);
        g.n = 4096;
        g.a = PTR(4); /* a pointer off the 16-byte grid */
        CHECK(kgi_packed_operands(&pk, &g) == 1);
        kgi_geometry p0 = v4;
        CHECK(kgi_packed_operands(&p0, &g) == 0); /* no packing kernel: never */
        CHECK(kg_render(ctx, "matmul_warp", "stages=1 vec=4 pack=1 layout=tt", &src) == KG_OK);
        kgi_geometry tt = src ? src->geo : v4;
        kg_source_free(src);
        g = gemm(4094, 4096, 4094, 4096, 4096, 4096); /* tt: A stored K x M (M contiguous), B N x K */
        CHECK(kgi_packed_operands(&tt, &g) == 1);
    }

    /* leading dimensions against the layout */
    kgi_geometry tn = geometry(ctx, "layout=tn");
    admits(&tn, gemm(50, 40, 30, 50, 40, 40), NULL); /* A stored K x M: lda >= M */
    admits(&tn, gemm(50, 40, 30, 30, 40, 40), "lda=30 is less than M");
    kgi_geometry nt = geometry(ctx, "layout=nt");
    admits(&nt, gemm(50, 40, 30, 30, 30, 40), NULL); /* B stored N x K: ldb >= K */
    admits(&nt, gemm(50, 40, 30, 30, 29, 40), "ldb=29 is less than K");
    admits(&nt, gemm(50, 40, 30, 30, 30, 39), "ldc=39 is less than N");
    admits(&nt, gemm(0, 40, 30, 30, 30, 40), "at least 1");
    g = gemm(50, 40, 30, 30, 30, 40);
    g.c = NULL;
    admits(&nt, g, "C is a NULL pointer");
    g = gemm(50, 40, 30, 30, 30, 40);
    g.c = PTR(0x200002);
    admits(&nt, g, "C is not aligned");

    /* the grid: at most 65535 blocks along y */
    kgi_geometry small = geometry(ctx, "bm=16 bn=16 bk=16 tm=1 tn=1");
    /* beyond 65535 blocks along y the launch is split into chunks of rows */
    admits(&small, gemm(16 * 65535, 16, 16, 16, 16, 16), NULL);
    admits(&small, gemm(16 * 65535 + 1, 16, 16, 16, 16, 16), NULL);
    admits(&small, gemm(2147483647 - 4096 + 1, 16, 16, 16, 16, 16), "the largest dimension");
    admits(&small, gemm(16, 16, 2147483647, 16, 2147483647, 16), "the largest dimension");

    /* kg_matmul's pick, from the catalogue (KGEN_CATALOGUE: argv[1]) on
     * sm_90 and the model-only choice on sm_80, admits the call it was
     * made for: bound checks where the shape is not a multiple of the
     * tile, no vector loads (or packed operands) where the leading
     * dimensions forbid them */
    static const struct { const char *layout; int m, n, k; } calls[] = {
        {"nn", 4096, 4096, 4096}, {"nn", 2048, 2048, 2048}, {"nn", 4224, 4096, 4096}, {"nn", 8192, 8192, 128},
        {"tt", 4096, 4096, 4095}, {"nn", 3001, 2999, 1531}, {"nn", 3001, 2999, 511}, {"nn", 2047, 2047, 2047},
        {"nn", 1000, 1000, 300},  {"nt", 7, 5, 3},          {"nn", 256, 256, 65536}, {"nn", 64, 8192, 8192},
        {"tn", 1000, 1000, 1000}, {"nn", 4097, 4096, 4096}, {"tn", 1, 1, 1},         {"tt", 33, 4095, 17},
    };
    char config[512], why[2048];
    for (int arch = 90; arch >= 80; arch -= 10) {
        CHECK(kg_set_arch(ctx, arch) == KG_OK);
        for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
            const char *l = calls[i].layout;
            int m = calls[i].m, n = calls[i].n, k = calls[i].k;
            CHECK_MSG(kg_matmul_explain(ctx, l, m, n, k, config, sizeof config, why, sizeof why) == KG_OK,
                      "sm_%d %s %dx%dx%d: %s", arch, l, m, n, k, kg_last_error(ctx));
            /* the template: named in the reason unless it is "matmul" */
            char tmpl[64] = "matmul";
            const char *t = strstr(why, "[template ");
            if (t)
                snprintf(tmpl, sizeof tmpl, "%.*s", (int)strcspn(t + 10, "]"), t + 10);
            kg_source *src = NULL;
            CHECK_MSG(kg_render(ctx, tmpl, config, &src) == KG_OK, "sm_%d %s: %s", arch, config, kg_last_error(ctx));
            if (!src)
                continue;
            int lda = l[0] == 't' ? m : k, ldb = l[1] == 't' ? k : n;
            CHECK_MSG(admits(&src->geo, gemm(m, n, k, lda, ldb, n), NULL), "sm_%d %s %dx%dx%d: %s (%s)", arch, l, m,
                      n, k, config, why);
            CHECK_MSG(arch != 90 || strstr(why, "catalogue sm_90 ("), "sm_90 %s %dx%dx%d: %s", l, m, n, k, why);
            CHECK_MSG(arch != 80 || strstr(why, "no catalogue for sm_80: model-only choice") ||
                          strstr(why, "catalogue sm_80 ("),
                      "sm_80: %s", why);
            kg_source_free(src);
        }
    }
    CHECK(kg_matmul_explain(ctx, "xy", 7, 5, 3, config, sizeof config, why, sizeof why) == KG_ERR_INVALID_ARG);
    CHECK(kg_matmul_explain(ctx, "nn", 0, 5, 3, config, sizeof config, why, sizeof why) == KG_ERR_INVALID_ARG);
    kg_context_close(ctx);

    /* the beta pass's carveout when it overlaps its main kernel: the smallest
     * capacity (KB: 0 8 16 32 64 100 132 164 196 228) holding the main
     * kernel's blocks, in percent of an H200's 228 KB, rounded up */
    const size_t h200 = 228 * 1024, rsv = 1024;
    CHECK_MSG(kgi_carveout_percent(h200, rsv, 4, 38400) == 72, "4 x 38400 B -> 164 KB: %d",
              kgi_carveout_percent(h200, rsv, 4, 38400));
    CHECK_MSG(kgi_carveout_percent(h200, rsv, 3, 38400) == 58, "3 x 38400 B -> 132 KB: %d",
              kgi_carveout_percent(h200, rsv, 3, 38400));
    CHECK_MSG(kgi_carveout_percent(h200, rsv, 1, 50176) == 29, "1 x 50176 B -> 64 KB: %d",
              kgi_carveout_percent(h200, rsv, 1, 50176));
    CHECK_MSG(kgi_carveout_percent(h200, rsv, 1, 75264) == 44, "1 x 75264 B -> 100 KB: %d",
              kgi_carveout_percent(h200, rsv, 1, 75264));
    CHECK(kgi_carveout_percent(h200, 0, 1, 0) == 0);
    CHECK(kgi_carveout_percent(h200, rsv, 8, 64 * 1024) == 100); /* more than the SM has: the most */
    CHECK(kgi_carveout_percent(100 * 1024, rsv, 2, 40000) == 100); /* 82 KB on a 100 KB part: 100 KB */
    CHECK(kgi_carveout_percent(100 * 1024, rsv, 1, 20000) == 32); /* 21 KB: 32 of 100 KB */
    TEST_DONE();
}
