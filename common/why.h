/*
 * why.h -- reading the reason kg_matmul_explain gives (runtime/matmul.c,
 * with_template): it begins "[template T] " where the configuration's
 * template T is not matmul. Shared by kgen choice (cli/) and kgen-bench
 * (bench/), so that the format is read in one place.
 *
 * Prefix kgwhy_. The C library only.
 */
#ifndef KGEN_WHY_H
#define KGEN_WHY_H

#include <stddef.h>

/* The template the reason names into tmpl (len bytes; "matmul" where it
 * names none), and the reason after that prefix. */
const char *kgwhy_template(const char *why, char *tmpl, size_t len);

#endif
