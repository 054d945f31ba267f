/*
 * pool.c -- the compile pool (see pool.h).
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autotune/pool.h"

/* A thread's context is reopened after this many compiles, so that its
 * in-memory CUBIN cache does not grow with the whole space. */
#define RECYCLE_EVERY 128

enum { NOT_QUEUED, QUEUED, COMPILING, DONE };

struct kgi_pool {
    const kgi_space *sp;
    kgi_limits lim;
    int arch;
    char *path;
    kgi_prune_rules rules;
    int notify_fd;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    int *queue, head, tail;     /* FIFO of candidate indices to compile */
    int *done, dhead, dtail;    /* FIFO of compiled ones, for kgi_pool_take */
    unsigned char *state;
    kgi_compiled *result;
    int gated, gate_gen;        /* the shape gate (kgi_pool_gate) and its generation */
    kg_gemm gate;
    int *gen;                   /* per candidate: the gate generation its result was gated with, 0 none */
    int stopping, busy;
    int compiled, from_cache;
    double compile_ms;
    pthread_t *threads;
    int nthreads;
};

void kgi_prune_compiled(const kgi_limits *lim, const kgi_prune_rules *rules, kgi_compiled *c)
{
    int threads = (int)(c->geo.block[0] * c->geo.block[1] * c->geo.block[2]);
    c->smem = (long)(c->info.smem_static + c->geo.smem_dynamic);
    kgi_occupancy_calc(lim, threads, c->info.registers, (size_t)c->smem, &c->occ);
    int spills = c->info.spill_stores + c->info.spill_loads;
    if (c->occ.by_regs == 0) {
        c->prune = KGI_OUT_PRUNED_REGS;
        snprintf(c->reason, sizeof c->reason,
                 "%d registers x %d threads need %d registers per block (allocated per warp); the limit is %d",
                 c->info.registers, threads, c->occ.regs_per_block, lim->regs_per_block);
    } else if (spills > rules->max_spill_bytes) {
        c->prune = KGI_OUT_PRUNED_SPILLS;
        snprintf(c->reason, sizeof c->reason, "spills %d bytes to local memory (stores %d, loads %d); allowed %d",
                 spills, c->info.spill_stores, c->info.spill_loads, rules->max_spill_bytes);
    } else if (c->occ.blocks_per_sm == 0 || c->occ.occupancy < rules->min_occupancy) {
        c->prune = KGI_OUT_PRUNED_OCCUPANCY;
        snprintf(c->reason, sizeof c->reason,
                 "occupancy %.1f%% (%d blocks of %d warps per SM, limited by %s) is under the minimum %.1f%%",
                 100 * c->occ.occupancy, c->occ.blocks_per_sm, c->occ.warps_per_block, c->occ.limiter,
                 100 * rules->min_occupancy);
    }
}

void kgi_packed_gemm(int m, int n, int k, const char *layout, float alpha, float beta, kg_gemm *g)
{
    const float *p = (const float *)(uintptr_t)4096;
    *g = (kg_gemm){m, n, k, alpha, beta, p, layout[0] == 't' ? m : k, p, layout[1] == 't' ? k : n,
                   (float *)(uintptr_t)4096, n};
}

int kgi_pool_admits(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t why_len)
{
    if (!kgi_geometry_admits(geo, g, why, why_len))
        return 0;
    if (geo->pack_multiple && !kgi_packed_operands(geo, g)) {
        snprintf(why, why_len,
                 "pack=1 packs nothing here (lda=%d, ldb=%d and the rows' M or N extent take 16-byte copies as "
                 "given): the same kernel as pack=0",
                 g->lda, g->ldb);
        return 0;
    }
    return 1;
}

int kgi_compile_candidate(kg_context *ctx, const kgi_limits *lim, const kgi_prune_rules *rules, int arch,
                          const char *tmpl, const char *config, const kg_gemm *gate, kgi_compiled *c)
{
    memset(c, 0, sizeof *c);
    char err[900];
    kg_source *src;
    kg_status st = kgi_host_render(ctx->host, tmpl, config, lim, &src, err, sizeof err);
    if (st != KG_OK) {
        c->prune = st == KG_ERR_CONFIG ? KGI_OUT_PRUNED_CHECK : KGI_OUT_COMPILE_ERROR;
        snprintf(c->reason, sizeof c->reason, "render: %s", err);
        return 0;
    }
    c->geo = src->geo;
    kg_source_free(src);
    if (gate && !kgi_pool_admits(&c->geo, gate, c->reason, sizeof c->reason)) {
        c->prune = KGI_OUT_PRUNED_SHAPE;
        return 1;
    }
    kg_cubin *cubin;
    if ((st = kg_compile(ctx, tmpl, config, arch, &cubin)) != KG_OK) {
        c->prune = st == KG_ERR_CONFIG ? KGI_OUT_PRUNED_CHECK : KGI_OUT_COMPILE_ERROR;
        snprintf(c->reason, sizeof c->reason, "%s", kg_last_error(ctx));
        return 0;
    }
    c->info = *kg_cubin_info(cubin);
    kg_cubin_free(cubin);
    kgi_prune_compiled(lim, rules, c);
    return 0;
}

static kg_context *thread_context(kgi_pool *p)
{
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK) {
        kg_context_close(ctx);
        return NULL;
    }
    if (kg_set_arch(ctx, p->arch) != KG_OK || kg_set_template_path(ctx, p->path) != KG_OK) {
        kg_context_close(ctx);
        return NULL;
    }
    return ctx;
}

static void *worker(void *arg)
{
    kgi_pool *p = arg;
    kg_context *ctx = NULL;
    int uses = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stopping && p->head == p->tail)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stopping)
            break;
        int idx = p->queue[p->head++];
        p->state[idx] = COMPILING;
        p->busy++;
        char tmpl[64], *config = strdup(p->sp->cand[idx].config);
        snprintf(tmpl, sizeof tmpl, "%s", p->sp->tmpl[p->sp->cand[idx].tmpl].name);
        kg_gemm gate = p->gate;
        int gen = p->gated ? p->gate_gen : 0;
        pthread_mutex_unlock(&p->mu);

        kgi_compiled c;
        int gated = 0;
        if (ctx && uses >= RECYCLE_EVERY) {
            kg_context_close(ctx);
            ctx = NULL;
        }
        if (!ctx) {
            ctx = thread_context(p);
            uses = 0;
        }
        if (ctx && config) {
            gated = kgi_compile_candidate(ctx, &p->lim, &p->rules, p->arch, tmpl, config, gen ? &gate : NULL, &c);
            uses++;
        } else {
            memset(&c, 0, sizeof c);
            c.prune = KGI_OUT_COMPILE_ERROR;
            snprintf(c.reason, sizeof c.reason, config ? "cannot open a compile context for sm_%d" : "out of memory",
                     p->arch);
        }
        free(config);

        pthread_mutex_lock(&p->mu);
        p->busy--;
        if (gated && gen != (p->gated ? p->gate_gen : 0)) {
            /* gated by a shape no longer tuned: again, for the current one */
            p->state[idx] = QUEUED;
            p->queue[p->tail++] = idx;
            pthread_cond_signal(&p->work);
            continue;
        }
        p->gen[idx] = gated ? gen : 0;
        p->result[idx] = c;
        p->state[idx] = DONE;
        p->done[p->dtail++] = idx;
        p->compiled += !gated;
        if (c.info.cache)
            p->from_cache++;
        else
            p->compile_ms += c.info.compile_ms;
        pthread_cond_broadcast(&p->idle);
        if (p->notify_fd >= 0) {
            char b = 1;
            ssize_t w = write(p->notify_fd, &b, 1); /* non-blocking; a full pipe already wakes the reader */
            (void)w;
        }
    }
    pthread_mutex_unlock(&p->mu);
    kg_context_close(ctx);
    return NULL;
}

kg_status kgi_pool_start(kgi_pool **out, int threads, const kgi_space *sp, const kgi_limits *lim, int arch,
                         const char *template_path, const kgi_prune_rules *rules, int notify_fd, char *err,
                         size_t errlen)
{
    *out = NULL;
    kgi_pool *p = calloc(1, sizeof *p);
    if (!p)
        return KG_ERR_NOMEM;
    p->sp = sp;
    p->lim = *lim;
    p->arch = arch;
    p->rules = *rules;
    p->notify_fd = notify_fd;
    p->path = template_path ? strdup(template_path) : NULL;
    size_t n = (size_t)sp->n + 1;
    p->queue = malloc(2 * n * sizeof *p->queue); /* room for a gate's generation after one compacted */
    p->done = malloc(n * sizeof *p->done);
    p->state = calloc(n, 1);
    p->result = calloc(n, sizeof *p->result);
    p->gen = calloc(n, sizeof *p->gen);
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    if (!p->queue || !p->done || !p->state || !p->result || !p->gen || !p->threads || (template_path && !p->path)) {
        kgi_pool_stop(p);
        return KG_ERR_NOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    for (int i = 0; i < threads; i++) {
        int rc = pthread_create(&p->threads[i], NULL, worker, p);
        if (rc != 0) {
            snprintf(err, errlen, "cannot start compile thread %d: %s", i, strerror(rc));
            kgi_pool_stop(p);
            return KG_ERR_NOMEM;
        }
        p->nthreads++;
    }
    *out = p;
    return KG_OK;
}

void kgi_pool_gate(kgi_pool *p, const kg_gemm *g)
{
    pthread_mutex_lock(&p->mu);
    p->gate_gen++;
    p->gated = g != NULL;
    if (g)
        p->gate = *g;
    /* a candidate enters the queue at most once a generation, and leaves
     * the list of finished ones at most once: both start afresh */
    memmove(p->queue, p->queue + p->head, (size_t)(p->tail - p->head) * sizeof *p->queue);
    p->tail -= p->head;
    p->head = 0;
    p->dhead = p->dtail = 0;
    for (int i = 0; i < p->sp->n; i++)
        if (p->state[i] == DONE && p->gen[i]) {
            p->state[i] = NOT_QUEUED;
            p->gen[i] = 0;
        }
    pthread_mutex_unlock(&p->mu);
}

void kgi_pool_submit(kgi_pool *p, int idx)
{
    pthread_mutex_lock(&p->mu);
    if (p->state[idx] == NOT_QUEUED) {
        p->state[idx] = QUEUED;
        p->queue[p->tail++] = idx;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
}

int kgi_pool_result(kgi_pool *p, int idx, kgi_compiled *out)
{
    pthread_mutex_lock(&p->mu);
    int done = p->state[idx] == DONE;
    if (done)
        *out = p->result[idx];
    pthread_mutex_unlock(&p->mu);
    return done;
}

int kgi_pool_take(kgi_pool *p, int *idx)
{
    pthread_mutex_lock(&p->mu);
    int any = p->dhead < p->dtail;
    if (any)
        *idx = p->done[p->dhead++];
    pthread_mutex_unlock(&p->mu);
    return any;
}

void kgi_pool_wait(kgi_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->head != p->tail || p->busy > 0)
        pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int kgi_pool_wait_for(kgi_pool *p, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&p->mu);
    while ((p->head != p->tail || p->busy > 0) && pthread_cond_timedwait(&p->idle, &p->mu, &until) == 0)
        ;
    int idle = p->head == p->tail && p->busy == 0;
    pthread_mutex_unlock(&p->mu);
    return idle;
}

void kgi_pool_stats(kgi_pool *p, int *compiled, int *from_cache, double *compile_ms)
{
    pthread_mutex_lock(&p->mu);
    *compiled = p->compiled;
    *from_cache = p->from_cache;
    *compile_ms = p->compile_ms;
    pthread_mutex_unlock(&p->mu);
}

void kgi_pool_stop(kgi_pool *p) { kgi_pool_stop_within(p, -1); }

int kgi_pool_stop_within(kgi_pool *p, double seconds)
{
    if (!p)
        return 0;
    if (p->nthreads > 0 && seconds >= 0) {
        pthread_mutex_lock(&p->mu);
        p->stopping = 1;
        p->head = p->tail; /* drop what is queued */
        p->notify_fd = -1;  /* the caller closes it */
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)(seconds * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        int left = 0;
        for (int i = 0; i < p->nthreads; i++)
            if (pthread_timedjoin_np(p->threads[i], NULL, &until) != 0) {
                pthread_detach(p->threads[i]);
                left++;
            }
        if (left)
            return left; /* they still use the pool: it stays, for the process's last moments */
        p->nthreads = 0;
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->idle);
    }
    if (p->nthreads > 0) {
        pthread_mutex_lock(&p->mu);
        p->stopping = 1;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->nthreads; i++)
            pthread_join(p->threads[i], NULL);
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->idle);
    }
    free(p->threads);
    free(p->queue);
    free(p->done);
    free(p->state);
    free(p->result);
    free(p->gen);
    free(p->path);
    free(p);
    return 0;
}
