/*
 * bench_opts.c -- kgen-bench's command line, its configurations file and
 * the checks made before any GPU work (see bench_opts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_opts.h"
#include "kgen.h"
#include "write_file.h"

static const char *const all_layouts[4] = {"nn", "nt", "tn", "tt"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kgen-bench [--shapes FILE] [--layout nn|nt|tn|tt|all] [--csv FILE] [--no-db]\n"
            "                  [--template NAME --config \"k=v ...\" | --configs FILE]\n"
            "                  [--alpha A] [--beta B] [--ld-multiple L]\n"
            "                  [--samples N] [--min-ms T] [--device N]\n"
            "       kgen-bench --device-name [--device N]\n"
            "  Times kg_matmul's choice (or each explicit kernel) against cuBLAS FP32 (pedantic, no TF32)\n"
            "  on each shape of FILE (default bench/shapes.txt) in each layout, checks their results\n"
            "  against each other (C poisoned with NaN first) and prints\n"
            "  tag layout M N K kgen_TFLOP/s cublas_TFLOP/s ratio error template configuration.\n"
            "  --shapes FILE      lines 'tag M N K' or 'tag M N K LDA LDB LDC' ('#' comments);\n"
            "                     without LDA LDB LDC the operands are packed\n"
            "  --layout L         nn (default), nt, tn, tt, or all four\n"
            "  --csv FILE         the table as CSV, written once every shape has run\n"
            "  --no-db            kg_matmul reads no tuning database (its built-in choice)\n"
            "  --config TEXT      time this configuration of --template (default matmul);\n"
            "                     without layout=, it runs in each --layout\n"
            "  --configs FILE     time several: one 'TEMPLATE k=v ...' a line ('#' comments)\n"
            "  --alpha, --beta    the timed call's scalars (default 1 and 0)\n"
            "  --ld-multiple L    round the packed lda and ldb up to a multiple of L\n"
            "  --samples N        timing samples per pass (default 15), each at least\n"
            "  --min-ms T         milliseconds long (default 2)\n"
            "  --device N         the GPU (default 0); --device-name prints its name\n"
            "  Exit status: 0 all correct; 1 a wrong result or a failure (no GPU: the message\n"
            "  starts 'kgen-bench: no GPU:'); 2 bad input.\n");
}

static int parse_layout(const char *v, kgb_opts *o)
{
    if (strcmp(v, "all") == 0) {
        for (int i = 0; i < 4; i++)
            o->layouts[i] = all_layouts[i];
        o->nlayouts = 4;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (strcmp(v, all_layouts[i]) == 0) {
            o->layouts[0] = all_layouts[i];
            o->nlayouts = 1;
            return 0;
        }
    fprintf(stderr, "kgen-bench: --layout must be nn, nt, tn, tt or all (got '%s')\n", v);
    return -1;
}

/* A number option: the whole text must be the number. */
static int number(const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (errno || end == v || *end) {
        fprintf(stderr, "kgen-bench: %s: '%s' is not a number\n", opt, v);
        return -1;
    }
    return 0;
}

/* A number option with a range: the message names the option, what it
 * takes and the text given, so each option is told apart. */
static int ranged(const char *opt, const char *v, double lo, double hi, int whole, const char *what, double *out)
{
    if (number(opt, v, out))
        return -1;
    if (!(*out >= lo && *out <= hi) || (whole && *out != (long)*out)) {
        fprintf(stderr, "kgen-bench: %s must be %s %g..%g (got '%s')\n", opt, what, lo, hi, v);
        return -1;
    }
    return 0;
}

int kgb_parse(int argc, char **argv, kgb_opts *o)
{
    memset(o, 0, sizeof *o);
    o->layouts[0] = "nn";
    o->nlayouts = 1;
    o->samples = 15;
    o->ld_mult = 1;
    o->min_ms = 2.0;
    o->alpha = 1.0f;
    double samples = 15, device = 0, ld_mult = 1, alpha = 1, beta = 0;
    static const char *const valued[] = {"--shapes", "--csv",     "--layout", "--template", "--config",
                                         "--configs", "--samples", "--device", "--min-ms",   "--alpha",
                                         "--beta",   "--ld-multiple"};
    /* Each valued option once: a second one would silently replace the
     * first (a --config meant to add a kernel, a --csv meant to add a file). */
    unsigned char seen[sizeof valued / sizeof *valued] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(a, "--no-db") == 0) {
            o->no_db = 1;
            continue;
        }
        if (strcmp(a, "--device-name") == 0) {
            o->device_name = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "kgen-bench: unexpected argument '%s' (see --help)\n", a);
            return -1;
        }
        size_t at = 0;
        while (at < sizeof valued / sizeof *valued && strcmp(a, valued[at]) != 0)
            at++;
        if (at == sizeof valued / sizeof *valued) {
            fprintf(stderr, "kgen-bench: unknown option '%s' (see --help)\n", a);
            return -1;
        }
        if (seen[at]++) {
            fprintf(stderr, "kgen-bench: %s given twice\n", a);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "kgen-bench: %s needs a value (see --help)\n", a);
            return -1;
        }
        const char *v = argv[++i];
        int rc = 0;
        if (strcmp(a, "--shapes") == 0) o->shapes = v;
        else if (strcmp(a, "--csv") == 0) o->csv = v;
        else if (strcmp(a, "--template") == 0) o->tmpl = v;
        else if (strcmp(a, "--config") == 0) o->config = v;
        else if (strcmp(a, "--configs") == 0) o->configs = v;
        else if (strcmp(a, "--layout") == 0) rc = parse_layout(v, o);
        else if (strcmp(a, "--samples") == 0) rc = ranged(a, v, 1, 1000, 1, "a whole number", &samples);
        else if (strcmp(a, "--device") == 0) rc = ranged(a, v, 0, 1024, 1, "a GPU number", &device);
        else if (strcmp(a, "--min-ms") == 0) rc = ranged(a, v, 0, 1000, 0, "a number in", &o->min_ms);
        else if (strcmp(a, "--alpha") == 0) rc = ranged(a, v, -1e30, 1e30, 0, "a finite float in", &alpha);
        else if (strcmp(a, "--beta") == 0) rc = ranged(a, v, -1e30, 1e30, 0, "a finite float in", &beta);
        else rc = ranged(a, v, 1, 1024, 1, "a whole number", &ld_mult); /* --ld-multiple */
        if (rc)
            return -1;
    }
    o->samples = (int)samples, o->device = (int)device, o->ld_mult = (int)ld_mult;
    o->alpha = (float)alpha, o->beta = (float)beta;
    if (o->tmpl && !o->config) {
        fprintf(stderr, "kgen-bench: --template needs --config (without either, kg_matmul chooses)\n");
        return -1;
    }
    if (o->configs && (o->config || o->tmpl)) {
        fprintf(stderr, "kgen-bench: --configs FILE names the templates and configurations itself: give it "
                        "without --template and --config\n");
        return -1;
    }
    /* The CSV is written at the end of a run of minutes: a path that cannot
     * be written is bad input, found now. */
    if (o->csv && kgw_check_output("kgen-bench", "--csv", o->csv))
        return -1;
    return 0;
}

/* Whether `config` names a layout, and which (into buf). */
static int named_layout(const char *config, char *buf, size_t len)
{
    const char *p = config;
    while ((p = strstr(p, "layout=")) != NULL) {
        if (p == config || p[-1] == ' ' || p[-1] == '\t') {
            snprintf(buf, len, "%.*s", (int)strcspn(p + 7, " \t"), p + 7);
            return 1;
        }
        p += 7;
    }
    return 0;
}

int kgb_spec_config(const kgb_spec *spec, const char *layout, char *buf, size_t len)
{
    char named[16];
    if (named_layout(spec->config, named, sizeof named)) {
        if (strcmp(named, layout) != 0)
            return -1;
        snprintf(buf, len, "%s", spec->config);
    } else {
        snprintf(buf, len, "%s%slayout=%s", spec->config, spec->config[0] ? " " : "", layout);
    }
    return 0;
}

static int add_spec(kgb_opts *o, int *cap, const char *tmpl, const char *config, const char *origin)
{
    if (strlen(tmpl) >= sizeof o->specs->tmpl || strlen(config) + 16 >= sizeof o->specs->config) {
        fprintf(stderr, "kgen-bench: %s: the template name or configuration is too long\n", origin);
        return -1;
    }
    if (o->nspecs == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        kgb_spec *grown = realloc(o->specs, (size_t)*cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "kgen-bench: out of memory\n");
            return -1;
        }
        o->specs = grown;
    }
    kgb_spec *s = &o->specs[o->nspecs++];
    snprintf(s->tmpl, sizeof s->tmpl, "%s", tmpl);
    snprintf(s->config, sizeof s->config, "%s", config);
    snprintf(s->origin, sizeof s->origin, "%s", origin);
    return 0;
}

static int read_configs(kgb_opts *o, int *cap)
{
    FILE *f = fopen(o->configs, "r");
    if (!f) {
        fprintf(stderr, "kgen-bench: cannot open configurations file '%s': %s\n", o->configs, strerror(errno));
        return -1;
    }
    char line[1200], origin[300];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(origin, sizeof origin, "%s:%d", o->configs, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "kgen-bench: %s: line longer than %zu characters\n", origin, sizeof line - 2);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        char tmpl[64];
        int used = 0;
        if (sscanf(line, " %63s %n", tmpl, &used) != 1)
            continue; /* blank or comment */
        if (strchr(tmpl, '=')) {
            fprintf(stderr, "kgen-bench: %s: expected 'TEMPLATE k=v ...' (the line starts with '%s')\n", origin,
                    tmpl);
            rc = -1;
            break;
        }
        rc = add_spec(o, cap, tmpl, line + used, origin);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "kgen-bench: cannot read configurations file '%s': %s\n", o->configs, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && o->nspecs == 0) {
        fprintf(stderr, "kgen-bench: %s: no configurations\n", o->configs);
        rc = -1;
    }
    return rc;
}

int kgb_load_specs(kgb_opts *o)
{
    int cap = 0;
    if (o->config && add_spec(o, &cap, o->tmpl ? o->tmpl : "matmul", o->config, "--config"))
        return -1;
    if (o->configs && read_configs(o, &cap))
        return -1;
    if (o->nspecs == 0)
        return 0;
    kg_context *cpu;
    kg_status st = kg_context_open(&cpu, KG_DEVICE_NONE);
    if (st != KG_OK) {
        fprintf(stderr, "kgen-bench: %s\n", cpu ? kg_last_error(cpu) : kg_strerror(st));
        kg_context_close(cpu);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < o->nspecs && rc == 0; i++) {
        const kgb_spec *s = &o->specs[i];
        int runs = 0;
        for (int l = 0; l < o->nlayouts && rc == 0; l++) {
            char config[1200];
            if (kgb_spec_config(s, o->layouts[l], config, sizeof config))
                continue;
            runs++;
            kg_source *src = NULL;
            if (kg_render(cpu, s->tmpl, config, &src) != KG_OK) {
                fprintf(stderr, "kgen-bench: %s: %s\n", s->origin, kg_last_error(cpu));
                rc = -1;
            }
            kg_source_free(src);
        }
        if (rc == 0 && runs == 0) {
            fprintf(stderr, "kgen-bench: %s: the configuration's layout is not among --layout's\n", s->origin);
            rc = -1;
        }
    }
    kg_context_close(cpu);
    return rc;
}

void kgb_free_specs(kgb_opts *o)
{
    free(o->specs);
    o->specs = NULL;
    o->nspecs = 0;
}

int kgb_no_db_begin(kgb_opts *o)
{
    snprintf(o->no_db_dir, sizeof o->no_db_dir, "%s", "/tmp/kgen-bench-nodb-XXXXXX");
    if (!mkdtemp(o->no_db_dir)) {
        fprintf(stderr, "kgen-bench: --no-db: cannot create a directory under /tmp: %s\n", strerror(errno));
        o->no_db_dir[0] = '\0';
        return -1;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/none.db", o->no_db_dir);
    if (setenv("KGEN_DB", path, 1) != 0) {
        fprintf(stderr, "kgen-bench: --no-db: cannot set KGEN_DB: %s\n", strerror(errno));
        kgb_no_db_end(o);
        return -1;
    }
    return 0;
}

void kgb_no_db_end(kgb_opts *o)
{
    if (o->no_db_dir[0])
        rmdir(o->no_db_dir);
    o->no_db_dir[0] = '\0';
}
