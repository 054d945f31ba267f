/*
 * strategy.h -- search strategies. Each is one small function of a search:
 * the space, an evaluate callback and a budget. The callback is the real
 * tuner (tune.c: compile, verify, time on the GPU) or, in tests, a replay of
 * recorded timings.
 */
#ifndef KGEN_AUTOTUNE_STRATEGY_H
#define KGEN_AUTOTUNE_STRATEGY_H

#include "autotune/space.h"

/*
 * Evaluates candidates idx[0..n), in that order of preference (in parallel
 * where it can), until `max_ran` of them have run on the GPU. ms[i]
 * receives the time in milliseconds, INFINITY when the candidate was
 * evaluated but is unusable (pruned, failed, wrong), or NAN when it was not
 * evaluated (the budget was reached first, or the evaluator stopped: time
 * limit, interrupt); ran[i] says whether it ran on the GPU (or would have,
 * in a dry run): only those count against a budget. Returns how many were
 * evaluated.
 */
typedef int (*kgi_eval_fn)(void *ud, const int *idx, int n, int max_ran, double *ms, unsigned char *ran);

typedef struct kgi_search {
    const kgi_space *space;
    kgi_eval_fn eval;
    void *ud;
    int budget;               /* GPU evaluations allowed; <= 0: the whole space */
    unsigned long long seed;
    int width;                /* candidates worth evaluating at once (workers) */
    const int *rank;          /* the model's order, best first; NULL: space order */
    const double *pred;       /* the model's prediction per candidate (NULL: none): equal
                               * finite predictions mark candidates it cannot tell apart */
    int nanchors;             /* rank[0..nanchors): measured kernels (the catalogue's picks
                               * for the shape) that auto's first candidates resemble */
    /* filled in by the search */
    double *score;            /* per candidate: NAN until evaluated */
    int used;                 /* GPU evaluations made (what the budget counts) */
    int evaluated;            /* candidates evaluated, pruned ones included */
    int stopped;              /* the evaluator stopped early */
    int best;                 /* fastest candidate so far, -1 */
} kgi_search;

/* Prepares s (the caller has set space, eval, ud, budget, seed, width, rank, pred,
 * nanchors). */
kg_status kgi_search_init(kgi_search *s);
void kgi_search_free(kgi_search *s);

/* Evaluates those of idx[0..n) not evaluated yet, in order, until the
 * budget is spent or the evaluator stops; returns how many it evaluated.
 * Scores land in s->score. Every strategy evaluates through this. A
 * candidate pruned after compiling (or failing to compile) is evaluated
 * but does not count against the budget: it never reached the GPU. */
int kgi_search_eval(kgi_search *s, const int *idx, int n);
/* Evaluations left in the budget (INT_MAX without one). */
int kgi_search_left(const kgi_search *s);

typedef int (*kgi_strategy_fn)(kgi_search *s);

/* The default: 3/4 of the budget (64 without one) on the model's best, one
 * candidate per prediction it can tell apart, then a local search around
 * the fastest few with the rest. */
int kgi_strategy_auto(kgi_search *s);
int kgi_strategy_exhaustive(kgi_search *s);
int kgi_strategy_random(kgi_search *s);
int kgi_strategy_anneal(kgi_search *s);
int kgi_strategy_model(kgi_search *s);

/* The strategy called `name` ("auto", "exhaustive", "random", "anneal",
 * "model"), or NULL. */
kgi_strategy_fn kgi_strategy_find(const char *name);
/* "auto, exhaustive, random, anneal, model" */
const char *kgi_strategy_names(void);

#endif
