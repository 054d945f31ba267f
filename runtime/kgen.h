/*
 * kgen.h -- the public interface of libkgen.
 *
 * libkgen renders tiled matrix-multiplication kernels from Lua templates,
 * compiles them with NVRTC, caches them in memory and on disk, and launches
 * them through the CUDA driver API, which it opens with dlopen: a program
 * linked with libkgen starts on any machine, and on one without a GPU every
 * device operation fails with KG_ERR_NO_DRIVER or KG_ERR_NO_DEVICE while
 * rendering, compiling for an explicit architecture and analysis still work.
 *
 * Conventions. Every function returns a kg_status; on failure the context's
 * last-error text (kg_last_error) says what went wrong, including the whole
 * NVRTC log or the driver's error name. The library never prints. Matrices
 * are row-major fp32; device pointers are the driver's CUdeviceptr values
 * (or the runtime API's pointers) passed as `float *`.
 *
 * A configuration is text such as "bm=128 bn=128 bk=16 tm=8 tn=8", parsed
 * strictly by the template's declared parameters; omitted ones take their
 * defaults.
 */
#ifndef KGEN_H
#define KGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KG_VERSION "0.1.0"

typedef enum kg_status {
    KG_OK = 0,
    KG_ERR_INVALID_ARG,   /* a NULL handle or an argument out of its range */
    KG_ERR_CONFIG,        /* configuration text: unknown name, bad value or broken rule */
    KG_ERR_TEMPLATE,      /* a template failed to load or raised a Lua error */
    KG_ERR_SHAPE,         /* M, N, K, leading dimension or alignment breaks the kernel's precondition */
    KG_ERR_NO_DRIVER,     /* libcuda.so.1 could not be opened: no NVIDIA driver on this machine */
    KG_ERR_NO_DEVICE,     /* no CUDA device, or the ordinal is out of range */
    KG_ERR_DRIVER,        /* a CUDA driver call failed; the last error names the call and the code */
    KG_ERR_COMPILE,       /* NVRTC rejected the source; the last error carries the whole log */
    KG_ERR_RESOURCES,     /* the kernel does not fit the device (threads, registers, shared memory) */
    KG_ERR_CACHE,         /* the on-disk kernel cache could not be read or written */
    KG_ERR_DB,            /* the tuning database could not be opened, read or written */
    KG_ERR_IO,            /* a file could not be read or written */
    KG_ERR_NOMEM,         /* out of host memory */
    KG_ERR_WRONG,         /* a kernel's result disagreed with the reference */
    KG_ERR_TIMEOUT        /* a kernel or a child process did not finish in time */
} kg_status;

/* A short, static description of a status code. */
const char *kg_strerror(kg_status status);

/* ---------------------------------------------------------------- context */

typedef struct kg_context kg_context;

#define KG_DEVICE_NONE (-1) /* a context without a GPU: render, compile, analyse */

/*
 * Opens a context on GPU `device` (0-based; the device's primary context, so
 * it cooperates with programs that also use the CUDA runtime), or a CPU-only
 * context with KG_DEVICE_NONE. Like sqlite3_open, *ctx is set even when the
 * call fails (except KG_ERR_NOMEM), so that kg_last_error(*ctx) can say why;
 * close it with kg_context_close either way.
 *
 * Environment: KGEN_TEMPLATE_PATH (colon-separated directories searched
 * before the embedded templates), KGEN_CACHE_DIR / XDG_CACHE_HOME (disk
 * cache), KGEN_CACHE=0 (no disk cache), KGEN_DB (tuning database),
 * KGEN_CATALOGUE (a kernel catalogue file read in place of the embedded
 * one for its architecture),
 * KGEN_VERBOSE=1 (kg_matmul's choices are kept in kg_matmul_explain; template
 * errors carry a Lua traceback), KGEN_CUDA_DRIVER (a driver library to open
 * instead of libcuda.so.1).
 *
 * Threads: a context is used by one thread at a time; open one context per
 * thread (they share the device's primary context and the disk cache).
 */
kg_status kg_context_open(kg_context **ctx, int device);
void kg_context_close(kg_context *ctx);
const char *kg_last_error(const kg_context *ctx);

/* Directories (colon-separated) searched for templates before the embedded
 * ones; overrides KGEN_TEMPLATE_PATH. NULL restores the default. Kernels the
 * context returned before are released (they may come from the old path). */
kg_status kg_set_template_path(kg_context *ctx, const char *path);

/* The target architecture, e.g. 90 for sm_90. On a device context it is the
 * device's; a CPU-only context starts at 90 and may be set to any NVRTC
 * supports. The device limits used by templates' check() follow it. */
kg_status kg_set_arch(kg_context *ctx, int sm);
int kg_arch(const kg_context *ctx);

/* --------------------------------------------------------------- devices */

typedef struct kg_device_info {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    size_t smem_per_block;         /* bytes without opt-in (static limit) */
    size_t smem_per_block_optin;   /* bytes with the dynamic-size attribute raised */
    size_t smem_per_sm;
    int regs_per_block, regs_per_sm;
    int max_threads_per_block, max_threads_per_sm;
    int max_blocks_per_sm;
    int warp_size;
    size_t l2_bytes;
    size_t total_mem;
    int sm_clock_khz, mem_clock_khz, bus_width_bits;
    double peak_bandwidth_gbs;     /* 2 * memory clock * bus width / 8 */
    double peak_fp32_tflops;       /* SMs * FP32 lanes per SM * 2 * SM clock */
} kg_device_info;

/* Number of CUDA devices; KG_ERR_NO_DRIVER where there is no driver. */
kg_status kg_device_count(kg_context *ctx, int *count);
/* Limits of the context's device (a device context), or, on a CPU-only
 * context, of the architecture set with kg_set_arch from kgen's table. */
kg_status kg_device_query(kg_context *ctx, int device, kg_device_info *info);

/* ------------------------------------------------------------ generation */

typedef struct kg_source kg_source;

/* Parses `config` for template `tmpl` ("matmul" when NULL), checks it
 * against the context's limits and renders the CUDA source. */
kg_status kg_render(kg_context *ctx, const char *tmpl, const char *config, kg_source **out);
const char *kg_source_text(const kg_source *src, size_t *len);
const char *kg_source_entry(const kg_source *src);
/* The canonical configuration: every parameter, in the template's order. */
const char *kg_source_config(const kg_source *src);
void kg_source_free(kg_source *src);

/* ------------------------------------------------------------- compiling */

typedef struct kg_compile_info {
    char arch[16];           /* "sm_90" */
    int registers;           /* per thread */
    int spill_stores;        /* bytes */
    int spill_loads;         /* bytes */
    int stack_bytes;         /* stack frame per thread */
    size_t smem_static;      /* bytes, as the compiler reports */
    size_t smem_dynamic;     /* bytes the launch must provide */
    size_t cubin_size;
    double compile_ms;       /* 0 when it came from a cache */
    int cache;               /* 0 compiled now, 1 memory cache, 2 disk cache */
} kg_compile_info;

typedef struct kg_cubin kg_cubin;

/* Renders and compiles to CUBIN for sm_`arch` (0: the context's arch),
 * through the caches. Works without a GPU. */
kg_status kg_compile(kg_context *ctx, const char *tmpl, const char *config, int arch, kg_cubin **out);
const void *kg_cubin_data(const kg_cubin *cubin, size_t *size);
const kg_compile_info *kg_cubin_info(const kg_cubin *cubin);
void kg_cubin_free(kg_cubin *cubin);

/* --------------------------------------------------------------- kernels */

typedef struct kg_kernel kg_kernel; /* owned by the context; valid until it closes */

typedef struct kg_kernel_info {
    char template_name[64];
    char config[512];
    char entry[160];
    kg_compile_info compile;
    int threads;
    unsigned block[3];
    int max_blocks_per_sm;   /* occupancy the driver reports for this kernel */
    size_t local_bytes;      /* per-thread local memory */
    int overlap;             /* 1: launched to overlap its pre kernel (split-K's beta
                                pass; programmatic dependent launch, sm_90); 2: and
                                the pre kernel to overlap the kernel before it, which
                                it waits for before it starts this one */
    int pack;                /* 1: a launch first copies the operands whose rows do not
                                hold whole 16-byte vectors into a padded workspace
                                (pack=1; kg_kernel_launch) */
} kg_kernel_info;

/* Gets (renders, compiles, loads; or finds cached) a kernel on the device. */
kg_status kg_kernel_get(kg_context *ctx, const char *tmpl, const char *config, kg_kernel **out);
kg_status kg_kernel_query(kg_context *ctx, const kg_kernel *k, kg_kernel_info *info);

/* op(A) is M x K, op(B) K x N, C M x N; all row-major device buffers. */
typedef struct kg_gemm {
    int m, n, k;
    float alpha, beta;
    const float *a; int lda;
    const float *b; int ldb;
    float *c; int ldc;
} kg_gemm;

/* Checks the shape against the kernel's preconditions (KG_ERR_SHAPE names
 * the broken one) and launches on `stream` (a CUstream; NULL: default).
 * A kernel with info.pack first copies, on the same stream, each operand
 * whose leading dimension, pointer or contiguous M or N extent is not a
 * multiple of 4 floats (16 bytes) into a workspace with padded rows; a
 * stream-K kernel with skw=1, where C's ldc or pointer is not 16-byte
 * granular, runs its workspace variant and post kernel (templates/README.md,
 * `workspace`). Workspaces come from a memory pool the context owns and
 * keeps (its largest size so far) until kg_context_close. */
kg_status kg_kernel_launch(kg_context *ctx, const kg_kernel *k, const kg_gemm *g, void *stream);

/*
 * C = alpha * op(A) * op(B) + beta * C, with layout "nn", "nt", "tn" or "tt"
 * (first letter: A, second: B; "t": the operand is stored transposed). The
 * configuration comes from the tuning database (the exact shape), else the
 * measured kernel catalogue built into libkgen for the architecture (its
 * kernels ranked for the shape by a wave model calibrated on their
 * measurements; KGEN_CATALOGUE=FILE reads another), else a model-only
 * choice (catalogue/README.md); the choice is cached per shape, so repeated
 * calls cost a hash lookup and a launch.
 */
kg_status kg_matmul(kg_context *ctx, const char *layout, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc, void *stream);

/* Which configuration kg_matmul uses for a shape, and why ("tuned: exact
 * shape 4096x4096x4096 in <db>", "catalogue sm_90 (...): kernel 7 ...,
 * predicted ... from ...; runner-up ...", "no catalogue for sm_80:
 * model-only choice ..."). A call whose vector operand lies as one row
 * (M = 1 with A "t" and lda = 1, N = 1 with B "n" and ldb = 1) runs, unless
 * the tuning database has the shape in the call's own layout, the kernel
 * of the layout that reads it so: its configuration names that layout and
 * its reason says "tn read as nn (...)" (catalogue/README.md). For a shape
 * kg_matmul has not recorded, the answer is for minimal leading dimensions
 * (lda = 1 for such an A) and 16-byte aligned A, B and C.
 * The configuration is whole or an error
 * (KG_ERR_INVALID_ARG: config_len too small; 512 bytes hold any); a reason
 * longer than why_len is cut and ends in "...". */
kg_status kg_matmul_explain(kg_context *ctx, const char *layout, int m, int n, int k,
                            char *config, size_t config_len, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif /* KGEN_H */
