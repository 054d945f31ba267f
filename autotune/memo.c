/*
 * memo.c -- a decision tree of reads (see memo.h). Nodes live in arrays:
 * a node is empty (grown but not yet reached by a finished call), a leaf
 * holding a value, or a read of parameter p whose children (one per value
 * of p) start at `at` in the shared child array.
 */
#include <stdlib.h>
#include <string.h>

#include "autotune/memo.h"

enum { EMPTY = -1, LEAF = -2 };

typedef struct node {
    int param;                 /* EMPTY, LEAF or the parameter read */
    int at;                    /* LEAF: the value; else the first child's index in `child` */
} node;

struct kgi_memo {
    int nparams, nvalues[64];
    node *node;
    int n, cap;
    int *child;
    int nchild, ccap;
};

static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q, *cap = c;
    return 0;
}

static int new_node(kgi_memo *m)
{
    if (grow((void **)&m->node, &m->cap, m->n + 1, sizeof *m->node) != 0)
        return -1;
    m->node[m->n] = (node){EMPTY, 0};
    return m->n++;
}

kgi_memo *kgi_memo_new(const int *nvalues, int nparams)
{
    if (nparams > 64)
        return NULL;
    kgi_memo *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->nparams = nparams;
    memcpy(m->nvalues, nvalues, (size_t)nparams * sizeof *nvalues);
    if (new_node(m) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

void kgi_memo_free(kgi_memo *m)
{
    if (!m)
        return;
    free(m->node);
    free(m->child);
    free(m);
}

int kgi_memo_find(const kgi_memo *m, const int *idx)
{
    int n = 0;
    for (;;) {
        const node *x = &m->node[n];
        if (x->param == LEAF)
            return x->at;
        if (x->param == EMPTY || (n = m->child[x->at + idx[x->param]]) < 0)
            return -1;
    }
}

int kgi_memo_put(kgi_memo *m, const unsigned char *seq, int n, const int *idx, int v)
{
    int at = 0;
    for (int i = 0; i < n; i++) {
        int p = seq[i];
        if (p >= m->nparams)
            return -1;
        if (m->node[at].param == EMPTY) {
            int k = m->nvalues[p];
            if (grow((void **)&m->child, &m->ccap, m->nchild + k, sizeof *m->child) != 0)
                return -1;
            for (int j = 0; j < k; j++)
                m->child[m->nchild + j] = -1;
            m->node[at] = (node){p, m->nchild};
            m->nchild += k;
        } else if (m->node[at].param != p) {
            return -1; /* a leaf, or another parameter read here before */
        }
        int *c = &m->child[m->node[at].at + idx[p]];
        if (*c < 0) {
            int k = new_node(m); /* may move m->node, not m->child */
            if (k < 0)
                return -1;
            c = &m->child[m->node[at].at + idx[p]];
            *c = k;
        }
        at = *c;
    }
    if (m->node[at].param != EMPTY)
        return -1;
    m->node[at] = (node){LEAF, v};
    return 0;
}
