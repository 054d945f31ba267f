/*
 * memo.h -- results of a pure function of a configuration, kept by what the
 * function read: the space walk's memo of resources() (space.c).
 *
 * A function of the configuration that reads parameters one by one (the
 * walk records which, in order: gen/walk.h) reads its first parameter
 * whatever the configuration, its second depending only on the first's
 * value, and so on: its reads form a decision tree, and its result is a
 * leaf. The memo is that tree, grown from the calls made: a configuration
 * whose values lead to a leaf gets the leaf's result without a call. A
 * call whose order of reads contradicts the tree (a function that is not
 * deterministic in its reads, such as one with a cache that changes what
 * it reads) is not stored: lookups stay sound, the memo only helps less.
 */
#ifndef KGEN_AUTOTUNE_MEMO_H
#define KGEN_AUTOTUNE_MEMO_H

typedef struct kgi_memo kgi_memo;

/* A memo over nparams parameters, parameter p taking nvalues[p] values
 * (indices 0 .. nvalues[p] - 1); NULL when out of memory. */
kgi_memo *kgi_memo_new(const int *nvalues, int nparams);
void kgi_memo_free(kgi_memo *m);
/* The value stored for the configuration whose value indices are idx, or -1. */
int kgi_memo_find(const kgi_memo *m, const int *idx);
/* Stores v (>= 0) for configuration idx, whose call read seq[0 .. n) in that
 * order: 0, or -1 when not stored (out of memory, or contradicting). */
int kgi_memo_put(kgi_memo *m, const unsigned char *seq, int n, const int *idx, int v);

#endif
