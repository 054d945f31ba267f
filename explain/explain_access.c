/*
 * explain_access.c -- evaluates a template's accesses(cfg, shape) warp by
 * warp: for every load and store statement, every warp of block (0, 0) and
 * every unrolled repetition, the byte address of each lane (the host walks
 * them, gen/template.c), turned into bank-conflict wavefronts (shared) or
 * sectors (global) by explain_model.c.
 *
 * The addresses are the template's own description of its code (the
 * contract in templates/README.md), evaluated rather than guessed: a
 * transposed store shows its conflicts because its addresses collide.
 */
#include <stdlib.h>
#include <string.h>

#include "explain.h"

typedef struct eval_state {
    int warp, tile_k;
    kgc_access *out;
    int n;
} eval_state;

/* Folds one warp request into the statement's totals and keeps the worst. */
static void add_shared(kgc_access *a, const kgc_bank *b, int warp, int it)
{
    a->requests++;
    a->wavefronts += b->wavefronts;
    a->ideal += b->ideal;
    if (a->requests == 1 || (long long)b->wavefronts * a->worst.ideal > (long long)a->worst.wavefronts * b->ideal) {
        a->worst = *b;
        a->worst_warp = warp;
        a->worst_iter = it;
    }
}

static void add_global(kgc_access *a, const kgc_coal *c, int warp, int it)
{
    a->requests++;
    a->requested += c->requested;
    a->unique += c->unique;
    a->sectors += c->sectors;
    a->ideal_sectors += c->ideal_sectors;
    a->lines += c->lines;
    long long lhs = (long long)c->sectors * a->gworst.ideal_sectors, rhs = (long long)a->gworst.sectors * c->ideal_sectors;
    if (a->requests == 1 || lhs > rhs || (lhs == rhs && c->sectors > a->gworst.sectors)) {
        a->gworst = *c;
        a->gworst_warp = warp;
        a->gworst_iter = it;
    }
}

static int eval_begin(void *ud, int n)
{
    eval_state *st = ud;
    st->n = n;
    return n > 0 && !(st->out = calloc((size_t)n, sizeof *st->out)) ? -1 : 0;
}

static void eval_entry(void *ud, int e, const kgi_access_decl *d)
{
    eval_state *st = ud;
    kgc_access *a = &st->out[e];
    snprintf(a->name, sizeof a->name, "%s", d->name);
    a->shared = d->shared;
    a->store = d->store;
    snprintf(a->array, sizeof a->array, "%s", d->array);
    a->width = d->width;
    a->iters = d->iters;
    a->per_phase_given = d->per_phase >= 0;
    /* Unless the template says otherwise, a shared load runs once per k step
     * of the tile (the inner product loop) and a shared store once a phase. */
    a->per_phase = d->per_phase >= 0 ? d->per_phase : a->shared ? (a->store ? 1 : st->tile_k) : 1;
}

static void eval_request(void *ud, int e, int it, int w, const long long *addr)
{
    eval_state *st = ud;
    kgc_access *a = &st->out[e];
    if (a->shared) {
        kgc_bank b;
        kgc_bank_request(addr, st->warp, a->width, w * st->warp, &b);
        if (b.active)
            add_shared(a, &b, w, it);
    } else {
        kgc_coal c;
        kgc_coal_request(addr, st->warp, a->width, &c);
        if (c.active)
            add_global(a, &c, w, it);
    }
}

kg_status kgc_eval_accesses(kgi_host *h, const char *tmpl, const char *config, const kgc_shape *shape,
                            int threads, int warp_size, int tile_k, kgc_access_set *out, int *missing,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    *missing = 0;
    snprintf(out->config, sizeof out->config, "%s", config ? config : "");
    if (threads < 1 || warp_size < 1 || warp_size > KGI_MAX_LANES || tile_k < 1) {
        snprintf(err, errlen, "accesses: threads %d, warp size %d or tile depth %d out of range", threads, warp_size,
                 tile_k);
        return KG_ERR_INVALID_ARG;
    }
    eval_state es = {warp_size, tile_k, NULL, 0};
    kgi_access_walk w = {shape->m, shape->n, shape->k, shape->lda, shape->ldb, shape->ldc, threads, warp_size,
                         &es, eval_begin, eval_entry, eval_request};
    kg_status st = kgi_host_accesses(h, tmpl, config, &w, missing, err, errlen);
    if (st != KG_OK) {
        free(es.out);
        return st;
    }
    out->v = es.out;
    out->n = es.n;
    return KG_OK;
}

/* Calls the template's resources(cfg) and reads the configuration's layout
 * and padding: everything explain knows before compiling. */
kg_status kgc_read_resources(kgi_host *h, const char *tmpl, const char *config, kgc_resources *r, char *err,
                             size_t errlen)
{
    kgi_resources res;
    memset(r, 0, sizeof *r);
    kg_status st = kgi_host_resources(h, tmpl, config, &res, err, errlen);
    if (st != KG_OK)
        return st;
    snprintf(r->layout, sizeof r->layout, "%s", res.layout);
    r->pad = res.pad;
    if (!res.table) {
        snprintf(err, errlen, "template '%s': resources() must return a table", tmpl);
        return KG_ERR_TEMPLATE;
    }
    r->threads = (int)res.threads;
    r->smem_static = (size_t)res.smem_static;
    r->smem_dynamic = (size_t)res.smem_dynamic;
    r->loads_a = res.loads_a;
    r->loads_b = res.loads_b;
    r->flops_per_phase = res.flops_per_phase;
    r->outputs_per_thread = (int)res.outputs_per_thread;
    double loads = r->loads_a + r->loads_b;
    r->cgma = res.has_cgma ? res.cgma : loads > 0 ? r->flops_per_phase / loads : 0;
    memcpy(r->block, res.block, sizeof r->block);
    r->tile_m = (int)res.tile_m;
    r->tile_n = (int)res.tile_n;
    r->tile_k = (int)res.tile_k;
    if (res.bad || r->threads < 1 || r->tile_m < 1 || r->tile_n < 1 || r->tile_k < 1 || loads <= 0 ||
        r->flops_per_phase <= 0) {
        snprintf(err, errlen,
                 "template '%s': resources() must give threads, tile = {m, n, k}, loads_a, loads_b and "
                 "flops_per_phase as positive numbers (see templates/README.md)", tmpl);
        return KG_ERR_TEMPLATE;
    }
    return KG_OK;
}

void kgc_access_set_free(kgc_access_set *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
