/*
 * cache.h -- compiled kernels kept in memory and on disk, and the small
 * hash map the runtime's lookups share. Private to runtime/.
 */
#ifndef KGEN_CACHE_H
#define KGEN_CACHE_H

#include "internal.h"

/* Bumped whenever the on-disk entry or the key's inputs change meaning. */
#define KGI_CACHE_FORMAT 1

/* The key of `src` compiled for sm_`arch`: a hash of the source, the NVRTC
 * options, NVRTC's version, the architecture and KGI_CACHE_FORMAT. */
unsigned long long kgi_cache_key(const kg_source *src, int arch);

/* The CUBIN of `src` for sm_`arch`: from the context's memory cache, else
 * the disk cache, else NVRTC (then stored in both). *cubin points into the
 * memory cache and stays valid until the context closes. info->cache says
 * where it came from (0 compiled, 1 memory, 2 disk). */
kg_status kgi_cache_compile(kg_context *ctx, const kg_source *src, int arch, const void **cubin,
                            size_t *size, kg_compile_info *info);

/* Checks a whole cache file in buf (header and payload) against the entry
 * for key (and the source's second hash, check); 0 and *info filled from
 * the header (cubin_size: the payload's size, after the 128-byte header),
 * or -1 when any check fails. */
int kgi_cache_entry_parse(const unsigned char *buf, size_t len, unsigned long long key, unsigned long long check,
                          kg_compile_info *info);

/* An open-addressing map from non-zero 64-bit keys to pointers. */
typedef struct kgi_map {
    unsigned long long *keys;
    void **vals;
    size_t cap, count;
} kgi_map;

void *kgi_map_get(const kgi_map *m, unsigned long long key);
/* Inserts or replaces; 0 on success, -1 out of memory. */
int kgi_map_put(kgi_map *m, unsigned long long key, void *val);
void kgi_map_free(kgi_map *m);

#endif
