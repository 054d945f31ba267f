/*
 * cmd_catalogue.c -- `kgen catalogue candidates|make|kernels|twins`: the steps of
 * building a kernel catalogue that are not a tuning run
 * (scripts/build-catalogue.sh runs them around `kgen tune --configs` and
 * `kgen db export`; catalogue/README.md).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune/catalogue.h"
#include "autotune/space.h"
#include "autotune/twins.h"
#include "cli.h"
#include "runtime/catalogue.h"

static const char usage_line[] = "kgen catalogue candidates|make|kernels|twins ... (see 'kgen help catalogue')";

/* The list as `--configs` reads it. */
static int write_list(const char *path, const kgi_config_list *l, const char *shapes, int arch)
{
    size_t cap = 4096, len = 0;
    for (int i = 0; i < l->n; i++)
        cap += strlen(l->e[i].tmpl) + strlen(l->e[i].config) + 2;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    len += (size_t)snprintf(buf + len, cap - len,
                            "# kgen catalogue candidates for sm_%d over the shapes of %s: %d configurations\n"
                            "# (the model's choice; time them with kgen tune --configs FILE)\n",
                            arch, shapes, l->n);
    for (int i = 0; i < l->n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s %s\n", l->e[i].tmpl, l->e[i].config);
    int rc = kgc_write_file(path, buf, len);
    free(buf);
    return rc;
}

static int candidates(int argc, char **argv)
{
    const char *shapes = NULL, *per = NULL, *max = NULL, *whole = NULL, *output = NULL, *kind = NULL;
    const kgc_opt own[] = {{"--shapes", NULL, 1, &shapes}, {"--per-shape", NULL, 1, &per},
                           {"--max", NULL, 1, &max},       {"--whole-below", NULL, 1, &whole},
                           {"-o", "--output", 1, &output}, {"--per-kind", NULL, 1, &kind},
                           {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgi_tune_shape *list = NULL;
    kgi_config_list out = {0};
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    if (args.nparam > 0) {
        fprintf(stderr, "kgen: catalogue candidates takes no template parameters\n");
        goto done;
    }
    if (!shapes) {
        fprintf(stderr, "kgen: catalogue candidates needs --shapes FILE (the training shapes)\n");
        goto done;
    }
    if (kgc_not_input("-o", output, shapes) != 0)
        goto done;
    kgi_cat_cand_opts o = {.arch = args.arch ? args.arch : 90, .per_shape = 32, .max = 32, .per_kind = 2,
                           .whole_below = 64};
    long v;
    if ((per && kgc_int("--per-shape", per, 1, 4096, &v)) || (per && (o.per_shape = (int)v, 0)) ||
        (max && kgc_int("--max", max, 1, 4096, &v)) || (max && (o.max = (int)v, 0)) ||
        (whole && kgc_int("--whole-below", whole, 0, 100000, &v)) || (whole && (o.whole_below = (int)v, 0)) ||
        (kind && kgc_int("--per-kind", kind, 0, 64, &v)) || (kind && (o.per_kind = (int)v, 0)))
        goto done;
    int ns;
    if (kgc_read_shapes(shapes, &list, &ns) != 0)
        goto done;
    o.shapes = list, o.nshapes = ns;
    o.template_path = kgc_template_path(&args);
    char names[KGI_SPACE_MAX_TEMPLATES][64];
    const char *tmpls[KGI_SPACE_MAX_TEMPLATES];
    int nt = kgi_space_templates(ctx->host, o.template_path, names, KGI_SPACE_MAX_TEMPLATES);
    /* --template T: only T */
    if (args.tmpl_given) {
        tmpls[0] = args.tmpl, nt = 1;
    } else {
        for (int i = 0; i < nt; i++)
            tmpls[i] = names[i];
    }
    o.tmpls = tmpls, o.ntmpl = nt;
    fprintf(stderr, "kgen catalogue: walking the spaces of %d template%s in 4 layouts for sm_%d, ranking them at %d"
                    " shapes\n", nt, nt == 1 ? "" : "s", o.arch, ns);
    char err[2048];
    kg_status st = kgi_catalogue_candidates(&o, &out, err, sizeof err);
    if (st != KG_OK) {
        fprintf(stderr, "kgen: catalogue candidates: %s\n", err);
        rc = st == KG_ERR_CONFIG || st == KG_ERR_INVALID_ARG ? KGC_USAGE : KGC_FAIL;
        goto done;
    }
    rc = write_list(output, &out, shapes, o.arch) == 0 ? KGC_OK : KGC_FAIL;
    if (rc == KGC_OK && output && strcmp(output, "-"))
        fprintf(stderr, "kgen catalogue: %d candidates written to %s\n", out.n, output);
done:
    kgi_config_list_free(&out);
    free(list);
    kg_context_close(ctx);
    return rc;
}

/* Reads a catalogue with the format's parser, then checks each kernel with
 * its template (known, its parameters in range, check() passed for the
 * catalogue's architecture in some layout; where kgen has no limits table
 * for that architecture, the parameters only, and it says so) and puts its
 * configuration in canonical form (as the tuner writes it, and so as an
 * export names it). KGC_OK; KGC_FAIL (unreadable) or KGC_USAGE (not a
 * catalogue, or a kernel its template refuses) after naming the file, line
 * and what was wrong. */
static int read_catalogue(const char *what, const char *path, const char *template_path, kgi_catalogue **out)
{
    size_t len;
    char *text = kgc_slurp(path, &len), err[1024];
    if (!text)
        return KGC_FAIL;
    int bad = kgi_catalogue_parse(text, len, path, out, err, sizeof err);
    free(text);
    if (bad) {
        fprintf(stderr, "kgen: %s: %s\n", what, err);
        return KGC_USAGE;
    }
    kgi_catalogue *c = *out;
    const kgi_limits *lim = kgi_arch_limits(c->arch);
    if (!lim)
        fprintf(stderr, "kgen: %s: %s: kgen has no limits table for sm_%d: each kernel's parameters are checked,"
                        " not its template's rules\n", what, path, c->arch);
    kgi_host *h = kgi_host_new();
    if (!h || (template_path && kgi_host_set_path(h, template_path) != 0)) {
        kgi_host_free(h);
        fprintf(stderr, "kgen: %s: out of memory\n", what);
        return KGC_FAIL;
    }
    int rc = KGC_OK;
    for (int i = 0; i < c->nkernels && rc == KGC_OK; i++) {
        kgi_cat_kernel *k = &c->kernels[i];
        char config[600], canon[2048], stripped[2048], why[1024] = "";
        kg_status st = KG_ERR_CONFIG;
        for (int l = 0; l < 4 && st == KG_ERR_CONFIG; l++) {
            snprintf(config, sizeof config, "%s layout=%s", k->config, kgi_layout_name(l));
            char w[1024];
            st = kgi_host_check(h, k->tmpl, config, lim, canon, sizeof canon, l == 0 ? why : w, sizeof why);
        }
        if (st == KG_OK && kgi_cat_strip_layout(canon, stripped, sizeof stripped, why, sizeof why) == 0 &&
            strlen(stripped) < sizeof k->config) {
            snprintf(k->config, sizeof k->config, "%s", stripped);
            continue;
        }
        fprintf(stderr, "kgen: %s: %s:%d: kernel %d (%s): %s\n", what, path, k->line, k->id, k->tmpl,
                why[0] ? why : "its canonical configuration is too long");
        rc = KGC_USAGE;
    }
    kgi_host_free(h);
    return rc;
}

/* --max-compile's costs: each configuration compiled now, in a thread per core, with neither kgen's disk cache nor
 * NVRTC's own (the driver's compute cache, CUDA 12.9 and later) looked in, so that each time is NVRTC's work. NVRTC
 * reads CUDA_CACHE_DISABLE once, at its first compile in the process: in `make`, this one. */
static int compile_seconds(void *ud, int arch, int n, const char *const *tmpl, const char *const *config,
                           double *seconds, char *err, size_t errlen)
{
    const char *template_dir = ud;
    kgc_compile_job *jobs = calloc((size_t)(n > 0 ? n : 1), sizeof *jobs);
    if (!jobs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        jobs[i].tmpl = tmpl[i];
        if (snprintf(jobs[i].config, sizeof jobs[i].config, "%s", config[i]) >= (int)sizeof jobs[i].config) {
            snprintf(err, errlen, "configuration too long: %s %.200s...", tmpl[i], config[i]);
            free(jobs);
            return -1;
        }
    }
    const char *saved[2] = {getenv("KGEN_CACHE"), getenv("CUDA_CACHE_DISABLE")};
    char *keep[2] = {saved[0] ? strdup(saved[0]) : NULL, saved[1] ? strdup(saved[1]) : NULL};
    setenv("KGEN_CACHE", "0", 1);
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    kgc_compile_jobs(template_dir, arch, jobs, n, cores > 0 ? (int)cores : 1);
    const char *names[2] = {"KGEN_CACHE", "CUDA_CACHE_DISABLE"};
    for (int i = 0; i < 2; i++) {
        if (keep[i])
            setenv(names[i], keep[i], 1);
        else
            unsetenv(names[i]);
        free(keep[i]);
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (jobs[i].outcome != 0) {
            snprintf(err, errlen, "--max-compile: compiling %s %s for sm_%d: %s", tmpl[i], config[i], arch,
                     jobs[i].outcome == 2 ? jobs[i].error : "came from a cache, so its time is not NVRTC's");
            rc = -1;
        }
        seconds[i] = jobs[i].ms / 1000.0;
    }
    free(jobs);
    return rc;
}

static int make(int argc, char **argv)
{
    const char *maxk = NULL, *tol = NULL, *maxr = NULL, *device = NULL, *driver = NULL, *date = NULL, *command = NULL,
               *output = NULL, *keep = NULL, *start = NULL, *measured = NULL, *add = NULL, *add_best = NULL,
               *max_compile = NULL;
    const kgc_opt own[] = {{"--max-kernels", NULL, 1, &maxk}, {"--tolerance", NULL, 1, &tol},
                           {"--measured", NULL, 1, &measured},
                           {"--kernels", NULL, 1, &keep},     {"--start", NULL, 1, &start},
                           {"--add", NULL, 1, &add},          {"--add-best", NULL, 1, &add_best},
                           {"--max-regret", NULL, 1, &maxr},  {"--device", NULL, 1, &device},
                           {"--max-compile", NULL, 1, &max_compile},
                           {"--driver", NULL, 1, &driver},
                           {"--date", NULL, 1, &date},        {"--command", NULL, 1, &command},
                           {"-o", "--output", 1, &output},    {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    char *text[KGI_CAT_MAX_PASSES] = {NULL}, *buf = NULL;
    size_t len[KGI_CAT_MAX_PASSES] = {0}, blen = 0;
    FILE *mem = NULL;
    kgi_catalogue *kept = NULL, *started = NULL, *earlier = NULL;
    kgi_config_list added = {0};
    kgc_args args;
    _Static_assert(KGI_CAT_MAX_PASSES <= sizeof args.positional / sizeof *args.positional, "kgc_args holds the passes");
    if ((rc = kgc_parse(ctx, argc, argv, own, KGI_CAT_MAX_PASSES, &args)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    if (args.nparam > 0 || (args.npositional < 1 && !measured)) {
        fprintf(stderr, "kgen: catalogue make takes one EXPORT file (kgen db export) or more (none with --measured:"
                        " that catalogue's times alone), and no template parameters\n");
        goto done;
    }
    kgi_cat_make_opts o = {.max_kernels = 40, .tolerance = 0.02, .max_regret = 2.0, .device = device, .driver = driver,
                           .date = date, .command = command ? command : "scripts/build-catalogue.sh"};
    long v;
    if (maxk && kgc_int("--max-kernels", maxk, 1, 1000, &v))
        goto done;
    if (maxk)
        o.max_kernels = (int)v;
    if ((tol && kgc_real("--tolerance", tol, 0, 0.99, &o.tolerance)) ||
        (maxr && kgc_real("--max-regret", maxr, 1, 1000, &o.max_regret)))
        goto done;
    char why[96];
    if (!date) {
        fprintf(stderr, "kgen: catalogue make needs --date YYYY-MM-DD (when the times were measured)\n");
        goto done;
    }
    if (kgi_catalogue_date_check(date, why, sizeof why) != 0) {
        fprintf(stderr, "kgen: catalogue make --date: %s\n", why);
        goto done;
    }
    if ((driver && strpbrk(driver, "\n\r")) || (command && strpbrk(command, "\n\r"))) {
        fprintf(stderr, "kgen: --driver and --command are one line each\n");
        goto done;
    }
    if (add_best && kgc_int("--add-best", add_best, 1, 1000, &v))
        goto done;
    if (add_best)
        o.add_best = (int)v;
    /* --max-compile S (seconds), or `kept`: what the kernels of --kernels take, measured with the others */
    o.max_compile_kept = max_compile && strcmp(max_compile, "kept") == 0;
    if (max_compile && !o.max_compile_kept && kgc_real("--max-compile", max_compile, 0.001, 1e6, &o.max_compile_s))
        goto done;
    if (o.max_compile_kept && !keep) {
        fprintf(stderr, "kgen: catalogue make --max-compile kept fits the set to what the kernels of --kernels"
                        " CATALOGUE take: give --kernels\n");
        goto done;
    }
    if (keep && (maxk || (tol && !add_best) || (maxr && !add_best && !max_compile))) {
        fprintf(stderr, "kgen: catalogue make --kernels keeps that catalogue's kernels: --max-kernels, --tolerance"
                        " and --max-regret choose them instead (with --add-best, --tolerance and --max-regret rule"
                        " the kernels added; with --max-compile, --max-regret rules those dropped)\n");
        goto done;
    }
    if (add && !keep) {
        fprintf(stderr, "kgen: catalogue make --add appends kernels to those of --kernels CATALOGUE: give both\n");
        goto done;
    }
    if (add_best && !add) {
        fprintf(stderr, "kgen: catalogue make --add-best K chooses among the kernels of --add CONFIGS: give both\n");
        goto done;
    }
    if (keep && start) {
        fprintf(stderr, "kgen: catalogue make --kernels keeps that catalogue's kernels; --start improves on another's:"
                        " give one of them\n");
        goto done;
    }
    /* the export is hours of GPU time; the --kernels or --start catalogue may be rewritten (a catalogue measured
     * again, a rebuild) */
    for (int i = 0; i < args.npositional; i++)
        if (kgc_not_input("-o", output, args.positional[i]) != 0)
            goto done;
    rc = KGC_FAIL;
    if (keep) {
        if ((rc = read_catalogue("catalogue make --kernels", keep, kgc_template_path(&args), &kept)) != KGC_OK)
            goto done;
        rc = KGC_FAIL;
        o.keep = kept;
        o.keep_path = keep;
    }
    if (add) {
        char lerr[1024];
        kg_status ls = kgi_config_list_read(add, &added, lerr, sizeof lerr);
        if (ls != KG_OK) {
            fprintf(stderr, "kgen: catalogue make --add: %s\n", lerr);
            rc = ls == KG_ERR_IO ? KGC_FAIL : KGC_USAGE;
            goto done;
        }
        o.add = &added;
        o.add_path = add;
    }
    if (start) {
        if ((rc = read_catalogue("catalogue make --start", start, kgc_template_path(&args), &started)) != KGC_OK)
            goto done;
        rc = KGC_USAGE;
        if (maxk && started->nkernels > o.max_kernels) {
            fprintf(stderr, "kgen: catalogue make --start: %s has %d kernels, more than --max-kernels (%d)\n", start,
                    started->nkernels, o.max_kernels);
            goto done;
        }
        if (!maxk && started->nkernels > o.max_kernels) /* a rebuild keeps as many kernels unless told */
            o.max_kernels = started->nkernels;
        rc = KGC_FAIL;
        o.start = started;
        o.start_path = start;
    }
    if (measured) {
        if ((rc = read_catalogue("catalogue make --measured", measured, kgc_template_path(&args), &earlier)) !=
            KGC_OK)
            goto done;
        rc = KGC_FAIL;
        o.measured = earlier;
        o.measured_path = measured;
    }
    for (int i = 0; i < args.npositional; i++)
        if (!(text[i] = kgc_slurp(args.positional[i], &len[i])))
            goto done;
    o.template_path = kgc_template_path(&args);
    if (max_compile) {
        o.compile_cost = compile_seconds;
        o.compile_ud = (void *)o.template_path;
    }
    if (!(mem = open_memstream(&buf, &blen)))
        goto done;
    kgi_cat_make_report rep;
    char err[2048];
    kg_status st = kgi_catalogue_make((const char *const *)text, len, args.npositional, &o, mem, &rep, err, sizeof err);
    if (fclose(mem) != 0 && st == KG_OK)
        st = KG_ERR_IO;
    mem = NULL;
    if (st != KG_OK) {
        /* the export at fault, where one is */
        const char *which = rep.bad_export > 0      ? args.positional[rep.bad_export - 1]
                            : args.npositional == 1 ? args.positional[0]
                                                    : NULL;
        fprintf(stderr, "kgen: catalogue make: %s%s%s\n", which ? which : "", which ? ": " : "", err);
        rc = st == KG_ERR_CONFIG || st == KG_ERR_INVALID_ARG ? KGC_USAGE : KGC_FAIL;
        goto done;
    }
    /* what kg_matmul will read: checked by its own parser before it is written */
    kgi_catalogue *check;
    if (kgi_catalogue_parse(buf, blen, "the catalogue made", &check, err, sizeof err) != 0) {
        fprintf(stderr, "kgen: catalogue make: %s\n", err);
        goto done;
    }
    kgi_catalogue_free(check);
    if (kgc_write_file(output, buf, blen) != 0)
        goto done;
    /* the kernels of --kernels, all kept before --max-compile dropped any (its line below says which) */
    int nkept = kept ? kept->nkernels : 0;
    if (keep && add_best)
        fprintf(stderr,
                "kgen catalogue: %d rows, %d kernels measured over %d (layout, shape) pairs; the %d of %s kept, and %d"
                " of the %d of %s (--add-best %d). kg_matmul's choice from them with each pair left out: %.3f of the"
                " fastest of them on geometric mean, %.2f at worst (%s); against the fastest of all %d: %.4f, where"
                " the kept alone score %.4f\n",
                rep.rows, rep.kernels_measured, rep.pairs, nkept, keep, rep.added, added.n, add, o.add_best,
                rep.loo_geomean, rep.loo_worst, rep.loo_worst_pair[0] ? rep.loo_worst_pair : "none", nkept + added.n,
                rep.loo_set_all, rep.loo_keep_all);
    else if (keep)
        fprintf(stderr,
                "kgen catalogue: %d rows, %d kernels measured over %d (layout, shape) pairs; the %d of %s kept%s%s."
                " kg_matmul's choice from them with each pair left out: %.3f of the fastest of them on geometric"
                " mean, %.2f at worst (%s)\n",
                rep.rows, rep.kernels_measured, rep.pairs, nkept, keep, add ? ", and those of " : "",
                add ? add : "", rep.loo_geomean, rep.loo_worst,
                rep.loo_worst_pair[0] ? rep.loo_worst_pair : "none");
    else
        fprintf(stderr,
                "kgen catalogue: %d rows, %d kernels measured over %d (layout, shape) pairs; %d chosen. kg_matmul's"
                " choice with each pair left out: %.3f of the best measured on geometric mean, %.2f at worst (%s);"
                " the set's fastest: %.1f%% above the best on geometric mean, %.1f%% at worst (%s)\n",
                rep.rows, rep.kernels_measured, rep.pairs, rep.kernels, rep.loo_geomean, rep.loo_worst,
                rep.loo_worst_pair[0] ? rep.loo_worst_pair : "none", 100 * (rep.geomean_regret - 1),
                100 * (rep.worst_regret - 1), rep.worst_pair[0] ? rep.worst_pair : "none");
    /* the order the cover took them in, which the file (in the list's order) does not show */
    for (int i = 0; keep && add_best && i < rep.added && i < KGI_CAT_ADDED_MAX; i++)
        fprintf(stderr, "kgen catalogue: --add-best: %s line %d taken %s: %.4f against the fastest of all %d\n", add,
                rep.added_line[i], i == 0 ? "first" : "next", rep.added_loo[i], nkept + added.n);
    if (keep && add_best && rep.added > KGI_CAT_ADDED_MAX)
        fprintf(stderr, "kgen catalogue: --add-best: %d more taken after those\n", rep.added - KGI_CAT_ADDED_MAX);
    if (max_compile) {
        fprintf(stderr,
                "kgen catalogue: --max-compile %s (%.1f s%s): NVRTC took %.1f s over the set's kernels in their"
                " layouts; %d dropped, leaving %.1f s; kg_matmul's choice with each pair left out %.4f before, %.4f"
                " after",
                max_compile, rep.compile_budget_s, o.max_compile_kept ? ", what those of --kernels took" : "",
                rep.compile_before_s, rep.dropped, rep.compile_after_s, rep.loo_before_fit, rep.loo_geomean);
        if (keep && add_best)
            fprintf(stderr, " (against the fastest of all %d: %.4f)", nkept + added.n, rep.loo_fit_all);
        fputc('\n', stderr);
        for (int i = 0; i < rep.dropped && i < KGI_CAT_DROPPED_MAX; i++)
            fprintf(stderr, "kgen catalogue: --max-compile: kernel %d of the set before dropped%s (%.2f s): %.4f\n",
                    rep.dropped_id[i], i == 0 ? " first" : "", rep.dropped_s[i], rep.dropped_loo[i]);
    }
    if (start)
        fprintf(stderr, "kgen catalogue: --start %s: %s (%d of its kernels replaced; regret both minimise, geometric mean"
                        " %.4f, from scratch %.4f)\n",
                start, rep.from_start ? "kept" : "a choice from scratch scored better", rep.start_replaced,
                exp(rep.start_cost), exp(rep.scratch_cost));
    rc = KGC_OK;
done:
    if (mem)
        fclose(mem);
    free(buf);
    for (int i = 0; i < KGI_CAT_MAX_PASSES; i++)
        free(text[i]);
    kgi_catalogue_free(kept);
    kgi_catalogue_free(started);
    kgi_catalogue_free(earlier);
    kgi_config_list_free(&added);
    kg_context_close(ctx);
    return rc;
}

/* The command line of a subcommand that reads one catalogue (`kernels`, `twins`): its own options and one
 * CATALOGUE, no template parameters, --arch or --template (the catalogue says them). KGC_OK, or KGC_USAGE
 * after saying what was wrong. */
static int one_catalogue_args(const char *cmd, kg_context *ctx, int argc, char **argv, const kgc_opt *own,
                              kgc_args *args)
{
    int rc = kgc_parse(ctx, argc, argv, own, 1, args);
    if (rc != KGC_OK)
        return rc;
    if (args->nparam > 0 || args->npositional != 1) {
        fprintf(stderr, "kgen: catalogue %s takes one CATALOGUE file and no template parameters\n", cmd);
        return KGC_USAGE;
    }
    if (args->arch || args->tmpl_given) {
        fprintf(stderr, "kgen: catalogue %s: %s is the catalogue's (its kernels' templates, its arch line)\n", cmd,
                args->arch ? "the architecture" : "the template");
        return KGC_USAGE;
    }
    return KGC_OK;
}

/* Closes the text a subcommand wrote to *mem and writes it to `output` (NULL or "-": standard output). */
static int write_text(FILE **mem, char **buf, size_t *blen, const char *output)
{
    int closed = fclose(*mem);
    *mem = NULL;
    return closed == 0 && kgc_write_file(output, *buf, *blen) == 0 ? KGC_OK : KGC_FAIL;
}

/* `kgen catalogue kernels CATALOGUE [--layout L]`: its kernels as a --configs list, in its
 * order (what build-catalogue.sh times to measure a catalogue again), read by the catalogue's
 * own parser; with --layout, only those kg_matmul runs in L (kgi_catalogue_in_layout), each
 * with layout=L (what bench/choice-regret.sh times beside kg_matmul's choice). */
static int kernels(int argc, char **argv)
{
    const char *output = NULL, *layout = NULL;
    const kgc_opt own[] = {{"-o", "--output", 1, &output}, {"--layout", NULL, 1, &layout}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = NULL;
    kgi_catalogue *c = NULL;
    kgc_args args;
    if ((rc = one_catalogue_args("kernels", ctx, argc, argv, own, &args)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    if ((layout && kgc_layout("--layout", layout) != 0) || kgc_not_input("-o", output, args.positional[0]) != 0)
        goto done;
    if ((rc = read_catalogue("catalogue kernels", args.positional[0], kgc_template_path(&args), &c)) != KGC_OK)
        goto done;
    rc = KGC_FAIL;
    if (!(mem = open_memstream(&buf, &blen)))
        goto done;
    for (int i = 0; i < c->nkernels; i++) {
        if (!layout)
            fprintf(mem, "%s %s\n", c->kernels[i].tmpl, c->kernels[i].config);
        else if (kgi_catalogue_in_layout(c, i, kgi_layout_index(layout)))
            fprintf(mem, "%s %s layout=%s\n", c->kernels[i].tmpl, c->kernels[i].config, layout);
    }
    rc = write_text(&mem, &buf, &blen, output);
done:
    if (mem)
        fclose(mem);
    free(buf);
    kgi_catalogue_free(c);
    kg_context_close(ctx);
    return rc;
}

/* `kgen catalogue twins CATALOGUE`: its layout holes and their twins (autotune/twins.h), the twins as a
 * --configs list, each after comments that say which hole it fills and why the kernel left it. */
static int twins(int argc, char **argv)
{
    const char *output = NULL, *margin = NULL, *pairs = NULL, *dist = NULL, *per = NULL;
    const kgc_opt own[] = {{"-o", "--output", 1, &output},   {"--margin", NULL, 1, &margin},
                           {"--min-pairs", NULL, 1, &pairs}, {"--max-distance", NULL, 1, &dist},
                           {"--per-hole", NULL, 1, &per},    {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = NULL;
    kgi_catalogue *c = NULL;
    kgi_twins tw = {0};
    kgc_args args;
    if ((rc = one_catalogue_args("twins", ctx, argc, argv, own, &args)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    kgi_twin_opts o = {.margin = 1.10, .min_pairs = 1, .max_distance = 2, .per_hole = 1};
    long v;
    if ((margin && kgc_real("--margin", margin, 1.0, 100.0, &o.margin)) ||
        (pairs && kgc_int("--min-pairs", pairs, 1, 100000, &v)) || (pairs && (o.min_pairs = (int)v, 0)) ||
        (dist && kgc_int("--max-distance", dist, 1, 3, &v)) || (dist && (o.max_distance = (int)v, 0)) ||
        (per && kgc_int("--per-hole", per, 1, KGI_TWINS_PER_HOLE, &v)) || (per && (o.per_hole = (int)v, 0)) ||
        kgc_not_input("-o", output, args.positional[0]) != 0)
        goto done;
    const char *path = args.positional[0];
    if ((rc = read_catalogue("catalogue twins", path, kgc_template_path(&args), &c)) != KGC_OK)
        goto done;
    rc = KGC_USAGE;
    if (!kgi_arch_limits(c->arch)) {
        fprintf(stderr, "kgen: catalogue twins: %s: kgen has no limits table for sm_%d\n", path, c->arch);
        goto done;
    }
    rc = KGC_FAIL;
    if (kg_set_arch(ctx, c->arch) != KG_OK || kg_set_template_path(ctx, kgc_template_path(&args)) != KG_OK) {
        fprintf(stderr, "kgen: catalogue twins: %s\n", kg_last_error(ctx));
        goto done;
    }
    char err[1024];
    kg_status st = kgi_catalogue_twins(ctx, c, &o, &tw, err, sizeof err);
    if (st != KG_OK) {
        fprintf(stderr, "kgen: catalogue twins: %s: %s\n", path, err);
        goto done;
    }
    if (!(mem = open_memstream(&buf, &blen)))
        goto done;
    int found = 0;
    fprintf(mem, "# kgen catalogue twins of %s (%s, sm_%d): %d layout hole%s, pairs where a kernel ran the\n"
                 "# shape in another layout at least %.2f times faster than the catalogue's fastest in its own\n",
            path, c->device, c->arch, tw.n, tw.n == 1 ? "" : "s", o.margin);
    for (int i = 0; i < tw.n; i++) {
        const kgi_twin *t = &tw.t[i];
        const kgi_cat_kernel *k = &c->kernels[t->kernel];
        char line[2048];
        snprintf(line, sizeof line, "kernel %d in %s: %d pair%s, %.2fx on geometric mean (%.2fx at %dx%dx%d); %s",
                 k->id, kgi_layout_name(t->layout), t->pairs, t->pairs == 1 ? "" : "s", t->gain, t->max_gain,
                 t->m, t->n, t->k, t->reason);
        fprintf(stderr, "kgen catalogue twins: %s\n", line);
        fprintf(mem, "\n# %s\n", line);
        if (!t->found) {
            fprintf(stderr, "    no twin: %s\n", t->why_none);
            fprintf(mem, "# no twin: %s\n", t->why_none);
        }
        for (int j = 0; j < t->found; j++) {
            const kgi_twin_cfg *w = &t->twin[j];
            if (w->same_as >= 0) {
                const kgi_twin *e = &tw.t[w->same_as];
                fprintf(stderr, "    twin: one above (kernel %d in %s): %s\n", c->kernels[e->kernel].id,
                        kgi_layout_name(e->layout), w->changes);
                fprintf(mem, "# twin: one above (kernel %d in %s): %s\n", c->kernels[e->kernel].id,
                        kgi_layout_name(e->layout), w->changes);
                continue;
            }
            found++;
            fprintf(stderr, "    twin (%s): %s %s\n", w->changes, w->tmpl, w->config);
            fprintf(mem, "# twin: %s\n%s %s\n", w->changes, w->tmpl, w->config);
        }
        if (t->held_id) {
            fprintf(stderr, "    kernel %d of the catalogue is %d parameter%s from kernel %d: not proposed\n", t->held_id,
                    t->held_distance, t->held_distance == 1 ? "" : "s", k->id);
            fprintf(mem, "# kernel %d of the catalogue is %d parameter%s from kernel %d: not proposed\n", t->held_id,
                    t->held_distance, t->held_distance == 1 ? "" : "s", k->id);
        }
    }
    fprintf(stderr, "kgen catalogue twins: %d twin%s for %d hole%s\n", found, found == 1 ? "" : "s", tw.n,
            tw.n == 1 ? "" : "s");
    rc = write_text(&mem, &buf, &blen, output);
done:
    if (mem)
        fclose(mem);
    free(buf);
    kgi_twins_free(&tw);
    kgi_catalogue_free(c);
    kg_context_close(ctx);
    return rc;
}

int kgc_cmd_catalogue(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "kgen: %s\n", usage_line);
        return KGC_USAGE;
    }
    if (strcmp(argv[1], "candidates") == 0)
        return candidates(argc - 1, argv + 1);
    if (strcmp(argv[1], "make") == 0)
        return make(argc - 1, argv + 1);
    if (strcmp(argv[1], "kernels") == 0)
        return kernels(argc - 1, argv + 1);
    if (strcmp(argv[1], "twins") == 0)
        return twins(argc - 1, argv + 1);
    fprintf(stderr, "kgen: unknown catalogue command '%s' (candidates, make, kernels, twins)\n", argv[1]);
    return KGC_USAGE;
}
