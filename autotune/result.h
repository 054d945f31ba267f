/*
 * result.h -- what the tuner learns about one configuration, and the key it
 * is stored under. Shared by the tuner (tune.c), its worker processes
 * (worker.c), the tuning database (db.c, dbio.c) and the CLI.
 */
#ifndef KGEN_AUTOTUNE_RESULT_H
#define KGEN_AUTOTUNE_RESULT_H

#include "runtime/internal.h"

/* How an evaluation ended. The names are the database's `outcome` column. */
typedef enum kgi_outcome {
    KGI_OUT_NONE = 0,          /* not evaluated yet */
    KGI_OUT_OK,                /* correct and timed in full */
    KGI_OUT_SLOW,              /* correct; one launch was so much slower than the best that it was not timed in full */
    KGI_OUT_WRONG,             /* result disagrees with the reference, or NaN */
    KGI_OUT_FAULT,             /* the kernel faulted (illegal address...) or the worker died */
    KGI_OUT_HANG,              /* the worker exceeded its time limit and was killed */
    KGI_OUT_ERROR,             /* another failure on the device (load, launch) */
    KGI_OUT_COMPILE_ERROR,     /* NVRTC or the template's render() failed */
    KGI_OUT_PRUNED_CHECK,      /* the template's check() rejected it for the device's limits */
    KGI_OUT_PRUNED_SHAPE,      /* the kernel's preconditions exclude the tuned shape */
    KGI_OUT_PRUNED_REGS,       /* registers x threads exceed the block's register file */
    KGI_OUT_PRUNED_SPILLS,     /* the compiler spilled registers to local memory */
    KGI_OUT_PRUNED_OCCUPANCY,  /* too few resident warps per SM */
    KGI_OUT_COUNT
} kgi_outcome;

const char *kgi_outcome_name(kgi_outcome o);
/* The outcome called `name`, or KGI_OUT_NONE. */
kgi_outcome kgi_outcome_parse(const char *name);
/* Whether the outcome is final: a resumed sweep does not evaluate it again. */
int kgi_outcome_finished(kgi_outcome o);
/* Whether the candidate ran on the GPU (it counts as a timed evaluation). */
int kgi_outcome_ran(kgi_outcome o);

typedef struct kgi_result {
    kgi_outcome outcome;
    char reason[1024];          /* why it was pruned, failed or slow; empty when ok */
    double time_ms;             /* median (ok), single launch (slow); 0 otherwise */
    double time_min_ms, time_max_ms, spread;
    int reps;
    double tflops;
    double final_ms;            /* > 0: this row was a finalist of the tuner's last stage for its shape, re-timed
                                 * back to back beside the others (tune.h); kg_matmul prefers the fastest of them */
    int registers;              /* per thread, as ptxas reports; 0 when not compiled */
    int spill_bytes;            /* spill stores + loads */
    long smem_bytes;            /* static + dynamic, per block */
    int threads;                /* per block */
    double occupancy;           /* resident warps / max warps per SM */
    double error;               /* largest error against the float64 reference (relative) */
    int m_multiple, n_multiple, k_multiple, ld_multiple; /* the kernel's preconditions */
    char kgen_version[16];
    char created[32];           /* ISO-8601 UTC, set by the database */
} kgi_result;

/* The database key of one result. */
typedef struct kgi_dbkey {
    char device[256];
    int cc;                     /* compute capability, major * 10 + minor */
    int sm_count;
    char tmpl[64];
    int tmpl_version;
    char dtype[8];              /* "f32" */
    char layout[4];
    int m, n, k;
    char config[512];           /* canonical */
} kgi_dbkey;

#endif
