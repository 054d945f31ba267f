/*
 * defaults.c -- kg_matmul's built-in configurations and the rules that
 * choose among them (see defaults.h). A tuning database replaces all of
 * this for the shapes it holds.
 *
 * Each row names one template and three tiles, large to small. A tile is
 * written as the values that differ from the template's defaults (the
 * template's `params`), so a reader sees what the choice changes; the
 * host completes the rest when it renders.
 */
#include <stdio.h>
#include <string.h>

#include "defaults.h"

typedef struct tile {
    const char *config;    /* what differs from the template's defaults */
    const char *unaligned; /* the same for calls that allow no vector loads; NULL: config (the caller sets vec=1) */
    int bm, bn;            /* its block tile (as in config), by which a shape's tiles are counted */
} tile;

typedef struct row {
    int sm;
    const char *tmpl;
    tile tier[3];   /* large, medium, small */
    int split;      /* the template has split-K, stream-K and packed operands (splitk, sk, red, pack) */
} row;

/* The seed-style template, with tiles scaled to each architecture's resources. */
#define LARGE {"bm=128 bn=128 bk=8 tm=8 tn=8 pad=4 vec=4 bounds=0", NULL, 128, 128}
#define MEDIUM {"pad=4 vec=4 bounds=0", NULL, 64, 64}
#define SMALL {"bm=32 bn=32 bk=32 tm=2 tn=2 vec=4 bounds=0", NULL, 32, 32}

static const row table[] = {
    {70, "matmul", {LARGE, MEDIUM, SMALL}, 0},
    /* sm_75 holds 1024 threads per SM: a narrower large tile */
    {75, "matmul", {{"bm=128 bk=8 tm=8 pad=4 vec=4 bounds=0", NULL, 128, 64}, MEDIUM, SMALL}, 0},
    {80, "matmul", {LARGE, MEDIUM, SMALL}, 0},
    {86, "matmul", {LARGE, MEDIUM, SMALL}, 0},
    {89, "matmul", {LARGE, MEDIUM, SMALL}, 0},
    /* the warp-tiled template, with the tiles its tuning on sm_90 chose */
    {90, "matmul_warp",
     {/* with vec=1 the single-stage large tile spills registers; three stages do not */
      {"bn=256 bk=16 wm=64 raster=8 stages=1", "bn=256 bk=16 wm=64 raster=8 stages=3 vec=1", 128, 256},
      /* single-float loads: a wider warp tile, compact copies (cc=1), a predicated last tile (pred=1) */
      {"bm=64 bk=16 wn=32 stages=3 raster=8", "bm=64 bk=16 stages=3 raster=8 cc=1 pred=1 vec=1", 64, 128},
      {"bm=32 bn=32 bk=16 wm=16 wn=32 tm=2 stages=3", NULL, 32, 32}},
     1},
};
static const char *const tier_name[3] = {"large", "medium", "small"};

/* Tiles of tier t's block tile over an m x n output. */
static long long tiles_of(const row *r, int t, int m, int n)
{
    return (long long)((m + r->tier[t].bm - 1) / r->tier[t].bm) * ((n + r->tier[t].bn - 1) / r->tier[t].bn);
}

/* Packed operands (pack=1) for the large tile, without split-K: the copies
 * move 8 (MK + KN) bytes against the product's 2MNK flops, so at a GPU's
 * ~13 flops per byte they stay under ~4% of its time only where
 * 1/M + 1/N <= 1/1450. */
static int pack_pays(const row *r, const kg_gemm *g, int tier, int slices)
{
    if (!r->split || tier != 0 || slices > 1)
        return 0;
    return ((long long)g->m + g->n) * 1450 <= (long long)g->m * g->n;
}

/* Stream-K needs K long enough to share (1024) and 16-byte loads (on the
 * caller's operands or on packed copies): the single-float large tile
 * spills registers with it. */
static int sk_able(const row *r, const kg_gemm *g, int vec16)
{
    return r->split && vec16 && g->k >= 1024;
}

/* The tier for the shape: the largest tile whose tiles keep at least half
 * the SMs busy (fewer leave most of the GPU idle), else the smallest. */
static int pick_tier(const row *r, const kg_gemm *g, int sms, int align)
{
    int sk_ok = sk_able(r, g, align == 4 || pack_pays(r, g, 0, 1));
    for (int t = 0; t < 2; t++) {
        long long tiles = tiles_of(r, t, g->m, g->n);
        /* the large tile holds one block per SM, so a partial last wave idles
         * SMs: it needs that wave 85% full, or 4 waves (the partial one then
         * matters less), or 2 that stream-K evens out */
        long long waves = (tiles + sms - 1) / sms;
        int balanced = t > 0 || waves >= 4 || 100 * tiles >= 85 * waves * sms || (sk_ok && tiles >= 2LL * sms);
        if (2 * tiles >= sms && balanced)
            return t;
    }
    return 2;
}

/* Split-K where the output makes too few tiles for the SMs and K is long
 * (512): the largest tile inside the output (a larger one computes wasted
 * rows), and slices (a power of two, each at least 240 deep so the partial
 * sums stay cheap to add) until the blocks fill the SMs (one large block or
 * two smaller ones per SM). Returns the slice count (1: none), *tier. */
static int split_k(const row *r, const kg_gemm *g, int sms, int *tier)
{
    if (!r->split || g->k < 512)
        return 1;
    int t = 0;
    while (t < 2 && (r->tier[t].bm > g->m || r->tier[t].bn > g->n))
        t++;
    long long tiles = tiles_of(r, t, g->m, g->n);
    long long target = t == 0 ? sms : 2LL * sms;
    if (2 * tiles >= target)
        return 1;
    int s = 1;
    while (2 * s * tiles <= target && 2 * s * 240 <= g->k && s < 256)
        s *= 2;
    *tier = t;
    return s;
}

/* Stream-K (sk=2, red=4: the last partial wave's tiles shared between
 * blocks) where the large tile makes two waves or more with a partial last
 * one: sharing evens out that wave. */
static int stream_k(const row *r, const kg_gemm *g, int sms, int tier, int slices, int unaligned)
{
    if (tier != 0 || slices > 1 || !sk_able(r, g, !unaligned))
        return 0;
    long long tiles = tiles_of(r, 0, g->m, g->n);
    return tiles >= 2LL * sms && tiles % sms != 0;
}

static void note(char *buf, size_t len, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < len)
        snprintf(buf + used, len - used, "%s", text);
}

int kgi_default_choose(int arch, int sms, const char *layout, const kg_gemm *g, int align, kgi_default *out,
                       char *err, size_t errlen)
{
    const row *r = &table[0];
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (table[i].sm <= arch)
            r = &table[i];
    if (sms < 1)
        sms = 1;
    int tier = pick_tier(r, g, sms, align);
    int slices = split_k(r, g, sms, &tier);
    /* no vector loads: the large output's copies pay for themselves, else the tier's single-float configuration */
    int unaligned = r->tier[tier].unaligned && align < 4;
    int pack = unaligned && pack_pays(r, g, tier, slices);
    int sk = stream_k(r, g, sms, tier, slices, unaligned && !pack);
    kgi_config *c = &out->config;
    snprintf(out->tmpl, sizeof out->tmpl, "%s", r->tmpl);
    if (kgi_config_parse(c, unaligned && !pack ? r->tier[tier].unaligned : r->tier[tier].config, err, errlen) != 0 ||
        kgi_config_set(c, "layout", layout, err, errlen) != 0 || (pack && kgi_config_set(c, "pack", "1", err, errlen)) ||
        (slices > 1 && (kgi_config_set_int(c, "splitk", slices, err, errlen) || kgi_config_set(c, "red", "4", err, errlen))) ||
        (sk && (kgi_config_set(c, "sk", "2", err, errlen) || kgi_config_set(c, "red", "4", err, errlen))))
        return -1;
    snprintf(out->table, sizeof out->table, "table row sm_%d, %s tile %dx%d", r->sm, tier_name[tier], r->tier[tier].bm,
             r->tier[tier].bn);
    out->notes[0] = '\0';
    if (slices > 1) {
        char s[96];
        snprintf(s, sizeof s, "; K split in %d slices: the output makes too few tiles for the SMs", slices);
        note(out->notes, sizeof out->notes, s);
    }
    if (sk)
        note(out->notes, sizeof out->notes, "; stream-K: the tiles' last wave is partial");
    if (pack)
        note(out->notes, sizeof out->notes,
             "; A, B, lda or ldb allow no 16-byte loads: the 16-byte kernel on packed copies (pack=1), "
             "which cost little against this product");
    else if (unaligned)
        note(out->notes, sizeof out->notes,
             "; A, B, lda or ldb allow no 16-byte loads: the tier's configuration with no vector loads");
    return 0;
}
