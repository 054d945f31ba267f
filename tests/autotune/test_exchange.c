/*
 * test_exchange.c -- make's choice of a catalogue's kernels on small tables,
 * no GPU: the greedy cover (kgi_cat_greedy, and kgi_cat_greedy_from grown
 * from a kept set), the swaps after it (kgi_cat_exchange) and the sum both
 * lower (kgi_cat_cost).
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
    TEST_DONE();
}
