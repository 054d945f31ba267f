/*
 * model.h -- an analytic model of a tiled matmul kernel's time, from what
 * the template's resources() says (template-neutral terms: tiles, threads,
 * registers, pipeline, slices of K and how they combine, persistent grid,
 * raster, packing) and the device's limits, SM count, clock and bandwidths. It orders the
 * space for the model-ranked strategy (and the exhaustive sweep, so that a
 * good best-so-far is known early); it is never reported as a measurement.
 */
#ifndef KGEN_AUTOTUNE_MODEL_H
#define KGEN_AUTOTUNE_MODEL_H

#include "autotune/space.h"

typedef struct kgi_model_dev {
    kgi_limits lim;
    int sm_count;
    double clock_ghz;
    double bandwidth_gbs;      /* DRAM */
    double l2_bytes;           /* 0: unknown (A and B taken to fit) */
} kgi_model_dev;

/* From the architecture table's reference part (no GPU). */
void kgi_model_dev_arch(const kgi_limits *lim, kgi_model_dev *d);
/* From a device query. */
void kgi_model_dev_device(const kgi_limits *lim, const kg_device_info *info, kgi_model_dev *d);

/* Predicted milliseconds of one launch for M x N x K; `regs` per thread when
 * known (0: estimated from the outputs per thread). INFINITY when the
 * kernel cannot be resident or its resources are unknown. */
double kgi_model_time_ms(const kgi_model_dev *d, const kgi_res *r, int regs, int m, int n, int k);

/* Whether the kernel's copies take M x N x K at its smallest leading
 * dimensions (lda, ldb as the layout stores them: where the tuner measures):
 * packed operands take any; else each operand's rows must hold whole
 * copies. The compile pool's gate (kgi_pool_admits, on the rendered
 * kernel) decides; this is the same rule read from resources(), so that a
 * ranking does not spend its top on kernels the shape refuses. */
int kgi_model_admits(const kgi_res *r, int m, int n, int k);

/* order[0..sp->n) := candidate indices, fastest predicted first (ties in
 * space order); a candidate the shape does not admit is predicted INFINITY.
 * pred (NULL: not wanted) receives each candidate's prediction, by index:
 * candidates with equal predictions are ones the model cannot tell apart. */
void kgi_model_rank(const kgi_space *sp, const kgi_model_dev *d, int m, int n, int k, int *order, double *pred);

#endif
