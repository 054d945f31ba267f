/*
 * driver.c -- the CUDA driver, opened with dlopen, and device memory.
 *
 * libcuda.so.1 is loaded the first time any context needs it and stays
 * loaded for the life of the process: the driver starts threads and
 * registers exit handlers at cuInit, so unloading it under a running process
 * is not safe, and a second dlopen costs nothing. Every entry point is
 * resolved by its exact symbol (the _v2 names where the ABI changed), and a
 * missing one is a clear error rather than a crash at the first call.
 *
 * A device context holds the device's primary context (the one the CUDA
 * runtime uses), so a program that allocates with cudaMalloc and calls
 * kg_matmul shares one context with libkgen. It is made current around each
 * libkgen call (kgi_drv_enter/leave) only when another context is current:
 * in the common case that costs one cuCtxGetCurrent.
 *
 * Environment: KGEN_CUDA_DRIVER names another driver library to open
 * instead of libcuda.so.1 (tests use a missing one to exercise the
 * no-driver path on a GPU machine).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "runtime.h"

static struct {
    pthread_once_t once;
    kgi_cu cu;
    kg_status status;       /* of loading and cuInit */
    CUresult init_rc;
    char error[512];
} lib = {.once = PTHREAD_ONCE_INIT};

/* Resolves every entry point; fills lib.error and returns 0 on the first
 * symbol the library lacks (a driver older than the toolkit's minimum). */
static int resolve(void *h)
{
    static const struct { const char *name; size_t offset; } syms[] = {
#define SYM(field, name) {name, offsetof(kgi_cu, field)}
        SYM(Init, "cuInit"),
        SYM(DriverGetVersion, "cuDriverGetVersion"),
        SYM(GetErrorName, "cuGetErrorName"),
        SYM(GetErrorString, "cuGetErrorString"),
        SYM(DeviceGetCount, "cuDeviceGetCount"),
        SYM(DeviceGet, "cuDeviceGet"),
        SYM(DeviceGetName, "cuDeviceGetName"),
        SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
        SYM(DeviceTotalMem, "cuDeviceTotalMem_v2"),
        SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
        SYM(CtxGetCurrent, "cuCtxGetCurrent"),
        SYM(CtxPushCurrent, "cuCtxPushCurrent_v2"),
        SYM(CtxPopCurrent, "cuCtxPopCurrent_v2"),
        SYM(CtxSynchronize, "cuCtxSynchronize"),
        SYM(MemAlloc, "cuMemAlloc_v2"),
        SYM(MemFree, "cuMemFree_v2"),
        SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"),
        SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"),
        SYM(MemcpyDtoD, "cuMemcpyDtoD_v2"),
        SYM(MemsetD32, "cuMemsetD32_v2"),
        SYM(MemsetD32Async, "cuMemsetD32Async"),
        SYM(ModuleLoadData, "cuModuleLoadData"),
        SYM(ModuleUnload, "cuModuleUnload"),
        SYM(ModuleGetFunction, "cuModuleGetFunction"),
        SYM(FuncGetAttribute, "cuFuncGetAttribute"),
        SYM(FuncSetAttribute, "cuFuncSetAttribute"),
        SYM(LaunchKernel, "cuLaunchKernel"),
        SYM(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
        SYM(EventCreate, "cuEventCreate"),
        SYM(EventDestroy, "cuEventDestroy_v2"),
        SYM(EventRecord, "cuEventRecord"),
        SYM(EventSynchronize, "cuEventSynchronize"),
        /* the original (v1) symbol: every driver has it, _v2 only 12.8+ */
        SYM(EventElapsedTime, "cuEventElapsedTime"),
        SYM(StreamSynchronize, "cuStreamSynchronize"),
#undef SYM
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(lib.error, sizeof lib.error,
                     "the CUDA driver library lacks %s (driver too old for kgen?)", syms[i].name);
            return 0;
        }
        /* POSIX guarantees object and function pointers convert both ways. */
        memcpy((char *)&lib.cu + syms[i].offset, &p, sizeof p);
    }
    /* Optional: programmatic dependent launch (launch.c) falls back to plain
     * launches without it. */
    void *p = dlsym(h, "cuLaunchKernelEx");
    memcpy(&lib.cu.LaunchKernelEx, &p, sizeof p);
    /* Optional: stream-ordered allocation, for pack = 1 kernels' workspace
     * (kgi_workspace_alloc says which is missing when it is needed). */
    static const struct { const char *name; size_t offset; } opt[] = {
        {"cuMemPoolCreate", offsetof(kgi_cu, MemPoolCreate)},
        {"cuMemPoolDestroy", offsetof(kgi_cu, MemPoolDestroy)},
        {"cuMemPoolSetAttribute", offsetof(kgi_cu, MemPoolSetAttribute)},
        {"cuMemAllocFromPoolAsync", offsetof(kgi_cu, MemAllocFromPoolAsync)},
        {"cuMemFreeAsync", offsetof(kgi_cu, MemFreeAsync)},
    };
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++) {
        p = dlsym(h, opt[i].name);
        memcpy((char *)&lib.cu + opt[i].offset, &p, sizeof p);
    }
    return 1;
}

static void load_once(void)
{
    const char *name = getenv("KGEN_CUDA_DRIVER");
    if (!name || !name[0])
        name = "libcuda.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(lib.error, sizeof lib.error,
                 "cannot load the CUDA driver %s: %s; no NVIDIA driver on this machine? "
                 "(rendering, and compiling for a chosen architecture, still work without one)",
                 name, why ? why : "not found");
        lib.status = KG_ERR_NO_DRIVER;
        return;
    }
    if (!resolve(h)) {
        dlclose(h);
        lib.status = KG_ERR_NO_DRIVER;
        return;
    }
    lib.init_rc = lib.cu.Init(0);
    if (lib.init_rc != CUDA_SUCCESS) {
        const char *ename = NULL, *estr = NULL;
        lib.cu.GetErrorName(lib.init_rc, &ename);
        lib.cu.GetErrorString(lib.init_rc, &estr);
        snprintf(lib.error, sizeof lib.error, "cuInit: %s (%s)", ename ? ename : "unknown error",
                 estr ? estr : "no description");
        lib.status = lib.init_rc == CUDA_ERROR_NO_DEVICE ? KG_ERR_NO_DEVICE : KG_ERR_DRIVER;
        return;
    }
    lib.status = KG_OK;
}

kg_status kgi_cu_load(kg_context *ctx, const kgi_cu **out)
{
    pthread_once(&lib.once, load_once);
    if (lib.status != KG_OK)
        return kgi_fail(ctx, lib.status, "%s", lib.error);
    *out = &lib.cu;
    return KG_OK;
}

kg_status kgi_cu_fail(kg_context *ctx, const kgi_cu *cu, const char *call, CUresult rc)
{
    const char *name = NULL, *desc = NULL;
    if (cu->GetErrorName(rc, &name) != CUDA_SUCCESS)
        name = NULL;
    if (cu->GetErrorString(rc, &desc) != CUDA_SUCCESS)
        desc = NULL;
    if (!name)
        return kgi_fail(ctx, KG_ERR_DRIVER, "%s: CUDA error %d", call, (int)rc);
    return kgi_fail(ctx, KG_ERR_DRIVER, "%s: %s (%s)", call, name, desc ? desc : "no description");
}

kg_status kgi_drv_enter(kg_context *ctx)
{
    struct kgi_driver *d = ctx->drv;
    if (!d)
        return kgi_fail(ctx, KG_ERR_NO_DEVICE, "the context has no GPU (opened with KG_DEVICE_NONE)");
    if (d->depth++ > 0)
        return KG_OK;
    CUcontext cur = NULL;
    CUresult rc = d->cu->CtxGetCurrent(&cur);
    d->pushed = 0;
    if (rc == CUDA_SUCCESS && cur == d->primary)
        return KG_OK;
    if ((rc = d->cu->CtxPushCurrent(d->primary)) != CUDA_SUCCESS) {
        d->depth--;
        return kgi_cu_fail(ctx, d->cu, "cuCtxPushCurrent", rc);
    }
    d->pushed = 1;
    return KG_OK;
}

void kgi_drv_leave(kg_context *ctx)
{
    struct kgi_driver *d = ctx->drv;
    if (!d || d->depth == 0 || --d->depth > 0)
        return;
    if (d->pushed) {
        CUcontext popped;
        d->cu->CtxPopCurrent(&popped);
        d->pushed = 0;
    }
}

kg_status kgi_cu_for_device(kg_context *ctx, int device, const kgi_cu **out)
{
    const kgi_cu *cu;
    kg_status st = kgi_cu_load(ctx, &cu);
    if (st != KG_OK)
        return st;
    int count = 0;
    CUresult rc = cu->DeviceGetCount(&count);
    if (rc != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuDeviceGetCount", rc);
    if (device < 0 || device >= count)
        return kgi_fail(ctx, KG_ERR_NO_DEVICE, "no CUDA device %d: this machine has %d (ordinals 0..%d)",
                        device, count, count - 1);
    *out = cu;
    return KG_OK;
}

kg_status kgi_driver_open(kg_context *ctx, int device)
{
    const kgi_cu *cu;
    kg_status st = kgi_cu_for_device(ctx, device, &cu);
    if (st != KG_OK)
        return st;
    CUresult rc;
    kg_device_info info;
    if ((st = kgi_cu_device_info(ctx, cu, device, &info)) != KG_OK)
        return st;
    struct kgi_driver *d = calloc(1, sizeof *d);
    if (!d)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    d->cu = cu;
    if ((rc = cu->DeviceGet(&d->dev, device)) != CUDA_SUCCESS) {
        free(d);
        return kgi_cu_fail(ctx, cu, "cuDeviceGet", rc);
    }
    if ((rc = cu->DevicePrimaryCtxRetain(&d->primary, d->dev)) != CUDA_SUCCESS) {
        free(d);
        return kgi_cu_fail(ctx, cu, "cuDevicePrimaryCtxRetain", rc);
    }
    ctx->drv = d;
    ctx->device = device;
    ctx->arch = info.cc_major * 10 + info.cc_minor;
    kgi_limits_from_device(&info, &ctx->limits);
    return KG_OK;
}

void kgi_driver_close(kg_context *ctx)
{
    struct kgi_driver *d = ctx->drv;
    if (!d)
        return;
    /* Outstanding frees complete first; the driver releases the rest then. */
    if (d->pool)
        d->cu->MemPoolDestroy(d->pool);
    d->cu->DevicePrimaryCtxRelease(d->dev);
    free(d);
    ctx->drv = NULL;
}

/* ------------------------------------------------------------ device memory */

kg_status kgi_workspace_alloc(kg_context *ctx, size_t bytes, CUstream stream, CUdeviceptr *out)
{
    *out = 0;
    kg_status st = kgi_drv_enter(ctx);
    if (st != KG_OK)
        return st;
    struct kgi_driver *d = ctx->drv;
    const kgi_cu *cu = d->cu;
    const char *missing = !cu->MemPoolCreate ? "cuMemPoolCreate" : !cu->MemPoolDestroy ? "cuMemPoolDestroy"
                          : !cu->MemPoolSetAttribute ? "cuMemPoolSetAttribute"
                          : !cu->MemAllocFromPoolAsync ? "cuMemAllocFromPoolAsync"
                          : !cu->MemFreeAsync ? "cuMemFreeAsync" : NULL;
    if (missing) {
        kgi_drv_leave(ctx);
        return kgi_fail(ctx, KG_ERR_DRIVER,
                        "the CUDA driver lacks %s (stream-ordered allocation, CUDA 11.2+), which the workspace "
                        "of a pack=1 or skw=1 kernel needs; use pack=0 and skw=0", missing);
    }
    CUresult rc = CUDA_SUCCESS;
    if (!d->pool) {
        CUmemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = (int)d->dev;
        CUmemoryPool pool;
        if ((rc = cu->MemPoolCreate(&pool, &props)) != CUDA_SUCCESS) {
            kgi_drv_leave(ctx);
            return kgi_cu_fail(ctx, cu, "cuMemPoolCreate", rc);
        }
        /* keep freed memory for the next call instead of returning it to
         * the device at every synchronization */
        cuuint64_t keep = ~(cuuint64_t)0;
        if ((rc = cu->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep)) != CUDA_SUCCESS) {
            cu->MemPoolDestroy(pool);
            kgi_drv_leave(ctx);
            return kgi_cu_fail(ctx, cu, "cuMemPoolSetAttribute (RELEASE_THRESHOLD)", rc);
        }
        d->pool = pool;
    }
    rc = cu->MemAllocFromPoolAsync(out, bytes ? bytes : 16, d->pool, stream);
    kgi_drv_leave(ctx);
    if (rc != CUDA_SUCCESS) {
        *out = 0;
        char call[96];
        snprintf(call, sizeof call, "cuMemAllocFromPoolAsync of a %zu-byte workspace", bytes);
        return kgi_cu_fail(ctx, cu, call, rc);
    }
    return KG_OK;
}

void kgi_workspace_free(kg_context *ctx, CUdeviceptr p, CUstream stream)
{
    if (!p || kgi_drv_enter(ctx) != KG_OK)
        return;
    ctx->drv->cu->MemFreeAsync(p, stream);
    kgi_drv_leave(ctx);
}

/* Runs one driver call with the context current; names it on failure. */
#define DEV_CALL(ctx, name, expr)                                                                  \
    do {                                                                                           \
        kg_status st_ = kgi_drv_enter(ctx);                                                        \
        if (st_ != KG_OK)                                                                          \
            return st_;                                                                            \
        const kgi_cu *cu = (ctx)->drv->cu;                                                         \
        CUresult rc_ = (expr);                                                                     \
        kgi_drv_leave(ctx);                                                                        \
        if (rc_ != CUDA_SUCCESS)                                                                   \
            return kgi_cu_fail(ctx, cu, name, rc_);                                                \
        return KG_OK;                                                                              \
    } while (0)

kg_status kgi_dev_alloc(kg_context *ctx, size_t bytes, void **dptr)
{
    CUdeviceptr p = 0;
    *dptr = NULL;
    kg_status st = kgi_drv_enter(ctx);
    if (st != KG_OK)
        return st;
    CUresult rc = ctx->drv->cu->MemAlloc(&p, bytes ? bytes : 4);
    kgi_drv_leave(ctx);
    if (rc != CUDA_SUCCESS) {
        char call[64];
        snprintf(call, sizeof call, "cuMemAlloc of %zu bytes", bytes);
        return kgi_cu_fail(ctx, ctx->drv->cu, call, rc);
    }
    *dptr = (void *)(uintptr_t)p;
    return KG_OK;
}

void kgi_dev_free(kg_context *ctx, void *dptr)
{
    if (!dptr || kgi_drv_enter(ctx) != KG_OK)
        return;
    ctx->drv->cu->MemFree((CUdeviceptr)(uintptr_t)dptr);
    kgi_drv_leave(ctx);
}

kg_status kgi_dev_upload(kg_context *ctx, void *dst, const void *src, size_t bytes)
{
    DEV_CALL(ctx, "cuMemcpyHtoD", cu->MemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes));
}

kg_status kgi_dev_download(kg_context *ctx, void *dst, const void *src, size_t bytes)
{
    DEV_CALL(ctx, "cuMemcpyDtoH", cu->MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes));
}

kg_status kgi_dev_copy(kg_context *ctx, void *dst, const void *src, size_t bytes)
{
    DEV_CALL(ctx, "cuMemcpyDtoD",
             cu->MemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes));
}

kg_status kgi_dev_fill32(kg_context *ctx, void *dst, unsigned value, size_t count)
{
    DEV_CALL(ctx, "cuMemsetD32", cu->MemsetD32((CUdeviceptr)(uintptr_t)dst, value, count));
}

kg_status kgi_dev_sync(kg_context *ctx)
{
    DEV_CALL(ctx, "cuCtxSynchronize", cu->CtxSynchronize());
}

kg_status kgi_driver_version(kg_context *ctx, int *version)
{
    const kgi_cu *cu;
    *version = 0;
    kg_status st = kgi_cu_load(ctx, &cu);
    if (st != KG_OK && st != KG_ERR_NO_DEVICE)
        return st;
    if (st == KG_ERR_NO_DEVICE)
        cu = &lib.cu; /* loaded; only cuInit found no device */
    CUresult rc = cu->DriverGetVersion(version);
    return rc == CUDA_SUCCESS ? KG_OK : kgi_cu_fail(ctx, cu, "cuDriverGetVersion", rc);
}
