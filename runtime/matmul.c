/*
 * matmul.c -- kg_matmul: a configuration for the device and shape, picked
 * once and remembered.
 *
 * The pick, per (layout, M, N, K, alignment class, folded layout) (choose()
 * below has the whole order): the tuning database's entry for the device and exact
 * shape (runtime/tunedb.c), else the measured kernel catalogue for the
 * architecture (runtime/catalogue.c, pick.c), else the nearest tuned shape
 * and a model-only choice. Each is adapted to the call before it is used: a kernel without bound
 * checks (bounds=0) is never used on a shape that is not a multiple of its
 * tile -- bounds=1 instead -- and a vector-load kernel (vec>1) falls back to
 * vec=1 where lda, ldb or the A/B pointers are not aligned for vectors
 * (a default for a large output may pack the operands instead).
 * The alignment class of A, B and C (4, 2 or 1 each: the widest vector a
 * leading dimension and pointer allow) is part of the key, so one shape
 * called with aligned and unaligned buffers keeps two kernels (A's and B's
 * decide which kernels may run; all three, which measurements the
 * catalogue's model leans on). A call whose vector operand lies as one
 * row whichever way it is said to be stored (M = 1 with A "t" and lda = 1,
 * N = 1 with B "n" and ldb = 1) is chosen and run in the layout that reads
 * it as a row (fold_vectors), after a tuned entry for its own layout; the
 * key's alignment class is then the folded call's (lda or ldb K).
 *
 * The chosen kernel is kept in a hash map: a repeated call costs a hash,
 * the launch's precondition check and cuLaunchKernel; no Lua, no strings.
 * With KGEN_VERBOSE=1 each choice's configuration and reason are recorded
 * and kg_matmul_explain returns them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "gen/config.h"
#include "kernel.h"
#include "runtime.h"
#include "tunedb.h"

typedef struct choice {
    int lay, m, n, k, align, flay; /* the call: layout, shape, alignment, layout as folded */
    int folded;                    /* the kernel runs the folded call (fold_vectors) */
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

/* The widest vector (4, 2, 1 floats) that a leading dimension and pointer allow. */
static int operand_class(const float *p, int ld)
{
    int v = kgi_ld_class(ld);
    while (v > 1 && (uintptr_t)p % (4u * (unsigned)v) != 0)
        v /= 2;
    return v;
}

/* The call's alignment: each matrix's class (catalogue.h's KGI_ALIGN). */
static int align_class(const kg_gemm *g)
{
    return KGI_ALIGN(operand_class(g->a, g->lda), operand_class(g->b, g->ldb), operand_class(g->c, g->ldc));
}

static unsigned long long choice_key(int lay, int m, int n, int k, int align, int flay)
{
    int f[6] = {lay, m, n, k, align, flay};
    return kgi_hash(f, sizeof f, KGI_HASH_SEED);
}

/* Appends printf-style text to a reason buffer; text that does not fit is
 * cut, and the buffer then ends in "...". */
static void note(char *why, size_t len, const char *fmt, ...) KGI_PRINTF(3, 4);
static void note(char *why, size_t len, const char *fmt, ...)
{
    size_t used = strlen(why);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(why + used, len - used, fmt, ap);
    va_end(ap);
    if (need > 0 && (size_t)need >= len - used && len > 4)
        memcpy(why + len - 4, "...", 4);
}

/* A reason as kg_matmul records it and kg_matmul_explain gives it: the
 * template first ("[template T] ", unless T is "matmul"), so that a reason
 * cut to the caller's buffer still names it. */
static void with_template(char *out, size_t len, const char *tmpl, const char *why)
{
    out[0] = '\0';
    if (strcmp(tmpl, "matmul") != 0)
        note(out, len, "[template %s] ", tmpl);
    note(out, len, "%s", why);
}

/*
 * A vector operand stored contiguous is one row in memory, whichever way
 * the call says it is stored. With M = 1, op(A) is a row of K floats: A
 * stored "t" (K x 1) with lda = 1 lies exactly as A stored "n" (one row,
 * lda = K). With N = 1, op(B) is a column of K floats: B stored "n" (K x 1)
 * with ldb = 1 lies exactly as B stored "t" (one row of K, ldb = K). The
 * two forms are one product on the same bytes, but the catalogue measured
 * each layout apart, so its model could choose two kernels for one piece
 * of work; kg_matmul chooses and runs such a call in the form where the
 * vector is a row ("n" for A, "t" for B). Returns the folded layout's
 * index (the call's own where nothing folds) and sets *f to the call as
 * folded (the call itself where nothing folds).
 */
static int fold_vectors(int lay, const kg_gemm *g, kg_gemm *f)
{
    int at = lay >= 2, bt = lay % 2;
    *f = *g;
    if (at && g->m == 1 && g->lda == 1) {
        at = 0;
        f->lda = g->k;
    }
    if (!bt && g->n == 1 && g->ldb == 1) {
        bt = 1;
        f->ldb = g->k;
    }
    return 2 * at + bt;
}

/* "tn read as nn (M = 1, lda = 1: A is one row of K floats)" */
static void describe_fold(int lay, int flay, char *out, size_t len)
{
    out[0] = '\0';
    if (flay == lay)
        return;
    note(out, len, "%s read as %s (", kgi_layout_name(lay), kgi_layout_name(flay));
    if ((lay >= 2) != (flay >= 2))
        note(out, len, "M = 1, lda = 1: A is one row of K floats%s", lay % 2 != flay % 2 ? "; " : "");
    if (lay % 2 != flay % 2)
        note(out, len, "N = 1, ldb = 1: B is one row of K floats");
    note(out, len, ")");
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
        note(why, why_len, "; unusable: %s", !mult && !can_bounds ? r1 : r2);
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
 * The tuning database's entry for `g` (the exact shape, or the nearest
 * within its distance unless `exact_only`), adapted to the call. KG_OK with
 * *src and `why`; otherwise `why` says why there is none.
 */
static kg_status tuned(kg_context *ctx, const char *layout, const kg_gemm *g, int exact_only, char *tmpl,
                       size_t tmpl_len, kg_source **src, char *why, size_t why_len)
{
    char dbwhy[768] = "", text[512], err[256];
    kgi_config cfg;
    why[0] = '\0';
    if (kgi_tunedb_lookup(ctx, layout, g->m, g->n, g->k, exact_only, tmpl, tmpl_len, text, sizeof text, dbwhy,
                          sizeof dbwhy) != KG_OK) {
        snprintf(why, why_len, "%s", dbwhy);
        return KG_ERR_DB;
    }
    snprintf(why, why_len, "tuned: %s", dbwhy);
    if (kgi_config_parse(&cfg, text, err, sizeof err) != 0) {
        note(why, why_len, "; its configuration does not parse: %s", err);
        return KG_ERR_CONFIG;
    }
    if (kgi_config_find(&cfg, "layout") >= 0)
        kgi_config_set(&cfg, "layout", layout, NULL, 0);
    kg_status st = try_config(ctx, tmpl, &cfg, g, src, why, why_len);
    if (st != KG_OK)
        return st;
    if (strcmp((*src)->geo.layout, layout) == 0)
        return KG_OK;
    /* an entry whose configuration disagrees with its layout column */
    note(why, why_len, "; its kernel computes layout %s, not %s", (*src)->geo.layout, layout);
    kg_source_free(*src);
    *src = NULL;
    return KG_ERR_CONFIG;
}

/* "catalogue sm_90 (catalogue/sm_90.txt: NVIDIA H200, 2026-11-23, 132 SMs)" */
static void describe_catalogue(const kgi_catalogue *c, char *out, size_t len)
{
    snprintf(out, len, "catalogue sm_%d (%s: %s, %s, %d SMs)", c->arch, c->name, c->device, c->date, c->sms);
}

/* "kernel 7 matmul_warp 128x256, split-K 2, persistent" */
static void describe_kernel(const kgi_cat_kernel *kk, char *out, size_t len)
{
    snprintf(out, len, "kernel %d %s %dx%d%s%s", kk->id, kk->tmpl, kk->tile_m, kk->tile_n,
             kk->kslices > 1 || kk->kslice_depth ? ", split-K" : "", kk->persistent ? ", persistent" : "");
    if (kk->kslice_depth)
        snprintf(out + strlen(out), len - strlen(out), " in pieces of %d", kk->kslice_depth);
    else if (kk->kslices > 1)
        snprintf(out + strlen(out), len - strlen(out), " %d", kk->kslices);
}

/*
 * The catalogue's kernels for `g`, best predicted first (by the shape's
 * nearest measurements, or by each kernel's median efficiency when
 * `median`), the first one that renders for the context's architecture and
 * admits the call. KG_OK with *src and `why`; otherwise `why` says why.
 */
static kg_status from_catalogue(kg_context *ctx, const kgi_catalogue *c, int median, const char *layout,
                                const kg_gemm *g, char *tmpl, size_t tmpl_len, kg_source **src, char *why,
                                size_t why_len)
{
    int lay = kgi_layout_index(layout), align = align_class(g);
    int sms = ctx->limits.ref_sm_count > 0 ? ctx->limits.ref_sm_count : 1;
    char cat[512], kd[128], skipped[768] = "";
    describe_catalogue(c, cat, sizeof cat);
    kgi_pick *picks = calloc((size_t)c->nkernels + 1, sizeof *picks);
    if (!picks)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    int n = median ? kgi_catalogue_rank_median(c, lay, g->m, g->n, g->k, align, sms, picks, c->nkernels)
                   : kgi_catalogue_rank(c, lay, g->m, g->n, g->k, align, sms, -1, picks, c->nkernels);
    kg_status st = KG_ERR_SHAPE;
    for (int i = 0; i < n; i++) {
        const kgi_pick *p = &picks[i];
        const kgi_cat_kernel *kk = &c->kernels[p->kernel];
        char text[640], adapt[512] = "", err[256];
        kgi_config cfg;
        snprintf(text, sizeof text, "%s layout=%s", kk->config, layout);
        describe_kernel(kk, kd, sizeof kd);
        if (kgi_config_parse(&cfg, text, err, sizeof err) != 0 ||
            try_config(ctx, kk->tmpl, &cfg, g, src, adapt, sizeof adapt) != KG_OK) {
            note(skipped, sizeof skipped, "; %s passed over%s", kd, adapt[0] ? adapt : err);
            continue;
        }
        snprintf(tmpl, tmpl_len, "%s", kk->tmpl);
        snprintf(why, why_len, "%s: %s, predicted %.4g us (%.3g waves on %d SMs)", cat, kd, p->predicted_us,
                 p->waves, sms);
        if (p->predicted_us > p->model_us && kk->launches > 0 && p->predicted_us == kgi_launch_floor(c, kk))
            note(why, why_len, " (the host's floor for %d launch%s of %.4g us; its model says %.4g)", kk->launches,
                 kk->launches > 1 ? "es" : "", c->launch_us, p->model_us);
        if (median)
            note(why, why_len, " from its median efficiency");
        else if (p->exact)
            note(why, why_len, ", measured at this shape");
        for (int j = 0; !median && !p->exact && j < p->nnear; j++) {
            const kgi_cat_row *r = &c->rows[p->near[j]];
            note(why, why_len, "%s%dx%dx%d (%.4g us)", j ? ", " : " from ", r->m, r->n, r->k,
                 kgi_catalogue_time(c, p->near[j], p->kernel));
        }
        int aa = KGI_ALIGN_A(align), ab = KGI_ALIGN_B(align);
        if (aa < 4 || ab < 4)
            note(why, why_len, "; the call allows A %s and B %s: kernels that need more left out",
                 aa == 4 ? "16-byte loads" : aa == 2 ? "8-byte loads" : "no vector loads",
                 ab == 4 ? "16-byte loads" : ab == 2 ? "8-byte loads" : "no vector loads");
        if (i + 1 < n) {
            describe_kernel(&c->kernels[picks[i + 1].kernel], kd, sizeof kd);
            note(why, why_len, "; runner-up %s, predicted %.4g us", kd, picks[i + 1].predicted_us);
        }
        note(why, why_len, "%s%s", skipped, adapt);
        st = KG_OK;
        break;
    }
    if (st != KG_OK)
        snprintf(why, why_len, "catalogue sm_%d: %s%s", c->arch,
                 n > 0 ? "no kernel renders and admits the call"
                       : "no kernel has times for this layout and alignment class",
                 skipped);
    free(picks);
    return st;
}

/*
 * The last resort: each embedded template's own defaults in the call's
 * layout, fewest units of work under the wave model (resources()' tile,
 * one block per SM) first, the first that renders and admits the call.
 */
static kg_status template_defaults(kg_context *ctx, const char *layout, const kg_gemm *g, char *tmpl,
                                   size_t tmpl_len, kg_source **src, char *why, size_t why_len)
{
    typedef struct cand {
        const char *name;
        double work;
    } cand;
    cand c[32];
    int n = 0, sms = ctx->limits.ref_sm_count > 0 ? ctx->limits.ref_sm_count : 1;
    char text[32], err[256], skipped[768] = "";
    snprintf(text, sizeof text, "layout=%s", layout);
    for (const kgi_embedded *e = kgi_embedded_files; e->module && n < 32; e++) {
        kgi_resources r;
        if (!kgi_template_name_valid(e->module) ||
            kgi_host_resources(ctx->host, e->module, text, &r, err, sizeof err) != KG_OK)
            continue;
        double work = r.has_tile && r.tile_m >= 1 && r.tile_n >= 1
                          ? kgi_wave_work((int)r.tile_m, (int)r.tile_n, r.kslices >= 1 ? (int)r.kslices : 1,
                                          r.persistent > 0, 1, g->m, g->n, g->k, sms, NULL)
                          : HUGE_VAL;
        int at = n++;
        for (; at > 0 && c[at - 1].work > work; at--)
            c[at] = c[at - 1];
        c[at] = (cand){e->module, work};
    }
    for (int i = 0; i < n; i++) {
        char adapt[512] = "";
        kgi_config cfg;
        kgi_config_parse(&cfg, text, NULL, 0);
        if (try_config(ctx, c[i].name, &cfg, g, src, adapt, sizeof adapt) == KG_OK) {
            snprintf(tmpl, tmpl_len, "%s", c[i].name);
            snprintf(why, why_len, "template %s's defaults (the fewest units of work by the wave model)%s%s",
                     c[i].name, skipped, adapt);
            return KG_OK;
        }
        note(skipped, sizeof skipped, "; template %s passed over%s", c[i].name, adapt);
    }
    snprintf(why, why_len, "no embedded template's defaults render and admit the call%s", skipped);
    return KG_ERR_SHAPE;
}

/* Puts "HEAD; " in front of a reason (nothing where HEAD is empty). */
static void lead(char *why, size_t len, const char *head)
{
    if (!head[0])
        return;
    char w[4096];
    snprintf(w, sizeof w, "%s; %s", head, why);
    why[0] = '\0';
    note(why, len, "%s", w); /* cut to len, ending in "..." */
}

/*
 * The configuration for the call `g` in layout `lay`, adapted to it; in
 * order:
 *   1. the tuning database's entry for the device and exact shape (in the
 *      call's layout, then in its folded layout `flay`, fold_vectors);
 *   2. the catalogue for the context's architecture (exact arch; measured
 *      on another SM count, its model still uses this device's), by the
 *      shape's nearest measurements (runtime/pick.c);
 * and where the architecture has no catalogue (or its catalogue no
 * kernel for the call):
 *   3. the database's nearest tuned shape (with a catalogue, the catalogue's
 *      measurements near the shape are trusted over another shape's winner,
 *      whose tile may quantise badly here);
 *   4. a model-only choice: the nearest architecture's catalogue's kernels
 *      that render for this one, by their median efficiency;
 *   5. every embedded template's own defaults.
 * Steps 2-5 choose for the folded call `gf` in `flay`. On KG_OK *src is
 * rendered (its config canonical), `tmpl` names its template, *folded says
 * whether it runs the folded call, and `why` says which entry was chosen
 * and why.
 */
static kg_status choose(kg_context *ctx, int lay, const kg_gemm *g, int flay, const kg_gemm *gf, int *folded,
                        char *tmpl, size_t tmpl_len, kg_source **src, char *why, size_t why_len)
{
    char dbwhy[1024], catwhy[1024] = "", fold[160], head[128], nearwhy[1024] = "";
    kg_status st;
    const char *layout = kgi_layout_name(flay);
    const kgi_catalogue *cat, *near;
    describe_fold(lay, flay, fold, sizeof fold);
    *folded = 0;
    if (tuned(ctx, kgi_layout_name(lay), g, 1, tmpl, tmpl_len, src, why, why_len) == KG_OK)
        return KG_OK;
    snprintf(dbwhy, sizeof dbwhy, "%s", why);
    *folded = flay != lay;
    if (*folded && tuned(ctx, layout, gf, 1, tmpl, tmpl_len, src, why, why_len) == KG_OK)
        goto chosen;
    g = gf;
    st = kgi_catalogue_for(ctx, ctx->arch, &cat);
    if (st != KG_OK)
        return st;
    if (cat) {
        if (from_catalogue(ctx, cat, 0, layout, g, tmpl, tmpl_len, src, why, why_len) == KG_OK) {
            note(why, why_len, "; %s", dbwhy);
            goto chosen;
        }
        snprintf(catwhy, sizeof catwhy, "; %s", why);
    }
    if (tuned(ctx, layout, g, 0, tmpl, tmpl_len, src, why, why_len) == KG_OK) {
        note(why, why_len, "%s", catwhy);
        goto chosen;
    }
    snprintf(dbwhy, sizeof dbwhy, "%s", why);
    if (cat)
        snprintf(head, sizeof head, "no usable kernel in the catalogue for sm_%d: model-only choice", ctx->arch);
    else
        snprintf(head, sizeof head, "no catalogue for sm_%d: model-only choice", ctx->arch);
    if ((st = kgi_catalogue_nearest(ctx, ctx->arch, &near)) != KG_OK)
        return st;
    if (near && from_catalogue(ctx, near, 1, layout, g, tmpl, tmpl_len, src, why, why_len) == KG_OK) {
        char w[2048];
        snprintf(w, sizeof w, "%s from %s%s; %s", head, why, catwhy, dbwhy);
        snprintf(why, why_len, "%s", w);
        goto chosen;
    }
    if (near)
        snprintf(nearwhy, sizeof nearwhy, "; %s", why);
    if (template_defaults(ctx, layout, g, tmpl, tmpl_len, src, why, why_len) == KG_OK) {
        char w[2048];
        snprintf(w, sizeof w, "%s: %s%s%s; %s", head, why, catwhy, nearwhy, dbwhy);
        snprintf(why, why_len, "%s", w);
        goto chosen;
    }
    return kgi_fail(ctx, KG_ERR_SHAPE, "kg_matmul: no usable configuration for %s M=%d N=%d K=%d%s%s: %s%s%s; %s",
                    kgi_layout_name(lay), g->m, g->n, g->k, fold[0] ? ", " : "", fold, why, catwhy, nearwhy,
                    dbwhy);
chosen: /* every choice after the call's own tuned entry is the folded call's */
    lead(why, why_len, fold);
    return KG_OK;
}

kg_status kg_matmul(kg_context *ctx, const char *layout, int m, int n, int k, float alpha, const float *a, int lda,
                    const float *b, int ldb, float beta, float *c, int ldc, void *stream)
{
    if (!ctx)
        return KG_ERR_INVALID_ARG;
    int lay = kgi_layout_index(layout);
    if (lay < 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul: layout must be \"nn\", \"nt\", \"tn\" or \"tt\" (got %s%s%s)",
                        layout ? "\"" : "", layout ? layout : "NULL", layout ? "\"" : "");
    if (m < 1 || n < 1 || k < 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul: M, N and K must be at least 1 (got M=%d N=%d K=%d)", m,
                        n, k);
    const kg_gemm g = {m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
    kg_gemm gf;
    int flay = fold_vectors(lay, &g, &gf), align = align_class(&gf); /* the folded call's, which runs */
    unsigned long long key = choice_key(lay, m, n, k, align, flay);
    struct kgi_kernels *ks = ctx->kernels;
    choice *ch = ks ? kgi_map_get(&ks->choices, key) : NULL;
    if (ch && ch->lay == lay && ch->m == m && ch->n == n && ch->k == k && ch->align == align && ch->flay == flay)
        return kg_kernel_launch(ctx, ch->kern, ch->folded ? &gf : &g, stream);

    /* first call for this key: choose, compile, load, remember */
    if (!ctx->drv)
        return kgi_fail(ctx, KG_ERR_NO_DEVICE, "kg_matmul needs a context opened on a GPU");
    if (!(ks = kgi_kernels_of(ctx)))
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    char tmpl[64], config[512], why[2048];
    kg_source *src;
    int folded;
    kg_status st = choose(ctx, lay, &g, flay, &gf, &folded, tmpl, sizeof tmpl, &src, why, sizeof why);
    if (st != KG_OK)
        return st;
    kg_kernel *kern;
    st = kgi_load_kernel(ctx, src, &kern);
    snprintf(config, sizeof config, "%s", src->config);
    kg_source_free(src);
    if (st != KG_OK)
        return st;
    choice *nc = calloc(1, sizeof *nc);
    if (!nc)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    *nc = (choice){lay, m, n, k, align, flay, folded, kern, NULL, NULL};
    if (ctx->verbose) {
        char full[2048 + 80];
        with_template(full, sizeof full, tmpl, why);
        nc->config = strdup(config);
        nc->why = strdup(full);
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
    return kg_kernel_launch(ctx, kern, folded ? &gf : &g, stream);
}

kg_status kg_matmul_explain(kg_context *ctx, const char *layout, int m, int n, int k, char *config,
                            size_t config_len, char *why, size_t why_len)
{
    if (!ctx || !config || !why || !config_len || !why_len)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul_explain: NULL or empty output buffer") : KG_ERR_INVALID_ARG;
    int lay = kgi_layout_index(layout);
    if (lay < 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "layout must be \"nn\", \"nt\", \"tn\" or \"tt\"");
    if (m < 1 || n < 1 || k < 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "M, N and K must be at least 1 (got M=%d N=%d K=%d)", m, n, k);
    /* a choice kg_matmul recorded (KGEN_VERBOSE=1): for each layout the call
     * may have been folded to (fold_vectors: A's "t" may become "n", B's "n"
     * "t"; its own first), widest alignment first */
    struct kgi_kernels *ks = ctx->kernels;
    static const int classes[] = {4, 2, 1};
    for (int i = 0; ks && i < 4 * 27; i++) {
        int align = KGI_ALIGN(classes[i % 27 / 9], classes[i % 27 / 3 % 3], classes[i % 3]);
        int j = i / 27, flay = 2 * (j & 2 ? 0 : lay >= 2) + (j & 1 ? 1 : lay % 2);
        choice *ch = kgi_map_get(&ks->choices, choice_key(lay, m, n, k, align, flay));
        if (ch && ch->why && ch->lay == lay && ch->m == m && ch->n == n && ch->k == k && ch->align == align &&
            ch->flay == flay) {
            if (strlen(ch->config) >= config_len)
                return kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul_explain: the configuration needs %zu bytes; config_len is %zu",
                                strlen(ch->config) + 1, config_len);
            snprintf(config, config_len, "%s", ch->config);
            why[0] = '\0';
            note(why, why_len, "%s (recorded by kg_matmul)", ch->why);
            return KG_OK;
        }
    }
    /* else what kg_matmul would pick for minimal leading dimensions and
     * pointers aligned for any vector width */
    static _Alignas(16) const float aligned[4];
    int at = lay >= 2, bt = lay % 2;
    const kg_gemm g = {m, n, k, 1.0f, 0.0f, aligned, at ? m : k, aligned, bt ? k : n, (float *)aligned, n};
    kg_gemm gf;
    int flay = fold_vectors(lay, &g, &gf), folded;
    char tmpl[64], w[2048];
    kg_source *src;
    kg_status st = choose(ctx, lay, &g, flay, &gf, &folded, tmpl, sizeof tmpl, &src, w, sizeof w);
    if (st != KG_OK)
        return st;
    if (strlen(src->config) >= config_len) {
        st = kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_matmul_explain: the configuration needs %zu bytes; config_len is %zu",
                      strlen(src->config) + 1, config_len);
        kg_source_free(src);
        return st;
    }
    snprintf(config, config_len, "%s", src->config);
    with_template(why, why_len, tmpl, w);
    note(why, why_len, " (for minimal leading dimensions and 16-byte aligned A, B and C)");
    kg_source_free(src);
    return KG_OK;
}
