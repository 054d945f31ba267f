/*
 * launch.c -- kernels on a device and their launch.
 *
 * A kernel is rendered, compiled through the caches (cache.c), loaded with
 * cuModuleLoadData and kept by the context until it closes: looked up by
 * the text it was asked for, then by its source's cache key, so two
 * spellings of one configuration share a module. A launch checks the
 * arguments against the template's `requires` (kgi_geometry): a kernel
 * built without bound checks refuses a shape that is not a multiple of its
 * tile, a vector-load kernel refuses unaligned leading dimensions or
 * pointers, each with a message that names the broken precondition. A
 * template's optional `pre` kernel runs just before the main one, on the
 * same stream with the same arguments. A kernel with a `pack` kernel
 * (pack = 1) reads operands whose rows hold whole 16-byte vectors: where
 * the caller's do not (lda or ldb, the pointer, or a contiguous M or N
 * extent not a multiple of 4 floats), the launcher first copies them into
 * a workspace from the context's stream-ordered memory pool, padded with
 * zeros, and frees it on the same stream after the launch. A kernel with a
 * workspace variant (stream-K's skw = 1) runs it, on a zeroed workspace,
 * and then its post kernel instead of its pre and main kernels where C's
 * rows are not 16-byte granular.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "kernel.h"
#include "runtime.h"

typedef struct alias {       /* kg_kernel_get's (template, config) -> kernel */
    char *tmpl, *config;
    kg_kernel *kern;
} alias;

struct kgi_kernels *kgi_kernels_of(kg_context *ctx)
{
    if (!ctx->kernels)
        ctx->kernels = calloc(1, sizeof *ctx->kernels);
    return ctx->kernels;
}

void kgi_kernels_free(kg_context *ctx)
{
    struct kgi_kernels *ks = ctx->kernels;
    if (!ks)
        return;
    int current = ctx->drv && kgi_drv_enter(ctx) == KG_OK;
    for (size_t i = 0; i < ks->n; i++) {
        if (current)
            ctx->drv->cu->ModuleUnload(ks->list[i]->module);
        free(ks->list[i]);
    }
    if (current)
        kgi_drv_leave(ctx);
    for (size_t i = 0; i < ks->by_text.cap; i++) {
        alias *a = ks->by_text.vals[i];
        if (ks->by_text.keys[i] && a) {
            free(a->tmpl);
            free(a->config);
            free(a);
        }
    }
    kgi_choices_free(&ks->choices);
    kgi_map_free(&ks->by_src);
    kgi_map_free(&ks->by_text);
    kgi_map_free(&ks->choices);
    free(ks->list);
    free(ks);
    ctx->kernels = NULL;
}

/* ------------------------------------------------------------ preconditions */

static const unsigned long long grid_max[3] = {2147483647ULL, 65535ULL, 65535ULL};

int kgi_grid_of(const kgi_geometry *geo, const kg_gemm *g, unsigned persist, unsigned grid[3], char *why,
                size_t len)
{
    const unsigned long long *max = grid_max;
    for (int i = 0; i < 3; i++) {
        unsigned long long v = 1;
        switch (geo->grid[i].dim) {
        case 'M': v = (unsigned long long)g->m; break;
        case 'N': v = (unsigned long long)g->n; break;
        case 'K': v = (unsigned long long)g->k; break;
        case 'P': v = persist ? persist : 1; break;
        default: break;
        }
        v = (v + geo->grid[i].div - 1) / geo->grid[i].div * geo->grid[i].mul;
        if (v < 1 || v > max[i]) {
            snprintf(why, len, "M=%d N=%d K=%d needs a grid of %llu blocks along %c; the limit is %llu", g->m,
                     g->n, g->k, v, "xyz"[i], max[i]);
            return 0;
        }
        grid[i] = (unsigned)v;
    }
    return 1;
}

int kgi_multiples_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len)
{
    const struct { const char *name; int v; unsigned mult; } d[] = {
        {"M", g->m, geo->m_multiple}, {"N", g->n, geo->n_multiple}, {"K", g->k, geo->k_multiple}};
    for (int i = 0; i < 3; i++) {
        if (d[i].mult > 1 && (unsigned)d[i].v % d[i].mult != 0) {
            snprintf(why, len, "%s=%d is not a multiple of %u, which this kernel needs (no bound checks; bounds=1 takes any shape)",
                     d[i].name, d[i].v, d[i].mult);
            return 0;
        }
    }
    const struct { const char *name; int v; unsigned max; } s[] = {{"M", g->m, geo->m_max}, {"N", g->n, geo->n_max}};
    for (int i = 0; i < 2; i++) {
        if (s[i].max > 0 && (unsigned)s[i].v > s[i].max) {
            snprintf(why, len, "%s=%d exceeds %u, the most this kernel takes (a kernel for a small %s)", s[i].name,
                     s[i].v, s[i].max, s[i].name);
            return 0;
        }
    }
    return 1;
}

int kgi_vectors_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len)
{
    /* the operands the rules bind (vec_operands: 1 A, 2 B, 3 or 0 both) */
    int va = !(geo->vec_operands == 2), vb = !(geo->vec_operands == 1);
    if (geo->ld_multiple > 1) {
        int bad_a = va && (unsigned)g->lda % geo->ld_multiple, bad_b = vb && (unsigned)g->ldb % geo->ld_multiple;
        if (bad_a || bad_b) {
            snprintf(why, len, "%s=%d is not a multiple of %u, which this kernel's vector loads need",
                     bad_a ? "lda" : "ldb", bad_a ? g->lda : g->ldb, geo->ld_multiple);
            return 0;
        }
    }
    if (geo->align > 4) {
        int bad_a = va && (uintptr_t)g->a % geo->align, bad_b = vb && (uintptr_t)g->b % geo->align;
        if (bad_a || bad_b) {
            snprintf(why, len, "%s is not %u-byte aligned, which this kernel's vector loads need", bad_a ? "A" : "B",
                     geo->align);
            return 0;
        }
    }
    return 1;
}

/* Kernels index with int and step K by the tile depth: stay clear of
 * INT_MAX so no loop counter or tile origin can overflow. */
#define KGI_MAX_DIM (2147483647 - 4096)

int kgi_basics_ok(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t len)
{
    if (g->m < 1 || g->n < 1 || g->k < 1) {
        snprintf(why, len, "M, N and K must be at least 1 (got M=%d N=%d K=%d)", g->m, g->n, g->k);
        return 0;
    }
    if (g->m > KGI_MAX_DIM || g->n > KGI_MAX_DIM || g->k > KGI_MAX_DIM) {
        snprintf(why, len, "%s=%d exceeds %d, the largest dimension the kernels index with int",
                 g->m > KGI_MAX_DIM ? "M" : g->n > KGI_MAX_DIM ? "N" : "K",
                 g->m > KGI_MAX_DIM ? g->m : g->n > KGI_MAX_DIM ? g->n : g->k, KGI_MAX_DIM);
        return 0;
    }
    if (!g->a || !g->b || !g->c) {
        snprintf(why, len, "%s is a NULL pointer", !g->a ? "A" : !g->b ? "B" : "C");
        return 0;
    }
    int at = geo->layout[0] == 't', bt = geo->layout[1] == 't';
    const struct { const char *name; int ld, min; const char *what; } ld[] = {
        {"lda", g->lda, at ? g->m : g->k, at ? "M (A is stored K x M)" : "K (A is stored M x K)"},
        {"ldb", g->ldb, bt ? g->k : g->n, bt ? "K (B is stored N x K)" : "N (B is stored K x N)"},
        {"ldc", g->ldc, g->n, "N"}};
    for (int i = 0; i < 3; i++) {
        if (ld[i].ld < ld[i].min) {
            snprintf(why, len, "%s=%d is less than %s=%d", ld[i].name, ld[i].ld, ld[i].what, ld[i].min);
            return 0;
        }
    }
    if ((uintptr_t)g->a % 4 || (uintptr_t)g->b % 4 || (uintptr_t)g->c % 4) {
        snprintf(why, len, "%s is not aligned to a float (4 bytes)",
                 (uintptr_t)g->a % 4 ? "A" : (uintptr_t)g->b % 4 ? "B" : "C");
        return 0;
    }
    return 1;
}

/* The largest extent of dimension `dim` ('M' or 'N') one launch of `geo` can
 * cover: every grid axis that dim drives stays within its limit. A multiple
 * of the tile, so chunks keep the kernel's multiple-of-tile precondition. */
static long long chunk_extent(const kgi_geometry *geo, char dim)
{
    long long best = -1;
    for (int i = 0; i < 3; i++) {
        if (geo->grid[i].dim != dim)
            continue;
        long long e = (long long)(grid_max[i] / geo->grid[i].mul) * geo->grid[i].div;
        if (best < 0 || e < best)
            best = e;
    }
    return best < 0 ? (long long)KGI_MAX_DIM : best;
}

/* Rows [r0, r0 + rows) and columns [c0, c0 + cols) of the product: the same
 * problem on offset pointers. */
static kg_gemm sub_gemm(const kgi_geometry *geo, const kg_gemm *g, int r0, int rows, int c0, int cols)
{
    kg_gemm s = *g;
    s.m = rows;
    s.n = cols;
    s.a = g->a + (geo->layout[0] == 't' ? (size_t)r0 : (size_t)r0 * (size_t)g->lda);
    s.b = g->b + (geo->layout[1] == 't' ? (size_t)c0 * (size_t)g->ldb : (size_t)c0);
    s.c = g->c + (size_t)r0 * (size_t)g->ldc + (size_t)c0;
    return s;
}

int kgi_geometry_admits(const kgi_geometry *geo, const kg_gemm *g, char *why, size_t why_len)
{
    if (!kgi_basics_ok(geo, g, why, why_len) || !kgi_multiples_ok(geo, g, why, why_len) ||
        !kgi_vectors_ok(geo, g, why, why_len))
        return 0;
    /* A grid beyond the device's limits along M or N is launched in chunks
     * (kg_kernel_launch); each chunk must still meet the alignment rules. */
    long long em = chunk_extent(geo, 'M'), en = chunk_extent(geo, 'N');
    if (g->m > em || g->n > en) {
        kg_gemm last = sub_gemm(geo, g, g->m > em ? (int)((g->m - 1) / em * em) : 0, 1,
                                g->n > en ? (int)((g->n - 1) / en * en) : 0, 1);
        if (!kgi_vectors_ok(geo, &last, why, why_len))
            return 0;
    }
    kg_gemm first = sub_gemm(geo, g, 0, (int)(g->m < em ? g->m : em), 0, (int)(g->n < en ? g->n : en));
    unsigned grid[3];
    return kgi_grid_of(geo, &first, 1, grid, why, why_len);
}

/* ------------------------------------------------------------ loading */

/* Reads what the driver says of a loaded function and raises its dynamic
 * shared-memory limit when it needs more than the default 48 KB. */
static kg_status prepare_function(kg_context *ctx, CUfunction fn, const kgi_geometry *geo, const char *entry,
                                  int *regs, int *local, int *smem_static, int *blocks)
{
    const kgi_cu *cu = ctx->drv->cu;
    CUresult rc;
    int maxthreads = 0;
    if ((rc = cu->FuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn)) != CUDA_SUCCESS ||
        (rc = cu->FuncGetAttribute(local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn)) != CUDA_SUCCESS ||
        (rc = cu->FuncGetAttribute(smem_static, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn)) != CUDA_SUCCESS ||
        (rc = cu->FuncGetAttribute(&maxthreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)) != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuFuncGetAttribute", rc);
    int threads = (int)(geo->block[0] * geo->block[1] * geo->block[2]);
    if (threads > maxthreads)
        return kgi_fail(ctx, KG_ERR_RESOURCES, "%s: %d threads per block; with %d registers per thread the device allows %d",
                        entry, threads, *regs, maxthreads);
    size_t total = (size_t)*smem_static + geo->smem_dynamic;
    if (total > ctx->limits.smem_per_block_optin)
        return kgi_fail(ctx, KG_ERR_RESOURCES, "%s: %zu bytes of shared memory per block; the device allows %zu",
                        entry, total, ctx->limits.smem_per_block_optin);
    if (geo->smem_dynamic > ctx->limits.smem_per_block - (size_t)*smem_static &&
        (rc = cu->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)geo->smem_dynamic)) !=
            CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuFuncSetAttribute (MAX_DYNAMIC_SHARED_SIZE_BYTES)", rc);
    if ((rc = cu->OccupancyMaxActiveBlocksPerMultiprocessor(blocks, fn, threads, geo->smem_dynamic)) != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuOccupancyMaxActiveBlocksPerMultiprocessor", rc);
    if (*blocks < 1)
        return kgi_fail(ctx, KG_ERR_RESOURCES, "%s cannot run: not one block of %d threads (%d registers each, %zu bytes of shared memory) fits an SM",
                        entry, threads, *regs, total);
    return KG_OK;
}

int kgi_carveout_percent(size_t smem_per_sm, size_t reserved, int blocks, size_t smem)
{
    static const unsigned caps_kb[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
    if (smem_per_sm == 0)
        return CU_SHAREDMEM_CARVEOUT_MAX_SHARED;
    size_t need = (size_t)(blocks > 0 ? blocks : 1) * (smem + reserved), cap = smem_per_sm;
    for (size_t i = 0; i < sizeof caps_kb / sizeof *caps_kb; i++)
        if ((size_t)caps_kb[i] * 1024 >= need && (size_t)caps_kb[i] * 1024 <= smem_per_sm) {
            cap = (size_t)caps_kb[i] * 1024;
            break;
        }
    size_t pct = (100 * cap + smem_per_sm - 1) / smem_per_sm;
    return pct > 100 ? 100 : (int)pct;
}

/* Loads the module of `src` (compiling it through the caches) and fills the
 * kernel's description; the kernel is the context's from then on. */
kg_status kgi_load_kernel(kg_context *ctx, const kg_source *src, kg_kernel **out)
{
    struct kgi_kernels *ks = kgi_kernels_of(ctx);
    if (!ks)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    unsigned long long key = kgi_cache_key(src, ctx->arch);
    if ((*out = kgi_map_get(&ks->by_src, key)))
        return KG_OK;
    const void *cubin;
    size_t size;
    kg_compile_info info;
    kg_status st = kgi_cache_compile(ctx, src, ctx->arch, &cubin, &size, &info);
    if (st != KG_OK || (st = kgi_drv_enter(ctx)) != KG_OK)
        return st;
    const kgi_cu *cu = ctx->drv->cu;
    kg_kernel *k = calloc(1, sizeof *k);
    CUresult rc;
    int regs, local, sstatic, blocks, pregs, plocal, pstatic, pblocks, wblocks = 0;
    if (!k) {
        st = kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = cu->ModuleLoadData(&k->module, cubin)) != CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "cuModuleLoadData", rc);
        goto done;
    }
    if ((rc = cu->ModuleGetFunction(&k->fn, k->module, src->entry)) != CUDA_SUCCESS ||
        (src->pre_entry[0] && (rc = cu->ModuleGetFunction(&k->pre_fn, k->module, src->pre_entry)) != CUDA_SUCCESS) ||
        (src->pack_entry[0] && src->geo.pack_multiple == 4 &&
         (rc = cu->ModuleGetFunction(&k->pack_fn, k->module, src->pack_entry)) != CUDA_SUCCESS) ||
        (src->geo.ws_waves &&
         ((rc = cu->ModuleGetFunction(&k->ws_fn, k->module, src->ws_entry)) != CUDA_SUCCESS ||
          (rc = cu->ModuleGetFunction(&k->post_fn, k->module, src->post_entry)) != CUDA_SUCCESS))) {
        st = kgi_cu_fail(ctx, cu, "cuModuleGetFunction", rc);
        goto done;
    }
    k->geo = src->geo;
    k->pre_geo = src->pre_geo;
    k->post_geo = src->post_geo;
    /* sm_90's programmatic dependent launch, where the template promised it
     * and the driver has cuLaunchKernelEx; KGEN_OVERLAP=0 turns it off. */
    {
        const char *ov = getenv("KGEN_OVERLAP");
        k->overlap = k->pre_fn && src->pre_overlap && ctx->arch >= 90 && cu->LaunchKernelEx &&
                     !(ov && strcmp(ov, "0") == 0);
        /* the pre kernel too, where it waits for the kernel before it (whatever
         * the stream ran last) before it touches memory or lets fn start: its
         * launch then overlaps that kernel's end (docs/performance.md, row 79) */
        k->pre_overlap = k->overlap && src->pre_waits;
    }
    if ((st = prepare_function(ctx, k->fn, &k->geo, src->entry, &regs, &local, &sstatic, &blocks)) != KG_OK ||
        (k->pre_fn && (st = prepare_function(ctx, k->pre_fn, &k->pre_geo, src->pre_entry, &pregs, &plocal,
                                             &pstatic, &pblocks)) != KG_OK) ||
        (k->ws_fn && ((st = prepare_function(ctx, k->ws_fn, &k->geo, src->ws_entry, &pregs, &plocal, &pstatic,
                                             &wblocks)) != KG_OK ||
                      (st = prepare_function(ctx, k->post_fn, &k->post_geo, src->post_entry, &pregs, &plocal,
                                             &pstatic, &pblocks)) != KG_OK)))
        goto done;
    /* An SM runs blocks of two kernels at once only when their shared-memory
     * carveouts agree: the beta pass (no shared memory) would take the
     * L1-heavy one and keep the main kernel's blocks off its SMs, costing a
     * second wave where the grid just fits. Ask for the carveout the main
     * kernel needs at its occupancy (measured on an H200: docs/performance.md, row 24). */
    if (k->overlap &&
        (rc = cu->FuncSetAttribute(k->pre_fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                   kgi_carveout_percent(ctx->limits.smem_per_sm, ctx->limits.smem_reserved_per_block,
                                                        blocks, (size_t)sstatic + k->geo.smem_dynamic))) !=
            CUDA_SUCCESS) {
        st = kgi_cu_fail(ctx, cu, "cuFuncSetAttribute (PREFERRED_SHARED_MEMORY_CARVEOUT)", rc);
        goto done;
    }
    kg_kernel_info *ki = &k->info;
    snprintf(ki->template_name, sizeof ki->template_name, "%s", src->template_name);
    snprintf(ki->config, sizeof ki->config, "%s", src->config);
    snprintf(ki->entry, sizeof ki->entry, "%s", src->entry);
    ki->compile = info;
    ki->compile.registers = regs;
    ki->compile.smem_static = (size_t)sstatic;
    ki->compile.smem_dynamic = src->geo.smem_dynamic;
    memcpy(ki->block, src->geo.block, sizeof ki->block);
    ki->threads = (int)(ki->block[0] * ki->block[1] * ki->block[2]);
    ki->max_blocks_per_sm = blocks;
    ki->overlap = k->overlap ? 1 + k->pre_overlap : 0;
    ki->pack = k->pack_fn != NULL;
    /* A persistent grid fills every slot where the kernel can be resident;
     * its pre kernel gets the same grid, so both divide the work alike. */
    k->persist = (unsigned)(ctx->limits.ref_sm_count > 0 ? ctx->limits.ref_sm_count : 1) * (unsigned)blocks;
    k->ws_persist = (unsigned)(ctx->limits.ref_sm_count > 0 ? ctx->limits.ref_sm_count : 1) * (unsigned)wblocks;
    ki->local_bytes = (size_t)local;
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 16;
        kg_kernel **list = realloc(ks->list, cap * sizeof *list);
        if (!list) {
            st = kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
            goto done;
        }
        ks->list = list;
        ks->cap = cap;
    }
    if (kgi_map_put(&ks->by_src, key, k) != 0) {
        st = kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        goto done;
    }
    ks->list[ks->n++] = k;
    *out = k;
    k = NULL;
done:
    if (k) {
        if (k->module)
            cu->ModuleUnload(k->module);
        free(k);
    }
    kgi_drv_leave(ctx);
    return st;
}

static unsigned long long text_key(const char *tmpl, const char *config)
{
    return kgi_hash(config, strlen(config), kgi_hash(tmpl, strlen(tmpl) + 1, KGI_HASH_SEED));
}

kg_status kg_kernel_get(kg_context *ctx, const char *tmpl, const char *config, kg_kernel **out)
{
    if (!ctx || !out)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_kernel_get: `out` is NULL") : KG_ERR_INVALID_ARG;
    *out = NULL;
    if (!ctx->drv)
        return kgi_fail(ctx, KG_ERR_NO_DEVICE, "kg_kernel_get needs a context opened on a GPU");
    if (!tmpl)
        tmpl = "matmul";
    if (!config)
        config = "";
    struct kgi_kernels *ks = kgi_kernels_of(ctx);
    if (!ks)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    unsigned long long tk = text_key(tmpl, config);
    alias *a = kgi_map_get(&ks->by_text, tk);
    if (a && strcmp(a->tmpl, tmpl) == 0 && strcmp(a->config, config) == 0) {
        *out = a->kern;
        return KG_OK;
    }
    kg_source *src;
    kg_status st = kg_render(ctx, tmpl, config, &src);
    if (st != KG_OK)
        return st;
    st = kgi_load_kernel(ctx, src, out);
    kg_source_free(src);
    if (st != KG_OK)
        return st;
    alias *na = calloc(1, sizeof *na);
    if (na && (na->tmpl = strdup(tmpl)) && (na->config = strdup(config))) {
        na->kern = *out;
        if (kgi_map_put(&ks->by_text, tk, na) == 0) {
            if (a) { /* a hash collision: the newer spelling takes the slot */
                free(a->tmpl);
                free(a->config);
                free(a);
            }
            return KG_OK;
        }
    }
    if (na) {
        free(na->tmpl);
        free(na->config);
        free(na);
    }
    return KG_OK; /* the kernel is loaded; only the shortcut is missing */
}

kg_status kg_kernel_query(kg_context *ctx, const kg_kernel *k, kg_kernel_info *info)
{
    if (!ctx || !k || !info)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_kernel_query: NULL kernel or info") : KG_ERR_INVALID_ARG;
    *info = k->info;
    return KG_OK;
}

/* ------------------------------------------------------------ launch */

/* overlap: launch with programmatic stream serialization, so that fn's
 * blocks may start while the kernel before it (its pre kernel, which allows
 * it) still runs; fn waits for that kernel where it must. */
static CUresult launch_one(const kgi_cu *cu, CUfunction fn, const kgi_geometry *geo, const unsigned grid[3],
                           const kg_gemm *g, float *const *ws, CUstream stream, int overlap)
{
    int m = g->m, n = g->n, k = g->k, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    float alpha = g->alpha, beta = g->beta;
    const float *a = g->a, *b = g->b;
    float *c = g->c;
    /* ws: the workspace variant's and post kernel's last argument */
    void *args[] = {&m, &n, &k, &alpha, &a, &lda, &b, &ldb, &beta, &c, &ldc, (void *)ws};
    if (overlap) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig lc;
        memset(&lc, 0, sizeof lc);
        lc.gridDimX = grid[0], lc.gridDimY = grid[1], lc.gridDimZ = grid[2];
        lc.blockDimX = geo->block[0], lc.blockDimY = geo->block[1], lc.blockDimZ = geo->block[2];
        lc.sharedMemBytes = (unsigned)geo->smem_dynamic;
        lc.hStream = stream;
        lc.attrs = &attr;
        lc.numAttrs = 1;
        return cu->LaunchKernelEx(&lc, fn, args, NULL);
    }
    return cu->LaunchKernel(fn, grid[0], grid[1], grid[2], geo->block[0], geo->block[1], geo->block[2],
                            (unsigned)geo->smem_dynamic, stream, args, NULL);
}

/* pack = 1: does operand X (stored rows x cols with leading dimension ld)
 * need its packed copy? cont_mn: its contiguous extent is M or N, which the
 * kernel reads in whole vectors up to the next multiple of 4. */
static int needs_pack(const float *p, int ld, int cols, int cont_mn)
{
    return ld % 4 != 0 || (uintptr_t)p % 16 != 0 || (cont_mn && cols % 4 != 0);
}

int kgi_packed_operands(const kgi_geometry *geo, const kg_gemm *g)
{
    if (geo->pack_multiple != 4)
        return 0;
    int at = geo->layout[0] == 't', bt = geo->layout[1] == 't';
    return needs_pack(g->a, g->lda, at ? g->m : g->k, at) | needs_pack(g->b, g->ldb, bt ? g->k : g->n, !bt) << 1;
}

int kgi_packed_ld(const kgi_geometry *geo, int cols)
{
    int m = geo->pack_multiple > 1 ? (int)geo->pack_multiple : 1;
    return (cols + m - 1) / m * m;
}

/* Copies the operands that need it (kgi_packed_operands) into a workspace on
 * `stream`, rows padded with zeros to multiples of 4 floats, and points
 * `pg` (a copy of g) at them; *ws: the workspace to free after the launch
 * (0 when nothing was packed). Call with the driver entered. */
static kg_status pack_operands(kg_context *ctx, const kg_kernel *k, const kg_gemm *g, CUstream stream, kg_gemm *pg,
                               CUdeviceptr *ws)
{
    *pg = *g;
    *ws = 0;
    int at = k->geo.layout[0] == 't', bt = k->geo.layout[1] == 't';
    int a_rows = at ? g->k : g->m, a_cols = at ? g->m : g->k;
    int b_rows = bt ? g->n : g->k, b_cols = bt ? g->k : g->n;
    int which = kgi_packed_operands(&k->geo, g), pa = which & 1, pb = which >> 1;
    if (!pa && !pb)
        return KG_OK;
    /* cols <= KGI_MAX_DIM (kgi_basics_ok), so the rounded-up ld fits an int */
    int ldap = kgi_packed_ld(&k->geo, a_cols), ldbp = kgi_packed_ld(&k->geo, b_cols);
    size_t abytes = pa ? (size_t)a_rows * (size_t)ldap * 4 : 0, bbytes = pb ? (size_t)b_rows * (size_t)ldbp * 4 : 0;
    kg_status st = kgi_workspace_alloc(ctx, abytes + bbytes, stream, ws);
    if (st != KG_OK)
        return st;
    const float *a = pa ? g->a : NULL, *b = pb ? g->b : NULL;
    float *ap = pa ? (float *)(uintptr_t)*ws : NULL, *bp = pb ? (float *)(uintptr_t)(*ws + abytes) : NULL;
    int ar = pa ? a_rows : 0, br = pb ? b_rows : 0, lda = g->lda, ldb = g->ldb;
    void *args[] = {&a, &ar, &a_cols, &lda, &ap, &ldap, &b, &br, &b_cols, &ldb, &bp, &ldbp};
    int widest = (pa ? ldap : 0) > (pb ? ldbp : 0) ? ldap : ldbp, rows = ar > br ? ar : br;
    unsigned gx = (unsigned)((widest + 1023) / 1024), gy = (unsigned)(rows < 65535 ? rows : 65535);
    const kgi_cu *cu = ctx->drv->cu;
    CUresult rc = cu->LaunchKernel(k->pack_fn, gx, gy, 2, 256, 1, 1, 0, stream, args, NULL);
    if (rc != CUDA_SUCCESS) {
        kgi_workspace_free(ctx, *ws, stream);
        *ws = 0;
        return kgi_cu_fail(ctx, cu, "cuLaunchKernel (packing the operands)", rc);
    }
    if (pa)
        pg->a = ap, pg->lda = ldap;
    if (pb)
        pg->b = bp, pg->ldb = ldbp;
    return KG_OK;
}

/* geo.ws_waves: does a launch on `g` pass its kernels a workspace? Where
 * C's rows are not whole 16-byte vectors. */
static int needs_workspace(const kgi_geometry *geo, const kg_gemm *g)
{
    return geo->ws_waves && (g->ldc % 4 != 0 || (uintptr_t)g->c % 16 != 0);
}

/* The workspace's bytes for a launch on `g` (or a part of it). */
static size_t workspace_bytes(const kgi_geometry *geo, const kg_gemm *g, unsigned persist)
{
    unsigned long long tiles = (unsigned long long)((g->m + geo->ws_tile_m - 1) / geo->ws_tile_m) *
                               ((g->n + geo->ws_tile_n - 1) / geo->ws_tile_n),
                       most = (unsigned long long)geo->ws_waves * persist;
    return (size_t)(tiles < most ? tiles : most) * geo->ws_tile_m * geo->ws_tile_n * 4;
}

kg_status kg_kernel_launch(kg_context *ctx, const kg_kernel *k, const kg_gemm *g, void *stream)
{
    if (!ctx || !k || !g)
        return ctx ? kgi_fail(ctx, KG_ERR_INVALID_ARG, "kg_kernel_launch: NULL kernel or arguments") : KG_ERR_INVALID_ARG;
    char why[256];
    if (!kgi_geometry_admits(&k->geo, g, why, sizeof why) ||
        (k->pre_fn && !kgi_geometry_admits(&k->pre_geo, g, why, sizeof why)))
        return kgi_fail(ctx, KG_ERR_SHAPE, "%s: %s", k->info.entry, why);
    /* One launch unless M or N needs more blocks than a grid axis holds. */
    long long em = chunk_extent(&k->geo, 'M'), en = chunk_extent(&k->geo, 'N');
    if (k->pre_fn) {
        long long pm = chunk_extent(&k->pre_geo, 'M'), pn = chunk_extent(&k->pre_geo, 'N');
        em = pm < em ? pm : em;
        en = pn < en ? pn : en;
    }
    kg_status st = kgi_drv_enter(ctx);
    if (st != KG_OK)
        return st;
    const kgi_cu *cu = ctx->drv->cu;
    kg_gemm pg = *g;
    CUdeviceptr ws = 0, cws = 0;
    if (k->pack_fn && (st = pack_operands(ctx, k, g, (CUstream)stream, &pg, &ws)) != KG_OK) {
        kgi_drv_leave(ctx);
        return st;
    }
    for (long long r0 = 0; r0 < pg.m && st == KG_OK; r0 += em) {
        for (long long c0 = 0; c0 < pg.n && st == KG_OK; c0 += en) {
            int rows = (int)(pg.m - r0 < em ? pg.m - r0 : em), cols = (int)(pg.n - c0 < en ? pg.n - c0 : en);
            kg_gemm part = sub_gemm(&k->geo, &pg, (int)r0, rows, (int)c0, cols);
            /* stream-K's workspace variant (geo.ws_waves) where this part's
             * C is not 16-byte granular: the workspace zeroed, the variant
             * and the post kernel, which take it, instead of the pre and
             * main kernels */
            int use_ws = k->ws_fn && needs_workspace(&k->geo, &part);
            unsigned persist = use_ws ? k->ws_persist : k->persist;
            unsigned grid[3], pgrid[3];
            if (!kgi_grid_of(&k->geo, &part, persist, grid, why, sizeof why) ||
                (use_ws ? !kgi_grid_of(&k->post_geo, &part, persist, pgrid, why, sizeof why)
                        : k->pre_fn && !kgi_grid_of(&k->pre_geo, &part, persist, pgrid, why, sizeof why))) {
                st = kgi_fail(ctx, KG_ERR_SHAPE, "%s: %s", k->info.entry, why);
                break;
            }
            CUresult rc;
            if (use_ws) {
                size_t bytes = workspace_bytes(&k->geo, &part, persist);
                if (!cws && (st = kgi_workspace_alloc(ctx, workspace_bytes(&k->geo, &pg, persist), (CUstream)stream,
                                                      &cws)) != KG_OK)
                    break;
                float *w = (float *)(uintptr_t)cws;
                if ((rc = cu->MemsetD32Async(cws, 0, bytes / 4, (CUstream)stream)) != CUDA_SUCCESS)
                    st = kgi_cu_fail(ctx, cu, "cuMemsetD32Async (stream-K's workspace)", rc);
                else if ((rc = launch_one(cu, k->ws_fn, &k->geo, grid, &part, &w, (CUstream)stream, 0)) !=
                         CUDA_SUCCESS)
                    st = kgi_cu_fail(ctx, cu, "cuLaunchKernel (workspace variant)", rc);
                else if ((rc = launch_one(cu, k->post_fn, &k->post_geo, pgrid, &part, &w, (CUstream)stream, 0)) !=
                         CUDA_SUCCESS)
                    st = kgi_cu_fail(ctx, cu, "cuLaunchKernel (post kernel)", rc);
                continue;
            }
            if (k->pre_fn && (rc = launch_one(cu, k->pre_fn, &k->pre_geo, pgrid, &part, NULL, (CUstream)stream,
                                              k->pre_overlap)) != CUDA_SUCCESS)
                st = kgi_cu_fail(ctx, cu, k->pre_overlap ? "cuLaunchKernelEx (pre kernel)" : "cuLaunchKernel (pre kernel)",
                                 rc);
            else if ((rc = launch_one(cu, k->fn, &k->geo, grid, &part, NULL, (CUstream)stream, k->overlap)) !=
                     CUDA_SUCCESS)
                st = kgi_cu_fail(ctx, cu, k->overlap ? "cuLaunchKernelEx" : "cuLaunchKernel", rc);
        }
    }
    /* stream-ordered: the memory returns to the pool once the kernels
     * queued before this on `stream` are done with it */
    kgi_workspace_free(ctx, cws, (CUstream)stream);
    kgi_workspace_free(ctx, ws, (CUstream)stream);
    kgi_drv_leave(ctx);
    return st;
}
