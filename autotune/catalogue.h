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
 *               kernels chosen greedily to come closest to the best measured
 *               time at every (layout, shape), written as a catalogue file
 *               with every time measured for them.
 *
 * Both choose by the same rule: add the kernel that most lowers the sum over
 * (layout, shape) of log(time of the chosen set's fastest / fastest of all).
 */
#ifndef KGEN_AUTOTUNE_CATALOGUE_H
#define KGEN_AUTOTUNE_CATALOGUE_H

#include <stdio.h>

#include "autotune/configs.h"
#include "autotune/tune.h"

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
} kgi_cat_make_opts;

typedef struct kgi_cat_make_report {
    int rows, kernels_measured, pairs, kernels;
    double geomean_regret, worst_regret; /* of the chosen set over the measured pairs (1.0: the best) */
    char worst_pair[96];
    /* kg_matmul's choice from the set at each pair left out of its own prediction */
    double loo_geomean, loo_worst;
    char loo_worst_pair[96];
} kgi_cat_make_report;

/* Reads an export (CSV or JSON, as `kgen db import` does) and writes the
 * catalogue text to `f`. */
kg_status kgi_catalogue_make(const char *export_text, size_t len, const kgi_cat_make_opts *o, FILE *f,
                             kgi_cat_make_report *rep, char *err, size_t errlen);

#endif
