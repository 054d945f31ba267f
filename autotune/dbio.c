/*
 * dbio.c -- the tuning database in and out: export and import as CSV or
 * JSON, merging database files, and the summaries `kgen db list|show` print.
 *
 * The interchange formats carry every column of the results table, in the
 * order of db.c's column table, so a CSV opens in a spreadsheet and a JSON
 * file diffs line by line. Conflicting rows (the same key) resolve to the
 * newest measurement, by `created`.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "autotune/db.h"

static const char where_filter[] =
    " WHERE (?1 IS NULL OR device = ?1) AND (?2 IS NULL OR template = ?2) AND (?3 IS NULL OR layout = ?3)"
    " AND (?4 IS NULL OR outcome = ?4) AND (?5 = 0 OR m = ?5) AND (?6 = 0 OR n = ?6) AND (?7 = 0 OR k = ?7)";

static void bind_filter(sqlite3_stmt *st, const kgi_db_filter *f)
{
    const char *text[] = {f ? f->device : NULL, f ? f->tmpl : NULL, f ? f->layout : NULL, f ? f->outcome : NULL};
    for (int i = 0; i < 4; i++) {
        if (text[i] && text[i][0])
            sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, i + 1);
    }
    sqlite3_bind_int(st, 5, f ? f->m : 0);
    sqlite3_bind_int(st, 6, f ? f->n : 0);
    sqlite3_bind_int(st, 7, f ? f->k : 0);
}

/* ------------------------------------------------------------ export */

static void put_real(FILE *f, double v, int json)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fprintf(f, json ? "\"%s\"" : "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void csv_text(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\n\r")] && !isspace((unsigned char)s[0])) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void json_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void write_row(FILE *f, int json, const kgi_dbkey *key, const kgi_result *res)
{
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    if (json)
        fputs("    {", f);
    for (int i = 0; i < nc; i++) {
        const kgi_column *c = &cols[i];
        const char *p = (const char *)(c->in_key ? (const void *)key : (const void *)res) + c->offset;
        if (i)
            fputs(json ? ", " : ",", f);
        if (json)
            fprintf(f, "\"%s\": ", c->name);
        switch (c->type) {
        case KGI_COL_TEXT: json ? json_text(f, p) : csv_text(f, p); break;
        case KGI_COL_INT: fprintf(f, "%d", *(const int *)p); break;
        case KGI_COL_LONG: fprintf(f, "%ld", *(const long *)p); break;
        case KGI_COL_REAL: put_real(f, *(const double *)p, json); break;
        case KGI_COL_OUTCOME:
            json ? json_text(f, kgi_outcome_name(*(const kgi_outcome *)p)) : csv_text(f, kgi_outcome_name(*(const kgi_outcome *)p));
            break;
        }
    }
    fputs(json ? "}" : "\n", f);
}

kg_status kgi_db_export(kgi_db *db, FILE *f, int format, const kgi_db_filter *flt, int *rows, char *err,
                        size_t errlen)
{
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT %s FROM results%s ORDER BY device, cc, sm_count, layout, m, n, k, template, config",
             kgi_db_column_list(), where_filter);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(kgi_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
        return KG_ERR_DB;
    }
    bind_filter(st, flt);
    int json = format == KGI_FMT_JSON;
    if (json) {
        fprintf(f, "{\"kgen_tuning_db\": %d, \"results\": [\n", KGI_DB_SCHEMA_VERSION);
    } else {
        int nc;
        const kgi_column *cols = kgi_db_columns(&nc);
        for (int i = 0; i < nc; i++)
            fprintf(f, "%s%s", i ? "," : "", cols[i].name);
        fputc('\n', f);
    }
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        kgi_dbkey key;
        kgi_result res;
        memset(&res, 0, sizeof res);
        kgi_db_read_row(st, 0, &key, &res);
        if (json && n)
            fputs(",\n", f);
        write_row(f, json, &key, &res);
        n++;
    }
    sqlite3_finalize(st);
    if (json)
        fputs(n ? "\n]}\n" : "]}\n", f);
    *rows = n;
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
        return KG_ERR_DB;
    }
    return KG_OK;
}

/* ------------------------------------------------------------ import */

/* Sets column c of key/res from text; -1 with err when it does not parse. */
static int set_field(const kgi_column *c, kgi_dbkey *key, kgi_result *res, const char *v, int null, char *err,
                     size_t errlen)
{
    char *p = (char *)(c->in_key ? (void *)key : (void *)res) + c->offset;
    char *end;
    errno = 0;
    switch (c->type) {
    case KGI_COL_TEXT:
        if (strlen(v) >= c->size) {
            snprintf(err, errlen, "column %s: value longer than %zu characters", c->name, c->size - 1);
            return -1;
        }
        snprintf(p, c->size, "%s", v);
        return 0;
    case KGI_COL_INT:
    case KGI_COL_LONG: {
        long x = null ? 0 : strtol(v, &end, 10);
        if (!null && (!v[0] || *end || errno == ERANGE || (c->type == KGI_COL_INT && (x < -2147483647L || x > 2147483647L)))) {
            snprintf(err, errlen, "column %s: '%s' is not an integer", c->name, v);
            return -1;
        }
        if (c->type == KGI_COL_INT)
            *(int *)p = (int)x;
        else
            *(long *)p = x;
        return 0;
    }
    case KGI_COL_REAL: {
        double x = null ? 0 : strtod(v, &end);
        if (!null && (!v[0] || *end)) {
            snprintf(err, errlen, "column %s: '%s' is not a number", c->name, v);
            return -1;
        }
        *(double *)p = x;
        return 0;
    }
    case KGI_COL_OUTCOME: {
        kgi_outcome o = kgi_outcome_parse(v);
        if (o == KGI_OUT_NONE) {
            snprintf(err, errlen, "column %s: unknown outcome '%s'", c->name, v);
            return -1;
        }
        *(kgi_outcome *)p = o;
        return 0;
    }
    }
    return -1;
}

static const kgi_column *find_column(const char *name)
{
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    for (int i = 0; i < nc; i++)
        if (strcmp(cols[i].name, name) == 0)
            return &cols[i];
    return NULL;
}

/* The import in progress: the upsert and its counts. */
typedef struct importer {
    kgi_db *db;
    sqlite3_stmt *upsert;
    int inserted, updated, kept;
} importer;

static int upsert_sql(char *sql, size_t len, const char *source)
{
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    char set[2048];
    size_t used = 0;
    for (int i = 11; i < nc; i++) /* after the key */
        used += (size_t)snprintf(set + used, sizeof set - used, "%s%s = excluded.%s", i > 11 ? ", " : "",
                                 cols[i].name, cols[i].name);
    return snprintf(sql, len,
                    "INSERT INTO main.results(%s) %s ON CONFLICT DO UPDATE SET %s, run_id = NULL"
                    " WHERE excluded.created > results.created",
                    kgi_db_column_list(), source, set) < (int)len ? 0 : -1;
}

/* Stores one parsed row; checks that the key columns were all given. */
static int import_row(importer *im, kgi_dbkey *key, kgi_result *res, const unsigned char *given, char *err,
                      size_t errlen)
{
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    for (int i = 0; i < nc; i++) {
        if (cols[i].required && !given[i]) {
            snprintf(err, errlen, "column %s is missing", cols[i].name);
            return -1;
        }
    }
    if (!res->created[0]) {
        snprintf(err, errlen, "column created is empty (the time of the measurement decides conflicts)");
        return -1;
    }
    /* What kg_matmul would trust: a real shape and layout, a timed row with a
     * positive finite time, and a timestamp in the database's own form (the
     * text comparison of `created` decides conflicts). */
    int y, mo, d, h, mi;
    double sec;
    char z = 0;
    if (sscanf(res->created, "%4d-%2d-%2dT%2d:%2d:%lf%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 || z != 'Z') {
        snprintf(err, errlen, "column created: '%s' is not of the form YYYY-MM-DDTHH:MM:SS.sssZ", res->created);
        return -1;
    }
    if (!key->device[0]) {
        snprintf(err, errlen, "column device is empty");
        return -1;
    }
    if (!kgi_template_name_valid(key->tmpl)) {
        snprintf(err, errlen, "column template: '%s' is not a template's module name (letters, digits and '_', "
                 "parts separated by single dots)", key->tmpl);
        return -1;
    }
    if (!isfinite(res->final_ms) || res->final_ms < 0) {
        snprintf(err, errlen, "column final_ms: %g is not a finite time in ms (0: not timed in a final stage)",
                 res->final_ms);
        return -1;
    }
    if (key->m < 1 || key->n < 1 || key->k < 1) {
        snprintf(err, errlen, "m, n and k must be at least 1 (got %d, %d, %d)", key->m, key->n, key->k);
        return -1;
    }
    if (strlen(key->layout) != 2 || !strchr("nt", key->layout[0]) || !strchr("nt", key->layout[1])) {
        snprintf(err, errlen, "column layout: '%s' is not nn, nt, tn or tt", key->layout);
        return -1;
    }
    if (strcmp(key->dtype, "f32") != 0) {
        snprintf(err, errlen, "column dtype: '%s' is not f32", key->dtype);
        return -1;
    }
    if ((res->outcome == KGI_OUT_OK || res->outcome == KGI_OUT_SLOW) && !(res->time_ms > 0 && res->time_ms < 1e12)) {
        snprintf(err, errlen, "a row with outcome %s needs a positive, finite time_ms", kgi_outcome_name(res->outcome));
        return -1;
    }
    kgi_result old;
    int exists = kgi_db_get(im->db, key, &old);
    sqlite3_reset(im->upsert);
    kgi_db_bind_row(im->upsert, 1, key, res);
    if (sqlite3_step(im->upsert) != SQLITE_DONE) {
        snprintf(err, errlen, "%s", kgi_db_error(im->db));
        return -1;
    }
    int changed = sqlite3_changes(kgi_db_handle(im->db));
    if (!changed)
        im->kept++;
    else if (exists == 1)
        im->updated++;
    else
        im->inserted++;
    return 0;
}

/* RFC 4180 CSV: fields separated by commas, quoted with "" for a quote. */
static int import_csv(importer *im, const char *p, const char *end, char *err, size_t errlen)
{
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    const kgi_column *map[64];
    int nmap = 0, line = 1, record = 0;
    char field[2048];
    kgi_dbkey key;
    kgi_result res;
    unsigned char given[64];
    while (p < end) {
        if (*p == '\n' || *p == '\r') { /* a blank line */
            line += *p == '\n';
            p++;
            continue;
        }
        int nf = 0, rec_line = line;
        memset(&key, 0, sizeof key);
        memset(&res, 0, sizeof res);
        memset(given, 0, sizeof given);
        for (;;) { /* one record */
            size_t fl = 0;
            int quoted = 0;
            if (p < end && *p == '"') {
                quoted = 1;
                for (p++; p < end; p++) {
                    if (*p == '"' && p + 1 < end && p[1] == '"')
                        p++;
                    else if (*p == '"')
                        break;
                    if (*p == '\n')
                        line++;
                    if (fl + 1 < sizeof field)
                        field[fl++] = *p;
                }
                if (p >= end) {
                    snprintf(err, errlen, "line %d: unterminated quoted field", rec_line);
                    return -1;
                }
                p++;
            }
            while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
                if (fl + 1 < sizeof field && !quoted)
                    field[fl++] = *p;
                p++;
            }
            field[fl] = '\0';
            if (record == 0) {
                char *name = field + strspn(field, " \t");
                name[strcspn(name, " \t")] = '\0';
                const kgi_column *c = find_column(name);
                if (!c || nmap == 64) {
                    snprintf(err, errlen, "line 1: unknown column '%s'", name);
                    return -1;
                }
                map[nmap++] = c;
            } else {
                if (nf >= nmap) {
                    snprintf(err, errlen, "line %d: more fields than the header's %d", rec_line, nmap);
                    return -1;
                }
                char ferr[256];
                if (set_field(map[nf], &key, &res, field, 0, ferr, sizeof ferr) != 0) {
                    snprintf(err, errlen, "line %d: %s", rec_line, ferr);
                    return -1;
                }
                given[map[nf] - cols] = 1;
            }
            nf++;
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '\r')
                p++;
            if (p < end && *p == '\n')
                p++, line++;
            break;
        }
        if (record > 0) {
            if (nf != nmap) {
                snprintf(err, errlen, "line %d: %d fields; the header has %d", rec_line, nf, nmap);
                return -1;
            }
            char rerr[512];
            if (import_row(im, &key, &res, given, rerr, sizeof rerr) != 0) {
                snprintf(err, errlen, "line %d: %s", rec_line, rerr);
                return -1;
            }
        }
        record++;
    }
    if (record == 0) {
        snprintf(err, errlen, "empty input");
        return -1;
    }
    return 0;
}

/* A small JSON reader for export's shape: {"results": [ {scalars}, ... ]}
 * or a bare array of such objects. */
typedef struct jreader {
    const char *start, *p, *end;
    char *err;
    size_t errlen;
} jreader;

static void jspace(jreader *j)
{
    while (j->p < j->end && isspace((unsigned char)*j->p))
        j->p++;
}

static int jfail(jreader *j, const char *what)
{
    snprintf(j->err, j->errlen, "JSON: %s at byte %ld", what, (long)(j->p - j->start));
    return -1;
}

static int jexpect(jreader *j, char c)
{
    jspace(j);
    if (j->p >= j->end || *j->p != c) {
        char what[32];
        snprintf(what, sizeof what, "expected '%c'", c);
        return jfail(j, what);
    }
    j->p++;
    return 0;
}

static int jstring(jreader *j, char *out, size_t len)
{
    if (jexpect(j, '"') != 0)
        return -1;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            char e = *j->p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
            if (e == 'u') {
                unsigned v = 0;
                for (int i = 0; i < 4 && j->p < j->end; i++)
                    v = v * 16 + (unsigned)(isdigit((unsigned char)*j->p) ? *j->p - '0' : (tolower((unsigned char)*j->p) - 'a' + 10)), j->p++;
                c = v < 0x80 ? (char)v : '?';
            }
        }
        if (n + 1 < len)
            out[n++] = c;
    }
    out[n] = '\0';
    return jexpect(j, '"');
}

/* A scalar value as text; *null set for null. */
static int jscalar(jreader *j, char *out, size_t len, int *null)
{
    jspace(j);
    *null = 0;
    if (j->p < j->end && *j->p == '"')
        return jstring(j, out, len);
    const char *s = j->p;
    while (j->p < j->end && (isalnum((unsigned char)*j->p) || strchr("+-.", *j->p)))
        j->p++;
    if (j->p == s)
        return jfail(j, "expected a value");
    snprintf(out, len, "%.*s", (int)(j->p - s), s);
    if (strcmp(out, "null") == 0)
        *null = 1, out[0] = '\0';
    return 0;
}

static int import_json(importer *im, const char *text, const char *end, char *err, size_t errlen)
{
    jreader j = {text, text, end, err, errlen};
    int nc;
    const kgi_column *cols = kgi_db_columns(&nc);
    jspace(&j);
    if (j.p < j.end && *j.p == '{') {
        j.p++;
        char name[64];
        for (;;) {
            int null;
            char val[64];
            if (jstring(&j, name, sizeof name) != 0 || jexpect(&j, ':') != 0)
                return -1;
            if (strcmp(name, "results") == 0)
                break;
            if (jscalar(&j, val, sizeof val, &null) != 0)
                return -1;
            /* the format's version (export writes the schema's): one this kgen reads, or none */
            char *vend;
            long version = strcmp(name, "kgen_tuning_db") == 0 ? strtol(val, &vend, 10) : 1;
            if (strcmp(name, "kgen_tuning_db") == 0 && (null || *vend || version < 1 || version > KGI_DB_SCHEMA_VERSION)) {
                snprintf(err, errlen, "JSON: kgen_tuning_db is %s; this kgen reads versions 1 to %d", null ? "null" : val,
                         KGI_DB_SCHEMA_VERSION);
                return -1;
            }
            if (jexpect(&j, ',') != 0)
                return -1;
        }
    }
    if (jexpect(&j, '[') != 0)
        return -1;
    jspace(&j);
    for (int record = 1; j.p < j.end && *j.p != ']'; record++) {
        kgi_dbkey key;
        kgi_result res;
        unsigned char given[64];
        memset(&key, 0, sizeof key);
        memset(&res, 0, sizeof res);
        memset(given, 0, sizeof given);
        if (jexpect(&j, '{') != 0)
            return -1;
        jspace(&j);
        while (j.p < j.end && *j.p != '}') {
            char name[64], val[2048], ferr[256];
            int null;
            if (jstring(&j, name, sizeof name) != 0 || jexpect(&j, ':') != 0 || jscalar(&j, val, sizeof val, &null) != 0)
                return -1;
            const kgi_column *c = find_column(name);
            if (!c) {
                snprintf(err, errlen, "record %d: unknown column '%s'", record, name);
                return -1;
            }
            if (set_field(c, &key, &res, val, null, ferr, sizeof ferr) != 0) {
                snprintf(err, errlen, "record %d: %s", record, ferr);
                return -1;
            }
            given[c - cols] = 1;
            jspace(&j);
            if (j.p < j.end && *j.p == ',')
                j.p++, jspace(&j);
        }
        if (jexpect(&j, '}') != 0)
            return -1;
        char rerr[512];
        if (import_row(im, &key, &res, given, rerr, sizeof rerr) != 0) {
            snprintf(err, errlen, "record %d: %s", record, rerr);
            return -1;
        }
        jspace(&j);
        if (j.p < j.end && *j.p == ',')
            j.p++, jspace(&j);
    }
    return jexpect(&j, ']');
}

/* An error may quote the input (a column name, a value): its bytes outside
 * printable ASCII are shown as \xNN, so that a binary file's bytes never
 * reach the terminal raw. */
static void escape_message(char *msg, size_t len)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", msg);
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)copy; *c && o + 5 < len; c++) {
        if (*c >= 0x20 && *c < 0x7f)
            msg[o++] = (char)*c;
        else
            o += (size_t)snprintf(msg + o, len - o, "\\x%02X", *c);
    }
    if (len)
        msg[o < len ? o : len - 1] = '\0';
}

kg_status kgi_db_import(kgi_db *db, const char *text, size_t len, int *inserted, int *updated, int *kept,
                        char *err, size_t errlen)
{
    importer im = {db, NULL, 0, 0, 0};
    char sql[4096], values[1024];
    int nc;
    kgi_db_columns(&nc);
    size_t used = (size_t)snprintf(values, sizeof values, "VALUES(");
    for (int i = 0; i < nc; i++)
        used += (size_t)snprintf(values + used, sizeof values - used, "%s?%d", i ? ", " : "", i + 1);
    snprintf(values + used, sizeof values - used, ")");
    sqlite3 *h = kgi_db_handle(db);
    if (upsert_sql(sql, sizeof sql, values) != 0 || sqlite3_prepare_v2(h, sql, -1, &im.upsert, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
        return KG_ERR_DB;
    }
    const char *p = text, *end = text + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte-order mark, as spreadsheets write */
        p += 3;
    while (p < end && isspace((unsigned char)*p))
        p++;
    int rc = -1;
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
    else if ((rc = (p < end && (*p == '{' || *p == '[')) ? import_json(&im, p, end, err, errlen)
                                                          : import_csv(&im, p, end, err, errlen)) == 0)
        rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    if (rc != 0)
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(im.upsert);
    *inserted = im.inserted, *updated = im.updated, *kept = im.kept;
    if (rc != 0)
        escape_message(err, errlen);
    return rc == 0 ? KG_OK : KG_ERR_DB;
}

kg_status kgi_db_each_config(kgi_db *db,
                             int (*fn)(void *ud, const char *tmpl, const char *config, const char *layout, int ran),
                             void *ud, char *err, size_t errlen)
{
    sqlite3 *h = kgi_db_handle(db);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h,
                           "SELECT template, config, layout, max(outcome NOT LIKE 'pruned%') FROM results"
                           " GROUP BY template, config, layout ORDER BY min(rowid)",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
        return KG_ERR_DB;
    }
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = fn(ud, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                  (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3));
    if (!stop && rc != SQLITE_DONE)
        snprintf(err, errlen, "%s: %s", kgi_db_path(db), kgi_db_error(db));
    sqlite3_finalize(st);
    return stop ? KG_ERR_CONFIG : rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}

/* ------------------------------------------------------------ merge */

static long long count_rows(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

kg_status kgi_db_merge(kgi_db *db, const char *other, int *inserted, int *updated, int *kept, char *err,
                       size_t errlen)
{
    kgi_db *src;
    if (kgi_db_open(other, KGI_DB_READONLY, &src, err, errlen) != KG_OK)
        return KG_ERR_DB;
    kgi_db_close(src);
    err[0] = '\0';
    sqlite3 *h = kgi_db_handle(db);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "ATTACH DATABASE ?1 AS src", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", kgi_db_error(db));
        return KG_ERR_DB;
    }
    sqlite3_bind_text(st, 1, other, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot attach '%s': %s", other, kgi_db_error(db));
        return KG_ERR_DB;
    }
    /* final_ms does not travel (a version-1 file has none, and the trigger
     * clears it for every shape that receives an ok row anyway) */
    char sql[4096], source[1100], cols[1024];
    int ncol;
    const kgi_column *c = kgi_db_columns(&ncol);
    size_t used = 0;
    for (int i = 0; i < ncol; i++)
        used += (size_t)snprintf(cols + used, sizeof cols - used, "%s%s", i ? ", " : "",
                                 strcmp(c[i].name, "final_ms") == 0 ? "0.0" : c[i].name);
    snprintf(source, sizeof source, "SELECT %s FROM src.results WHERE true", cols);
    kg_status status = KG_ERR_DB;
    if (upsert_sql(sql, sizeof sql, source) != 0 || sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto detach;
    long long before = count_rows(h, "SELECT count(*) FROM main.results");
    long long total = count_rows(h, "SELECT count(*) FROM src.results");
    if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "merging '%s': %s", other, kgi_db_error(db));
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        goto detach;
    }
    long long changed = sqlite3_changes(h);
    long long after = count_rows(h, "SELECT count(*) FROM main.results");
    if (sqlite3_exec(h, "INSERT OR IGNORE INTO main.devices SELECT * FROM src.devices", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        goto detach;
    }
    *inserted = (int)(after - before);
    *updated = (int)(changed - (after - before));
    *kept = (int)(total - changed);
    status = KG_OK;
detach:
    if (status != KG_OK && !err[0])
        snprintf(err, errlen, "merging '%s': %s", other, kgi_db_error(db));
    sqlite3_exec(h, "DETACH DATABASE src", NULL, NULL, NULL);
    return status;
}

/* ------------------------------------------------------------ summaries */

kg_status kgi_db_list(kgi_db *db, void (*fn)(void *ud, const kgi_db_group *g), void *ud)
{
    sqlite3 *h = kgi_db_handle(db);
    sqlite3_stmt *st, *best;
    if (sqlite3_prepare_v2(h,
                           "SELECT device, cc, sm_count, layout, m, n, k, count(*), sum(outcome = 'ok'), max(created)"
                           " FROM results GROUP BY device, cc, sm_count, layout, m, n, k"
                           " ORDER BY device, cc, sm_count, layout, m, n, k",
                           -1, &st, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    if (sqlite3_prepare_v2(h,
                           "SELECT template, config, time_ms, tflops, final_ms FROM results WHERE device = ?1 AND cc = ?2"
                           " AND sm_count = ?3 AND layout = ?4 AND m = ?5 AND n = ?6 AND k = ?7 AND outcome = 'ok'"
                           " AND time_ms > 0 ORDER BY " KGI_DB_BEST_FIRST " LIMIT 1",
                           -1, &best, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return KG_ERR_DB;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        kgi_db_group g;
        memset(&g, 0, sizeof g);
        snprintf(g.device, sizeof g.device, "%s", (const char *)sqlite3_column_text(st, 0));
        g.cc = sqlite3_column_int(st, 1);
        g.sm_count = sqlite3_column_int(st, 2);
        snprintf(g.layout, sizeof g.layout, "%s", (const char *)sqlite3_column_text(st, 3));
        g.m = sqlite3_column_int(st, 4), g.n = sqlite3_column_int(st, 5), g.k = sqlite3_column_int(st, 6);
        g.rows = sqlite3_column_int(st, 7);
        g.ok = sqlite3_column_int(st, 8);
        snprintf(g.last, sizeof g.last, "%s", (const char *)sqlite3_column_text(st, 9));
        sqlite3_reset(best);
        for (int i = 0; i < 7; i++)
            sqlite3_bind_value(best, i + 1, sqlite3_column_value(st, i));
        if (sqlite3_step(best) == SQLITE_ROW) {
            snprintf(g.best_tmpl, sizeof g.best_tmpl, "%s", (const char *)sqlite3_column_text(best, 0));
            snprintf(g.best_config, sizeof g.best_config, "%s", (const char *)sqlite3_column_text(best, 1));
            g.best_ms = sqlite3_column_double(best, 2);
            g.best_tflops = sqlite3_column_double(best, 3);
            g.best_final_ms = sqlite3_column_double(best, 4);
        }
        fn(ud, &g);
    }
    sqlite3_finalize(best);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}

kg_status kgi_db_show(kgi_db *db, const kgi_db_filter *flt, int limit,
                      void (*fn)(void *ud, const kgi_dbkey *key, const kgi_result *res), void *ud)
{
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT %s FROM results%s ORDER BY outcome != 'ok', outcome, " KGI_DB_BEST_FIRST
             ", config LIMIT ?8",
             kgi_db_column_list(), where_filter);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(kgi_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return KG_ERR_DB;
    bind_filter(st, flt);
    sqlite3_bind_int(st, 8, limit > 0 ? limit : -1);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        kgi_dbkey key;
        kgi_result res;
        kgi_db_read_row(st, 0, &key, &res);
        fn(ud, &key, &res);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KG_OK : KG_ERR_DB;
}
