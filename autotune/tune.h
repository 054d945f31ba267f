/*
 * tune.h -- the tuner: finds the fastest correct configuration of one or
 * more templates for a device and a list of shapes, and records every
 * evaluated configuration in the tuning database.
 *
 * Pipeline per shape: the space (space.c: enumerate, check against the
 * device's limits) -> a strategy (strategy.c) asks for candidates -> each is
 * looked up in the database (a finished row is reused: resume) or compiled
 * in the pool (pool.c, in parallel, ahead of the GPU) and pruned on
 * registers, spills and occupancy -> verified and timed in a GPU worker
 * process (worker.c, measure.c) under a watchdog -> recorded at once.
 *
 * The library never prints: progress goes to the caller's callback.
 */
#ifndef KGEN_AUTOTUNE_TUNE_H
#define KGEN_AUTOTUNE_TUNE_H

#include <signal.h>

#include "autotune/db.h"
#include "autotune/pool.h"
#include "autotune/space.h"

#define KGI_TUNE_MAX_DEVICES 64

typedef struct kgi_tune_shape {
    char tag[32];
    int m, n, k;
} kgi_tune_shape;

/* What the progress callback sees after each recorded candidate, and
 * (with `stage` set) while the run starts and walks the space. */
typedef struct kgi_tune_progress {
    const char *stage;          /* NULL: the search (the fields below); "space": walking the space */
    long walked, rejected;      /* stage "space": combinations covered so far, of them rejected */
    int candidates;             /* stage "space": candidates so far */
    int templates;              /* stage "space": templates in the space */
    int shape, nshapes;
    const kgi_tune_shape *sh;
    int done, total;            /* candidates that spent the budget this shape (run on the GPU, or
                                 * taken from the database, or in a dry run would be) / planned;
                                 * those pruned or failing to compile cost none and count apart */
    int pruned, failed, cached, timed;
    double best_ms;             /* 0: none yet */
    const char *best_tmpl, *best_config;
    double elapsed_s;
} kgi_tune_progress;

typedef struct kgi_tune_opts {
    const char *const *tmpls;   /* templates forming the space */
    int ntmpl;
    const char *template_path;  /* colon-separated, or NULL */
    const char *layout;         /* "nn" */
    const char *space;          /* --space "bm=64,128 tm=4", or NULL */
    const struct kgi_config_list *configs; /* --configs: exactly these (no walk; tmpls: their templates) */
    const kgi_tune_shape *shapes;
    int nshapes;
    float alpha, beta;
    const char *strategy;       /* exhaustive, random, anneal, model */
    int budget;                 /* evaluations per shape; 0: the strategy's default */
    double time_limit_s;        /* for the whole run; 0: none */
    unsigned long long seed;
    int jobs;                   /* compile threads; 0: one per core */
    const int *devices;         /* GPU ordinals; NULL with ndevices 0: device 0 */
    int ndevices;
    int all_devices;            /* every GPU of the host */
    int shard_i, shard_n;       /* this run's slice of the space (n = 1: all) */
    int force;                  /* re-evaluate finished candidates */
    int dry_run;                /* no GPU: enumerate, check, compile, prune */
    int arch;                   /* dry run's target sm (e.g. 90) */
    const char *db_path;        /* NULL: the default (db.h) */
    double max_seconds;         /* timing cap per candidate */
    double timeout_s;           /* watchdog per candidate, before its first launch */
    double slow_factor;         /* probe > factor x best probe: `slow` (0: never) */
    int flush_l2;
    int back_to_back;           /* the search times launches back to back, L2 warm (kgi_time_loop) */
    int final_n;                /* final stage: finalists per shape (0: off) */
    int final_rounds;           /* samples per finalist */
    double final_sample_ms;     /* each sample's length of back-to-back launches */
    kgi_prune_rules rules;
    const char *exe;            /* the kgen binary, run as the GPU worker */
    const char *command;        /* the command line, for the runs table */
    void (*progress)(void *ud, const kgi_tune_progress *p);
    void *progress_ud;
    volatile sig_atomic_t *interrupted; /* set by a signal handler: every stage stops within a second */
} kgi_tune_opts;

/* The final stage. The search times each candidate alone, L2 flushed,
 * about ten launches: right for ranking hundreds of candidates, but kernels
 * within 1-2 % of each other can swap places on noise or on what the flush
 * adds (operands that fit in L2 are read from DRAM in every timed launch).
 * So after the search the n fastest ok rows in the database for the shape
 * (any run, this device and layout, any template at the version loaded now)
 * are timed again the way a GEMM called in a loop runs:
 * back to back on the same operands, L2 warm, in rounds that rotate through
 * the finalists so that clock and temperature drift reach them all alike.
 * Each finalist's median is stored as its final_ms (clearing older ones for
 * the shape), and kg_matmul takes the fastest finalist; a later ok row for
 * the shape clears the set (db.c's trigger). */
typedef struct kgi_final_row {
    char tmpl[64];
    char config[512];
    double search_ms;           /* the search's time (L2 flushed) */
    double final_ms;            /* median per-launch time back to back; 0: failed */
    double min_ms, max_ms;      /* over the samples */
    int samples, launches;      /* samples taken, launches per sample (the last one's) */
    char failed[256];           /* why it dropped out, empty when it did not */
} kgi_final_row;

/* One shape's outcome. */
typedef struct kgi_shape_report {
    kgi_tune_shape sh;
    kgi_result *res;            /* per candidate of the space; outcome NONE: not evaluated */
    unsigned char *cached;      /* per candidate: came from the database */
    int count[KGI_OUT_COUNT];   /* evaluated candidates by outcome, check()-pruned ones included */
    int evaluated, cached_n, planned;
    int from_catalogue;         /* auto: candidates moved to the front as the catalogue's picks for the shape */
    int best;                   /* fastest ok candidate, -1 */
    double wall_s;
    kgi_final_row *final;       /* the final stage's finalists, fastest first by final_ms */
    int nfinal;
    double final_wall_s;
    char final_note[256];       /* why the final stage did not run or record, empty when it did */
    int final_current;          /* the stored final set was current: final holds its times, nothing was run */
} kgi_shape_report;

typedef struct kgi_tune_report {
    int have_device;
    kg_device_info device;
    kgi_limits limits;
    int nworkers;
    char db_path[4096];
    kgi_space space;
    int space_size;             /* candidates that passed check() (this shard) */
    double space_s, space_cpu_s; /* wall and CPU time spent walking and checking the space */
    int space_cached;           /* the space came from the walk cache (walkcache.h), not a walk */
    int space_from_catalogue;   /* candidates that are the catalogue's kernels the walked space lacks */
    kgi_shape_report *shapes;
    int nshapes;                /* shapes finished or started */
    int compiled, compiled_from_cache, compiled_in_worker;
    double compile_ms;          /* NVRTC time summed over threads */
    double wall_s;
    int interrupted, timed_out;
    /* compile threads still running when the run ended (stopped by an
     * interrupt or the time limit, which do not wait for a compile in
     * flight): the process must end with _exit after its output, since
     * they run inside NVRTC and Lua and an orderly exit would tear those
     * libraries down under them */
    int compiles_left;
    int restarts;               /* workers replaced after a fault or hang */
} kgi_tune_report;

/* Runs the tuner. KG_OK when every shape ran (some candidates may have
 * failed: that is a result); an error status with err saying why when the
 * run could not go on (no GPU, database unwritable, bad options). */
kg_status kgi_tune_run(const kgi_tune_opts *o, kgi_tune_report *rep, char *err, size_t errlen);
void kgi_tune_report_free(kgi_tune_report *rep);

/* The worker side of `kgen tune --worker`. */
int kgi_tune_worker(int argc, char **argv);

#endif
