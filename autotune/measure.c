/*
 * measure.c -- what a worker does with one candidate: check it, then time it.
 *
 *  1. Load it (kg_kernel_get; the CUBIN normally comes from the disk cache
 *     the parent's compile pool filled).
 *  2. Verify at two odd shapes against the float64 reference on fresh random
 *     data with C poisoned (kgi_verify_kernel): 137x113x73 (primes, no tile
 *     divides them) with beta = 0, and 31x67x1 (K = 1) with beta = 0.5; both
 *     rounded up to the kernel's multiples when its bound checks are off.
 *  3. Launch once at the tuned shape on random operands with C poisoned, and
 *     time that launch on the host clock (after a sync): the probe. Its
 *     output is the tuned-shape check: every element must be written and
 *     finite, and a sample (corners, edges, random interior) must match the
 *     float64 reference. A probe slower than the parent's cut marks the
 *     candidate `slow` without timing it in full.
 *  4. Time with kgi_time_kernel: CUDA events, warm-up, repetitions until the
 *     spread is small or the cap is hit, median, L2 flushed, C restored; or
 *     (back_to_back) with kgi_time_loop: samples of launches queued back to
 *     back, L2 warm, as a GEMM called in a loop runs, median per launch.
 * A driver error at any point means the context may be poisoned: the result
 * is `fault` and the worker exits after reporting it.
 *
 * kgi_measure_final: one sample of the final stage for a candidate that
 * passed all of the above at this shape: a warm-up launch, then launches
 * back to back for about the asked length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "autotune/worker.h"

#define SAMPLES 512
/* back_to_back: samples of about 1 ms of launches, 5 to 50 of them */
#define LOOP_SAMPLE_MS 1.0
#define LOOP_MIN_SAMPLES 5
#define LOOP_MAX_SAMPLES 50

struct kgi_bufs {
    int m, n, k;
    char layout[4];
    float beta;
    unsigned long long seed;
    int lda, ldb, ldc;
    float *ha, *hb, *hc, *out;   /* hc: C's initial value (beta != 0) */
    void *da, *db, *dc, *dcinit;
    /* The tuned-shape check's sampled elements and their float64 reference
     * (beta = 0), the same for every candidate of the shape: computed for
     * the first (each a dot product of length K: at K = 65536 the 512 of
     * them took longer than timing a kernel). */
    int nsample;                 /* 0: not computed yet */
    float sample_alpha;
    unsigned long long sample_seed;
    int si[SAMPLES], sj[SAMPLES];
    double sref[SAMPLES], smag[SAMPLES];
};

void kgi_measure_free(kg_context *ctx, kgi_bufs *b)
{
    if (!b)
        return;
    kgi_dev_free(ctx, b->da);
    kgi_dev_free(ctx, b->db);
    kgi_dev_free(ctx, b->dc);
    kgi_dev_free(ctx, b->dcinit);
    free(b->ha);
    free(b->hb);
    free(b->hc);
    free(b->out);
    free(b);
}

/* The tuned shape's operands, packed (natural leading dimensions), made once
 * per shape and kept while candidates come for the same shape. */
static kg_status shape_buffers(kg_context *ctx, kgi_bufs **bp, const kgi_wreq *r)
{
    kgi_bufs *b = *bp;
    if (b && b->m == r->m && b->n == r->n && b->k == r->k && strcmp(b->layout, r->layout) == 0 &&
        b->beta == r->beta && b->seed == r->seed)
        return KG_OK;
    kgi_measure_free(ctx, b);
    *bp = b = calloc(1, sizeof *b);
    if (!b)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    b->m = r->m, b->n = r->n, b->k = r->k, b->beta = r->beta, b->seed = r->seed;
    snprintf(b->layout, sizeof b->layout, "%s", r->layout);
    int at = r->layout[0] == 't', bt = r->layout[1] == 't';
    b->lda = at ? r->m : r->k;
    b->ldb = bt ? r->k : r->n;
    b->ldc = r->n;
    size_t na = (size_t)r->m * r->k, nb = (size_t)r->k * r->n, nc = (size_t)r->m * r->n;
    b->ha = malloc(na * 4), b->hb = malloc(nb * 4), b->out = malloc(nc * 4);
    if (r->beta != 0.0f)
        b->hc = malloc(nc * 4);
    if (!b->ha || !b->hb || !b->out || (r->beta != 0.0f && !b->hc))
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of host memory for %dx%dx%d operands", r->m, r->n, r->k);
    kgi_fill_random(b->ha, na, r->seed ^ 0xa11ce);
    kgi_fill_random(b->hb, nb, r->seed ^ 0xb0b);
    if (b->hc)
        kgi_fill_random(b->hc, nc, r->seed ^ 0xc0c0a);
    kg_status st;
    if ((st = kgi_dev_alloc(ctx, na * 4, &b->da)) != KG_OK || (st = kgi_dev_alloc(ctx, nb * 4, &b->db)) != KG_OK ||
        (st = kgi_dev_alloc(ctx, nc * 4, &b->dc)) != KG_OK || (st = kgi_dev_upload(ctx, b->da, b->ha, na * 4)) != KG_OK ||
        (st = kgi_dev_upload(ctx, b->db, b->hb, nb * 4)) != KG_OK)
        return st;
    if (b->hc && ((st = kgi_dev_alloc(ctx, nc * 4, &b->dcinit)) != KG_OK ||
                  (st = kgi_dev_upload(ctx, b->dcinit, b->hc, nc * 4)) != KG_OK))
        return st;
    return KG_OK;
}

static int round_up(int x, int mult) { return mult > 1 ? (x + mult - 1) / mult * mult : x; }

/* An odd shape near (m, n, k) that the kernel's preconditions admit, and a
 * padding of the leading dimensions that makes lda and ldb multiples of
 * ld_multiple (kgi_verify_kernel pads all three by the same amount). A
 * kernel for a small M or N (m_max, n_max) gets that extent, the largest it
 * takes, and the search moves the other operand's columns instead. */
static void odd_shape(const kgi_wreq *r, int *m, int *n, int *k, int *pad)
{
    int at = r->layout[0] == 't', bt = r->layout[1] == 't', ldm = r->ld_multiple > 1 ? r->ld_multiple : 1;
    *m = round_up(*m, r->m_multiple), *n = round_up(*n, r->n_multiple), *k = round_up(*k, r->k_multiple);
    if (r->m_max > 0 && *m > r->m_max)
        *m = r->m_max;
    if (r->n_max > 0 && *n > r->n_max)
        *n = r->n_max;
    for (int tries = 0; tries < 256; tries++) {
        int acols = at ? *m : *k, bcols = bt ? *k : *n;
        for (int p = 0; p < ldm; p++) {
            if ((acols + p) % ldm == 0 && (bcols + p) % ldm == 0) {
                *pad = p;
                return;
            }
        }
        /* B's stored columns, or A's where they are a capped N */
        if (bt)
            *k += r->k_multiple > 1 ? r->k_multiple : 1;
        else if (r->n_max == 0)
            *n += r->n_multiple > 1 ? r->n_multiple : 1;
        else if (at)
            *m += r->m_multiple > 1 ? r->m_multiple : 1;
        else
            *k += r->k_multiple > 1 ? r->k_multiple : 1;
    }
    *pad = 0;
}

/* The tuned-shape check's samples of b (corners, edges, random interior
 * from `seed`) and their float64 reference at beta = 0, unless b holds
 * them for this alpha and seed. 0, or -1 out of memory. */
static int check_samples(kgi_bufs *b, float alpha, unsigned long long seed)
{
    if (b->nsample > 0 && b->sample_alpha == alpha && b->sample_seed == seed)
        return 0;
    int at = b->layout[0] == 't', bt = b->layout[1] == 't';
    unsigned long long s = seed | 1;
    b->nsample = 0;
    for (int t = 0; t < SAMPLES; t++) {
        int i, j;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
        switch (t % 8) {
        case 0: i = 0, j = (int)(s % (unsigned)b->n); break;                 /* first row */
        case 1: i = b->m - 1, j = (int)(s % (unsigned)b->n); break;          /* last row */
        case 2: i = (int)(s % (unsigned)b->m), j = 0; break;                 /* first column */
        case 3: i = (int)(s % (unsigned)b->m), j = b->n - 1; break;          /* last column */
        default: i = (int)(s % (unsigned)b->m), j = (int)((s >> 32) % (unsigned)b->n); break;
        }
        if (t < 4)
            i = (t & 1) ? b->m - 1 : 0, j = (t & 2) ? b->n - 1 : 0;          /* corners */
        const float *a = b->ha + (at ? (size_t)i : (size_t)i * b->lda);
        const float *bb = b->hb + (bt ? (size_t)j * b->ldb : (size_t)j);
        b->si[t] = i, b->sj[t] = j;
        kgi_ref_gemm(b->layout, 1, 1, b->k, alpha, a, b->lda, bb, b->ldb, 0.0, NULL, b->ldc, &b->sref[t]);
        if (kgi_gemm_magnitude(b->layout, 1, 1, b->k, alpha, a, b->lda, bb, b->ldb, 0.0, NULL, b->ldc,
                               &b->smag[t]) != KG_OK)
            return -1;
    }
    b->nsample = SAMPLES, b->sample_alpha = alpha, b->sample_seed = seed;
    return 0;
}

/* The tuned-shape check of b->out, written with beta = 0: every element
 * finite, and the samples within the tolerance of the float64 reference.
 * 0 and the largest sampled error, or -1 with the reason. */
static int check_output(kgi_bufs *b, float alpha, unsigned long long seed, double *err, char *why, size_t whylen)
{
    size_t nc = (size_t)b->m * b->n;
    for (size_t x = 0; x < nc; x++) {
        if (!isfinite(b->out[x])) {
            snprintf(why, whylen, "at %dx%dx%d, C[%zu][%zu] = %g: an element not written or not finite", b->m, b->n,
                     b->k, x / (size_t)b->n, x % (size_t)b->n, b->out[x]);
            *err = INFINITY;
            return -1;
        }
    }
    if (check_samples(b, alpha, seed) != 0) {
        snprintf(why, whylen, "out of host memory for the reference at %dx%dx%d", b->m, b->n, b->k);
        *err = INFINITY;
        return -1;
    }
    double tol = kgi_gemm_tolerance(b->k), worst = 0;
    for (int t = 0; t < b->nsample; t++) {
        const float *c = b->out + (size_t)b->si[t] * b->ldc + b->sj[t];
        double e = kgi_gemm_error_mag(1, 1, c, b->ldc, &b->sref[t], &b->smag[t]);
        if (!(e <= tol)) {
            snprintf(why, whylen, "at %dx%dx%d, C[%d][%d] = %.9g has error %.3g over the tolerance %.3g", b->m, b->n,
                     b->k, b->si[t], b->sj[t], *c, e, tol);
            *err = e;
            return -1;
        }
        if (e > worst)
            worst = e;
    }
    *err = worst;
    return 0;
}

/* Sets the result's outcome from a failed call's status. */
static void failed(kg_context *ctx, kgi_wmsg *msg, kg_status st, const char *stage)
{
    kgi_result *r = &msg->res;
    switch (st) {
    case KG_ERR_WRONG: r->outcome = KGI_OUT_WRONG; break;
    case KG_ERR_COMPILE:
    case KG_ERR_TEMPLATE: r->outcome = KGI_OUT_COMPILE_ERROR; break;
    case KG_ERR_CONFIG: r->outcome = KGI_OUT_PRUNED_CHECK; break;
    case KG_ERR_SHAPE: r->outcome = KGI_OUT_PRUNED_SHAPE; break;
    case KG_ERR_DRIVER:
        r->outcome = KGI_OUT_FAULT;
        msg->fatal = 1;
        break;
    default:
        r->outcome = KGI_OUT_ERROR;
        msg->fatal = st != KG_ERR_RESOURCES && st != KG_ERR_NOMEM;
        break;
    }
    snprintf(r->reason, sizeof r->reason, "%s: %s", stage, kg_last_error(ctx));
}

void kgi_measure(kg_context *ctx, kgi_bufs **bufs, const kgi_wreq *req, int out_fd, kgi_wmsg *msg)
{
    memset(msg, 0, sizeof *msg);
    msg->type = KGI_WMSG_RESULT;
    kgi_result *r = &msg->res;
    r->m_multiple = req->m_multiple, r->n_multiple = req->n_multiple, r->k_multiple = req->k_multiple;
    r->ld_multiple = req->ld_multiple;
    kg_kernel *kern;
    kg_status st = kg_kernel_get(ctx, req->tmpl, req->config, &kern);
    if (st != KG_OK) {
        failed(ctx, msg, st, "load");
        return;
    }
    kg_kernel_info ki;
    kg_kernel_query(ctx, kern, &ki);
    msg->compiled_here = ki.compile.cache == 0;
    r->registers = ki.compile.registers;
    r->spill_bytes = ki.compile.spill_stores + ki.compile.spill_loads;
    r->smem_bytes = (long)(ki.compile.smem_static + ki.compile.smem_dynamic);
    r->threads = ki.threads;
    kgi_occupancy occ;
    kgi_occupancy_calc(kgi_context_limits(ctx), ki.threads, ki.compile.registers, (size_t)r->smem_bytes, &occ);
    r->occupancy = occ.occupancy;

    /* 2. odd shapes */
    static const struct { int m, n, k; float alpha, beta; } odd[] = {{137, 113, 73, 1.0f, 0.0f},
                                                                      {31, 67, 1, -0.75f, 0.5f}};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        int m = odd[i].m, n = odd[i].n, k = odd[i].k, pad;
        odd_shape(req, &m, &n, &k, &pad);
        double e;
        st = kgi_verify_kernel(ctx, kern, m, n, k, odd[i].alpha, odd[i].beta, pad, req->seed + i, &e);
        if (st != KG_OK) {
            r->error = e;
            {
        failed(ctx, msg, st, "check at an odd shape");
        return;
    }
        }
        if (e > r->error)
            r->error = e;
    }

    /* 3. probe and tuned-shape check */
    if ((st = shape_buffers(ctx, bufs, req)) != KG_OK) {
        failed(ctx, msg, st, "operands");
        return;
    }
    /* The probe runs with beta = 0 on a NaN-poisoned C, whatever the tuned
     * beta: then every element must have been written (a kernel that skips
     * some cannot hide behind C's initial values); the odd shapes above
     * checked the beta != 0 path in full. */
    kgi_bufs *b = *bufs;
    st = kgi_dev_fill32(ctx, b->dc, 0x7fc00000u, (size_t)b->m * b->n);
    if (st == KG_OK)
        st = kgi_dev_sync(ctx);
    if (st != KG_OK) {
        failed(ctx, msg, st, "preparing C");
        return;
    }
    kg_gemm g = {req->m, req->n, req->k, req->alpha, 0.0f, b->da, b->lda, b->db, b->ldb, b->dc, b->ldc};
    double t0 = kgi_now();
    if ((st = kg_kernel_launch(ctx, kern, &g, NULL)) != KG_OK || (st = kgi_dev_sync(ctx)) != KG_OK) {
        failed(ctx, msg, st, "launch at the tuned shape");
        return;
    }
    g.beta = req->beta; /* timed as asked */
    msg->probe_ms = (kgi_now() - t0) * 1e3;
    kgi_wmsg beat = {.type = KGI_WMSG_PROBE, .probe_ms = msg->probe_ms};
    if (send(out_fd, &beat, sizeof beat, MSG_NOSIGNAL) != (ssize_t)sizeof beat)
        msg->fatal = 1; /* the parent is gone; the result write will fail too */
    if ((st = kgi_dev_download(ctx, b->out, b->dc, (size_t)b->m * b->n * 4)) != KG_OK) {
        failed(ctx, msg, st, "reading C");
        return;
    }
    double e;
    if (check_output(b, req->alpha, req->seed, &e, r->reason, sizeof r->reason) != 0) {
        r->outcome = KGI_OUT_WRONG;
        r->error = e;
        return;
    }
    if (e > r->error)
        r->error = e;
    double flop = 2.0 * req->m * req->n * (double)req->k;
    if (req->cut_ms > 0 && msg->probe_ms > req->cut_ms) {
        r->outcome = KGI_OUT_SLOW;
        r->time_ms = r->time_min_ms = r->time_max_ms = msg->probe_ms;
        r->reps = 1;
        r->tflops = flop / (msg->probe_ms * 1e9);
        snprintf(r->reason, sizeof r->reason,
                 "one launch %.3f ms > %.3g x best %.3f ms: not timed in full",
                 msg->probe_ms, req->slow_factor, req->cut_ms / req->slow_factor);
        return;
    }

    /* 4. timing */
    kgi_timing t;
    st = req->back_to_back ? kgi_time_loop(ctx, kern, &g, LOOP_SAMPLE_MS, LOOP_MIN_SAMPLES, LOOP_MAX_SAMPLES,
                                           req->max_seconds, &t)
                           : kgi_time_kernel(ctx, kern, &g, b->dcinit, req->flush_l2, req->max_seconds, &t);
    if (st != KG_OK) {
        failed(ctx, msg, st, "timing");
        return;
    }
    r->outcome = KGI_OUT_OK;
    r->time_ms = t.median_ms;
    r->time_min_ms = t.min_ms;
    r->time_max_ms = t.max_ms;
    r->spread = t.spread;
    r->reps = t.reps;
    r->tflops = t.median_ms > 0 ? flop / (t.median_ms * 1e9) : 0;
}

void kgi_measure_final(kg_context *ctx, kgi_bufs **bufs, const kgi_wreq *req, kgi_wmsg *msg)
{
    memset(msg, 0, sizeof *msg);
    msg->type = KGI_WMSG_RESULT;
    kgi_result *r = &msg->res;
    kg_kernel *kern;
    kg_status st = kg_kernel_get(ctx, req->tmpl, req->config, &kern);
    if (st != KG_OK) {
        failed(ctx, msg, st, "load");
        return;
    }
    if ((st = shape_buffers(ctx, bufs, req)) != KG_OK) {
        failed(ctx, msg, st, "operands");
        return;
    }
    kgi_bufs *b = *bufs;
    if (b->dcinit && (st = kgi_dev_copy(ctx, b->dc, b->dcinit, (size_t)b->m * b->n * 4)) != KG_OK) {
        failed(ctx, msg, st, "preparing C");
        return;
    }
    kg_gemm g = {req->m, req->n, req->k, req->alpha, req->beta, b->da, b->lda, b->db, b->ldb, b->dc, b->ldc};
    double one;
    if ((st = kgi_time_back_to_back(ctx, kern, &g, 1, &one)) != KG_OK) {
        failed(ctx, msg, st, "final stage: warm-up launch");
        return;
    }
    double want = req->sample_ms > 0 ? req->sample_ms : 2.0, per = req->expect_ms > 0 ? req->expect_ms : one;
    int count = kgi_loop_count(want, per);
    double ms;
    if ((st = kgi_time_back_to_back(ctx, kern, &g, count, &ms)) != KG_OK) {
        failed(ctx, msg, st, "final stage: timing");
        return;
    }
    r->outcome = KGI_OUT_OK;
    r->time_ms = r->time_min_ms = r->time_max_ms = ms;
    r->reps = count;
    r->tflops = ms > 0 ? 2.0 * req->m * req->n * (double)req->k / (ms * 1e9) : 0;
}
