/*
 * testutil.h -- a few macros for kgen's C tests. A failed CHECK prints the
 * file, line and expression and counts; tests end with TEST_DONE(), which
 * prints "N passed, M failed" and exits non-zero on any failure.
 * TEST_SKIP(why) exits 77, which CTest (SKIP_RETURN_CODE 77) shows as skipped.
 */
#ifndef KGEN_TESTUTIL_H
#define KGEN_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>

static int test_passed, test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define TEST_SKIP(...)                                                                             \
    do {                                                                                           \
        printf("SKIPPED: ");                                                                       \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        exit(77);                                                                                  \
    } while (0)

#define TEST_DONE()                                                                                \
    do {                                                                                           \
        printf("%d passed, %d failed\n", test_passed, test_failed);                                \
        return (test_failed || !test_passed) ? 1 : 0;                                              \
    } while (0)

#endif
