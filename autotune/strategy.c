/*
 * strategy.c -- the default (model-ranked top-k, then a local search),
 * exhaustive, random, simulated annealing and model-ranked top-k search
 * (see strategy.h).
 *
 * The budget counts candidates that ran on the GPU, whatever the outcome
 * (a candidate pruned after compiling costs only a compile). A candidate
 * already evaluated in this search is never evaluated again. All randomness comes from the
 * search's seed, so a search is reproducible, and a resumed one (whose
 * finished candidates come back from the database) retraces its steps.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/strategy.h"

kg_status kgi_search_init(kgi_search *s)
{
    s->score = malloc((size_t)(s->space->n + 1) * sizeof *s->score);
    if (!s->score)
        return KG_ERR_NOMEM;
    for (int i = 0; i < s->space->n; i++)
        s->score[i] = NAN;
    s->used = 0;
    s->evaluated = 0;
    s->stopped = 0;
    s->best = -1;
    if (s->width < 1)
        s->width = 1;
    return KG_OK;
}

void kgi_search_free(kgi_search *s)
{
    free(s->score);
    s->score = NULL;
}

int kgi_search_left(const kgi_search *s)
{
    return s->budget > 0 ? (s->budget > s->used ? s->budget - s->used : 0) : INT_MAX;
}

int kgi_search_eval(kgi_search *s, const int *idx, int n)
{
    int left = kgi_search_left(s);
    if (s->stopped || left == 0 || n <= 0)
        return 0;
    int *todo = malloc((size_t)n * sizeof *todo);
    double *ms = malloc((size_t)n * sizeof *ms);
    unsigned char *ran = calloc((size_t)n, 1);
    int nt = 0, done = 0;
    if (!todo || !ms || !ran) {
        s->stopped = 1;
        goto out;
    }
    /* Each candidate once: drop those already evaluated or repeated. */
    for (int i = 0; i < n; i++) {
        if (!isnan(s->score[idx[i]]))
            continue;
        s->score[idx[i]] = -1; /* a mark, until the evaluator answers */
        todo[nt++] = idx[i];
    }
    for (int i = 0; i < nt; i++)
        s->score[todo[i]] = NAN, ms[i] = NAN;
    if (nt == 0)
        goto out;
    s->eval(s->ud, todo, nt, left, ms, ran);
    for (int i = 0; i < nt; i++) {
        if (isnan(ms[i]))
            continue;
        s->score[todo[i]] = ms[i];
        done++;
        s->used += ran[i];
        if (isfinite(ms[i]) && (s->best < 0 || ms[i] < s->score[s->best]))
            s->best = todo[i];
    }
    s->evaluated += done;
    /* Candidates left unevaluated with budget to spare: the evaluator stopped. */
    if (done < nt && kgi_search_left(s) > 0)
        s->stopped = 1;
out:
    free(todo);
    free(ms);
    free(ran);
    return done;
}

/* splitmix64: small, seedable, good enough for search decisions. */
static unsigned long long next_random(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int random_below(unsigned long long *state, int n) { return (int)(next_random(state) % (unsigned)n); }
static double random_unit(unsigned long long *state) { return (next_random(state) >> 11) * 0x1.0p-53; }

/* Every candidate, in the model's order when there is one: the order does not
 * change what an exhaustive search finds, but a good best-so-far early lets
 * the evaluator cut slow candidates short. */
int kgi_strategy_exhaustive(kgi_search *s)
{
    int n = s->space->n;
    int *order = malloc((size_t)(n + 1) * sizeof *order);
    if (!order)
        return -1;
    for (int i = 0; i < n; i++)
        order[i] = s->rank ? s->rank[i] : i;
    kgi_search_eval(s, order, n);
    free(order);
    return s->best;
}

/* A uniformly random sample of the budget's size, without repetition (the
 * evaluator goes down a random permutation until the budget is spent). */
int kgi_strategy_random(kgi_search *s)
{
    int n = s->space->n;
    int *perm = malloc((size_t)(n + 1) * sizeof *perm);
    if (!perm)
        return -1;
    unsigned long long rng = s->seed;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = random_below(&rng, i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    kgi_search_eval(s, perm, n);
    free(perm);
    return s->best;
}

/* The model's top-k: its best predictions, until the budget is spent. */
int kgi_strategy_model(kgi_search *s)
{
    if (!s->rank)
        return kgi_strategy_random(s);
    kgi_search_eval(s, s->rank, s->space->n);
    return s->best;
}

/* A neighbour of candidate c: one parameter moved one value up or down (a
 * combination that check() rejected is not in the space; try another), or
 * -1 when 64 tries found none. */
static int neighbour(const kgi_search *s, int c, unsigned long long *rng)
{
    const kgi_space *sp = s->space;
    const kgi_cand *x = &sp->cand[c];
    const kgi_space_tmpl *t = &sp->tmpl[x->tmpl];
    for (int tries = 0; tries < 64; tries++) {
        int p = random_below(rng, t->nparams);
        if (t->nvalues[p] < 2)
            continue;
        unsigned char coord[KGI_SPACE_MAX_DIMS];
        memcpy(coord, x->coord, sizeof coord);
        int v = coord[p] + (random_below(rng, 2) ? 1 : -1);
        if (v < 0 || v >= t->nvalues[p])
            continue;
        coord[p] = (unsigned char)v;
        int y = kgi_space_find(sp, x->tmpl, coord);
        if (y >= 0)
            return y;
    }
    return -1;
}

/* A random candidate not evaluated yet, or -1 when all are. */
static int fresh_candidate(const kgi_search *s, unsigned long long *rng)
{
    int n = s->space->n, start = random_below(rng, n);
    for (int i = 0; i < n; i++) {
        int c = (start + i) % n;
        if (isnan(s->score[c]))
            return c;
    }
    return -1;
}

/*
 * Simulated annealing on log(time): from a random start, propose `width`
 * neighbours at a time, evaluate them together, and move to each in turn
 * with the Metropolis rule at a temperature that falls geometrically from
 * 0.5 to 0.005 over the budget (a move 35% slower is taken half the time at
 * the start, almost never at the end). A failed candidate is never moved to.
 * When the neighbourhood is exhausted it restarts from a fresh candidate.
 */
int kgi_strategy_anneal(kgi_search *s)
{
    int n = s->space->n;
    if (n == 0)
        return -1;
    unsigned long long rng = s->seed;
    int budget = kgi_search_left(s) < n ? kgi_search_left(s) : n;
    const double t0 = 0.5, t1 = 0.005;
    int cur = random_below(&rng, n);
    kgi_search_eval(s, &cur, 1);
    int *prop = malloc((size_t)s->width * sizeof *prop);
    if (!prop)
        return s->best;
    int idle = 0;
    while (!s->stopped && kgi_search_left(s) > 0 && s->evaluated < n) {
        int np = 0;
        for (int tries = 0; np < s->width && tries < 8 * s->width; tries++) {
            int y = neighbour(s, cur, &rng);
            if (y < 0)
                break;
            int dup = 0;
            for (int j = 0; j < np && !dup; j++)
                dup = prop[j] == y;
            if (!dup && isnan(s->score[y]))
                prop[np++] = y;
        }
        if (np == 0 || ++idle > 64) {
            /* Nothing new around here: jump to a fresh candidate. */
            int f = fresh_candidate(s, &rng);
            if (f < 0)
                break;
            prop[0] = f, np = 1, idle = 0;
        }
        if (kgi_search_eval(s, prop, np) > 0)
            idle = 0;
        double frac = budget > 1 ? (double)s->used / budget : 1.0;
        double temp = t0 * pow(t1 / t0, fmin(1.0, frac));
        for (int j = 0; j < np; j++) {
            double a = s->score[prop[j]], b = s->score[cur];
            if (!isfinite(a))
                continue;
            if (!isfinite(b) || a <= b || random_unit(&rng) < exp(-(log(a) - log(b)) / temp))
                cur = prop[j];
        }
    }
    free(prop);
    return s->best;
}

/* qsort over candidates by a time, fastest first, ties by `key`
 * (context-free: both ride along). */
typedef struct scored {
    double ms;
    int c, key;
} scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms < y->ms ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Parameters in which candidates a and b differ (different templates: all). */
static int distance(const kgi_space *sp, int a, int b)
{
    const kgi_cand *x = &sp->cand[a], *y = &sp->cand[b];
    if (x->tmpl != y->tmpl)
        return KGI_SPACE_MAX_DIMS + 1;
    int d = 0;
    for (int p = 0; p < sp->tmpl[x->tmpl].nparams; p++)
        d += x->coord[p] != y->coord[p];
    return d;
}

/*
 * out := one candidate per set of candidates the model cannot tell apart
 * (equal finite predictions; without predictions every candidate is its
 * own set), in the order of each set's first member in s->rank. A set's
 * candidate is the member nearest an anchor (fewest parameters differing
 * from one of rank[0..nanchors), the kernels kg_matmul measured fastest
 * near this shape), the first in rank order among equals: what the model
 * does not see, a cross-block exchange or predicated copies, is taken
 * from kernels that were measured. The anchors themselves come first.
 * Returns the count, or -1 out of memory.
 */
static int distinct_predictions(const kgi_search *s, int *out)
{
    const kgi_space *sp = s->space;
    int n = sp->n, nv = 0, no = 0, na = s->nanchors < n ? s->nanchors : n;
    if (!s->pred) {
        memcpy(out, s->rank, (size_t)n * sizeof *out);
        return n;
    }
    double *v = malloc((size_t)n * sizeof *v + 1);
    int *pick = malloc((size_t)n * sizeof *pick + 1), *near = malloc((size_t)n * sizeof *near + 1);
    if (!v || !pick || !near) {
        free(v);
        free(pick);
        free(near);
        return -1;
    }
    for (int c = 0; c < n; c++)
        if (isfinite(s->pred[c]))
            v[nv++] = s->pred[c];
    qsort(v, (size_t)nv, sizeof *v, cmp_double);
    int nu = 0;
    for (int i = 0; i < nv; i++)
        if (nu == 0 || v[i] != v[nu - 1])
            v[nu++] = v[i];
    for (int i = 0; i < nu; i++)
        pick[i] = -1;
    /* each set's member nearest an anchor; the anchors' own sets are theirs */
    for (int i = 0; i < n; i++) {
        int c = s->rank[i];
        if (!isfinite(s->pred[c]))
            continue;
        size_t at = (size_t)((const double *)bsearch(&s->pred[c], v, (size_t)nu, sizeof *v, cmp_double) - v);
        int d = i < na ? -1 : KGI_SPACE_MAX_DIMS + 1; /* an anchor is nearest itself */
        for (int a = 0; a < na && i >= na; a++) {
            int da = distance(sp, c, s->rank[a]);
            d = da < d ? da : d;
        }
        if (pick[at] < 0 || d < near[at])
            pick[at] = c, near[at] = d;
    }
    for (int i = 0; i < n; i++) {
        int c = s->rank[i];
        if (isfinite(s->pred[c])) {
            size_t at = (size_t)((const double *)bsearch(&s->pred[c], v, (size_t)nu, sizeof *v, cmp_double) - v);
            if (i < na) {
                if (pick[at] == c)
                    pick[at] = -1; /* an anchor: always, and its set is taken */
            } else if (pick[at] < 0) {
                continue; /* taken */
            } else {
                c = pick[at];
                pick[at] = -1;
            }
        }
        out[no++] = c;
    }
    free(v);
    free(pick);
    free(near);
    return no;
}

/*
 * The default. First, 3/4 of the budget (default 64: 48) in the order
 * s->rank gives (the model's, with the catalogue's picks for the shape
 * first: tune.c), one candidate per prediction (distinct_predictions):
 * candidates the model predicts alike differ only in what it does not see
 * (where a cross-block fragment exchange or predicated copies pay off),
 * and a whole budget spent on one of its guesses tells nothing about the
 * next. Then a local search with the rest, for what the model does not
 * see: each round takes the AUTO_PARENTS fastest candidates found so far
 * (more, down the list, when those have no neighbour left); their
 * neighbours not evaluated yet (one parameter one value up or down, kept
 * when check() admitted the combination) are estimated as the parent's
 * measured time scaled by the model's ratio between them (ties in the
 * model's order), and the AUTO_ROUND best estimates are evaluated; the
 * next round starts from what they found. Rounds go on while the budget
 * lasts and new neighbours remain. A space no larger than the budget is
 * evaluated whole.
 */
#define AUTO_PARENTS 4
#define AUTO_ROUND 16
#define AUTO_BUDGET 64

int kgi_strategy_auto(kgi_search *s)
{
    const kgi_space *sp = s->space;
    int n = sp->n;
    if (n == 0)
        return -1;
    if (!s->rank)
        return kgi_strategy_random(s);
    int budget = s->budget > 0 ? s->budget : AUTO_BUDGET;
    if (budget >= n) {
        /* a space this small: all of it, the model's best first */
        kgi_search_eval(s, s->rank, n);
        return s->best;
    }
    int *todo = malloc((size_t)n * sizeof *todo), *pos = malloc((size_t)n * sizeof *pos);
    scored *found = malloc((size_t)n * sizeof *found), *est = malloc((size_t)n * sizeof *est);
    int first = todo ? distinct_predictions(s, todo) : -1;
    if (first < 0 || !pos || !found || !est)
        goto out;
    for (int i = 0; i < n; i++)
        pos[s->rank[i]] = i;
    s->budget = budget - budget / 4;
    kgi_search_eval(s, todo, first);
    s->budget = budget;
    while (!s->stopped && kgi_search_left(s) > 0) {
        int nf = 0;
        for (int c = 0; c < n; c++)
            if (isfinite(s->score[c]) && s->score[c] >= 0)
                found[nf++] = (scored){s->score[c], c, c};
        qsort(found, (size_t)nf, sizeof *found, cmp_scored);
        /* the parents' neighbours, each once with its best estimate; when
         * the best few have none left, the next best are parents too */
        int nt = 0;
        for (int f = 0; f < nf && (f < AUTO_PARENTS || nt == 0); f++) {
            int pc = found[f].c;
            const kgi_cand *x = &sp->cand[pc];
            const kgi_space_tmpl *t = &sp->tmpl[x->tmpl];
            for (int p = 0; p < t->nparams; p++)
                for (int dir = -1; dir <= 1; dir += 2) {
                    unsigned char coord[KGI_SPACE_MAX_DIMS];
                    memcpy(coord, x->coord, sizeof coord);
                    int v = coord[p] + dir;
                    if (v < 0 || v >= t->nvalues[p])
                        continue;
                    coord[p] = (unsigned char)v;
                    int y = kgi_space_find(sp, x->tmpl, coord);
                    if (y < 0 || !isnan(s->score[y]))
                        continue;
                    double e = found[f].ms;
                    if (s->pred && isfinite(s->pred[y]) && isfinite(s->pred[pc]) && s->pred[pc] > 0)
                        e *= s->pred[y] / s->pred[pc];
                    else if (s->pred)
                        e = INFINITY; /* the model says it cannot run: last */
                    int at = 0;
                    while (at < nt && est[at].c != y)
                        at++;
                    if (at == nt)
                        est[nt++] = (scored){e, y, pos[y]};
                    else if (e < est[at].ms)
                        est[at].ms = e;
                }
        }
        if (nt == 0)
            break;
        qsort(est, (size_t)nt, sizeof *est, cmp_scored);
        int nr = nt < AUTO_ROUND ? nt : AUTO_ROUND;
        for (int i = 0; i < nr; i++)
            todo[i] = est[i].c;
        if (kgi_search_eval(s, todo, nr) == 0)
            break;
    }
out:
    free(todo);
    free(pos);
    free(found);
    free(est);
    return s->best;
}

static const struct {
    const char *name;
    kgi_strategy_fn fn;
} strategies[] = {
    {"auto", kgi_strategy_auto},
    {"exhaustive", kgi_strategy_exhaustive},
    {"random", kgi_strategy_random},
    {"anneal", kgi_strategy_anneal},
    {"model", kgi_strategy_model},
};

kgi_strategy_fn kgi_strategy_find(const char *name)
{
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
        if (strcmp(strategies[i].name, name) == 0)
            return strategies[i].fn;
    return NULL;
}

const char *kgi_strategy_names(void) { return "auto, exhaustive, random, anneal, model"; }
