/*
 * db.h -- the tuning database: one SQLite file (WAL, busy timeout), safe for
 * concurrent tuners and readers.
 *
 * Tables:
 *   meta     key/value: schema_version
 *   devices  name, cc, sm_count and the device's peak figures
 *   runs     one row per `kgen tune` invocation: command, strategy, shard, status
 *   results  one row per evaluated configuration, keyed by device name, cc,
 *            SM count, template, template version, dtype, layout, M, N, K and
 *            the canonical configuration; with its outcome (ok, slow, wrong,
 *            fault, hang, error, compile_error, pruned_*), the reason, times,
 *            TFLOP/s, resources, error against the reference, kgen version,
 *            timestamp.
 * Every result is written in its own transaction as soon as it is known, so
 * a sweep killed at any point (even kill -9) keeps every finished row.
 */
#ifndef KGEN_AUTOTUNE_DB_H
#define KGEN_AUTOTUNE_DB_H

#include <stdio.h>

#include "autotune/result.h"
#include "runtime/tunedb.h"

struct sqlite3;
struct sqlite3_stmt;

typedef struct kgi_db kgi_db;

/* The schema version, the default path and the best-first order are the
 * read side's (runtime/tunedb.h). */

enum { KGI_DB_READONLY = 1, KGI_DB_CREATE = 2, KGI_DB_MKDIR = 4 };

/* Opens (KGI_DB_CREATE: creating the file and the schema, and with
 * KGI_DB_MKDIR the folders above it, for kgen's own default location only;
 * upgrading a version-1 file) or opens read-only (kgi_tunedb_open). On
 * failure *out is NULL and err says why. */
kg_status kgi_db_open(const char *path, int flags, kgi_db **out, char *err, size_t errlen);
void kgi_db_close(kgi_db *db);
const char *kgi_db_path(const kgi_db *db);
/* The last error of this connection. */
const char *kgi_db_error(kgi_db *db);
struct sqlite3 *kgi_db_handle(kgi_db *db);

/* Records (or updates) a device's row. */
kg_status kgi_db_put_device(kgi_db *db, const kg_device_info *info);
/* Starts a run row and returns its id; kgi_db_run_end sets its status
 * ("done", "interrupted", "failed"). */
kg_status kgi_db_run_begin(kgi_db *db, const char *command, const char *strategy, const char *shard,
                           long long *run_id);
kg_status kgi_db_run_end(kgi_db *db, long long run_id, const char *status);

/* Writes one result in its own transaction. With `replace` an existing row
 * of the same key is overwritten (--force), otherwise kept. */
kg_status kgi_db_put(kgi_db *db, const kgi_dbkey *key, const kgi_result *res, long long run_id, int replace);
/* Writes n results in one transaction (the check()-pruned part of a space). */
kg_status kgi_db_put_many(kgi_db *db, const kgi_dbkey *keys, const kgi_result *res, int n, long long run_id,
                          int replace);
/* The tuner's final stage for one shape (key's device, cc, SM count, dtype,
 * layout, M, N, K): in one transaction, clears final_ms on every row of that
 * shape and sets it on the n finalists (keys[i], final_ms[i] > 0). */
kg_status kgi_db_set_final(kgi_db *db, const kgi_dbkey *keys, const double *final_ms, int n);
/* The ok rows of the shape of `shape` (its device, cc, SM count, dtype,
 * layout, M, N, K; template and config ignored), fastest first by the
 * search's time_ms: up to `max` keys and times. Returns the count, -1 on
 * error. */
int kgi_db_fastest(kgi_db *db, const kgi_dbkey *shape, kgi_dbkey *keys, double *time_ms, int max);
/* Reads the result stored under `key`: 1 found, 0 none, -1 error. */
int kgi_db_get(kgi_db *db, const kgi_dbkey *key, kgi_result *out);

/* The results table's columns, in export order, for dbio.c. */
typedef enum { KGI_COL_TEXT, KGI_COL_INT, KGI_COL_LONG, KGI_COL_REAL, KGI_COL_OUTCOME } kgi_coltype;
typedef struct kgi_column {
    const char *name;
    kgi_coltype type;
    int in_key;          /* 1: a field of kgi_dbkey, 0: of kgi_result */
    size_t offset;
    size_t size;         /* of a text field */
    int required;        /* must be present in an imported row */
} kgi_column;
const kgi_column *kgi_db_columns(int *count);

/* Binds key and result fields to parameters first..first+count-1 of stmt,
 * in column order; and reads them back from a SELECT of the same columns
 * starting at column `first`. */
void kgi_db_bind_row(struct sqlite3_stmt *stmt, int first, const kgi_dbkey *key, const kgi_result *res);
void kgi_db_read_row(struct sqlite3_stmt *stmt, int first, kgi_dbkey *key, kgi_result *res);
/* "device, cc, ..., created": every column name, comma-separated. */
const char *kgi_db_column_list(void);

/* kg_matmul's choice for `info`'s device in this database: runtime/tunedb.h's
 * kgi_tunedb_query (exact shape, then the nearest tuned shape within a log2
 * distance of 3; `ctx` supplies the templates' current versions). */
kg_status kgi_tunedb_find(kgi_db *db, kg_context *ctx, const kg_device_info *info, const char *layout, int m,
                          int n, int k, char *tmpl, size_t tmpl_len, char *config, size_t config_len, char *why,
                          size_t why_len);

/* ------------------------------------------------------------ dbio.c */

/* Which rows export, show and list consider; empty/zero fields match all. */
typedef struct kgi_db_filter {
    const char *device;        /* exact name */
    const char *tmpl;
    const char *layout;
    const char *outcome;
    int m, n, k;
} kgi_db_filter;

enum { KGI_FMT_CSV = 1, KGI_FMT_JSON = 2 };

/* Writes the matching rows (every column, db.h's order) as CSV with a
 * header line, or as JSON {"kgen_tuning_db": 1, "results": [...]}. */
kg_status kgi_db_export(kgi_db *db, FILE *f, int format, const kgi_db_filter *flt, int *rows, char *err,
                        size_t errlen);
/* Reads rows written by kgi_db_export (the format from the first
 * character). A row whose key exists replaces it only when its `created`
 * is newer. Nothing is written unless every row parses; errors name the
 * line or record and the column. */
kg_status kgi_db_import(kgi_db *db, const char *text, size_t len, int *inserted, int *updated, int *kept,
                        char *err, size_t errlen);
/* Calls fn once per distinct (template, configuration, layout) of the
 * database's rows, with ran = 1 where one of them ran (an outcome other
 * than pruned_*): what `kgen db import` checks against the templates
 * before it writes. fn returns 0 to go on; anything else stops the walk and
 * is returned (KG_ERR_CONFIG), or KG_ERR_DB with err set. */
kg_status kgi_db_each_config(kgi_db *db,
                             int (*fn)(void *ud, const char *tmpl, const char *config, const char *layout, int ran),
                             void *ud, char *err, size_t errlen);
/* Merges another database file into db with the same rule (shards of a
 * sweep have disjoint keys; a re-measured key keeps the newest row). */
kg_status kgi_db_merge(kgi_db *db, const char *other, int *inserted, int *updated, int *kept, char *err,
                       size_t errlen);

/* One tuned (device, layout, shape): its rows and its best ok row (the
 * final stage's fastest finalist where it ran, as runtime/tunedb.c chooses; this
 * summary does not check template versions). */
typedef struct kgi_db_group {
    char device[256];
    int cc, sm_count;
    char layout[4];
    int m, n, k;
    int rows, ok;
    double best_ms, best_tflops;
    double best_final_ms;      /* > 0: the best is the final stage's fastest finalist, at this time */
    char best_tmpl[64], best_config[512];
    char last[32];
} kgi_db_group;
kg_status kgi_db_list(kgi_db *db, void (*fn)(void *ud, const kgi_db_group *g), void *ud);
/* The matching rows, ok ones best first (finalists by final time, then the
 * rest by the search's time), then the others; at most
 * `limit` (0: all). */
kg_status kgi_db_show(kgi_db *db, const kgi_db_filter *flt, int limit,
                      void (*fn)(void *ud, const kgi_dbkey *key, const kgi_result *res), void *ud);

#endif
