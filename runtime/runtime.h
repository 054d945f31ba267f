/*
 * runtime.h -- lifecycle hooks between the runtime's modules and the context.
 * Each is safe to call on a context whose subsystem was never opened.
 */
#ifndef KGEN_RUNTIME_H
#define KGEN_RUNTIME_H

#include "internal.h"

/* driver.c: opens libcuda.so.1, the device's primary context, reads limits. */
kg_status kgi_driver_open(kg_context *ctx, int device);
void kgi_driver_close(kg_context *ctx);

/* cache.c: the in-memory and on-disk kernel caches. */
kg_status kgi_cache_open(kg_context *ctx);
void kgi_cache_close(kg_context *ctx);

/* launch.c: kernels loaded on the device, and kg_matmul's per-shape choices. */
void kgi_kernels_free(kg_context *ctx);

/* catalogue.c: the catalogues parsed for kg_matmul. */
void kgi_catalogues_close(kg_context *ctx);

#endif
