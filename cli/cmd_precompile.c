/*
 * cmd_precompile.c -- `kgen precompile`: every kernel of the catalogue for
 * this GPU's architecture (or --arch sm_XY), in every layout the catalogue
 * has times for, compiled into the disk cache, so that a deployment's
 * kg_matmul pays NVRTC once. Compiles run in threads, one context each
 * (NVRTC is thread-safe; a context is used by one thread at a time),
 * the largest tiles first: they unroll the most code and compile the
 * slowest (2-3 s against 0.2-1 s for the rest, on an H100 machine's CPU), so
 * that none of them starts last and keeps one thread busy alone at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "runtime/catalogue.h"

typedef struct work {
    const char *template_dir;
    int arch;
    kgc_compile_job *jobs;
    int njobs, next;
    pthread_mutex_t mu;
} work;

static int by_tile(const void *a, const void *b)
{
    const kgc_compile_job *x = a, *y = b;
    if (x->order != y->order)
        return x->order > y->order ? -1 : 1;
    return x->kernel != y->kernel ? x->kernel - y->kernel : x->layout - y->layout;
}

static int by_kernel(const void *a, const void *b)
{
    const kgc_compile_job *x = a, *y = b;
    return x->kernel != y->kernel ? x->kernel - y->kernel : x->layout - y->layout;
}

/* The first line of an error, so that a compile log does not flood the summary. */
static void first_line(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%.*s", (int)strcspn(src, "\n"), src);
}

static void *worker(void *arg)
{
    work *w = arg;
    kg_context *ctx = NULL;
    kg_status st = kg_context_open(&ctx, KG_DEVICE_NONE);
    char open_error[512] = "";
    if (st == KG_OK && w->template_dir)
        st = kg_set_template_path(ctx, w->template_dir);
    if (st == KG_OK)
        st = kg_set_arch(ctx, w->arch);
    if (st != KG_OK)
        first_line(open_error, sizeof open_error, ctx ? kg_last_error(ctx) : kg_strerror(st));
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int i = w->next < w->njobs ? w->next++ : -1;
        pthread_mutex_unlock(&w->mu);
        if (i < 0)
            break;
        kgc_compile_job *j = &w->jobs[i];
        if (open_error[0]) {
            j->outcome = 2;
            snprintf(j->error, sizeof j->error, "%s", open_error);
            continue;
        }
        kg_cubin *cubin;
        if ((st = kg_compile(ctx, j->tmpl, j->config, w->arch, &cubin)) != KG_OK) {
            j->outcome = 2;
            first_line(j->error, sizeof j->error, kg_last_error(ctx));
            continue;
        }
        const kg_compile_info *info = kg_cubin_info(cubin);
        j->outcome = info->cache ? 1 : 0;
        j->ms = info->compile_ms;
        kg_cubin_free(cubin);
        char problem[512];
        if (kgi_cache_take_problem(ctx, problem, sizeof problem)) { /* compiled, but not stored */
            j->outcome = 2;
            snprintf(j->error, sizeof j->error, "compiled, but not stored in the disk cache: %.400s", problem);
        }
    }
    kg_context_close(ctx);
    return NULL;
}

int kgc_compile_jobs(const char *template_dir, int arch, kgc_compile_job *jobs, int n, int threads)
{
    if (threads > n)
        threads = n > 0 ? n : 1;
    if (threads < 1)
        threads = 1;
    work w = {template_dir, arch, jobs, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int started = 0;
    for (int i = 0; tid && i < threads; i++)
        started += pthread_create(&tid[i], NULL, worker, &w) == 0 ? 1 : (tid[i] = 0, 0);
    if (started == 0)
        worker(&w);
    for (int i = 0; tid && i < threads; i++)
        if (tid[i])
            pthread_join(tid[i], NULL);
    free(tid);
    return started;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The catalogue to compile: --catalogue FILE, else the one for `arch`
 * (KGEN_CATALOGUE's or the embedded one). NULL after printing why. */
static kgi_catalogue *load(kg_context *ctx, const char *file, int arch, const kgi_catalogue **use)
{
    *use = NULL;
    if (file) {
        size_t n;
        char *text = kgc_slurp(file, &n);
        if (!text)
            return NULL;
        kgi_catalogue *c = NULL;
        char err[1024];
        if (kgi_catalogue_parse(text, n, file, &c, err, sizeof err) != 0)
            fprintf(stderr, "kgen: precompile: %s\n", err);
        free(text);
        *use = c;
        return c;
    }
    kg_status st = kgi_catalogue_for(ctx, arch, use);
    if (st != KG_OK) {
        kgc_report(ctx, st, "precompile");
        return NULL;
    }
    if (!*use) {
        char have[256] = "";
        for (const kgi_embedded *e = kgi_embedded_catalogues; e->module; e++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "", e->module);
        fprintf(stderr, "kgen: precompile: no catalogue for sm_%d (embedded: %s); nothing to compile\n", arch,
                have[0] ? have : "none");
    }
    return NULL;
}

int kgc_cmd_precompile(int argc, char **argv)
{
    const char *jobs_text = NULL, *file = NULL;
    const kgc_opt own[] = {{"--jobs", "-j", 1, &jobs_text}, {"--catalogue", NULL, 1, &file}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    kgi_catalogue *owned = NULL;
    kgc_compile_job *jobs = NULL;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto out;
    if (args.nparam > 0 || strcmp(args.tmpl, "matmul") != 0) {
        fprintf(stderr, "kgen: precompile takes no configuration or --template: it compiles the catalogue's kernels\n");
        rc = KGC_USAGE;
        goto out;
    }
    long njobs_opt = 0;
    if (jobs_text && kgc_int("--jobs", jobs_text, 1, 1024, &njobs_opt) != 0) {
        rc = KGC_USAGE;
        goto out;
    }
    /* No --arch: the first GPU's architecture. */
    int arch = args.arch;
    if (!arch) {
        int count = 0;
        kg_device_info info;
        if (kg_device_count(ctx, &count) != KG_OK || count < 1 || kg_device_query(ctx, 0, &info) != KG_OK) {
            fprintf(stderr, "kgen: precompile: no GPU found; give the architecture to compile for with --arch sm_XY\n");
            rc = KGC_FAIL;
            goto out;
        }
        arch = info.cc_major * 10 + info.cc_minor;
    }
    const kgi_catalogue *cat;
    owned = load(ctx, file, arch, &cat);
    if (!cat) {
        rc = KGC_FAIL;
        goto out;
    }
    /* once there is something to compile: the directory made ready and written to */
    const char *why = NULL, *dir = kgi_cache_dir_writable(ctx, &why);
    if (!dir) {
        fprintf(stderr, "kgen: precompile: the disk cache cannot be used (%s): there is nowhere to compile into\n",
                why && why[0] ? why : "off");
        rc = KGC_FAIL;
        goto out;
    }
    /* every kernel in every layout it has times for */
    int njobs = 0;
    if (!(jobs = calloc((size_t)cat->nkernels * 4, sizeof *jobs))) {
        fprintf(stderr, "kgen: precompile: out of memory\n");
        rc = KGC_FAIL;
        goto out;
    }
    for (int k = 0; k < cat->nkernels; k++)
        for (int l = 0; l < 4; l++)
            if (kgi_catalogue_in_layout(cat, k, l)) {
                kgc_compile_job *j = &jobs[njobs++];
                j->tmpl = cat->kernels[k].tmpl;
                snprintf(j->config, sizeof j->config, "%s layout=%s", cat->kernels[k].config, kgi_layout_name(l));
                j->kernel = k, j->layout = l;
                j->order = (long)cat->kernels[k].tile_m * cat->kernels[k].tile_n;
            }
    qsort(jobs, (size_t)njobs, sizeof *jobs, by_tile);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = njobs_opt ? (int)njobs_opt : cores > 0 ? (int)cores : 1;
    double t0 = now_s();
    int started = kgc_compile_jobs(args.template_dir, arch, jobs, njobs, nthreads);
    double wall = now_s() - t0;
    qsort(jobs, (size_t)njobs, sizeof *jobs, by_kernel); /* failures reported in the catalogue's order */
    int count[3] = {0, 0, 0};
    for (int i = 0; i < njobs; i++) {
        count[jobs[i].outcome]++;
        if (jobs[i].outcome == 2) {
            const kgi_cat_kernel *k = &cat->kernels[jobs[i].kernel];
            fprintf(stderr, "kgen: precompile: kernel %d (%s, line %d) in layout %s: %s\n", k->id, k->tmpl, k->line,
                    kgi_layout_name(jobs[i].layout), jobs[i].error);
        }
    }
    printf("catalogue sm_%d (%s: %s, %s) for sm_%d into %s\n", cat->arch, cat->name, cat->device, cat->date, arch, dir);
    printf("%d kernels (%d configurations in the layouts they have times for): %d compiled, %d already cached, "
           "%d failed in %.1f s (%d thread%s)\n",
           njobs, cat->nkernels, count[0], count[1], count[2], wall, started ? started : 1, started > 1 ? "s" : "");
    rc = count[2] ? KGC_FAIL : KGC_OK;
out:
    free(jobs);
    kgi_catalogue_free(owned);
    kg_context_close(ctx);
    return rc;
}
