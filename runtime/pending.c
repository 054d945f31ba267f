/* TEMPORARY placeholders: each engineer deletes a function from here when the real one exists (driver.c, cache.c, launch.c, autotune/db.c). This file must be gone before the work lands. */
#include "runtime.h"
kg_status kgi_driver_open(kg_context *ctx, int device) { (void)device; return kgi_fail(ctx, KG_ERR_NO_DRIVER, "not yet"); }
void kgi_driver_close(kg_context *ctx) { (void)ctx; }
kg_status kgi_cache_open(kg_context *ctx) { (void)ctx; return KG_OK; }
void kgi_cache_close(kg_context *ctx) { (void)ctx; }
void kgi_kernels_free(kg_context *ctx) { (void)ctx; }
void kgi_tunedb_close(kg_context *ctx) { (void)ctx; }
kg_status kgi_tunedb_lookup(kg_context *ctx, const char *layout, int m, int n, int k, char *tmpl,
                            size_t tmpl_len, char *config, size_t config_len, char *why, size_t why_len)
{ (void)ctx; (void)layout; (void)m; (void)n; (void)k; (void)tmpl; (void)tmpl_len; (void)config; (void)config_len; (void)why; (void)why_len; return KG_ERR_DB; }
