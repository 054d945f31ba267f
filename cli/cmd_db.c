/*
 * cmd_db.c -- `kgen db list|show|export|import|merge`: reviewing, sharing
 * and combining tuning databases.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autotune/db.h"
#include "cli.h"
#include "gen/config.h"
#include "gen/host.h"

static void print_group(void *ud, const kgi_db_group *g)
{
    int *n = ud;
    if ((*n)++ == 0)
        printf("%-28s %-6s %-4s %-6s %-18s %6s %5s %10s %8s  %s\n", "device", "arch", "SMs", "layout", "shape", "rows",
               "ok", "best ms", "TFLOP/s", "best configuration");
    char shape[64], arch[16];
    snprintf(shape, sizeof shape, "%dx%dx%d", g->m, g->n, g->k);
    snprintf(arch, sizeof arch, "sm_%d", g->cc);
    char final[80] = "";
    if (g->best_final_ms > 0)
        snprintf(final, sizeof final, " [final stage: %.4f ms back to back]", g->best_final_ms);
    if (g->best_tmpl[0])
        printf("%-28.28s %-6s %-4d %-6s %-18s %6d %5d %10.4f %8.2f  %s %s%s\n", g->device, arch, g->sm_count, g->layout,
               shape, g->rows, g->ok, g->best_ms, g->best_tflops, g->best_tmpl, g->best_config, final);
    else
        printf("%-28.28s %-6s %-4d %-6s %-18s %6d %5d %10s %8s  (none ran correctly)\n", g->device, arch, g->sm_count,
               g->layout, shape, g->rows, g->ok, "-", "-");
}

static void print_result(void *ud, const kgi_dbkey *key, const kgi_result *r)
{
    int *n = ud;
    if ((*n)++ == 0)
        printf("%-16s %-14s %10s %8s %5s %7s %5s  %-10s %s\n", "outcome", "shape", "time ms", "TFLOP/s", "regs", "smem",
               "occ", "template", "configuration / reason");
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d", key->m, key->n, key->k);
    printf("%-16s %-14s %10.4f %8.2f %5d %7ld %4.0f%%  %-10s %s\n", kgi_outcome_name(r->outcome), shape, r->time_ms,
           r->tflops, r->registers, r->smem_bytes, 100 * r->occupancy, key->tmpl, key->config);
    if (r->final_ms > 0)
        printf("%68sfinal stage: %.4f ms back to back\n", "", r->final_ms);
    if (r->reason[0])
        printf("%68s%.200s\n", "", r->reason);
}

char *kgc_slurp(const char *path, size_t *len)
{
    char err[1024];
    char *buf = strcmp(path, "-") == 0 ? kgi_read_stream(stdin, "", "-", (size_t)1 << 30, len, err, sizeof err)
                                       : kgi_read_file("", path, (size_t)1 << 30, len, err, sizeof err);
    if (!buf)
        fprintf(stderr, "kgen: %s\n", err);
    return buf;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The outermost folder on the way to path's folder that does not exist yet
 * ("" when all do). */
static void first_missing_dir(const char *path, char *out, size_t len)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    out[0] = '\0';
    for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
        *slash = '\0';
        struct stat sb;
        if (stat(dir, &sb) == 0)
            break;
        snprintf(out, len, "%s", dir);
    }
}

/* Removes a database this command created (with its journal files) and the
 * folders it created for it, up to and including `made`. */
static void remove_created(const char *path, const char *made)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char f[4200];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(f, sizeof f, "%s%s", path, suffixes[i]);
        unlink(f);
    }
    if (!made[0])
        return;
    snprintf(f, sizeof f, "%s", path);
    for (char *slash = strrchr(f, '/'); slash && slash != f; slash = strrchr(f, '/')) {
        *slash = '\0';
        if (rmdir(f) != 0 || strcmp(f, made) == 0)
            break;
    }
}

/* An import's configurations, checked by their templates before anything is
 * written: each must parse (a known template, known parameters in range),
 * and one that ran must be written as the tuner writes it (canonical), so
 * that it keys the same row as the tuner's own, with the layout of its
 * row's layout column. */
typedef struct import_check {
    kgi_host *host;
    const char *file;
} import_check;

static int check_config(void *ud, const char *tmpl, const char *config, const char *layout, int ran)
{
    import_check *ic = ud;
    char why[1024], canon[2048], own[16];
    /* the canonical text with no limits: parsed and completed, check() not run (a row may come from
     * another architecture, or from a kgen whose rules were otherwise) */
    if (kgi_host_check(ic->host, tmpl, config, NULL, canon, sizeof canon, why, sizeof why) != KG_OK) {
        fprintf(stderr, "kgen: %s: %s '%s': %s (nothing was written)\n", ic->file, tmpl, config, why);
        return 1;
    }
    if (!ran)
        return 0;
    if (strcmp(canon, config) != 0) {
        fprintf(stderr, "kgen: %s: %s '%s' is not written as kgen writes it ('%s') (nothing was written)\n",
                ic->file, tmpl, config, canon);
        return 1;
    }
    if (kgi_config_text_get(canon, "layout", own, sizeof own) == 0 && strcmp(own, layout) != 0) {
        fprintf(stderr, "kgen: %s: %s '%s' computes layout %s, but its row's layout is %s (nothing was written)\n",
                ic->file, tmpl, config, own, layout);
        return 1;
    }
    return 0;
}

static const char db_usage[] = "kgen db list|show|export|import|merge [--db FILE] ... (see 'kgen help db')";

int kgc_cmd_db(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "kgen: %s\n", db_usage);
        return KGC_USAGE;
    }
    const char *sub = argv[1];
    int is_list = !strcmp(sub, "list"), is_show = !strcmp(sub, "show"), is_export = !strcmp(sub, "export");
    int is_import = !strcmp(sub, "import"), is_merge = !strcmp(sub, "merge");
    if (!is_list && !is_show && !is_export && !is_import && !is_merge) {
        fprintf(stderr, "kgen: unknown db command '%s' (list, show, export, import, merge)\n", sub);
        return KGC_USAGE;
    }
    const char *dbpath = NULL, *output = NULL, *format = NULL, *device = NULL, *layout = NULL, *outcome = NULL,
               *m = NULL, *n = NULL, *k = NULL, *top = NULL, *tmpl_filter = NULL;
    const kgc_opt own[] = {{"--db", NULL, 1, &dbpath},       {"-o", "--output", 1, &output},
                           {"--format", NULL, 1, &format},   {"--device", NULL, 1, &device},
                           {"--layout", NULL, 1, &layout},   {"--outcome", NULL, 1, &outcome},
                           {"--m", NULL, 1, &m},             {"--n", NULL, 1, &n},
                           {"--k", NULL, 1, &k},             {"--top", NULL, 1, &top},
                           {"--template", NULL, 1, &tmpl_filter}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgi_db *db = NULL;
    char *buf = NULL, **texts = NULL;
    kgi_host *host = NULL;
    size_t buflen = 0;
    FILE *mem = NULL;
    kgc_args args;
    size_t lens[sizeof args.positional / sizeof args.positional[0]] = {0};
    if ((rc = kgc_parse(ctx, argc - 1, argv + 1, own, (is_import || is_merge) ? 8 : 0, &args)) != KGC_OK)
        goto out;
    rc = KGC_USAGE;
    if (args.nparam > 0) {
        fprintf(stderr, "kgen: db %s takes no template parameters\n", sub);
        goto out;
    }
    if ((is_import || is_merge) && args.npositional == 0) {
        fprintf(stderr, "kgen: db %s needs at least one FILE\n", sub);
        goto out;
    }
    if ((output || format) && !is_export) {
        fprintf(stderr, "kgen: -o and --format are options of db export\n");
        goto out;
    }
    int fmt = KGI_FMT_CSV;
    if (format && strcmp(format, "csv") && strcmp(format, "json")) {
        fprintf(stderr, "kgen: --format must be csv or json (got '%s')\n", format);
        goto out;
    }
    if ((format && !strcmp(format, "json")) || (!format && output && ends_with(output, ".json")))
        fmt = KGI_FMT_JSON;
    kgi_db_filter flt = {device, tmpl_filter, layout, outcome, 0, 0, 0};
    long v;
    if ((m && kgc_int("--m", m, 1, INT_MAX, &v)) || (m && (flt.m = (int)v, 0)) ||
        (n && kgc_int("--n", n, 1, INT_MAX, &v)) || (n && (flt.n = (int)v, 0)) ||
        (k && kgc_int("--k", k, 1, INT_MAX, &v)) || (k && (flt.k = (int)v, 0)))
        goto out;
    if (layout && kgc_layout("--layout", layout) != 0)
        goto out;
    if (!is_show && !is_export && (layout || device || tmpl_filter || outcome || m || n || k)) {
        fprintf(stderr, "kgen: db %s takes no filters (db show and db export do)\n", sub);
        goto out;
    }
    if (!is_show && top) {
        fprintf(stderr, "kgen: --top is an option of db show\n");
        goto out;
    }
    if (outcome && kgi_outcome_parse(outcome) == KGI_OUT_NONE) {
        fprintf(stderr, "kgen: --outcome: unknown outcome '%s' (ok, slow, wrong, fault, hang, error, compile_error, pruned_*)\n",
                outcome);
        goto out;
    }
    int limit = is_show ? 20 : 0;
    if (top) {
        if (kgc_int("--top", top, 0, INT_MAX, &v))
            goto out;
        limit = (int)v;
    }
    char path[4096], err[2048];
    int own_default = 0; /* kgen's own default location, whose folders it makes */
    if (dbpath)
        snprintf(path, sizeof path, "%s", dbpath);
    else if ((own_default = kgi_db_default_path(path, sizeof path)) < 0) {
        fprintf(stderr, "kgen: no database path: give --db, or set KGEN_DB, XDG_DATA_HOME or HOME\n");
        goto out;
    }
    rc = KGC_FAIL;
    int writing = is_import || is_merge;
    struct stat target;
    int existed = stat(path, &target) == 0;
    if (!writing && !existed && errno == ENOENT) {
        /* Nothing tuned yet: not an error for list and show (nothing to list); export
         * fails below with the opener's message */
        if (!is_export) {
            printf("%s: no tuning database yet (kgen tune or kgen db import creates it)\n", path);
            rc = KGC_OK;
            goto out;
        }
    }
    for (int i = 0; is_merge && existed && i < args.npositional; i++) {
        struct stat sb;
        if (stat(args.positional[i], &sb) == 0 && sb.st_dev == target.st_dev && sb.st_ino == target.st_ino) {
            fprintf(stderr, "kgen: cannot merge '%s' into itself (it is the database %s)\n", args.positional[i],
                    path);
            goto out;
        }
    }
    struct stat sb;
    if (is_export && output && existed && stat(output, &sb) == 0 && sb.st_dev == target.st_dev && sb.st_ino == target.st_ino) {
        fprintf(stderr, "kgen: -o '%s' is the database %s itself: give another file\n", output, path);
        goto out;
    }
    /* All or nothing: every input is read and checked before the database is
     * touched (an import parsed into a scratch database in memory, a merge's
     * source opened as a tuning database) */
    if (writing && !(texts = calloc((size_t)args.npositional, sizeof *texts))) {
        fprintf(stderr, "kgen: out of memory\n");
        goto out;
    }
    for (int i = 0; writing && i < args.npositional; i++) {
        const char *file = args.positional[i];
        kgi_db *check = NULL;
        int ins = 0, upd = 0, kept = 0;
        kg_status st;
        if (is_merge) {
            st = kgi_db_open(file, KGI_DB_READONLY, &check, err, sizeof err);
        } else {
            if (!(texts[i] = kgc_slurp(file, &lens[i])))
                goto out;
            st = kgi_db_open(":memory:", KGI_DB_CREATE, &check, err, sizeof err);
            if (st == KG_OK)
                st = kgi_db_import(check, texts[i], lens[i], &ins, &upd, &kept, err, sizeof err);
            if (st == KG_OK) {
                if (!host && (!(host = kgi_host_new()) ||
                              (kgc_template_path(&args) && kgi_host_set_path(host, kgc_template_path(&args)) != 0))) {
                    kgi_db_close(check);
                    fprintf(stderr, "kgen: out of memory\n");
                    goto out;
                }
                import_check ic = {host, file};
                if ((st = kgi_db_each_config(check, check_config, &ic, err, sizeof err)) == KG_ERR_CONFIG) {
                    kgi_db_close(check);
                    goto out;
                }
            }
        }
        kgi_db_close(check);
        if (st != KG_OK) { /* the file named once: kgi_db_open's errors (a merge's) name it already */
            fprintf(stderr, "kgen: %s%s%s (nothing was written)\n", is_merge ? "" : file, is_merge ? "" : ": ", err);
            goto out;
        }
    }
    /* A failed import or merge leaves no trace: a database it created, and
     * the folders it created for it, are removed again. */
    char made[4096] = "";
    if (writing && !existed)
        first_missing_dir(path, made, sizeof made);
    if (kgi_db_open(path, writing ? KGI_DB_CREATE | (own_default == 1 ? KGI_DB_MKDIR : 0) : KGI_DB_READONLY, &db, err,
                    sizeof err) != KG_OK) {
        fprintf(stderr, "kgen: %s\n", err);
        if (writing && !existed)
            remove_created(path, made);
        goto out;
    }
    if (is_list || is_show) {
        int count = 0;
        kg_status st = is_list ? kgi_db_list(db, print_group, &count) : kgi_db_show(db, &flt, limit, print_result, &count);
        if (st != KG_OK) {
            fprintf(stderr, "kgen: %s: %s\n", path, kgi_db_error(db));
            goto out;
        }
        if (count == 0)
            printf("%s: no %s\n", path, is_list ? "tuning results" : "matching rows");
        rc = KGC_OK;
    } else if (is_export) {
        if (!(mem = open_memstream(&buf, &buflen))) {
            fprintf(stderr, "kgen: out of memory\n");
            goto out;
        }
        int rows;
        kg_status st = kgi_db_export(db, mem, fmt, &flt, &rows, err, sizeof err);
        fclose(mem);
        mem = NULL;
        if (st != KG_OK) {
            fprintf(stderr, "kgen: %s\n", err);
            goto out;
        }
        if (kgc_write_file(output, buf, buflen) != 0)
            goto out;
        if (output && strcmp(output, "-"))
            fprintf(stderr, "kgen: exported %d rows to %s\n", rows, output);
        rc = KGC_OK;
    } else {
        for (int i = 0; i < args.npositional; i++) {
            const char *file = args.positional[i];
            int ins = 0, upd = 0, kept = 0;
            kg_status st;
            if (is_merge) {
                st = kgi_db_merge(db, file, &ins, &upd, &kept, err, sizeof err);
            } else {
                st = kgi_db_import(db, texts[i], lens[i], &ins, &upd, &kept, err, sizeof err);
            }
            if (st != KG_OK) {
                fprintf(stderr, "kgen: %s: %s%s\n", file, err,
                        i > 0 ? " (the files before it were applied)" : " (nothing was written)");
                if (i == 0 && !existed) {
                    kgi_db_close(db);
                    db = NULL;
                    remove_created(path, made);
                }
                goto out;
            }
            printf("%s: %d rows added, %d replaced by newer measurements, %d kept (the database's were newer)\n", file,
                   ins, upd, kept);
        }
        rc = KGC_OK;
    }
out:
    if (mem)
        fclose(mem);
    free(buf);
    for (int i = 0; texts && i < args.npositional; i++)
        free(texts[i]);
    free(texts);
    kgi_host_free(host);
    kgi_db_close(db);
    kg_context_close(ctx);
    return rc;
}
