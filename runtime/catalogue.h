/*
 * catalogue.h -- the measured kernel catalogue (catalogue/README.md): the
 * format's one parser (catalogue.c), the catalogues libkgen carries and
 * KGEN_CATALOGUE's, and the model that ranks a catalogue's kernels for a
 * call (pick.c). kg_matmul uses them when the tuning database has no entry
 * for the exact shape; `kgen precompile` and the catalogue's maker
 * (`kgen catalogue make`) use the parser too, so one function reads the
 * format.
 */
#ifndef KGEN_CATALOGUE_H
#define KGEN_CATALOGUE_H

#include "gen/embedded.h"
#include "internal.h"

/* The format version written; versions 1 to this one are read (version 1's
 * kernel lines have no LAUNCHES field; versions before 3 give one NEEDS for
 * every layout). */
#define KGI_CATALOGUE_VERSION 3

/* One `kernel` line. */
typedef struct kgi_cat_kernel {
    int id;                /* 1, 2, 3 ... (its index + 1) */
    char tmpl[64];         /* an embedded template's module name */
    int needs[4];          /* per layout (nn, nt, tn, tt): the alignment class the call must allow, 4, 2 or 1 */
    int needs_operand[4];  /* per layout: which operands it binds: 0 both, 1 A only, 2 B only (NEEDS written
                              4A, 4B) */
    int tile_m, tile_n;    /* the output tile of one block (or unit of a persistent grid) */
    int kslices;           /* slices of K per tile (1: no split-K) */
    int kslice_depth;      /* > 0: instead ceil(K / kslice_depth) slices (KSLICES written K/512) */
    int persistent;        /* > 0: a grid of SMs x BPS blocks looping over tiles, its stream-K pieces cut
                              in steps of this much K (the tile's K; files before 2026-11-25 wrote 1: at
                              most K pieces); 0: not persistent */
    int bps;               /* blocks resident per SM, measured */
    int launches;          /* kernels a call launches (2: a beta pass before the main kernel); 0: not said
                              (a version 1 file) */
    char config[512];      /* without layout */
    int line;
} kgi_cat_kernel;

/* One `time` line: a measured shape in a layout. */
typedef struct kgi_cat_row {
    int layout;            /* 0 nn, 1 nt, 2 tn, 3 tt */
    int m, n, k;
    int line;
} kgi_cat_row;

typedef struct kgi_catalogue {
    char name[256];        /* what messages call it: "catalogue/sm_90.txt" or a file's path */
    int arch, sms;
    char device[128], driver[64], date[16], command[256];
    int nkernels, nrows;
    kgi_cat_kernel *kernels;
    kgi_cat_row *rows;
    double *time;          /* nrows x nkernels, microseconds; 0 where not measured ('-') */
    double bytes_per_us;   /* the most any measurement moved: A, B and C once, over its time */
    double launch_us;      /* the fastest time measured of a kernel of one launch: what the host's launch of
                              a kernel costs at least, a floor per launch for predictions (0: none known) */
} kgi_catalogue;

/* Parses catalogue text (len bytes, NUL not needed) strictly. 0 and *out
 * (free with kgi_catalogue_free), or -1 with *out NULL and err saying
 * "NAME:LINE: what was wrong". `name` names the text in messages. */
int kgi_catalogue_parse(const char *text, size_t len, const char *name, kgi_catalogue **out, char *err,
                        size_t errlen);
void kgi_catalogue_free(kgi_catalogue *c);

/* Kernel j's time at row r in microseconds, 0 when not measured. */
static inline double kgi_catalogue_time(const kgi_catalogue *c, int r, int j)
{
    return c->time[(size_t)r * (size_t)c->nkernels + (size_t)j];
}

/* "nn" .. "tt" for 0..3; the index of a layout name, or -1. */
const char *kgi_layout_name(int layout);
int kgi_layout_index(const char *name);

/* A call's alignment: the class (4, 2 or 1: the widest vector, in floats,
 * its leading dimension and pointer allow) of each matrix, packed as
 * KGI_ALIGN(a, b, c). A plain 4, 2 or 1 means all three alike. A and B's
 * decide which kernels may run (kgi_catalogue_admits); all three which
 * measured shapes a prediction leans on (pick.c). */
#define KGI_ALIGN(a, b, c) ((a) | ((b) << 8) | ((c) << 16))
#define KGI_ALIGN_A(x) ((x) & 0xff)
#define KGI_ALIGN_B(x) (((x) >> 8) & 0xff ? ((x) >> 8) & 0xff : (x) & 0xff)
#define KGI_ALIGN_C(x) (((x) >> 16) & 0xff ? ((x) >> 16) & 0xff : (x) & 0xff)
/* The class a leading dimension allows on its own (4, 2 or 1 floats); a
 * call's class is also bounded by its pointer's alignment. */
int kgi_ld_class(int ld);
/* The catalogue's rule for its `date` (YYYY-MM-DD, a real day from 2000):
 * 0, or -1 with err saying what is wrong. */
int kgi_catalogue_date_check(const char *s, char *err, size_t errlen);
/* Whether kernel k's vector loads in `layout` (0 nn .. 3 tt) are allowed by a
 * call's alignment. */
int kgi_catalogue_admits(const kgi_cat_kernel *k, int layout, int align);
/* What a rendered kernel's preconditions ask of a call, as a NEEDS class:
 * 4, 2 or 1 (a packing kernel takes any: 1), and the operand it binds
 * (0 both, 1 A alone, 2 B alone; 0 where the class is 1). The catalogue's
 * maker writes it per layout; runtime.catalogue checks each embedded
 * kernel's NEEDS against it. */
void kgi_geometry_needs(const kgi_geometry *g, int *needs, int *operand);
/* Whether kernel j runs in `layout`: it has a time there (kg_matmul ranks
 * a kernel only in the layouts it was measured in; a configuration may be
 * invalid in the others). */
int kgi_catalogue_in_layout(const kgi_catalogue *c, int j, int layout);
/* The alignment (KGI_ALIGN) of a call in `layout` with minimal leading
 * dimensions (C's: N) and 16-byte aligned buffers, as a time row was
 * measured. */
int kgi_natural_align(int layout, int m, int n, int k);

/* The catalogues embedded at build time (catalogue/sm_*.txt): module
 * "sm_90", path "catalogue/sm_90.txt"; ends with an entry whose module is
 * NULL (the only one when none was embedded). */
extern const kgi_embedded kgi_embedded_catalogues[];

/* The context's catalogues, parsed once on first use: $KGEN_CATALOGUE (a
 * file that replaces the embedded catalogue of its architecture) and the
 * embedded ones. The one for sm_`arch`, or NULL. KG_OK, or an error (a
 * KGEN_CATALOGUE that cannot be read or parsed) with the context's last
 * error set. */
kg_status kgi_catalogue_for(kg_context *ctx, int arch, const kgi_catalogue **out);
/* The catalogue of the architecture nearest to `arch` (the newest older
 * one, else the oldest newer one), or NULL when there is none at all. */
kg_status kgi_catalogue_nearest(kg_context *ctx, int arch, const kgi_catalogue **out);

/* ------------------------------------------------------------ the model (pick.c) */

/* The host's floor under kernel kk's predictions: LAUNCHES times the
 * catalogue's fastest call of one launch (launch_us); 0 where unknown. */
double kgi_launch_floor(const kgi_catalogue *c, const kgi_cat_kernel *kk);

#define KGI_PICK_NEAR 4    /* measured points a prediction comes from */

/* One candidate for a call, as kgi_catalogue_rank orders them. */
typedef struct kgi_pick {
    int kernel;            /* index into kernels[] */
    double predicted_us;
    double model_us;       /* the prediction before the floors (streaming, launches; ties at a floor go to the
                              lower) */
    double waves;          /* of the kernel's units over the GPU's slots */
    int nnear;             /* rows the prediction came from, nearest first (1 and exact: measured here) */
    int near[KGI_PICK_NEAR];
    int exact;
} kgi_pick;

/*
 * Ranks the kernels of `c` for a call in `layout` of M x N x K whose
 * alignment class is `align`, on a GPU with `sms` SMs: every kernel with
 * NEEDS <= align and a time in the layout, by predicted time, fastest
 * first (catalogue/README.md says how). Row `skip` (-1: none) is left out
 * of the calibration (the leave-one-out test). Writes up to `max` picks;
 * returns how many candidates there were.
 */
int kgi_catalogue_rank(const kgi_catalogue *c, int layout, int m, int n, int k, int align, int sms, int skip,
                       kgi_pick *out, int max);

/* The same without calibration at the shape, for another architecture's
 * catalogue: each kernel's median efficiency over its times in the layout
 * (over all its times where it has none there) times its wave model's work.
 * `nnear` is 0 in the picks. */
int kgi_catalogue_rank_median(const kgi_catalogue *c, int layout, int m, int n, int k, int align, int sms,
                              kgi_pick *out, int max);

/* The wave model's work for a kernel at M x N x K on `sms` SMs (tile
 * elements x K-steps, the waves included), for a tile of tile_m x tile_n,
 * kslices, persistent and bps as in a kernel line; *waves gets the waves. */
/* Kernel k's slices of K at depth K. */
int kgi_kernel_slices(const kgi_cat_kernel *k, int depth);
double kgi_wave_work(int tile_m, int tile_n, int kslices, int persistent, int bps, int m, int n, int k, int sms,
                     double *waves);

#endif
