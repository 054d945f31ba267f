/*
 * gpu_problem.h -- one GEMM on the GPU against the float64 reference, as
 * the GPU correctness tests (test_gpu.c, test_catalogue_gpu.c) set it up.
 *
 * A problem holds op(A), op(B) and C in a layout, with padded leading
 * dimensions (16-byte multiples with room, or odd): the padding of A and B
 * is NaN (a kernel that reads it poisons C) and that of C a sentinel that
 * must survive bit for bit. The references are for alpha = GP_ALPHA with
 * beta = GP_BETA on a random C, and with beta = 0 (C poisoned with NaN
 * before the run: a kernel that reads it fails).
 */
#ifndef KGEN_TESTS_GPU_PROBLEM_H
#define KGEN_TESTS_GPU_PROBLEM_H
#include <stddef.h>

#include "runtime/internal.h"

#define GP_ALPHA 0.75f
#define GP_BETA (-1.25f)
#define GP_POISON 0x7fc00000u   /* a quiet NaN */
#define GP_SENTINEL 0x7fc0dea1u /* another, in C's padding */

typedef struct gp_problem {
    const char *layout;
    int m, n, k, lda, ldb, ldc, arows, acols, brows, bcols;
    size_t na, nb, nc;
    float *a, *b, *c, *out, *cin;    /* cin: C as uploaded for the last run */
    double *ref, *mag, *ref0, *mag0; /* for beta = GP_BETA and beta = 0 */
    void *da, *db, *dc;
} gp_problem;

/* Writes the float with bit pattern `bits` n times. */
void gp_fill_bits(float *x, size_t n, unsigned bits);

/* Random operands (seeded) for M x N x K in `layout` (nn, nt, tn, tt),
 * leading dimensions 16-byte multiples with 4 floats of room (odd = 0),
 * odd (odd = 1) or minimal (odd = 2: A's and B's rows as long as they
 * are, lda = 1 for a "t" A of one column), the references, and the device copies of A and B. 1, or 0
 * when memory or the device failed (gp_free still frees what there is). */
int gp_init(kg_context *ctx, gp_problem *p, const char *layout, int m, int n, int k, int odd,
            unsigned long long seed);
void gp_free(kg_context *ctx, gp_problem *p);

/* Runs `kern` on the problem (beta = GP_BETA, or 0 on a C poisoned with
 * NaN) and returns its error against the reference (kgi_gemm_error_mag;
 * NaN where the result is NaN), +Inf when C's padding changed or the run
 * failed; -1 when the kernel refused the shape (KG_ERR_SHAPE). *st gets the
 * first failing status (KG_OK when none) and *why the context's last
 * error. */
double gp_run(kg_context *ctx, const kg_kernel *kern, gp_problem *p, int beta0, kg_status *st, const char **why);

/* NVRTC is slow and the tests have many kernels: compiles kernels 0 .. n-1
 * for sm_`arch` first, in parallel processes (one per core, at most 16)
 * that touch no CUDA, into the disk cache. config(i, ...) writes kernel i's
 * template (empty: the default) and configuration text, or returns 0 to
 * skip it. */
void gp_precompile(int arch, int n, int (*config)(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud),
                   void *ud);

#endif
