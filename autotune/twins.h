/*
 * twins.h -- a catalogue's layout holes, and the kernels that would fill
 * them (`kgen catalogue twins`; catalogue/README.md).
 *
 * A hole is a training pair (layout L, shape) where a catalogue kernel has
 * no time, though the same kernel ran that shape in another layout faster
 * than any kernel of the catalogue runs it in L. The kernel was kept out of
 * L there by its template: check() refuses it in L, its vector copies need
 * rows the shape's leading dimensions do not give (its NEEDS), or it spills
 * in L and the tuner prunes it. Its time in the other layout is evidence,
 * not a measurement: a twin is then timed in L by `kgen tune --configs` and
 * judged against the catalogue (bench/compare-catalogues.sh).
 *
 * A twin is a configuration of the same template that does the same work
 * (the same output tile, K slices, persistent grid and threads, as its
 * resources() say), differs from the kernel in as few parameters as possible
 * (at most `max_distance`), each changed parameter taking the values the
 * template's `space` and `space_groups` list for it, and in L passes
 * check(), is admitted at every hole pair (the tuner's own test,
 * kgi_pool_admits) and compiles without being pruned (kgi_compile_candidate
 * with `kgen tune`'s default rules: no spills). Among the nearest, the
 * analytic model's fastest over the hole pairs is proposed (with
 * per_hole > 1, the fastest of each other kind at that distance too); one
 * the catalogue holds already is not, and where such a twin of the
 * catalogue is measured at every hole pair none is sought: the hole is then
 * the layout's own cost. A kernel that runs in L at its hole (it
 * was only not timed there) gets no twin: the report says to time it.
 */
#ifndef KGEN_AUTOTUNE_TWINS_H
#define KGEN_AUTOTUNE_TWINS_H

#include <stdio.h>

#include "runtime/catalogue.h"

typedef struct kgi_twin_opts {
    double margin;             /* a hole pair: the catalogue's fastest in L at least this many times the
                                  kernel's fastest time in another layout (1.10) */
    int min_pairs;             /* holes with fewer pairs are reported, no twin sought (1) */
    int max_distance;          /* parameters a twin may change (2) */
    int per_hole;              /* twins proposed per hole, each of another kind (kgi_cat_kind: 16-byte copies
                                  or not, packed operands), the model's fastest of each (1, at most
                                  KGI_TWINS_PER_HOLE) */
} kgi_twin_opts;

#define KGI_TWINS_PER_HOLE 4

/* A configuration proposed for a hole. */
typedef struct kgi_twin_cfg {
    char tmpl[64];
    char config[512];          /* without layout */
    char changes[256];         /* "vec=4->1 cc=0->1" */
    int distance;              /* parameters changed */
    int same_as;               /* -1, or the earlier hole that proposed this configuration too */
} kgi_twin_cfg;

/* One hole: kernel `kernel` (0-based) kept out of `layout` where it would
 * have been faster, and the twin proposed for it. */
typedef struct kgi_twin {
    int kernel, layout;
    int pairs;                 /* hole pairs */
    double gain;               /* geometric mean over them of the catalogue's fastest in L / the kernel's
                                  fastest elsewhere */
    double max_gain;           /* the largest of those ratios */
    int m, n, k;               /* the hole pair with the largest ratio */
    char reason[512];          /* why the kernel has no time there (one line) */
    int runs;                  /* 1: it runs at every hole pair (not timed there): no twin sought */
    int found;                 /* twins proposed (twin[0..found)); 0: none (why_none says why, one line) */
    kgi_twin_cfg twin[KGI_TWINS_PER_HOLE]; /* the model's fastest first */
    char why_none[512];
    int held_id, held_distance; /* a kernel of the catalogue (its id) met as near as the twin, or 0 */
    int filled_by;             /* a twin the catalogue holds, measured at every hole pair (its id): no twin
                                  sought further, the hole is its layout's own cost; 0: none */
} kgi_twin;

typedef struct kgi_twins {
    kgi_twin *t;
    int n;
} kgi_twins;

/* Finds the holes of catalogue `cat` (its kernels' configurations in
 * canonical form, as the maker writes them) and a twin for each with at
 * least o->min_pairs pairs, most pairs' worth first (the sum of their log
 * gains). `ctx` is a context without a GPU, its architecture the
 * catalogue's, which renders and compiles. KG_OK with out filled (free with
 * kgi_twins_free); else err says what failed. */
kg_status kgi_catalogue_twins(kg_context *ctx, const kgi_catalogue *cat, const kgi_twin_opts *o, kgi_twins *out,
                              char *err, size_t errlen);
void kgi_twins_free(kgi_twins *t);

#endif
