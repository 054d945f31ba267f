/*
 * tunedb.h -- the tuning database's read side, which kg_matmul uses: the
 * default path, opening a file read-only with its schema checked, the
 * best-first order of a shape's rows, and the lookup (tunedb.c). Writing,
 * import, export and merge are the tuner's (autotune/db.h), on top of this.
 */
#ifndef KGEN_RUNTIME_TUNEDB_H
#define KGEN_RUNTIME_TUNEDB_H

#include "internal.h"

struct sqlite3;

/* 2: results.final_ms (the tuner's final stage). A version-1 file is
 * upgraded in place when opened for writing, and read through a temporary
 * view (final_ms = 0) when opened read-only. */
#define KGI_DB_SCHEMA_VERSION 2

/* How long a connection waits for another's lock before failing. */
#define KGI_DB_BUSY_TIMEOUT_MS 30000

/* SQL ORDER BY terms for a shape's rows, best first, as kg_matmul chooses:
 * the final stage's finalists by final_ms, then the rest by the search's
 * time_ms. */
#define KGI_DB_BEST_FIRST "final_ms <= 0, CASE WHEN final_ms > 0 THEN final_ms ELSE time_ms END"

/* The default database path: $KGEN_DB, else $XDG_DATA_HOME/kgen/tune.db,
 * else $HOME/.local/share/kgen/tune.db. Returns 0 for $KGEN_DB (a path the
 * user chose, like --db), 1 for kgen's own location (whose folders kgen
 * creates: KGI_DB_MKDIR), or -1 when none can be formed (no HOME). */
int kgi_db_default_path(char *buf, size_t len);

/* meta.schema_version of an open database: the version, 0 when the tables
 * are missing, -1 with err (naming `path`) on another error. */
int kgi_tunedb_schema_version(struct sqlite3 *h, const char *path, char *err, size_t errlen);

/* 0 where `path` is not a directory; else -1 with err saying so (SQLite
 * itself reports a directory as a disk I/O error). */
int kgi_tunedb_not_dir(const char *path, char *err, size_t errlen);

/* Opens `path` read-only (busy timeout set) and checks its schema: version
 * 1 is read through a temporary view with final_ms = 0. On failure *out is
 * NULL and err says why. */
kg_status kgi_tunedb_open(const char *path, struct sqlite3 **out, char *err, size_t errlen);

/* kg_matmul's choice for `info`'s device in the database `h` (named `path`
 * in messages): exact shape, then the nearest tuned shape within a log2
 * distance of 3; `ctx` supplies the templates' current versions. KG_OK with
 * the template, configuration and why; KG_ERR_DB with why there is none. */
kg_status kgi_tunedb_query(struct sqlite3 *h, const char *path, kg_context *ctx, const kg_device_info *info,
                           const char *layout, int m, int n, int k, char *tmpl, size_t tmpl_len, char *config,
                           size_t config_len, char *why, size_t why_len);

/* kgi_tunedb_query for the context's device on the default database, opened
 * once per context; with `exact_only`, the exact shape alone (no nearest
 * shape). KG_OK with the template, configuration and a sentence saying
 * which entry and why; KG_ERR_DB with `why` saying there is none (no
 * database, no entry). */
kg_status kgi_tunedb_lookup(kg_context *ctx, const char *layout, int m, int n, int k, int exact_only, char *tmpl,
                            size_t tmpl_len, char *config, size_t config_len, char *why, size_t why_len);

/* Closes the context's database (kg_context_close). */
void kgi_tunedb_close(kg_context *ctx);

#endif
