/*
 * walkcache.c -- the space walk's result in the disk cache (see walkcache.h).
 *
 * The data, little-endian:
 *   u32 format, u32 sizeof(kgi_res)
 *   u32 templates; each: name (64 bytes), i32 version, u32 parameters; each
 *       parameter: name (32 bytes), u32 values, the values (32 bytes each)
 *   u64 subtrees, rejected, enumerated, checks, resources() calls
 *   u32 distinct resources; each: kgi_res as stored in memory (the key and
 *       the format hold its size and layout to this build)
 *   u32 candidates; each: u8 template, u32 resources index, u8 value index
 *       per parameter (its configuration text is formed from them)
 *   u32 kept rejected subtrees; each: u8 template, u64 count, then config,
 *       reason and free parameters as u32 length + bytes
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/walkcache.h"

#define WALK_FORMAT 2
#define EXT "walk"

#ifndef KGEN_VERSION
#define KGEN_VERSION KG_VERSION
#endif

/* ------------------------------------------------------------ key */

static unsigned long long hash_text(const char *s, unsigned long long h)
{
    return kgi_hash(s ? s : "", s ? strlen(s) + 1 : 1, h);
}

static unsigned long long hash_int(long long v, unsigned long long h) { return kgi_hash(&v, sizeof v, h); }

unsigned long long kgi_walkcache_key(kgi_host *h, const char *const *tmpls, int ntmpl, const char *fixed,
                                     const char *override, const kgi_limits *lim)
{
    unsigned long long k = hash_int(WALK_FORMAT, KGI_HASH_SEED);
    k = hash_text(KGEN_VERSION, k);
    k = hash_int((long long)sizeof(kgi_res), hash_int((long long)sizeof(kgi_cand), k));
    k = hash_int(ntmpl, k);
    for (int i = 0; i < ntmpl; i++)
        k = hash_text(tmpls[i], k);
    k = hash_text(fixed, hash_text(override, k));
    char name[sizeof lim->name + 1];
    snprintf(name, sizeof name, "%.*s", (int)sizeof lim->name, lim->name);
    k = hash_text(name, k);
    long long fields[] = {lim->sm, lim->max_threads_per_block, lim->max_threads_per_sm, lim->max_blocks_per_sm,
                          lim->max_warps_per_sm, lim->warp_size, lim->regs_per_sm, lim->regs_per_block,
                          lim->max_regs_per_thread, lim->reg_alloc_unit, (long long)lim->smem_per_sm,
                          (long long)lim->smem_per_block, (long long)lim->smem_per_block_optin,
                          (long long)lim->smem_reserved_per_block, (long long)lim->smem_alloc_unit,
                          lim->fp32_lanes_per_sm, lim->ref_sm_count, (long long)lim->ref_l2_bytes,
                          (long long)(lim->ref_clock_ghz * 1e6), (long long)(lim->ref_bandwidth_gbs * 1e3)};
    k = kgi_hash(fields, sizeof fields, k);
    snprintf(name, sizeof name, "%.*s", (int)sizeof lim->name, lim->ref_gpu);
    k = hash_text(name, k);
    return kgi_host_modules_hash(h, k);
}

/* ------------------------------------------------------------ writing */

typedef struct out {
    unsigned char *p;
    size_t len, cap;
    int failed;
} out;

static void put(out *o, const void *data, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n)
            cap *= 2;
        unsigned char *p = realloc(o->p, cap);
        if (!p) {
            o->failed = 1;
            return;
        }
        o->p = p, o->cap = cap;
    }
    memcpy(o->p + o->len, data, n);
    o->len += n;
}

static void put_u(out *o, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(o, b, (size_t)bytes);
}

static void put_fixed(out *o, const char *s, size_t n)
{
    char buf[64] = {0};
    snprintf(buf, n, "%s", s);
    put(o, buf, n);
}

static void put_text(out *o, const char *s)
{
    size_t n = strlen(s);
    put_u(o, n, 4);
    put(o, s, n);
}

unsigned char *kgi_walkcache_encode(const kgi_space *sp, size_t *len)
{
    out o = {0};
    put_u(&o, WALK_FORMAT, 4);
    put_u(&o, sizeof(kgi_res), 4);
    put_u(&o, (uint64_t)sp->ntmpl, 4);
    for (int ti = 0; ti < sp->ntmpl; ti++) {
        const kgi_space_tmpl *t = &sp->tmpl[ti];
        put_fixed(&o, t->name, 64);
        put_u(&o, (uint32_t)t->version, 4);
        put_u(&o, (uint64_t)t->nparams, 4);
        for (int p = 0; p < t->nparams; p++) {
            put_fixed(&o, t->param[p], 32);
            put_fixed(&o, t->omitted[p], 32);
            put_u(&o, (uint64_t)t->nraw[p], 4);
            for (int v = 0; v < t->nraw[p]; v++)
                put_fixed(&o, t->value[p][v], 32);
        }
    }
    uint64_t counts[] = {(uint64_t)sp->subtrees, (uint64_t)sp->rejected, (uint64_t)sp->enumerated,
                         (uint64_t)sp->checks, (uint64_t)sp->resource_calls};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        put_u(&o, counts[i], 8);
    /* resources: a walk's pass gives a run of candidates the same ones */
    uint32_t *ri = malloc(((size_t)sp->n + 1) * sizeof *ri);
    if (!ri) {
        free(o.p);
        return NULL;
    }
    uint32_t nres = 0;
    for (int c = 0; c < sp->n; c++) {
        if (c == 0 || memcmp(&sp->cand[c].res, &sp->cand[c - 1].res, sizeof(kgi_res)) != 0)
            nres++;
        ri[c] = nres - 1;
    }
    put_u(&o, nres, 4);
    for (int c = 0; c < sp->n; c++)
        if (c == 0 || ri[c] != ri[c - 1])
            put(&o, &sp->cand[c].res, sizeof(kgi_res));
    put_u(&o, (uint64_t)sp->n, 4);
    for (int c = 0; c < sp->n; c++) {
        const kgi_cand *x = &sp->cand[c];
        put_u(&o, (uint64_t)x->tmpl, 1);
        put_u(&o, ri[c], 4);
        for (int p = 0; p < sp->tmpl[x->tmpl].nparams; p++)
            put_u(&o, (uint64_t)x->coord[p], 1);
    }
    free(ri);
    put_u(&o, (uint64_t)sp->npruned, 4);
    for (int i = 0; i < sp->npruned; i++) {
        const kgi_pruned *x = &sp->pruned[i];
        put_u(&o, (uint64_t)x->tmpl, 1);
        put_u(&o, (uint64_t)x->count, 8);
        put_text(&o, x->config);
        put_text(&o, x->reason);
        put_text(&o, x->free);
    }
    if (o.failed) {
        free(o.p);
        return NULL;
    }
    *len = o.len;
    return o.p;
}

/* ------------------------------------------------------------ reading */

typedef struct in {
    const unsigned char *p;
    size_t len, at;
    int bad;
} in;

static const unsigned char *get(in *i, size_t n)
{
    if (i->bad || n > i->len - i->at) {
        i->bad = 1;
        return NULL;
    }
    i->at += n;
    return i->p + i->at - n;
}

static uint64_t get_u(in *i, int bytes)
{
    const unsigned char *b = get(i, (size_t)bytes);
    uint64_t v = 0;
    for (int k = bytes - 1; b && k >= 0; k--)
        v = (v << 8) | b[k];
    return v;
}

/* A fixed-size text field: NUL-terminated within n bytes, else bad. */
static void get_fixed(in *i, char *dst, size_t n)
{
    const unsigned char *b = get(i, n);
    if (!b || !memchr(b, 0, n)) {
        i->bad = 1;
        dst[0] = '\0';
        return;
    }
    memcpy(dst, b, n);
}

/* A length-prefixed text, NUL-terminated into dst (at most dl bytes). */
static void get_text(in *i, char *dst, size_t dl)
{
    uint64_t n = get_u(i, 4);
    const unsigned char *b = n < dl ? get(i, (size_t)n) : NULL;
    if (!b) {
        i->bad = 1;
        dst[0] = '\0';
        return;
    }
    memcpy(dst, b, (size_t)n);
    dst[n] = '\0';
}

static int decode_templates(in *i, kgi_space *sp)
{
    uint64_t nt = get_u(i, 4);
    if (i->bad || nt > KGI_SPACE_MAX_TEMPLATES)
        return -1;
    while (sp->ntmpl < (int)nt) {
        kgi_space_tmpl *t = &sp->tmpl[sp->ntmpl];
        memset(t, 0, sizeof *t);
        if (!(t->value = calloc(KGI_SPACE_MAX_DIMS, sizeof *t->value)))
            return -1;
        sp->ntmpl++; /* counted at once, so that kgi_space_free frees it when the rest does not decode */
        get_fixed(i, t->name, sizeof t->name);
        t->version = (int)(int32_t)get_u(i, 4);
        uint64_t np = get_u(i, 4);
        if (i->bad || np > KGI_SPACE_MAX_DIMS)
            return -1;
        t->nparams = (int)np;
        for (int p = 0; p < t->nparams; p++) {
            get_fixed(i, t->param[p], sizeof t->param[0]);
            get_fixed(i, t->omitted[p], sizeof t->omitted[0]);
            uint64_t nv = get_u(i, 4);
            if (i->bad || nv > KGI_SPACE_MAX_VALUES)
                return -1;
            t->nraw[p] = (int)nv;
            for (int v = 0; v < t->nraw[p]; v++)
                get_fixed(i, t->value[p][v], 32);
        }
    }
    return i->bad ? -1 : 0;
}

/* " name=value" of each parameter's values, formed once per template. */
typedef struct pieces {
    char text[KGI_SPACE_MAX_DIMS][KGI_SPACE_MAX_VALUES][72];
    unsigned char len[KGI_SPACE_MAX_DIMS][KGI_SPACE_MAX_VALUES];
} pieces;

static int decode_candidates(in *i, kgi_space *sp, const kgi_res *res, uint64_t nres)
{
    uint64_t n = get_u(i, 4);
    if (i->bad || n > (uint64_t)(i->len - i->at))
        return -1;
    pieces *pc = calloc((size_t)sp->ntmpl, sizeof *pc);
    if (!pc)
        return -1;
    for (int ti = 0; ti < sp->ntmpl; ti++)
        for (int p = 0; p < sp->tmpl[ti].nparams; p++)
            for (int v = 0; v < sp->tmpl[ti].nraw[p]; v++)
                pc[ti].len[p][v] = (unsigned char)kgi_space_piece(&sp->tmpl[ti], p, sp->tmpl[ti].value[p][v],
                                                                  pc[ti].text[p][v], sizeof pc[ti].text[p][v]);
    char config[KGI_SPACE_MAX_DIMS * 72 + 1];
    int rc = 0;
    for (uint64_t c = 0; c < n && rc == 0; c++) {
        kgi_cand x;
        memset(&x, 0, sizeof x);
        x.tmpl = (int)get_u(i, 1);
        uint64_t r = get_u(i, 4);
        if (i->bad || x.tmpl >= sp->ntmpl || r >= nres) {
            rc = -1;
            break;
        }
        x.res = res[r];
        const kgi_space_tmpl *t = &sp->tmpl[x.tmpl];
        size_t used = 0;
        for (int p = 0; p < t->nparams && rc == 0; p++) {
            int v = (int)get_u(i, 1);
            x.coord[p] = (unsigned char)v;
            if (i->bad || v >= t->nraw[p]) {
                rc = -1;
                break;
            }
            memcpy(config + used, pc[x.tmpl].text[p][v], pc[x.tmpl].len[p][v]);
            used += pc[x.tmpl].len[p][v];
        }
        config[used] = '\0';
        if (rc == 0 && kgi_space_put_cand(sp, &x, config + (used > 0)) != 0)
            rc = -1;
    }
    free(pc);
    return rc;
}

static int decode_pruned(in *i, kgi_space *sp)
{
    uint64_t n = get_u(i, 4);
    if (i->bad || n > KGI_SPACE_KEEP_PRUNED)
        return -1;
    char config[2048], reason[1024], free_params[512];
    for (uint64_t k = 0; k < n; k++) {
        kgi_pruned p = {.tmpl = (int)get_u(i, 1), .count = (long)get_u(i, 8)};
        get_text(i, config, sizeof config);
        get_text(i, reason, sizeof reason);
        get_text(i, free_params, sizeof free_params);
        p.config = config, p.reason = reason, p.free = free_params;
        if (i->bad || p.tmpl >= sp->ntmpl || kgi_space_put_pruned(sp, &p) != 0)
            return -1;
    }
    return 0;
}

int kgi_walkcache_decode(const unsigned char *data, size_t len, kgi_space *sp)
{
    in i = {data, len, 0, 0};
    kgi_res *res = NULL;
    memset(sp, 0, sizeof *sp);
    if (get_u(&i, 4) != WALK_FORMAT || get_u(&i, 4) != sizeof(kgi_res) || decode_templates(&i, sp) != 0)
        goto bad;
    sp->subtrees = (long)get_u(&i, 8);
    sp->rejected = (long)get_u(&i, 8);
    sp->enumerated = (long)get_u(&i, 8);
    sp->checks = (long)get_u(&i, 8);
    sp->resource_calls = (long)get_u(&i, 8);
    uint64_t nres = get_u(&i, 4);
    const unsigned char *rb = nres <= len / sizeof(kgi_res) ? get(&i, (size_t)nres * sizeof(kgi_res)) : NULL;
    if (!rb || !(res = malloc((size_t)(nres ? nres : 1) * sizeof *res)))
        goto bad;
    memcpy(res, rb, (size_t)nres * sizeof *res);
    if (decode_candidates(&i, sp, res, nres) != 0 || decode_pruned(&i, sp) != 0 || i.at != i.len)
        goto bad;
    free(res);
    return 0;
bad:
    free(res);
    kgi_space_free(sp);
    return -1;
}

/* ------------------------------------------------------------ the cache */

int kgi_walkcache_load(kg_context *ctx, unsigned long long key, kgi_space *sp)
{
    void *data;
    size_t len;
    memset(sp, 0, sizeof *sp);
    if (!kgi_cache_blob_get(ctx, EXT, key, &data, &len))
        return 0;
    int ok = kgi_walkcache_decode(data, len, sp) == 0;
    free(data);
    return ok;
}

void kgi_walkcache_store(kg_context *ctx, unsigned long long key, const kgi_space *sp)
{
    size_t len;
    unsigned char *data = kgi_walkcache_encode(sp, &len);
    if (data)
        kgi_cache_blob_put(ctx, EXT, key, data, len);
    free(data);
}
