/*
 * final.c -- the tuner's final stage for one shape (see tune.h): the
 * fastest ok rows of the database re-timed back to back, in rotating
 * rounds, and the result stored as their final_ms.
 *
 * Finalists come from every template whose rows are at the version loaded
 * now (the lookup's rule), not only the ones being tuned: the stage replaces
 * the shape's whole final set. One worker does the timing (on several GPUs
 * of one kind, one of them, throughout: a comparison wants one device).
 * Every finalist already passed the checks at this shape, so a sample is
 * only launches; a sample that fails, faults or hangs drops that finalist
 * (the worker is replaced as in the search) and the others go on. An
 * interrupt, the --time limit or the loss of the worker ends the stage
 * without recording anything.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/tuner.h"

#define FETCH 256 /* rows read to find the finalists among other templates' and versions' rows */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_final(const void *a, const void *b)
{
    const kgi_final_row *x = a, *y = b;
    /* dropped ones (final_ms 0) last */
    double fx = x->final_ms > 0 ? x->final_ms : INFINITY, fy = y->final_ms > 0 ? y->final_ms : INFINITY;
    return (fx > fy) - (fx < fy);
}

static kgi_worker *live_worker(kgi_tuner *t)
{
    for (int i = 0; i < t->nworkers; i++)
        if (t->workers[i].pid > 0)
            return &t->workers[i];
    return NULL;
}

static int interrupted(const kgi_tuner *t) { return t->o->interrupted && *t->o->interrupted; }

/* Template versions as loaded now, for the rows' templates. */
typedef struct versions {
    kgi_host *host;
    char name[16][64];
    int version[16];
    int n;
} versions;

static int version_of(versions *vs, const char *name)
{
    for (int i = 0; i < vs->n; i++)
        if (strcmp(vs->name[i], name) == 0)
            return vs->version[i];
    int v = vs->host ? kgi_host_template_version(vs->host, name) : -1;
    if (vs->n < 16) {
        snprintf(vs->name[vs->n], sizeof vs->name[0], "%s", name);
        vs->version[vs->n++] = v;
    }
    return v;
}

/* One sample of finalist f on worker w: 0 with the result in *msg, -1 with
 * why in f->failed (the worker is replaced when it died or hung; its pid is
 * 0 when that failed), -2 when the run was interrupted meanwhile. */
static int sample(kgi_tuner *t, kgi_worker *w, kgi_final_row *f, kgi_wmsg *msg)
{
    const kgi_tune_shape *sh = &t->cur->sh;
    kgi_wreq q;
    memset(&q, 0, sizeof q);
    q.op = KGI_WOP_FINAL;
    snprintf(q.tmpl, sizeof q.tmpl, "%s", f->tmpl);
    snprintf(q.config, sizeof q.config, "%s", f->config);
    snprintf(q.layout, sizeof q.layout, "%s", t->o->layout);
    q.m = sh->m, q.n = sh->n, q.k = sh->k;
    q.alpha = t->o->alpha, q.beta = t->o->beta;
    q.sample_ms = t->o->final_sample_ms;
    q.expect_ms = f->search_ms;
    q.seed = t->o->seed ^ 0x6b67656eULL; /* the search's operands */
    /* a warm-up launch and the sample, with room to spare */
    double limit = t->o->timeout_s + 10.0 * (2.0 * f->search_ms + q.sample_ms) / 1e3;
    int rc = kgi_worker_send(w, &q) == 0 ? 1 : -1;
    double end = kgi_now() + limit;
    while (rc == 1) {
        double left = end - kgi_now();
        if (left <= 0) {
            rc = 0;
            break;
        }
        struct pollfd p = {w->fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (interrupted(t))
            break;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r > 0) {
            rc = kgi_worker_read(w, msg) == 1 && msg->type == KGI_WMSG_RESULT ? 2 : -1;
            break;
        }
    }
    if (interrupted(t)) {
        /* Ctrl-C reached the worker too (one process group): no verdict on
         * the finalist, no new worker */
        kgi_worker_kill(w, NULL, 0);
        return -2;
    }
    if (rc == 2 && msg->res.outcome == KGI_OUT_OK && msg->res.time_ms > 0 && !msg->fatal)
        return 0;
    char how[128] = "";
    if (rc == 2)
        snprintf(f->failed, sizeof f->failed, "final stage, sample %d: %s: %.180s", f->samples + 1,
                 kgi_outcome_name(msg->res.outcome), msg->res.reason);
    if (rc != 2 || msg->fatal) {
        kgi_worker_kill(w, how, sizeof how);
        if (rc != 2)
            snprintf(f->failed, sizeof f->failed, "final stage, sample %d: the GPU worker on device %d %s%s",
                     f->samples + 1, w->device, rc == 0 ? "did not answer in time; killed" : "ended: ",
                     rc == 0 ? "" : how);
        char err[1024];
        int device = w->device;
        t->rep->restarts++;
        if (kgi_worker_spawn(w, t->o->exe, device, t->o->template_path, 120.0, err, sizeof err) != KG_OK)
            w->pid = 0;
    }
    return -1;
}

/* Whether the shape's final set in the database is still current: this
 * run timed nothing new for the shape (any new ok row would have cleared
 * the set: db.c's trigger; a candidate pruned before it ran, which a second
 * run may meet where the first stopped, changes no time), every one of the
 * n finalists chosen now holds a final time, and no other row does. Then
 * *f gets the stored times. */
static int final_current(kgi_tuner *t, const kgi_dbkey *shape, kgi_final_row *f, int n)
{
    const kgi_shape_report *s = t->cur;
    for (int c = 0; c < t->sp->n; c++)
        if (!s->cached[c] && s->res[c].outcome != KGI_OUT_NONE && kgi_outcome_ran(s->res[c].outcome))
            return 0;
    kgi_dbkey *keys = calloc(FETCH, sizeof *keys);
    double *ms = calloc(FETCH, sizeof *ms);
    int rows = keys && ms ? kgi_db_fastest(t->db, shape, keys, ms, FETCH) : -1;
    int finalists = 0, others = rows < 0;
    for (int i = 0; i < rows && !others; i++) {
        kgi_result r;
        if (kgi_db_get(t->db, &keys[i], &r) != 1) {
            others = 1;
            break;
        }
        int j = 0;
        while (j < n && !(strcmp(f[j].tmpl, keys[i].tmpl) == 0 && strcmp(f[j].config, keys[i].config) == 0))
            j++;
        if (j < n && r.final_ms > 0 && f[j].final_ms == 0) {
            f[j].final_ms = r.final_ms;
            finalists++;
        } else {
            others += r.final_ms > 0; /* another row, or one at another version */
        }
    }
    free(keys);
    free(ms);
    return finalists == n && others == 0;
}

kg_status kgi_tuner_final(kgi_tuner *t)
{
    const kgi_tune_opts *o = t->o;
    kgi_shape_report *s = t->cur;
    if (o->final_n <= 0 || o->dry_run || !t->db)
        return KG_OK;
    if (t->rep->interrupted || t->rep->timed_out) {
        snprintf(s->final_note, sizeof s->final_note, "not run: the tuning was %s",
                 t->rep->interrupted ? "interrupted" : "stopped at its time limit");
        return KG_OK;
    }
    double t0 = kgi_now();
    kgi_dbkey shape = t->key, *keys = calloc(FETCH, sizeof *keys);
    double *ms = calloc(FETCH, sizeof *ms);
    kg_status st = KG_OK;
    if (!keys || !ms) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    shape.m = s->sh.m, shape.n = s->sh.n, shape.k = s->sh.k;
    int rows = kgi_db_fastest(t->db, &shape, keys, ms, FETCH);
    if (rows < 0) {
        snprintf(t->err, t->errlen, "cannot read %s: %s", kgi_db_path(t->db), kgi_db_error(t->db));
        st = t->fatal = KG_ERR_DB;
        goto done;
    }
    /* finalists: rows of any template at the version loaded now (the lookup's rule) */
    int n = 0, want = o->final_n;
    s->final = calloc((size_t)want, sizeof *s->final);
    if (!s->final) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    versions vs = {.host = kgi_host_new(), .n = 0};
    if (vs.host && o->template_path && kgi_host_set_path(vs.host, o->template_path) != 0) {
        kgi_host_free(vs.host);
        vs.host = NULL;
    }
    if (!vs.host) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < rows && n < want; i++) {
        if (version_of(&vs, keys[i].tmpl) != keys[i].tmpl_version)
            continue;
        kgi_final_row *f = &s->final[n];
        snprintf(f->tmpl, sizeof f->tmpl, "%s", keys[i].tmpl);
        snprintf(f->config, sizeof f->config, "%s", keys[i].config);
        f->search_ms = ms[i];
        keys[n] = keys[i];
        n++;
    }
    kgi_host_free(vs.host);
    s->nfinal = n;
    if (n == 0) {
        snprintf(s->final_note, sizeof s->final_note, "not run: no configuration ran correctly at this shape");
        goto done;
    }
    if ((s->final_current = final_current(t, &shape, s->final, n))) {
        qsort(s->final, (size_t)n, sizeof *s->final, cmp_final);
        goto done;
    }
    for (int i = 0; i < n; i++)
        s->final[i].final_ms = 0;
    int rounds = o->final_rounds > 0 ? o->final_rounds : 1;
    double *samples = calloc((size_t)n * rounds, sizeof *samples);
    if (!samples) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    kgi_worker *w = kgi_tuner_start_workers(t) == KG_OK ? live_worker(t) : NULL;
    const char *stop = w ? NULL : "no GPU worker is running";
    for (int r = 0; r < rounds && !stop; r++) {
        for (int j = 0; j < n && !stop; j++) {
            kgi_final_row *f = &s->final[(j + r) % n]; /* each round starts one further on */
            if (f->failed[0])
                continue;
            if (interrupted(t)) {
                stop = "interrupted";
                break;
            }
            if (t->deadline > 0 && kgi_now() > t->deadline) {
                t->rep->timed_out = 1;
                stop = "stopped at the --time limit";
                break;
            }
            kgi_wmsg msg;
            int got = sample(t, w, f, &msg);
            if (got == -2)
                stop = "interrupted";
            else if (got == 0) {
                samples[(size_t)(f - s->final) * rounds + f->samples++] = msg.res.time_ms;
                f->launches = msg.res.reps;
            } else if (w->pid <= 0)
                stop = "its GPU worker died and could not be restarted";
        }
    }
    if (stop) {
        if (strcmp(stop, "interrupted") == 0)
            t->rep->interrupted = 1;
        snprintf(s->final_note, sizeof s->final_note, "not recorded: %s", stop);
        for (int i = 0; i < n; i++)
            s->final[i].final_ms = 0;
        free(samples);
        goto done;
    }
    int nk = 0;
    double *fms = ms; /* reused: the finals of the recorded finalists, in keys' order */
    for (int i = 0; i < n; i++) {
        kgi_final_row *f = &s->final[i];
        double *x = samples + (size_t)i * rounds;
        if (f->failed[0] || f->samples == 0)
            continue;
        qsort(x, (size_t)f->samples, sizeof *x, cmp_double);
        int h = f->samples / 2;
        f->final_ms = f->samples % 2 ? x[h] : 0.5 * (x[h - 1] + x[h]);
        f->min_ms = x[0], f->max_ms = x[f->samples - 1];
        keys[nk] = keys[i];
        fms[nk++] = f->final_ms;
    }
    free(samples);
    if (nk == 0)
        snprintf(s->final_note, sizeof s->final_note, "not recorded: every finalist failed");
    else if (kgi_db_set_final(t->db, keys, fms, nk) != KG_OK) {
        snprintf(t->err, t->errlen, "cannot record the final stage in %s: %s", kgi_db_path(t->db),
                 kgi_db_error(t->db));
        snprintf(s->final_note, sizeof s->final_note, "not recorded: the database refused the write");
        st = t->fatal = KG_ERR_DB;
    }
    qsort(s->final, (size_t)n, sizeof *s->final, cmp_final);
done:
    free(keys);
    free(ms);
    s->final_wall_s = kgi_now() - t0;
    return st;
}
