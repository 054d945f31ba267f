/*
 * db.c -- the tuning database's writes (see db.h); opening read-only, the
 * schema check and kg_matmul's lookup are runtime/tunedb.c.
 *
 * Durability: WAL with synchronous=NORMAL keeps every committed transaction
 * when the process dies (kill -9); only a power loss can cost the last few.
 * Concurrency: WAL lets readers run beside one writer; a busy timeout makes
 * concurrent tuners queue for the write lock instead of failing.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "autotune/db.h"

struct kgi_db {
    sqlite3 *h;
    sqlite3_stmt *put_keep, *put_replace, *get;
    char path[4096];
};

/* ------------------------------------------------------------ outcomes */

static const char *const outcome_names[KGI_OUT_COUNT] = {
    [KGI_OUT_NONE] = "none",
    [KGI_OUT_OK] = "ok",
    [KGI_OUT_SLOW] = "slow",
    [KGI_OUT_WRONG] = "wrong",
    [KGI_OUT_FAULT] = "fault",
    [KGI_OUT_HANG] = "hang",
    [KGI_OUT_ERROR] = "error",
    [KGI_OUT_COMPILE_ERROR] = "compile_error",
    [KGI_OUT_PRUNED_CHECK] = "pruned_check",
    [KGI_OUT_PRUNED_SHAPE] = "pruned_shape",
    [KGI_OUT_PRUNED_REGS] = "pruned_regs",
    [KGI_OUT_PRUNED_SPILLS] = "pruned_spills",
    [KGI_OUT_PRUNED_OCCUPANCY] = "pruned_occupancy",
};

const char *kgi_outcome_name(kgi_outcome o)
{
    return (unsigned)o < KGI_OUT_COUNT ? outcome_names[o] : "none";
}

kgi_outcome kgi_outcome_parse(const char *name)
{
    for (int i = 1; name && i < KGI_OUT_COUNT; i++)
        if (strcmp(outcome_names[i], name) == 0)
            return (kgi_outcome)i;
    return KGI_OUT_NONE;
}

int kgi_outcome_finished(kgi_outcome o) { return o != KGI_OUT_NONE; }

int kgi_outcome_ran(kgi_outcome o)
{
    return o == KGI_OUT_OK || o == KGI_OUT_SLOW || o == KGI_OUT_WRONG || o == KGI_OUT_FAULT ||
           o == KGI_OUT_HANG || o == KGI_OUT_ERROR;
}

/* ------------------------------------------------------------ columns */

#define KEY(f, t, req) {#f, t, 1, offsetof(kgi_dbkey, f), sizeof(((kgi_dbkey *)0)->f), req}
#define RES(f, t) {#f, t, 0, offsetof(kgi_result, f), sizeof(((kgi_result *)0)->f), 0}
static const kgi_column columns[] = {
    KEY(device, KGI_COL_TEXT, 1), KEY(cc, KGI_COL_INT, 1), KEY(sm_count, KGI_COL_INT, 1),
    {"template", KGI_COL_TEXT, 1, offsetof(kgi_dbkey, tmpl), sizeof(((kgi_dbkey *)0)->tmpl), 1},
    {"template_version", KGI_COL_INT, 1, offsetof(kgi_dbkey, tmpl_version), 0, 1},
    KEY(dtype, KGI_COL_TEXT, 1), KEY(layout, KGI_COL_TEXT, 1), KEY(m, KGI_COL_INT, 1), KEY(n, KGI_COL_INT, 1),
    KEY(k, KGI_COL_INT, 1), KEY(config, KGI_COL_TEXT, 1),
    {"outcome", KGI_COL_OUTCOME, 0, offsetof(kgi_result, outcome), 0, 1},
    RES(reason, KGI_COL_TEXT), RES(time_ms, KGI_COL_REAL), RES(time_min_ms, KGI_COL_REAL),
    RES(time_max_ms, KGI_COL_REAL), RES(spread, KGI_COL_REAL), RES(reps, KGI_COL_INT),
    RES(tflops, KGI_COL_REAL), RES(final_ms, KGI_COL_REAL), RES(registers, KGI_COL_INT), RES(spill_bytes, KGI_COL_INT),
    RES(smem_bytes, KGI_COL_LONG), RES(threads, KGI_COL_INT), RES(occupancy, KGI_COL_REAL),
    RES(error, KGI_COL_REAL), RES(m_multiple, KGI_COL_INT), RES(n_multiple, KGI_COL_INT),
    RES(k_multiple, KGI_COL_INT), RES(ld_multiple, KGI_COL_INT), RES(kgen_version, KGI_COL_TEXT),
    {"created", KGI_COL_TEXT, 0, offsetof(kgi_result, created), sizeof(((kgi_result *)0)->created), 1},
};
#undef KEY
#undef RES
#define NCOLS ((int)(sizeof columns / sizeof *columns))
#define NKEYS 11

const kgi_column *kgi_db_columns(int *count)
{
    *count = NCOLS;
    return columns;
}

const char *kgi_db_column_list(void)
{
    static char list[1024];
    if (!list[0]) {
        size_t used = 0;
        for (int i = 0; i < NCOLS; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", columns[i].name);
    }
    return list;
}

static void *field(const kgi_column *c, const kgi_dbkey *key, const kgi_result *res)
{
    return (char *)(c->in_key ? (const void *)key : (const void *)res) + c->offset;
}

void kgi_db_bind_row(sqlite3_stmt *st, int first, const kgi_dbkey *key, const kgi_result *res)
{
    for (int i = 0; i < NCOLS; i++) {
        const kgi_column *c = &columns[i];
        const void *p = field(c, key, res);
        int at = first + i;
        switch (c->type) {
        case KGI_COL_TEXT:
            if (strcmp(c->name, "created") == 0 && !((const char *)p)[0])
                sqlite3_bind_null(st, at); /* the table's default: now */
            else
                sqlite3_bind_text(st, at, p, -1, SQLITE_TRANSIENT);
            break;
        case KGI_COL_INT: sqlite3_bind_int(st, at, *(const int *)p); break;
        case KGI_COL_LONG: sqlite3_bind_int64(st, at, *(const long *)p); break;
        case KGI_COL_REAL: sqlite3_bind_double(st, at, *(const double *)p); break;
        case KGI_COL_OUTCOME: sqlite3_bind_text(st, at, kgi_outcome_name(*(const kgi_outcome *)p), -1, SQLITE_STATIC); break;
        }
    }
}

void kgi_db_read_row(sqlite3_stmt *st, int first, kgi_dbkey *key, kgi_result *res)
{
    for (int i = 0; i < NCOLS; i++) {
        const kgi_column *c = &columns[i];
        void *p = field(c, key, res);
        int at = first + i;
        switch (c->type) {
        case KGI_COL_TEXT: {
            const unsigned char *t = sqlite3_column_text(st, at);
            snprintf(p, c->size, "%s", t ? (const char *)t : "");
            break;
        }
        case KGI_COL_INT: *(int *)p = sqlite3_column_int(st, at); break;
        case KGI_COL_LONG: *(long *)p = (long)sqlite3_column_int64(st, at); break;
        case KGI_COL_REAL:
            /* SQLite stores NaN as NULL; a NULL error is an unknown (infinite) one. */
            *(double *)p = sqlite3_column_type(st, at) == SQLITE_NULL && strcmp(c->name, "error") == 0
                               ? INFINITY
                               : sqlite3_column_double(st, at);
            break;
        case KGI_COL_OUTCOME:
            *(kgi_outcome *)p = kgi_outcome_parse((const char *)sqlite3_column_text(st, at));
            break;
        }
    }
}

/* ------------------------------------------------------------ opening */

/* A shape's final times (final_ms) come from one final stage over the rows
 * it had then: any ok row written for the shape afterwards (a search, a
 * --force re-measure, an import or a merge) clears them all, so that
 * kg_matmul falls back to the search's times until the next final stage. */
#define FINAL_SCHEMA                                                                                          \
    "CREATE INDEX IF NOT EXISTS results_final ON results(device, cc, sm_count, dtype, layout, m, n, k)"       \
    " WHERE final_ms != 0;\n"                                                                                 \
    "CREATE TRIGGER IF NOT EXISTS results_final_insert AFTER INSERT ON results WHEN NEW.outcome = 'ok' BEGIN" \
    " UPDATE results SET final_ms = 0 WHERE device = NEW.device AND cc = NEW.cc AND sm_count = NEW.sm_count"  \
    " AND dtype = NEW.dtype AND layout = NEW.layout AND m = NEW.m AND n = NEW.n AND k = NEW.k"                \
    " AND final_ms != 0; END;\n"                                                                              \
    "CREATE TRIGGER IF NOT EXISTS results_final_update AFTER UPDATE OF outcome, time_ms, created ON results"  \
    " WHEN NEW.outcome = 'ok' OR OLD.outcome = 'ok' BEGIN"                                                    \
    " UPDATE results SET final_ms = 0 WHERE device = NEW.device AND cc = NEW.cc AND sm_count = NEW.sm_count"  \
    " AND dtype = NEW.dtype AND layout = NEW.layout AND m = NEW.m AND n = NEW.n AND k = NEW.k"                \
    " AND final_ms != 0; END;\n"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE IF NOT EXISTS devices(\n"
    "  name TEXT NOT NULL, cc INTEGER NOT NULL, sm_count INTEGER NOT NULL,\n"
    "  peak_fp32_tflops REAL, peak_bandwidth_gbs REAL, sm_clock_khz INTEGER, total_mem INTEGER,\n"
    "  first_seen TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),\n"
    "  PRIMARY KEY(name, cc, sm_count));\n"
    "CREATE TABLE IF NOT EXISTS runs(\n"
    "  id INTEGER PRIMARY KEY, started TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),\n"
    "  finished TEXT, command TEXT, strategy TEXT, shard TEXT, status TEXT, kgen_version TEXT);\n"
    "CREATE TABLE IF NOT EXISTS results(\n"
    "  device TEXT NOT NULL, cc INTEGER NOT NULL, sm_count INTEGER NOT NULL,\n"
    "  template TEXT NOT NULL, template_version INTEGER NOT NULL, dtype TEXT NOT NULL,\n"
    "  layout TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,\n"
    "  config TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT,\n"
    "  time_ms REAL, time_min_ms REAL, time_max_ms REAL, spread REAL, reps INTEGER, tflops REAL,\n"
    "  final_ms REAL NOT NULL DEFAULT 0,\n"
    "  registers INTEGER, spill_bytes INTEGER, smem_bytes INTEGER, threads INTEGER, occupancy REAL,\n"
    "  error REAL, m_multiple INTEGER, n_multiple INTEGER, k_multiple INTEGER, ld_multiple INTEGER,\n"
    "  kgen_version TEXT, created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),\n"
    "  run_id INTEGER,\n"
    "  PRIMARY KEY(device, cc, sm_count, template, template_version, dtype, layout, m, n, k, config));\n"
    "CREATE INDEX IF NOT EXISTS results_best ON results(device, cc, sm_count, layout, outcome, time_ms);\n"
    FINAL_SCHEMA;

/* mkdir -p of the directory that will hold `path`. */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory '%s': %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* A database path the user chose whose folder does not exist: said so,
 * instead of creating the folder (a mistyped --db would make one). */
static int missing_parent(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    struct stat sb;
    if (stat(dir, &sb) == 0 || errno != ENOENT)
        return 0;
    snprintf(err, errlen, "cannot create tuning database '%s': no folder '%s' (kgen makes the folders of its default location only)",
             path, dir);
    return 1;
}

static int exec_sql(kgi_db *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int prepare(kgi_db *db, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", db->path, sqlite3_errmsg(db->h));
        return -1;
    }
    return 0;
}

/* The INSERT (or upsert) and SELECT statements built from the column table. */
static int prepare_statements(kgi_db *db, int readonly, char *err, size_t errlen)
{
    char sql[8192], where[1024];
    size_t used = 0;
    for (int i = 0; i < NKEYS; i++)
        used += (size_t)snprintf(where + used, sizeof where - used, "%s%s = ?%d", i ? " AND " : "", columns[i].name,
                                 i + 1);
    snprintf(sql, sizeof sql, "SELECT %s FROM results WHERE %s", kgi_db_column_list(), where);
    if (prepare(db, &db->get, sql, err, errlen) != 0)
        return -1;
    if (readonly)
        return 0;
    char values[1024], update[2048];
    size_t nv = 0, nu = 0;
    for (int i = 0; i < NCOLS; i++) {
        /* created: NULL means now (the column's default does not apply to an explicit NULL). */
        if (strcmp(columns[i].name, "created") == 0)
            nv += (size_t)snprintf(values + nv, sizeof values - nv, ", coalesce(?%d, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now'))", i + 1);
        else
            nv += (size_t)snprintf(values + nv, sizeof values - nv, "%s?%d", i ? ", " : "", i + 1);
        if (i >= NKEYS)
            nu += (size_t)snprintf(update + nu, sizeof update - nu, "%s = excluded.%s, ", columns[i].name,
                                   columns[i].name);
    }
    snprintf(sql, sizeof sql, "INSERT INTO results(%s, run_id) VALUES(%s, ?%d) ON CONFLICT DO NOTHING",
             kgi_db_column_list(), values, NCOLS + 1);
    if (prepare(db, &db->put_keep, sql, err, errlen) != 0)
        return -1;
    snprintf(sql, sizeof sql,
             "INSERT INTO results(%s, run_id) VALUES(%s, ?%d) ON CONFLICT DO UPDATE SET %s run_id = excluded.run_id",
             kgi_db_column_list(), values, NCOLS + 1, update);
    return prepare(db, &db->put_replace, sql, err, errlen);
}

kg_status kgi_db_open(const char *path, int flags, kgi_db **out, char *err, size_t errlen)
{
    *out = NULL;
    int readonly = flags & KGI_DB_READONLY;
    kgi_db *db = calloc(1, sizeof *db);
    if (!db)
        return KG_ERR_NOMEM;
    snprintf(db->path, sizeof db->path, "%s", path);
    if (readonly) {
        if (kgi_tunedb_open(path, &db->h, err, errlen) != KG_OK || prepare_statements(db, 1, err, errlen) != 0)
            goto fail;
        *out = db;
        return KG_OK;
    }
    if (kgi_tunedb_not_dir(path, err, errlen) != 0)
        goto fail;
    if ((flags & KGI_DB_CREATE) && (flags & KGI_DB_MKDIR) && make_parent_dirs(path, err, errlen) != 0)
        goto fail;
    if ((flags & KGI_DB_CREATE) && !(flags & KGI_DB_MKDIR) && missing_parent(path, err, errlen))
        goto fail;
    int oflags = SQLITE_OPEN_READWRITE | ((flags & KGI_DB_CREATE) ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db->h, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open tuning database '%s': %s", path,
                 db->h ? sqlite3_errmsg(db->h) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, KGI_DB_BUSY_TIMEOUT_MS);
    int v = kgi_tunedb_schema_version(db->h, db->path, err, errlen);
    if (v < 0)
        goto fail;
    if (v == 0) {
        if (!(flags & KGI_DB_CREATE)) {
            snprintf(err, errlen, "'%s' is not a kgen tuning database (no schema)", path);
            goto fail;
        }
        /* the schema goes only into an empty file: one that holds anything
         * else is someone's database, left as it was (another kgen process
         * may have made the schema meanwhile: then it is used) */
        char sql[256];
        snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta VALUES('schema_version', '%d');", KGI_DB_SCHEMA_VERSION);
        if (exec_sql(db, "BEGIN IMMEDIATE;", err, errlen) != 0)
            goto fail;
        int again = kgi_tunedb_schema_version(db->h, db->path, err, errlen), others = -1;
        sqlite3_stmt *st = NULL;
        if (again == 0 && sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            others = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (again < 0 || (again == 0 && others != 0)) {
            if (again == 0)
                snprintf(err, errlen, "'%s' is not a kgen tuning database (no schema): it holds other tables%s", path,
                         others < 0 ? " or cannot be read" : "; kgen leaves it as it is");
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        if (again == 0 && (exec_sql(db, schema, err, errlen) != 0 || exec_sql(db, sql, err, errlen) != 0)) {
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        if (exec_sql(db, "COMMIT;", err, errlen) != 0 ||
            (again == 0 && exec_sql(db, "PRAGMA journal_mode=WAL;", err, errlen) != 0))
            goto fail;
        v = again == 0 ? KGI_DB_SCHEMA_VERSION : again;
    }
    if (v == 1) {
        if (exec_sql(db, "BEGIN IMMEDIATE;", err, errlen) != 0)
            goto fail;
        /* another process may have upgraded it meanwhile */
        int again = kgi_tunedb_schema_version(db->h, db->path, err, errlen);
        if (again == 1 && (exec_sql(db, "ALTER TABLE results ADD COLUMN final_ms REAL NOT NULL DEFAULT 0;", err, errlen) != 0 ||
                           exec_sql(db, FINAL_SCHEMA, err, errlen) != 0 ||
                           exec_sql(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version';", err, errlen) != 0)) {
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        if (exec_sql(db, "COMMIT;", err, errlen) != 0)
            goto fail;
        v = again == 1 ? KGI_DB_SCHEMA_VERSION : again;
    }
    if (v != KGI_DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "'%s' has schema version %d; this kgen reads version %d", path, v, KGI_DB_SCHEMA_VERSION);
        goto fail;
    }
    if (exec_sql(db, "PRAGMA synchronous=NORMAL;", err, errlen) != 0 || exec_sql(db, FINAL_SCHEMA, err, errlen) != 0)
        goto fail;
    if (prepare_statements(db, 0, err, errlen) != 0)
        goto fail;
    if (readonly && exec_sql(db, "PRAGMA query_only=1;", err, errlen) != 0)
        goto fail;
    *out = db;
    return KG_OK;
fail:
    kgi_db_close(db);
    return KG_ERR_DB;
}

void kgi_db_close(kgi_db *db)
{
    if (!db)
        return;
    sqlite3_finalize(db->put_keep);
    sqlite3_finalize(db->put_replace);
    sqlite3_finalize(db->get);
    sqlite3_close(db->h);
    free(db);
}

const char *kgi_db_path(const kgi_db *db) { return db->path; }
const char *kgi_db_error(kgi_db *db) { return sqlite3_errmsg(db->h); }
sqlite3 *kgi_db_handle(kgi_db *db) { return db->h; }

/* ------------------------------------------------------------ writing */

kg_status kgi_db_put_device(kgi_db *db, const kg_device_info *info)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT INTO devices(name, cc, sm_count, peak_fp32_tflops, peak_bandwidth_gbs, sm_clock_khz,"
                      " total_mem) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO UPDATE SET"
                      " peak_fp32_tflops = ?4, peak_bandwidth_gbs = ?5, sm_clock_khz = ?6, total_mem = ?7";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    sqlite3_bind_text(st, 1, info->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, info->cc_major * 10 + info->cc_minor);
    sqlite3_bind_int(st, 3, info->sm_count);
    sqlite3_bind_double(st, 4, info->peak_fp32_tflops);
    sqlite3_bind_double(st, 5, info->peak_bandwidth_gbs);
    sqlite3_bind_int(st, 6, info->sm_clock_khz);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)info->total_mem);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}

kg_status kgi_db_run_begin(kgi_db *db, const char *command, const char *strategy, const char *shard,
                           long long *run_id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "INSERT INTO runs(command, strategy, shard, status, kgen_version)"
                           " VALUES(?1, ?2, ?3, 'running', ?4)",
                           -1, &st, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    sqlite3_bind_text(st, 1, command, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, strategy, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, shard, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, KGEN_VERSION, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    *run_id = sqlite3_last_insert_rowid(db->h);
    return rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}

kg_status kgi_db_run_end(kgi_db *db, long long run_id, const char *status)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h,
                           "UPDATE runs SET status = ?1, finished = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}

static int put_one(kgi_db *db, const kgi_dbkey *key, const kgi_result *res, long long run_id, int replace)
{
    sqlite3_stmt *st = replace ? db->put_replace : db->put_keep;
    kgi_result r = *res;
    if (!r.kgen_version[0])
        snprintf(r.kgen_version, sizeof r.kgen_version, "%s", KGEN_VERSION);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    kgi_db_bind_row(st, 1, key, &r);
    if (run_id > 0)
        sqlite3_bind_int64(st, NCOLS + 1, run_id);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

kg_status kgi_db_put(kgi_db *db, const kgi_dbkey *key, const kgi_result *res, long long run_id, int replace)
{
    return put_one(db, key, res, run_id, replace) == 0 ? KG_OK : KG_ERR_DB;
}

kg_status kgi_db_put_many(kgi_db *db, const kgi_dbkey *keys, const kgi_result *res, int n, long long run_id,
                          int replace)
{
    if (n == 0)
        return KG_OK;
    if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    for (int i = 0; i < n; i++) {
        if (put_one(db, &keys[i], &res[i], run_id, replace) != 0) {
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            return KG_ERR_DB;
        }
    }
    return sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? KG_OK : KG_ERR_DB;
}

/* Binds a key's shape (device, cc, sm_count, dtype, layout, m, n, k) to
 * parameters ?1..?8. */
static void bind_shape(sqlite3_stmt *st, const kgi_dbkey *k)
{
    sqlite3_bind_text(st, 1, k->device, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, k->cc);
    sqlite3_bind_int(st, 3, k->sm_count);
    sqlite3_bind_text(st, 4, k->dtype, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, k->layout, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, k->m);
    sqlite3_bind_int(st, 7, k->n);
    sqlite3_bind_int(st, 8, k->k);
}

kg_status kgi_db_set_final(kgi_db *db, const kgi_dbkey *keys, const double *final_ms, int n)
{
    if (n < 1)
        return KG_OK;
    sqlite3_stmt *clear = NULL, *set = NULL;
    kg_status st = KG_ERR_DB;
    if (sqlite3_prepare_v2(db->h,
                           "UPDATE results SET final_ms = 0 WHERE device = ?1 AND cc = ?2 AND sm_count = ?3 AND dtype = ?4"
                           " AND layout = ?5 AND m = ?6 AND n = ?7 AND k = ?8 AND final_ms != 0",
                           -1, &clear, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db->h,
                           "UPDATE results SET final_ms = ?12 WHERE device = ?1 AND cc = ?2 AND sm_count = ?3 AND dtype = ?4"
                           " AND layout = ?5 AND m = ?6 AND n = ?7 AND k = ?8 AND template = ?9 AND template_version = ?10"
                           " AND config = ?11",
                           -1, &set, NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    const kgi_dbkey *k0 = &keys[0];
    bind_shape(clear, k0);
    int ok = sqlite3_step(clear) == SQLITE_DONE;
    for (int i = 0; ok && i < n; i++) {
        const kgi_dbkey *k = &keys[i];
        ok = strcmp(k->device, k0->device) == 0 && k->cc == k0->cc && k->sm_count == k0->sm_count &&
             strcmp(k->dtype, k0->dtype) == 0 && strcmp(k->layout, k0->layout) == 0 && k->m == k0->m &&
             k->n == k0->n && k->k == k0->k && final_ms[i] > 0;
        if (!ok)
            break;
        sqlite3_reset(set);
        bind_shape(set, k);
        sqlite3_bind_text(set, 9, k->tmpl, -1, SQLITE_STATIC);
        sqlite3_bind_int(set, 10, k->tmpl_version);
        sqlite3_bind_text(set, 11, k->config, -1, SQLITE_STATIC);
        sqlite3_bind_double(set, 12, final_ms[i]);
        ok = sqlite3_step(set) == SQLITE_DONE && sqlite3_changes(db->h) == 1;
    }
    if (ok && sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
        st = KG_OK;
    else
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_finalize(clear);
    sqlite3_finalize(set);
    return st;
}

int kgi_db_fastest(kgi_db *db, const kgi_dbkey *shape, kgi_dbkey *keys, double *time_ms, int max)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT template, template_version, config, time_ms FROM results WHERE device = ?1 AND cc = ?2"
                           " AND sm_count = ?3 AND dtype = ?4 AND layout = ?5 AND m = ?6 AND n = ?7 AND k = ?8"
                           " AND outcome = 'ok' AND time_ms > 0 ORDER BY time_ms, template, config LIMIT ?9",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    bind_shape(q, shape);
    sqlite3_bind_int(q, 9, max);
    int n = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW && n < max) {
        kgi_dbkey *k = &keys[n];
        *k = *shape;
        snprintf(k->tmpl, sizeof k->tmpl, "%s", (const char *)sqlite3_column_text(q, 0));
        k->tmpl_version = sqlite3_column_int(q, 1);
        snprintf(k->config, sizeof k->config, "%s", (const char *)sqlite3_column_text(q, 2));
        time_ms[n++] = sqlite3_column_double(q, 3);
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? n : -1;
}

int kgi_db_get(kgi_db *db, const kgi_dbkey *key, kgi_result *out)
{
    sqlite3_stmt *st = db->get;
    sqlite3_reset(st);
    kgi_result none;
    memset(&none, 0, sizeof none);
    kgi_db_bind_row(st, 1, key, &none); /* only the key's parameters (1..NKEYS) are used */
    int rc = sqlite3_step(st);
    int found = 0;
    if (rc == SQLITE_ROW) {
        kgi_dbkey k;
        kgi_db_read_row(st, 0, &k, out);
        found = 1;
    } else if (rc != SQLITE_DONE) {
        found = -1;
    }
    sqlite3_reset(st);
    return found;
}

/* ------------------------------------------------------------ kg_matmul's lookup */

kg_status kgi_tunedb_find(kgi_db *db, kg_context *ctx, const kg_device_info *info, const char *layout, int m,
                          int n, int k, char *tmpl, size_t tmpl_len, char *config, size_t config_len, char *why,
                          size_t why_len)
{
    return kgi_tunedb_query(db->h, db->path, ctx, info, layout, m, n, k, tmpl, tmpl_len, config, config_len, why,
                            why_len);
}
