/*
 * tune.c -- a tuning run: workers, space, database, pool, then a strategy
 * per shape (see tune.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autotune/configs.h"
#include "autotune/strategy.h"
#include "autotune/tuner.h"
#include "autotune/walkcache.h"
#include "gen/config.h"
#include "gen/walk.h"
#include "runtime/catalogue.h"

/* Starts one worker per requested device and checks that they are the same
 * kind of GPU as the probe found (one database key per run). */
static kg_status start_workers(kgi_tuner *t, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    t->workers_started = 1;
    int zero = 0;
    const int *devs = o->ndevices > 0 ? o->devices : &zero;
    int ndev = o->ndevices > 0 ? o->ndevices : 1;
    kg_status st = kgi_worker_spawn(&t->workers[0], o->exe, devs[0], o->template_path, 120.0, err, errlen);
    if (st != KG_OK)
        return st;
    t->nworkers = 1;
    if (o->all_devices) {
        ndev = t->workers[0].hello.device_count;
        if (ndev > KGI_TUNE_MAX_DEVICES)
            ndev = KGI_TUNE_MAX_DEVICES;
    }
    const kg_device_info *d0 = &t->rep->device;
    for (int i = 0; i < ndev; i++) {
        if (i > 0) {
            if ((st = kgi_worker_spawn(&t->workers[i], o->exe, o->all_devices ? i : devs[i], o->template_path, 120.0,
                                       err, errlen)) != KG_OK)
                return st;
            t->nworkers++;
        }
        int dev = o->all_devices ? i : devs[i];
        const kg_device_info *d = &t->workers[i].hello.info;
        if (strcmp(d->name, d0->name) != 0 || d->cc_major != d0->cc_major || d->cc_minor != d0->cc_minor ||
            d->sm_count != d0->sm_count) {
            snprintf(err, errlen,
                     "device %d (%s, sm_%d%d, %d SMs) differs from device %d (%s, sm_%d%d, %d SMs); tune each kind"
                     " of GPU in its own run (--device)",
                     dev, d->name, d->cc_major, d->cc_minor, d->sm_count, devs[0], d0->name, d0->cc_major,
                     d0->cc_minor, d0->sm_count);
            return KG_ERR_INVALID_ARG;
        }
    }
    t->rep->nworkers = t->nworkers;
    return KG_OK;
}

kg_status kgi_tuner_start_workers(kgi_tuner *t)
{
    if (t->workers_started)
        return t->nworkers > 0 ? KG_OK : KG_ERR_DRIVER;
    char err[1024];
    kg_status st = start_workers(t, err, sizeof err);
    if (st != KG_OK) {
        snprintf(t->err, t->errlen, "%s", err);
        t->fatal = st;
    }
    return st;
}

/* What the run needs of the GPU before it knows whether anything is left
 * to time (the space's limits, the database's device key): a probe of the
 * first device, no worker (they start when a candidate is ready to time). */
static kg_status probe_device(kgi_tuner *t, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    kgi_whello hello;
    kg_status st = kgi_worker_probe(o->exe, o->ndevices > 0 ? o->devices[0] : 0, o->template_path, 120.0, &hello,
                                    err, errlen);
    if (st != KG_OK)
        return st;
    t->rep->have_device = 1;
    t->rep->device = hello.info;
    t->rep->limits = hello.limits;
    return KG_OK;
}

/* CPU time of the calling thread (the walk's cost on a busy machine). */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether the run must stop now: an interrupt or the --time limit (noted in
 * the report). */
static int must_stop(kgi_tuner *t)
{
    if (t->o->interrupted && *t->o->interrupted)
        t->rep->interrupted = 1;
    else if (t->deadline > 0 && kgi_now() > t->deadline)
        t->rep->timed_out = 1;
    return t->rep->interrupted || t->rep->timed_out;
}

/* Progress of the run outside the search (stage "space"). */
static void stage_progress(kgi_tuner *t, const char *stage)
{
    if (!t->o->progress)
        return;
    kgi_tune_progress p = {.stage = stage, .walked = t->sp->enumerated, .rejected = t->sp->rejected,
                           .candidates = t->sp->n, .templates = t->o->ntmpl, .nshapes = t->o->nshapes,
                           .elapsed_s = kgi_now() - t->t0};
    t->o->progress(t->o->progress_ud, &p);
}

/* The walk's tick: progress, and stop on an interrupt or the time limit. */
static int space_tick(void *ud, const kgi_space *sp)
{
    kgi_tuner *t = ud;
    (void)sp;
    stage_progress(t, "space");
    return must_stop(t);
}

/* The walk cache (walkcache.h): with `store` 0, reads this run's space from
 * an earlier run's entry (1: t->sp filled; *key: the entry's key, 0 when
 * there is no cache); with `store` 1, keeps the space just walked under
 * *key (when the modules loaded are still the ones the key was made of). */
static int walk_cache(kgi_tuner *t, kgi_host *h, const kgi_limits *lim, const char *fixed, unsigned long long *key,
                      int store)
{
    const kgi_tune_opts *o = t->o;
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || !kgi_cache_dir(ctx, NULL)) {
        kg_context_close(ctx);
        return 0;
    }
    int hit = 0;
    if (!store) {
        char err[1024];
        int loaded = 1;
        for (int i = 0; i < o->ntmpl && loaded; i++) { /* the key hashes the modules a walk loads */
            kgi_walk *w;
            loaded = kgi_walk_open(h, o->tmpls[i], lim, &w, err, sizeof err) == KG_OK;
            kgi_walk_close(w);
        }
        *key = loaded ? kgi_walkcache_key(h, o->tmpls, o->ntmpl, fixed, o->space, lim) : 0;
        kgi_space got; /* t->sp is empty, with its tick set */
        if ((hit = *key && kgi_walkcache_load(ctx, *key, &got))) {
            got.tick = t->sp->tick, got.tick_ud = t->sp->tick_ud;
            *t->sp = got;
        }
    } else if (*key && !t->sp->stopped && kgi_walkcache_key(h, o->tmpls, o->ntmpl, fixed, o->space, lim) == *key) {
        kgi_walkcache_store(ctx, *key, t->sp);
    }
    kg_context_close(ctx);
    return hit;
}

/*
 * The auto strategy measures the catalogue's picks for a shape first
 * (catalogue_first), but a catalogue kernel with a parameter the space
 * leaves at its default (matmul_warp's walk, spread, cst: their value
 * lists in the template say why) is not among the walked candidates, and a
 * tune of a shape where kg_matmul runs one untuned would time only kernels
 * slower than it and record them over it. So the architecture's catalogue
 * kernels of the templates tuned, in this layout, join the candidates where
 * the space lacks them and check() admits them, as a --configs line does;
 * not under --space, which narrows the space by hand. Each one's canonical
 * text is kept for catalogue_first (a KGEN_CATALOGUE file may spell a
 * configuration otherwise). *added: how many joined.
 */
static kg_status add_catalogue_kernels(kgi_tuner *t, kgi_host *h, const kgi_limits *lim, const char *fixed,
                                       int *added, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    const kgi_catalogue *cat = NULL;
    int lay = kgi_layout_index(o->layout);
    *added = 0;
    if (!t->catctx || lay < 0 || kgi_catalogue_for(t->catctx, t->arch, &cat) != KG_OK || !cat || cat->nkernels < 1)
        return KG_OK;
    if (!(t->cat_canon = calloc((size_t)cat->nkernels, sizeof *t->cat_canon)))
        return KG_ERR_NOMEM;
    t->ncat = cat->nkernels;
    for (int j = 0; j < cat->nkernels; j++) {
        const kgi_cat_kernel *k = &cat->kernels[j];
        int tuned = 0;
        for (int i = 0; i < o->ntmpl && !tuned; i++)
            tuned = strcmp(o->tmpls[i], k->tmpl) == 0;
        if (!tuned || !kgi_catalogue_in_layout(cat, j, lay))
            continue;
        char config[2048], canon[2048], why[1024];
        snprintf(config, sizeof config, "%s %s", k->config, fixed);
        if (kgi_host_check(h, k->tmpl, config, lim, canon, sizeof canon, why, sizeof why) != KG_OK)
            continue; /* not for this device */
        if (!(t->cat_canon[j] = strdup(canon)))
            return KG_ERR_NOMEM;
        if (o->space || kgi_space_lookup(t->sp, k->tmpl, canon) >= 0)
            continue; /* a space narrowed by hand, or walked already */
        kg_status st = kgi_space_add_config(t->sp, h, k->tmpl, canon, lim, err, errlen);
        if (st == KG_ERR_NOMEM)
            return st;
        if (st != KG_OK) { /* the tune goes on without it */
            fprintf(stderr, "kgen tune: catalogue kernel %d (%s) not among the candidates: %s\n", k->id, k->tmpl, err);
            err[0] = '\0';
            continue;
        }
        ++*added;
    }
    return KG_OK;
}

/* Enumerates and checks the space of every template against `lim`. */
static kg_status build_space(kgi_tuner *t, const kgi_limits *lim, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    t->sp->tick = space_tick, t->sp->tick_ud = t;
    kgi_host *h = kgi_host_new();
    if (!h)
        return KG_ERR_NOMEM;
    kg_status st = KG_OK;
    char fixed[64];
    snprintf(fixed, sizeof fixed, "layout=%s", o->layout);
    char lay[KGI_CONFIG_VALUE];
    if (o->space && kgi_config_text_get(o->space, "layout", lay, sizeof lay) == 0) {
        snprintf(err, errlen, "--space: give the layout with --layout, not in the space");
        st = KG_ERR_CONFIG;
        goto done;
    }
    if (o->template_path && kgi_host_set_path(h, o->template_path) != 0) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    if (o->space && (st = kgi_space_check_override(h, o->tmpls, o->ntmpl, o->space, err, errlen)) != KG_OK)
        goto done;
    unsigned long long key = 0;
    if (o->configs) {
        /* exactly the listed configurations: no walk, so nothing to read from or keep in the walk cache;
         * each one check() rejects (for this device, or always) is named, the first 20 */
        int not_timed = 0;
        for (int i = 0; i < o->configs->n && !t->sp->stopped && !must_stop(t); i++) {
            const kgi_config_entry *e = &o->configs->e[i];
            char text[2048];
            snprintf(text, sizeof text, "%s %s", e->config, fixed);
            long rejected = t->sp->rejected;
            int npruned = t->sp->npruned;
            if ((st = kgi_space_add_config(t->sp, h, e->tmpl, text, lim, err, errlen)) != KG_OK) {
                char why[1024];
                snprintf(why, sizeof why, "%s", err);
                snprintf(err, errlen, "%s:%d: %s", o->configs->name, e->line, why);
                goto done;
            }
            if (t->sp->rejected > rejected && ++not_timed <= 20)
                fprintf(stderr, "kgen tune: %s:%d (%s): not timed here: %s\n", o->configs->name, e->line, e->tmpl,
                        t->sp->npruned > npruned ? t->sp->pruned[npruned].reason : "rejected by check()");
        }
        if (not_timed > 20)
            fprintf(stderr, "kgen tune: %s: %d more lines not timed here (rejected by check())\n", o->configs->name,
                    not_timed - 20);
        kgi_space_drop_repeats(t->sp);
        goto walked;
    }
    if ((t->rep->space_cached = walk_cache(t, h, lim, fixed, &key, 0)))
        goto walked;
    for (int i = 0; i < o->ntmpl && !t->sp->stopped; i++)
        if ((st = kgi_space_add_template(t->sp, h, o->tmpls[i], fixed, o->space, lim, err, errlen)) != KG_OK)
            goto done;
    walk_cache(t, h, lim, fixed, &key, 1);
walked:
    stage_progress(t, "space");
    if ((st = kgi_space_finalize(t->sp)) != KG_OK)
        goto done;
    if (!o->configs) {
        int added;
        if ((st = add_catalogue_kernels(t, h, lim, fixed, &added, err, errlen)) != KG_OK)
            goto done;
        t->rep->space_from_catalogue = added;
        if (added > 0 && (st = kgi_space_finalize(t->sp)) != KG_OK) /* their new values ranked */
            goto done;
    }
    if (o->shard_n > 1)
        st = kgi_space_shard(t->sp, o->shard_i, o->shard_n);
done:
    kgi_host_free(h);
    return st;
}

/* The check()-pruned part of the space: counted in the shape's outcomes,
 * not written row by row (a default space rejects over a million
 * combinations per shape; the run's row in the database carries the counts,
 * autotune/README.md). */
static void count_check_pruned(kgi_tuner *t)
{
    t->cur->count[KGI_OUT_PRUNED_CHECK] += (int)t->sp->rejected;
}

/*
 * The auto strategy starts from what kg_matmul would run untuned: the
 * catalogue's best predictions for this shape (runtime/pick.c, the
 * architecture's own catalogue only), at most CATALOGUE_FIRST of them,
 * move to the front of the model's order (the space holds them all,
 * add_catalogue_kernels, but where --space narrows it, check() refuses one
 * on this device, or this shard lacks one). So
 * the search measures them in its first round, and its local search starts
 * around them when they win. Returns how many moved.
 */
#define CATALOGUE_FIRST 8

/* The catalogue the auto strategy measures first (catalogue_first), opened
 * once before any work: a KGEN_CATALOGUE that cannot be read or parsed is
 * an error, as it is for kg_matmul, not a tune without it. */
static kg_status open_catalogue(kgi_tuner *t, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    if (o->configs || strcmp(o->strategy, "auto") != 0)
        return KG_OK;
    kg_status st = kg_context_open(&t->catctx, KG_DEVICE_NONE);
    const kgi_catalogue *cat;
    if (st == KG_OK)
        st = kgi_catalogue_for(t->catctx, t->arch, &cat);
    if (st != KG_OK) {
        snprintf(err, errlen, "%s", t->catctx ? kg_last_error(t->catctx) : kg_strerror(st));
        kg_context_close(t->catctx);
        t->catctx = NULL;
    }
    return st;
}

static int catalogue_first(kgi_tuner *t, const kgi_tune_shape *sh, int *rank, int n)
{
    const kgi_tune_opts *o = t->o;
    if (!t->catctx)
        return 0;
    const kgi_catalogue *cat = NULL;
    int lay = kgi_layout_index(o->layout);
    if (kgi_catalogue_for(t->catctx, t->arch, &cat) != KG_OK || !cat || lay < 0)
        return 0;
    int sms = t->rep->have_device && t->rep->device.sm_count > 0 ? t->rep->device.sm_count : cat->sms;
    kgi_pick picks[CATALOGUE_FIRST];
    int np = kgi_catalogue_rank(cat, lay, sh->m, sh->n, sh->k, kgi_natural_align(lay, sh->m, sh->n, sh->k), sms,
                                -1, picks, CATALOGUE_FIRST);
    if (np > CATALOGUE_FIRST)
        np = CATALOGUE_FIRST;
    int moved = 0;
    for (int i = 0; i < np; i++) {
        const kgi_cat_kernel *k = &cat->kernels[picks[i].kernel];
        const char *canon = picks[i].kernel < t->ncat ? t->cat_canon[picks[i].kernel] : NULL;
        int c = canon ? kgi_space_lookup(t->sp, k->tmpl, canon) : -1;
        if (c < 0)
            continue;
        /* move c to position `moved`, the rest of the order kept */
        int at = moved;
        while (at < n && rank[at] != c)
            at++;
        if (at == n)
            continue;
        memmove(rank + moved + 1, rank + moved, (size_t)(at - moved) * sizeof *rank);
        rank[moved++] = c;
    }
    return moved;
}

/* Tunes one shape with the chosen strategy. */
static kg_status tune_shape(kgi_tuner *t, int si, kgi_strategy_fn strategy)
{
    const kgi_tune_opts *o = t->o;
    kgi_tune_report *rep = t->rep;
    kgi_shape_report *s = &rep->shapes[si];
    int n = t->sp->n;
    s->sh = o->shapes[si];
    s->best = -1;
    s->res = calloc((size_t)n + 1, sizeof *s->res);
    s->cached = calloc((size_t)n + 1, 1);
    rep->nshapes = si + 1;
    if (!s->res || !s->cached)
        return KG_ERR_NOMEM;
    t->shape_index = si;
    t->cur = s;
    t->best_probe_ms = 0;
    memset(t->state, EV_IDLE, (size_t)n + 1);
    kg_gemm g;
    kgi_tuner_gemm(t, &g);
    kgi_pool_gate(t->pool, &g); /* no NVRTC time for kernels that cannot run this shape */
    double t0 = kgi_now();
    count_check_pruned(t);
    kg_status st = KG_OK;
    int *rank = malloc(((size_t)n + 1) * sizeof *rank);
    double *pred = malloc(((size_t)n + 1) * sizeof *pred);
    if (!rank || !pred) {
        free(rank);
        free(pred);
        return KG_ERR_NOMEM;
    }
    kgi_model_rank(t->sp, &t->model, s->sh.m, s->sh.n, s->sh.k, rank, pred);
    s->from_catalogue = catalogue_first(t, &s->sh, rank, n);
    if (must_stop(t)) {
        free(rank);
        free(pred);
        return KG_OK;
    }
    int budget = o->budget;
    if (budget <= 0 && strcmp(o->strategy, "auto") == 0)
        budget = 64; /* kgi_strategy_auto's: 48 of the model's best, then 16 around the fastest */
    else if (budget <= 0 && strcmp(o->strategy, "exhaustive") != 0)
        budget = n / 10 > 20 ? n / 10 : 20;
    s->planned = budget > 0 && budget < n ? budget : n;
    kgi_search search = {.space = t->sp, .eval = o->dry_run ? kgi_tuner_eval_dry : kgi_tuner_eval, .ud = t,
                         .budget = budget, .seed = o->seed, .width = o->dry_run ? 1 : t->nworkers, .rank = rank,
                         .pred = pred, .nanchors = s->from_catalogue};
    if ((st = kgi_search_init(&search)) == KG_OK) {
        strategy(&search);
        kgi_search_free(&search);
    }
    free(rank);
    free(pred);
    if (st == KG_OK && t->fatal == KG_OK)
        st = kgi_tuner_final(t);
    s->wall_s = kgi_now() - t0;
    return st != KG_OK ? st : t->fatal;
}

/* A non-blocking, close-on-exec pipe for the pool to wake the main loop. */
static int notify_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    }
    return 0;
}

static kg_status open_db(kgi_tuner *t, char *err, size_t errlen)
{
    const kgi_tune_opts *o = t->o;
    kgi_tune_report *rep = t->rep;
    int own = 0;
    if (o->db_path)
        snprintf(rep->db_path, sizeof rep->db_path, "%s", o->db_path);
    else if ((own = kgi_db_default_path(rep->db_path, sizeof rep->db_path)) < 0) {
        snprintf(err, errlen, "no database path: set --db, KGEN_DB, XDG_DATA_HOME or HOME");
        return KG_ERR_DB;
    }
    kg_status st = kgi_db_open(rep->db_path, KGI_DB_CREATE | (own == 1 ? KGI_DB_MKDIR : 0), &t->db, err, errlen);
    if (st != KG_OK)
        return st;
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", o->shard_i, o->shard_n > 0 ? o->shard_n : 1);
    if (kgi_db_put_device(t->db, &rep->device) != KG_OK ||
        kgi_db_run_begin(t->db, o->command ? o->command : "", o->strategy, shard, &t->run_id) != KG_OK) {
        snprintf(err, errlen, "cannot write to %s: %s", rep->db_path, kgi_db_error(t->db));
        return KG_ERR_DB;
    }
    return KG_OK;
}

kg_status kgi_tune_run(const kgi_tune_opts *o, kgi_tune_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    kgi_tuner t;
    memset(&t, 0, sizeof t);
    t.o = o, t.rep = rep, t.sp = &rep->space, t.err = err, t.errlen = errlen;
    t.notify[0] = t.notify[1] = -1;
    t.t0 = kgi_now();
    t.deadline = o->time_limit_s > 0 ? t.t0 + o->time_limit_s : 0;
    err[0] = '\0';
    kgi_strategy_fn strategy = kgi_strategy_find(o->strategy);
    kg_status st = KG_OK;
    if (!strategy) {
        snprintf(err, errlen, "unknown strategy '%s' (known: %s)", o->strategy, kgi_strategy_names());
        return KG_ERR_INVALID_ARG;
    }
    int arch;
    stage_progress(&t, "start");
    if (must_stop(&t))
        return KG_OK;
    if (o->dry_run) {
        const kgi_limits *lim = kgi_arch_limits(o->arch);
        if (!lim) {
            snprintf(err, errlen, "unknown architecture sm_%d", o->arch);
            return KG_ERR_INVALID_ARG;
        }
        rep->limits = *lim;
        kgi_model_dev_arch(lim, &t.model);
        arch = o->arch;
        t.arch = arch;
    } else {
        if ((st = probe_device(&t, err, errlen)) != KG_OK)
            goto done;
        kgi_model_dev_device(&rep->limits, &rep->device, &t.model);
        arch = rep->device.cc_major * 10 + rep->device.cc_minor;
        t.arch = arch;
        snprintf(t.key.device, sizeof t.key.device, "%s", rep->device.name);
        t.key.cc = arch;
        t.key.sm_count = rep->device.sm_count;
        snprintf(t.key.dtype, sizeof t.key.dtype, "f32");
        snprintf(t.key.layout, sizeof t.key.layout, "%s", o->layout);
    }
    if ((st = open_catalogue(&t, err, errlen)) != KG_OK)
        goto done;
    double walk0 = kgi_now(), cpu0 = thread_cpu_s();
    st = build_space(&t, &rep->limits, err, errlen);
    rep->space_s = kgi_now() - walk0;
    rep->space_cpu_s = thread_cpu_s() - cpu0;
    if (st != KG_OK || must_stop(&t))
        goto done;
    rep->space_size = t.sp->n;
    if (!o->dry_run && (st = open_db(&t, err, errlen)) != KG_OK)
        goto done;
    if (notify_pipe(t.notify) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        st = KG_ERR_IO;
        goto done;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = o->jobs > 0 ? o->jobs : (cores > 0 ? (int)cores : 1);
    t.jobs = jobs;
    if ((st = kgi_pool_start(&t.pool, jobs, t.sp, &rep->limits, arch, o->template_path, &o->rules, t.notify[1], err,
                             errlen)) != KG_OK)
        goto done;
    t.state = malloc((size_t)t.sp->n + 1);
    rep->shapes = calloc((size_t)o->nshapes, sizeof *rep->shapes);
    if (!t.state || !rep->shapes) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    for (int si = 0; si < o->nshapes && st == KG_OK; si++) {
        st = tune_shape(&t, si, strategy);
        if (rep->interrupted || rep->timed_out)
            break;
    }
done:
    if (t.pool) {
        kgi_pool_stats(t.pool, &rep->compiled, &rep->compiled_from_cache, &rep->compile_ms);
        /* stopped: a compile in flight may take seconds; do not wait for it */
        rep->compiles_left = kgi_pool_stop_within(t.pool, rep->interrupted || rep->timed_out ? 0.2 : -1);
    }
    for (int i = 0; i < t.nworkers; i++) {
        if (rep->interrupted)
            kgi_worker_kill(&t.workers[i], NULL, 0);
        else
            kgi_worker_quit(&t.workers[i]);
    }
    if (t.db) {
        char status[256];
        snprintf(status, sizeof status, "%s; space: %ld combinations, %ld rejected by check(), %d candidates",
                 st != KG_OK ? "failed" : rep->interrupted ? "interrupted" : rep->timed_out ? "time limit" : "done",
                 t.sp->enumerated, t.sp->rejected, t.sp->n);
        kgi_db_run_end(t.db, t.run_id, status);
        kgi_db_close(t.db);
    }
    for (int i = 0; i < 2; i++)
        if (t.notify[i] >= 0)
            close(t.notify[i]);
    free(t.state);
    for (int j = 0; j < t.ncat; j++)
        free(t.cat_canon[j]);
    free(t.cat_canon);
    kg_context_close(t.catctx);
    rep->wall_s = kgi_now() - t.t0;
    if (st != KG_OK && !err[0])
        snprintf(err, errlen, "%s", kg_strerror(st));
    return st;
}

void kgi_tune_report_free(kgi_tune_report *rep)
{
    for (int i = 0; i < rep->nshapes; i++) {
        free(rep->shapes[i].res);
        free(rep->shapes[i].cached);
        free(rep->shapes[i].final);
    }
    free(rep->shapes);
    kgi_space_free(&rep->space);
    memset(rep, 0, sizeof *rep);
}

int kgi_tune_worker(int argc, char **argv)
{
    /* kgen tune --worker FD DEVICE [TEMPLATE_PATH [probe]]: started by the tuner itself, never by hand */
    char *end = NULL;
    long fd = argc >= 4 ? strtol(argv[2], &end, 10) : -1, device = -1;
    if (fd >= 0 && !*end)
        device = strtol(argv[3], &end, 10);
    if (fd < 0 || device < 0 || *end) {
        fprintf(stderr, "kgen: tune --worker FD DEVICE is the tuner's own GPU worker, started by kgen tune;"
                        " run kgen tune --m M --n N --k K instead\n");
        return 2;
    }
    return kgi_worker_main((int)device, (int)fd, argc > 4 ? argv[4] : NULL, argc > 5 && strcmp(argv[5], "probe") == 0);
}
