/*
 * tunedb.c -- the tuning database's read side (see tunedb.h): kg_matmul's
 * view of it, the best tuned configuration for the context's device,
 * layout and shape. The tuner writes the file (autotune/db.c).
 *
 * Order of preference (each fallback is named in `why`):
 *   1. exact shape: the fastest `ok` row for this M, N, K (where the
 *      tuner's final stage ran for the shape, the fastest of its finalists
 *      by their final, back-to-back time; else by the search's time);
 *   2. nearest shape: among tuned shapes within KGI_LOOKUP_MAX_DISTANCE,
 *      the one closest in log2 space, distance |log2 M/M'| + |log2 N/N'| +
 *      |log2 K/K'| (so shapes in the same power-of-two bucket in every
 *      dimension are less than 3 apart), and its fastest row;
 *   3. none: KG_ERR_DB, and the caller uses the catalogue or a model
 *      (kg_matmul asks for the exact shape alone first: runtime/matmul.c).
 * A row counts only when it is for the same device name, compute capability
 * and SM count, the same layout, dtype f32, when its template's version is
 * the version loaded now (a changed template invalidates its entries), and
 * when the kernel's preconditions (multiples of M, N, K and of the packed
 * leading dimensions) admit the requested shape.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "runtime.h"
#include "tunedb.h"

#define KGI_LOOKUP_MAX_DISTANCE 3.0

struct kgi_tunedb {
    sqlite3 *db;            /* NULL when it could not be opened */
    char path[4096];
    char open_error[1024];
    int tried;
};

void kgi_tunedb_close(kg_context *ctx)
{
    if (!ctx || !ctx->db)
        return;
    sqlite3_close(ctx->db->db);
    free(ctx->db);
    ctx->db = NULL;
}

int kgi_db_default_path(char *buf, size_t len)
{
    const char *env = getenv("KGEN_DB");
    if (env && env[0])
        return (size_t)snprintf(buf, len, "%s", env) < len ? 0 : -1;
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec: a relative path is invalid and ignored */
        return (size_t)snprintf(buf, len, "%s/kgen/tune.db", xdg) < len ? 1 : -1;
    const char *home = getenv("HOME");
    if (home && home[0])
        return (size_t)snprintf(buf, len, "%s/.local/share/kgen/tune.db", home) < len ? 1 : -1;
    return -1;
}

int kgi_tunedb_schema_version(sqlite3 *h, const char *path, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, NULL) != SQLITE_OK) {
        const char *m = sqlite3_errmsg(h);
        if (strstr(m, "no such table"))
            return 0;
        if (strstr(m, "no such column")) /* someone's table called meta */
            snprintf(err, errlen, "'%s' is not a kgen tuning database (its table meta is not kgen's: %s)", path, m);
        else
            snprintf(err, errlen, "%s: %s", path, m);
        return -1;
    }
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

int kgi_tunedb_not_dir(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "'%s' is a directory, not a tuning database", path);
        return -1;
    }
    return 0;
}

kg_status kgi_tunedb_open(const char *path, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *h = NULL;
    *out = NULL;
    /* A reader opens the file read-write where it may and refuses every
     * write with query_only (below): in WAL mode only a connection that may
     * write removes the -wal and -shm files when it is the last to close,
     * so a truly read-only connection would leave them behind. A file it
     * may not write is opened read-only. Never created. */
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        snprintf(err, errlen, "no tuning database at %s yet (kgen tune or kgen db import creates it)", path);
        return KG_ERR_DB;
    }
    if (kgi_tunedb_not_dir(path, err, errlen) != 0)
        return KG_ERR_DB;
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK && h) {
        sqlite3_close(h);
        h = NULL;
        rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open tuning database '%s': %s", path, h ? sqlite3_errmsg(h) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(h, KGI_DB_BUSY_TIMEOUT_MS);
    int v = kgi_tunedb_schema_version(h, path, err, errlen);
    if (v < 0)
        goto fail;
    if (v == 0) {
        snprintf(err, errlen, "'%s' is not a kgen tuning database (no schema)", path);
        goto fail;
    }
    if (v == 1) {
        /* final_ms reads as 0 (no finalists) without writing to the file: a
         * temporary view shadows the table for this connection. */
        char *msg = NULL;
        if (sqlite3_exec(h, "CREATE TEMP VIEW results AS SELECT *, 0.0 AS final_ms FROM main.results;", NULL, NULL,
                         &msg) != SQLITE_OK) {
            snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(h));
            sqlite3_free(msg);
            goto fail;
        }
        v = KGI_DB_SCHEMA_VERSION;
    }
    if (v != KGI_DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "'%s' has schema version %d; this kgen reads version %d", path, v, KGI_DB_SCHEMA_VERSION);
        goto fail;
    }
    if (sqlite3_exec(h, "PRAGMA query_only=1;", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(h));
        goto fail;
    }
    *out = h;
    return KG_OK;
fail:
    sqlite3_close(h);
    return KG_ERR_DB;
}

/* Opens the database once per context; later calls reuse it (or its error). */
static struct kgi_tunedb *tunedb(kg_context *ctx)
{
    if (!ctx->db) {
        ctx->db = calloc(1, sizeof *ctx->db);
        if (!ctx->db)
            return NULL;
    }
    struct kgi_tunedb *t = ctx->db;
    if (!t->tried) {
        t->tried = 1;
        if (kgi_db_default_path(t->path, sizeof t->path) < 0)
            snprintf(t->open_error, sizeof t->open_error, "no tuning database (KGEN_DB, XDG_DATA_HOME and HOME are unset)");
        else
            kgi_tunedb_open(t->path, &t->db, t->open_error, sizeof t->open_error);
    }
    return t;
}

/* The version of template `name` as loaded now, or -1. */
static int template_version(kg_context *ctx, const char *name)
{
    return kgi_host_template_version(ctx->host, name);
}

/* The packed leading dimensions of A and B for a layout. */
static void natural_ld(const char *layout, int m, int n, int k, int *lda, int *ldb)
{
    *lda = layout[0] == 't' ? m : k;
    *ldb = layout[1] == 't' ? k : n;
}

static double log2_distance(int m, int n, int k, int m2, int n2, int k2)
{
    return fabs(log2((double)m / m2)) + fabs(log2((double)n / n2)) + fabs(log2((double)k / k2));
}

/* Small per-call cache of template versions. */
typedef struct versions {
    char name[16][64];
    int version[16];
    int n;
} versions;

static int cached_version(kg_context *ctx, versions *vs, const char *name)
{
    for (int i = 0; i < vs->n; i++)
        if (strcmp(vs->name[i], name) == 0)
            return vs->version[i];
    int v = template_version(ctx, name);
    if (vs->n < 16) {
        snprintf(vs->name[vs->n], sizeof vs->name[0], "%s", name);
        vs->version[vs->n++] = v;
    }
    return v;
}

/* kgi_tunedb_query with the nearest shape's distance bounded by max_dist
 * (0: the exact shape only). */
static kg_status query_within(sqlite3 *db, const char *path, kg_context *ctx, const kg_device_info *info,
                              const char *layout, int m, int n, int k, double max_dist, char *tmpl, size_t tmpl_len,
                              char *config, size_t config_len, char *why, size_t why_len)
{
    sqlite3_stmt *q;
    const char *sql = "SELECT template, template_version, config, m, n, k, time_ms, tflops, m_multiple, n_multiple,"
                      " k_multiple, ld_multiple, final_ms FROM results WHERE device = ?1 AND cc = ?2 AND sm_count = ?3"
                      " AND layout = ?4 AND dtype = 'f32' AND outcome = 'ok' AND time_ms > 0"
                      " ORDER BY " KGI_DB_BEST_FIRST;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        snprintf(why, why_len, "tuning database %s: %s", path, sqlite3_errmsg(db));
        return KG_ERR_DB;
    }
    sqlite3_bind_text(q, 1, info->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 2, info->cc_major * 10 + info->cc_minor);
    sqlite3_bind_int(q, 3, info->sm_count);
    sqlite3_bind_text(q, 4, layout, -1, SQLITE_STATIC);
    int lda, ldb;
    natural_ld(layout, m, n, k, &lda, &ldb);
    versions vs = {.n = 0};
    double best_dist = INFINITY, best_ms = 0, best_tflops = 0, best_final = 0;
    int best_shape[3] = {0, 0, 0}, stale = 0, rows = 0, rc;
    char best_tmpl[64] = "", best_cfg[512] = "";
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rows++;
        const char *name = (const char *)sqlite3_column_text(q, 0);
        int mm = sqlite3_column_int(q, 3), nn = sqlite3_column_int(q, 4), kk = sqlite3_column_int(q, 5);
        double dist = log2_distance(m, n, k, mm, nn, kk);
        /* Per shape, rows come best first (the final stage's finalists by
         * their final time, then the rest by the search's time): a later
         * row wins only by being strictly nearer. */
        if (!(dist < best_dist) || dist > max_dist)
            continue;
        int mmul = sqlite3_column_int(q, 8), nmul = sqlite3_column_int(q, 9), kmul = sqlite3_column_int(q, 10);
        int ldmul = sqlite3_column_int(q, 11);
        if ((mmul > 1 && m % mmul) || (nmul > 1 && n % nmul) || (kmul > 1 && k % kmul) ||
            (ldmul > 1 && (lda % ldmul || ldb % ldmul)))
            continue;
        if (cached_version(ctx, &vs, name) != sqlite3_column_int(q, 1)) {
            stale++;
            continue;
        }
        best_dist = dist;
        best_ms = sqlite3_column_double(q, 6);
        best_tflops = sqlite3_column_double(q, 7);
        best_final = sqlite3_column_double(q, 12);
        best_shape[0] = mm, best_shape[1] = nn, best_shape[2] = kk;
        snprintf(best_tmpl, sizeof best_tmpl, "%s", name);
        snprintf(best_cfg, sizeof best_cfg, "%s", (const char *)sqlite3_column_text(q, 2));
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        snprintf(why, why_len, "tuning database %s: %s", path, sqlite3_errmsg(db));
        return KG_ERR_DB;
    }
    if (!best_tmpl[0]) {
        char within[64] = "";
        if (max_dist > 0)
            snprintf(within, sizeof within, " within log2 distance %.0f of", max_dist);
        snprintf(why, why_len,
                 "no tuning entry in %s for %s (sm_%d%d, %d SMs), layout %s,%s %dx%dx%d"
                 " (%d ok rows for this device and layout%s)",
                 path, info->name, info->cc_major, info->cc_minor, info->sm_count, layout, within, m, n, k, rows,
                 stale ? ", some for another template version" : "");
        return KG_ERR_DB;
    }
    snprintf(tmpl, tmpl_len, "%s", best_tmpl);
    snprintf(config, config_len, "%s", best_cfg);
    char final[96] = "";
    if (best_final > 0)
        snprintf(final, sizeof final, ", the final stage's fastest at %.4g ms back to back", best_final);
    if (best_dist == 0)
        snprintf(why, why_len, "exact shape %dx%dx%d, %s %s, %.4g ms (%.1f TFLOP/s)%s in %s", m, n, k, best_tmpl, layout,
                 best_ms, best_tflops, final, path);
    else
        snprintf(why, why_len, "nearest shape %dx%dx%d (log2 distance %.2f) for %dx%dx%d, %s %s, %.4g ms there%s, in %s",
                 best_shape[0], best_shape[1], best_shape[2], best_dist, m, n, k, best_tmpl, layout, best_ms, final,
                 path);
    return KG_OK;
}

kg_status kgi_tunedb_query(sqlite3 *db, const char *path, kg_context *ctx, const kg_device_info *info,
                           const char *layout, int m, int n, int k, char *tmpl, size_t tmpl_len, char *config,
                           size_t config_len, char *why, size_t why_len)
{
    return query_within(db, path, ctx, info, layout, m, n, k, KGI_LOOKUP_MAX_DISTANCE, tmpl, tmpl_len, config,
                        config_len, why, why_len);
}

kg_status kgi_tunedb_lookup(kg_context *ctx, const char *layout, int m, int n, int k, int exact_only, char *tmpl,
                            size_t tmpl_len, char *config, size_t config_len, char *why, size_t why_len)
{
    if (!ctx || !layout || strlen(layout) != 2 || m < 1 || n < 1 || k < 1) {
        snprintf(why, why_len, "invalid lookup arguments");
        return KG_ERR_INVALID_ARG;
    }
    struct kgi_tunedb *t = tunedb(ctx);
    if (!t)
        return KG_ERR_NOMEM;
    if (!t->db) {
        snprintf(why, why_len, "%s", t->open_error);
        return KG_ERR_DB;
    }
    if (ctx->device == KG_DEVICE_NONE) {
        snprintf(why, why_len, "no device: tuned entries are per device");
        return KG_ERR_DB;
    }
    kg_device_info info;
    if (kg_device_query(ctx, ctx->device, &info) != KG_OK) {
        snprintf(why, why_len, "cannot query the device for the tuning database: %s", kg_last_error(ctx));
        return KG_ERR_DB;
    }
    return query_within(t->db, t->path, ctx, &info, layout, m, n, k, exact_only ? 0 : KGI_LOOKUP_MAX_DISTANCE, tmpl,
                        tmpl_len, config, config_len, why, why_len);
}
