/* TEMPORARY: placeholders until driver.c, cache.c, launch.c land. Not to be committed to main. */
#include "runtime.h"
kg_status kgi_driver_open(kg_context *ctx, int device) { (void)device; return kgi_fail(ctx, KG_ERR_NO_DRIVER, "not yet"); }
void kgi_driver_close(kg_context *ctx) { (void)ctx; }
kg_status kgi_cache_open(kg_context *ctx) { (void)ctx; return KG_OK; }
void kgi_cache_close(kg_context *ctx) { (void)ctx; }
void kgi_kernels_free(kg_context *ctx) { (void)ctx; }
void kgi_tunedb_close(kg_context *ctx) { (void)ctx; }
