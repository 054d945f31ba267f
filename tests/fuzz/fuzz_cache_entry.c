/*
 * fuzz_cache_entry.c -- the disk cache's entry reader (runtime/cache.c) on
 * any bytes. The key and the source hash it is checked against are taken
 * from the bytes themselves, so that inputs get past those two checks.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "runtime/cache.h"

static unsigned long long le64(const uint8_t *p)
{
    unsigned long long v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned long long key = size >= 32 ? le64(data + 16) : 0, check = size >= 32 ? le64(data + 24) : 0;
    kg_compile_info info;
    if (kgi_cache_entry_parse(data, size, key, check, &info) == 0 && info.cubin_size != size - 128)
        abort();
    return 0;
}
