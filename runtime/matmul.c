/*
 * matmul.c -- kg_matmul: a configuration for the device and shape, picked
 * once and remembered.
 *
 * The pick, per (layout, M, N, K, alignment class):
 *   1. the tuning database's entry for the device and shape (exact, then
 *      nearest bucket: runtime/tunedb.c);
 *   2. else the built-in default for the architecture (the table below),
 *      by how many tiles the shape makes against the SM count.
 * Either is adapted to the call before it is used: a kernel without bound
 * checks (bounds=0) is never used on a shape that is not a multiple of its
 * tile -- bounds=1 instead -- and a vector-load kernel (vec>1) falls back to
 * vec=1 where lda, ldb or the A/B pointers are not aligned for vectors
 * (a default for a large output packs the operands instead: pack_pays).
 * The alignment class (4, 2 or 1: the widest vector lda, ldb and both
 * pointers allow) is part of the key, so one shape called with aligned and
 * unaligned buffers keeps two kernels.
 *
 * The chosen kernel is kept in a hash map: a repeated call costs a hash,
 * the launch's precondition check and cuLaunchKernel; no Lua, no strings.
 * With KGEN_VERBOSE=1 each choice's configuration and reason are recorded
 * and kg_matmul_explain returns them.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "runtime.h"
#include "tunedb.h"

typedef struct choice {
    int lay, m, n, k, align;
    kg_kernel *kern;
    char *config, *why;      /* recorded with KGEN_VERBOSE=1, else NULL */
} choice;

/*
 * Defaults per architecture, from the large tile to the small. A shape uses
 * the largest whose tiles keep at least half the SMs busy -- the large one only
 * where its last wave is 85% full or it runs 4 waves, or 2 waves with
 * stream-K evening out the last one (stream_k()) (on the H200 the
 * 128x256 tile won at 2048^3 with 128 blocks on 132 SMs, and 64x128 at
 * 1000^3 and 1024^3); below that, the smallest. All hold in every layout with vec=4 and fall back to vec=1
 * where the call's alignment forbids vectors; bounds=0 becomes bounds=1 for
 * shapes that are not multiples of the tile.
 *
 * sm_90 (measured on an H200, bench/NOTES.md): the warp-tiled template's
 * winners of `kgen tune` -- 128x256 tiles with 64x64 warp tiles won every
 * large square (0.96-0.97 of cuBLAS FP32), 64x128 with a 3-stage cp.async
 * pipeline the 1000-8192 shapes with fewer tiles (without vector loads:
 * 32x64 warp tiles, compact single-float copies, cc=1, predicated rather
 * than branched around at the last tile, pred=1, 0.96 at
 * 3001x2999x1531), 32x32 the tiny ones.
 * The other rows use the seed-style template with tiles scaled to their
 * architecture's resources (measured on sm_90 only: at 2048^3 128x128x8/8x8
 * ran 32.6 TFLOP/s); a tuning database replaces all of them.
 */
/* A tier: its template and configuration, the configuration for calls
 * whose alignment allows no vector loads (NULL: the same with vec=1), and
 * its tile, by which the shape's tiles are counted. */
typedef struct deflt {
    int sm;
    struct { const char *tmpl, *config, *unaligned; int bm, bn; } tier[3];
    int splitk; /* the templates take splitk=S (and red=4): see split_k() */
} deflt;

#define LARGE_8 {"matmul", "bm=128 bn=128 bk=8 tm=8 tn=8 pad=4 vec=4 bounds=0", NULL, 128, 128}
#define MEDIUM {"matmul", "bm=64 bn=64 bk=16 tm=4 tn=4 pad=4 vec=4 bounds=0", NULL, 64, 64}
#define SMALL {"matmul", "bm=32 bn=32 bk=32 tm=2 tn=2 pad=1 vec=4 bounds=0", NULL, 32, 32}
#define WARP_LARGE "bm=128 bn=256 bk=16 wm=64 wn=64 tm=4 tn=4 raster=8 splitk=1 ln=8 at=1 bt=0 pad=4 red=1 minb=1 bounds=1"
#define WARP " ln=8 at=1 bt=0 pad=4 vec=4 red=1 minb=1 bounds=1"
static const deflt defaults[] = {
    {70, {LARGE_8, MEDIUM, SMALL}, 0},
    {75, {{"matmul", "bm=128 bn=64 bk=8 tm=8 tn=4 pad=4 vec=4 bounds=0", NULL, 128, 64}, MEDIUM, SMALL}, 0},
    {80, {LARGE_8, MEDIUM, SMALL}, 0},
    {86, {LARGE_8, MEDIUM, SMALL}, 0},
    {89, {LARGE_8, MEDIUM, SMALL}, 0},
    /* with vec=1 the single-stage large tile spills; three stages do not */
    {90, {{"matmul_warp", WARP_LARGE " stages=1 vec=4", WARP_LARGE " stages=3 vec=1", 128, 256},
          {"matmul_warp", "bm=64 bn=128 bk=16 wm=32 wn=32 tm=4 tn=4 stages=3 raster=8 splitk=1" WARP,
           "bm=64 bn=128 bk=16 wm=32 wn=64 tm=4 tn=4 stages=3 raster=8 splitk=1 cc=1 pred=1 ln=8 at=1 bt=0 pad=4 vec=1 red=1 minb=1 bounds=1",
           64, 128},
          {"matmul_warp", "bm=32 bn=32 bk=16 wm=16 wn=32 tm=2 tn=4 stages=3 raster=1 splitk=1" WARP, NULL, 32, 32}},
     1},
};
static const char *const tier_name[3] = {"large", "medium", "small"};

void kgi_choices_free(kgi_map *choices)
{
    for (size_t i = 0; i < choices->cap; i++) {
        choice *c = choices->vals[i];
        if (choices->keys[i] && c) {
            free(c->config);
            free(c->why);
            free(c);
        }
    }
}

static int layout_index(const char *layout)
{
    static const char *const layouts[] = {"nn", "nt", "tn", "tt"};
    for (int i = 0; layout && i < 4; i++)
        if (strcmp(layout, layouts[i]) == 0)
            return i;
    return -1;
}

/* The widest vector (4, 2, 1 floats) that lda, ldb, A and B all allow. */
static int align_class(const float *a, int lda, const float *b, int ldb)
{
    for (int v = 4; v > 1; v /= 2)
        if (lda % v == 0 && ldb % v == 0 && (uintptr_t)a % (4u * v) == 0 && (uintptr_t)b % (4u * v) == 0)
            return v;
    return 1;
}

static unsigned long long choice_key(int lay, int m, int n, int k, int align)
{
    int f[5] = {lay, m, n, k, align};
    return kgi_hash(f, sizeof f, KGI_HASH_SEED);
}

/* The value of `name` in configuration text, or NULL ("vec=4" -> "4"). */
static const char *param_value(const char *config, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (const char *p = config; *p;) {
        p += strspn(p, " \t\n");
        size_t tok = strcspn(p, " \t\n");
        if (tok > n && strncmp(p, name, n) == 0 && p[n] == '=') {
            *len = tok - n - 1;
            return p + n + 1;
        }
        p += tok;
    }
    return NULL;
}

/* Sets `name` to `value` in the configuration text `config` (capacity
 * `cap`), replacing its token or appending one. 0, or -1 when too long. */
static int set_param(char *config, size_t cap, const char *name, const char *value)
{
    char out[1024];
    size_t used = 0, n = strlen(name);
    int found = 0;
    for (const char *p = config; *p;) {
        p += strspn(p, " \t\n");
        size_t tok = strcspn(p, " \t\n");
        if (!tok)
            break;
        int w;
        if (tok > n && strncmp(p, name, n) == 0 && p[n] == '=') {
            w = snprintf(out + used, sizeof out - used, "%s%s=%s", used ? " " : "", name, value);
            found = 1;
        } else {
            w = snprintf(out + used, sizeof out - used, "%s%.*s", used ? " " : "", (int)tok, p);
        }
        if (w < 0 || (size_t)w >= sizeof out - used)
            return -1;
        used += (size_t)w;
        p += tok;
    }
    if (!found) {
        int w = snprintf(out + used, sizeof out - used, "%s%s=%s", used ? " " : "", name, value);
        if (w < 0 || (size_t)w >= sizeof out - used)
            return -1;
        used += (size_t)w;
    }
    if (used + 1 > cap)
        return -1;
    memcpy(config, out, used + 1);
    return 0;
}

/* Appends printf-style text to a reason buffer. */
static void note(char *why, size_t len, const char *fmt, ...) KGI_PRINTF(3, 4);
static void note(char *why, size_t len, const char *fmt, ...)
{
    size_t used = strlen(why);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + used, len - used, fmt, ap);
    va_end(ap);
}

/*
 * Renders (tmpl, config) and checks it against the call; where a rule of
 * the call breaks it, sets bounds=1 and/or vec=1 and tries once more.
 * KG_OK with *src and the final config, else the reason in `why`.
 */
static kg_status try_config(kg_context *ctx, const char *tmpl, char *config, size_t cap, const kg_gemm *g,
                            kg_source **src, char *why, size_t why_len)
{
    char r1[256], r2[256];
    kg_status st = kg_render(ctx, tmpl, config, src);
    if (st != KG_OK) {
        note(why, why_len, "; cannot render: %s", kg_last_error(ctx));
        return st;
    }
    const kgi_geometry *geo = &(*src)->geo;
    int mult = kgi_multiples_ok(geo, g, r1, sizeof r1), vec = kgi_vectors_ok(geo, g, r2, sizeof r2);
    if (mult && vec)
        return KG_OK;
    size_t len;
    const char *canon = (*src)->config;
    const char *bv = param_value(canon, "bounds", &len);
    int can_bounds = bv && !(len == 1 && bv[0] == '1');
    const char *vv = param_value(canon, "vec", &len);
    int can_vec = vv && !(len == 1 && vv[0] == '1');
    if ((!mult && !can_bounds) || (!vec && !can_vec)) {
        note(why, why_len, "; unusable: %s", !mult ? r1 : r2);
        kg_source_free(*src);
        *src = NULL;
        return KG_ERR_SHAPE;
    }
    if (!mult) {
        note(why, why_len, "; bounds=1 since %s", r1);
        set_param(config, cap, "bounds", "1");
    }
    if (!vec) {
        note(why, why_len, "; vec=1 since %s", r2);
        set_param(config, cap, "vec", "1");
    }
    kg_source_free(*src);
    *src = NULL;
    if ((st = kg_render(ctx, tmpl, config, src)) != KG_OK) {
        note(why, why_len, "; cannot render the adapted configuration: %s", kg_last_error(ctx));
        return st;
    }
    if (!kgi_multiples_ok(&(*src)->geo, g, r1, sizeof r1) || !kgi_vectors_ok(&(*src)->geo, g, r1, sizeof r1)) {
        note(why, why_len, "; still unusable: %s", r1);
        kg_source_free(*src);
        *src = NULL;
        return KG_ERR_SHAPE;
    }
    return KG_OK;
}

/* Tiles of tier t's block tile over an m x n output. */
static long long tier_tiles(const deflt *row, int t, int m, int n)
{
    return (long long)((m + row->tier[t].bm - 1) / row->tier[t].bm) * ((n + row->tier[t].bn - 1) / row->tier[t].bn);
}

static int pack_pays(const deflt *row, const kg_gemm *g, int tier, int slices);

/* Stream-K's prerequisites (stream_k()): a template that has it, K long
 * enough, and the 16-byte kernel (vec16: on the caller's operands or on
 * packed copies). */
static int sk_able(const deflt *row, const kg_gemm *g, int vec16)
{
    return row->splitk && vec16 && g->k >= 1024;
}

/* The default table's row for the context's architecture (or the newest
 * older one) and the tier the shape takes. */
static const char *default_config(kg_context *ctx, const kg_gemm *g, int sms, int *tier_out, const deflt **row_out)
{
    int m = g->m, n = g->n;
    const deflt *row = &defaults[0];
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        if (defaults[i].sm <= ctx->arch)
            row = &defaults[i];
    /* stream-K (stream_k()) will even out the large tile's last wave where
     * K is long and the 16-byte kernel runs, on the caller's operands or on
     * packed copies */
    int sk_ok = sk_able(row, g, align_class(g->a, g->lda, g->b, g->ldb) == 4 || pack_pays(row, g, 0, 1));
    int tier = 2;
    for (int t = 0; t < 2; t++) {
        long long tiles = tier_tiles(row, t, m, n);
        /* the large tile runs one block per SM: it must also leave its last
         * wave at least 85% full, or run 4 waves or more, or 2 and more
         * with stream-K (3001x2999 makes 288 128x256 tiles, 2.18 waves: the
         * medium tile ran 13% faster without stream-K, 1-2% slower than
         * sk=2 on packed operands) */
        long long waves = (tiles + sms - 1) / sms;
        int balanced = t > 0 || waves >= 4 || 100 * tiles >= 85 * waves * sms || (sk_ok && tiles >= 2LL * sms);
        if (2 * tiles >= sms && balanced) {
            tier = t;
            break;
        }
    }
    *tier_out = tier;
    *row_out = row;
    return row->tier[tier].config;
}

/*
 * Where the output is too small to fill the GPU and K is long enough
 * (bigK 256x256x65536, smallM 64x8192x8192, 1000^3), the winners of `kgen
 * tune` on the H200 split K: the largest tile that fits inside the output
 * (128x256 for bigK and 1000^3, 64x128 for smallM, where a 128-row tile
 * would waste half its rows), and as many slices (a power of two, each at
 * least 240 deep: 1000 in 4) as bring the blocks to the SMs' capacity: one
 * large block or two smaller ones per SM. On sm_90 the beta pass overlaps
 * the main kernel (launch.c), which made 1000^3 worth splitting.
 * Returns the slice count (1: no split) and the tier in *tier.
 */
static int split_k(const deflt *row, const kg_gemm *g, int sms, int *tier)
{
    if (!row->splitk || g->k < 512)
        return 1;
    int t = 0;
    while (t < 2 && (row->tier[t].bm > g->m || row->tier[t].bn > g->n))
        t++;
    long long tiles = tier_tiles(row, t, g->m, g->n);
    long long target = t == 0 ? sms : 2LL * sms;
    if (2 * tiles >= target)
        return 1;
    int s = 1;
    while (2 * s * tiles <= target && 2 * s * 240 <= g->k && s < 256)
        s *= 2;
    *tier = t;
    return s;
}

/*
 * Stream-K for the large tile (sk=2, red=4: only the last partial wave's
 * tiles shared, each block's piece first) where its tiles make two waves
 * or more with a partial last one and K is long: on the H200 (bench/NOTES.md
 * techniques 27 and 30) 4096^3 (512 tiles, 3.9 waves) 0.991 of cuBLAS against
 * 0.967 without, 8192^3 0.999 against 0.975, 4095^3 on packed operands 1.002
 * against 0.983, 3001x2999x1531 packed 0.976-0.983 against 0.759; at 2048^3
 * (128 tiles, under one wave) it lost. Only with 16-byte loads (the caller's
 * operands or packed copies): the single-float large tile spills with
 * stream-K (technique 27). `row->splitk` marks the templates that have it.
 */
static int stream_k(const deflt *row, const kg_gemm *g, int sms, int tier, int slices, int unaligned)
{
    if (tier != 0 || slices > 1 || !sk_able(row, g, !unaligned))
        return 0;
    long long tiles = tier_tiles(row, 0, g->m, g->n);
    return tiles >= 2LL * sms && tiles % sms != 0;
}

/*
 * Packed operands for the large tile (pack=1) where the call allows no
 * 16-byte loads: the 16-byte kernel on copies of A and B with padded rows
 * beat the single-float one at 4095^3 on the H200 (0.983 vs 0.954 of
 * cuBLAS, packing included; bench/NOTES.md technique 29). The copies move
 * 8 (MK + KN) bytes, at ~3.7 TB/s against ~48 TFLOP/s for the 2MNK of the
 * product: 52 (1/M + 1/N) of its time, so they pay for themselves only on
 * large outputs: 1/M + 1/N <= 1/1450 (M = N >= 2900, under 3.6 %: at
 * 3001x2999x1531 the copies cost 3 % and the packed large tile with
 * stream-K still beat the single-float medium one, 0.976-0.983 against
 * 0.961-0.968). Only where the template has it (`row->splitk` marks the
 * warp template).
 */
static int pack_pays(const deflt *row, const kg_gemm *g, int tier, int slices)
{
    if (!row->splitk || tier != 0 || slices > 1)
        return 0;
    return ((long long)g->m + g->n) * 1450 <= (long long)g->m * g->n;
}

/*
 * The configuration for `g` in `layout`: tuned, else the default, adapted
 * to the call. On KG_OK *src is rendered and `why` says where it came from.
 */
static kg_status choose(kg_context *ctx, const char *layout, const kg_gemm *g, char *tmpl, size_t tmpl_len,
                        char *config, size_t config_len, kg_source **src, char *why, size_t why_len)
{
    char dbwhy[512] = "";
    why[0] = '\0';
    kg_status st = kgi_tunedb_lookup(ctx, layout, g->m, g->n, g->k, tmpl, tmpl_len, config, config_len, dbwhy,
                                     sizeof dbwhy);
    if (st == KG_OK) {
        size_t len;
        if (param_value(config, "layout", &len))
            set_param(config, config_len, "layout", layout);
        snprintf(why, why_len, "tuned: %s", dbwhy);
        if (try_config(ctx, tmpl, config, config_len, g, src, why, why_len) == KG_OK) {
            if (strcmp((*src)->geo.layout, layout) == 0)
                return KG_OK;
            /* an entry whose configuration disagrees with its layout column */
            note(why, why_len, "; its kernel computes layout %s, not %s", (*src)->geo.layout, layout);
            kg_source_free(*src);
            *src = NULL;
        }
        snprintf(dbwhy, sizeof dbwhy, "%s", why);
        why[0] = '\0';
    }
    int tier;
    const deflt *row;
    int sms = ctx->limits.ref_sm_count > 0 ? ctx->limits.ref_sm_count : 1;
    const char *dflt = default_config(ctx, g, sms, &tier, &row);
    int slices = split_k(row, g, sms, &tier);
    if (slices > 1)
        dflt = row->tier[tier].config;
    int unaligned = row->tier[tier].unaligned && align_class(g->a, g->lda, g->b, g->ldb) < 4;
    int pack = unaligned && pack_pays(row, g, tier, slices);
    if (unaligned && !pack)
        dflt = row->tier[tier].unaligned;
    snprintf(config, config_len, "%s layout=%s", dflt, layout);
    if (pack)
        set_param(config, config_len, "pack", "1");
    if (slices > 1) {
        char sv[16];
        snprintf(sv, sizeof sv, "%d", slices);
        set_param(config, config_len, "splitk", sv);
        set_param(config, config_len, "red", "4");
    }
    int sk = stream_k(row, g, sms, tier, slices, unaligned && !pack);
    if (sk) {
        set_param(config, config_len, "sk", "2");
        set_param(config, config_len, "red", "4");
    }
    snprintf(tmpl, tmpl_len, "%s", row->tier[tier].tmpl);
    snprintf(why, why_len, "default for sm_%d (table row sm_%d, %s tile %dx%d for %d SMs): %s", ctx->arch, row->sm,
             tier_name[tier], row->tier[tier].bm, row->tier[tier].bn, ctx->limits.ref_sm_count,
             dbwhy[0] ? dbwhy : "no tuning entry");
    if (slices > 1)
        note(why, why_len, "; K split in %d slices: the output makes too few tiles for the SMs", slices);
    if (sk)
        note(why, why_len, "; stream-K: the tiles' last wave is partial");
    if (pack)
        note(why, why_len, "; A, B, lda or ldb allow no 16-byte loads: the 16-byte kernel on packed copies (pack=1), "
                           "which cost little against this product");
    else if (unaligned)
        note(why, why_len, "; A, B, lda or ldb allow no 16-byte loads: the tier's configuration with no vector loads");
    st = try_config(ctx, tmpl, config, config_len, g, src, why, why_len);
    if (st != KG_OK)
        return kgi_fail(ctx, st, "kg_matmul: no usable configuration for %s M=%d N=%d K=%d: %s", layout, g->m, g->n,
                        g->k, why);
    return KG_OK;
}

kg_status kg_matmul(kg_context *ctx, const char *layout, int m, int n, int k, float alpha, const float *a, int lda,
                    const float *b, int ldb, float beta, float *c, int ldc, void *stream)
{
    if (!ctx)
        return KG_ERR_INVALID_ARG;
    int lay = layout_index(layout);
    if (lay < 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul: layout must be \"nn\", \"nt\", \"tn\" or \"tt\" (got %s%s%s)",
                        layout ? "\"" : "", layout ? layout : "NULL", layout ? "\"" : "");
    if (m < 1 || n < 1 || k < 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul: M, N and K must be at least 1 (got M=%d N=%d K=%d)", m,
                        n, k);
    const kg_gemm g = {m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
    int align = align_class(a, lda, b, ldb);
    unsigned long long key = choice_key(lay, m, n, k, align);
    struct kgi_kernels *ks = ctx->kernels;
    choice *ch = ks ? kgi_map_get(&ks->choices, key) : NULL;
    if (ch && ch->lay == lay && ch->m == m && ch->n == n && ch->k == k && ch->align == align)
        return kg_kernel_launch(ctx, ch->kern, &g, stream);

    /* first call for this key: choose, compile, load, remember */
    if (!ctx->drv)
        return kgi_fail(ctx, KG_ERR_NO_DEVICE, "kg_matmul needs a context opened on a GPU");
    if (!(ks = kgi_kernels_of(ctx)))
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    char tmpl[64], config[512], why[1024];
    kg_source *src;
    kg_status st = choose(ctx, layout, &g, tmpl, sizeof tmpl, config, sizeof config, &src, why, sizeof why);
    if (st != KG_OK)
        return st;
    kg_kernel *kern;
    st = kgi_load_kernel(ctx, src, &kern);
    if (st == KG_OK && strcmp(tmpl, "matmul") != 0)
        note(why, sizeof why, " [template %s]", tmpl);
    snprintf(config, sizeof config, "%s", src->config);
    kg_source_free(src);
    if (st != KG_OK)
        return st;
    choice *nc = calloc(1, sizeof *nc);
    if (!nc)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    *nc = (choice){lay, m, n, k, align, kern, NULL, NULL};
    if (ctx->verbose) {
        nc->config = strdup(config);
        nc->why = strdup(why);
    }
    if (kgi_map_put(&ks->choices, key, nc) != 0) {
        free(nc->config);
        free(nc->why);
        free(nc);
    } else if (ch) { /* a hash collision: the newer key takes the slot */
        free(ch->config);
        free(ch->why);
        free(ch);
    }
    return kg_kernel_launch(ctx, kern, &g, stream);
}

kg_status kg_matmul_explain(kg_context *ctx, const char *layout, int m, int n, int k, char *config,
                            size_t config_len, char *why, size_t why_len)
{
    if (!ctx || !config || !why || !config_len || !why_len)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul_explain: NULL or empty output buffer") : KG_ERR_INVALID_ARG;
    int lay = layout_index(layout);
    if (lay < 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "layout must be \"nn\", \"nt\", \"tn\" or \"tt\"");
    if (m < 1 || n < 1 || k < 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "M, N and K must be at least 1 (got M=%d N=%d K=%d)", m, n, k);
    /* a choice kg_matmul recorded (KGEN_VERBOSE=1), widest alignment first */
    struct kgi_kernels *ks = ctx->kernels;
    for (int align = 4; ks && align >= 1; align /= 2) {
        choice *ch = kgi_map_get(&ks->choices, choice_key(lay, m, n, k, align));
        if (ch && ch->why && ch->lay == lay && ch->m == m && ch->n == n && ch->k == k && ch->align == align) {
            snprintf(config, config_len, "%s", ch->config);
            snprintf(why, why_len, "%s (recorded by kg_matmul)", ch->why);
            return KG_OK;
        }
    }
    /* else what kg_matmul would pick for minimal leading dimensions and
     * pointers aligned for any vector width */
    static _Alignas(16) const float aligned[4];
    int at = lay >= 2, bt = lay % 2;
    const kg_gemm g = {m, n, k, 1.0f, 0.0f, aligned, at ? m : k, aligned, bt ? k : n, (float *)aligned, n};
    char tmpl[64], cfg[512], w[1024];
    kg_source *src;
    kg_status st = choose(ctx, layout, &g, tmpl, sizeof tmpl, cfg, sizeof cfg, &src, w, sizeof w);
    if (st != KG_OK)
        return st;
    snprintf(config, config_len, "%s", src->config);
    if (strcmp(tmpl, "matmul") != 0)
        note(w, sizeof w, " [template %s]", tmpl);
    snprintf(why, why_len, "%s (for minimal leading dimensions and 16-byte aligned A and B)", w);
    kg_source_free(src);
    return KG_OK;
}
