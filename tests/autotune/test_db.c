/*
 * test_db.c -- the tuning database without a GPU: the default path, every
 * column round-tripping, keep versus replace (--force), a foreign file,
 * kill -9 of a writer in mid-stream (no committed row lost), concurrent
 * writer processes, merging with the newest-wins rule, CSV and JSON export
 * and import (and their errors, which write nothing), and kg_matmul's
 * lookup: exact shape, nearest shape, and every reason a row is passed over;
 * the final stage's column (set, cleared, preferred) and the upgrade of a
 * version-1 file.
 */
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autotune/db.h"
#include "testutil.h"

static char dir[256];

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static kgi_db *open_new(const char *name)
{
    char path[512], err[512];
    path_of(path, sizeof path, name);
    unlink(path);
    kgi_db *db;
    kg_status st = kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err);
    CHECK_MSG(st == KG_OK, "open %s: %s", path, err);
    return st == KG_OK ? db : NULL;
}

static void make_key(kgi_dbkey *k, const char *device, int m, int n, int kk, const char *config)
{
    memset(k, 0, sizeof *k);
    snprintf(k->device, sizeof k->device, "%s", device);
    k->cc = 90, k->sm_count = 132;
    snprintf(k->tmpl, sizeof k->tmpl, "matmul");
    k->tmpl_version = 1;
    snprintf(k->dtype, sizeof k->dtype, "f32");
    snprintf(k->layout, sizeof k->layout, "nn");
    k->m = m, k->n = n, k->k = kk;
    snprintf(k->config, sizeof k->config, "%s", config);
}

static void make_result(kgi_result *r, kgi_outcome o, double ms)
{
    memset(r, 0, sizeof *r);
    r->outcome = o;
    r->time_ms = ms, r->time_min_ms = ms * 0.99, r->time_max_ms = ms * 1.01, r->spread = 0.013;
    r->reps = 10, r->tflops = 137.4 / ms, r->registers = 128, r->spill_bytes = 0, r->smem_bytes = 16896;
    r->threads = 256, r->occupancy = 0.25, r->error = 1.5e-7;
    r->m_multiple = r->n_multiple = r->k_multiple = 1, r->ld_multiple = 4;
    if (o != KGI_OUT_OK)
        snprintf(r->reason, sizeof r->reason, "a reason, with a comma and a \"quote\"");
}

static void test_default_path(void)
{
    char buf[512];
    setenv("KGEN_DB", "/x/k.db", 1);
    CHECK(kgi_db_default_path(buf, sizeof buf) == 0 && strcmp(buf, "/x/k.db") == 0);
    unsetenv("KGEN_DB");
    setenv("XDG_DATA_HOME", "/xdg", 1);
    CHECK(kgi_db_default_path(buf, sizeof buf) == 1 && strcmp(buf, "/xdg/kgen/tune.db") == 0);
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    CHECK(kgi_db_default_path(buf, sizeof buf) == 1 && strcmp(buf, "/home/u/.local/share/kgen/tune.db") == 0);
    unsetenv("HOME");
    CHECK(kgi_db_default_path(buf, sizeof buf) == -1);
}

static void test_roundtrip(void)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/a/b/c/t.db", dir);
    kgi_db *db;
    /* a path the user chose: its missing folder is named, and not made */
    char top[512];
    snprintf(top, sizeof top, "%s/a", dir);
    CHECK(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) != KG_OK && db == NULL);
    CHECK_MSG(strstr(err, "no folder '") && strstr(err, "/a/b/c'"), "%s", err);
    CHECK(access(top, F_OK) != 0);
    /* kgen's own default location: its folders are made */
    CHECK_MSG(kgi_db_open(path, KGI_DB_CREATE | KGI_DB_MKDIR, &db, err, sizeof err) == KG_OK, "%s", err);
    if (!db)
        return;
    kgi_dbkey k;
    kgi_result r, got;
    make_key(&k, "GPU A", 4096, 4096, 4096, "bm=128 bn=128");
    make_result(&r, KGI_OUT_SLOW, 7.25);
    r.error = INFINITY;
    CHECK(kgi_db_get(db, &k, &got) == 0);
    CHECK(kgi_db_put(db, &k, &r, 0, 0) == KG_OK);
    CHECK(kgi_db_get(db, &k, &got) == 1);
    CHECK(got.outcome == KGI_OUT_SLOW && got.time_ms == 7.25 && got.time_min_ms == r.time_min_ms);
    CHECK(got.reps == 10 && got.registers == 128 && got.smem_bytes == 16896 && got.threads == 256);
    CHECK(got.occupancy == 0.25 && isinf(got.error) && got.ld_multiple == 4);
    CHECK(strcmp(got.reason, r.reason) == 0 && strcmp(got.kgen_version, KG_VERSION) == 0 && got.created[0]);
    /* without --force an existing row stays; with it, it is replaced */
    kgi_result r2;
    make_result(&r2, KGI_OUT_OK, 5.0);
    CHECK(kgi_db_put(db, &k, &r2, 0, 0) == KG_OK && kgi_db_get(db, &k, &got) == 1 && got.outcome == KGI_OUT_SLOW);
    CHECK(kgi_db_put(db, &k, &r2, 0, 1) == KG_OK && kgi_db_get(db, &k, &got) == 1 && got.outcome == KGI_OUT_OK &&
          got.time_ms == 5.0);
    /* another shape or config is another key */
    k.m = 4095;
    CHECK(kgi_db_get(db, &k, &got) == 0);
    kgi_db_close(db);
    /* read-only opening sees it */
    CHECK(kgi_db_open(path, KGI_DB_READONLY, &db, err, sizeof err) == KG_OK);
    k.m = 4096;
    CHECK(db && kgi_db_get(db, &k, &got) == 1);
    kgi_db_close(db);
}

static void test_foreign_files(void)
{
    char path[512], err[512];
    kgi_db *db;
    path_of(path, sizeof path, "notadb.db");
    FILE *f = fopen(path, "w");
    fputs("this is not a database, it is text long enough to be a header........................\n", f);
    fclose(f);
    CHECK(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) == KG_ERR_DB && db == NULL);
    CHECK_MSG(strstr(err, path) != NULL, "error does not name the file: %s", err);
    /* an SQLite file of someone else's */
    path_of(path, sizeof path, "other.db");
    unlink(path);
    sqlite3 *h;
    sqlite3_open(path, &h);
    sqlite3_exec(h, "CREATE TABLE t(x)", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(kgi_db_open(path, KGI_DB_READONLY, &db, err, sizeof err) == KG_ERR_DB);
    CHECK_MSG(strstr(err, "not a kgen tuning database") != NULL, "%s", err);
    /* opened to write (import, merge, tune): refused too, and the file left as it was: no kgen tables, its
     * journal mode unchanged; likewise one whose tables bear kgen's names */
    static const char *const foreign[] = {"CREATE TABLE t(x)", "CREATE TABLE results(x); CREATE TABLE meta(k, v)"};
    for (int i = 0; i < 2; i++) {
        unlink(path);
        sqlite3_open(path, &h);
        sqlite3_exec(h, foreign[i], NULL, NULL, NULL);
        sqlite3_close(h);
        CHECK(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) == KG_ERR_DB && db == NULL);
        CHECK_MSG(strstr(err, "not a kgen tuning database") != NULL &&
                      strstr(err, i == 0 ? "other tables" : "its table meta is not kgen's") != NULL,
                  "%s", err);
        int entries = -1;
        char mode[16] = "";
        sqlite3_stmt *st;
        sqlite3_open(path, &h);
        if (sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            entries = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(h);
        CHECK_MSG(entries == i + 1 && strcmp(mode, "delete") == 0, "someone's database changed: %d entries, %s",
                  entries, mode);
    }
    /* a newer schema */
    kgi_db *n = open_new("future.db");
    if (n) {
        sqlite3_exec(kgi_db_handle(n), "UPDATE meta SET value = '99' WHERE key = 'schema_version'", NULL, NULL, NULL);
        kgi_db_close(n);
        path_of(path, sizeof path, "future.db");
        CHECK(kgi_db_open(path, KGI_DB_READONLY, &db, err, sizeof err) == KG_ERR_DB);
        CHECK_MSG(strstr(err, "schema version 99") != NULL, "%s", err);
    }
}

/* A writer process: rows i = 0, 1, ... each in its own transaction, the
 * count of committed rows sent to `fd` after each commit. */
static void writer(const char *name, int first, int count, int fd)
{
    char path[512], err[512];
    path_of(path, sizeof path, name);
    kgi_db *db;
    if (kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) != KG_OK)
        _exit(2);
    for (int i = first; i < first + count; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "row=%d", i);
        kgi_dbkey k;
        kgi_result r;
        make_key(&k, "GPU W", 1024, 1024, 1024, cfg);
        make_result(&r, KGI_OUT_OK, 1.0 + i);
        if (kgi_db_put(db, &k, &r, 0, 0) != KG_OK)
            _exit(3);
        int done = i - first + 1;
        if (fd >= 0 && write(fd, &done, sizeof done) != sizeof done)
            _exit(4);
    }
    kgi_db_close(db);
    _exit(0);
}

static long long count(kgi_db *db, const char *sql)
{
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(kgi_db_handle(db), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void test_kill9(void)
{
    kgi_db *db = open_new("kill.db");
    kgi_db_close(db);
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        writer("kill.db", 0, 1000000, p[1]);
    }
    close(p[1]);
    int done = 0, last = 0;
    while (last < 300 && read(p[0], &done, sizeof done) == sizeof done)
        last = done;
    kill(pid, SIGKILL); /* in the middle of writing */
    int status;
    waitpid(pid, &status, 0);
    while (read(p[0], &done, sizeof done) == sizeof done)
        last = done; /* commits reported before the kill landed */
    close(p[0]);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char path[512], err[512];
    path_of(path, sizeof path, "kill.db");
    CHECK(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) == KG_OK);
    if (!db)
        return;
    long long rows = count(db, "SELECT count(*) FROM results");
    CHECK_MSG(rows >= last, "%lld rows after kill -9; %d were committed", rows, last);
    /* rows are 0..rows-1, none missing in between */
    CHECK(count(db, "SELECT max(CAST(substr(config, 5) AS INTEGER)) FROM results") == rows - 1);
    sqlite3_stmt *st;
    int ok = sqlite3_prepare_v2(kgi_db_handle(db), "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    sqlite3_finalize(st);
    CHECK(ok);
    kgi_db_close(db);
}

static void test_concurrent_writers(void)
{
    kgi_db *db = open_new("conc.db");
    kgi_db_close(db);
    enum { WRITERS = 4, ROWS = 250 };
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++)
        if ((pids[w] = fork()) == 0)
            writer("conc.db", w * ROWS, ROWS, -1);
    for (int w = 0; w < WRITERS; w++) {
        int status;
        waitpid(pids[w], &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d: status 0x%x", w, status);
    }
    char path[512], err[512];
    path_of(path, sizeof path, "conc.db");
    CHECK(kgi_db_open(path, KGI_DB_READONLY, &db, err, sizeof err) == KG_OK);
    if (db) {
        CHECK(count(db, "SELECT count(*) FROM results") == WRITERS * ROWS);
        CHECK(count(db, "SELECT count(DISTINCT config) FROM results") == WRITERS * ROWS);
        kgi_db_close(db);
    }
}

/* Puts a row with a given timestamp. */
static void put_at(kgi_db *db, const char *config, double ms, const char *created)
{
    kgi_dbkey k;
    kgi_result r;
    make_key(&k, "GPU M", 2048, 2048, 2048, config);
    make_result(&r, KGI_OUT_OK, ms);
    snprintf(r.created, sizeof r.created, "%s", created);
    CHECK(kgi_db_put(db, &k, &r, 0, 1) == KG_OK);
}

static double time_of(kgi_db *db, const char *config)
{
    kgi_dbkey k;
    kgi_result r;
    make_key(&k, "GPU M", 2048, 2048, 2048, config);
    return kgi_db_get(db, &k, &r) == 1 ? r.time_ms : -1;
}

static void test_merge(void)
{
    kgi_db *a = open_new("ma.db"), *b = open_new("mb.db");
    if (!a || !b)
        return;
    put_at(a, "c=1", 1.0, "2026-01-01T00:00:00.000Z");
    put_at(a, "c=2", 2.0, "2026-01-02T00:00:00.000Z"); /* newer than b's */
    put_at(a, "c=3", 3.0, "2026-01-01T00:00:00.000Z"); /* older than b's */
    put_at(b, "c=2", 20.0, "2026-01-01T00:00:00.000Z");
    put_at(b, "c=3", 30.0, "2026-01-05T00:00:00.000Z");
    put_at(b, "c=4", 40.0, "2026-01-05T00:00:00.000Z");
    kgi_db_close(b);
    char path[512], err[512];
    path_of(path, sizeof path, "mb.db");
    int ins = -1, upd = -1, kept = -1;
    CHECK_MSG(kgi_db_merge(a, path, &ins, &upd, &kept, err, sizeof err) == KG_OK, "%s", err);
    CHECK_MSG(ins == 1 && upd == 1 && kept == 1, "inserted %d updated %d kept %d", ins, upd, kept);
    CHECK(time_of(a, "c=1") == 1.0 && time_of(a, "c=2") == 2.0 && time_of(a, "c=3") == 30.0 &&
          time_of(a, "c=4") == 40.0);
    /* merging again changes nothing */
    CHECK(kgi_db_merge(a, path, &ins, &upd, &kept, err, sizeof err) == KG_OK && ins == 0 && upd == 0 && kept == 3);
    path_of(path, sizeof path, "notadb.db");
    CHECK(kgi_db_merge(a, path, &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    kgi_db_close(a);
}

static char *export_text(kgi_db *db, int fmt, size_t *len)
{
    char *buf = NULL, err[512];
    FILE *f = open_memstream(&buf, len);
    int rows;
    CHECK(kgi_db_export(db, f, fmt, NULL, &rows, err, sizeof err) == KG_OK);
    fclose(f);
    return buf;
}

static void test_export_import(void)
{
    kgi_db *a = open_new("ea.db");
    if (!a)
        return;
    for (int i = 0; i < 20; i++) {
        kgi_dbkey k;
        kgi_result r;
        char cfg[64];
        snprintf(cfg, sizeof cfg, "bm=%d bn=64", 16 * (i + 1));
        make_key(&k, i % 2 ? "GPU \"odd\", one" : "GPU even", 4096, 4096, 4096, cfg);
        make_result(&r, (kgi_outcome)(1 + i % (KGI_OUT_COUNT - 1)), 1.0 + i / 7.0);
        CHECK(kgi_db_put(a, &k, &r, 0, 0) == KG_OK);
    }
    for (int fmt = KGI_FMT_CSV; fmt <= KGI_FMT_JSON; fmt++) {
        size_t len, len2;
        char *text = export_text(a, fmt, &len);
        kgi_db *b = open_new(fmt == KGI_FMT_CSV ? "eb.db" : "ec.db");
        int ins, upd, kept;
        char err[512];
        CHECK_MSG(kgi_db_import(b, text, len, &ins, &upd, &kept, err, sizeof err) == KG_OK, "%s", err);
        CHECK(ins == 20 && upd == 0 && kept == 0);
        char *again = export_text(b, fmt, &len2);
        CHECK_MSG(len == len2 && memcmp(text, again, len) == 0, "%s export differs after import",
                  fmt == KGI_FMT_CSV ? "CSV" : "JSON");
        /* importing the same rows again keeps them (not newer) */
        CHECK(kgi_db_import(b, text, len, &ins, &upd, &kept, err, sizeof err) == KG_OK && kept == 20);
        free(again);
        free(text);
        kgi_db_close(b);
    }
    /* errors name the place and write nothing */
    size_t len;
    char *csv = export_text(a, KGI_FMT_CSV, &len);
    kgi_db *c = open_new("ed.db");
    char err[512], *bad = malloc(len + 64);
    int ins, upd, kept;
    /* the last line's m column becomes "x" (its device, "GPU even", needs no quotes) */
    int lines = 0;
    for (size_t i = 0; i + 1 < len; i++)
        lines += csv[i] == '\n';
    size_t at = len - 1;
    while (at > 0 && csv[at - 1] != '\n')
        at--;
    for (int commas = 0; commas < 7; at++)
        commas += csv[at] == ',';
    memcpy(bad, csv, at);
    size_t end = at + strcspn(csv + at, ",");
    snprintf(bad + at, len + 64 - at, "x%s", csv + end);
    char where[32];
    snprintf(where, sizeof where, "line %d", lines + 1);
    CHECK(kgi_db_import(c, bad, strlen(bad), &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    CHECK_MSG(strstr(err, where) && strstr(err, "column m: 'x' is not an integer"), "%s (expected %s)", err, where);
    CHECK(count(c, "SELECT count(*) FROM results") == 0);
    const char *unknown = "device,cc,bogus\nA,90,1\n";
    CHECK(kgi_db_import(c, unknown, strlen(unknown), &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    CHECK_MSG(strstr(err, "unknown column 'bogus'"), "%s", err);
    const char *missing = "device,cc\nA,90\n";
    CHECK(kgi_db_import(c, missing, strlen(missing), &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    CHECK_MSG(strstr(err, "is missing"), "%s", err);
    const char *json = "{\"results\": [{\"device\": \"A\", \"outcome\": \"splendid\"}]}";
    CHECK(kgi_db_import(c, json, strlen(json), &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    CHECK_MSG(strstr(err, "record 1") && strstr(err, "unknown outcome"), "%s", err);
    const char *trunc = "[{\"device\": \"A\"";
    CHECK(kgi_db_import(c, trunc, strlen(trunc), &ins, &upd, &kept, err, sizeof err) == KG_ERR_DB);
    CHECK(count(c, "SELECT count(*) FROM results") == 0);
    free(bad);
    free(csv);
    kgi_db_close(c);
    kgi_db_close(a);
}

static void put_lookup_row(kgi_db *db, const char *device, const char *layout, int m, int n, int k, const char *cfg,
                           kgi_outcome o, double ms, int version, int m_multiple)
{
    kgi_dbkey key;
    kgi_result r;
    make_key(&key, device, m, n, k, cfg);
    snprintf(key.layout, sizeof key.layout, "%s", layout);
    key.tmpl_version = version;
    make_result(&r, o, ms);
    r.m_multiple = m_multiple;
    CHECK(kgi_db_put(db, &key, &r, 0, 1) == KG_OK);
}

static void test_lookup(void)
{
    kgi_db *db = open_new("lookup.db");
    kg_context *ctx;
    if (!db || kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK)
        return;
    kg_device_info dev = {.cc_major = 9, .cc_minor = 0, .sm_count = 132};
    snprintf(dev.name, sizeof dev.name, "Fake GPU");
    const char *big = "bm=128 bn=128 bk=8 tm=8 tn=8 pad=4 vec=4 bounds=1 layout=nn";
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, big, KGI_OUT_OK, 5.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, "slower", KGI_OUT_OK, 6.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, "wrong", KGI_OUT_WRONG, 1.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, "slow", KGI_OUT_SLOW, 2.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, "old-version", KGI_OUT_OK, 1.5, 99, 1);
    put_lookup_row(db, "Fake GPU", "nn", 4096, 4096, 4096, "tile-multiple", KGI_OUT_OK, 4.0, 1, 128);
    put_lookup_row(db, "Other GPU", "nn", 4096, 4096, 4096, "other-device", KGI_OUT_OK, 0.5, 1, 1);
    put_lookup_row(db, "Fake GPU", "nt", 4096, 4096, 4096, "other-layout", KGI_OUT_OK, 0.5, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 512, 512, 512, "small", KGI_OUT_OK, 0.02, 1, 1);
    char tmpl[64], cfg[512], why[1024];
    /* exact: the fastest usable ok row (the bounds=0 one divides 4096) */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 4096, 4096, 4096, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "tile-multiple") == 0 && strstr(why, "exact shape"), "%s: %s", cfg, why);
    /* nearest: 4000 is no multiple of 128, so the next fastest */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 4000, 4096, 4096, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, big) == 0 && strstr(why, "nearest shape 4096x4096x4096"), "%s: %s", cfg, why);
    CHECK(strcmp(tmpl, "matmul") == 0);
    /* nearer to 512^3 than to 4096^3 */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 700, 600, 512, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "small") == 0 && strstr(why, "nearest shape 512x512x512"), "%s: %s", cfg, why);
    /* too far from both: none */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 64, 64, 32768, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_ERR_DB);
    CHECK_MSG(strstr(why, "no tuning entry"), "%s", why);
    /* another layout, another device, another SM count: none of these rows */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "tt", 4096, 4096, 4096, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_ERR_DB);
    dev.sm_count = 114;
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 4096, 4096, 4096, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_ERR_DB);
    kg_context_close(ctx);
    kgi_db_close(db);
}

static int final_rows(kgi_db *db)
{
    return (int)count(db, "SELECT count(*) FROM results WHERE final_ms > 0");
}

/* The final stage's column: set and cleared per shape in one transaction,
 * preferred by the lookup, reset by a re-evaluation; and a version-1 file
 * (before the column) read as it is and upgraded when opened for writing. */
static void test_final(void)
{
    kgi_db *db = open_new("fin.db");
    kg_context *ctx;
    if (!db || kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK)
        return;
    kg_device_info dev = {.cc_major = 9, .cc_minor = 0, .sm_count = 132};
    snprintf(dev.name, sizeof dev.name, "Fake GPU");
    const char *cfgs[3] = {"a", "b", "c"};
    double ms[3] = {5.0, 5.5, 6.0};
    kgi_dbkey keys[3];
    for (int i = 0; i < 3; i++) {
        put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, cfgs[i], KGI_OUT_OK, ms[i], 1, 1);
        make_key(&keys[i], "Fake GPU", 1000, 1000, 1000, cfgs[i]);
    }
    put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "wrong", KGI_OUT_WRONG, 1.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 2000, 2000, 2000, "other-shape", KGI_OUT_OK, 9.0, 1, 1);
    /* the fastest ok rows of the shape, in the search's order */
    kgi_dbkey got[8];
    double t[8];
    CHECK(kgi_db_fastest(db, &keys[0], got, t, 8) == 3);
    CHECK(strcmp(got[0].config, "a") == 0 && strcmp(got[2].config, "c") == 0 && t[1] == 5.5);
    CHECK(kgi_db_fastest(db, &keys[0], got, t, 2) == 2);
    char tmpl[64], cfg[512], why[1024];
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1000, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "a") == 0 && !strstr(why, "final stage"), "%s: %s", cfg, why);
    /* b and c as finalists: the faster by final time wins over the search's fastest */
    double fin[2] = {4.5, 4.0};
    CHECK(kgi_db_set_final(db, &keys[1], fin, 2) == KG_OK);
    CHECK(final_rows(db) == 2);
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1000, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "c") == 0 && strstr(why, "final stage"), "%s: %s", cfg, why);
    /* ... also for a nearby shape */
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1004, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "c") == 0 && strstr(why, "nearest shape 1000x1000x1000"), "%s: %s", cfg, why);
    /* a later final stage replaces the earlier one for the shape */
    double fa = 4.9;
    CHECK(kgi_db_set_final(db, &keys[0], &fa, 1) == KG_OK);
    CHECK(final_rows(db) == 1);
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1000, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "a") == 0 && strstr(why, "4.9 ms back to back"), "%s: %s", cfg, why);
    /* finalists of two shapes, a row that does not exist, a non-positive
     * time: refused, and nothing changes */
    kgi_dbkey mixed[2] = {keys[1], keys[0]};
    mixed[1].m = 2000, mixed[1].n = 2000, mixed[1].k = 2000;
    double two[2] = {1.0, 1.0};
    CHECK(kgi_db_set_final(db, mixed, two, 2) == KG_ERR_DB);
    kgi_dbkey ghost = keys[1];
    snprintf(ghost.config, sizeof ghost.config, "no-such-config");
    CHECK(kgi_db_set_final(db, &ghost, two, 1) == KG_ERR_DB);
    double zero = 0;
    CHECK(kgi_db_set_final(db, &keys[1], &zero, 1) == KG_ERR_DB);
    CHECK(final_rows(db) == 1 && count(db, "SELECT count(*) FROM results WHERE config = 'a' AND final_ms = 4.9") == 1);
    /* rows that do not change the shape's ok rows keep the final times: a
     * wrong one, an ok one of another shape */
    double two_f[2] = {4.5, 4.0};
    CHECK(kgi_db_set_final(db, &keys[1], two_f, 2) == KG_OK && final_rows(db) == 2);
    put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "wrong-2", KGI_OUT_WRONG, 1.0, 1, 1);
    put_lookup_row(db, "Fake GPU", "nn", 2000, 2000, 2000, "other-shape-2", KGI_OUT_OK, 8.0, 1, 1);
    CHECK(final_rows(db) == 2);
    /* re-measuring one finalist (--force) drops the whole set: the lookup
     * goes back to the search's fastest, not to the other finalist */
    put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "c", KGI_OUT_OK, 6.1, 1, 1);
    CHECK(final_rows(db) == 0);
    CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1000, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why, sizeof why) ==
          KG_OK);
    CHECK_MSG(strcmp(cfg, "a") == 0 && !strstr(why, "final stage"), "%s: %s", cfg, why);
    /* so does a new ok row of the shape (a later search, even with --final 0) */
    CHECK(kgi_db_set_final(db, &keys[1], two_f, 2) == KG_OK && final_rows(db) == 2);
    put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "d", KGI_OUT_OK, 7.0, 1, 1);
    CHECK(final_rows(db) == 0);
    kgi_db_close(db);

    /* a version-1 file: the same table without final_ms */
    char path[512], err[512];
    db = open_new("v1.db");
    if (!db)
        return;
    put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "old", KGI_OUT_OK, 3.0, 1, 1);
    CHECK(sqlite3_exec(kgi_db_handle(db), "DROP TRIGGER results_final_insert; DROP TRIGGER results_final_update;"
                       "DROP INDEX results_final; ALTER TABLE results DROP COLUMN final_ms;"
                       "UPDATE meta SET value = '1' WHERE key = 'schema_version';", NULL, NULL, NULL) == SQLITE_OK);
    kgi_db_close(db);
    path_of(path, sizeof path, "v1.db");
    CHECK_MSG(kgi_db_open(path, KGI_DB_READONLY, &db, err, sizeof err) == KG_OK, "read-only v1: %s", err);
    if (db) {
        CHECK(kgi_tunedb_find(db, ctx, &dev, "nn", 1000, 1000, 1000, tmpl, sizeof tmpl, cfg, sizeof cfg, why,
                              sizeof why) == KG_OK && strcmp(cfg, "old") == 0);
        kgi_result r;
        make_key(&keys[0], "Fake GPU", 1000, 1000, 1000, "old");
        CHECK(kgi_db_get(db, &keys[0], &r) == 1 && r.time_ms == 3.0 && r.final_ms == 0);
        kgi_db_close(db);
    }
    /* read-only left the file as it was */
    sqlite3 *h;
    sqlite3_open(path, &h);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(h, "SELECT final_ms FROM results", -1, &st, NULL) != SQLITE_OK);
    sqlite3_finalize(st);
    sqlite3_close(h);
    /* merging a version-1 file into a version-2 one */
    kgi_db *m = open_new("merged.db");
    if (m) {
        int ins = -1, upd = -1, kept = -1;
        CHECK_MSG(kgi_db_merge(m, path, &ins, &upd, &kept, err, sizeof err) == KG_OK, "merge v1: %s", err);
        CHECK(ins == 1 && upd == 0 && kept == 0);
        CHECK(count(m, "SELECT count(*) FROM results WHERE config = 'old' AND time_ms = 3.0 AND final_ms = 0") == 1);
        kgi_db_close(m);
    }
    CHECK_MSG(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) == KG_OK, "upgrading v1: %s", err);
    if (db) {
        CHECK(count(db, "SELECT value FROM meta WHERE key = 'schema_version'") == 2);
        CHECK(count(db, "SELECT count(*) FROM results WHERE config = 'old' AND time_ms = 3.0 AND final_ms = 0") == 1);
        double f3 = 2.5;
        CHECK(kgi_db_set_final(db, &keys[0], &f3, 1) == KG_OK && final_rows(db) == 1);
        /* the upgrade added the trigger too */
        put_lookup_row(db, "Fake GPU", "nn", 1000, 1000, 1000, "new", KGI_OUT_OK, 3.5, 1, 1);
        CHECK(final_rows(db) == 0);
        kgi_db_close(db);
    }
    kg_context_close(ctx);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kgen_test_db_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_default_path();
    test_roundtrip();
    test_foreign_files();
    test_kill9();
    test_concurrent_writers();
    test_merge();
    test_export_import();
    test_lookup();
    test_final();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}
