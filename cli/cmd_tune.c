/*
 * cmd_tune.c -- `kgen tune`: finds the fastest correct configuration for a
 * device and shapes, records every evaluated one in the tuning database
 * (where kg_matmul finds the best), and prints progress and a table.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune/configs.h"
#include "autotune/strategy.h"
#include "autotune/tune.h"
#include "cli.h"

/* The signal that asked the run to stop (SIGINT, SIGTERM), 0 while none. */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* ------------------------------------------------------------ progress */

typedef struct view {
    int tty;
    double last_line;           /* elapsed time of the last plain line */
    int last_step;              /* last 5% step printed */
    double last_best;
    int active;                 /* a \r line is on screen */
} view;

/* Before the search: starting, then walking the space (a line at once,
 * then every 2 s, or a \r line on a terminal). */
static void show_stage(view *v, const kgi_tune_progress *p)
{
    if (strcmp(p->stage, "start") == 0) {
        fprintf(stderr, "kgen tune: %d shape%s; walking the space of %d template%s\n", p->nshapes,
                p->nshapes == 1 ? "" : "s", p->templates, p->templates == 1 ? "" : "s");
        v->last_line = p->elapsed_s;
        return;
    }
    if (v->tty) {
        fprintf(stderr, "\r\033[K[space] %ld combinations walked, %ld rejected by check(), %d candidates, %.1f s",
                p->walked, p->rejected, p->candidates, p->elapsed_s);
        v->active = 1;
        return;
    }
    if (p->elapsed_s - v->last_line < 2)
        return;
    v->last_line = p->elapsed_s;
    fprintf(stderr, "kgen tune: space: %ld combinations walked, %ld rejected by check(), %d candidates, %.0f s\n",
            p->walked, p->rejected, p->candidates, p->elapsed_s);
}

static void show_progress(void *ud, const kgi_tune_progress *p)
{
    view *v = ud;
    if (p->stage) {
        show_stage(v, p);
        return;
    }
    char best[640] = "none yet";
    if (p->best_ms > 0) {
        double tf = 2.0 * p->sh->m * p->sh->n * (double)p->sh->k / (p->best_ms * 1e9);
        snprintf(best, sizeof best, "%.4g ms %.2f TFLOP/s %s %s", p->best_ms, tf, p->best_tmpl, p->best_config);
    }
    if (v->tty) {
        fprintf(stderr, "\r\033[K[%d/%d %dx%dx%d] %d/%d done, %d pruned, %d failed, %d cached | best %.*s",
                p->shape + 1, p->nshapes, p->sh->m, p->sh->n, p->sh->k, p->done, p->total, p->pruned, p->failed,
                p->cached, 90, best);
        v->active = 1;
        return;
    }
    int step = p->total > 0 ? 20 * p->done / p->total : 0;
    if (step == v->last_step && p->elapsed_s - v->last_line < 30 && p->best_ms == v->last_best && p->done < p->total)
        return;
    v->last_step = step;
    v->last_line = p->elapsed_s;
    v->last_best = p->best_ms;
    fprintf(stderr, "kgen tune: %dx%dx%d %d/%d done, %d pruned, %d failed, %d cached, %.0f s; best %s\n", p->sh->m,
            p->sh->n, p->sh->k, p->done, p->total, p->pruned, p->failed, p->cached, p->elapsed_s, best);
}

/* ------------------------------------------------------------ report */

typedef struct row {
    int c;
    const kgi_result *r;
} row;

static int cmp_rows(const void *a, const void *b)
{
    const kgi_result *x = ((const row *)a)->r, *y = ((const row *)b)->r;
    return (x->time_ms > y->time_ms) - (x->time_ms < y->time_ms);
}

/* The candidates to show: ok ones fastest first (a dry run: the runnable
 * ones by predicted time). Returns how many. */
static int top_rows(const kgi_tune_report *rep, const kgi_shape_report *s, int dry, row *rows)
{
    int n = 0;
    for (int c = 0; c < rep->space.n; c++) {
        kgi_outcome o = s->res[c].outcome;
        if ((dry && o == KGI_OUT_NONE && s->res[c].reason[0]) || (!dry && o == KGI_OUT_OK))
            rows[n++] = (row){c, &s->res[c]};
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
    return n;
}

/* The final stage's table: finalists by final time, then the dropped ones. */
static void print_final(FILE *f, const kgi_shape_report *s, const kgi_tune_opts *o, double flop)
{
    if (s->final_note[0])
        fprintf(f, "  final stage %s\n", s->final_note);
    if (s->nfinal == 0 || s->final_note[0])
        return;
    if (s->final_current)
        fprintf(f, "  final stage: current (the %d finalists' times from an earlier run; nothing new since);"
                   " kg_matmul takes the first\n", s->nfinal);
    else
        fprintf(f, "  final stage: the %d fastest in the database for this shape, timed back to back (L2 warm), %d"
                   " round%s of ~%.0f ms each, %.1f s; kg_matmul takes the first\n",
                s->nfinal, o->final_rounds, o->final_rounds == 1 ? "" : "s", o->final_sample_ms, s->final_wall_s);
    fprintf(f, "  %-4s %10s %10s %8s %7s  %s\n", "rank", "final ms", "search ms", "TFLOP/s", "range", "configuration");
    for (int i = 0; i < s->nfinal; i++) {
        const kgi_final_row *r = &s->final[i];
        if (r->failed[0]) {
            fprintf(f, "  %-4s %10s %10.4f %8s %7s  %s %s\n%8s%s\n", "-", "dropped", r->search_ms, "", "", r->tmpl,
                    r->config, "", r->failed);
            continue;
        }
        fprintf(f, "  %-4d %10.4f %10.4f %8.2f %6.1f%%  %s %s\n", i + 1, r->final_ms, r->search_ms,
                flop / (r->final_ms * 1e9), r->final_ms > 0 ? 100 * (r->max_ms - r->min_ms) / r->final_ms : 0, r->tmpl,
                r->config);
    }
}

static void print_summary(const kgi_tune_report *rep, const kgi_tune_opts *o, int top)
{
    FILE *f = stderr;
    if (rep->have_device)
        fprintf(f, "\ndevice: %s (sm_%d%d, %d SMs, FP32 peak %.1f TFLOP/s), %d worker%s; database %s\n",
                rep->device.name, rep->device.cc_major, rep->device.cc_minor, rep->device.sm_count,
                rep->device.peak_fp32_tflops, rep->nworkers, rep->nworkers == 1 ? "" : "s", rep->db_path);
    else
        fprintf(f, "\ndry run for %s (no GPU): nothing was timed or recorded\n", rep->limits.name);
    char joined[96] = "";
    if (rep->space_from_catalogue > 0)
        snprintf(joined, sizeof joined, o->shard_n > 1 ? " (%d catalogue kernels the walk lacks joined the whole space)"
                                                       : " (%d of them catalogue kernels the walk lacks)",
                 rep->space_from_catalogue);
    fprintf(f, "space: %ld combinations of %d template%s, %ld rejected by check() (%ld subtrees), %d candidates%s%s;"
            " %ld check() and %ld resources() calls%s in %.2f s (%.2f s of CPU)\n",
            rep->space.enumerated, rep->space.ntmpl, rep->space.ntmpl == 1 ? "" : "s", rep->space.rejected,
            rep->space.subtrees, rep->space.n, o->shard_n > 1 ? " in this shard" : "", joined, rep->space.checks,
            rep->space.resource_calls, rep->space_cached ? " when walked; read from the walk cache" : "",
            rep->space_s, rep->space_cpu_s);
    fprintf(f, "compiled: %d (%d from the cache, %.1f s of NVRTC time); %d compiled again in a worker\n",
            rep->compiled, rep->compiled_from_cache, rep->compile_ms / 1e3, rep->compiled_in_worker);
    row *rows = malloc(((size_t)rep->space.n + 1) * sizeof *rows);
    for (int si = 0; si < rep->nshapes && rows; si++) {
        const kgi_shape_report *s = &rep->shapes[si];
        char first[64] = "";
        if (s->from_catalogue > 0)
            snprintf(first, sizeof first, " (the catalogue's %d first)", s->from_catalogue);
        fprintf(f, "\n%s%s%dx%dx%d (%s), strategy %s%s: %d evaluated (%d from the database) in %.1f s\n",
                s->sh.tag[0] ? s->sh.tag : "", s->sh.tag[0] ? " " : "", s->sh.m, s->sh.n, s->sh.k, o->layout,
                o->strategy, first, s->evaluated, s->cached_n, s->wall_s);
        fprintf(f, "  outcomes:");
        for (int oc = 1; oc < KGI_OUT_COUNT; oc++)
            if (s->count[oc])
                fprintf(f, " %s %d", kgi_outcome_name((kgi_outcome)oc), s->count[oc]);
        if (o->dry_run)
            fprintf(f, " would-be-timed %d", s->count[KGI_OUT_NONE]);
        fputc('\n', f);
        int n = top_rows(rep, s, o->dry_run, rows), show = top > 0 && top < n ? top : n;
        if (n == 0) {
            fprintf(f, "  no configuration %s\n", o->dry_run ? "would be timed" : "ran correctly");
            /* the whole space (every shard's) is empty: say why */
            if (rep->space.whole_n == 0 && rep->space.npruned > 0 && !rep->space.stopped)
                fprintf(f, "  check() rejected every combination; %s %s: %s\n",
                        rep->space.tmpl[rep->space.pruned[0].tmpl].name, rep->space.pruned[0].config,
                        rep->space.pruned[0].reason);
            continue;
        }
        double flop = 2.0 * s->sh.m * s->sh.n * (double)s->sh.k;
        fprintf(f, "  %-4s %10s %8s %6s %5s %7s %5s  %s\n", "rank", o->dry_run ? "model ms" : "time ms",
                "TFLOP/s", "%peak", "regs", "smem", "occ", "configuration");
        for (int i = 0; i < show; i++) {
            const kgi_result *r = rows[i].r;
            double tf = r->time_ms > 0 ? flop / (r->time_ms * 1e9) : 0;
            double peak = rep->have_device ? rep->device.peak_fp32_tflops
                                           : rep->limits.ref_sm_count * rep->limits.fp32_lanes_per_sm * 2.0 *
                                                 rep->limits.ref_clock_ghz / 1e3;
            fprintf(f, "  %-4d %10.4f %8.2f %5.1f%% %5d %7ld %4.0f%%  %s %s\n", i + 1, r->time_ms, tf,
                    peak > 0 ? 100 * tf / peak : 0, r->registers, r->smem_bytes, 100 * r->occupancy,
                    rep->space.tmpl[rep->space.cand[rows[i].c].tmpl].name, rep->space.cand[rows[i].c].config);
        }
        if (show < n)
            fprintf(f, "  ... %d more (--top 0 shows all)\n", n - show);
        print_final(f, s, o, flop);
    }
    free(rows);
    fprintf(f, "\nwall time %.1f s%s%s\n", rep->wall_s, rep->interrupted ? "; interrupted (run again to resume)" : "",
            rep->timed_out ? "; stopped at the --time limit (run again to go on)" : "");
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A configuration's final time in this run's final stage, 0 when none. */
static double final_of(const kgi_shape_report *s, const char *tmpl, const char *config)
{
    for (int i = 0; !s->final_note[0] && i < s->nfinal; i++)
        if (!s->final[i].failed[0] && strcmp(s->final[i].tmpl, tmpl) == 0 && strcmp(s->final[i].config, config) == 0)
            return s->final[i].final_ms;
    return 0;
}

/* --csv / --json: the shown rows of every shape on standard output. */
static void print_machine(const kgi_tune_report *rep, const kgi_tune_opts *o, int top, int json)
{
    row *rows = malloc(((size_t)rep->space.n + 1) * sizeof *rows);
    if (!rows)
        return;
    if (json) {
        printf("{\"device\": ");
        json_string(rep->have_device ? rep->device.name : rep->limits.name);
        printf(", \"peak_fp32_tflops\": %.4g, \"strategy\": \"%s\", \"layout\": \"%s\", \"dry_run\": %s, \"shapes\": [",
               rep->have_device ? rep->device.peak_fp32_tflops : 0.0, o->strategy, o->layout,
               o->dry_run ? "true" : "false");
    }
    else
        printf("m,n,k,rank,template,config,time_ms,tflops,registers,smem_bytes,occupancy,final_ms\n");
    for (int si = 0; si < rep->nshapes; si++) {
        const kgi_shape_report *s = &rep->shapes[si];
        int n = top_rows(rep, s, o->dry_run, rows), show = top > 0 && top < n ? top : n;
        double flop = 2.0 * s->sh.m * s->sh.n * (double)s->sh.k;
        if (json) {
            printf("%s\n  {\"m\": %d, \"n\": %d, \"k\": %d, \"evaluated\": %d, \"cached\": %d, \"wall_s\": %.3f, \"outcomes\": {",
                   si ? "," : "", s->sh.m, s->sh.n, s->sh.k, s->evaluated, s->cached_n, s->wall_s);
            for (int oc = o->dry_run ? 0 : 1, first = 1; oc < KGI_OUT_COUNT; oc++)
                if (s->count[oc])
                    printf("%s\"%s\": %d", first ? "" : ", ",
                           oc == KGI_OUT_NONE ? "would_be_timed" : kgi_outcome_name((kgi_outcome)oc), s->count[oc]),
                        first = 0;
            printf("}, \"top\": [");
        }
        for (int i = 0; i < show; i++) {
            const kgi_result *r = rows[i].r;
            const kgi_cand *c = &rep->space.cand[rows[i].c];
            double tf = r->time_ms > 0 ? flop / (r->time_ms * 1e9) : 0;
            if (json) {
                printf("%s\n    {\"rank\": %d, \"template\": ", i ? "," : "", i + 1);
                json_string(rep->space.tmpl[c->tmpl].name);
                printf(", \"config\": ");
                json_string(c->config);
                printf(", \"time_ms\": %.6g, \"tflops\": %.4g, \"registers\": %d, \"smem_bytes\": %ld, \"occupancy\": %.4g}",
                       r->time_ms, tf, r->registers, r->smem_bytes, r->occupancy);
            } else
                printf("%d,%d,%d,%d,%s,%s,%.6g,%.4g,%d,%ld,%.4g,%.6g\n", s->sh.m, s->sh.n, s->sh.k, i + 1,
                       rep->space.tmpl[c->tmpl].name, c->config, r->time_ms, tf, r->registers, r->smem_bytes,
                       r->occupancy, final_of(s, rep->space.tmpl[c->tmpl].name, c->config));
        }
        if (json) {
            printf("], \"final\": [");
            for (int i = 0, first = 1; !s->final_note[0] && i < s->nfinal; i++) {
                const kgi_final_row *f = &s->final[i];
                if (f->failed[0])
                    continue;
                printf("%s\n    {\"rank\": %d, \"template\": ", first ? "" : ",", i + 1);
                json_string(f->tmpl);
                printf(", \"config\": ");
                json_string(f->config);
                printf(", \"final_ms\": %.6g, \"search_ms\": %.6g, \"samples\": %d, \"launches_per_sample\": %d}",
                       f->final_ms, f->search_ms, f->samples, f->launches);
                first = 0;
            }
            printf("]}");
        }
    }
    if (json)
        printf("\n]}\n");
    free(rows);
}

/* ------------------------------------------------------------ options */

/* Reads `tag M N K` or `M N K` lines ('#' comments). */
int kgc_read_shapes(const char *path, kgi_tune_shape **out, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kgen: --shapes: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int cap = 0, lineno = 0;
    *out = NULL, *n = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "kgen: --shapes %s:%d: a line longer than %zu characters\n", path, lineno, sizeof line - 2);
            fclose(f);
            free(*out);
            *out = NULL;
            return -1;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char tok[5][64];
        int nt = sscanf(line, "%63s %63s %63s %63s %63s", tok[0], tok[1], tok[2], tok[3], tok[4]);
        if (nt <= 0)
            continue;
        int off = nt == 4 ? 1 : 0;
        long v[3];
        char what[96];
        snprintf(what, sizeof what, "--shapes %s:%d", path, lineno);
        int bad_tag = off && strlen(tok[0]) >= sizeof(*out)->tag;
        if ((nt != 3 && nt != 4) || bad_tag || kgc_int(what, tok[off], 1, INT_MAX, &v[0]) ||
            kgc_int(what, tok[off + 1], 1, INT_MAX, &v[1]) || kgc_int(what, tok[off + 2], 1, INT_MAX, &v[2])) {
            if (nt != 3 && nt != 4)
                fprintf(stderr, "kgen: %s: expected 'M N K' or 'tag M N K'\n", what);
            else if (bad_tag)
                fprintf(stderr, "kgen: %s: the tag '%s' is longer than %zu characters\n", what, tok[0],
                        sizeof(*out)->tag - 1);
            fclose(f);
            free(*out);
            *out = NULL;
            return -1;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            kgi_tune_shape *p = realloc(*out, (size_t)cap * sizeof *p);
            if (!p) {
                fprintf(stderr, "kgen: --shapes %s: out of memory\n", path);
                fclose(f);
                free(*out);
                *out = NULL;
                return -1;
            }
            *out = p;
        }
        kgi_tune_shape *s = &(*out)[(*n)++];
        snprintf(s->tag, sizeof s->tag, "%s", off ? tok[0] : "");
        s->m = (int)v[0], s->n = (int)v[1], s->k = (int)v[2];
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || *n == 0) {
        fprintf(stderr, "kgen: --shapes: '%s' %s\n", path, bad ? "could not be read" : "has no shapes");
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Separates every --template NAME (several allowed, or `all`) from argv. */
static int take_templates(int *argc, char **argv, const char **names, int *n, int max)
{
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--template") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "kgen: --template needs a value\n");
                return -1;
            }
            v = argv[++i];
        } else if (strncmp(argv[i], "--template=", 11) == 0) {
            v = argv[i] + 11;
        }
        if (!v) {
            argv[w++] = argv[i];
            continue;
        }
        if (*n == max) {
            fprintf(stderr, "kgen: too many --template options\n");
            return -1;
        }
        names[(*n)++] = v;
    }
    *argc = w;
    argv[w] = NULL;
    return 0;
}

int kgc_cmd_tune(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--worker") == 0)
        return kgi_tune_worker(argc, argv);
    const char *given_tmpl[KGI_SPACE_MAX_TEMPLATES];
    int ngiven = 0;
    char **av = malloc(((size_t)argc + 1) * sizeof *av);
    if (!av)
        return KGC_FAIL;
    memcpy(av, argv, (size_t)argc * sizeof *av);
    int ac = argc;
    if (take_templates(&ac, av, given_tmpl, &ngiven, KGI_SPACE_MAX_TEMPLATES) != 0) {
        free(av);
        return KGC_USAGE;
    }
    const char *m = NULL, *n = NULL, *k = NULL, *shapes = NULL, *layout = "nn", *strategy = NULL,
               *budget = NULL, *time_s = NULL, *db = NULL, *jobs = NULL, *seed = NULL, *device = NULL, *devices = NULL,
               *shard = NULL, *force = NULL, *dry = NULL, *space = NULL, *alpha = NULL, *beta = NULL, *maxsec = NULL,
               *timeout = NULL, *slow = NULL, *noflush = NULL, *maxspill = NULL, *minocc = NULL, *csv = NULL,
               *json = NULL, *top = NULL, *final = NULL, *final_rounds = NULL, *configs = NULL, *b2b = NULL;
    const kgc_opt own[] = {
        {"--m", NULL, 1, &m}, {"--n", NULL, 1, &n}, {"--k", NULL, 1, &k}, {"--shapes", NULL, 1, &shapes},
        {"--layout", NULL, 1, &layout}, {"--strategy", NULL, 1, &strategy}, {"--budget", NULL, 1, &budget},
        {"--time", NULL, 1, &time_s}, {"--db", NULL, 1, &db}, {"--jobs", "-j", 1, &jobs}, {"--seed", NULL, 1, &seed},
        {"--device", NULL, 1, &device}, {"--devices", NULL, 1, &devices}, {"--shard", NULL, 1, &shard},
        {"--force", NULL, 0, &force}, {"--dry-run", NULL, 0, &dry}, {"--space", NULL, 1, &space},
        {"--alpha", NULL, 1, &alpha}, {"--beta", NULL, 1, &beta}, {"--max-seconds", NULL, 1, &maxsec},
        {"--timeout", NULL, 1, &timeout}, {"--slow-factor", NULL, 1, &slow}, {"--no-flush", NULL, 0, &noflush},
        {"--max-spill", NULL, 1, &maxspill}, {"--min-occupancy", NULL, 1, &minocc}, {"--csv", NULL, 0, &csv},
        {"--json", NULL, 0, &json}, {"--top", NULL, 1, &top}, {"--final", NULL, 1, &final},
        {"--final-rounds", NULL, 1, &final_rounds}, {"--configs", NULL, 1, &configs},
        {"--back-to-back", NULL, 0, &b2b}, {NULL, NULL, 0, NULL}};
    kg_context *ctx = NULL;
    kgi_tune_shape *shape_list = NULL;
    char *space_text = NULL;
    kgi_config_list cfg_list = {0};
    char names[KGI_SPACE_MAX_TEMPLATES][64];
    const char *tmpls[KGI_SPACE_MAX_TEMPLATES];
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        goto out;
    /* kgc_parse knows one template (for --NAME parameter options): the first. */
    char *parse_argv[4096];
    int pac = 0;
    if (ac > 4090) {
        fprintf(stderr, "kgen: tune: too many arguments (%d)\n", ac);
        rc = KGC_USAGE;
        goto out;
    }
    for (int i = 0; i < ac; i++)
        parse_argv[pac++] = av[i];
    int use_first = ngiven > 0 && strcmp(given_tmpl[0], "all") != 0;
    if (use_first) {
        parse_argv[pac++] = "--template";
        parse_argv[pac++] = (char *)given_tmpl[0];
    }
    parse_argv[pac] = NULL;
    kgc_args args;
    if ((rc = kgc_parse(ctx, pac, parse_argv, own, 0, &args)) != KGC_OK)
        goto out;
    rc = KGC_USAGE;
    kgi_tune_opts o = {.layout = layout, .strategy = strategy, .alpha = 1.0f, .beta = 0.0f, .seed = 1,
                       .max_seconds = 0.25, .timeout_s = 60, .slow_factor = 3, .flush_l2 = 1, .shard_n = 1,
                       .final_n = 8, .final_rounds = 10, .final_sample_ms = 2.0,
                       .rules = KGI_PRUNE_RULES_DEFAULT, .progress = show_progress};
    o.template_path = kgc_template_path(&args);
    /* --configs: exactly the listed configurations, of the templates they name */
    int nt = 0, first_line[KGI_SPACE_MAX_TEMPLATES] = {0};
    if (configs) {
        char why[1024];
        if (ngiven || space || args.config[0]) {
            fprintf(stderr, "kgen: --configs lists whole configurations: give no --template, --space or parameter"
                            " options with it\n");
            goto out;
        }
        if (kgi_config_list_read(configs, &cfg_list, why, sizeof why) != KG_OK) {
            fprintf(stderr, "kgen: %s\n", why);
            goto out;
        }
        for (int i = 0; i < cfg_list.n; i++) {
            int seen = 0;
            for (int j = 0; j < nt && !seen; j++)
                seen = strcmp(names[j], cfg_list.e[i].tmpl) == 0;
            if (seen)
                continue;
            if (nt == KGI_SPACE_MAX_TEMPLATES) {
                fprintf(stderr, "kgen: --configs: more than %d templates\n", KGI_SPACE_MAX_TEMPLATES);
                goto out;
            }
            snprintf(names[nt], sizeof names[nt], "%s", cfg_list.e[i].tmpl);
            tmpls[nt] = names[nt];
            first_line[nt++] = cfg_list.e[i].line;
        }
        o.configs = &cfg_list;
    }
    if (!strategy)
        strategy = configs ? "exhaustive" : "auto";
    o.strategy = strategy;
    /* else templates: given names, `all`, or every embedded one with a space */
    if (configs) {
        /* their templates, listed above */
    } else if (ngiven == 0 || (ngiven == 1 && strcmp(given_tmpl[0], "all") == 0)) {
        nt = kgi_space_templates(ctx->host, ngiven ? o.template_path : NULL, names, KGI_SPACE_MAX_TEMPLATES);
        for (int i = 0; i < nt; i++)
            tmpls[i] = names[i];
    } else {
        for (int i = 0; i < ngiven; i++) {
            if (strcmp(given_tmpl[i], "all") == 0) {
                fprintf(stderr, "kgen: --template all cannot be combined with other templates\n");
                goto out;
            }
            tmpls[nt++] = given_tmpl[i];
        }
    }
    if (nt == 0) {
        fprintf(stderr, "kgen: no template declares a `space` to tune\n");
        goto out;
    }
    o.tmpls = tmpls, o.ntmpl = nt;
    /* every named template must load and declare a space: said now, before
     * any GPU worker starts or any database is opened */
    for (int i = 0; i < nt; i++) {
        char why[1024];
        int unused;
        if (kgi_host_has_param(ctx->host, tmpls[i], NULL, &unused, why, sizeof why) != KG_OK) {
            if (configs) /* the first line that names it */
                fprintf(stderr, "kgen: %s:%d: %s\n", cfg_list.name, first_line[i], why);
            else
                fprintf(stderr, "kgen: --template: %s\n", why);
            goto out;
        }
        if (!configs && !kgi_host_has_space(ctx->host, tmpls[i])) {
            fprintf(stderr, "kgen: --template: template '%s' declares no `space` to tune\n", tmpls[i]);
            goto out;
        }
    }
    if (kgc_layout("--layout", layout) != 0)
        goto out;
    if (!kgi_strategy_find(strategy)) {
        fprintf(stderr, "kgen: unknown --strategy '%s' (known: %s)\n", strategy, kgi_strategy_names());
        goto out;
    }
    /* parameter options (--bm 128) fix a parameter, as --space bm=128 would */
    size_t sl = (space ? strlen(space) : 0) + strlen(args.config) + 2;
    if (!(space_text = malloc(sl)))
        goto out;
    snprintf(space_text, sl, "%s%s%s", space ? space : "", space && args.config[0] ? " " : "", args.config);
    o.space = space_text[0] ? space_text : NULL;
    if (o.space) {
        char why[1024];
        if (kgi_space_check_override(ctx->host, tmpls, nt, o.space, why, sizeof why) != KG_OK) {
            fprintf(stderr, "kgen: %s\n", why);
            goto out;
        }
    }
    long v;
    double d;
    o.dry_run = dry != NULL;
    o.arch = args.arch ? args.arch : 90;
    if (args.arch && !o.dry_run) {
        fprintf(stderr, "kgen: --arch is for --dry-run; a real run tunes the GPU it runs on\n");
        goto out;
    }
    char nvw[160];
    if (!kgi_nvrtc_supports(o.arch, nvw, sizeof nvw)) { /* every candidate would fail to compile */
        fprintf(stderr, "kgen: tune: %s\n", nvw);
        goto out;
    }
    int nshapes = 0;
    if (shapes) {
        if (m || n || k) {
            fprintf(stderr, "kgen: give either --shapes FILE or --m --n --k\n");
            goto out;
        }
        if (kgc_read_shapes(shapes, &shape_list, &nshapes) != 0)
            goto out;
    } else if (m || n || k || o.dry_run) {
        long mv = 4096, nv = 4096, kv = 4096;
        if ((m || n || k) && (!m || !n || !k)) {
            fprintf(stderr, "kgen: give all of --m, --n and --k\n");
            goto out;
        }
        if ((m && kgc_int("--m", m, 1, INT_MAX, &mv)) || (n && kgc_int("--n", n, 1, INT_MAX, &nv)) ||
            (k && kgc_int("--k", k, 1, INT_MAX, &kv)))
            goto out;
        if (!(shape_list = calloc(1, sizeof *shape_list)))
            goto out;
        shape_list->m = (int)mv, shape_list->n = (int)nv, shape_list->k = (int)kv;
        nshapes = 1;
    } else {
        fprintf(stderr, "kgen: tune needs a shape: --m M --n N --k K, or --shapes FILE\n");
        goto out;
    }
    o.shapes = shape_list, o.nshapes = nshapes;
    if (budget) {
        if (kgc_int("--budget", budget, 1, INT_MAX, &v))
            goto out;
        o.budget = (int)v;
    }
    if (time_s && kgc_real("--time", time_s, 0.001, 1e9, &o.time_limit_s))
        goto out;
    if (jobs) {
        if (kgc_int("--jobs", jobs, 1, 1024, &v))
            goto out;
        o.jobs = (int)v;
    }
    if (seed) {
        if (kgc_int("--seed", seed, 0, LONG_MAX, &v))
            goto out;
        o.seed = (unsigned long long)v;
    }
    int devlist[KGI_TUNE_MAX_DEVICES];
    if (device && devices) {
        fprintf(stderr, "kgen: give --device or --devices, not both\n");
        goto out;
    }
    if (device) {
        if (kgc_int("--device", device, 0, 1023, &v))
            goto out;
        devlist[0] = (int)v;
        o.devices = devlist, o.ndevices = 1;
    } else if (devices && strcmp(devices, "all") == 0) {
        o.all_devices = 1;
    } else if (devices) {
        char buf[512];
        if (strlen(devices) >= sizeof buf) {
            fprintf(stderr, "kgen: --devices: list too long\n");
            goto out;
        }
        snprintf(buf, sizeof buf, "%s", devices);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (o.ndevices == KGI_TUNE_MAX_DEVICES || kgc_int("--devices", tok, 0, 1023, &v))
                goto out;
            for (int i = 0; i < o.ndevices; i++)
                if (devlist[i] == v) {
                    fprintf(stderr, "kgen: --devices: device %ld listed twice\n", v);
                    goto out;
                }
            devlist[o.ndevices++] = (int)v;
        }
        o.devices = devlist;
    }
    if (shard) {
        int si, sn, used = 0;
        if (sscanf(shard, "%d/%d%n", &si, &sn, &used) != 2 || shard[used] || sn < 1 || si < 0 || si >= sn) {
            fprintf(stderr, "kgen: --shard must be I/N with 0 <= I < N (got '%s')\n", shard);
            goto out;
        }
        o.shard_i = si, o.shard_n = sn;
    }
    o.force = force != NULL;
    o.db_path = db;
    if ((alpha && kgc_real("--alpha", alpha, -1e30, 1e30, &d)) || (alpha && (o.alpha = (float)d, 0)))
        goto out;
    if ((beta && kgc_real("--beta", beta, -1e30, 1e30, &d)) || (beta && (o.beta = (float)d, 0)))
        goto out;
    if ((maxsec && kgc_real("--max-seconds", maxsec, 0.001, 3600, &o.max_seconds)) ||
        (timeout && kgc_real("--timeout", timeout, 0.1, 86400, &o.timeout_s)) ||
        (slow && kgc_real("--slow-factor", slow, 0, 1e6, &o.slow_factor)) ||
        (minocc && kgc_real("--min-occupancy", minocc, 0, 1, &o.rules.min_occupancy)))
        goto out;
    if (slow && o.slow_factor > 0 && o.slow_factor < 1) {
        fprintf(stderr, "kgen: --slow-factor must be 0 (off) or at least 1\n");
        goto out;
    }
    if (maxspill) {
        if (kgc_int("--max-spill", maxspill, 0, INT_MAX, &v))
            goto out;
        o.rules.max_spill_bytes = (int)v;
    }
    o.back_to_back = b2b != NULL;
    o.flush_l2 = noflush == NULL && !o.back_to_back;
    if (final) {
        if (kgc_int("--final", final, 0, 64, &v))
            goto out;
        o.final_n = (int)v;
    }
    if (final_rounds) {
        if (kgc_int("--final-rounds", final_rounds, 1, 1000, &v))
            goto out;
        o.final_rounds = (int)v;
    }
    int ntop = o.dry_run ? 20 : 10;
    if (top) {
        if (kgc_int("--top", top, 0, INT_MAX, &v))
            goto out;
        ntop = (int)v;
    }
    if (csv && json) {
        fprintf(stderr, "kgen: give --csv or --json, not both\n");
        goto out;
    }
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el <= 0) {
        fprintf(stderr, "kgen: cannot find the kgen binary (/proc/self/exe) to start GPU workers\n");
        rc = KGC_FAIL;
        goto out;
    }
    exe[el] = '\0';
    o.exe = exe;
    char command[2048];
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof command; i++)
        cl += (size_t)snprintf(command + cl, sizeof command - cl, "%s%s", i ? " " : "kgen ", argv[i]);
    o.command = command;
    view vw = {.tty = isatty(2), .last_step = -1};
    o.progress_ud = &vw;
    o.interrupted = &interrupted;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    kgi_tune_report rep;
    char err[2048];
    kg_status st = kgi_tune_run(&o, &rep, err, sizeof err);
    if (vw.active)
        fputc('\n', stderr);
    if (rep.nshapes > 0 || rep.space.enumerated > 0) {
        print_summary(&rep, &o, ntop);
        if (csv || json)
            print_machine(&rep, &o, ntop, json != NULL);
    }
    if (st != KG_OK)
        fprintf(stderr, "kgen: tune: %s\n", err);
    rc = st == KG_OK ? KGC_OK : (st == KG_ERR_CONFIG || st == KG_ERR_INVALID_ARG) ? KGC_USAGE : KGC_FAIL;
    if (rep.interrupted) {
        int sig = interrupted ? (int)interrupted : SIGINT;
        fprintf(stderr, "kgen: tune: interrupted (%s)%s\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                o.dry_run ? "" : "; what finished is in the database: run again to resume");
        /* A compile may still be running in a pool thread left to finish:
         * end the process now rather than unwind under it. */
        fflush(NULL);
        _exit(128 + sig);
    }
    if (rep.compiles_left) {
        /* stopped at the time limit with a compile in flight: the same */
        fflush(NULL);
        _exit(rc);
    }
    kgi_tune_report_free(&rep);
out:
    kgi_config_list_free(&cfg_list);
    free(space_text);
    free(shape_list);
    free(av);
    kg_context_close(ctx);
    return rc;
}
