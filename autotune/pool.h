/*
 * pool.h -- compiling candidates in parallel, and pruning them on what the
 * compiler reports.
 *
 * A pool of threads (one per core by default), each with its own CPU-only
 * context (its own Lua state, which is not thread-safe to share), renders
 * and compiles candidates through kg_compile, so that the CUBIN lands in the
 * disk cache where the GPU worker's kg_kernel_get finds it. After compiling,
 * registers x threads, spills and occupancy prune. With a shape gate set
 * (kgi_pool_gate), a candidate whose rendered geometry cannot run the tuned
 * shape is not compiled at all (pruned_shape). The main thread submits
 * candidates in the order it wants them and is woken through `notify_fd`
 * (one byte per finished candidate) while it times earlier ones on the GPU.
 */
#ifndef KGEN_AUTOTUNE_POOL_H
#define KGEN_AUTOTUNE_POOL_H

#include "autotune/result.h"
#include "autotune/space.h"

/* Rules applied after compiling. */
typedef struct kgi_prune_rules {
    int max_spill_bytes;       /* spill stores + loads allowed (default 0) */
    double min_occupancy;      /* resident warps / max warps per SM */
} kgi_prune_rules;

/* `kgen tune`'s rules unless told otherwise: no spills, at least 1/16 of
 * the SM's warps resident. */
#define KGI_PRUNE_RULES_DEFAULT {.max_spill_bytes = 0, .min_occupancy = 1.0 / 16}

/* What compiling one candidate found. */
typedef struct kgi_compiled {
    kgi_outcome prune;         /* KGI_OUT_NONE: runnable; else compile_error or pruned_* */
    char reason[1024];
    kg_compile_info info;
    kgi_geometry geo;
    kgi_occupancy occ;
    long smem;                 /* static + dynamic bytes per block */
} kgi_compiled;

typedef struct kgi_pool kgi_pool;

/* Starts `threads` threads compiling for sm_`arch`, checking against `lim`
 * (the device's). `template_path` is the colon-separated template path
 * (NULL: embedded only). */
kg_status kgi_pool_start(kgi_pool **out, int threads, const kgi_space *sp, const kgi_limits *lim, int arch,
                         const char *template_path, const kgi_prune_rules *rules, int notify_fd, char *err,
                         size_t errlen);
/* Whether a kernel of geometry `geo` can be tuned on `g` (operands packed,
 * 16-byte aligned pointers): its preconditions admit the shape, and pack=1
 * has something to pack (else it is the pack=0 kernel again). 0 and why
 * when not. The one test behind pruned_shape. */
int kgi_pool_admits(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t why_len);
/* The call the tuner times for M x N x K in `layout` ("nn" .. "tt"):
 * packed operands (each leading dimension its smallest), C's ldc N, and
 * stand-in pointers aligned like any allocation (no memory behind them). */
void kgi_packed_gemm(int m, int n, int k, const char *layout, float alpha, float beta, kg_gemm *g);

/* Sets the shape (NULL: none) that rendered candidates must admit before
 * they are compiled: one that does not is returned as pruned_shape, its
 * geometry filled, not compiled. Changing the gate forgets those results,
 * so that a candidate submitted again for the new shape is rendered again. */
void kgi_pool_gate(kgi_pool *p, const kg_gemm *g);

/* Queues candidate `idx` (once; later calls are ignored). */
void kgi_pool_submit(kgi_pool *p, int idx);
/* 1 and a copy of the outcome when candidate idx has been compiled, else 0. */
int kgi_pool_result(kgi_pool *p, int idx, kgi_compiled *out);
/* Pops a candidate finished since the last call (in completion order):
 * 1 and its index, or 0 when none is waiting. */
int kgi_pool_take(kgi_pool *p, int *idx);
/* Blocks until every submitted candidate is compiled. */
void kgi_pool_wait(kgi_pool *p);
/* The same for at most `seconds`: 1 when every one is compiled. */
int kgi_pool_wait_for(kgi_pool *p, double seconds);
/* How many candidates compiled so far, and the total compile time (ms)
 * NVRTC spent on those that did not come from a cache. */
void kgi_pool_stats(kgi_pool *p, int *compiled, int *from_cache, double *compile_ms);
/* Stops the threads (after their current compile) and frees the pool. */
void kgi_pool_stop(kgi_pool *p);
/* Drops the queue and stops the threads, waiting at most `seconds` (< 0:
 * as long as it takes) for the compiles in flight; threads still compiling
 * then are detached and the pool is left to them (a stopped run's process
 * is about to end). They hold copies of what they compile and no longer
 * write to the notify pipe. Returns how many were left so (0: the pool is
 * freed). */
int kgi_pool_stop_within(kgi_pool *p, double seconds);

/* Renders tmpl/config (with its layout) in ctx's host (a thread's own
 * context in the pool) against `lim` and, unless `gate` is given and the
 * rendered kernel cannot run it (kgi_pool_admits: then 1, prune
 * pruned_shape, nothing compiled), compiles it for sm_`arch` through
 * kg_compile and applies `rules` (kgi_prune_compiled). Fills c: the
 * outcome (KGI_OUT_NONE: runnable; pruned_check where check() refused it),
 * the reason, the compiler's report, the geometry. The pool compiles every
 * candidate with it (the template and configuration copied first, so that
 * a thread left to finish after kgi_pool_stop_within reads no freed
 * space); `kgen catalogue twins` its holes' kernels and twins. */
int kgi_compile_candidate(kg_context *ctx, const kgi_limits *lim, const kgi_prune_rules *rules, int arch,
                          const char *tmpl, const char *config, const kg_gemm *gate, kgi_compiled *c);

/* The post-compile rules alone (registers, spills, occupancy) for a
 * compiled candidate: fills c->occ and, when one applies, c->prune and
 * c->reason. Exposed for tests against a limits table. */
void kgi_prune_compiled(const kgi_limits *lim, const kgi_prune_rules *rules, kgi_compiled *c);

#endif
