/*
 * test_exchange.c -- make's choice of a catalogue's kernels on small tables,
 * no GPU: the greedy cover (kgi_cat_greedy, and kgi_cat_greedy_from grown
 * from a kept set), the swaps after it (kgi_cat_exchange), the sum both
 * lower (kgi_cat_cost), and the fit to a compile budget (kgi_cat_trim).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autotune/catalogue.h"
#include "testutil.h"

#define NOT INFINITY /* no time: the kernel cannot run there */

static int has(const int *pick, int n, int k)
{
    for (int i = 0; i < n; i++)
        if (pick[i] == k)
            return 1;
    return 0;
}

int main(void)
{
    /* The greedy cover's trap: kernel 0 is fair everywhere (1.2 of the best), kernels 1 and 2 the best on
     * half the pairs each and unable to run on the other half. With room for two, the greedy cover takes
     * kernel 0 first (it alone covers every pair), then one of 1 and 2; the set {1, 2} is the best at every
     * pair, and one swap reaches it. */
    enum { NC = 3, NP = 4 };
    const double t[NC * NP] = {
        1.2, 1.2, 1.2, 1.2, /* kernel 0 */
        1.0, 1.0, NOT, NOT, /* kernel 1 */
        NOT, NOT, 1.0, 1.0, /* kernel 2 */
    };
    int pick[NC];
    int n = kgi_cat_greedy(t, NULL, NC, NP, 2, 0.0, INFINITY, pick);
    CHECK(n == 2);
    CHECK(pick[0] == 0);
    double before = kgi_cat_cost(t, NULL, NC, NP, pick, n);
    CHECK_MSG(fabs(before - 2 * log(1.2)) < 1e-9, "greedy's sum %g, expected 2 log 1.2", before);
    int swaps = kgi_cat_exchange(t, NULL, NC, NP, INFINITY, pick, n);
    CHECK_MSG(swaps == 1, "%d swaps", swaps);
    CHECK(has(pick, n, 1) && has(pick, n, 2));
    CHECK_MSG(fabs(kgi_cat_cost(t, NULL, NC, NP, pick, n)) < 1e-12, "sum after the swap %g, expected 0",
              kgi_cat_cost(t, NULL, NC, NP, pick, n));
    /* the set is the best everywhere: nothing more to swap */
    CHECK(kgi_cat_exchange(t, NULL, NC, NP, INFINITY, pick, n) == 0);

    /* The choice is the one the predictions rank first, not the set's fastest: kernel 2 is predicted the
     * fastest everywhere and measured 3 times the best at pair 1, so a set holding it chooses it there. The
     * swap of 2 for 1 (predicted slower than 2 and 3, the best at both pairs) lowers the sum most, to 0;
     * swapping 0 out changes nothing while 2 stays (it stays the choice). */
    enum { NC2 = 4, NP2 = 2 };
    const double t2[NC2 * NP2] = {
        2.0, 2.0, /* kernel 0 */
        1.0, 1.0, /* kernel 1 */
        1.0, 3.0, /* kernel 2 */
        1.0, 1.1, /* kernel 3 */
    };
    const double pred2[NC2 * NP2] = {
        2.0, 2.0, /* kernel 0 */
        1.5, 1.5, /* kernel 1 */
        1.0, 1.0, /* kernel 2 */
        1.2, 1.2, /* kernel 3 */
    };
    int p2[2] = {0, 1}; /* 1 chosen by every pair; 0 idle */
    CHECK(fabs(kgi_cat_cost(t2, pred2, NC2, NP2, p2, 2)) < 1e-12);
    int p3[2] = {0, 2}; /* 2 chosen by every pair: 3 times the best at pair 1 */
    CHECK(fabs(kgi_cat_cost(t2, pred2, NC2, NP2, p3, 2) - log(3.0)) < 1e-12);
    swaps = kgi_cat_exchange(t2, pred2, NC2, NP2, INFINITY, p3, 2);
    CHECK_MSG(swaps == 1, "%d swaps", swaps);
    CHECK(has(p3, 2, 0) && has(p3, 2, 1));
    CHECK(fabs(kgi_cat_cost(t2, pred2, NC2, NP2, p3, 2)) < 1e-12);

    /* The `worst` rule, as the greedy cover's: a swap that would make a pair's choice more than `worst`
     * times its best, and worse than before, is not made, whatever it gains elsewhere. Kernel 1 is the
     * best at three pairs and 2.5 times the best at the fourth, where kernel 0 is the best. */
    enum { NC3 = 3, NP3 = 4 };
    const double t3[NC3 * NP3] = {
        1.5, 1.5, 1.5, 1.0, /* kernel 0 */
        1.0, 1.0, 1.0, 2.5, /* kernel 1 */
        1.4, 1.4, 1.4, 1.9, /* kernel 2 */
    };
    int p4[1] = {2};
    CHECK(kgi_cat_exchange(t3, NULL, NC3, NP3, 2.0, p4, 1) == 1 && p4[0] == 0); /* 1 barred; 0 gains */
    int p5[1] = {2};
    CHECK(kgi_cat_exchange(t3, NULL, NC3, NP3, INFINITY, p5, 1) == 1 && p5[0] == 1); /* without the rule, 1 */

    /* Ties: the set's choice is the kernel of the lowest prediction, the earlier in pick[] on a tie. Kernel 2
     * (C) predicted as fast as kernel 1 (B) at pair 0 is 4 times slower there; put in kernel 0's place it
     * comes first and is chosen there, so no swap lowers the sum (a gain counted as if it lost the tie made
     * the swap, and raised the sum). */
    enum { NC4 = 3, NP4 = 2 };
    const double t4[NC4 * NP4] = {4, 2, /* A */ 2, 4, /* B */ 8, 1 /* C */};
    const double pred4[NC4 * NP4] = {5, 2, /* A */ 1, 4, /* B */ 1, 1 /* C */};
    int p6[2] = {0, 1};
    double c6 = kgi_cat_cost(t4, pred4, NC4, NP4, p6, 2);
    CHECK(fabs(c6 - log(2.0)) < 1e-12);
    swaps = kgi_cat_exchange(t4, pred4, NC4, NP4, INFINITY, p6, 2);
    CHECK_MSG(swaps == 0 && p6[0] == 0 && p6[1] == 1, "%d swaps, set {%d, %d}", swaps, p6[0], p6[1]);
    CHECK(kgi_cat_cost(t4, pred4, NC4, NP4, p6, 2) <= c6);

    /* The `worst` rule binds only where the set had a choice (the greedy cover's rule): a pair it left
     * uncovered may get one more than `worst` times its best. Kernel 0 is the best at pairs 0 and 1 and 10
     * times the best at pair 2; kernel 1 runs nowhere. Greedy with room for one takes kernel 0; the swaps
     * from {1} reach it too. */
    enum { NC5 = 3, NP5 = 3 };
    const double t5[NC5 * NP5] = {1, 1, 20, /* kernel 0 */ NOT, NOT, NOT, /* kernel 1 */ NOT, NOT, 2 /* kernel 2 */};
    int g5[1];
    CHECK(kgi_cat_greedy(t5, NULL, NC5, NP5, 1, 0.0, 2.0, g5) == 1 && g5[0] == 0);
    int p7[1] = {1};
    CHECK_MSG(kgi_cat_exchange(t5, NULL, NC5, NP5, 2.0, p7, 1) == 1 && p7[0] == 0, "set {%d}", p7[0]);

    /* Grown from a set given (make --add-best): the kept kernel 0 is 3 times the best at every pair. From
     * scratch the cover takes kernel 3 (the best at pairs 0-2) and kernel 1 (the best at pair 3) and stops:
     * every pair is at its best. Kept {0}: the same two are added after it, and nothing else (kernel 2 is
     * slower than the set's choice everywhere). Room for one more: kernel 3 alone. */
    enum { NC6 = 4, NP6 = 4 };
    const double t6[NC6 * NP6] = {
        3.0, 3.0, 3.0, 3.0, /* kernel 0, kept */
        NOT, NOT, NOT, 1.0, /* kernel 1 */
        3.2, 3.2, 3.2, 3.2, /* kernel 2 */
        1.0, 1.0, 1.0, NOT, /* kernel 3 */
    };
    int s6[NC6];
    int n6 = kgi_cat_greedy(t6, NULL, NC6, NP6, NC6, 0.0, INFINITY, s6);
    CHECK_MSG(n6 == 2 && s6[0] == 3 && s6[1] == 1, "from scratch %d picks: %d %d", n6, s6[0], s6[1]);
    int g6[NC6] = {0};
    int m6 = kgi_cat_greedy_from(t6, NULL, NC6, NP6, 1, NC6, 0.0, INFINITY, g6);
    CHECK_MSG(m6 == 3 && g6[0] == 0 && g6[1] == 3 && g6[2] == 1, "%d picks: %d %d %d", m6, g6[0], g6[1], g6[2]);
    int h6[NC6] = {0};
    CHECK(kgi_cat_greedy_from(t6, NULL, NC6, NP6, 1, 2, 0.0, INFINITY, h6) == 2 && h6[0] == 0 && h6[1] == 3);
    /* the kept set already within the tolerance everywhere: nothing added */
    int k7[2] = {1};
    const double t7[2 * NP6] = {1.0, 1.0, 1.0, 1.0, /* kernel 0 */ 1.01, 1.01, 1.01, 1.01 /* kernel 1, kept */};
    CHECK(kgi_cat_greedy_from(t7, NULL, 2, NP6, 1, 2, 0.02, INFINITY, k7) == 1 && k7[0] == 1);
    CHECK(kgi_cat_greedy_from(t7, NULL, 2, NP6, 1, 2, 0.0, INFINITY, k7) == 2 && k7[1] == 0); /* without: added */
    /* by the predictions, as make passes them: the kept kernel 0, predicted faster everywhere, stays the choice,
     * so kernel 1, faster in fact, changes nothing and is not added; by the times it is */
    const double t8[2 * 2] = {2, 2, /* kernel 0, kept */ 1, 1 /* kernel 1 */};
    const double pred8[2 * 2] = {1, 1, 1.5, 1.5};
    int k8[2] = {0};
    CHECK(kgi_cat_greedy_from(t8, pred8, 2, 2, 1, 2, 0.0, INFINITY, k8) == 1);
    CHECK(kgi_cat_greedy_from(t8, NULL, 2, 2, 1, 2, 0.0, INFINITY, k8) == 2 && k8[1] == 1);

    /* Fitted to a budget (make --max-compile, kgi_cat_trim). Two kernels, each the choice at one pair and the
     * other's fallback there: kernel 0 is the best at pair 0 (kernel 1 1.05 of it), kernel 1 at pair 1 (kernel
     * 0 1.2 of it). Dropping kernel 0 costs log 1.05, kernel 1 log 1.2; per unit of compile time, kernel 0
     * goes when it costs 10 against kernel 1's 1, and kernel 1 when kernel 0 costs 0.2. */
    const double ta[2 * 2] = {1.0, 1.2, /* kernel 0 */ 1.05, 1.0 /* kernel 1 */};
    const double costa[2] = {10, 1}, costb[2] = {0.2, 1};
    int pa[2] = {0, 1}, na = 2, da[2];
    int got = kgi_cat_trim(ta, NULL, 2, 2, 2.0, costa, 11, pa, &na, da);
    CHECK_MSG(got == 0 && na == 2, "within the budget: %d dropped, %d left", got, na);
    got = kgi_cat_trim(ta, NULL, 2, 2, 2.0, costa, 5, pa, &na, da);
    CHECK_MSG(got == 1 && da[0] == 0 && na == 1 && pa[0] == 1, "costs 10, 1: %d dropped (%d), left %d", got, da[0],
              pa[0]);
    int pb[2] = {0, 1}, nb = 2;
    got = kgi_cat_trim(ta, NULL, 2, 2, 2.0, costb, 0.5, pb, &nb, da);
    CHECK_MSG(got == 1 && da[0] == 1 && nb == 1 && pb[0] == 0, "costs 0.2, 1: %d dropped (%d)", got, da[0]);
    /* The last drop by its loss: kernel 0 (cost 10) loses log 1.1 at pair 0, kernel 1 (cost 1) log 1.05 at pair
     * 1, kernel 2 (cost 1) log 2 at pair 2. Per unit kernel 0 is the cheapest (0.0095 against 0.049), but 1 s of
     * the 12 has to go for a budget of 11.5, and kernel 1's drop does it at half kernel 0's loss; for a budget of
     * 5 only kernel 0's does. */
    const double tl[3 * 3] = {1.0, 2.0, 2.0, /* kernel 0 */ 2.0, 1.0, 2.0, /* kernel 1 */ 1.1, 1.05, 1.0};
    const double costl[3] = {10, 1, 1};
    int pl[3] = {0, 1, 2}, nl = 3;
    got = kgi_cat_trim(tl, NULL, 3, 3, 4.0, costl, 11.5, pl, &nl, da);
    CHECK_MSG(got == 1 && da[0] == 1 && nl == 2 && pl[0] == 0 && pl[1] == 2, "budget 11.5: %d dropped (%d)", got,
              da[0]);
    int pm[3] = {0, 1, 2}, nm = 3;
    got = kgi_cat_trim(tl, NULL, 3, 3, 4.0, costl, 5, pm, &nm, da);
    CHECK_MSG(got == 1 && da[0] == 0 && nm == 2, "budget 5: %d dropped (%d)", got, da[0]);
    /* Budget 10.5, kernel 0 now losing log 1.8 (0.059 per unit against kernel 1's 0.049): only kernel 0's drop
     * ends the fit, but kernel 1's loses less by itself (0.049 against 0.59), so it goes first; then both
     * remaining drops end it, and kernel 0's loses less (0.59 against kernel 2's 1.34) */
    const double tn[3 * 3] = {1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 1.8, 1.05, 1.0};
    int pn[3] = {0, 1, 2}, nn = 3;
    got = kgi_cat_trim(tn, NULL, 3, 3, 4.0, costl, 10.5, pn, &nn, da);
    CHECK_MSG(got == 2 && da[0] == 1 && da[1] == 0 && nn == 1 && pn[0] == 2, "budget 10.5: %d dropped (%d, %d)", got,
              da[0], da[1]);
    /* the `worst` rule: with kernel 0 3 times the best at pair 1, dropping kernel 1 costs log 3 (1.10) and
     * kernel 0 log 1.05 (0.049); at costs 0.02 and 1, kernel 1 is the cheaper loss per unit (1.10 against
     * 2.44) and goes with `worst` 4 (for a budget of 0.5, which kernel 0's drop alone does not meet), but with
     * `worst` 2 it may not, so kernel 0 does (a budget of 1) */
    const double tc[2 * 2] = {1.0, 3.0, 1.05, 1.0};
    const double costc[2] = {0.02, 1};
    int pc[2] = {0, 1}, nc = 2;
    got = kgi_cat_trim(tc, NULL, 2, 2, 2.0, costc, 1.0, pc, &nc, da);
    CHECK_MSG(got == 1 && da[0] == 0 && nc == 1 && pc[0] == 1, "worst 2: %d dropped (%d)", got, da[0]);
    int pd[2] = {0, 1}, nd = 2;
    got = kgi_cat_trim(tc, NULL, 2, 2, 4.0, costc, 0.5, pd, &nd, da);
    CHECK_MSG(got == 1 && da[0] == 1 && nd == 1 && pd[0] == 0, "worst 4: %d dropped (%d)", got, da[0]);
    /* A kernel that is nowhere the choice goes first, whatever it costs (nothing lost), those the choice
     * somewhere by their loss per unit, and one whose pairs nothing else covers (a regret of
     * KGI_CAT_UNCOVERED, above `worst`) never: kernel 1 is 1.05 of kernel 0 everywhere, kernel 3 1.1 of kernel
     * 2 at pair 3, kernel 4 alone at pair 4. Budget 17 of 18: kernel 1, the first of the two free ones. Budget
     * 14: both free ones, then none can go: -1, the set left {0, 2, 4} in its order. */
    enum { NC9 = 5, NP9 = 5 };
    const double t9[NC9 * NP9] = {
        1.0,  1.0,  1.0,  NOT, NOT, /* kernel 0 */
        1.05, 1.05, 1.05, NOT, NOT, /* kernel 1 */
        NOT,  NOT,  NOT,  1.0, NOT, /* kernel 2 */
        NOT,  NOT,  NOT,  1.1, NOT, /* kernel 3 */
        NOT,  NOT,  NOT,  NOT, 1.0, /* kernel 4 */
    };
    const double cost9[NC9] = {10, 1, 4, 2, 1};
    int p9[NC9] = {0, 1, 2, 3, 4}, n9 = NC9, d9[NC9];
    got = kgi_cat_trim(t9, NULL, NC9, NP9, 2.0, cost9, 17, p9, &n9, d9);
    CHECK_MSG(got == 1 && d9[0] == 1 && n9 == 4, "budget 17: %d dropped (first %d), %d left", got, d9[0], n9);
    int q9[NC9] = {0, 1, 2, 3, 4}, m9 = NC9;
    got = kgi_cat_trim(t9, NULL, NC9, NP9, 2.0, cost9, 14, q9, &m9, d9);
    CHECK_MSG(got == -1 && m9 == 3 && q9[0] == 0 && q9[1] == 2 && q9[2] == 4 && d9[0] == 1 && d9[1] == 3,
              "budget 14: %d, %d left: %d %d %d", got, m9, q9[0], q9[1], q9[2]);
    /* by the predictions, as make passes them: ranked first at pairs 0-2, kernel 1 is the choice there though
     * kernel 0 is faster, so dropping kernel 1 lowers the regret: it goes first */
    double pred9[NC9 * NP9];
    for (int i = 0; i < NC9 * NP9; i++)
        pred9[i] = t9[i];
    for (int p = 0; p < 3; p++)
        pred9[NP9 + p] = 0.5;
    int r9[NC9] = {0, 1, 2, 3, 4}, k9 = NC9;
    got = kgi_cat_trim(t9, pred9, NC9, NP9, 2.0, cost9, 17, r9, &k9, d9);
    CHECK_MSG(got == 1 && d9[0] == 1 && k9 == 4, "by pred: %d dropped (first %d)", got, d9[0]);
    TEST_DONE();
}
