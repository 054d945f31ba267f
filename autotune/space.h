/*
 * space.h -- the tuner's search space: every combination of the values a
 * template declares in its `space` table (several templates form one space),
 * checked with the template's check() against the device's limits.
 *
 * The walk (odometer order, last parameter fastest) calls check() on a
 * configuration that records which parameters check() read (gen/walk.h).
 * check() is a pure function of the configuration and the limits, so a
 * verdict that read only the parameters up to position j holds for every
 * combination that differs from this one only after j: a rejection skips
 * that whole subtree with one call (counted in `rejected`, kept in
 * `pruned`: the combination check() saw, its reason, how many it stands
 * for), and a pass adds the whole subtree, within which resources() alone
 * runs, each call holding (its reads recorded the same way) for the
 * combinations that agree up to the deepest parameter it read. The order puts the
 * parameters verdicts seldom read last (walk_order in space.c), so that
 * their values cost little. Candidates are kept with what
 * resources() says (for the analytic model) and a coordinate per
 * parameter: the rank of its value among the values that parameter takes
 * in the space, so that strategies can move to neighbours. Texts live in
 * one arena.
 */
#ifndef KGEN_AUTOTUNE_SPACE_H
#define KGEN_AUTOTUNE_SPACE_H

#include "runtime/internal.h"

#define KGI_SPACE_MAX_DIMS 48
#define KGI_SPACE_MAX_TEMPLATES 16
#define KGI_SPACE_MAX_VALUES 64
#define KGI_SPACE_KEEP_PRUNED 4096 /* rejected subtrees kept in detail (all are counted) */

/* How the K slices of one tile of C meet (resources()' `combine`). */
typedef enum kgi_combine {
    KGI_COMBINE_STORE,         /* one slice: the block stores its tile */
    KGI_COMBINE_ATOMIC,        /* slices add into C with atomic additions */
    KGI_COMBINE_CLUSTER        /* slices are one cluster, summed in distributed shared memory */
} kgi_combine;

/* What a beta pass before the main kernel touches (`beta_pass`). */
typedef enum kgi_beta_pass {
    KGI_BETA_NONE,
    KGI_BETA_ALL,              /* all of C */
    KGI_BETA_SPREAD            /* the tiles a persistent grid cuts along K */
} kgi_beta_pass;

/* What resources() reports, before anything is compiled. The fields after
 * flops_per_phase describe the kernel to the analytic model in
 * template-neutral terms (templates/README.md); a template that leaves
 * them out gets the defaults of kgi_res_from: a plain kernel. */
typedef struct kgi_res {
    int threads;
    long smem;                 /* static + dynamic bytes per block */
    int tile_m, tile_n, tile_k;
    int outputs;               /* outputs of C per thread */
    double loads_a, loads_b;   /* floats read from global memory per phase */
    double flops_per_phase;
    char layout[4];            /* "nn", "nt", "tn", "tt": op(A), op(B) */
    int registers;             /* estimated per thread (0: unknown) */
    int min_blocks;            /* blocks per SM the register cap must allow */
    int stages;                /* tiles of K in flight: 0 none, 1 register prefetch, >= 2 a ring */
    int async_copy;            /* 1: global -> shared copies bypass registers (cp.async) */
    int copy_a, copy_b;        /* floats per global load instruction */
    double smem_reads;         /* floats read from shared memory per thread per tile of K (0: unknown) */
    double smem_loads;         /* the instructions that read them (0: one per float) */
    int raster;                /* block rows walked together */
    int kslices;               /* slices of K per tile of C (grid z) */
    kgi_combine combine;
    int atomic_width;          /* floats per atomic addition */
    kgi_beta_pass beta_pass;
    int persistent;            /* 1: grid of SMs x resident blocks, looping over tiles */
    int spread_waves;          /* persistent: trailing waves of tiles cut along K (1 or 2) */
    int pack;                  /* operands whose rows are not multiples of this many floats are first copied */
} kgi_res;

/* r from what the host read of resources(), the model's fields defaulting
 * to a plain kernel (resources.c). */
void kgi_res_from(const kgi_resources *in, kgi_res *r);

typedef struct kgi_cand {
    int tmpl;                  /* index into kgi_space.tmpl */
    const char *config;        /* canonical text (in the space's arena) */
    unsigned char coord[KGI_SPACE_MAX_DIMS]; /* < KGI_SPACE_MAX_VALUES */
    kgi_res res;
} kgi_cand;

/* A subtree of combinations check() rejected with one call. */
typedef struct kgi_pruned {
    int tmpl;
    const char *config;        /* the combination check() saw */
    const char *reason;        /* check()'s reason */
    const char *free;          /* parameters any value of which the subtree holds ("cl, cc"), "" */
    long count;                /* combinations it stands for (1: this one alone) */
} kgi_pruned;

typedef struct kgi_space_tmpl {
    char name[64];
    int version;
    int nparams;               /* all parameters, canonical order */
    char param[KGI_SPACE_MAX_DIMS][32];
    /* a parameter that canonical text leaves out at its default: the
     * default (else "") */
    char omitted[KGI_SPACE_MAX_DIMS][32];
    int nvalues[KGI_SPACE_MAX_DIMS]; /* distinct values among its candidates */
    char (*value)[KGI_SPACE_MAX_VALUES][32]; /* per parameter: the values seen, by raw index */
    int nraw[KGI_SPACE_MAX_DIMS];
} kgi_space_tmpl;

typedef struct kgi_space {
    kgi_space_tmpl tmpl[KGI_SPACE_MAX_TEMPLATES];
    int ntmpl;
    kgi_cand *cand;
    int n, cap;
    kgi_pruned *pruned;        /* the first KGI_SPACE_KEEP_PRUNED rejected subtrees */
    int npruned, pcap;
    long subtrees;             /* rejected subtrees, all of them */
    long rejected;             /* combinations check() rejected (the subtrees' counts; a combination that
                                  two walks of a template's space and groups both reject counts twice) */
    long enumerated;           /* combinations covered (n + rejected) */
    int whole_n;               /* candidates of the whole space (set by kgi_space_finalize; kgi_space_shard
                                  leaves it while n becomes the shard's slice) */
    long checks;               /* check() calls made */
    long resource_calls;       /* resources() calls made (a pass's subtree: one per distinct reading) */
    int *hash;                 /* coordinates -> index, built by kgi_space_finalize (and again by
                                  kgi_space_shard, for the slice) */
    int hash_size;
    int hash_n;                /* candidates [0, hash_n) are in the hash; those added after it are not */
    void *arena;               /* configuration and reason texts */
    /* Called every few hundred check() calls; nonzero stops the walk (the
     * space then holds what was walked, and `stopped` is set). */
    int (*tick)(void *ud, const struct kgi_space *sp);
    void *tick_ud;
    int stopped;
} kgi_space;

/*
 * Enumerates template `tmpl`'s space into sp and checks every combination
 * against `lim` (skipping rejected subtrees, as above). `fixed` ("layout=nn") sets parameters for every candidate;
 * `override` ("bm=64,128 tm=4") replaces the listed parameters' value lists
 * (parameters the template lacks are ignored; kgi_space_check_override
 * rejects names no template has). KG_ERR_CONFIG for bad values in either.
 */
kg_status kgi_space_add_template(kgi_space *sp, kgi_host *h, const char *tmpl, const char *fixed,
                                 const char *override, const kgi_limits *lim, char *err, size_t errlen);
/* Adds one configuration (checked; a rejected one goes to `pruned`, count 1). */
kg_status kgi_space_add_config(kgi_space *sp, kgi_host *h, const char *tmpl, const char *config,
                               const kgi_limits *lim, char *err, size_t errlen);
/* Errors when `override` names a parameter none of the templates has. */
kg_status kgi_space_check_override(kgi_host *h, const char *const *tmpls, int ntmpl, const char *override,
                                   char *err, size_t errlen);
/* The walk cache's way in (walkcache.c): adds candidate c with a copy of
 * `config`, or keeps a copy of rejected subtree p (while fewer than
 * KGI_SPACE_KEEP_PRUNED are kept); neither counts anything. -1: out of
 * memory. */
int kgi_space_put_cand(kgi_space *sp, const kgi_cand *c, const char *config);
int kgi_space_put_pruned(kgi_space *sp, const kgi_pruned *p);
/* What parameter p at `value` adds to a candidate's canonical text: " name=value",
 * or "" where the template leaves it out at its default (omit_default);
 * returns its length. The walk and the walk cache both form texts with it. */
int kgi_space_piece(const kgi_space_tmpl *t, int p, const char *value, char *out, size_t len);
/* Computes coordinates and the neighbour index; call after adding. */
kg_status kgi_space_finalize(kgi_space *sp);
/* Before finalize: keeps the first of candidates with one template and one
 * canonical configuration (a list naming one kernel twice, spelt two ways). */
void kgi_space_drop_repeats(kgi_space *sp);
/* Keeps slice `i` of `n` (every n-th candidate and kept pruned subtree;
 * the counts of rejections stay the whole space's). */
kg_status kgi_space_shard(kgi_space *sp, int i, int n);
void kgi_space_free(kgi_space *sp);

/* The candidate of template `tmpl` at `coord`, or -1. */
int kgi_space_find(const kgi_space *sp, int tmpl, const unsigned char *coord);
/* Index of the candidate with this template and configuration, or -1. */
int kgi_space_lookup(const kgi_space *sp, const char *tmpl, const char *config);

/* Names of the templates that declare a `space`: the embedded ones and,
 * when `path` (colon-separated directories) is given, the .lua files there.
 * Returns the count. */
int kgi_space_templates(kgi_host *h, const char *path, char names[][64], int max);

#endif
