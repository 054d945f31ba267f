/*
 * explain_measure.c -- the measured side of `kgen explain` on a GPU: the
 * configuration is checked against the float64 reference on an odd shape
 * first (fresh random inputs, C poisoned), then timed at the explained shape
 * with CUDA events (warm-up, repetitions, the median, L2 flushed between
 * runs), and the timed product is spot-checked, so a fast wrong kernel
 * never gets a figure.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "explain.h"

#define SPOTS 64
#define MAX_SECONDS 3.0

/* splitmix64: the spot positions, independent of the data's generator. */
static unsigned long long mix(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Largest error of SPOTS entries of C against float64 dot products, each
 * relative to its magnitude bound sum |a||b| (kgi_gemm_error's measure). */
static double spot_check(const kgc_explain *x, const float *a, const float *b, const float *c, unsigned long long seed)
{
    const kgc_shape *s = &x->shape;
    int at = x->res.layout[0] == 't', bt = x->res.layout[1] == 't';
    double worst = 0;
    for (int t = 0; t < SPOTS; t++) {
        long long i = (long long)(mix(&seed) % (unsigned long long)s->m);
        long long j = (long long)(mix(&seed) % (unsigned long long)s->n);
        double ref = 0, bound = 0;
        for (long long k = 0; k < s->k; k++) {
            double av = at ? a[k * s->lda + i] : a[i * s->lda + k];
            double bv = bt ? b[j * s->ldb + k] : b[k * s->ldb + j];
            ref += av * bv;
            bound += fabs(av * bv);
        }
        double v = c[i * s->ldc + j];
        double e = !isfinite(v) ? INFINITY : fabs(v - ref) / (bound > 0 ? bound : 1.0);
        if (!(e <= worst))
            worst = e;
    }
    return worst;
}

/* Odd sizes where the kernel accepts any shape, else the next multiples
 * of its tile that the launcher accepts. */
static kg_status verify_first(kg_context *dev, const kg_kernel *k, kgc_explain *x)
{
    int dims[2][3] = {{257, 263, 131}, {3 * x->res.tile_m, 3 * x->res.tile_n, 5 * x->res.tile_k}};
    kg_status st = KG_ERR_SHAPE;
    for (int i = 0; i < 2 && st == KG_ERR_SHAPE; i++) {
        x->verify_m = dims[i][0], x->verify_n = dims[i][1], x->verify_k = dims[i][2];
        st = kgi_verify_kernel(dev, k, x->verify_m, x->verify_n, x->verify_k, 1.0f, 0.0f, 0, x->seed + (unsigned)i,
                               &x->verify_error);
    }
    return st;
}

int kgc_explain_measure(kg_context *dev, kgc_explain *x)
{
    const kgc_shape *s = &x->shape;
    x->seed = (unsigned long long)time(NULL) * 0x100000001b3ULL ^ (unsigned long long)getpid();
    kg_kernel *k;
    kg_status st = kg_kernel_get(dev, x->tmpl, x->config, &k);
    if (st != KG_OK) {
        snprintf(x->measure_note, sizeof x->measure_note, "not measured: the kernel did not load: %s",
                 kg_last_error(dev));
        return -1;
    }
    kg_kernel_info ki;
    if (kg_kernel_query(dev, k, &ki) == KG_OK) {
        x->driver_blocks = ki.max_blocks_per_sm;
        x->kernel_regs = ki.compile.registers;
    }
    if ((st = verify_first(dev, k, x)) != KG_OK) {
        snprintf(x->measure_note, sizeof x->measure_note, "not measured: %s check at %dx%dx%d failed: %s",
                 st == KG_ERR_WRONG ? "WRONG RESULT:" : "the", x->verify_m, x->verify_n, x->verify_k, kg_last_error(dev));
        return -1;
    }
    int at = x->res.layout[0] == 't', bt = x->res.layout[1] == 't';
    size_t na = (size_t)(at ? s->k : s->m) * (size_t)s->lda, nb = (size_t)(bt ? s->n : s->k) * (size_t)s->ldb;
    size_t nc = (size_t)s->m * (size_t)s->ldc;
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hc = malloc(nc * 4);
    void *da = NULL, *db = NULL, *dc = NULL;
    int rc = -1;
    if (!ha || !hb || !hc) {
        snprintf(x->measure_note, sizeof x->measure_note, "not measured: out of host memory for the inputs");
        goto out;
    }
    kgi_fill_random(ha, na, x->seed ^ 0xa5a5a5a5ULL);
    kgi_fill_random(hb, nb, x->seed ^ 0x5a5a5a5aULL);
    if ((st = kgi_dev_alloc(dev, na * 4, &da)) != KG_OK || (st = kgi_dev_alloc(dev, nb * 4, &db)) != KG_OK ||
        (st = kgi_dev_alloc(dev, nc * 4, &dc)) != KG_OK || (st = kgi_dev_upload(dev, da, ha, na * 4)) != KG_OK ||
        (st = kgi_dev_upload(dev, db, hb, nb * 4)) != KG_OK ||
        (st = kgi_dev_fill32(dev, dc, 0x7fc00000u, nc)) != KG_OK) {
        snprintf(x->measure_note, sizeof x->measure_note, "not measured: %s", kg_last_error(dev));
        goto out;
    }
    kg_gemm g = {(int)s->m, (int)s->n, (int)s->k, 1.0f, 0.0f, da, (int)s->lda, db, (int)s->ldb, dc, (int)s->ldc};
    kgi_timing t;
    if ((st = kgi_time_kernel(dev, k, &g, NULL, 1, MAX_SECONDS, &t)) != KG_OK ||
        (st = kgi_dev_download(dev, hc, dc, nc * 4)) != KG_OK) {
        snprintf(x->measure_note, sizeof x->measure_note, "not measured at %lldx%lldx%lld: %s", s->m, s->n, s->k,
                 kg_last_error(dev));
        goto out;
    }
    x->spot_count = SPOTS;
    x->spot_error = spot_check(x, ha, hb, hc, x->seed);
    if (!(x->spot_error <= kgi_gemm_tolerance((int)s->k))) {
        snprintf(x->measure_note, sizeof x->measure_note,
                 "WRONG RESULT at %lldx%lldx%lld: %d entries of C checked against float64, error %.3g exceeds %.3g; "
                 "no figure is reported",
                 s->m, s->n, s->k, SPOTS, x->spot_error, kgi_gemm_tolerance((int)s->k));
        goto out;
    }
    x->measured = 1;
    x->median_ms = t.median_ms;
    x->min_ms = t.min_ms;
    x->max_ms = t.max_ms;
    x->spread = t.spread;
    x->reps = t.reps;
    x->tflops = x->traffic.flops / (t.median_ms * 1e-3) / 1e12;
    rc = 0;
out:
    kgi_dev_free(dev, da);
    kgi_dev_free(dev, db);
    kgi_dev_free(dev, dc);
    free(ha);
    free(hb);
    free(hc);
    return rc;
}
