/*
 * test_warp_gpu.c -- matmul_warp's kernels on a GPU against the float64
 * reference (label gpu; exits 77, shown as skipped, without a GPU).
 *
 * Each configuration below (together they take every value of every
 * parameter: warp and lane layouts, both shared-memory layouts of A and B,
 * 1-, 2- and 4-float copies, register prefetch and 2-4 cp.async stages,
 * rasterization, split-K with its beta kernel and scalar or vector
 * atomic additions or a cluster's sum through distributed shared memory
 * (cl=1), compact single-float copies (cc=1), the register cap, bound
 * checks on and off, tiles 16 wide, walking copy pointers) runs in two layouts on every shape of the suite --
 * 1x1x1, M=1, N=1, K=1, primes, tile sizes plus and minus one, K longer
 * than a split-K slice count, and aligned shapes for the vector copies --
 * with alpha = 1.25, beta = -0.5 (C random) and again with alpha = -0.75,
 * beta = 0 on C poisoned with NaN. kgi_verify_kernel pads the leading
 * dimensions with NaN (a kernel that reads them fails) and checks that C's
 * padding survives. A kernel whose preconditions a shape breaks (vector
 * copies on unaligned rows, no bound checks on a ragged shape) must refuse
 * it with KG_ERR_SHAPE; every configuration must still run on at least
 * three shapes.
 *
 * Stream-K (sk=1, 2) divides the work by the size of its persistent grid, G =
 * SMs x blocks per SM, so its shapes are made from G: one tile; fewer tiles
 * than G with K = 1 (each worker one iteration or none); exactly G and 2G
 * tiles (whole waves: no tile shared); G + 1 tiles (all shared); 2G + 3
 * tiles (one wave whole, the rest shared), each with ragged edges and K.
 *
 * Packed operands (pack=1): 16-byte kernels that take every shape of the
 * suite in all four layouts -- on ragged rows (odd lda, ldb: the launcher
 * packs them), and on aligned rows, where only an operand whose contiguous
 * M or N extent is not a multiple of 4 is packed -- and refuse none.
 *
 * C's rows written and added in pieces by their alignment (cva=1): at odd
 * N, and with C placed 1-3 floats past a 16-byte boundary at every ldc
 * residue (kgi_verify_kernel_at; the floats before C must survive), bounds=0
 * among them; split-K's pieced additions; stream-K's whole tiles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu_problem.h"
#include "runtime/internal.h"
#include "testutil.h"

static const char *const configs[] = {
    "", /* the defaults: 128x128x8, 32x64 warps, at=1, pad=4, vec=4, 2 stages */
    "stages=1",
    "stages=3 bk=16",
    "stages=4 vec=1 raster=4",
    "at=0 bt=1 stages=3",
    "at=0 stages=1 vec=2",
    "bt=1 stages=2 pad=0 vec=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 splitk=3",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 splitk=2 red=4 raster=8",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1",
    "bm=128 bn=128 bk=16 wm=32 wn=64 stages=2 minb=2 splitk=7 red=4",
    "bm=128 bn=128 bk=8 wm=64 wn=32 ln=4 stages=1 minb=2 raster=16",
    "bm=32 bn=32 bk=16 wm=16 wn=32 tm=2 tn=4 vec=1 stages=3 splitk=8",
    "bm=96 bn=64 bk=12 wm=48 wn=32 tm=3 tn=2 ln=16 vec=2 pad=1 stages=1",
    "bm=64 bn=32 bk=8 wm=64 wn=8 tm=2 tn=8 ln=1 stages=2 vec=4",
    "bm=32 bn=64 bk=4 wm=32 wn=64 tm=1 tn=2 ln=32 stages=3 vec=4 pad=8",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=2 bounds=0",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=1 bounds=0 at=0 vec=2",
    /* walk=1, 2: the K loop's source pointers advance by bk a tile (split-K: from each slice's first) */
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 walk=2",
    "bm=32 bn=64 bk=8 wm=16 wn=32 stages=4 vec=1 cc=1 pred=1 walk=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=2 vec=1 cc=1 splitk=3 walk=2",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=3 vec=1 cc=1 mid=1 bounds=0 walk=2",
    /* spread=1: the next tiles' copies shared out over the steps of k (16-byte copies, split-K
     * slices, bound checks off, an uneven share with warp groups along K: 10 copies over 12 steps) */
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 pred=1 walk=2 spread=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=4 vec=4 pred=1 splitk=3 spread=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=3 vec=1 pred=1 bounds=0 spread=1",
    "bm=96 bn=64 bk=24 wm=32 wn=32 wk=2 stages=3 vec=1 cc=1 pred=1 spread=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=3 vec=1 sk=1 red=4 cc=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 raster=8",
    "bm=128 bn=128 bk=16 wm=64 wn=32 stages=2 vec=4 cc=1 splitk=3 red=4",
    "at=0 bt=1 stages=4 vec=1 cc=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 raster=8 splitk=3 cl=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=1 splitk=2 cl=1",
    "bm=128 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 raster=8",
    /* the register path's compact copies need B along N: even indices run nn and tn */
    "bm=64 bn=128 bk=8 wm=32 wn=64 stages=1 vec=1 cc=1 sk=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=2 vec=1 raster=8",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=1 cc=1 raster=8",
    "bm=128 bn=128 bk=8 wm=64 wn=32 stages=2 vec=2 splitk=8 cl=1",
    "bm=32 bn=64 bk=8 wm=32 wn=32 stages=1 raster=4 sk=1",
    /* warp groups along K (wk): cp.async and register paths, single-float
     * copies, split-K on top, 2-float and single-float parked vectors */
    "bm=64 bn=128 bk=48 wm=32 wn=64 wk=3 stages=3 vec=4",
    "bm=64 bn=128 bk=32 wm=32 wn=64 wk=2 stages=1 vec=4 raster=8",
    "bm=64 bn=64 bk=32 wm=32 wn=32 wk=4 stages=2 splitk=3 red=4",
    "bm=64 bn=128 bk=48 wm=32 wn=64 wk=3 stages=3 vec=1 cc=1", /* index 34: tn and nn */
    "bm=64 bn=32 bk=24 wm=32 wn=16 tm=4 tn=2 wk=3 stages=3 vec=2",
    "bm=32 bn=32 bk=8 wm=32 wn=32 tm=4 tn=1 ln=32 wk=2 stages=1 vec=1",
    /* the next tile's copies halfway through the multiplication (mid) */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 mid=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 mid=1 splitk=2 red=4",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=4 vec=2 mid=1",
    /* B through cp.async inside the register-prefetch pipeline (ba): direct
     * and transposing B copies, compact single floats, split-K, mid */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 ba=1", /* index 42: tn and nn */
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=1 cc=1 ba=1 splitk=2 red=4",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=1 vec=2 ba=1 mid=1",
    "bm=64 bn=64 bk=32 wm=32 wn=32 wk=2 stages=1 vec=4 ba=1 splitk=3 red=4",
    /* the next tile's copies predicated instead of branched around (pred):
     * register path (vector, compact and ba), cp.async ring (vector, single
     * floats, compact), mid, warp groups, split-K, clusters */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 pred=1",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 pred=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 raster=8 pred=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 pred=1",
    "bm=64 bn=128 bk=8 wm=32 wn=64 stages=1 vec=1 cc=1 pred=1", /* index 50: tn and nn */
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=4 vec=2 mid=1 pred=1",
    "bm=64 bn=128 bk=32 wm=32 wn=64 wk=2 stages=1 vec=4 pred=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 splitk=3 cl=1 pred=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=2 vec=4 splitk=2 pred=1",
    "bm=128 bn=128 bk=16 wm=64 wn=32 stages=1 vec=2 ba=1 mid=1 pred=1",
    /* the next tile's first fragments across the barrier (xb): vector and
     * compact single-float copies, ba, fragments of 4 values of k (at=0
     * bt=1), warp groups, split-K, pred */
    "bm=64 bn=128 bk=8 wm=32 wn=64 stages=1 vec=1 cc=1 xb=1", /* index 56: nn and tn */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=1 splitk=4 red=4 xb=1",
    "bm=64 bn=128 bk=8 wm=32 wn=64 stages=1 vec=1 cc=1 xb=1 pred=1", /* index 58: tn and nn */
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 splitk=3 red=4 xb=1 pred=1",
    "bm=64 bn=64 bk=16 wm=32 wn=32 stages=1 vec=1 at=0 bt=1 xb=1",
    "bm=64 bn=128 bk=32 wm=32 wn=64 wk=2 stages=1 vec=4 xb=1 raster=8",
    /* tiles 16 wide (the tuner's space_groups for a side of 9-16): 128 x 16 with split-K, 16 x 128 */
    "bm=128 bn=16 bk=8 wm=32 wn=16 tm=4 tn=4 ln=4 stages=1 vec=1 splitk=8 red=4",
    "bm=16 bn=128 bk=8 wm=16 wn=32 tm=2 tn=4 ln=8 stages=1 vec=4 splitk=4 red=4 pred=1",
};
#define NCONFIGS (int)(sizeof configs / sizeof *configs)

static const int shapes[][3] = {
    {1, 1, 1},    {17, 33, 9},   {127, 129, 131}, {1, 300, 257}, {300, 1, 64}, {129, 257, 1},
    {255, 130, 1000}, {131, 263, 37}, {132, 260, 36}, {4, 4, 4},   {516, 1028, 68}, {128, 192, 96},
    {256, 512, 64}, {64, 128, 32},
};
#define NSHAPES (int)(sizeof shapes / sizeof *shapes)

static const char *const layouts[] = {"nn", "nt", "tn", "tt"};

static const char *const sk_configs[] = {
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=1 red=4",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 sk=1 red=4 cc=1",
    "bm=64 bn=128 bk=16 wm=32 wn=32 stages=3 raster=1 sk=1",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=2 sk=1 red=4 minb=2",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=1 red=4 ba=1",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 sk=1 red=4 cc=1 pred=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 raster=8 sk=1 red=4 pred=1",
    /* sk=2: only the last partial wave's tiles shared, pieces first */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 sk=2 red=4",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=1 sk=2 red=4 xb=1",
    "bm=64 bn=128 bk=16 wm=32 wn=32 stages=3 raster=1 sk=2",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=2 sk=2 red=4 minb=2",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 pred=1 raster=8 sk=2 red=4",
    /* skw=1: with 4-byte copies the shapes' N is odd, so C's rows are not
     * 16-byte granular and the workspace variant runs (8-byte: the main one) */
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=3 raster=8 vec=1 sk=1 red=4 cc=1 skw=1",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 pred=1 raster=8 sk=2 red=4 skw=1",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=2 sk=1 red=4 minb=2 skw=1",
    /* walk=2: each worker's walking pointers start at its piece's first tile */
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 sk=1 red=4 walk=2",
    /* spread=1 with stream-K (a catalogue kernel's kind: the 128 x 128 4-byte one) */
    "bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=1 red=4 walk=2 spread=1",
    /* tiles 16 wide */
    "bm=16 bn=128 bk=8 wm=16 wn=32 tm=2 tn=4 ln=8 stages=1 vec=1 pred=1 sk=1 red=4",
    "bm=128 bn=16 bk=8 wm=32 wn=16 tm=4 tn=4 ln=4 stages=1 vec=4 sk=1 red=4",
    /* cva=1 (catalogue kernels 56 and 57): with 4-byte copies N is odd, so the whole tiles' stores (G and 2G
     * tiles: all of them; 2G + 3: all but the last wave's) go in pieces by their rows' alignment */
    "bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 walk=2 spread=1 cva=1",
    "bm=256 bn=64 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 walk=2 spread=1 cva=1",
};
#define NSK (int)(sizeof sk_configs / sizeof *sk_configs)

/* pack=1 kernels (test_pack) */
static const char *const pk_configs[] = {
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=8 vec=4 pack=1 sk=1 red=4",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=1 vec=4 ba=1 pack=1 splitk=3 red=4",
    "bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=4 pack=1 pred=1",
    "bm=128 bn=128 bk=16 wm=64 wn=64 stages=1 raster=8 vec=4 pack=1",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 raster=1 vec=4 pack=1 sk=2 red=4 xb=1",
    "bm=128 bn=128 bk=8 wm=64 wn=64 stages=1 raster=1 vec=4 pack=1 sk=2 red=4 xb=1 skw=1",
};

/* red = 4, cst = 1's staged stores and cva = 1's pieces, into ragged rows of C, each in its layouts
 * (test_realigned_red) */
static const struct { const char *config; const char *layouts; } rr_configs[] = {
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=1 cc=1 sk=1 red=4", "nn nt tn tt"},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 cc=1 splitk=3 red=4", "nn nt tn tt"},
    {"bm=32 bn=128 bk=8 wm=32 wn=64 tm=4 tn=8 ln=8 stages=3 vec=1 cc=1 splitk=2 red=4", "nn tt"},
    {"bm=64 bn=64 bk=8 wm=16 wn=64 tm=2 tn=4 ln=16 stages=2 vec=1 splitk=4 red=4", "nt tn"},
    {"bm=64 bn=64 bk=32 wm=32 wn=32 wk=2 stages=1 vec=1 splitk=3 red=4", "nn tt"},
    /* lanes along N: 4 (two passes), 32 (one), 2 with 8-float runs and 8-byte copies, 1 (eight passes:
     * a lane's next run is its own) */
    {"bm=64 bn=64 bk=16 wm=32 wn=32 tm=4 tn=4 ln=4 stages=2 vec=1 splitk=3 red=4", "nt tn"},
    {"bm=32 bn=128 bk=8 wm=8 wn=128 tm=1 tn=4 ln=32 stages=2 vec=1 splitk=2 red=4", "nn tt"},
    {"bm=64 bn=64 bk=8 wm=64 wn=32 tm=4 tn=8 ln=2 stages=2 vec=2 splitk=4 red=4", "nt"},
    {"bm=64 bn=32 bk=8 wm=64 wn=32 tm=2 tn=4 ln=1 stages=2 vec=1 splitk=2 red=4", "nn tn"},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 cc=1 splitk=4 red=4", "nt"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=1 vec=4 sk=2 red=4 xb=1", "nt"},
    /* skw=1: the shared tiles' pieces through the workspace instead */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=1 cc=1 sk=1 red=4 skw=1", "nn nt tn tt"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=1 vec=4 sk=2 red=4 xb=1 skw=1", "nt"},
    /* cst=1: C's rows stored through shared memory, a warp's sub-tile row at a time (cp.async ring, register
     * prefetch, stream-K's whole tiles, 16-wide warp tiles: two rows per store) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cst=1", "nn nt tn tt"},
    {"bm=32 bn=64 bk=8 wm=16 wn=32 stages=3 vec=1 cc=1 pred=1 cst=1", "nn tt"},
    {"bm=64 bn=64 bk=16 wm=32 wn=32 stages=1 vec=1 xb=1 cst=1", "nt tn"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=2 vec=1 sk=1 red=4 cst=1", "nn tt"},
    {"bm=128 bn=16 bk=8 wm=32 wn=16 tm=4 tn=4 ln=4 stages=1 vec=4 pack=1 cst=1", "nt"},
    /* walk=2 with cst=1 (catalogue kernel 52's kind) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cst=1 walk=2", "nn nt tn tt"},
    /* spread=1 in every layout (the walking pointer along a contiguous M or N moves down the lines
     * across the steps of k) */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 pred=1 cst=1 walk=2 spread=1", "nn nt tn tt"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=1 red=4 spread=1", "nn nt tn tt"},
    /* cva=1: a lane's runs of 4 floats in pieces by their row's alignment (16, 8 + 8, or 4 + 8 + 4 bytes), in
     * the stores of C (and its reads, beta != 0) and, with sk=2 (every tile shared at these sizes), in
     * stream-K's additions; beside cst=1 (the stores staged, the additions in pieces) and skw=1 (at these
     * sizes every tile is shared and added through the workspace: the pieced stores are compiled, not run);
     * tm=2: a warp's lane rows 2 apart, so its lanes' alignments differ */
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", "nn nt tn tt"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 walk=2 spread=1 cva=1", "nn nt tn tt"},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=2 vec=1 cc=1 sk=2 red=4 cst=1 cva=1", "nt tn"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=1 vec=4 sk=2 red=4 xb=1 skw=1 cva=1", "nt"},
    {"bm=64 bn=64 bk=8 wm=16 wn=64 tm=2 tn=4 ln=16 stages=2 vec=1 sk=2 red=4 cva=1", "nn tt"},
    /* split-K's additions in pieces (16-byte copies: nt, where only C's rows are ragged) */
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 splitk=4 red=4 cva=1", "nt"},
};

/* cva=1 where C's rows are ragged by the pointer or by an ldc of any residue, on shapes whole in tiles
 * (bounds=0 among them) and ragged ones (test_cva) */
static const struct { const char *config; const char *layouts; } cv_configs[] = {
    {"bm=64 bn=64 bk=16 wm=32 wn=32 stages=2 vec=1 bounds=0 cva=1", "nn nt tn tt"},
    {"bm=64 bn=64 bk=8 wm=32 wn=32 stages=3 vec=1 cc=1 cva=1", "nn tt"},
    {"bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 splitk=4 red=4 cva=1", "nt"},
    {"bm=64 bn=64 bk=8 wm=16 wn=64 tm=2 tn=4 ln=16 stages=2 vec=1 sk=2 red=4 cva=1", "tn"},
    {"bm=128 bn=128 bk=8 wm=64 wn=64 stages=3 vec=1 cc=1 pred=1 sk=2 red=4 walk=2 spread=1 cva=1", "nt"},
};

/* split-K with its beta pass overlapped, in the default layout (test_overlap) */
static const char *const ov_configs[] = {
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=4 splitk=4 red=4 cc=1",
    "bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4 splitk=4 red=4",
    "bm=64 bn=128 bk=16 wm=32 wn=64 stages=3 vec=1 splitk=4 red=1",
};

#define NPK (int)(sizeof pk_configs / sizeof *pk_configs)
#define NRR (int)(sizeof rr_configs / sizeof *rr_configs)
#define NOV (int)(sizeof ov_configs / sizeof *ov_configs)
#define NCV (int)(sizeof cv_configs / sizeof *cv_configs)
#define NKERNELS (NCONFIGS * 2 + NSK + NPK * 4 + NRR * 4 + NOV + NCV * 4)

/* Kernel i of the precompile, of all that the tests below get: each of
 * configs[] in its two layouts, the stream-K, packed, realigned-reduction
 * and overlapped ones; 0 for an index no test uses (a layout rr_configs[] skips). */
static int config_i(int i, char *tmpl, size_t tlen, char *cfg, size_t clen, void *ud)
{
    (void)ud;
    snprintf(tmpl, tlen, "matmul_warp");
    if (i < NCONFIGS * 2)
        return snprintf(cfg, clen, "%s layout=%s", configs[i / 2], layouts[(i / 2 + 2 * (i % 2)) % 4]) > 0;
    if ((i -= NCONFIGS * 2) < NSK)
        return snprintf(cfg, clen, "%s layout=%s", sk_configs[i], layouts[i % 4]) > 0;
    if ((i -= NSK) < NPK * 4)
        return snprintf(cfg, clen, "%s layout=%s", pk_configs[i / 4], layouts[i % 4]) > 0;
    if ((i -= NPK * 4) < NRR * 4)
        return strstr(rr_configs[i / 4].layouts, layouts[i % 4]) &&
               snprintf(cfg, clen, "%s layout=%s", rr_configs[i / 4].config, layouts[i % 4]) > 0;
    if ((i -= NRR * 4) < NOV)
        return snprintf(cfg, clen, "%s", ov_configs[i]) > 0;
    return (i -= NOV) < NCV * 4 && strstr(cv_configs[i / 4].layouts, layouts[i % 4]) &&
           snprintf(cfg, clen, "%s layout=%s", cv_configs[i / 4].config, layouts[i % 4]) > 0;
}

/* M, N with tiles_m * tiles_n == tiles (rows x columns, rows small), ragged
 * by a few rows and columns: odd ones, or multiples of `vec` so that a
 * kernel with vector copies takes the shape. */
static void sk_shape(long tiles, int bm, int bn, int vec, int *m, int *n)
{
    long rows = 1;
    for (long r = 2; r <= 8; r++)
        if (tiles % r == 0)
            rows = r;
    long cols = tiles / rows;
    *m = (int)(rows * bm - (vec > 1 ? vec : 3));
    *n = (int)(cols * bn - (vec > 1 ? 2 * vec : 5));
}

/* The stream-K kernels on shapes built from their grid; returns checks run. */
static int test_stream_k(kg_context *ctx)
{
    kg_device_info dev;
    kg_status st = kg_device_query(ctx, 0, &dev);
    CHECK_MSG(st == KG_OK, "kg_device_query: %s", kg_last_error(ctx));
    if (st != KG_OK)
        return 0;
    int verified = 0;
    for (int c = 0; c < NSK; c++) {
        const char *layout = layouts[c % 4];
        char config[512];
        snprintf(config, sizeof config, "%s layout=%s", sk_configs[c], layout);
        kg_kernel *kern;
        kg_kernel_info info;
        st = kg_kernel_get(ctx, "matmul_warp", config, &kern);
        CHECK_MSG(st == KG_OK, "%s: %s", config, kg_last_error(ctx));
        if (st != KG_OK || kg_kernel_query(ctx, kern, &info) != KG_OK)
            continue;
        int bm = 0, bn = 0, vec = 4; /* the template's default vec */
        sscanf(strstr(sk_configs[c], "bm="), "bm=%d", &bm);
        sscanf(strstr(sk_configs[c], "bn="), "bn=%d", &bn);
        if (strstr(sk_configs[c], "vec="))
            sscanf(strstr(sk_configs[c], "vec="), "vec=%d", &vec);
        long g = (long)dev.sm_count * info.max_blocks_per_sm;
        const struct { long tiles; int k; } cases[] = {
            {1, 45}, {g / 2 + 1, 1}, {g, 70}, {g + 1, 33}, {2 * g, 17}, {2 * g + 3, 37},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            int m, n, k = vec > 1 ? (cases[i].k + vec - 1) / vec * vec : cases[i].k;
            sk_shape(cases[i].tiles, bm, bn, vec, &m, &n);
            double err1, err2;
            kg_status s1 = kgi_verify_kernel(ctx, kern, m, n, k, 1.25f, -0.5f, 0, 3000u + (unsigned)i, &err1);
            CHECK_MSG(s1 == KG_OK, "%s %dx%dx%d (%ld tiles, grid %ld; alpha 1.25, beta -0.5): error %.3g: %s",
                      config, m, n, k, cases[i].tiles, g, err1, kg_last_error(ctx));
            if (s1 == KG_ERR_DRIVER)
                return verified;
            kg_status s2 = kgi_verify_kernel(ctx, kern, m, n, k, -0.75f, 0.0f, 0, 4000u + (unsigned)i, &err2);
            CHECK_MSG(s2 == KG_OK, "%s %dx%dx%d (%ld tiles, grid %ld; alpha -0.75, beta 0): error %.3g: %s",
                      config, m, n, k, cases[i].tiles, g, err2, kg_last_error(ctx));
            if (s2 == KG_ERR_DRIVER)
                return verified;
            verified += (s1 == KG_OK) + (s2 == KG_OK);
        }
        printf("%s: grid %ld (%d SMs x %d blocks), 6 shapes from 1 to %ld tiles\n", config, g, dev.sm_count,
               info.max_blocks_per_sm, 2 * g + 3);
    }
    return verified;
}

/* pack=1 kernels on every shape and layout, ragged and aligned leading
 * dimensions; returns checks run. */
static int test_pack(kg_context *ctx)
{
    int verified = 0;
    for (int c = 0; c < NPK; c++) {
        for (int l = 0; l < 4; l++) {
            char config[512];
            snprintf(config, sizeof config, "%s layout=%s", pk_configs[c], layouts[l]);
            kg_kernel *kern;
            kg_kernel_info info;
            kg_status st = kg_kernel_get(ctx, "matmul_warp", config, &kern);
            CHECK_MSG(st == KG_OK, "%s: %s", config, kg_last_error(ctx));
            if (st != KG_OK || kg_kernel_query(ctx, kern, &info) != KG_OK)
                continue;
            CHECK_MSG(info.pack == 1, "%s: kg_kernel_info.pack = %d", config, info.pack);
            for (int s = 0; s < NSHAPES; s++) {
                int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                for (int pad = 3; pad <= 4; pad++) {
                    double err1, err2;
                    kg_status s1 = kgi_verify_kernel(ctx, kern, m, n, k, 1.25f, -0.5f, pad,
                                                     7000u + 10u * (unsigned)s + (unsigned)pad, &err1);
                    CHECK_MSG(s1 == KG_OK, "%s %dx%dx%d pad %d (alpha 1.25, beta -0.5): error %.3g: %s", config, m,
                              n, k, pad, err1, kg_last_error(ctx));
                    kg_status s2 = kgi_verify_kernel(ctx, kern, m, n, k, -0.75f, 0.0f, pad,
                                                     8000u + 10u * (unsigned)s + (unsigned)pad, &err2);
                    CHECK_MSG(s2 == KG_OK, "%s %dx%dx%d pad %d (alpha -0.75, beta 0): error %.3g: %s", config, m, n,
                              k, pad, err2, kg_last_error(ctx));
                    if (s1 == KG_ERR_DRIVER || s2 == KG_ERR_DRIVER)
                        return verified;
                    verified += (s1 == KG_OK) + (s2 == KG_OK);
                }
            }
        }
        printf("%s: 4 layouts x %d shapes x 2 paddings\n", pk_configs[c], NSHAPES);
    }
    return verified;
}

/* The kernel of configuration `base` in `layout`, its text in config[]; NULL after a failed check. */
static kg_kernel *kernel_in(kg_context *ctx, const char *base, const char *layout, char *config, size_t len)
{
    snprintf(config, len, "%s layout=%s", base, layout);
    kg_kernel *kern;
    kg_status st = kg_kernel_get(ctx, "matmul_warp", config, &kern);
    CHECK_MSG(st == KG_OK, "%s: %s", config, kg_last_error(ctx));
    return st == KG_OK ? kern : NULL;
}

/*
 * red = 4 into a C whose rows are not 16-byte granular: the additions are
 * realigned per row (a thread's last 4-float group takes the next run's
 * first floats from its neighbour lane; the row segment's ends go one by
 * one). N = 1, 2, 3 (mod 4) gives every row alignment; M ragged leaves
 * lanes past M in the shuffles. 4-byte-copy split-K kernels in every
 * layout; and, keeping single atomics there, a stream-K kernel and
 * 16-byte-copy kernels (in nt, where only C's rows, N long, are ragged).
 * Returns checks run.
 */
static int test_realigned_red(kg_context *ctx)
{
    static const int sizes[][3] = {{131, 253, 100}, {70, 130, 64}, {129, 255, 36}, {1, 7, 200}, {61, 2, 52}};
    int verified = 0;
    for (int c = 0; c < NRR; c++) {
        for (int l = 0; l < 4; l++) {
            if (!strstr(rr_configs[c].layouts, layouts[l]))
                continue;
            char config[512];
            kg_kernel *kern = kernel_in(ctx, rr_configs[c].config, layouts[l], config, sizeof config);
            if (!kern)
                continue;
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
                CHECK_MSG(n % 4 != 0, "N = %d leaves C's rows aligned: not a case of this test", n);
                double err1, err2;
                kg_status s1 = kgi_verify_kernel(ctx, kern, m, n, k, 1.25f, -0.5f, 0, 9000u + (unsigned)z, &err1);
                CHECK_MSG(s1 == KG_OK, "%s %dx%dx%d (alpha 1.25, beta -0.5): error %.3g: %s", config, m, n, k, err1,
                          kg_last_error(ctx));
                kg_status s2 = kgi_verify_kernel(ctx, kern, m, n, k, -0.75f, 0.0f, 0, 9500u + (unsigned)z, &err2);
                CHECK_MSG(s2 == KG_OK, "%s %dx%dx%d (alpha -0.75, beta 0, C poisoned): error %.3g: %s", config, m,
                          n, k, err2, kg_last_error(ctx));
                if (s1 == KG_ERR_DRIVER || s2 == KG_ERR_DRIVER)
                    return verified;
                verified += (s1 == KG_OK) + (s2 == KG_OK);
            }
        }
        printf("%s: layouts %s, %d shapes with ragged rows of C\n", rr_configs[c].config, rr_configs[c].layouts,
               (int)(sizeof sizes / sizeof *sizes));
    }
    return verified;
}

/*
 * Split-K with its beta pass overlapped (sm_90): the main kernel's blocks
 * start while the beta pass still writes C and must wait for it before they
 * add. With K = 64 in 4 slices each block multiplies one tile of K and is at
 * its additions within microseconds, while the beta pass over a 1500 x 2000
 * C takes longer: a missing or misplaced wait shows as wrong sums (beta 0 on
 * NaN-poisoned C: the pass's zeros land on the additions, or NaN survives).
 * Returns checks run.
 */
static int test_overlap(kg_context *ctx)
{
    int verified = 0;
    for (int c = 0; c < NOV; c++) {
        kg_kernel *kern;
        kg_kernel_info info;
        kg_status st = kg_kernel_get(ctx, "matmul_warp", ov_configs[c], &kern);
        CHECK_MSG(st == KG_OK, "%s: %s", ov_configs[c], kg_last_error(ctx));
        if (st != KG_OK || kg_kernel_query(ctx, kern, &info) != KG_OK)
            continue;
        const char *off = getenv("KGEN_OVERLAP");
        /* 2: the beta pass overlaps the kernel before it too (it waits for it) */
        CHECK_MSG(info.overlap == 2 * (kg_arch(ctx) >= 90 && !(off && strcmp(off, "0") == 0)),
                  "%s: overlapped launch %d on sm_%d", ov_configs[c], info.overlap, kg_arch(ctx));
        for (int rep = 0; rep < 2; rep++) {
            double err1, err2;
            kg_status s1 = kgi_verify_kernel(ctx, kern, 1500, 2000, 64, -0.75f, 0.0f, 0, 5000u + (unsigned)rep, &err1);
            CHECK_MSG(s1 == KG_OK, "%s 1500x2000x64 (beta 0, C poisoned): error %.3g: %s", ov_configs[c], err1,
                      kg_last_error(ctx));
            kg_status s2 = kgi_verify_kernel(ctx, kern, 1500, 2000, 64, 1.25f, -0.5f, 0, 6000u + (unsigned)rep, &err2);
            CHECK_MSG(s2 == KG_OK, "%s 1500x2000x64 (beta -0.5): error %.3g: %s", ov_configs[c], err2,
                      kg_last_error(ctx));
            if (s1 == KG_ERR_DRIVER || s2 == KG_ERR_DRIVER)
                return verified;
            verified += (s1 == KG_OK) + (s2 == KG_OK);
        }
        printf("%s: overlapped launch %s, 4 checks\n", ov_configs[c], info.overlap ? "on" : "off");
    }
    return verified;
}

/*
 * cva = 1 on C placed 0-3 floats past a 16-byte boundary, with ldc = N and N plus 1-4 (every residue of
 * the rows' alignment, row by row and from the pointer), on shapes whole in tiles (the bounds=0 kernel
 * takes only those) and ragged ones. C's floats before the pointer and past N must survive. Returns
 * checks run.
 */
static int test_cva(kg_context *ctx)
{
    static const int sizes[][3] = {{128, 192, 96}, {256, 128, 64}, {131, 253, 100}, {70, 130, 36}};
    int verified = 0;
    for (int c = 0; c < NCV; c++) {
        int ran = 0;
        for (int l = 0; l < 4; l++) {
            if (!strstr(cv_configs[c].layouts, layouts[l]))
                continue;
            char config[512];
            kg_kernel *kern = kernel_in(ctx, cv_configs[c].config, layouts[l], config, sizeof config);
            if (!kern)
                continue;
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
                for (int pad = 0; pad <= 4; pad++)
                    for (int shift = 0; shift <= 3; shift++) {
                        int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
                        if ((pad == 0 || pad == 4) && n % 4 == 0 && shift == 0)
                            continue; /* C's rows 16-byte vectors: not a case of this test */
                        double err1, err2;
                        unsigned seed = 12000u + 100u * (unsigned)z + 10u * (unsigned)pad + (unsigned)shift;
                        kg_status s1 =
                            kgi_verify_kernel_at(ctx, kern, m, n, k, 1.25f, -0.5f, pad, shift, seed, &err1);
                        if (s1 == KG_ERR_SHAPE)
                            continue; /* bounds=0 on a ragged shape; 16-byte copies on ragged rows of A or B */
                        CHECK_MSG(s1 == KG_OK, "%s %dx%dx%d pad %d, C +%d floats (alpha 1.25, beta -0.5): error %.3g: %s",
                                  config, m, n, k, pad, shift, err1, kg_last_error(ctx));
                        kg_status s2 =
                            kgi_verify_kernel_at(ctx, kern, m, n, k, -0.75f, 0.0f, pad, shift, seed + 5000u, &err2);
                        CHECK_MSG(s2 == KG_OK,
                                  "%s %dx%dx%d pad %d, C +%d floats (alpha -0.75, beta 0, C poisoned): error %.3g: %s",
                                  config, m, n, k, pad, shift, err2, kg_last_error(ctx));
                        if (s1 == KG_ERR_DRIVER || s2 == KG_ERR_DRIVER)
                            return verified;
                        verified += (s1 == KG_OK) + (s2 == KG_OK);
                        ran++;
                    }
        }
        CHECK_MSG(ran >= 8, "%s ran on only %d cases", cv_configs[c].config, ran);
        printf("%s: layouts %s, %d cases of C's pointer and ldc\n", cv_configs[c].config, cv_configs[c].layouts, ran);
    }
    return verified;
}

int main(void)
{
    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    if (st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE) {
        printf("%s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        TEST_SKIP("no GPU: matmul_warp's kernels cannot run here");
    }
    CHECK_MSG(st == KG_OK, "kg_context_open: %s", kg_last_error(ctx));
    if (st != KG_OK) {
        kg_context_close(ctx);
        TEST_DONE();
    }
    /* NVRTC one kernel at a time is about half the run: compiled first, in parallel, into the disk cache (where on) */
    const char *why;
    if (kgi_arch_limits(kg_arch(ctx)) && kgi_cache_dir(ctx, &why))
        gp_precompile(kg_arch(ctx), NKERNELS, config_i, NULL);
    int verified = 0, refused = 0;
    for (int c = 0; c < NCONFIGS; c++) {
        for (int l = 0; l < 2; l++) {
            /* two layouts per configuration, all four across neighbours */
            const char *layout = layouts[(c + 2 * l) % 4];
            char config[512];
            snprintf(config, sizeof config, "%s layout=%s", configs[c], layout);
            kg_kernel *kern;
            st = kg_kernel_get(ctx, "matmul_warp", config, &kern);
            CHECK_MSG(st == KG_OK, "%s: %s", config, kg_last_error(ctx));
            if (st != KG_OK)
                continue;
            int ran = 0;
            for (int s = 0; s < NSHAPES; s++) {
                int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                /* padding 4 keeps aligned rows aligned; 3 makes every row ragged */
                int pad = (m % 4 || n % 4 || k % 4) ? 3 : 4;
                double err1, err2;
                st = kgi_verify_kernel(ctx, kern, m, n, k, 1.25f, -0.5f, pad, 1000u + (unsigned)s, &err1);
                if (st == KG_ERR_SHAPE) {
                    refused++;
                    continue;
                }
                CHECK_MSG(st == KG_OK, "%s %dx%dx%d (alpha 1.25, beta -0.5): error %.3g: %s", config, m, n, k,
                          err1, kg_last_error(ctx));
                st = kgi_verify_kernel(ctx, kern, m, n, k, -0.75f, 0.0f, pad, 2000u + (unsigned)s, &err2);
                CHECK_MSG(st == KG_OK, "%s %dx%dx%d (alpha -0.75, beta 0): error %.3g: %s", config, m, n, k, err2,
                          kg_last_error(ctx));
                if (st == KG_ERR_DRIVER) {
                    /* a fault poisons the context: nothing after it can be trusted */
                    kg_context_close(ctx);
                    TEST_DONE();
                }
                ran++;
                verified += 2;
            }
            CHECK_MSG(ran >= 3, "%s ran on only %d shapes", config, ran);
        }
    }
    int sk = test_stream_k(ctx);
    int ov = test_overlap(ctx);
    int pk = test_pack(ctx);
    int rr = test_realigned_red(ctx);
    int cv = test_cva(ctx);
    printf("%d checks against the float64 reference, %d shapes refused by preconditions; stream-K: %d checks; "
           "overlapped split-K: %d checks; packed operands: %d checks; realigned reductions: %d checks; "
           "cva pieces: %d checks\n", verified, refused, sk, ov, pk, rr, cv);
    kg_context_close(ctx);
    TEST_DONE();
}
