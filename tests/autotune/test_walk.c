/*
 * test_walk.c -- the space walk's pruning is sound: on reduced spaces of
 * every embedded template and on a test template with tricky rules
 * (templates/tricky.lua: branches, pairs(), a write into cfg, a parameter
 * only resources() reads), the walk's candidates are exactly the
 * combinations a brute-force enumeration finds valid with check() called
 * one by one (kgi_host_check, no proxy), each with the resources() of its
 * own configuration, and the walk counts every rejected combination once.
 * Also: the walk calls check() far fewer times than there are combinations,
 * a template's space_groups add their combinations once each (and not with
 * an override), a tick that asks to stop stops it, and the memo of
 * resources() keeps only what calls' reads prove.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/memo.h"
#include "autotune/space.h"
#include "testutil.h"

/* Brute force: every combination of `space` ("a=1,2 b=3 ..."), in text,
 * checked one by one. Returns the canonical texts of the valid ones
 * (sorted, joined by '\n') and the number of rejected ones. */
static char **brute_force(kgi_host *h, const char *tmpl, const char *space, const kgi_limits *lim, int *nvalid,
                          long *nrejected)
{
    char names[32][32], vals[32][16][32];
    int nv[32], nd = 0, idx[32] = {0};
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", space);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        snprintf(names[nd], 32, "%s", tok);
        nv[nd] = 0;
        char *save;
        for (char *v = strtok_r(eq + 1, ",", &save); v; v = strtok_r(NULL, ",", &save))
            snprintf(vals[nd][nv[nd]++], 32, "%s", v);
        nd++;
    }
    int cap = 1024, n = 0;
    char **out = malloc((size_t)cap * sizeof *out);
    *nrejected = 0;
    for (;;) {
        char config[1024], canon[1024], why[1024];
        size_t used = 0;
        for (int d = 0; d < nd; d++)
            used += (size_t)snprintf(config + used, sizeof config - used, "%s%s=%s", d ? " " : "", names[d],
                                     vals[d][idx[d]]);
        kg_status st = kgi_host_check(h, tmpl, config, lim, canon, sizeof canon, why, sizeof why);
        CHECK_MSG(st == KG_OK || st == KG_ERR_CONFIG, "%s: %s", config, why);
        if (st == KG_OK) {
            if (n == cap)
                out = realloc(out, (size_t)(cap *= 2) * sizeof *out);
            out[n++] = strdup(canon);
        } else {
            (*nrejected)++;
        }
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < nv[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
    *nvalid = n;
    return out;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void compare(kgi_host *h, const char *tmpl, const char *space, int sm)
{
    const kgi_limits *lim = kgi_arch_limits(sm);
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    char err[1024];
    kg_status st = kgi_space_add_template(&sp, h, tmpl, "", space, lim, err, sizeof err);
    CHECK_MSG(st == KG_OK, "%s: %s", tmpl, err);
    int nvalid;
    long nrejected;
    char **want = brute_force(h, tmpl, space, lim, &nvalid, &nrejected);
    qsort(want, (size_t)nvalid, sizeof *want, cmp_str);
    char **got = malloc(((size_t)sp.n + 1) * sizeof *got);
    for (int i = 0; i < sp.n; i++)
        got[i] = (char *)sp.cand[i].config;
    qsort(got, (size_t)sp.n, sizeof *got, cmp_str);
    int same = sp.n == nvalid;
    for (int i = 0; same && i < sp.n; i++)
        same = strcmp(got[i], want[i]) == 0;
    CHECK_MSG(same, "%s sm_%d: the walk found %d candidates, brute force %d valid", tmpl, sm, sp.n, nvalid);
    CHECK_MSG(sp.rejected == nrejected && sp.enumerated == nvalid + nrejected,
              "%s sm_%d: the walk rejected %ld of %ld, brute force %ld", tmpl, sm, sp.rejected, sp.enumerated,
              nrejected);
    /* each candidate's resources are its own (a pass shares them over a subtree) */
    kgi_space one;
    int bad = 0;
    for (int i = 0; i < sp.n; i += sp.n > 1000 ? sp.n / 1000 : 1) {
        memset(&one, 0, sizeof one);
        if (kgi_space_add_config(&one, h, tmpl, sp.cand[i].config, lim, err, sizeof err) != KG_OK || one.n != 1 ||
            memcmp(&one.cand[0].res, &sp.cand[i].res, sizeof one.cand[0].res) != 0)
            bad++;
        kgi_space_free(&one);
    }
    CHECK_MSG(bad == 0, "%s: %d candidates carry resources that are not their own", tmpl, bad);
    printf("%s sm_%d: %ld combinations, %d valid, %ld rejected in %ld subtrees, %ld check() and %ld resources()"
           " calls\n",
           tmpl, sm, sp.enumerated, sp.n, sp.rejected, sp.subtrees, sp.checks, sp.resource_calls);
    for (int i = 0; i < nvalid; i++)
        free(want[i]);
    free(want);
    free(got);
    kgi_space_free(&sp);
}

/* The memo of resources() (autotune/memo.h): a leaf for what a call read,
 * misses elsewhere, and calls that contradict the tree are not stored. */
static void test_memo(void)
{
    int nv[3] = {2, 3, 2};
    kgi_memo *m = kgi_memo_new(nv, 3);
    CHECK(m != NULL);
    const unsigned char ab[] = {0, 1}, a[] = {0}, c[] = {2};
    int x00[] = {0, 0, 0}, x01[] = {0, 1, 1}, x10[] = {1, 2, 0}, x11[] = {1, 2, 1};
    CHECK(kgi_memo_find(m, x00) == -1);
    CHECK(kgi_memo_put(m, ab, 2, x00, 7) == 0);
    CHECK(kgi_memo_find(m, x00) == 7);
    CHECK(kgi_memo_find(m, (int[]){0, 0, 1}) == 7); /* c was not read */
    CHECK(kgi_memo_find(m, x01) == -1);
    CHECK(kgi_memo_put(m, a, 1, x01, 8) == -1);      /* after a=0 comes b, not a leaf */
    CHECK(kgi_memo_put(m, c, 1, x10, 9) == -1);      /* the first read is a, not c */
    CHECK(kgi_memo_put(m, a, 1, x10, 9) == 0);       /* a=1 alone decides */
    CHECK(kgi_memo_find(m, x11) == 9 && kgi_memo_find(m, x01) == -1);
    CHECK(kgi_memo_put(m, ab, 0, x01, 1) == -1);     /* no reads: the root is no leaf */
    kgi_memo_free(m);
}

/* A template's space_groups (templates/grouped.lua): the walk without an
 * override holds the union of the space's and each group's valid
 * combinations, each once; with an override, the override's alone; a
 * group that names no parameter is the template's error. */
static void test_groups(kgi_host *h)
{
    const kgi_limits *lim = kgi_arch_limits(90);
    static const char *const walks[] = {"a=1,2 b=1,2 mode=x,y c=0,1", "a=3,4 b=1,2 mode=x,y c=0,1",
                                        "a=2,3 b=2,3 mode=y c=0,1"};
    char *want[256];
    int nwant = 0;
    for (int w = 0; w < 3; w++) {
        int nvalid;
        long nrejected;
        char **v = brute_force(h, "grouped", walks[w], lim, &nvalid, &nrejected);
        for (int i = 0; i < nvalid; i++) {
            int dup = 0;
            for (int j = 0; j < nwant && !dup; j++)
                dup = strcmp(want[j], v[i]) == 0;
            if (dup || nwant == 256)
                free(v[i]);
            else
                want[nwant++] = v[i];
        }
        free(v);
    }
    qsort(want, (size_t)nwant, sizeof *want, cmp_str);
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    char err[1024];
    CHECK_MSG(kgi_space_add_template(&sp, h, "grouped", "", NULL, lim, err, sizeof err) == KG_OK, "%s", err);
    const char *got[256];
    int same = sp.n == nwant;
    for (int i = 0; same && i < sp.n; i++)
        got[i] = sp.cand[i].config;
    if (same)
        qsort(got, (size_t)sp.n, sizeof *got, cmp_str);
    for (int i = 0; same && i < sp.n; i++)
        same = strcmp(got[i], want[i]) == 0;
    CHECK_MSG(same, "grouped: the walk found %d candidates, the union of the three walks %d distinct", sp.n, nwant);
    CHECK(nwant > 16); /* the groups added some: the space alone has at most 16 */
    CHECK(kgi_space_finalize(&sp) == KG_OK);
    for (int i = 0; i < sp.n; i++)
        CHECK(kgi_space_find(&sp, sp.cand[i].tmpl, sp.cand[i].coord) == i);
    kgi_space_free(&sp);
    for (int i = 0; i < nwant; i++)
        free(want[i]);
    /* a fixed parameter holds in the groups too (as the layout does) */
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_template(&sp, h, "grouped", "mode=x", NULL, lim, err, sizeof err) == KG_OK);
    int ymode = 0, large_a = 0;
    for (int i = 0; i < sp.n; i++)
        ymode += strstr(sp.cand[i].config, "mode=y") != NULL, large_a += strstr(sp.cand[i].config, "a=4") != NULL;
    CHECK_MSG(ymode == 0 && large_a > 0, "grouped with mode=x fixed: %d candidates with mode=y, %d with a=4", ymode,
              large_a);
    kgi_space_free(&sp);
    /* an override is the whole space: no group is walked */
    memset(&sp, 0, sizeof sp);
    CHECK(kgi_space_add_template(&sp, h, "grouped", "", "a=1 b=1,2", lim, err, sizeof err) == KG_OK);
    int nvalid;
    long nrejected;
    char **v = brute_force(h, "grouped", "a=1 b=1,2 mode=x,y c=0,1", lim, &nvalid, &nrejected);
    CHECK_MSG(sp.n == nvalid, "grouped with an override: %d candidates, %d expected", sp.n, nvalid);
    for (int i = 0; i < nvalid; i++)
        free(v[i]);
    free(v);
    kgi_space_free(&sp);
    /* a group naming no parameter */
    memset(&sp, 0, sizeof sp);
    kg_status st = kgi_space_add_template(&sp, h, "badgroup", "", NULL, lim, err, sizeof err);
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(err, "space_groups[1]") && strstr(err, "'z'"), "badgroup: %d %s", st,
              err);
    kgi_space_free(&sp);
}

static int stop_at_once(void *ud, const kgi_space *sp)
{
    (void)sp;
    return ++*(int *)ud >= 2;
}

static void test_stop(kgi_host *h)
{
    kgi_space sp;
    memset(&sp, 0, sizeof sp);
    int ticks = 0;
    sp.tick = stop_at_once, sp.tick_ud = &ticks;
    char err[1024];
    CHECK(kgi_space_add_template(&sp, h, "matmul_warp", "layout=nn", NULL, kgi_arch_limits(90), err, sizeof err) ==
          KG_OK);
    CHECK_MSG(sp.stopped && ticks == 2 && sp.checks < 1000, "stopped %d after %d ticks, %ld checks", sp.stopped,
              ticks, sp.checks);
    kgi_space_free(&sp);
}

int main(int argc, char **argv)
{
    kgi_host *h = kgi_host_new();
    CHECK(h != NULL);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/templates", argc > 1 ? argv[1] : ".");
    CHECK(kgi_host_set_path(h, dir) == 0);
    compare(h, "tricky", "a=1,2,3,4 b=1,2,3 mode=x,y,z c=0,1 d=1,2,4,8 e=0,1,2 f=0,1", 90);
    compare(h, "tricky", "a=1,2,3,4 b=1,2,3 mode=x,y,z c=0,1 d=1,2,4,8 e=0,1,2 f=0,1", 75);
    compare(h, "matmul", "bm=16,64,256 bn=32,128,256 bk=8,32 tm=1,4,8 tn=2,8 pad=0,4 vec=1,4 layout=nn,tn", 90);
    compare(h, "matmul", "bm=16,64,256 bn=32,128,256 bk=8,32 tm=1,4,8 tn=2,8 pad=0,4 vec=1,4 layout=nn,tn", 75);
    compare(h, "matmul_warp",
            "bm=64,256 bn=128 bk=8 wm=32 wn=64 vec=1,4 pack=0,1 stages=1,2 ba=0,1 pred=0 xb=0,1 raster=1,8"
            " splitk=1,2,64 cl=0,1 cc=0,1 sk=0,2 red=1,4 skw=0,1 minb=1,2 layout=nt",
            90);
    compare(h, "matmul_warp", "bm=128 bn=64,128 bk=8 wm=32 wn=32,64 vec=1,4 pack=0 pred=0 xb=0 raster=1 stages=1,3 ba=0,1 splitk=1,4 cl=0,1"
                              " cc=0,1 sk=0,1 red=1,4 skw=0 minb=1,3 layout=tn",
            80);
    test_groups(h);
    test_stop(h);
    test_memo();
    kgi_host_free(h);
    TEST_DONE();
}
