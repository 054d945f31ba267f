/*
 * tuner.h -- the tuner's running state, shared by tune.c (setting up a run,
 * shapes, strategies) and evaluate.c (the evaluate callback strategies
 * call). Private to autotune/.
 */
#ifndef KGEN_AUTOTUNE_TUNER_H
#define KGEN_AUTOTUNE_TUNER_H

#include "autotune/model.h"
#include "autotune/tune.h"
#include "autotune/worker.h"

/* Where a candidate stands within one evaluate call. */
enum { EV_IDLE, EV_COMPILING, EV_READY, EV_RUNNING, EV_DONE };

typedef struct kgi_tuner {
    const kgi_tune_opts *o;
    kgi_tune_report *rep;
    kgi_space *sp;
    kgi_pool *pool;
    int jobs;                   /* compile threads */
    int notify[2];              /* the pool's wake-up pipe */
    kgi_worker workers[KGI_TUNE_MAX_DEVICES];
    int nworkers;
    int workers_started;        /* workers start when a candidate is first ready to time */
    kgi_db *db;                 /* NULL in a dry run */
    long long run_id;
    kgi_dbkey key;              /* device and layout filled in; the rest per candidate */
    kgi_model_dev model;
    int arch;                   /* the architecture tuned for */
    kg_context *catctx;         /* a CPU context holding the catalogues (auto: their picks first), NULL */
    char **cat_canon;           /* per kernel of the architecture's catalogue: its canonical configuration in
                                   this layout, NULL where it is not tuned here (add_catalogue_kernels) */
    int ncat;
    int shape_index;
    kgi_shape_report *cur;
    unsigned char *state;       /* per candidate, EV_* */
    double best_probe_ms;       /* fastest first launch of a verified candidate, this shape */
    double t0, deadline;        /* run start; time limit (0: none) */
    kg_status fatal;            /* set when the run cannot go on */
    char *err;
    size_t errlen;
} kgi_tuner;

/* The GEMM the current shape is tuned on (packed operands, aligned stand-in
 * pointers): what a candidate's preconditions must admit. */
void kgi_tuner_gemm(const kgi_tuner *t, kg_gemm *g);

/* The evaluate callbacks (kgi_eval_fn) of a real and of a dry run. */
int kgi_tuner_eval(void *ud, const int *idx, int n, int max_ran, double *ms, unsigned char *ran);
int kgi_tuner_eval_dry(void *ud, const int *idx, int n, int max_ran, double *ms, unsigned char *ran);

/* tune.c: starts the GPU workers unless started; an error is also the
 * run's fatal one (t->fatal, t->err). */
kg_status kgi_tuner_start_workers(kgi_tuner *t);

/* final.c: the final stage (tune.h) for the current shape, after its search. */
kg_status kgi_tuner_final(kgi_tuner *t);

#endif
