/*
 * evaluate.c -- the evaluate callback of the real tuner: database, compile
 * pool and GPU workers in one loop (see tune.h for the pipeline).
 *
 * The loop keeps every worker busy with the earliest candidate (in the
 * strategy's order) whose compile has finished, records compile-pruned
 * candidates as the pool reports them, and watches the workers: a worker
 * that answers nothing before its deadline is killed and its candidate
 * recorded as `hang`; one that dies is recorded as `fault`; either way a new
 * worker takes its place and the sweep goes on.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune/tuner.h"

/* The score a strategy sees: time for what ran correctly, else +inf. */
static double score(const kgi_result *r)
{
    return (r->outcome == KGI_OUT_OK || r->outcome == KGI_OUT_SLOW) && r->time_ms > 0 ? r->time_ms : INFINITY;
}

static void fill_key(kgi_tuner *t, int c, kgi_dbkey *key)
{
    const kgi_cand *cand = &t->sp->cand[c];
    *key = t->key;
    snprintf(key->tmpl, sizeof key->tmpl, "%s", t->sp->tmpl[cand->tmpl].name);
    key->tmpl_version = t->sp->tmpl[cand->tmpl].version;
    key->m = t->cur->sh.m, key->n = t->cur->sh.n, key->k = t->cur->sh.k;
    snprintf(key->config, sizeof key->config, "%s", cand->config);
}

static void progress(kgi_tuner *t)
{
    if (!t->o->progress)
        return;
    kgi_shape_report *s = t->cur;
    kgi_tune_progress p = {.shape = t->shape_index, .nshapes = t->o->nshapes, .sh = &s->sh};
    /* what the budget counts (kgi_search_eval: outcomes that ran, and a dry
     * run's would-be-timed), so that done never passes total; pruned and
     * compile errors, free of the budget, are counted apart */
    for (int o = 0; o < KGI_OUT_COUNT; o++)
        if (kgi_outcome_ran((kgi_outcome)o) || o == KGI_OUT_NONE)
            p.done += s->count[o];
    p.total = s->planned;
    for (int o = KGI_OUT_PRUNED_CHECK; o < KGI_OUT_COUNT; o++)
        p.pruned += s->count[o];
    p.failed = s->count[KGI_OUT_WRONG] + s->count[KGI_OUT_FAULT] + s->count[KGI_OUT_HANG] +
               s->count[KGI_OUT_ERROR] + s->count[KGI_OUT_COMPILE_ERROR];
    p.cached = s->cached_n;
    p.timed = s->count[KGI_OUT_OK] + s->count[KGI_OUT_SLOW];
    if (s->best >= 0) {
        p.best_ms = s->res[s->best].time_ms;
        p.best_tmpl = t->sp->tmpl[t->sp->cand[s->best].tmpl].name;
        p.best_config = t->sp->cand[s->best].config;
    }
    p.elapsed_s = kgi_now() - t->t0;
    t->o->progress(t->o->progress_ud, &p);
}

/* Keeps a candidate's result: the report, the database (at once, in its own
 * transaction), the best so far. */
static void record(kgi_tuner *t, int c, const kgi_result *r, int cached)
{
    kgi_shape_report *s = t->cur;
    s->res[c] = *r;
    s->cached[c] = (unsigned char)cached;
    s->count[r->outcome]++;
    s->evaluated++;
    s->cached_n += cached;
    t->state[c] = EV_DONE;
    if (r->outcome == KGI_OUT_OK && (s->best < 0 || r->time_ms < s->res[s->best].time_ms))
        s->best = c;
    if (!cached && t->db && t->fatal == KG_OK) {
        kgi_dbkey key;
        fill_key(t, c, &key);
        if (kgi_db_put(t->db, &key, r, t->run_id, t->o->force) != KG_OK) {
            snprintf(t->err, t->errlen, "cannot record a result in %s: %s", kgi_db_path(t->db), kgi_db_error(t->db));
            t->fatal = KG_ERR_DB;
        }
    }
    progress(t);
}

/* A result for a candidate stopped before the GPU, from its compile. */
static void compiled_result(const kgi_compiled *cc, kgi_result *r)
{
    memset(r, 0, sizeof *r);
    r->outcome = cc->prune;
    snprintf(r->reason, sizeof r->reason, "%s", cc->reason);
    r->registers = cc->info.registers;
    r->spill_bytes = cc->info.spill_stores + cc->info.spill_loads;
    r->smem_bytes = cc->smem;
    r->threads = (int)(cc->geo.block[0] * cc->geo.block[1] * cc->geo.block[2]);
    r->occupancy = cc->occ.occupancy;
    r->m_multiple = (int)cc->geo.m_multiple, r->n_multiple = (int)cc->geo.n_multiple;
    r->k_multiple = (int)cc->geo.k_multiple, r->ld_multiple = (int)cc->geo.ld_multiple;
}

void kgi_tuner_gemm(const kgi_tuner *t, kg_gemm *g)
{
    const kgi_tune_shape *sh = &t->cur->sh;
    kgi_packed_gemm(sh->m, sh->n, sh->k, t->o->layout, t->o->alpha, t->o->beta, g);
}

/* Whether the kernel's preconditions admit the tuned shape with packed
 * operands; records pruned_shape when not (the compile pool stops such a
 * candidate after rendering it, and the same test says why here). */
static int shape_admits(kgi_tuner *t, int c, const kgi_compiled *cc)
{
    kg_gemm g;
    kgi_tuner_gemm(t, &g);
    char why[256];
    if (kgi_pool_admits(&cc->geo, &g, why, sizeof why))
        return 1;
    kgi_result r;
    compiled_result(cc, &r);
    r.outcome = KGI_OUT_PRUNED_SHAPE;
    snprintf(r.reason, sizeof r.reason, "%dx%dx%d: %s", g.m, g.n, g.k, why);
    record(t, c, &r, 0);
    return 0;
}

/* A compiled candidate: recorded when pruned, else READY for a worker. */
static void compiled(kgi_tuner *t, int c)
{
    kgi_compiled cc;
    if (t->state[c] != EV_COMPILING || !kgi_pool_result(t->pool, c, &cc))
        return;
    if (cc.prune != KGI_OUT_NONE && cc.prune != KGI_OUT_PRUNED_SHAPE) {
        kgi_result r;
        compiled_result(&cc, &r);
        record(t, c, &r, 0);
    } else if (shape_admits(t, c, &cc)) {
        t->state[c] = EV_READY;
    }
}

static kgi_worker *idle_worker(kgi_tuner *t)
{
    for (int i = 0; i < t->nworkers; i++)
        if (t->workers[i].pid > 0 && !t->workers[i].busy)
            return &t->workers[i];
    return NULL;
}

static int busy_workers(kgi_tuner *t)
{
    int n = 0;
    for (int i = 0; i < t->nworkers; i++)
        n += t->workers[i].pid > 0 && t->workers[i].busy;
    return n;
}

/* Replaces a dead or killed worker; the run stops when none is left. */
static void respawn(kgi_tuner *t, kgi_worker *w)
{
    char err[1024];
    int device = w->device;
    t->rep->restarts++;
    if (kgi_worker_spawn(w, t->o->exe, device, t->o->template_path, 120.0, err, sizeof err) != KG_OK) {
        w->pid = 0;
        for (int i = 0; i < t->nworkers; i++)
            if (t->workers[i].pid > 0)
                return;
        snprintf(t->err, t->errlen, "no GPU worker left: restarting the one on device %d failed: %s", device, err);
        t->fatal = KG_ERR_DRIVER;
    }
}

static void dispatch(kgi_tuner *t, kgi_worker *w, int c)
{
    const kgi_cand *cand = &t->sp->cand[c];
    kgi_compiled cc;
    kgi_pool_result(t->pool, c, &cc);
    kgi_wreq q;
    memset(&q, 0, sizeof q);
    q.op = KGI_WOP_EVAL;
    snprintf(q.tmpl, sizeof q.tmpl, "%s", t->sp->tmpl[cand->tmpl].name);
    snprintf(q.config, sizeof q.config, "%s", cand->config);
    snprintf(q.layout, sizeof q.layout, "%s", t->o->layout);
    q.m = t->cur->sh.m, q.n = t->cur->sh.n, q.k = t->cur->sh.k;
    q.alpha = t->o->alpha, q.beta = t->o->beta;
    q.m_multiple = (int)cc.geo.m_multiple, q.n_multiple = (int)cc.geo.n_multiple;
    q.k_multiple = (int)cc.geo.k_multiple, q.ld_multiple = (int)cc.geo.ld_multiple;
    q.m_max = (int)cc.geo.m_max, q.n_max = (int)cc.geo.n_max;
    q.max_seconds = t->o->max_seconds;
    q.slow_factor = t->o->slow_factor;
    /* Only a probe long enough that launch overhead does not matter sets a cut. */
    q.cut_ms = t->o->slow_factor > 0 && t->best_probe_ms >= 1.0 ? t->o->slow_factor * t->best_probe_ms : 0;
    q.flush_l2 = t->o->flush_l2;
    q.back_to_back = t->o->back_to_back;
    q.seed = t->o->seed ^ 0x6b67656eULL;
    w->cand = c;
    w->busy = 1;
    w->probe_ms = 0;
    w->started = kgi_now();
    w->deadline = w->started + t->o->timeout_s;
    t->state[c] = EV_RUNNING;
    if (kgi_worker_send(w, &q) != 0) {
        char how[128];
        kgi_worker_kill(w, how, sizeof how);
        kgi_result r;
        compiled_result(&cc, &r);
        r.outcome = KGI_OUT_FAULT;
        snprintf(r.reason, sizeof r.reason, "the GPU worker on device %d was gone before the request (%s)", w->device,
                 how);
        record(t, c, &r, 0);
        respawn(t, w);
    }
}

/* Handles a message (or the death) of a busy worker. */
static void worker_readable(kgi_tuner *t, kgi_worker *w)
{
    kgi_wmsg msg;
    int c = w->cand, rc = kgi_worker_read(w, &msg);
    if (rc == 1 && msg.type == KGI_WMSG_PROBE) {
        /* The kernel ran once: allow the timing loop its time. */
        w->probe_ms = msg.probe_ms;
        w->deadline = kgi_now() + t->o->timeout_s + 1.5 * t->o->max_seconds + 30.0 * msg.probe_ms / 1e3;
        return;
    }
    kgi_compiled cc;
    kgi_pool_result(t->pool, c, &cc);
    if (rc == 1 && msg.type == KGI_WMSG_RESULT) {
        w->busy = 0;
        t->rep->compiled_in_worker += msg.compiled_here;
        if ((msg.res.outcome == KGI_OUT_OK || msg.res.outcome == KGI_OUT_SLOW) &&
            (t->best_probe_ms == 0 || msg.probe_ms < t->best_probe_ms))
            t->best_probe_ms = msg.probe_ms;
        if (!msg.res.registers)
            msg.res.registers = cc.info.registers;
        record(t, c, &msg.res, 0);
        if (msg.fatal) {
            kgi_worker_kill(w, NULL, 0);
            respawn(t, w);
        }
        return;
    }
    char how[128];
    kgi_worker_kill(w, how, sizeof how);
    kgi_result r;
    compiled_result(&cc, &r);
    r.outcome = KGI_OUT_FAULT;
    snprintf(r.reason, sizeof r.reason, "the GPU worker on device %d %s %s", w->device, how,
             w->probe_ms > 0 ? "while timing" : "before the first launch finished");
    record(t, c, &r, 0);
    respawn(t, w);
}

static void worker_timed_out(kgi_tuner *t, kgi_worker *w)
{
    int c = w->cand;
    double waited = kgi_now() - w->started;
    kgi_worker_kill(w, NULL, 0);
    kgi_compiled cc;
    kgi_pool_result(t->pool, c, &cc);
    kgi_result r;
    compiled_result(&cc, &r);
    r.outcome = KGI_OUT_HANG;
    snprintf(r.reason, sizeof r.reason, "no answer from the GPU worker on device %d after %.1f s (%s); killed", w->device,
             waited, w->probe_ms > 0 ? "while timing" : "before the first launch finished");
    record(t, c, &r, 0);
    respawn(t, w);
}

/* Waits for the pool or a worker (or a deadline), and handles what came. */
static void wait_and_handle(kgi_tuner *t)
{
    struct pollfd fds[KGI_TUNE_MAX_DEVICES + 1];
    kgi_worker *who[KGI_TUNE_MAX_DEVICES + 1];
    int nf = 0;
    fds[nf] = (struct pollfd){t->notify[0], POLLIN, 0};
    who[nf++] = NULL;
    double now = kgi_now(), wake = now + 1.0;
    for (int i = 0; i < t->nworkers; i++) {
        kgi_worker *w = &t->workers[i];
        if (w->pid <= 0 || !w->busy)
            continue;
        fds[nf] = (struct pollfd){w->fd, POLLIN, 0};
        who[nf++] = w;
        if (w->deadline < wake)
            wake = w->deadline;
    }
    int ms = wake > now ? (int)((wake - now) * 1000) + 1 : 0;
    int r = poll(fds, (nfds_t)nf, ms);
    if (r < 0 && errno != EINTR)
        return;
    if (r > 0 && (fds[0].revents & POLLIN)) {
        char buf[256];
        while (read(t->notify[0], buf, sizeof buf) > 0)
            ;
    }
    int c;
    while (kgi_pool_take(t->pool, &c))
        compiled(t, c);
    for (int i = 1; i < nf; i++)
        if (r > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            worker_readable(t, who[i]);
    now = kgi_now();
    for (int i = 1; i < nf; i++)
        if (who[i]->pid > 0 && who[i]->busy && now > who[i]->deadline)
            worker_timed_out(t, who[i]);
}

/* Candidates of this shape that ran on the GPU (what budgets count). */
static int ran_total(const kgi_shape_report *s)
{
    return s->count[KGI_OUT_OK] + s->count[KGI_OUT_SLOW] + s->count[KGI_OUT_WRONG] + s->count[KGI_OUT_FAULT] +
           s->count[KGI_OUT_HANG] + s->count[KGI_OUT_ERROR];
}

/* Admits candidates in order: a finished row in the database is reused
 * (resume); the others go to the compile pool, at most `window` ahead.
 * Reused rows that ran count against the budget as they did when they ran:
 * admission stops once `ran_left` of them (less those running or ready to
 * run) are taken, so a resumed search takes the first run's path. */
static void admit(kgi_tuner *t, const int *idx, int n, int *next, int window, int ran_left)
{
    int unresolved = 0, pending = busy_workers(t); /* compiling, or compiled and waiting for a worker */
    for (int i = 0; i < *next; i++) {
        unresolved += t->state[idx[i]] == EV_COMPILING || t->state[idx[i]] == EV_READY;
        pending += t->state[idx[i]] == EV_READY;
    }
    while (*next < n && unresolved < window && pending < ran_left) {
        int c = idx[(*next)++];
        kgi_result r;
        kgi_dbkey key;
        fill_key(t, c, &key);
        if (!t->o->force && kgi_db_get(t->db, &key, &r) == 1 && kgi_outcome_finished(r.outcome)) {
            record(t, c, &r, 1);
            ran_left -= kgi_outcome_ran(r.outcome);
            continue;
        }
        t->state[c] = EV_COMPILING;
        kgi_pool_submit(t->pool, c);
        compiled(t, c); /* compiled for an earlier shape: resolved now */
        unresolved += t->state[c] == EV_COMPILING || t->state[c] == EV_READY;
    }
}

int kgi_tuner_eval(void *ud, const int *idx, int n, int max_ran, double *ms, unsigned char *ran)
{
    kgi_tuner *t = ud;
    for (int i = 0; i < n; i++)
        t->state[idx[i]] = EV_IDLE;
    /* Compile far enough ahead to keep every GPU busy, not the whole list:
     * a budget may end the search long before it. */
    int window = 4 * t->jobs + 2 * t->nworkers;
    int next = 0, first = 0, nran = 0, ran_at_entry = ran_total(t->cur);
    while (t->fatal == KG_OK) {
        int running = busy_workers(t);
        int out_of_time = t->deadline > 0 && kgi_now() > t->deadline;
        if (t->o->interrupted && *t->o->interrupted) {
            for (int i = 0; i < t->nworkers; i++)
                if (t->workers[i].busy)
                    kgi_worker_kill(&t->workers[i], NULL, 0);
            t->rep->interrupted = 1;
            break;
        }
        t->rep->timed_out |= out_of_time;
        int budget_left = nran + running < max_ran;
        if (!out_of_time && budget_left) {
            admit(t, idx, n, &next, window, max_ran - nran);
            nran = ran_total(t->cur) - ran_at_entry;
        }
        while (first < next && t->state[idx[first]] == EV_DONE)
            first++;
        kgi_worker *w;
        /* a candidate still compiling keeps a slot of the budget for itself
         * over those after it, so the budget takes the first candidates of
         * the list that compile and run, the same in every run, while the
         * GPUs need not wait for a slow compile */
        int held = 0;
        for (int i = first; !out_of_time && i < next && nran + busy_workers(t) + held < max_ran; i++) {
            if (t->state[idx[i]] == EV_COMPILING) {
                held++;
                continue;
            }
            if (t->state[idx[i]] != EV_READY)
                continue;
            /* the first candidate to time starts the workers */
            if (kgi_tuner_start_workers(t) != KG_OK || !(w = idle_worker(t)))
                break;
            dispatch(t, w, idx[i]);
        }
        if (t->fatal != KG_OK)
            break;
        running = busy_workers(t);
        if (running == 0 && (first == n || out_of_time || nran >= max_ran))
            break;
        if (running == 0 && t->workers_started && !idle_worker(t)) {
            snprintf(t->err, t->errlen, "no GPU worker is running");
            t->fatal = KG_ERR_DRIVER;
            break;
        }
        wait_and_handle(t);
        nran = ran_total(t->cur) - ran_at_entry;
    }
    /* Once the budget is spent, what came after its last run in the list
     * (compiled ahead and pruned, free of the budget) is not reported: a
     * second run, taking the same rows from the database, stops admitting
     * at that last run, and the search must see the same in both, or the
     * second run takes another path and times what the first did not. */
    int last = n - 1;
    if (nran >= max_ran) {
        while (last >= 0 && !(t->state[idx[last]] == EV_DONE && kgi_outcome_ran(t->cur->res[idx[last]].outcome)))
            last--;
    }
    int done = 0;
    for (int i = 0; i < n; i++) {
        int c = idx[i];
        int ok = t->state[c] == EV_DONE && i <= last;
        ms[i] = ok ? score(&t->cur->res[c]) : NAN;
        ran[i] = ok && kgi_outcome_ran(t->cur->res[c].outcome);
        done += ok;
    }
    return done;
}

/* Whether a dry run must stop: an interrupt or the time limit. */
static int dry_stop(kgi_tuner *t)
{
    if (t->o->interrupted && *t->o->interrupted)
        t->rep->interrupted = 1;
    else if (t->deadline > 0 && kgi_now() > t->deadline)
        t->rep->timed_out = 1;
    return t->rep->interrupted || t->rep->timed_out;
}

/* A dry run's evaluation: compile and prune, and score what would be timed
 * by the model's prediction, so that every strategy can run without a GPU.
 * Works through the list a pool-full at a time. */
int kgi_tuner_eval_dry(void *ud, const int *idx, int n, int max_ran, double *ms, unsigned char *ran)
{
    kgi_tuner *t = ud;
    int chunk = 4 * t->jobs, nran = 0;
    for (int i = 0; i < n; i++)
        ms[i] = NAN;
    for (int start = 0; start < n && nran < max_ran && !dry_stop(t); start += chunk) {
        int end = start + chunk < n ? start + chunk : n;
        for (int i = start; i < end; i++) {
            t->state[idx[i]] = EV_COMPILING;
            kgi_pool_submit(t->pool, idx[i]);
        }
        while (!kgi_pool_wait_for(t->pool, 0.1))
            if (dry_stop(t))
                break;
        int c;
        while (kgi_pool_take(t->pool, &c))
            ;
        for (int i = start; i < end && nran < max_ran; i++) {
            c = idx[i];
            compiled(t, c);
            if (t->state[c] == EV_READY) {
                kgi_compiled cc;
                kgi_pool_result(t->pool, c, &cc);
                kgi_result r;
                compiled_result(&cc, &r);
                r.outcome = KGI_OUT_NONE; /* would be timed */
                snprintf(r.reason, sizeof r.reason, "would be timed");
                r.time_ms = kgi_model_time_ms(&t->model, &t->sp->cand[c].res, cc.info.registers, t->cur->sh.m,
                                              t->cur->sh.n, t->cur->sh.k);
                t->cur->res[c] = r;
                t->cur->evaluated++;
                t->cur->count[KGI_OUT_NONE]++;
                t->state[c] = EV_DONE;
                ms[i] = r.time_ms;
                ran[i] = 1;
                nran++;
                progress(t);
            } else if (t->state[c] == EV_DONE) {
                ms[i] = INFINITY;
            }
        }
    }
    int done = 0;
    for (int i = 0; i < n; i++)
        done += !isnan(ms[i]);
    return done;
}
