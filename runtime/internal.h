/*
 * internal.h -- what libkgen's runtime modules share and users never see.
 *
 * Prefix kgi_. One subsystem per .c file in runtime/:
 *   context.c    contexts, last-error text, kg_strerror, kg_render
 *   arch.c       limits of each architecture (offline table)
 *   device.c     device count and query, the device's limits
 *   driver.c     the CUDA driver, opened with dlopen; device memory
 *   nvrtc.c      NVRTC compilation and the ptxas resource report
 *   cache.c      in-memory and on-disk kernel caches
 *   compile.c    kg_compile: render, then compile through the caches
 *   launch.c     kernels on a device, preconditions, launch
 *   matmul.c     kg_matmul and its choice of kernel per shape
 *   tunedb.c     the tuning database's read side (tunedb.h)
 *   catalogue.c  the kernel catalogue's parser, the context's catalogues
 *   pick.c       the catalogue's model: its kernels ranked for a call
 *   occupancy.c  resident blocks per SM and the binding resource
 *   verify.c     the float64 reference and the error measure
 *   timing.c     CUDA-event timing of kernels
 * The generator (the Lua host, gen/host.h) sits below them; the tuner
 * (autotune/) above.
 */
#ifndef KGEN_INTERNAL_H
#define KGEN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "gen/host.h"
#include "kgen.h"

#ifndef KGEN_VERSION
#define KGEN_VERSION KG_VERSION
#endif

#if defined(__GNUC__)
#define KGI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KGI_PRINTF(a, b)
#endif

/* ------------------------------------------------------------ limits */

/* The architecture numbers kgen takes (`--arch sm_XY`, a limits file's
 * `sm`): 10 x major + minor, as nvcc and NVRTC write them. */
#define KGI_ARCH_MIN 10
#define KGI_ARCH_MAX 1000
/* The table entry for sm_`sm`, or NULL. */
const kgi_limits *kgi_arch_limits(int sm);
/* Every architecture in the table, ending with an entry whose sm is 0. */
const kgi_limits *kgi_arch_table(void);
/* Limits of the context's target: the device's when there is one. */
const kgi_limits *kgi_context_limits(kg_context *ctx);
/* runtime/device.c: the limits templates check against, from a device's
 * attributes (allocation granularities and FP32 lanes from the
 * architecture table): a context's own for its device. */
void kgi_limits_from_device(const kg_device_info *info, kgi_limits *lim);

/* ------------------------------------------------------------ occupancy */

/* runtime/occupancy.c: resident blocks per SM and the resource that binds. */
typedef struct kgi_occupancy {
    int threads, regs_per_thread, warps_per_block;
    int regs_per_warp;             /* after rounding to the allocation unit */
    int regs_per_block;
    size_t smem_per_block;         /* with the reservation, rounded */
    int by_threads, by_blocks, by_regs, by_smem; /* blocks each resource allows */
    int blocks_per_sm, warps_per_sm, threads_per_sm;
    double occupancy;              /* resident warps / max warps per SM */
    const char *limiter;           /* "threads", "blocks", "registers", "shared memory" */
} kgi_occupancy;

void kgi_occupancy_calc(const kgi_limits *lim, int threads, int regs_per_thread, size_t smem_bytes,
                        kgi_occupancy *out);
/* The most registers per thread that still let registers hold as many
 * blocks as threads, blocks and shared memory allow (0: none fits). */
int kgi_occupancy_max_regs(const kgi_limits *lim, int threads, size_t smem_bytes);

/* ------------------------------------------------------------ verification */

/* runtime/verify.c: the float64 reference everything is checked against. */

/* Uniform values in [-1, 1) from a 64-bit seed (splitmix64); never all zero. */
void kgi_fill_random(float *x, size_t n, unsigned long long seed);
/* out[i*n + j] = alpha * sum_k op(A)[i,k] op(B)[k,j] + beta * C_in[i,j], in
 * float64; c_in may be NULL when beta == 0. Row-major; layout as kg_matmul. */
void kgi_ref_gemm(const char *layout, int m, int n, int k, double alpha, const float *a, int lda,
                  const float *b, int ldb, double beta, const float *c_in, int ldc, double *out);
/* Error of c (ld ldc) against ref: max over elements of |c - ref| divided by
 * that element's magnitude bound |alpha| sum_k |a||b| + |beta||c_in| (so it
 * is relative, and meaningful where ref is near 0). NaN or Inf in c where ref
 * is finite gives +Inf; NaN in ref must be NaN in c (NaN propagates) or +Inf. */
double kgi_gemm_error(const char *layout, int m, int n, int k, double alpha, const float *a, int lda,
                      const float *b, int ldb, double beta, const float *c_in, const float *c, int ldc,
                      const double *ref);
/* The largest error fp32 accumulation may show over K terms: the pass bound. */
double kgi_gemm_tolerance(int k);
/* kgi_gemm_error in two steps, for checking many kernels against one
 * reference: the magnitude bound of every element (M x N, row-major), then
 * the error of one result against ref and that bound. */
kg_status kgi_gemm_magnitude(const char *layout, int m, int n, int k, double alpha, const float *a, int lda,
                             const float *b, int ldb, double beta, const float *c_in, int ldc, double *mag);
double kgi_gemm_error_mag(int m, int n, const float *c, int ldc, const double *ref, const double *mag);

/* ------------------------------------------------------------ device helpers */

/* runtime/driver.c: device memory for libkgen's own modules (kgen run, the
 * tuner, explain, tests). Pointers are CUdeviceptr values. The context's
 * device must be open (else KG_ERR_NO_DEVICE). */
kg_status kgi_dev_alloc(kg_context *ctx, size_t bytes, void **dptr);
void kgi_dev_free(kg_context *ctx, void *dptr);
kg_status kgi_dev_upload(kg_context *ctx, void *dst, const void *src, size_t bytes);
kg_status kgi_dev_download(kg_context *ctx, void *dst, const void *src, size_t bytes);
kg_status kgi_dev_copy(kg_context *ctx, void *dst, const void *src, size_t bytes);
/* Sets `count` 32-bit words to `value` (0x7fc00000 poisons floats with NaN). */
kg_status kgi_dev_fill32(kg_context *ctx, void *dst, unsigned value, size_t count);
kg_status kgi_dev_sync(kg_context *ctx);
/* The driver's CUDA version (e.g. 13000), loading the driver if need be. */
kg_status kgi_driver_version(kg_context *ctx, int *version);

/* runtime/verify.c: runs kernel `k` on fresh random A, B and C (from `seed`;
 * C poisoned with NaN when beta == 0), leading dimensions the minimum plus
 * `ld_pad`, and compares with kgi_ref_gemm. *error gets kgi_gemm_error.
 * KG_OK when it is within kgi_gemm_tolerance(k), KG_ERR_WRONG otherwise. */
kg_status kgi_verify_kernel(kg_context *ctx, const kg_kernel *kern, int m, int n, int k, float alpha,
                            float beta, int ld_pad, unsigned long long seed, double *error);
/* The same with C placed `c_shift` floats (0-3) past a 16-byte boundary: the
 * floats before it are a sentinel that must survive, like C's padding. */
kg_status kgi_verify_kernel_at(kg_context *ctx, const kg_kernel *kern, int m, int n, int k, float alpha,
                               float beta, int ld_pad, int c_shift, unsigned long long seed, double *error);

/* runtime/timing.c: times launches of `kern` on `g` with CUDA events: warm-up,
 * then repetitions until the interquartile spread is under 2% of the median
 * or `max_seconds` pass (at least 10, at most 1000), the L2 flushed between
 * runs when `flush_l2`, and C restored from `c_init` (a device copy, may be
 * NULL when beta == 0) before each run. Median, min, max in milliseconds. */
typedef struct kgi_timing {
    double median_ms, min_ms, max_ms;
    double spread;     /* (q3 - q1) / median */
    int reps;
} kgi_timing;
kg_status kgi_time_kernel(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, const float *c_init,
                          int flush_l2, double max_seconds, kgi_timing *out);
/* The same with the repetition bounds chosen by the caller (min_reps ==
 * max_reps: exactly that many). */
kg_status kgi_time_kernel_reps(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, const float *c_init,
                               int flush_l2, int min_reps, int max_reps, double max_seconds, kgi_timing *out);

/* One steady-state sample: `count` launches back to back on the same
 * operands between two events (no flush, C not restored between them: the
 * time does not depend on C's values), *ms the time per launch. */
kg_status kgi_time_back_to_back(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, int count, double *ms);
/* Samples of that regime: after a warm-up that sizes them, samples of
 * about `sample_ms` each (at most 1000 launches) until the interquartile
 * spread of their times per launch is under 2% (at least `min_samples`),
 * `max_seconds` pass or `max_samples` are taken; their median, extremes
 * and spread per launch in *out (reps: the samples). */
kg_status kgi_time_loop(kg_context *ctx, const kg_kernel *kern, const kg_gemm *g, double sample_ms, int min_samples,
                        int max_samples, double max_seconds, kgi_timing *out);
/* The launches one sample of `sample_ms` holds at `per_launch_ms` each:
 * ceil(sample / per launch), from 1 to 1000 (1000 when per_launch_ms <= 0). */
int kgi_loop_count(double sample_ms, double per_launch_ms);

/* ------------------------------------------------------------ caches */

/* runtime/cache.c: the disk cache's directory, or NULL when it is off;
 * *why says why it is off or, when on, the last problem writing to it ("" when none). */
const char *kgi_cache_dir(kg_context *ctx, const char **why);
/* The same, for a command that must store into it (`kgen precompile`): the
 * directory made ready (created, checked as for any write) and a file
 * written and removed in it, so that an unusable directory is known before
 * any work; NULL and *why saying why not. Clears the last write problem. */
const char *kgi_cache_dir_writable(kg_context *ctx, const char **why);
/* While the disk cache is on: whether a write to it failed since the last
 * call (1, the problem copied into out and cleared) or not (0). */
int kgi_cache_take_problem(kg_context *ctx, char *out, size_t len);
/* runtime/cache.c: other entries of the disk cache (the tuner's space
 * walks), DIR/<16 hex digits of key>.<ext> under the same rules (a trusted
 * directory, atomic writes, regular files only), each with a header that
 * holds the key and a checksum of the data. kgi_cache_blob_get: 1 and
 * *data (malloc'd) on a hit; 0 on a miss, the cache off or a damaged or
 * truncated file (deleted). kgi_cache_blob_put: a failure is noted for
 * kgi_cache_dir's why and otherwise ignored. */
int kgi_cache_blob_get(kg_context *ctx, const char *ext, unsigned long long key, void **data, size_t *len);
void kgi_cache_blob_put(kg_context *ctx, const char *ext, unsigned long long key, const void *data, size_t len);

/* runtime/launch.c: the shared-memory carveout, in percent of smem_per_sm,
 * that holds `blocks` blocks of `smem` bytes (plus `reserved` each): the
 * smallest of the capacities sm_80 and later offer (0 to 228 KB) that is
 * large enough, as the driver picks for a kernel with no preference. A
 * beta pass that overlaps its main kernel asks for the main kernel's: an SM
 * runs blocks of two kernels at once only when their carveouts agree. */
int kgi_carveout_percent(size_t smem_per_sm, size_t reserved, int blocks, size_t smem);

/* runtime/launch.c: whether a kernel of geometry `geo` may run on `g`
 * (sizes, pointers, leading dimensions, the multiples and vector alignment
 * of `requires`, the grid's limits); 0 with the broken precondition named
 * in `why` otherwise. What kg_kernel_launch checks; needs no GPU. */
int kgi_geometry_admits(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t why_len);
/* For a kernel with packing (geo->pack_multiple): which operands a launch
 * on `g` packs, 1 (A) | 2 (B); 0 when the kernel reads both as given. */
int kgi_packed_operands(const kgi_geometry *geo, const kg_gemm *g);
/* The leading dimension of a packed copy of an operand whose rows are
 * `cols` floats long: cols rounded up to geo->pack_multiple (cols at most
 * KGI_MAX_DIM, so it fits an int). */
int kgi_packed_ld(const kgi_geometry *geo, int cols);

/* ------------------------------------------------------------ NVRTC */

typedef struct kgi_nvrtc_result {
    void *cubin;
    size_t cubin_size;
    char *log;              /* compiler log, NUL-terminated (may be empty) */
    kg_compile_info info;
} kgi_nvrtc_result;

/* Compiles CUDA source to CUBIN for sm_`arch` with the resource report on.
 * Thread-safe. On failure returns KG_ERR_COMPILE and err holds the log. */
kg_status kgi_nvrtc_compile(const char *src, const char *name, int arch,
                            kgi_nvrtc_result *out, char **err);
void kgi_nvrtc_result_free(kgi_nvrtc_result *r);
/* NVRTC's version as major*1000 + minor*10 (e.g. 13000). */
int kgi_nvrtc_version(void);
/* Whether this NVRTC compiles for sm_`arch`: 1, or 0 with `why` saying
 * which architectures it does compile for. */
int kgi_nvrtc_supports(int arch, char *why, size_t why_len);
/* The options used for every compile (part of the cache key). */
const char *kgi_nvrtc_options_text(int arch);
/* Reads registers, spills, stack and shared memory out of a ptxas report. */
void kgi_parse_ptxas(const char *log, kg_compile_info *info);

/* ------------------------------------------------------------ context */

struct kgi_driver;   /* runtime/driver.c */
struct kgi_cache;    /* runtime/cache.c */
struct kgi_kernels;  /* runtime/launch.c */
struct kgi_tunedb;   /* runtime/tunedb.c */
struct kgi_catset;   /* runtime/catalogue.c */

struct kg_context {
    int device;               /* ordinal, or KG_DEVICE_NONE */
    int arch;                 /* sm number of the target */
    kgi_limits limits;        /* of the target */
    char *error;              /* last error text, heap-allocated */
    kgi_host *host;
    struct kgi_driver *drv;   /* NULL until a device is opened */
    struct kgi_cache *cache;
    struct kgi_kernels *kernels;
    struct kgi_tunedb *db;
    struct kgi_catset *catalogues;
    int verbose;
};

/* Sets the context's last error (printf-style) and returns `status`. */
kg_status kgi_fail(kg_context *ctx, kg_status status, const char *fmt, ...) KGI_PRINTF(3, 4);
/* Takes ownership of a heap string as the last error. */
kg_status kgi_fail_owned(kg_context *ctx, kg_status status, char *msg);

/* 64-bit FNV-1a, chained: kgi_hash(data, n, kgi_hash(...)) */
#define KGI_HASH_SEED 0xcbf29ce484222325ULL
unsigned long long kgi_hash(const void *data, size_t n, unsigned long long h);

/* The whole of `f` (at most `max` bytes) in a malloc'ed buffer of *len bytes,
 * not NUL-terminated. NULL on failure, with err naming `what` (a label such
 * as "KGEN_CATALOGUE", or "") and `path`: "cannot read WHAT 'PATH'",
 * "WHAT 'PATH' is larger than N MiB", or out of memory. */
char *kgi_read_stream(FILE *f, const char *what, const char *path, size_t max, size_t *len, char *err,
                      size_t errlen);
/* The same for the file at `path`, opened and closed here ("cannot open
 * WHAT 'PATH': REASON" when it cannot be opened). */
char *kgi_read_file(const char *what, const char *path, size_t max, size_t *len, char *err, size_t errlen);

#endif /* KGEN_INTERNAL_H */
