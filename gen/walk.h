/*
 * walk.h -- a template prepared for walking its search space quickly
 * (autotune/space.c): each parameter's values converted once, one
 * configuration table updated in place, and check() called on a proxy of it
 * that records which parameters check() read before its verdict.
 *
 * check() is a pure function of (cfg, limits), so a rejection that read the
 * parameters R rejects every configuration that agrees with this one on R:
 * the space walk skips them all with one call; a pass likewise holds for
 * every configuration that agrees on R, and a resources() call that read
 * the parameters S gives the same resources for every configuration that
 * agrees on S. The proxy's __pairs counts as
 * reading every parameter, and a write into cfg (kept for that call only)
 * also reads everything: sound, only less pruning. (A check() that changed
 * a parameter's value would make the host's canonical text differ from the
 * walked one: templates must not.) rawget and next() on cfg see an empty
 * table. The rules themselves stay in check(), the one place.
 */
#ifndef KGEN_GEN_WALK_H
#define KGEN_GEN_WALK_H

#include <stdint.h>

#include "gen/host.h"

#define KGI_WALK_MAX_PARAMS 64

typedef struct kgi_walk kgi_walk;

/* Loads template `tmpl` for a walk against `lim`; parameters start at their
 * defaults. Its names, values and space come from the host's functions
 * (gen/host.h); the walk only converts, sets and checks. The walk owns
 * references in h's Lua state: close it before freeing h. */
kg_status kgi_walk_open(kgi_host *h, const char *tmpl, const kgi_limits *lim, kgi_walk **out, char *err,
                        size_t errlen);
void kgi_walk_close(kgi_walk *w);

/* Adds `text` as a value of parameter p (declaration order; converted as in
 * a configuration: errors name the parameter); returns its slot (>= 0) and
 * the value's canonical text in canon, or -1 with err. */
int kgi_walk_add_value(kgi_walk *w, int p, const char *text, char *canon, size_t canon_len, char *err,
                       size_t errlen);
/* Sets parameter p of the current configuration to the value of `slot`. */
void kgi_walk_set(kgi_walk *w, int p, int slot);

/* check() on the current configuration: 1 valid, 0 rejected (why holds its
 * reason), -1 when the template raised an error (why says where). *reads
 * gets bit p for every parameter p check() read. With a pass and res not
 * NULL, resources() runs in the same call and *res gets what it says, read
 * as kgi_host_resources reads it (the configuration's layout and pad
 * included); *reads then also holds what resources() read. */
int kgi_walk_check(kgi_walk *w, uint64_t *reads, kgi_resources *res, char *why, size_t whylen);
/* resources() alone on the current configuration (one that check() passed):
 * 0 with *res and *reads (what resources() and the reading of its layout
 * and pad read), -1 when the template raised an error (why says where). */
int kgi_walk_resources(kgi_walk *w, uint64_t *reads, kgi_resources *res, char *why, size_t whylen);
/* The parameters the last kgi_walk_check or kgi_walk_resources read, in the
 * order first read (*seq), and their count; -1 when it read all at once
 * (pairs(cfg), a write into cfg), so that no order holds. */
int kgi_walk_read_order(const kgi_walk *w, const unsigned char **seq);

#endif
