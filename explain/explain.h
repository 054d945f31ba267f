/*
 * explain.h -- what the parts of `kgen explain` share.
 *
 *   explain_model.c   pure arithmetic: bank conflicts and sectors of one warp
 *                     request, the machine description (table, device, limits
 *                     file), traffic and roofline figures
 *   explain_access.c  evaluates a template's accesses() warp by warp
 *   explain_svg.c     the roofline drawing
 *   explain_db.c      timed configurations of a tuning sweep (--from-db)
 *   explain_report.c  the text and JSON reports
 *   cli/cmd_explain.c the command: options, compile, occupancy, measurement
 *
 * Nothing here prints except explain_report.c; the other parts return
 * errors as text so that tests can call them.
 */
#ifndef KGEN_EXPLAIN_H
#define KGEN_EXPLAIN_H

#include <stddef.h>
#include <stdio.h>

#include "runtime/internal.h"

#define KGC_BANKS 32        /* shared-memory banks, 4 bytes wide, since Fermi */
#define KGC_BANK_BYTES 4
#define KGC_SECTOR 32       /* bytes: the unit L1/L2 fetch from device memory */
#define KGC_LINE 128        /* bytes: a cache line (4 sectors) */

/* ------------------------------------------------------------ one warp request */

/* Shared memory, one warp-wide load or store. The request is served in
 * phases (the full warp for accesses of up to 4 bytes, half-warps for 8 and
 * 16 bytes); in each phase a bank serves one distinct 4-byte word per
 * wavefront, and threads reading the same word share it (broadcast). */
typedef struct kgc_bank {
    int active;        /* threads that execute the statement */
    int phases;        /* phases with at least one active thread */
    int wavefronts;    /* what the request costs */
    int ideal;         /* the fewest wavefronts its distinct words need */
    int way;           /* most distinct words one bank serves in one phase */
    int bank;          /* a bank that serves `way` words (the example below) */
    int nexample;
    struct { int tid; long long word; } example[8]; /* threads on `bank` in that phase */
} kgc_bank;

/* `addr` holds each lane's byte address, or -1 where the lane is inactive;
 * `tid0` is lane 0's thread index (for the example). */
void kgc_bank_request(const long long *addr, int lanes, int width, int tid0, kgc_bank *out);

/* Global memory, one warp-wide load or store: the distinct 32-byte sectors
 * and 128-byte lines its byte ranges touch against the bytes it asks for. */
typedef struct kgc_coal {
    int active;
    long long requested;  /* active threads x width */
    long long unique;     /* distinct bytes (threads may share) */
    int sectors;
    int ideal_sectors;    /* ceil(unique / 32): the same bytes, contiguous and aligned */
    int lines;
} kgc_coal;

void kgc_coal_request(const long long *addr, int lanes, int width, kgc_coal *out);

/* ------------------------------------------------------------ accesses */

/* One statement of the kernel, summed over the warps of block (0, 0) and
 * the statement's unrolled repetitions. */
typedef struct kgc_access {
    char name[128];
    char array[32];
    int shared;            /* 1 shared, 0 global */
    int store;             /* 1 store, 0 load */
    int width, iters;
    int per_phase;         /* executions per K phase (shared roof), 0 unknown */
    int per_phase_given;   /* the template said so (else assumed) */
    int requests;          /* warp requests with an active thread */
    /* shared */
    long long wavefronts, ideal;
    kgc_bank worst;        /* the request with the highest wavefronts / ideal */
    int worst_warp, worst_iter;
    /* global */
    long long requested, unique, sectors, ideal_sectors, lines;
    kgc_coal gworst;       /* the request with the most sectors per ideal */
    int gworst_warp, gworst_iter;
} kgc_access;

typedef struct kgc_access_set {
    kgc_access *v;
    int n;
    char config[512];      /* the configuration evaluated */
} kgc_access_set;

/* M, N, K and the leading dimensions the analysis assumes. */
typedef struct kgc_shape {
    long long m, n, k, lda, ldb, ldc;
} kgc_shape;

/* Calls template `tmpl`'s accesses(cfg, shape) for `config` and evaluates
 * every entry for each warp of a block of `threads` threads. `tile_k` is the
 * default per-phase count of shared-memory loads (each k step of the tile).
 * KG_ERR_TEMPLATE with err "...no accesses()..." when the template has none:
 * *missing is set then. */
kg_status kgc_eval_accesses(kgi_host *h, const char *tmpl, const char *config, const kgc_shape *shape,
                            int threads, int warp_size, int tile_k, kgc_access_set *out, int *missing,
                            char *err, size_t errlen);
void kgc_access_set_free(kgc_access_set *s);

/* ------------------------------------------------------------ the machine */

typedef enum { KGC_SRC_TABLE, KGC_SRC_DEVICE, KGC_SRC_FILE } kgc_machine_source;

/* The target: its limits and the figures its roofline needs. */
typedef struct kgc_machine {
    kgi_limits lim;
    kgc_machine_source from;
    char what[512];         /* "offline table, reference part H100 SXM5", "device 0: ...", "limits file F" */
    char part[128];         /* the part the peak figures are for */
    int sm_count;
    double clock_ghz;
    double peak_gflops;     /* FP32, no tensor cores */
    double bandwidth_gbs;   /* device memory */
    int peak_given;         /* a limits file gave peak_tflops directly */
} kgc_machine;

/* The table entry for sm_`sm` with its reference part's figures. */
int kgc_machine_from_table(int sm, kgc_machine *m);

/* Reads a limits file (`key = value` lines, '#' comments) over the table
 * entry named by its `base` key, else `base_sm`. On error returns -1 with err
 * naming the file, line and key. */
int kgc_machine_from_file(const char *path, int base_sm, kgc_machine *m, char *err, size_t errlen);
/* The same from text in memory (`name` is used in messages). */
int kgc_machine_parse(const char *text, const char *name, int base_sm, kgc_machine *m, char *err, size_t errlen);

/* The keys of a limits file: name, kind, the kgc_machine field it sets, its
 * meaning (explain_model.c's parser and `kgen help explain` both use this). */
#define KGC_LIMITS_KEYS(X)                                                                                        \
    X(base, K_BASE, part, "table entry the other keys start from, e.g. sm_86 (default: --arch, else sm_90)")     \
    X(name, K_TEXT, lim.name, "what the report calls the device")                                                 \
    X(sm, K_INT, lim.sm, "architecture to compile for (86 = sm_86): registers come from that compile")           \
    X(max_threads_per_block, K_INT, lim.max_threads_per_block, "threads a block may have")                       \
    X(max_threads_per_sm, K_INT, lim.max_threads_per_sm, "resident threads per SM")                              \
    X(max_warps_per_sm, K_INT, lim.max_warps_per_sm, "resident warps per SM (default max_threads_per_sm / warp_size)") \
    X(max_blocks_per_sm, K_INT, lim.max_blocks_per_sm, "resident blocks per SM")                                 \
    X(warp_size, K_INT, lim.warp_size, "threads per warp")                                                       \
    X(regs_per_sm, K_INT, lim.regs_per_sm, "32-bit registers per SM")                                             \
    X(regs_per_block, K_INT, lim.regs_per_block, "registers one block may use")                                  \
    X(max_regs_per_thread, K_INT, lim.max_regs_per_thread, "registers one thread may use")                       \
    X(reg_alloc_unit, K_INT, lim.reg_alloc_unit, "a warp's registers come in multiples of this (1: exact)")      \
    X(smem_per_sm, K_BYTES, lim.smem_per_sm, "shared memory per SM in bytes (suffix K or M allowed)")            \
    X(smem_per_block, K_BYTES, lim.smem_per_block, "static shared memory a block may declare")                   \
    X(smem_per_block_optin, K_BYTES, lim.smem_per_block_optin, "shared memory a block may use with the opt-in")  \
    X(smem_reserved_per_block, K_BYTES, lim.smem_reserved_per_block, "shared memory the system takes per block (0 allowed)") \
    X(smem_alloc_unit, K_BYTES, lim.smem_alloc_unit, "a block's shared memory comes in multiples of this")       \
    X(fp32_lanes_per_sm, K_INT, lim.fp32_lanes_per_sm, "FP32 units per SM (one multiply-add each per clock)")    \
    X(l2_bytes, K_BYTES, lim.ref_l2_bytes, "L2 cache size")                                                       \
    X(sm_count, K_INT, sm_count, "SMs on the device")                                                             \
    X(clock_ghz, K_REAL, clock_ghz, "SM clock in GHz")                                                            \
    X(bandwidth_gbs, K_REAL, bandwidth_gbs, "device-memory bandwidth in GB/s")                                    \
    X(peak_tflops, K_REAL, peak_gflops, "FP32 peak in TFLOP/s (default sm_count x fp32_lanes_per_sm x 2 x clock_ghz)") \
    X(part, K_TEXT, part, "the device the peak figures describe")
#define KGC_KEY_HELP(name, type, field, doc) "    " #name ": " doc "\n"

/* ------------------------------------------------------------ figures */

/* Global traffic of the whole problem for a tile of tm x tn (beta = 0: C
 * written once): every block streams its rows of A and columns of B. */
typedef struct kgc_traffic {
    double flops;           /* 2 M N K */
    double bytes_tiles;     /* 4 (ceil(N/tn) M K + ceil(M/tm) K N + M N) */
    double bytes_once;      /* 4 (M K + K N + M N): each matrix touched once */
    double ai_tiles, ai_once;
    long long blocks, phases;
} kgc_traffic;

void kgc_traffic_calc(const kgc_shape *s, int tile_m, int tile_n, int tile_k, kgc_traffic *t);

/* min(peak, intensity x bandwidth), in GFLOP/s */
double kgc_roof(const kgc_machine *m, double intensity);

/* ------------------------------------------------------------ the whole analysis */

/* What `resources(cfg)` says of a configuration. */
typedef struct kgc_resources {
    int threads;
    unsigned block[3];
    size_t smem_static, smem_dynamic;
    double loads_a, loads_b, flops_per_phase, cgma;
    int tile_m, tile_n, tile_k;
    int outputs_per_thread;
    char layout[8];          /* the configuration's layout, "nn" when it has none */
    int pad;                 /* the configuration's pad, -1 when it has none */
} kgc_resources;

/* Calls `tmpl`'s resources(cfg) for `config` (parsed, not checked). */
kg_status kgc_read_resources(kgi_host *h, const char *tmpl, const char *config, kgc_resources *r, char *err,
                             size_t errlen);

/* A timed configuration of a sweep (--from-db). */
typedef struct kgc_point {
    char config[512];
    double intensity;        /* FLOP per byte of tile traffic */
    double tflops;
} kgc_point;

typedef struct kgc_explain {
    char tmpl[64];
    char config[512];        /* canonical */
    kgc_shape shape;
    kgc_shape acc_shape;     /* the accesses': lda and ldb of the packed copies where the kernel reads them */
    char shape_note[256];    /* which operands the launcher would pack first, or empty */
    kgc_machine mach;
    char machine_note[512];  /* why the table stands in for a device, or empty */
    kgc_resources res;

    /* registers: compiled for mach.lim.sm, or given */
    int have_regs, regs;
    int regs_given;          /* --regs */
    kg_compile_info ci;
    int compiled;
    char compile_note[1024];
    int have_geo;            /* geo: the rendered kernel's launch geometry and preconditions */
    kgi_geometry geo;

    kgi_occupancy occ;
    size_t smem_block;       /* bytes the occupancy model used */
    int regs_full;           /* kgi_occupancy_max_regs */
    int regs_even;           /* regs_per_sm / max_threads_per_sm (the seeds' division) */

    kgc_traffic traffic;

    /* accesses: as configured, and with the other padding */
    int have_acc;
    char acc_note[1024];
    kgc_access_set acc, alt;
    int have_alt, alt_pad;
    char alt_note[512];

    /* shared-memory roof: wavefronts a block's phase costs (1 per clock per SM) */
    int have_smem_roof;
    double smem_waves, smem_waves_ideal, flop_per_wave, smem_bound_gflops;
    double alt_smem_waves, alt_smem_bound_gflops;   /* with the other padding */

    /* roofline */
    double ridge, bound_tiles, bound_once, bound_pred;
    const char *bound_by;

    /* measured on the device */
    int measured;
    char measure_note[1024];
    double median_ms, min_ms, max_ms, spread, tflops;
    int reps;
    double verify_error, spot_error;
    int verify_m, verify_n, verify_k, spot_count;
    unsigned long long seed; /* of the random inputs */
    int driver_blocks;       /* blocks per SM the driver reports, 0 unknown */
    int kernel_regs;

    kgc_point *points;       /* --from-db */
    int npoints;
    char db_note[512];
} kgc_explain;

/* explain_report.c */
void kgc_explain_print(const kgc_explain *x, FILE *f);
void kgc_explain_json(const kgc_explain *x, FILE *f);

/* explain_svg.c: the roofline drawing as a NUL-terminated heap string. */
char *kgc_explain_svg(const kgc_explain *x);

/* explain_measure.c: verifies and times the configuration on the device
 * (x->mach, x->shape); fills the measured fields, or measure_note and -1. */
int kgc_explain_measure(kg_context *dev, kgc_explain *x);

/* explain_db.c: the timed configurations of template x->tmpl in the tuning
 * database `path` (NULL: the default one) for x's shape and layout, on
 * `device` (a device name) or, when NULL, on devices of the target's arch. */
int kgc_explain_points(const char *path, const char *device, kgc_explain *x, kgi_host *h, char *err, size_t errlen);

#endif
