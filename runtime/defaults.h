/*
 * defaults.h -- kg_matmul's built-in choice, where the tuning database has
 * no entry: per architecture, a large, a medium and a small tile of one
 * template, and the rules that pick one for a shape and set split-K,
 * stream-K and packed operands (runtime/defaults.c).
 */
#ifndef KGEN_DEFAULTS_H
#define KGEN_DEFAULTS_H

#include "gen/config.h"
#include "kgen.h"

typedef struct kgi_default {
    char tmpl[64];
    kgi_config config; /* for the call, layout included; only what differs from the template's defaults */
    char table[96];    /* which entry: "table row sm_90, large tile 128x256" */
    char notes[512];   /* the rules that changed it, each "; <what>: <why>" ("" when none) */
} kgi_default;

/*
 * The built-in configuration for `g` in `layout` on sm_`arch` (the table's
 * row for it, or for the newest older architecture) with `sms` SMs;
 * `align` is the call's alignment class (4, 2 or 1: the widest vector, in
 * floats, that lda, ldb, A and B all allow). The caller still adapts it to
 * the call (bounds=1, vec=1) where the rendered kernel's preconditions
 * need it. 0, or -1 with the reason in err (a malformed table entry).
 */
int kgi_default_choose(int arch, int sms, const char *layout, const kg_gemm *g, int align, kgi_default *out,
                       char *err, size_t errlen);

#endif /* KGEN_DEFAULTS_H */
