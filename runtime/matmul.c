/*
 * matmul.c -- kg_matmul: a configuration for the device and shape, picked
 * once and remembered.
 *
 * The pick, per (layout, M, N, K, alignment class):
 *   1. the tuning database's entry for the device and shape (exact, then
 *      nearest bucket: runtime/tunedb.c);
 *   2. else the built-in default for the architecture (runtime/defaults.c),
 *      by how many tiles the shape makes against the SM count.
 * Either is adapted to the call before it is used: a kernel without bound
 * checks (bounds=0) is never used on a shape that is not a multiple of its
 * tile -- bounds=1 instead -- and a vector-load kernel (vec>1) falls back to
 * vec=1 where lda, ldb or the A/B pointers are not aligned for vectors
 * (a default for a large output may pack the operands instead).
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

#include "defaults.h"
#include "gen/config.h"
#include "kernel.h"
#include "runtime.h"
#include "tunedb.h"

typedef struct choice {
    int lay, m, n, k, align;
    kg_kernel *kern;
    char *config, *why;      /* recorded with KGEN_VERBOSE=1, else NULL */
} choice;

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

/* Renders (tmpl, cfg). */
static kg_status render(kg_context *ctx, const char *tmpl, const kgi_config *cfg, kg_source **src)
{
    char text[2048];
    if (kgi_config_format(cfg, text, sizeof text) != 0)
        return kgi_fail(ctx, KG_ERR_CONFIG, "configuration too long");
    return kg_render(ctx, tmpl, text, src);
}

/*
 * Renders (tmpl, cfg) and checks it against the call; where a rule of
 * the call breaks it, sets bounds=1 and/or vec=1 and tries once more.
 * KG_OK with *src and the final cfg, else the reason in `why`.
 */
static kg_status try_config(kg_context *ctx, const char *tmpl, kgi_config *cfg, const kg_gemm *g, kg_source **src,
                            char *why, size_t why_len)
{
    char r1[256], r2[256];
    kg_status st = render(ctx, tmpl, cfg, src);
    if (st != KG_OK) {
        note(why, why_len, "; cannot render: %s", kg_last_error(ctx));
        return st;
    }
    const kgi_geometry *geo = &(*src)->geo;
    int mult = kgi_multiples_ok(geo, g, r1, sizeof r1), vec = kgi_vectors_ok(geo, g, r2, sizeof r2);
    if (mult && vec)
        return KG_OK;
    /* the template's own values of what bounds=1 and vec=1 would change */
    char bv[KGI_CONFIG_VALUE], vv[KGI_CONFIG_VALUE];
    int can_bounds = kgi_config_text_get((*src)->config, "bounds", bv, sizeof bv) == 0 && strcmp(bv, "1") != 0;
    int can_vec = kgi_config_text_get((*src)->config, "vec", vv, sizeof vv) == 0 && strcmp(vv, "1") != 0;
    if ((!mult && !can_bounds) || (!vec && !can_vec)) {
        note(why, why_len, "; unusable: %s", !mult ? r1 : r2);
        kg_source_free(*src);
        *src = NULL;
        return KG_ERR_SHAPE;
    }
    if (!mult) {
        note(why, why_len, "; bounds=1 since %s", r1);
        kgi_config_set(cfg, "bounds", "1", NULL, 0);
    }
    if (!vec) {
        note(why, why_len, "; vec=1 since %s", r2);
        kgi_config_set(cfg, "vec", "1", NULL, 0);
    }
    kg_source_free(*src);
    *src = NULL;
    if ((st = render(ctx, tmpl, cfg, src)) != KG_OK) {
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

/*
 * The configuration for `g` in `layout`: tuned, else the default, adapted
 * to the call. On KG_OK *src is rendered (its config canonical), `tmpl`
 * names its template and `why` says where it came from.
 */
static kg_status choose(kg_context *ctx, const char *layout, const kg_gemm *g, char *tmpl, size_t tmpl_len,
                        kg_source **src, char *why, size_t why_len)
{
    char dbwhy[512] = "", text[512], err[256];
    kgi_config cfg;
    why[0] = '\0';
    kg_status st = kgi_tunedb_lookup(ctx, layout, g->m, g->n, g->k, tmpl, tmpl_len, text, sizeof text, dbwhy,
                                     sizeof dbwhy);
    if (st == KG_OK) {
        snprintf(why, why_len, "tuned: %s", dbwhy);
        if (kgi_config_parse(&cfg, text, err, sizeof err) != 0) {
            note(why, why_len, "; its configuration does not parse: %s", err);
        } else {
            if (kgi_config_find(&cfg, "layout") >= 0)
                kgi_config_set(&cfg, "layout", layout, NULL, 0);
            if (try_config(ctx, tmpl, &cfg, g, src, why, why_len) == KG_OK) {
                if (strcmp((*src)->geo.layout, layout) == 0)
                    return KG_OK;
                /* an entry whose configuration disagrees with its layout column */
                note(why, why_len, "; its kernel computes layout %s, not %s", (*src)->geo.layout, layout);
                kg_source_free(*src);
                *src = NULL;
            }
        }
        snprintf(dbwhy, sizeof dbwhy, "%s", why);
        why[0] = '\0';
    }
    kgi_default d;
    if (kgi_default_choose(ctx->arch, ctx->limits.ref_sm_count, layout, g, align_class(g->a, g->lda, g->b, g->ldb),
                           &d, err, sizeof err) != 0)
        return kgi_fail(ctx, KG_ERR_CONFIG, "kg_matmul: the built-in default for sm_%d: %s", ctx->arch, err);
    snprintf(tmpl, tmpl_len, "%s", d.tmpl);
    snprintf(why, why_len, "default for sm_%d (%s for %d SMs): %s%s", ctx->arch, d.table, ctx->limits.ref_sm_count,
             dbwhy[0] ? dbwhy : "no tuning entry", d.notes);
    st = try_config(ctx, tmpl, &d.config, g, src, why, why_len);
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
    kg_status st = choose(ctx, layout, &g, tmpl, sizeof tmpl, &src, why, sizeof why);
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
    char tmpl[64], w[1024];
    kg_source *src;
    kg_status st = choose(ctx, layout, &g, tmpl, sizeof tmpl, &src, w, sizeof w);
    if (st != KG_OK)
        return st;
    snprintf(config, config_len, "%s", src->config);
    if (strcmp(tmpl, "matmul") != 0)
        note(w, sizeof w, " [template %s]", tmpl);
    snprintf(why, why_len, "%s (for minimal leading dimensions and 16-byte aligned A and B)", w);
    kg_source_free(src);
    return KG_OK;
}
