/*
 * kernel.h -- kernels loaded on a device (launch.c) and kg_matmul's
 * choices (matmul.c), as runtime/'s modules see them. Private to runtime/.
 */
#ifndef KGEN_KERNEL_H
#define KGEN_KERNEL_H

#include "cache.h"
#include "driver.h"

struct kg_kernel {
    CUmodule module;
    CUfunction fn;
    CUfunction pre_fn;       /* NULL: no pre kernel */
    CUfunction pack_fn;      /* NULL: the kernel reads the caller's operands */
    CUfunction ws_fn;        /* geo.ws_waves: fn's workspace variant (else NULL) */
    CUfunction post_fn;      /* and the kernel that runs after it */
    kgi_geometry geo, pre_geo, post_geo;
    kg_kernel_info info;
    unsigned persist;        /* a persistent grid ("P"): SMs x fn's blocks per SM */
    unsigned ws_persist;     /* the same for ws_fn */
    int overlap;             /* launch fn to overlap pre_fn (programmatic dependent launch) */
    int pre_overlap;         /* and pre_fn to overlap the kernel before it (the template's `waits`) */
};

/* A context's kernels: every one loaded, and the lookups that find them. */
struct kgi_kernels {
    kg_kernel **list;
    size_t n, cap;
    kgi_map by_src;          /* source cache key -> kg_kernel */
    kgi_map by_text;         /* hash of template and config text -> alias (launch.c) */
    kgi_map choices;         /* kg_matmul's choice key -> choice (matmul.c) */
};

/* The context's kernels, created on first use (NULL: out of memory). */
struct kgi_kernels *kgi_kernels_of(kg_context *ctx);
/* Compiles (through the caches) and loads `src`, or finds it loaded. */
kg_status kgi_load_kernel(kg_context *ctx, const kg_source *src, kg_kernel **out);
/* matmul.c: frees the choices' records (the kernels are freed by launch.c). */
void kgi_choices_free(kgi_map *choices);

/* The parts of kgi_geometry_admits, each 1 when the arguments pass and 0
 * with a reason in `why`: sizes, pointers and leading-dimension minima;
 * multiples of the tile (bound checks off) and the largest M, N
 * a skinny kernel takes; vector alignment of lda, ldb,
 * A and B; the launch grid (filled in `grid`) within the device's limits,
 * a persistent axis ("P") taking `persist` blocks. */
int kgi_basics_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len);
int kgi_multiples_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len);
int kgi_vectors_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len);
int kgi_grid_of(const kgi_geometry *geo, const kg_gemm *g, unsigned persist, unsigned grid[3], char *why,
                size_t len);

#endif
