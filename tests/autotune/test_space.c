/*
 * test_space.c -- the search space and pruning without a GPU.
 *
 * Enumeration of the matmul template's space against two limits tables
 * (sm_90 and sm_75), counted independently here from the template's stated
 * rules (threads per block, vector width, shared memory); every rejected
 * combination carries its reason; coordinates and neighbours; shards that
 * partition the space; --space overrides and their errors. After
 * compiling: registers x threads, spills and occupancy against limits
 * tables, on synthetic reports and on two real compiles through the pool.
 * The model ranks a register-tiled kernel ahead of a one-output kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune/model.h"
#include "autotune/pool.h"
#include "autotune/space.h"
#include "testutil.h"

/* The matmul template's space and rules, restated: an independent count. */
static void expected_counts(const kgi_limits *lim, int *ok, int *rejected)
{
    static const int bm[] = {16, 32, 64, 128, 256}, bk[] = {8, 16, 32}, t[] = {1, 2, 4, 8}, pad[] = {0, 1, 4},
                     vec[] = {1, 4};
    *ok = *rejected = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 4; d++)
                    for (int e = 0; e < 4; e++)
                        for (int f = 0; f < 3; f++)
                            for (int g = 0; g < 2; g++) {
                                int threads = (bm[a] / t[d]) * (bm[b] / t[e]);
                                long smem = 4L * (bm[a] * (bk[c] + pad[f]) + bk[c] * (bm[b] + pad[f]));
                                int fits = bm[a] % t[d] == 0 && bm[b] % t[e] == 0 &&
                                           threads <= lim->max_threads_per_block && bk[c] % vec[g] == 0 &&
                                           bm[b] % vec[g] == 0 && smem <= (long)lim->smem_per_block_optin;
                                if (fits)
                                    (*ok)++;
                                else
                                    (*rejected)++;
                            }
}

static void test_enumeration(kgi_host *h, int sm)
{
    const kgi_limits *lim = kgi_arch_limits(sm);
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    char err[1024];
    kg_status st = kgi_space_add_template(&sp, h, "matmul", "layout=nn", NULL, lim, err, sizeof err);
    CHECK_MSG(st == KG_OK, "%s", err);
    CHECK(kgi_space_finalize(&sp) == KG_OK);
    int ok, rejected;
    expected_counts(lim, &ok, &rejected);
    CHECK_MSG(sp.n == ok && sp.npruned == rejected, "sm_%d: %d candidates, %d rejected; expected %d and %d", sm,
              sp.n, sp.npruned, ok, rejected);
    CHECK(sp.enumerated == 7200);
    /* every rejection names the rule that broke */
    int with_reason = 0;
    for (int i = 0; i < sp.npruned; i++)
        with_reason += strstr(sp.pruned[i].reason, "threads per block") != NULL ||
                       strstr(sp.pruned[i].reason, "shared memory") != NULL;
    CHECK_MSG(with_reason == sp.npruned, "%d of %d rejections name their rule", with_reason, sp.npruned);
    /* canonical, distinct, complete, with resources */
    int bad = 0;
    for (int i = 0; i < sp.n; i++) {
        const kgi_cand *c = &sp.cand[i];
        bad += strstr(c->config, "bounds=1 layout=nn") == NULL || c->res.threads <= 0 || c->res.tile_m <= 0;
        bad += kgi_space_find(&sp, c->tmpl, c->coord) != i;
        if (i > 0)
            bad += strcmp(c->config, sp.cand[i - 1].config) == 0;
    }
    CHECK_MSG(bad == 0, "%d candidates are malformed or not found by their coordinates", bad);
    /* a neighbour along bm: one value up, the rest equal */
    int i = kgi_space_lookup(&sp, "matmul", "bm=64 bn=64 bk=16 tm=4 tn=4 pad=1 vec=4 bounds=1 layout=nn");
    CHECK(i >= 0);
    if (i >= 0) {
        unsigned char coord[KGI_SPACE_MAX_DIMS];
        memcpy(coord, sp.cand[i].coord, sizeof coord);
        coord[0]++;
        int j = kgi_space_find(&sp, 0, coord);
        CHECK(j >= 0 && strcmp(sp.cand[j].config, "bm=128 bn=64 bk=16 tm=4 tn=4 pad=1 vec=4 bounds=1 layout=nn") == 0);
    }
    /* a finalized space is looked up through the coordinates: each candidate found at its index, a value
     * the space does not take, or a layout it was not walked in, not at all */
    bad = 0;
    for (int c = 0; c < sp.n; c++)
        bad += kgi_space_lookup(&sp, "matmul", sp.cand[c].config) != c;
    CHECK_MSG(bad == 0, "%d candidates not found by their configuration", bad);
    const char *pad2 = "bm=64 bn=64 bk=16 tm=4 tn=4 pad=2 vec=4 bounds=1 layout=nn";
    CHECK(kgi_space_lookup(&sp, "matmul", pad2) == -1);
    CHECK(kgi_space_lookup(&sp, "matmul", "bm=64 bn=64 bk=16 tm=4 tn=4 pad=1 vec=4 bounds=1 layout=nt") == -1);
    CHECK(kgi_space_lookup(&sp, "matmul_warp", "bm=64 bn=64 bk=16 tm=4 tn=4 pad=1 vec=4 bounds=1 layout=nn") == -1);
    /* a configuration added after the walk (as the tuner adds the catalogue's kernels the space lacks), its
     * value ranked by finalizing again: found, and every earlier candidate still is, with a neighbour */
    int n0 = sp.n;
    char err2[1024];
    CHECK(kgi_space_add_config(&sp, h, "matmul", pad2, lim, err2, sizeof err2) == KG_OK && sp.n == n0 + 1);
    CHECK(kgi_space_finalize(&sp) == KG_OK);
    CHECK(kgi_space_lookup(&sp, "matmul", pad2) == n0);
    bad = 0;
    for (int c = 0; c < sp.n; c++)
        bad += kgi_space_lookup(&sp, "matmul", sp.cand[c].config) != c || kgi_space_find(&sp, 0, sp.cand[c].coord) != c;
    CHECK_MSG(bad == 0, "after a second finalize, %d candidates not found", bad);
    if (i >= 0) { /* pad=2 sits between pad=1 and pad=4 (ranks 1 and 3 now): the added one is pad=1's neighbour */
        unsigned char coord[KGI_SPACE_MAX_DIMS];
        memcpy(coord, sp.cand[i].coord, sizeof coord);
        int q = -1;
        for (int p = 0; p < sp.tmpl[0].nparams; p++)
            if (strcmp(sp.tmpl[0].param[p], "pad") == 0)
                q = p;
        CHECK(q >= 0);
        if (q >= 0) {
            coord[q]++;
            CHECK(kgi_space_find(&sp, 0, coord) == n0);
        }
    }
    kgi_space_free(&sp);
}

static void test_shards(kgi_host *h)
{
    const kgi_limits *lim = kgi_arch_limits(90);
    const char *space = "bm=32,64,128 bn=32,64 tm=2,4 tn=4 pad=0 vec=4";
    kgi_space whole, part;
    char err[1024];
    memset(&whole, 0, sizeof whole);
    CHECK(kgi_space_add_template(&whole, h, "matmul", "layout=nn", space, lim, err, sizeof err) == KG_OK);
    CHECK(whole.n == 3 * 2 * 3 * 2); /* bm x bn x bk (the template's 3) x tm */
    int seen = 0, dup = 0;
    unsigned char *hit = calloc((size_t)whole.n, 1);
    for (int s = 0; s < 3; s++) {
        memset(&part, 0, sizeof part);
        CHECK(kgi_space_add_template(&part, h, "matmul", "layout=nn", space, lim, err, sizeof err) == KG_OK);
        kgi_space_shard(&part, s, 3);
        for (int i = 0; i < part.n; i++) {
            int w = kgi_space_lookup(&whole, "matmul", part.cand[i].config);
            dup += w < 0 || hit[w];
            if (w >= 0)
                hit[w] = 1;
            seen++;
        }
        kgi_space_free(&part);
    }
    CHECK_MSG(seen == whole.n && dup == 0, "3 shards hold %d candidates (%d duplicates) of %d", seen, dup, whole.n);
    free(hit);
    /* a finalized space's shard: its coordinates' hash answers with the slice's own indices (the neighbours
     * of the local search and of annealing), and holds none of the other shards' candidates */
    CHECK(kgi_space_finalize(&whole) == KG_OK);
    for (int s = 0; s < 3; s++) {
        memset(&part, 0, sizeof part);
        CHECK(kgi_space_add_template(&part, h, "matmul", "layout=nn", space, lim, err, sizeof err) == KG_OK);
        CHECK(kgi_space_finalize(&part) == KG_OK);
        CHECK(kgi_space_shard(&part, s, 3) == KG_OK);
        int bad = 0, foreign = 0;
        for (int i = 0; i < part.n; i++)
            bad += kgi_space_find(&part, part.cand[i].tmpl, part.cand[i].coord) != i ||
                   kgi_space_lookup(&part, "matmul", part.cand[i].config) != i;
        for (int w = 0; w < whole.n; w++)
            if (w % 3 != s)
                foreign += kgi_space_find(&part, whole.cand[w].tmpl, whole.cand[w].coord) >= 0 ||
                           kgi_space_lookup(&part, "matmul", whole.cand[w].config) >= 0;
        CHECK_MSG(bad == 0 && foreign == 0, "shard %d of 3: %d of its %d candidates not found at their index, %d of "
                  "the others found", s, bad, part.n, foreign);
        kgi_space_free(&part);
    }
    kgi_space_free(&whole);
}

static void test_overrides(kgi_host *h)
{
    const kgi_limits *lim = kgi_arch_limits(90);
    kgi_space sp;
    char err[1024];
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_template(&sp, h, "matmul", "layout=tt", "bm=64 bn=64 bk=8 tm=4 tn=4 pad=0 vec=1,4", lim, err,
                                 sizeof err) == KG_OK);
    CHECK(sp.n == 2 && strstr(sp.cand[0].config, "layout=tt"));
    kgi_space_free(&sp);
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_template(&sp, h, "matmul", "layout=nn", "bm=64,999", lim, err, sizeof err) == KG_ERR_CONFIG);
    CHECK_MSG(strstr(err, "bm") && strstr(err, "999"), "%s", err);
    kgi_space_free(&sp);
    const char *tmpls[] = {"matmul"};
    CHECK(kgi_space_check_override(h, tmpls, 1, "bm=64 zz=1", err, sizeof err) == KG_ERR_CONFIG);
    CHECK_MSG(strstr(err, "'zz'"), "%s", err);
    CHECK(kgi_space_check_override(h, tmpls, 1, "bm", err, sizeof err) == KG_ERR_CONFIG);
    CHECK(kgi_space_check_override(h, tmpls, 1, "bm=64,128 tm=4", err, sizeof err) == KG_OK);
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_template(&sp, h, "nosuch", "layout=nn", NULL, lim, err, sizeof err) != KG_OK);
    kgi_space_free(&sp);
}

/* A compile report with the given registers, threads, shared memory and spills. */
static kgi_compiled report(int regs, unsigned tx, unsigned ty, size_t smem, int spills)
{
    kgi_compiled c;
    memset(&c, 0, sizeof c);
    c.info.registers = regs;
    c.info.spill_stores = spills;
    c.geo.block[0] = tx, c.geo.block[1] = ty, c.geo.block[2] = 1;
    c.geo.smem_dynamic = smem;
    return c;
}

static void test_post_compile_rules(void)
{
    const kgi_limits *h100 = kgi_arch_limits(90), *t4 = kgi_arch_limits(75);
    kgi_prune_rules rules = KGI_PRUNE_RULES_DEFAULT;
    kgi_compiled c = report(128, 32, 32, 0, 0); /* 1024 threads x 128 registers > 64K */
    kgi_prune_compiled(h100, &rules, &c);
    CHECK_MSG(c.prune == KGI_OUT_PRUNED_REGS && strstr(c.reason, "128 registers x 1024 threads"), "%s", c.reason);
    c = report(64, 32, 32, 0, 0); /* exactly the register file */
    kgi_prune_compiled(h100, &rules, &c);
    CHECK(c.prune == KGI_OUT_NONE && c.occ.blocks_per_sm == 1 && fabs(c.occ.occupancy - 0.5) < 1e-9);
    c = report(40, 16, 16, 0, 8);
    kgi_prune_compiled(h100, &rules, &c);
    CHECK_MSG(c.prune == KGI_OUT_PRUNED_SPILLS && strstr(c.reason, "8 bytes"), "%s", c.reason);
    rules.max_spill_bytes = 16;
    c = report(40, 16, 16, 0, 8);
    kgi_prune_compiled(h100, &rules, &c);
    CHECK(c.prune == KGI_OUT_NONE);
    /* sm_75: 64 KB per SM; 60 KB blocks of 2 warps hold 2 of 32 warps */
    rules.min_occupancy = 0.25;
    c = report(32, 64, 1, 60 * 1024, 0);
    kgi_prune_compiled(t4, &rules, &c);
    CHECK_MSG(c.prune == KGI_OUT_PRUNED_OCCUPANCY && strstr(c.reason, "shared memory"), "%s", c.reason);
    c = report(32, 64, 1, 60 * 1024, 0); /* the same block fits sm_90 three times over */
    kgi_prune_compiled(h100, &rules, &c);
    CHECK_MSG(c.prune == KGI_OUT_PRUNED_OCCUPANCY, "%s", c.reason);
    c = report(32, 256, 1, 60 * 1024, 0); /* 3 blocks x 8 warps = 24 of 64 */
    kgi_prune_compiled(h100, &rules, &c);
    CHECK(c.prune == KGI_OUT_NONE && c.occ.blocks_per_sm == 3);
}

/* Two real compiles through the pool (NVRTC, no GPU): one runnable, one
 * whose 256 accumulators per thread cannot stay in registers. */
static void test_pool(kgi_host *h)
{
    const kgi_limits *lim = kgi_arch_limits(90);
    kgi_space sp;
    char err[1024];
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_config(&sp, h, "matmul", "bm=64 bn=64 bk=16 tm=4 tn=4 pad=1 vec=4", lim, err, sizeof err) ==
          KG_OK);
    CHECK(kgi_space_add_config(&sp, h, "matmul", "bm=256 bn=256 bk=8 tm=16 tn=16 pad=0 vec=4", lim, err, sizeof err) ==
          KG_OK);
    CHECK(kgi_space_finalize(&sp) == KG_OK && sp.n == 2);
    int fds[2];
    CHECK(pipe(fds) == 0);
    kgi_prune_rules rules = KGI_PRUNE_RULES_DEFAULT;
    kgi_pool *pool;
    CHECK_MSG(kgi_pool_start(&pool, 2, &sp, lim, 90, NULL, &rules, fds[1], err, sizeof err) == KG_OK, "%s", err);
    kgi_pool_submit(pool, 0);
    kgi_pool_submit(pool, 1);
    kgi_pool_submit(pool, 1); /* once only */
    kgi_pool_wait(pool);
    kgi_compiled a, b;
    CHECK(kgi_pool_result(pool, 0, &a) && kgi_pool_result(pool, 1, &b));
    CHECK_MSG(a.prune == KGI_OUT_NONE && a.info.registers > 0 && a.smem > 0 && a.geo.block[0] == 16, "%s: %s",
              kgi_outcome_name(a.prune), a.reason);
    CHECK_MSG(b.prune == KGI_OUT_PRUNED_SPILLS || b.prune == KGI_OUT_PRUNED_REGS, "%s: %s", kgi_outcome_name(b.prune),
              b.reason);
    int taken = 0, idx;
    while (kgi_pool_take(pool, &idx))
        taken++;
    CHECK(taken == 2);
    char byte;
    CHECK(read(fds[0], &byte, 1) == 1);
    kgi_pool_stop(pool);
    close(fds[0]);
    close(fds[1]);
    kgi_space_free(&sp);
}

static void test_model(kgi_host *h)
{
    const kgi_limits *lim = kgi_arch_limits(90);
    kgi_space sp;
    char err[1024];
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_config(&sp, h, "matmul", "bm=16 bn=16 bk=16 tm=1 tn=1 pad=1 vec=1", lim, err, sizeof err) ==
          KG_OK);
    CHECK(kgi_space_add_config(&sp, h, "matmul", "bm=128 bn=128 bk=8 tm=8 tn=8 pad=4 vec=4", lim, err, sizeof err) ==
          KG_OK);
    kgi_model_dev dev;
    kgi_model_dev_arch(lim, &dev);
    int order[2];
    kgi_model_rank(&sp, &dev, 4096, 4096, 4096, order, NULL);
    CHECK(order[0] == 1 && order[1] == 0);
    double t = kgi_model_time_ms(&dev, &sp.cand[1].res, 0, 4096, 4096, 4096);
    double floor_ms = 2.0 * 4096 * 4096 * 4096 / (dev.sm_count * 128 * 2 * dev.clock_ghz * 1e9) * 1e3;
    CHECK_MSG(isfinite(t) && t >= floor_ms, "model %g ms, FP32 floor %g ms", t, floor_ms);
    /* a block that cannot be resident has no time */
    kgi_res huge = sp.cand[1].res;
    huge.smem = 300 * 1024;
    CHECK(isinf(kgi_model_time_ms(&dev, &huge, 0, 4096, 4096, 4096)));
    kgi_space_free(&sp);
}

int main(void)
{
    kgi_host *h = kgi_host_new();
    if (!h)
        return 1;
    test_enumeration(h, 90);
    test_enumeration(h, 75);
    test_shards(h);
    test_overrides(h);
    test_post_compile_rules();
    test_pool(h);
    test_model(h);
    kgi_host_free(h);
    TEST_DONE();
}
