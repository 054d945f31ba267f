/*
 * bench_util.h -- what kgen's benchmark programs share: the shape list,
 * device operands with random contents, the cuBLAS reference (FP32,
 * pedantic math: no TF32), the comparison of two results, and timing with
 * CUDA events (warm-up, batches sized to a minimum duration, median).
 *
 * Prefix kgb_. These programs use the CUDA runtime and cuBLAS; libkgen does
 * not (it opens the driver with dlopen), so only bench/ links them. Of
 * libkgen they use only the public interface, kgen.h.
 */
#ifndef KGEN_BENCH_UTIL_H
#define KGEN_BENCH_UTIL_H

#include <stddef.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

/* One line of a shapes file: "tag M N K [LDA LDB LDC]". A leading
 * dimension of 0 (or none given) means the packed one for the layout. */
typedef struct kgb_shape {
    char tag[32];
    int m, n, k;
    int lda, ldb, ldc;
    int line;              /* its line in the shapes file, for messages */
} kgb_shape;

/* Reads a shapes file ('#' starts a comment; M, N, K >= 1; the three
 * leading dimensions are optional, all or none; each tag once). Returns
 * the number of shapes (> 0) and a malloc'd array in *out, or -1 after
 * printing what was wrong (the file and line). */
int kgb_read_shapes(const char *path, kgb_shape **out);

/* The packed leading dimensions of op(A), op(B) and C in `layout` ("nn",
 * "nt", "tn" or "tt"): A is stored M x K (K x M when transposed), B K x N
 * (N x K), C M x N. */
void kgb_packed_ld(const char *layout, int m, int n, int k, int *lda, int *ldb, int *ldc);

/* Checks a shape's explicit leading dimensions against the packed ones of
 * `layout` (each must be at least as long). Returns 0, or -1 after printing
 * which one is too short. */
int kgb_check_ld(const kgb_shape *s, const char *layout);

/* Device operands of one GEMM, row-major. lda, ldb, ldc: the shape's, or,
 * where it gives none, the packed ones with lda and ldb rounded up to a
 * multiple of ld_mult (1: packed). */
typedef struct kgb_problem {
    char layout[3];
    int m, n, k;
    int lda, ldb, ldc;
    float *a, *b;          /* device, random in (-1, 1), never 0 */
    float *c, *c_ref;      /* device: kgen's result, the reference's */
    float *c_init;         /* device: C's starting values (beta != 0), random */
    size_t a_count, b_count, c_count;
} kgb_problem;

/* Allocates and fills a problem; prints and returns -1 on failure. */
int kgb_problem_init(kgb_problem *p, const char *layout, const kgb_shape *s, int ld_mult,
                     unsigned long long seed);
void kgb_problem_free(kgb_problem *p);

/* Fills `count` floats of C with NaN (poison before a run with beta == 0)
 * or copies c_init into it (before a run with beta != 0). */
int kgb_poison(float *c, size_t count);
int kgb_restore(const kgb_problem *p, float *c);

/* C_ref = alpha * op(A) op(B) + beta * C_ref with cuBLAS (column-major
 * trick: C^T = op(B)^T op(A)^T), on the default stream. */
int kgb_cublas(cublasHandle_t h, const kgb_problem *p, float alpha, float beta, float *c);
/* A cuBLAS handle in pedantic FP32 mode (no TF32, no reduced precision). */
int kgb_cublas_open(cublasHandle_t *h);

/* Compares kgen's C with the reference over the M x N result: max |c - ref|
 * / max |ref|. NaN or Inf anywhere in it gives +Inf, and so does a change
 * in the padding between N and ldc: there c must still hold the poison
 * (`poisoned`: C was poisoned before kgen ran) or the reference's values
 * (C was restored from c_init, which the reference leaves there too).
 * Returns 0 and sets *err, or -1. */
int kgb_compare(const kgb_problem *p, const float *c, const float *ref, int poisoned, double *err);
/* The pass bound for kgb_compare at depth k (fp32 accumulation). */
double kgb_tolerance(int k);

/* Enqueues one run on the default stream; 0 or -1 after printing why. */
typedef int (*kgb_run_fn)(void *arg);

/* Times `run`: one warm-up, then `samples` samples, each the mean of a
 * batch of back-to-back runs sized to last at least `min_ms`, between two
 * CUDA events. Writes the median per run in milliseconds. */
int kgb_time(kgb_run_fn run, void *arg, int samples, double min_ms, double *median_ms);

/* Prints "what: <cuda error>" and returns -1 when rc is an error. */
int kgb_cuda_ok(cudaError_t rc, const char *what);

#endif
