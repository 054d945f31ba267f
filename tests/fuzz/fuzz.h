/*
 * fuzz.h -- the libFuzzer entry point that every harness here defines. The
 * same harness runs under libFuzzer (scripts/fuzz.sh, clang) and, in every
 * build, under replay.c over its committed corpus and past crashes.
 */
#ifndef KGEN_FUZZ_H
#define KGEN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
