/*
 * lookup.c -- kg_matmul's view of the tuning database: the best tuned
 * configuration for the context's device, layout and shape.
 *
 * Order of preference (each fallback is named in `why`):
 *   1. exact shape: the fastest `ok` row for this M, N, K (where the
 *      tuner's final stage ran for the shape, the fastest of its finalists
 *      by their final, back-to-back time; else by the search's time);
 *   2. nearest shape: among tuned shapes within KGI_LOOKUP_MAX_DISTANCE,
 *      the one closest in log2 space, distance |log2 M/M'| + |log2 N/N'| +
 *      |log2 K/K'| (so shapes in the same power-of-two bucket in every
 *      dimension are less than 3 apart), and its fastest row;
 *   3. none: KG_ERR_DB, and the caller uses the template's default.
 * A row counts only when it is for the same device name, compute capability
 * and SM count, the same layout, dtype f32, when its template's version is
 * the version loaded now (a changed template invalidates its entries), and
 * when the kernel's preconditions (multiples of M, N, K and of the packed
 * leading dimensions) admit the requested shape.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <sqlite3.h>

#include "autotune/db.h"
#include "runtime/runtime.h"

#define KGI_LOOKUP_MAX_DISTANCE 3.0

struct kgi_tunedb {
    kgi_db *db;             /* NULL when it could not be opened */
    char path[4096];
    char open_error[1024];
    int tried;
};

void kgi_tunedb_close(kg_context *ctx)
{
    if (!ctx || !ctx->db)
        return;
    kgi_db_close(ctx->db->db);
    free(ctx->db);
    ctx->db = NULL;
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
        if (kgi_db_default_path(t->path, sizeof t->path) != 0)
            snprintf(t->open_error, sizeof t->open_error, "no tuning database (KGEN_DB, XDG_DATA_HOME and HOME are unset)");
        else if (kgi_db_open(t->path, KGI_DB_READONLY, &t->db, t->open_error, sizeof t->open_error) != KG_OK)
            t->db = NULL;
    }
    return t;
}

/* The version of template `name` as loaded now, or -1. */
static int template_version(kg_context *ctx, const char *name)
{
    char err[512];
    lua_State *L = kgi_host_lua(ctx->host);
    int top = lua_gettop(L);
    int v = -1;
    if (kgi_host_push_template(ctx->host, name, err, sizeof err) == KG_OK) {
        lua_getfield(L, -1, "version");
        v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1;
    }
    lua_settop(L, top);
    return v;
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

kg_status kgi_tunedb_find(kgi_db *db, kg_context *ctx, const kg_device_info *info, const char *layout, int m,
                          int n, int k, char *tmpl, size_t tmpl_len, char *config, size_t config_len, char *why,
                          size_t why_len)
{
    sqlite3_stmt *q;
    const char *sql = "SELECT template, template_version, config, m, n, k, time_ms, tflops, m_multiple, n_multiple,"
                      " k_multiple, ld_multiple, final_ms FROM results WHERE device = ?1 AND cc = ?2 AND sm_count = ?3"
                      " AND layout = ?4 AND dtype = 'f32' AND outcome = 'ok' AND time_ms > 0"
                      " ORDER BY " KGI_DB_BEST_FIRST;
    if (sqlite3_prepare_v2(kgi_db_handle(db), sql, -1, &q, NULL) != SQLITE_OK) {
        snprintf(why, why_len, "tuning database %s: %s", kgi_db_path(db), kgi_db_error(db));
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
        if (!(dist < best_dist) || dist > KGI_LOOKUP_MAX_DISTANCE)
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
        snprintf(why, why_len, "tuning database %s: %s", kgi_db_path(db), kgi_db_error(db));
        return KG_ERR_DB;
    }
    if (!best_tmpl[0]) {
        snprintf(why, why_len,
                 "no tuning entry in %s for %s (sm_%d%d, %d SMs), layout %s, within log2 distance %.0f of %dx%dx%d"
                 " (%d ok rows for this device and layout%s)",
                 kgi_db_path(db), info->name, info->cc_major, info->cc_minor, info->sm_count, layout,
                 KGI_LOOKUP_MAX_DISTANCE, m, n, k, rows, stale ? ", some for another template version" : "");
        return KG_ERR_DB;
    }
    snprintf(tmpl, tmpl_len, "%s", best_tmpl);
    snprintf(config, config_len, "%s", best_cfg);
    char final[96] = "";
    if (best_final > 0)
        snprintf(final, sizeof final, ", the final stage's fastest at %.4g ms back to back", best_final);
    if (best_dist == 0)
        snprintf(why, why_len, "exact shape %dx%dx%d, %s %s, %.4g ms (%.1f TFLOP/s)%s in %s", m, n, k, best_tmpl, layout,
                 best_ms, best_tflops, final, kgi_db_path(db));
    else
        snprintf(why, why_len, "nearest shape %dx%dx%d (log2 distance %.2f) for %dx%dx%d, %s %s, %.4g ms there%s, in %s",
                 best_shape[0], best_shape[1], best_shape[2], best_dist, m, n, k, best_tmpl, layout, best_ms, final,
                 kgi_db_path(db));
    return KG_OK;
}

kg_status kgi_tunedb_lookup(kg_context *ctx, const char *layout, int m, int n, int k, char *tmpl,
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
    return kgi_tunedb_find(t->db, ctx, &info, layout, m, n, k, tmpl, tmpl_len, config, config_len, why, why_len);
}
