/*
 * driver.h -- the CUDA driver API as libkgen's runtime modules see it.
 *
 * libcuda.so.1 is opened with dlopen (driver.c), never linked, so every
 * binary starts on a machine without a GPU. cuda.h supplies the types only;
 * each entry point is a function pointer resolved by its exact, versioned
 * symbol name, so the header's macros (cuMemAlloc -> cuMemAlloc_v2) play no
 * part. Private to runtime/: launch.c, device.c, verify.c and timing.c use it.
 */
#ifndef KGEN_DRIVER_H
#define KGEN_DRIVER_H

#include <cuda.h>

#include "internal.h"

/* The driver's entry points, resolved once per process. */
typedef struct kgi_cu {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorName)(CUresult err, const char **str);
    CUresult (*GetErrorString)(CUresult err, const char **str);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    CUresult (*CtxPushCurrent)(CUcontext ctx);
    CUresult (*CtxPopCurrent)(CUcontext *ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemAlloc)(CUdeviceptr *dptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr dptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemsetD32)(CUdeviceptr dst, unsigned int value, size_t count);
    CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream);
    CUresult (*ModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction fn);
    CUresult (*FuncSetAttribute)(CUfunction fn, CUfunction_attribute attr, int value);
    CUresult (*LaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned smem, CUstream stream, void **params, void **extra);
    /* optional (CUDA 12.0+ drivers): NULL when the driver lacks it */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *config, CUfunction fn, void **params, void **extra);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction fn, int block_size,
                                                          size_t dynamic_smem);
    CUresult (*EventCreate)(CUevent *ev, unsigned int flags);
    CUresult (*EventDestroy)(CUevent ev);
    CUresult (*EventRecord)(CUevent ev, CUstream stream);
    CUresult (*EventSynchronize)(CUevent ev);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*StreamSynchronize)(CUstream stream);
    /* optional (CUDA 11.2+ drivers, stream-ordered allocation; pack = 1's
     * workspace): NULL when the driver lacks them */
    CUresult (*MemPoolCreate)(CUmemoryPool *pool, const CUmemPoolProps *props);
    CUresult (*MemPoolDestroy)(CUmemoryPool pool);
    CUresult (*MemPoolSetAttribute)(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
    CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream stream);
    CUresult (*MemFreeAsync)(CUdeviceptr dptr, CUstream stream);
} kgi_cu;

/* A context's hold on its device. */
struct kgi_driver {
    const kgi_cu *cu;
    CUdevice dev;
    CUcontext primary;   /* the device's primary context, retained */
    int depth;           /* nesting of kgi_drv_enter */
    int pushed;          /* the outermost enter pushed `primary`; the last leave pops it */
    CUmemoryPool pool;   /* workspaces (packed operands), created on first use; NULL before */
};

/* Loads libcuda.so.1 (once per process) and runs cuInit. On failure sets the
 * context's error (KG_ERR_NO_DRIVER or KG_ERR_DRIVER). */
kg_status kgi_cu_load(kg_context *ctx, const kgi_cu **out);
/* Loads the driver and checks that device ordinal `device` exists. */
kg_status kgi_cu_for_device(kg_context *ctx, int device, const kgi_cu **cu);

/* Sets the last error to "cuXxx: CUDA_ERROR_NAME (description)" and returns
 * KG_ERR_DRIVER. */
kg_status kgi_cu_fail(kg_context *ctx, const kgi_cu *cu, const char *call, CUresult rc);

/* Makes the context's primary context current for the calls that follow
 * (pushing it only when another one is current); kgi_drv_leave undoes it.
 * KG_ERR_NO_DEVICE when the context has no device. */
kg_status kgi_drv_enter(kg_context *ctx);
void kgi_drv_leave(kg_context *ctx);

/* A workspace of `bytes` on `stream`, stream-ordered from the context's own
 * memory pool (which keeps what it once held until the context closes, so
 * repeated calls allocate nothing new): usable by work queued on `stream`
 * after this call; give it back with kgi_workspace_free on the same stream
 * after that work. KG_ERR_DRIVER naming the size, or the missing entry point
 * of a driver older than CUDA 11.2. */
kg_status kgi_workspace_alloc(kg_context *ctx, size_t bytes, CUstream stream, CUdeviceptr *out);
void kgi_workspace_free(kg_context *ctx, CUdeviceptr p, CUstream stream);

/* device.c: reads the attributes of device `ordinal` into `info`. */
kg_status kgi_cu_device_info(kg_context *ctx, const kgi_cu *cu, int ordinal, kg_device_info *info);

#endif
