/*
 * test_warp_render.c -- the matmul_warp template without a GPU: every
 * configuration below renders deterministically and compiles with NVRTC
 * for sm_90 (the fast ones the tuner found without spilling and within the
 * register budget they were measured at), split-K kernels come with their
 * beta kernel, check() rejects broken configurations naming the parameter,
 * and accesses() (what kgen explain analyses) lists addresses that stay
 * inside the operands and the shared-memory buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_order.h"
#include "runtime/internal.h"
#include "testutil.h"

/* configuration, the most registers it may use (0: no bound), spills allowed */
static const struct {
    const char *config;
    int max_regs;
    int spills_ok;
} configs[] = {
    {"", 128, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8", 255, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1", 255, 0},
    {"bm=128 bn=128 bk=8 wm=32 wn=64 stages=1 raster=8 minb=2", 128, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 splitk=4", 0, 0},
    {"bm=128 bn=128 bk=16 wm=32 wn=64 stages=2 minb=2 splitk=64", 128, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 splitk=64 red=4", 255, 0},
    {"bm=32 bn=32 bk=16 wm=16 wn=32 tm=2 tn=4 vec=1 stages=3 splitk=8", 0, 0},
    {"bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3 raster=8", 0, 0},
    {"layout=nt at=0 bt=1 stages=3", 0, 1},
    {"layout=tn stages=1 vec=2 at=0", 0, 1},
    {"layout=tt stages=4 vec=1 raster=4 pad=0", 0, 1},
    {"bm=96 bn=64 bk=12 wm=48 wn=32 tm=3 tn=2 ln=16 vec=2 pad=1 stages=1", 0, 1},
    {"bm=64 bn=32 bk=8 wm=64 wn=8 tm=2 tn=8 ln=1 stages=2 layout=tt", 0, 1},
    {"bm=32 bn=64 bk=4 wm=32 wn=64 tm=1 tn=2 ln=32 stages=3 pad=8 layout=nt", 0, 1},
    {"bm=64 bn=64 bk=16 wm=32 wn=32 bounds=0 stages=1 at=0", 0, 1},
    {"bm=256 bn=128 bk=32 wm=64 wn=64 stages=3", 0, 1}, /* 100 KB: dynamic shared memory */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=1 red=4", 255, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 sk=1 red=4 cc=1", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=32 stages=3 sk=1 layout=tn", 0, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 cc=1", 200, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 raster=8 vec=1 cc=1 layout=nt", 0, 0},
    {"at=0 bt=1 stages=4 vec=1 cc=1", 0, 1},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 raster=8 vec=1 cc=1 splitk=3 cl=1", 0, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 vec=1 cc=1", 255, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=32 stages=2 vec=2 splitk=8 cl=1 layout=tt", 0, 0},
    /* ba=1: B through cp.async in the register pipeline holds fewer registers */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 ba=1", 224, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=1 cc=1 ba=1 splitk=2 red=4", 0, 0},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=1 vec=2 ba=1 mid=1 layout=nt", 0, 1},
    /* pred=1: no branch around the next tile's copies; the compact 64 x 128
     * kernel then needs fewer registers than pred=0's 167 */
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 raster=8 vec=1 cc=1 pred=1", 160, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 pred=1", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 pred=1 layout=tn", 0, 0},
    /* pack=1: the 16-byte kernels on packed operands, with the packing kernel */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=1 red=4 pack=1", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 pack=1 layout=tt", 0, 0},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 pack=1 layout=nt", 0, 0},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=4 vec=2 mid=1 pred=1 layout=tt", 0, 1},
    /* sk=2: stream-K over the last partial wave only, the shared pieces first */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=2 red=4 pack=1", 255, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=1 sk=2 red=4", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 raster=8 vec=1 cc=1 pred=1 sk=2 layout=tn", 0, 0},
    /* skw=1: stream-K's workspace variant and post kernel beside the main one */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 sk=1 red=4 cc=1 skw=1", 255, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=2 red=4 pack=1 skw=1 layout=nt", 255, 0},
    {"bm=32 bn=64 bk=8 wm=32 wn=64 stages=3 vec=1 cc=1 sk=1 red=4 minb=2 skw=1 layout=tt", 0, 0},
    /* cst=1: C's unaligned rows stored through shared memory (the 4-byte 64 x 64 and 32 x 64 kernels
     * without spills; the 128-output kernels with 4-byte copies and stream-K spill with it) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cst=1", 128, 0},
    {"bm=32 bn=64 bk=8 wm=16 wn=32 stages=3 vec=1 cc=1 cst=1 layout=tt", 128, 0},
    {"bm=128 bn=16 bk=8 wm=32 wn=16 tm=4 tn=4 ln=4 stages=1 vec=4 pack=1 cst=1", 128, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=1 vec=4 sk=2 red=4 xb=1 minb=2 cst=1 layout=nt", 255, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=2 vec=1 sk=1 red=4 cst=1 layout=tn", 255, 1},
    /* cva=1: C's odd rows in pieces by their alignment (stores, stream-K's vector additions and its single ones,
     * split-K's with 16-byte copies, bounds=0) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", 128, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 walk=2 spread=1 cva=1 layout=tt", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=32 stages=3 sk=1 cva=1 layout=tn", 0, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 cc=1 splitk=4 red=4 cva=1 layout=nt", 0, 0},
    {"bm=64 bn=64 bk=16 wm=32 wn=32 bounds=0 stages=1 at=0 cva=1", 0, 1},
    /* walk=1, 2: the K loop's shared source pointers advance by bk a tile (transposing lines in nt, a
     * contiguous M and N in tn; split-K's and stream-K's slices start them at their first tile) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 walk=2 layout=nt", 128, 0},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cst=1 walk=2 layout=tn", 128, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=2 vec=1 cc=1 pred=1 sk=1 red=4 walk=1 layout=nn", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=4 vec=1 cc=1 mid=1 splitk=3 walk=2 layout=tt", 0, 0},
    /* spread=1: the next tiles' copies a few before each step of k (compact copies with and without
     * walking pointers in four layouts, 16-byte copies, copies with a remainder, split-K, warp groups) */
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=1 red=4 walk=2 spread=1 layout=nn", 255, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=1 red=4 walk=2 spread=1 layout=nt", 255, 0},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=4 vec=1 cc=1 pred=1 sk=1 red=4 spread=1 layout=tn", 255, 0},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 pred=1 cst=1 walk=1 spread=1 layout=tt", 128, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=4 vec=1 pred=1 splitk=3 spread=1 layout=nt", 0, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 pred=1 spread=1", 0, 0},
    {"bm=96 bn=64 bk=24 wm=32 wn=32 stages=3 vec=1 cc=1 pred=1 walk=2 spread=1 layout=tn", 0, 0},
    {"bm=64 bn=128 bk=32 wm=32 wn=64 wk=2 stages=3 vec=1 cc=1 pred=1 spread=1 layout=tt", 0, 0},
    /* xb=1: the next tile's first fragments loaded across the barrier */
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=1 splitk=4 red=4 xb=1", 255, 0},
    {"bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 xb=1 pack=1 layout=tn", 255, 0},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 xb=1 pred=1 layout=nt", 0, 0},
    {"bm=64 bn=64 bk=16 wm=32 wn=32 stages=1 vec=1 at=0 bt=1 xb=1 layout=tt", 0, 0},
    /* one sub-tile of one vector per operand: A's and B's fragment reads
     * open no loop, so both vectors are declared in one scope */
    {"bm=64 bn=16 bk=8 wm=32 wn=16 ln=4 layout=nt", 0, 1},
    {"bm=4 bn=8 bk=8 wm=4 wn=8 tm=1 tn=1 ln=8 at=0 bt=1 pad=0 vec=1 stages=2", 0, 1},
    {"bm=64 bn=16 bk=8 wm=32 wn=16 ln=4 stages=1 xb=1 layout=nt", 0, 1},
};

/* configuration, a word the rejection must contain */
static const struct {
    const char *config, *word;
} rejected[] = {
    {"bm=100", "wm=32"},
    {"wm=8", "(32/ln)*tm"},
    {"bn=96 wn=48", "ln*tn"},
    {"wm=128 wn=128 bm=128 bn=128", "outputs per thread"},
    {"bk=6 vec=4", "vec=4"},
    {"vec=1 pack=1", "pack=1"},
    {"pad=1 vec=4 stages=2 layout=tn at=0", "pad=1"},
    {"bm=256 bn=256 bk=64 wm=64 wn=64 stages=4", "shared memory"},
    {"bm=256 bn=256 wm=32 wn=32", "threads"},
    {"minb=4 bm=128 bn=256 bk=32 wm=64 wn=64 stages=4", "minb=4"},
    {"splitk=0", "splitk"},
    {"sk=1 splitk=2", "sk=1"},
    {"sk=3", "sk"},
    {"skw=1", "skw=1"},
    {"sk=1 red=1 skw=1", "skw=1"},
    {"sk=2 splitk=4", "sk=2"},
    {"xb=1 stages=2", "xb=1"},
    {"xb=1 stages=1 mid=1", "xb=1"},
    {"xb=1 stages=1 bk=1 vec=1", "xb=1"},
    {"cc=1 stages=1", "cc=1"},
    {"ba=1 stages=2", "ba=1"},
    {"ba=2", "ba"},
    {"cl=1", "splitk"},
    {"cl=1 splitk=9", "splitk"},
    {"cl=1 splitk=2 red=4", "red=1"},
    {"stages=5", "stages"},
    {"ln=3", "ln"},
    {"tn=2 wn=32 red=4", "red=4"},
    {"pred=2", "pred"},
    {"cst=1 splitk=2", "cst=1"},
    {"cst=1 wk=2", "cst=1"},
    {"cst=1 tn=2 wn=32 wm=32", "cst=1"},
    {"cst=2", "cst"},
    {"cva=1 tn=2 wn=32 wm=32", "cva=1"},
    {"cva=1 splitk=2", "cva=1"},
    {"cva=1 cl=1 splitk=2", "cva=1 changes nothing"},
    {"cva=1 sk=1 red=4 skw=1 cst=1", "cva=1 changes nothing"},
    {"cva=1 wk=2 cst=1 bk=16", "cst=1"},
    {"cva=2", "cva"},
    {"cva=1 splitk=3 red=4 vec=1 stages=3 cc=1", "cva=1 changes nothing"},
    {"cva=1 cst=1", "cva=1 changes nothing"},
    {"walk=1", "walk=1"},
    {"walk=2 vec=1 cc=0", "walk=2"},
    {"walk=1 vec=1 stages=1", "walk=1"},
    {"walk=3", "walk"},
    {"spread=1 pred=1", "spread=1"},
    {"spread=1 stages=3", "spread=1"},
    {"spread=1 stages=3 pred=1 mid=1", "spread=1"},
    {"spread=1 stages=1 pred=1", "spread=1"},
    {"spread=2", "spread"},
};

/* What check_accesses knows while the host walks the addresses. */
typedef struct walk {
    const char *config;
    long smem;
    int m, n, k, lda, ldb, ldc, at, bt;
    int entries, touched, bad;
    int staged;              /* entries of cst=1's staged store of C */
    int cva;                 /* entries of cva=1's pieces of C */
    int shared, width;       /* of the current entry */
    int c_store;             /* the current entry stores (or adds) into C */
    unsigned char *c_count;  /* per float of C: stores into it (NULL: not counted) */
    unsigned char *c_width;  /* per float of C: the bytes of the last store into it */
    char array[8];
    long limit;              /* the highest float offset + 1 the entry's array may touch */
} walk;

static int walk_begin(void *ud, int n)
{
    ((walk *)ud)->entries = n;
    return 0;
}

static void walk_entry(void *ud, int e, const kgi_access_decl *d)
{
    walk *w = ud;
    if (e > 0)
        CHECK_MSG(!w->bad, "%s: accesses() entry %d (%s) goes outside %s or is misaligned", w->config, e,
                  w->shared ? "shared" : "global", w->array);
    w->bad = 0;
    if (strstr(d->name, "staged C") || strstr(d->name, "stage C"))
        w->staged++;
    if (strstr(d->name, "-byte pieces"))
        w->cva++;
    w->shared = d->shared;
    w->width = d->width;
    snprintf(w->array, sizeof w->array, "%s", d->array);
    w->c_store = !d->shared && d->store && w->array[0] == 'C';
    w->limit = w->shared ? w->smem / 4
             : w->array[0] == 'A' ? (long)(w->at ? w->k : w->m) * w->lda
             : w->array[0] == 'B' ? (long)(w->bt ? w->n : w->k) * w->ldb
             : (long)w->m * w->ldc;
}

static void walk_request(void *ud, int e, int it, int warp, const long long *addr)
{
    walk *w = ud;
    for (int l = 0; l < 32; l++) {
        if (addr[l] < 0)
            continue;
        long a = (long)(addr[l] / 4);
        w->touched++;
        if (a + w->width / 4 > w->limit || (a % (w->width / 4)) != 0)
            w->bad = 1;
        else if (w->c_count && w->c_store)
            for (int f = 0; f < w->width / 4; f++)
                if (w->c_count[a + f] < 255) {
                    w->c_count[a + f]++;
                    w->c_width[a + f] = (unsigned char)w->width;
                }
    }
}

/* Calls accesses(cfg, shape) into *w (its c_count as the caller set it) and checks every address it lists;
 * ldc as given where > 0 (C's rows then as the caller makes them), else padded like lda and ldb. */
static void walk_accesses(kg_context *ctx, walk *w, const char *config, int m, int n, int k, int ldc)
{
    char err[1024];
    kg_source *src;
    CHECK_MSG(kg_render(ctx, "matmul_warp", config, &src) == KG_OK, "%s: %s", config, kg_last_error(ctx));
    w->config = config;
    w->m = m;
    w->n = n;
    w->k = k;
    w->smem = (long)(src->geo.smem_static + src->geo.smem_dynamic);
    int threads = (int)src->geo.block[0];
    w->at = src->geo.layout[0] == 't';
    w->bt = src->geo.layout[1] == 't';
    kg_source_free(src);
    /* leading dimensions padded to the next multiple of 4 (vector copies stay aligned) */
    w->lda = ((w->at ? m : k) + 4) / 4 * 4;
    w->ldb = ((w->bt ? k : n) + 4) / 4 * 4;
    w->ldc = ldc > 0 ? ldc : (n + 4) / 4 * 4;
    kgi_access_walk walk_of = {m, n, k, w->lda, w->ldb, w->ldc, threads, 32, w, walk_begin, walk_entry, walk_request};
    int missing;
    kg_status st = kgi_host_accesses(ctx->host, "matmul_warp", config, &walk_of, &missing, err, sizeof err);
    CHECK_MSG(st == KG_OK, "%s: accesses(): %s", config, err);
    CHECK_MSG(!w->bad, "%s: accesses() entry %d (%s) goes outside %s or is misaligned", config, w->entries,
              w->shared ? "shared" : "global", w->array);
    CHECK_MSG(w->entries >= 6 && w->touched > 0, "%s: accesses() listed %d entries", config, w->entries);
}

static void check_accesses_ldc(kg_context *ctx, const char *config, int m, int n, int k, int ldc)
{
    walk w = {0};
    walk_accesses(ctx, &w, config, m, n, k, ldc);
    int staged = strstr(config, "cst=1") && w.ldc % 4 != 0;
    CHECK_MSG(w.staged == (staged ? 2 : 0), "%s (ldc %d): %d staged entries listed, %d expected", config, w.ldc,
              w.staged, staged ? 2 : 0);
}

/* cva=1 where ldc is not a multiple of 4: the pieces' entries (3 widths, for the load and the store, or for
 * split-K's additions alone), and every float of block (0, 0)'s tile of C (bm x bn within M x N) stored or
 * added exactly once by the entries, no other float; where there are pieces, each float by the piece its run's
 * alignment gives it (C at a 16-byte boundary; s the run's floats past one): s = 0 16 bytes, s = 2 8 bytes,
 * s odd 4 + 8 + 4, a run cut by N one float at a time. */
static void check_cva_accesses(kg_context *ctx, const char *config, int bm, int bn, int m, int n, int k, int ldc,
                               int want_entries)
{
    walk w = {.c_count = calloc((size_t)m * (size_t)ldc, 1), .c_width = calloc((size_t)m * (size_t)ldc, 1)};
    CHECK(w.c_count && w.c_width);
    if (!w.c_count || !w.c_width) {
        free(w.c_count);
        free(w.c_width);
        return;
    }
    walk_accesses(ctx, &w, config, m, n, k, ldc);
    CHECK_MSG(w.cva == want_entries, "%s (ldc %d): %d cva entries listed, %d expected", config, ldc, w.cva,
              want_entries);
    int wrong = 0, width = 0;
    for (int r = 0; r < m; r++)
        for (int c = 0; c < ldc; c++) {
            size_t at = (size_t)r * ldc + c;
            int want = r < bm && c < bn && c < n;
            wrong += w.c_count[at] != want;
            if (!want || want_entries == 0)
                continue;
            int c0 = c / 4 * 4, s = (int)(((long)r * ldc + c0) % 4), f = c - c0;
            int piece = c0 + 4 > n ? 4 : s == 0 ? 16 : s == 2 ? 8 : f == 0 || f == 3 ? 4 : 8;
            width += w.c_width[at] != piece;
        }
    CHECK_MSG(wrong == 0, "%s (%dx%d, ldc %d): %d floats of C stored other than once (block (0, 0)'s tile)", config,
              m, n, ldc, wrong);
    CHECK_MSG(width == 0, "%s (%dx%d, ldc %d): %d floats of C stored in a piece their alignment does not give", config,
              m, n, ldc, width);
    free(w.c_count);
    free(w.c_width);
}

static void check_accesses(kg_context *ctx, const char *config, int m, int n, int k)
{
    check_accesses_ldc(ctx, config, m, n, k, 0);
}

/* What the launcher is told to refuse follows which copies read global memory in vectors: a transposing copy
 * through cp.async moves single floats, so with stages >= 2 an operand whose layout and shared arrangement
 * disagree binds nothing (vector_operand names the one that binds, or neither binds at all). want[l]: for
 * nn, nt, tn, tt, 'A', 'B', '2' both or '-' none. */
static void vector_operands(kg_context *ctx)
{
    static const struct { const char *config; unsigned vec; const char *want; } cases[] = {
        {"vec=4 stages=3 at=1 bt=0", 4, "B-2A"},
        {"vec=4 stages=3 at=0 bt=1", 4, "A2-B"},
        {"vec=2 stages=2 at=1 bt=0", 2, "B-2A"},
        {"vec=4 stages=1 at=1 bt=0", 4, "2222"},
        {"vec=4 stages=1 ba=1 at=1 bt=0", 4, "2A2A"},
        {"vec=1 stages=3 at=1 bt=0", 1, "----"},
        {"vec=4 pack=1 stages=3 at=1 bt=0", 4, "----"},
    };
    static const char *const layouts[] = {"nn", "nt", "tn", "tt"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int l = 0; l < 4; l++) {
            char cfg[160];
            snprintf(cfg, sizeof cfg, "%s layout=%s", cases[i].config, layouts[l]);
            kg_source *src = NULL;
            CHECK_MSG(kg_render(ctx, "matmul_warp", cfg, &src) == KG_OK, "%s: %s", cfg, kg_last_error(ctx));
            if (!src)
                continue;
            const kgi_geometry *g = &src->geo;
            char w = cases[i].want[l];
            int none = g->ld_multiple == 1 && g->align == 4;
            char got = none ? '-' : g->vec_operands == 1 ? 'A' : g->vec_operands == 2 ? 'B' : '2';
            CHECK_MSG(got == w, "%s: binds %c, want %c (ld_multiple %u, align %u)", cfg, got, w, g->ld_multiple,
                      g->align);
            CHECK_MSG(none || (g->ld_multiple == cases[i].vec && g->align == 4 * cases[i].vec),
                      "%s: ld_multiple %u, align %u for vec=%u", cfg, g->ld_multiple, g->align, cases[i].vec);
            /* a transposing copy through cp.async: single floats in the source */
            if (strstr(cases[i].config, "stages=3") && w != '2' && w != '-')
                CHECK_MSG(strstr(src->text, "kgen_cp_async4("), "%s: no single-float cp.async", cfg);
            kg_source_free(src);
        }
}

int main(void)
{
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_set_arch(ctx, 90) != KG_OK) {
        fprintf(stderr, "context: %s\n", ctx ? kg_last_error(ctx) : "out of memory");
        return 1;
    }
    static char names[sizeof configs / sizeof *configs][160];
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        const char *cfg = configs[i].config;
        kg_source *a = NULL, *b = NULL;
        kg_status st = kg_render(ctx, "matmul_warp", cfg, &a);
        CHECK_MSG(st == KG_OK, "render %s: %s", cfg, kg_last_error(ctx));
        if (st != KG_OK)
            continue;
        /* entry names: at most 40 characters, one of its own per configuration */
        CHECK_MSG(strlen(a->entry) <= 40, "%s: entry %s is over 40 characters", cfg, a->entry);
        for (size_t j = 0; j < i; j++)
            CHECK_MSG(strcmp(names[j], a->entry) != 0, "%s: entry %s also names '%s'", cfg, a->entry,
                      configs[j].config);
        snprintf(names[i], sizeof names[i], "%s", a->entry);
        CHECK(kg_render(ctx, "matmul_warp", cfg, &b) == KG_OK && a->len == b->len &&
              memcmp(a->text, b->text, a->len) == 0);
        char params[600];
        snprintf(params, sizeof params, "Parameters: %s", a->config);
        CHECK_MSG(strstr(a->text, params) != NULL, "%s: the header does not name every parameter", cfg);
        int split = strstr(a->config, "splitk=1 ") == NULL, sk = strstr(a->config, "sk=0 ") == NULL;
        int cl = strstr(a->config, "cl=1 ") != NULL;
        CHECK_MSG(((split && !cl) || sk) == (a->pre_entry[0] != 0),
                  "%s: a beta kernel exactly when splitk > 1 without a cluster, or sk > 0", cfg);
        /* the launcher overlaps the two kernels only on this promise: the pre
         * kernel lets the main one start, the main one waits before adding */
        int pre = a->pre_entry[0] != 0;
        CHECK_MSG(a->pre_overlap == pre && a->pre_waits == pre, "%s: every beta kernel allows the overlapped launch",
                  cfg);
        CHECK_MSG(pre == (strstr(a->text, "griddepcontrol.launch_dependents;") != NULL) &&
                      pre == (strstr(a->text, "kgen_dep_wait();") != NULL),
                  "%s: griddepcontrol exactly when there is a beta kernel", cfg);
        if (pre) {
            /* in the main kernel, the wait comes before the first atomic addition into C */
            const char *body = kernel_def(a->text, a->entry);
            const char *wait = body ? strstr(body, "kgen_dep_wait();") : NULL;
            const char *add = body ? strstr(body, "kgen_red_add4(&crow") : NULL;
            if (body && !add)
                add = strstr(body, "atomicAdd(&crow");
            CHECK_MSG(wait && add && wait < add, "%s: griddepcontrol.wait before the additions into C", cfg);
            CHECK_MSG(beta_pass_in_order(a->text, a->pre_entry),
                      "%s: the beta pass waits, then launches the main kernel, then scales C", cfg);
        }
        CHECK_MSG(cl == (strstr(a->text, "__cluster_dims__(1, 1,") != NULL), "%s: cluster dimensions exactly when cl=1",
                  cfg);
        /* pred=1: the K loop's next-tile copies are gated by `more`, never
         * skipped by a branch on the tile count */
        int pred = strstr(a->config, "pred=1 ") != NULL;
        CHECK_MSG(pred == (strstr(a->text, "const bool more = t + ") != NULL) &&
                      pred == !(strstr(a->text, "if (t + 1 < ktiles)") || strstr(a->text, "if (t + 2 < ktiles)") ||
                                strstr(a->text, "if (t + 3 < ktiles)")),
                  "%s: the next tile's copies predicated exactly when pred=1", cfg);
        /* vectors along N (B in nn and tn) through registers with bound
         * checks: one test per tile of whether N is a multiple of the vector */
        int packed = strstr(a->config, "pack=1 ") != NULL;
        int even = strstr(a->config, "stages=1 ") && strstr(a->config, "ba=0 ") && strstr(a->config, "bounds=1 ") &&
                   !strstr(a->config, "vec=1 ") && (strstr(a->config, "layout=nn") || strstr(a->config, "layout=tn"));
        if (even)
            CHECK_MSG(strstr(a->text, packed ? "const bool b_even = ldb % " : "const bool b_even = N % ") &&
                          strstr(a->text, "if (b_even)"),
                      "%s: B's edge vectors tested once per tile (pack=1: a test on ldb that always holds)", cfg);
        /* pack=1: a packing kernel, any lda and ldb for the launcher to pack;
         * vectors along N or M read up to the packed rows' padding */
        CHECK_MSG(packed == (a->pack_entry[0] != 0) && packed == (a->geo.pack_multiple == 4),
                  "%s: a packing kernel exactly when pack=1", cfg);
        if (packed) {
            char pk[200];
            snprintf(pk, sizeof pk, "%s(const float* __restrict__ A, int a_rows", a->pack_entry);
            CHECK_MSG(strstr(a->text, pk) && a->geo.ld_multiple == 1 && a->geo.align == 4,
                      "%s: packing kernel %s in the source, lda/ldb unrestricted (%u, %u bytes)", cfg, a->pack_entry,
                      a->geo.ld_multiple, a->geo.align);
            /* every layout but nt has an operand contiguous along M or N */
            int mn = !strstr(a->config, "layout=nt");
            CHECK_MSG(!strstr(a->text, "b_even = N") && !strstr(a->text, "a_even = M") &&
                          mn == (strstr(a->text, "& ~3)") != NULL),
                      "%s: pack=1 reads vectors up to the packed rows' padding, never tests the extent", cfg);
        }
        /* skw=1: the workspace variant and the post kernel, on the main
         * kernel's persistent grid (the post one's y: 1024 floats a block) */
        int skw = strstr(a->config, "skw=1 ") != NULL;
        CHECK_MSG(skw == (a->ws_entry[0] != 0) && skw == (a->post_entry[0] != 0) && skw == (a->geo.ws_waves != 0),
                  "%s: a workspace variant and a post kernel exactly when skw=1", cfg);
        if (skw) {
            char ws[200], post[200];
            snprintf(ws, sizeof ws, "%s(int M", a->ws_entry);
            snprintf(post, sizeof post, "%s(int M", a->post_entry);
            CHECK_MSG(strstr(a->text, ws) && strstr(a->text, post) && strstr(a->text, "kgen_red_add4(&wrow[") &&
                          a->post_geo.grid[0].dim == 'P' &&
                          a->post_geo.grid[1].mul == (a->geo.ws_tile_m * a->geo.ws_tile_n + 1023) / 1024 &&
                          a->geo.ws_waves == (strstr(a->config, "sk=1 ") ? 2u : 1u),
                      "%s: workspace variant %s and post kernel %s in the source, %ux%u tiles, %u waves", cfg,
                      a->ws_entry, a->post_entry, a->geo.ws_tile_m, a->geo.ws_tile_n, a->geo.ws_waves);
        }
        CHECK_MSG(sk == (a->geo.grid[0].dim == 'P') && (!sk || a->pre_geo.grid[0].dim == 'P'),
                  "%s: a persistent grid (P) exactly for stream-K, its beta kernel's too", cfg);
        kgi_nvrtc_result r;
        char *err = NULL;
        st = kgi_nvrtc_compile(a->text, a->entry, 90, &r, &err);
        CHECK_MSG(st == KG_OK, "compile %s: %s", cfg, err ? err : "");
        if (st == KG_OK) {
            const kg_compile_info *ci = &r.info;
            CHECK_MSG(ci->registers > 0 && (!configs[i].max_regs || ci->registers <= configs[i].max_regs),
                      "%s: %d registers (budget %d)", cfg, ci->registers, configs[i].max_regs);
            CHECK_MSG(configs[i].spills_ok || (ci->spill_stores == 0 && ci->stack_bytes == 0),
                      "%s: spills %d bytes, stack %d", cfg, ci->spill_stores, ci->stack_bytes);
            printf("%-70s regs %3d spill %3d smem %zu+%zu\n", a->config, ci->registers, ci->spill_stores,
                   a->geo.smem_static, a->geo.smem_dynamic);
        }
        kgi_nvrtc_result_free(&r);
        free(err);
        kg_source_free(a);
        kg_source_free(b);
    }
    for (size_t i = 0; i < sizeof rejected / sizeof *rejected; i++) {
        kg_source *s = NULL;
        kg_status st = kg_render(ctx, "matmul_warp", rejected[i].config, &s);
        CHECK_MSG(st == KG_ERR_CONFIG && strstr(kg_last_error(ctx), rejected[i].word),
                  "'%s' should be rejected naming '%s'; got %d: %s", rejected[i].config, rejected[i].word, (int)st,
                  kg_last_error(ctx));
        kg_source_free(s);
    }
    kg_source *s = NULL;
    CHECK(kg_set_arch(ctx, 75) == KG_OK);
    CHECK(kg_render(ctx, "matmul_warp", "stages=2", &s) == KG_ERR_CONFIG && strstr(kg_last_error(ctx), "cp.async"));
    CHECK(kg_render(ctx, "matmul_warp", "stages=1", &s) == KG_OK);
    kg_source_free(s);
    CHECK(kg_set_arch(ctx, 90) == KG_OK);
    vector_operands(ctx);
    check_accesses(ctx, "", 127, 129, 131);
    check_accesses(ctx, "layout=tt at=0 bt=1 stages=1 vec=4", 132, 260, 36);
    check_accesses(ctx, "bm=64 bn=64 bk=16 wm=32 wn=32 vec=1 stages=3 splitk=3 layout=nt", 65, 33, 70);
    check_accesses(ctx, "bm=96 bn=64 bk=12 wm=48 wn=32 tm=3 tn=2 ln=16 vec=2 pad=1 stages=1 layout=tn", 100, 70,
                   30);
    /* cst=1 with ldc = N odd: C's rows are not vectors, so the staged store is what the kernel runs */
    check_accesses_ldc(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cst=1", 131, 253, 100, 253);
    check_accesses_ldc(ctx, "bm=128 bn=16 bk=8 wm=32 wn=16 tm=4 tn=4 ln=4 stages=1 vec=1 cst=1 layout=tt", 129, 7, 36,
                       7);
    check_accesses_ldc(ctx, "bm=128 bn=128 bk=8 wm=64 wn=64 stages=2 vec=1 sk=1 red=4 cst=1 layout=tn", 257, 131, 64,
                       131);
    /* cva=1: C's runs in pieces by their alignment (rows of odd, 2 mod 4 and aligned ldc; tiles cut by N and by
     * M; a last run that ends at N; stream-K with single additions; split-K's additions with 16-byte copies); at
     * 16-byte rows none */
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", 64, 64, 131, 253, 100, 253, 6);
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1 layout=tt", 64, 64, 70, 50, 9, 50,
                       6);
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=16 wn=64 tm=2 tn=4 ln=16 stages=2 vec=1 cva=1", 64, 64, 99, 61, 30,
                       63, 6);
    check_cva_accesses(ctx, "bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 cva=1 layout=nt",
                       128, 128, 257, 131, 64, 131, 6);
    check_cva_accesses(ctx, "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 cc=1 splitk=4 red=4 cva=1 layout=nt", 64,
                       128, 65, 201, 64, 201, 3);
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", 64, 64, 37, 45, 20, 47, 6);
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", 64, 64, 70, 60, 20, 63, 6);
    check_cva_accesses(ctx, "bm=64 bn=128 bk=16 wm=32 wn=32 stages=3 sk=1 cva=1 layout=tn", 64, 128, 100, 203, 40, 205,
                       6);
    check_cva_accesses(ctx, "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", 64, 64, 131, 252, 100, 252, 0);
    kg_context_close(ctx);
    TEST_DONE();
}
