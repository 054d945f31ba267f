/*
 * host.h -- the generator: the embedded Lua host that loads templates,
 * parses and checks configurations and renders CUDA source, and what C reads
 * from a template (gen/template.c). The only C that touches the Lua stack is
 * in gen/.
 *
 * It owns what the generator produces: the rendered source (kg_source), its
 * launch geometry (kgi_geometry), and the limits of a target that a
 * template's check() is given (kgi_limits). From the rest of kgen it needs
 * only the status codes of the public header, kgen.h.
 */
#ifndef KGEN_GEN_HOST_H
#define KGEN_GEN_HOST_H

#include <stddef.h>

#include "kgen.h"

/* What a template's check() and the analyses need to know of a target. */
typedef struct kgi_limits {
    char name[32];                 /* "sm_90" or a device name */
    int sm;                        /* 90 */
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int max_warps_per_sm;
    int warp_size;
    int regs_per_sm;
    int regs_per_block;
    int max_regs_per_thread;
    int reg_alloc_unit;            /* registers, allocated per warp in units of this */
    size_t smem_per_sm;
    size_t smem_per_block;         /* static limit */
    size_t smem_per_block_optin;
    size_t smem_reserved_per_block;/* taken by the system for each resident block */
    size_t smem_alloc_unit;
    int fp32_lanes_per_sm;
    /* a reference part of this architecture, for offline peak figures */
    char ref_gpu[64];
    int ref_sm_count;
    double ref_clock_ghz;
    double ref_bandwidth_gbs;
    size_t ref_l2_bytes;
} kgi_limits;

/* Launch geometry and preconditions returned by a template's render(). */
typedef struct kgi_geometry {
    unsigned block[3];
    /* ceil(dim / div) * mul; dim M N K, 1, or P (x only): the persistent
     * grid, one block per slot where the main kernel can be resident
     * (SMs x its blocks per SM) */
    struct { char dim; unsigned div, mul; } grid[3];
    size_t smem_static, smem_dynamic;
    unsigned m_multiple, n_multiple, k_multiple;     /* 1: any */
    unsigned m_max, n_max;                           /* the largest M, N taken; 0: any */
    unsigned ld_multiple;                            /* lda and ldb */
    unsigned align;                                  /* bytes, A and B */
    unsigned vec_operands;                           /* what ld_multiple and align bind: 1 A, 2 B, 3 both */
    /* 4: the kernel reads A and B through packed copies (kg_source's
     * pack_entry) whose rows are padded with zeros to multiples of 4 floats;
     * the launcher makes them for any operand whose leading dimension,
     * pointer (16 bytes) or contiguous M or N extent is not such a multiple.
     * 0: no packing. */
    unsigned pack_multiple;
    /* Not 0: where C's rows (ldc, the pointer) are not 16-byte granular
     * the launcher runs kg_source's workspace variant of the main kernel
     * instead of the pre and main kernels, then its post kernel, both given
     * a last argument `float* W`: a zeroed workspace of min(tiles, ws_waves
     * x the variant's persistent grid) tiles of ws_tile_m x ws_tile_n
     * floats (matmul_warp's stream-K with skw = 1). */
    unsigned ws_tile_m, ws_tile_n, ws_waves;
    char layout[3];
} kgi_geometry;

struct kg_source {
    char *text;
    size_t len;
    char entry[160];
    /* Optional kernel launched just before `entry` on the same stream with the
     * same arguments (split-K's beta pass); pre_entry[0] == 0 when none. */
    char pre_entry[160];
    kgi_geometry pre_geo;
    /* 1: the pre kernel lets `entry` start early (griddepcontrol.launch_dependents)
     * and `entry` waits for it (griddepcontrol.wait) before touching what it
     * wrote, so the launcher may overlap them (programmatic dependent launch) */
    int pre_overlap;
    /* 1 (with pre_overlap): the pre kernel waits for the kernel before it
     * (griddepcontrol.wait) before it touches memory or lets `entry` start,
     * so the launcher may overlap it with whatever the stream ran last */
    int pre_waits;
    /* The packing kernel when geo.pack_multiple > 1 (else pack_entry[0] == 0):
     * (A, a_rows, a_cols, lda, Ap, ldap, B, b_rows, b_cols, ldb, Bp, ldbp),
     * grid (ceil(max(ldap, ldbp) / 1024), rows up to 65535, 2), 256 threads;
     * z = 0 packs A and z = 1 B, an operand given 0 rows is left alone. */
    char pack_entry[160];
    /* When geo.ws_waves > 0 (else both empty): the workspace variant of
     * `entry` (its geometry) and the post kernel launched after it (the
     * arguments and W, on post_geo's grid). */
    char ws_entry[160];
    char post_entry[160];
    kgi_geometry post_geo;
    char config[512];       /* canonical */
    char template_name[64];
    int template_version;
    kgi_geometry geo;
};

typedef struct kgi_host kgi_host;

kgi_host *kgi_host_new(void);
void kgi_host_free(kgi_host *h);
/* Sets the colon-separated template search path (NULL: embedded only). */
int kgi_host_set_path(kgi_host *h, const char *path);
/* Whether name is a template's module name: letters, digits and '_' in
 * parts separated by single dots, not a helper under lib. (1), or not (0). */
int kgi_template_name_valid(const char *name);
/* Loads `tmpl`, parses `config` strictly, checks it against `lim`, renders. */
kg_status kgi_host_render(kgi_host *h, const char *tmpl, const char *config,
                          const kgi_limits *lim, kg_source **out, char *err, size_t errlen);
/* Parses and checks only; writes the canonical configuration text. With
 * lim NULL (no architecture's limits known) check() is not called: the
 * configuration is parsed and put in canonical form only. */
kg_status kgi_host_check(kgi_host *h, const char *tmpl, const char *config,
                         const kgi_limits *lim, char *canon, size_t canon_len, char *err, size_t errlen);

/* Parses and completes a configuration without calling check(). */
kg_status kgi_host_parse(kgi_host *h, const char *tmpl, const char *config, char *err, size_t errlen);

/* ------------------------------------------------------------ what C reads from a template (gen/template.c) */

#define KGI_MAX_PARAMS 64

/* One declared parameter of a template, as text. */
typedef struct kgi_param {
    char name[32];
    char dflt[32];             /* its default */
    int omit_default;          /* canonical text leaves it out at its default */
    char allowed[64];          /* "1,2,4" or "1..512", cut to fit */
    char doc[512];
} kgi_param;

typedef struct kgi_template_info {
    char name[64];             /* the template's `name` */
    int version;               /* its `version`; -1 when that is not an integer */
    int nparams;               /* its parameters, in declaration order */
    kgi_param param[KGI_MAX_PARAMS];
} kgi_template_info;

/* Loads `tmpl` and reads its name, version and parameters. */
kg_status kgi_host_template_info(kgi_host *h, const char *tmpl, kgi_template_info *out, char *err, size_t errlen);
/* The index of parameter `name` in `info`, or -1. */
int kgi_template_param(const kgi_template_info *info, const char *name);
/* Whether template `tmpl` declares a parameter `name` (*has 1 or 0; name
 * NULL: only load the template). KG_OK, or the error of loading the
 * template (KG_ERR_CONFIG: no such template; KG_ERR_TEMPLATE: it is broken)
 * with the reason in err. */
kg_status kgi_host_has_param(kgi_host *h, const char *tmpl, const char *name, int *has, char *err, size_t errlen);
/* The template's integer `version`; -1 when it does not load or has none. */
int kgi_host_template_version(kgi_host *h, const char *tmpl);

/* Whether `tmpl` loads and declares a `space` table (the tuner's values). */
int kgi_host_has_space(kgi_host *h, const char *tmpl);
/* The values `tmpl`'s space lists for `param`, as text, into values[0..max):
 * their count; 0 when the space has no list for it (or there is no space). */
int kgi_host_space_values(kgi_host *h, const char *tmpl, const char *param, char (*values)[32], int max);
/* Group g (0-based) of `tmpl`'s `space_groups`: more of the space, each
 * group a table of value lists that replace the space's own for the
 * parameters it names. Written into `text` as "name=v1,v2 name=v .." (the
 * form of kgen tune --space). 1: written; 0: there is no group g; -1: the
 * group is not a table of non-empty lists of numbers or strings, or does
 * not fit (the reason in text). */
int kgi_host_space_group(kgi_host *h, const char *tmpl, int g, char *text, size_t len);

/* What resources(cfg) says of a configuration (parsed, not checked). Fields
 * it leaves out are 0 (block: 0 when there is no block table). */
typedef struct kgi_resources {
    int table;                 /* 0: resources() returned something else (every field 0) */
    int bad;                   /* a field is negative or not a number (an integer where one is due) */
    double threads, smem_static, smem_dynamic, outputs_per_thread;
    double loads_a, loads_b, flops_per_phase;
    int has_cgma;
    double cgma;
    int has_tile;
    double tile_m, tile_n, tile_k;
    unsigned block[3];
    char layout[8];            /* the configuration's layout, "nn" when it has none */
    int pad;                   /* the configuration's pad, -1 when it has none */
    /* The terms that describe the kernel to the tuner's model
     * (templates/README.md); 0 or "" where resources() leaves one out. */
    double registers, min_blocks, stages, async_copy, copy_a, copy_b;
    double smem_reads, smem_loads, raster, kslices, atomic_width;
    double persistent, spread_waves, pack;
    char combine[16], beta_pass[16];
} kgi_resources;

kg_status kgi_host_resources(kgi_host *h, const char *tmpl, const char *config, kgi_resources *r, char *err,
                             size_t errlen);

/* A template's accesses(cfg, shape) (the contract in templates/README.md),
 * evaluated lane by lane for every warp of a block and every repetition. */
#define KGI_MAX_LANES 64

typedef struct kgi_access_decl {
    const char *name, *array;  /* valid during the callback */
    int shared, store;         /* space "shared", op "store" */
    int width, iters;
    int per_phase;             /* -1 when the entry gives none */
} kgi_access_decl;

typedef struct kgi_access_walk {
    long long m, n, k, lda, ldb, ldc; /* the shape given to accesses() */
    int threads, warp;         /* a block's threads; lanes per warp, at most KGI_MAX_LANES */
    void *ud;
    /* Once, with the number of entries; nonzero ends the walk (KG_ERR_NOMEM). */
    int (*begin)(void *ud, int n);
    /* Before the addresses of entry e (0-based). */
    void (*entry)(void *ud, int e, const kgi_access_decl *d);
    /* Repetition `it` of warp `w` of entry e: addr[l] is lane l's byte
     * address, -1 where the lane is past the block or makes no access. */
    void (*request)(void *ud, int e, int it, int w, const long long *addr);
} kgi_access_walk;

/* A hash of every module h has loaded, by name order: each one's name and
 * source text, as require() found it (the template path's file, else the
 * embedded text). With the templates loaded, it changes whenever anything
 * their check() or resources() could run changes (the tuner's walk cache,
 * autotune/walkcache.c). */
unsigned long long kgi_host_modules_hash(kgi_host *h, unsigned long long seed);

/* KG_ERR_TEMPLATE with *missing set when the template has no accesses(); a
 * malformed entry is an error naming it. */
kg_status kgi_host_accesses(kgi_host *h, const char *tmpl, const char *config, const kgi_access_walk *w,
                            int *missing, char *err, size_t errlen);

#endif /* KGEN_GEN_HOST_H */
