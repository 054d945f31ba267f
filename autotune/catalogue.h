/*
 * catalogue.h -- building a kernel catalogue (catalogue/README.md) with the
 * tuner's own pieces:
 *
 *   candidates  the configurations worth measuring for a set of training
 *               shapes: per layout, the analytic model's top of the space
 *               for each shape, thinned greedily to a few that together come
 *               closest to the model's best everywhere; templates whose
 *               space is small are taken whole (the model may not know them);
 *   make        from the measured times (a `kgen db export` of a tuning run
 *               over the training shapes with --configs), a small set of
 *               kernels chosen greedily so that kg_matmul's choice from them,
 *               each (layout, shape) left out of its own prediction, comes
 *               closest to the best measured time there; written as a
 *               catalogue file with every time measured for them
 *               (catalogue_make.c).
 *
 * Both choose with one greedy cover (kgi_cat_greedy): add the kernel that
 * most lowers the sum over (layout, shape) of log(time of the set's choice /
 * fastest of all), the choice being the set's fastest (candidates) or the
 * one kg_matmul's model ranks first (make). Make then swaps kernels of the
 * set for others while that lowers the sum (kgi_cat_exchange), and in a
 * rebuild does the same from the catalogue it replaces, keeping the better.
 */
#ifndef KGEN_AUTOTUNE_CATALOGUE_H
#define KGEN_AUTOTUNE_CATALOGUE_H

#include <stdio.h>

#include "autotune/configs.h"
#include "autotune/tune.h"
#include "runtime/catalogue.h"

typedef struct kgi_cat_cand_opts {
    const char *const *tmpls;   /* templates to draw from */
    int ntmpl;
    const char *template_path;  /* or NULL */
    const kgi_tune_shape *shapes;
    int nshapes;
    int arch;                   /* e.g. 90: the limits and the model's device */
    int per_shape;              /* the model's top per (layout, shape) considered */
    int max;                    /* configurations chosen over all kinds, at most */
    int per_kind;               /* and this many more of each kind (copy width, pack, split-K, persistent) */
    int whole_below;            /* a template with at most this many candidates in a layout is taken whole */
} kgi_cat_cand_opts;

/* A kernel's kind, from what resources() says: 16-byte copies or not, packed operands, split-K, a
 * persistent grid (bits 0-3). `candidates` keeps the best of each kind besides; `kgen catalogue twins`
 * proposes one twin of each kind. */
int kgi_cat_kind(const kgi_res *r);

/* Fills `out` (layout-free configurations, pick order). */
kg_status kgi_catalogue_candidates(const kgi_cat_cand_opts *o, kgi_config_list *out, char *err, size_t errlen);

typedef struct kgi_cat_make_opts {
    int max_kernels;
    double tolerance;           /* stop once every (layout, shape) is within this of its best (0.02) */
    double max_regret;          /* add no kernel that would make kg_matmul's choice at a shape more than this
                                   many times slower than the best measured there, where it was not (2.0) */
    const char *device;         /* which device's rows (NULL: the only one) */
    const char *driver;         /* for the header */
    const char *date;           /* YYYY-MM-DD */
    const char *command;        /* that rebuilds it */
    const char *template_path;  /* or NULL */
    const kgi_catalogue *keep;  /* or NULL: keep exactly its kernels, in its order, instead of choosing (a
                                   catalogue measured again: after a template change, or on another GPU) */
    const char *keep_path;      /* its file, for the header and errors */
    const kgi_config_list *add; /* or NULL (needs keep): these kernels after keep's, in their order, each
                                   measured in an export (a catalogue that gains kernels) */
    const char *add_path;
    int add_best;               /* 0: all of add; N: at most N of them, as the greedy cover would add them to keep's
                                   (kgi_cat_greedy_from: each the one that most lowers the leave-one-out regret against
                                   the fastest of keep's and add's kernels, while one does; tolerance and max_regret as
                                   for make), written in add's order */
    const kgi_catalogue *start; /* or NULL: a rebuild of this catalogue; its kernels (all measured), improved by
                                   kgi_cat_exchange, are chosen where they score better than a choice from scratch
                                   (a pair they leave above max_regret may stay there: it is not made worse) */
    const char *start_path;
    const kgi_catalogue *measured; /* or NULL: earlier measurements (a catalogue's times), each taken where no
                                      export timed that kernel at that pair (the committed file extended by new
                                      measurements, without the database it was made from) */
    const char *measured_path;
    /* > 0: the set chosen is then fitted to this many seconds of NVRTC (kgi_cat_trim), each kernel's cost the
     * seconds compile_cost gives for it in the layouts it has times in; compile_cost fills seconds[0..n) for the
     * configurations config[0..n) (each with its layout=) of templates tmpl[0..n) compiled for sm_`arch`, or
     * returns non-zero after writing why to err */
    double max_compile_s;
    /* with keep, instead of max_compile_s: the budget is the seconds keep's own kernels take, measured with the
     * others (--max-compile kept: kernels added only where others make room for them) */
    int max_compile_kept;
    int (*compile_cost)(void *ud, int arch, int n, const char *const *tmpl, const char *const *config,
                        double *seconds, char *err, size_t errlen);
    void *compile_ud;
} kgi_cat_make_opts;

#define KGI_CAT_ADDED_MAX 16 /* --add-best: the additions the report lists in the order taken */
#define KGI_CAT_DROPPED_MAX 32 /* --max-compile: the kernels dropped that the report lists */

typedef struct kgi_cat_make_report {
    int rows, kernels_measured, pairs, kernels;
    double geomean_regret, worst_regret; /* of the chosen set over the measured pairs (1.0: the best) */
    char worst_pair[96];
    /* kg_matmul's choice from the set at each pair left out of its own prediction */
    double loo_geomean, loo_worst;
    char loo_worst_pair[96];
    /* with a start: how many of its kernels the swaps replaced, and the mean log regret (kgi_cat_cost / pairs) of
     * it and of the choice from scratch; from_start when it was kept */
    int start_replaced, from_start;
    double start_cost, scratch_cost;
    int passes, pass_pairs;     /* the exports read, and the pairs that a pass after the first timed */
    int measured_times;         /* (kernel, pair) times taken from opts.measured, none of the exports timing them */
    /* with add_best: how many of add's kernels were added, and kg_matmul's leave-one-out regret against the fastest of
     * keep's and all of add's kernels, of keep's kernels alone and of the set written */
    int added;
    double loo_keep_all, loo_set_all;
    double loo_fit_all; /* the same for the set written: loo_set_all's set after --max-compile's fit, if any */
    /* the first KGI_CAT_ADDED_MAX of them in the order taken: their lines in add's list, and the regret (against the
     * same fastest) once each was added */
    int added_line[KGI_CAT_ADDED_MAX];
    double added_loo[KGI_CAT_ADDED_MAX];
    int bad_export;             /* on failure, 1 + the index of the export whose rows failed (0: none of them) */
    /* with max_compile_s (or max_compile_kept): the set's NVRTC seconds before and after the fit and the budget
     * (max_compile_s, or what keep's kernels took), kg_matmul's leave-one-out regret before
     * it (against the same fastest as loo_geomean), how many kernels were dropped and the first KGI_CAT_DROPPED_MAX
     * of them in the order taken: their IDs in the set before (1-based), their seconds and the regret after each */
    double compile_before_s, compile_after_s, loo_before_fit, compile_budget_s;
    int dropped;
    int dropped_id[KGI_CAT_DROPPED_MAX];
    double dropped_s[KGI_CAT_DROPPED_MAX], dropped_loo[KGI_CAT_DROPPED_MAX];
} kgi_cat_make_report;

/* The most exports (passes) kgi_catalogue_make reads. */
#define KGI_CAT_MAX_PASSES 8

/* Reads 1 to KGI_CAT_MAX_PASSES exports (CSV or JSON, as `kgen db import`
 * does) and writes the catalogue text to `f`. Several exports are passes of
 * one measurement, each from its own process: a kernel's time at a pair is
 * the median of the passes that timed it there. */
kg_status kgi_catalogue_make(const char *const *exports, const size_t *lens, int nexports, const kgi_cat_make_opts *o,
                             FILE *f, kgi_cat_make_report *rep, char *err, size_t errlen);

/* ---------------------------------------- shared by catalogue.c and catalogue_make.c */

/* A (layout, shape) with no time from the chosen set counts as this many
 * times slower than its best. */
#define KGI_CAT_UNCOVERED 8.0

/*
 * Greedy choice over a kernels x pairs table of times (t[c * np + p]; not
 * finite or <= 0: no time). A set's choice at a pair is its kernel with
 * the lowest `pred` among those with a time there (pred NULL: t itself, the
 * set's fastest; make passes kg_matmul's leave-one-out predictions, so that
 * the choice is the one kg_matmul would make), and its regret that kernel's
 * time over the best time there. Adds the kernel that most lowers
 * sum_p log(regret) (a pair nothing covers counts KGI_CAT_UNCOVERED), until
 * `max` kernels, or every pair is within `tol` of its best, or nothing
 * gains: a kernel fast where it was measured but mispredicted between its
 * shapes earns its place only where it lowers the regret of the choice. A
 * kernel that would replace the set's choice at a pair by one worse than
 * `worst` times its best (and worse than before) is not added at all.
 * Writes the picks in order to pick[] and returns their count.
 */
int kgi_cat_greedy(const double *t, const double *pred, int nc, int np, int max, double tol, double worst, int *pick);

/* The same cover grown from a set given: pick[0..n0) are in it already (the
 * kept kernels of a catalogue that gains some), and kernels are added after
 * them, up to `max` in all. Returns the set's size, n0 or more; -1 when its
 * tables cannot be allocated and n0 > 0 (with n0 = 0, as kgi_cat_greedy, 0). */
int kgi_cat_greedy_from(const double *t, const double *pred, int nc, int np, int n0, int max, double tol, double worst,
                        int *pick);

/*
 * After kgi_cat_greedy, or from another set (a rebuild's start): a greedy
 * cover adds what helps most given what it already chose, and cannot take
 * back an early choice that later ones made less useful. Swaps one kernel
 * of pick[0..n) for one left out while that lowers the same sum under the
 * same `worst` rule, the swap that lowers it most first, until none does
 * (a pair a start left above `worst` may only get better). Returns the
 * count of swaps.
 */
int kgi_cat_exchange(const double *t, const double *pred, int nc, int np, double worst, int *pick, int n);

/* The sum both minimise for the set pick[0..n): over the pairs with a time, log(time of the set's choice /
 * fastest of all), KGI_CAT_UNCOVERED where the set has none. INFINITY when out of memory. */
double kgi_cat_cost(const double *t, const double *pred, int nc, int np, const int *pick, int n);

/*
 * Fits the set pick[0..*n) to a budget: while the sum of its kernels' cost[] (indexed like t's kernels; make passes
 * the seconds NVRTC takes to compile each in the layouts it has times in) is above `budget`, drops the kernel whose
 * removal raises the sum kgi_cat_cost minimises least per unit of its cost (its pairs go to the set's next choice
 * there, by `pred`); none whose removal would leave a pair's choice more than `worst` times its best, where it was
 * not. Where some drop would bring the sum within the budget, the one of those that raises the sum least is taken
 * instead, unless the best per unit raises it less (a last drop chosen by its loss, not its loss per unit: a large
 * kernel is not dropped where a small one is enough). Keeps the others' order. Writes the dropped kernels to
 * dropped[] in the order taken and returns their count;
 * -1 when the set is above the budget and no kernel can go (those dropped until then are dropped: *n says how many
 * are left), -2 when out of memory.
 */
int kgi_cat_trim(const double *t, const double *pred, int nc, int np, double worst, const double *cost, double budget,
                 int *pick, int *n, int *dropped);

/* The configuration text without `layout` (for the catalogue, which adds
 * the call's); -1 with err when it does not parse. */
int kgi_cat_strip_layout(const char *config, char *out, size_t len, char *err, size_t errlen);

#endif
