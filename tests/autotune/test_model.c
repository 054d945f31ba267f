/*
 * test_model.c -- the analytic model against a recorded sweep, no GPU.
 *
 * data/warp_sweep_h200.csv holds a broad sweep of matmul_warp on an NVIDIA
 * H200: about 330 configurations (nn) and 170 (nt) drawn uniformly from the
 * template's default space, each timed on every one of 15 (shape, layout)
 * pairs of different kinds (square, odd, small K, small M, huge K, tiny, a
 * convolution's GEMM). For every pair, the model ranks the recorded
 * configurations the shape admits (rows whose outcome is `error` are the
 * ones whose precondition refused the shape: never candidates), and the
 * model's top 32 must hold one whose recorded time is within 3 % of the
 * recorded best. The model sees the H200 (132 SMs, 1.98 GHz, 4.8 TB/s, 50 MB
 * of L2) at sm_90's limits, without a GPU.
 *
 * Each configuration is checked and its resources() read once; only the
 * shape changes between the pairs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/model.h"
#include "testutil.h"

#define TOP 32
#define WITHIN 1.03

typedef struct row {
    char tag[32], layout[4];
    int m, n, k;
    double ms;
    int cand;                  /* index into the space; -1 for `error` rows */
} row;

typedef struct scored {
    double predicted, ms;
} scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    return (x->predicted > y->predicted) - (x->predicted < y->predicted);
}

/* Reads the recording's rows, adding each configuration to sp. Returns the
 * number of rows, or -1. */
static int read_sweep(const char *path, kgi_space *sp, kgi_host *h, row **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot read the recording %s\n", path);
        return -1;
    }
    const kgi_limits *lim = kgi_arch_limits(90);
    char line[2048], err[1024];
    int n = 0, cap = 0, header = 0;
    row *rows = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#' || !line[0])
            continue;
        if (!header++) /* tag,layout,M,N,K,ms,cublas_ms,err,outcome,config */
            continue;
        char *field[10], *p = line;
        int nf = 0;
        for (; nf < 10 && p; nf++) {
            field[nf] = p;
            p = nf < 9 ? strchr(p, ',') : NULL;
            if (p)
                *p++ = 0;
        }
        CHECK_MSG(nf == 10, "a row with %d fields", nf);
        if (nf != 10)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            rows = realloc(rows, (size_t)cap * sizeof *rows);
        }
        row *r = &rows[n++];
        snprintf(r->tag, sizeof r->tag, "%s", field[0]);
        snprintf(r->layout, sizeof r->layout, "%s", field[1]);
        r->m = atoi(field[2]), r->n = atoi(field[3]), r->k = atoi(field[4]);
        r->ms = strtod(field[5], NULL);
        r->cand = -1;
        int ran = strcmp(field[8], "ok") == 0 || strcmp(field[8], "slow") == 0;
        CHECK_MSG(ran || strcmp(field[8], "error") == 0, "outcome '%s'", field[8]);
        char *config = strchr(field[9], ' ');
        if (!ran || !config)
            continue;
        *config++ = 0;
        int c = kgi_space_lookup(sp, field[9], config);
        if (c < 0) {
            int before = sp->n;
            CHECK_MSG(kgi_space_add_config(sp, h, field[9], config, lim, err, sizeof err) == KG_OK, "%s", err);
            CHECK_MSG(sp->n == before + 1, "check() rejects the recorded %s", config);
            c = sp->n == before + 1 ? before : -1;
        }
        r->cand = c;
        CHECK_MSG(r->ms > 0, "%s %s: no time", r->tag, config);
    }
    fclose(f);
    *out = rows;
    return n;
}

int main(int argc, char **argv)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/warp_sweep_h200.csv", argc > 1 ? argv[1] : ".");
    kgi_host *h = kgi_host_new();
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    row *rows = NULL;
    int nrows = read_sweep(path, &sp, h, &rows);
    if (nrows < 0)
        return 1;
    CHECK_MSG(nrows > 3000 && sp.n > 400, "%d rows, %d configurations", nrows, sp.n);

    /* The H200 the sweep ran on, at sm_90's limits. */
    kgi_model_dev dev;
    kgi_model_dev_arch(kgi_arch_limits(90), &dev);
    dev.sm_count = 132;
    dev.clock_ghz = 1.98;
    dev.bandwidth_gbs = 4800;
    dev.l2_bytes = 50.0 * 1024 * 1024;

    scored *s = malloc((size_t)nrows * sizeof *s);
    int pairs = 0;
    printf("%-6s %-6s %17s %5s %10s %10s %9s %9s\n", "shape", "layout", "M x N x K", "cands", "best ms", "pick ms",
           "pick/best", "rank<=3%");
    for (int i = 0; i < nrows; i++) {
        /* the first row of each (shape, layout) pair gathers the pair */
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(rows[j].tag, rows[i].tag) == 0 && strcmp(rows[j].layout, rows[i].layout) == 0;
        if (seen)
            continue;
        int n = 0;
        double best = INFINITY;
        for (int j = i; j < nrows; j++) {
            const row *r = &rows[j];
            if (strcmp(r->tag, rows[i].tag) != 0 || strcmp(r->layout, rows[i].layout) != 0 || r->cand < 0)
                continue;
            s[n].ms = r->ms;
            s[n++].predicted = kgi_model_time_ms(&dev, &sp.cand[r->cand].res, 0, r->m, r->n, r->k);
            best = fmin(best, r->ms);
        }
        qsort(s, (size_t)n, sizeof *s, cmp_scored);
        int rank = -1;
        for (int j = 0; j < n && rank < 0; j++)
            if (s[j].ms <= best * WITHIN)
                rank = j;
        pairs++;
        printf("%-6s %-6s %5d x%5d x%5d %5d %10.5f %10.5f %9.3f %9d\n", rows[i].tag, rows[i].layout, rows[i].m,
               rows[i].n, rows[i].k, n, best, s[0].ms, s[0].ms / best, rank + 1);
        CHECK_MSG(n > 0 && isfinite(s[0].predicted), "%s %s: nothing ranked", rows[i].tag, rows[i].layout);
        CHECK_MSG(rank >= 0 && rank < TOP,
                  "%s %s: the model's top %d hold nothing within 3%% of the best %.5f ms (first at rank %d)",
                  rows[i].tag, rows[i].layout, TOP, best, rank + 1);
    }
    CHECK_MSG(pairs >= 10, "only %d (shape, layout) pairs recorded", pairs);

    free(s);
    free(rows);
    kgi_space_free(&sp);
    kgi_host_free(h);
    TEST_DONE();
}
