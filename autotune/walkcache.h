/*
 * walkcache.h -- the space walk's result kept in the disk cache of compiled
 * kernels (runtime/cache.c: the same directory and rules), so that a second
 * run over the same space reads it instead of walking again.
 *
 * An entry holds what kgi_space_add_template leaves (before
 * kgi_space_finalize and kgi_space_shard): the templates' parameters and
 * values, every candidate with what resources() said, the kept rejected
 * subtrees and the counts. Its key is a hash of everything the walk
 * depends on: the templates in order, the text of every Lua module loaded
 * to run them (gen/host.h's kgi_host_modules_hash: a changed template or
 * library file is a new key), the device limits check() sees, the fixed
 * parameters (layout), --space, the kgen version and this file's format.
 * A damaged, truncated or malformed entry is a miss (and deleted by the
 * cache), never an error.
 */
#ifndef KGEN_AUTOTUNE_WALKCACHE_H
#define KGEN_AUTOTUNE_WALKCACHE_H

#include "autotune/space.h"

/* The key of walking `tmpls` (loaded into h: call after loading them, e.g.
 * with kgi_host_template_info) with `fixed` and `override` against lim. */
unsigned long long kgi_walkcache_key(kgi_host *h, const char *const *tmpls, int ntmpl, const char *fixed,
                                     const char *override, const kgi_limits *lim);
/* 1 and sp (empty before) filled from the entry of `key`; 0 on a miss
 * (sp left empty). */
int kgi_walkcache_load(kg_context *ctx, unsigned long long key, kgi_space *sp);
/* Stores sp (a whole walk) under `key`; trouble is ignored (the cache's
 * why says it). */
void kgi_walkcache_store(kg_context *ctx, unsigned long long key, const kgi_space *sp);

/* The entry's data, for tests: kgi_walkcache_encode returns a malloc'd
 * buffer (NULL: out of memory); kgi_walkcache_decode 0 with sp filled,
 * -1 when the data is malformed (sp left empty). */
unsigned char *kgi_walkcache_encode(const kgi_space *sp, size_t *len);
int kgi_walkcache_decode(const unsigned char *data, size_t len, kgi_space *sp);

#endif
