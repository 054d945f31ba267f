/*
 * explain_db.c -- `kgen explain --from-db`: the configurations a tuning sweep
 * timed, as points for the roofline. The query lives in kgc_explain_points
 * alone: it reads the tuner's `results` table (autotune/db.c) read-only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "autotune/db.h"
#include "explain.h"

static int cmp_points(const void *a, const void *b)
{
    const kgc_point *x = a, *y = b;
    return (x->tflops < y->tflops) - (x->tflops > y->tflops);
}

/*
 * Every correct, fully timed result of template x->tmpl at x's shape and
 * layout, on `device` (a device name) or, offline, on any device of the
 * target's compute capability. A point's intensity is its tile traffic at
 * that shape, as explain computes it for the configuration itself; rows
 * whose configuration the template no longer accepts are counted, not drawn.
 */
int kgc_explain_points(const char *path, const char *device, kgc_explain *x, kgi_host *h, char *err, size_t errlen)
{
    kgi_db *db = NULL;
    char def[4096];
    if (!path) {
        if (kgi_db_default_path(def, sizeof def) < 0) {
            snprintf(err, errlen, "no database path (give --db, or set KGEN_DB or HOME)");
            return -1;
        }
        path = def;
    }
    if (kgi_db_open(path, KGI_DB_READONLY, &db, err, errlen) != KG_OK)
        return -1;
    const char *sql =
        "SELECT config, tflops, device FROM results WHERE template = ?1 AND m = ?2 AND n = ?3 AND k = ?4 "
        "AND layout = ?5 AND outcome = ?6 AND tflops > 0 AND (?7 IS NULL OR device = ?7) AND (?7 IS NOT NULL OR cc = ?8) "
        "ORDER BY tflops DESC";
    sqlite3 *q = kgi_db_handle(db);
    sqlite3_stmt *st = NULL;
    int rc = -1, n = 0, cap = 0, skipped = 0;
    char first_device[256] = "";
    int several = 0;
    if (sqlite3_prepare_v2(q, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "'%s': %s", path, sqlite3_errmsg(q));
        goto out;
    }
    sqlite3_bind_text(st, 1, x->tmpl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, x->shape.m);
    sqlite3_bind_int64(st, 3, x->shape.n);
    sqlite3_bind_int64(st, 4, x->shape.k);
    sqlite3_bind_text(st, 5, x->res.layout, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, kgi_outcome_name(KGI_OUT_OK), -1, SQLITE_STATIC);
    if (device)
        sqlite3_bind_text(st, 7, device, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 7);
    sqlite3_bind_int(st, 8, x->mach.lim.sm);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *config = (const char *)sqlite3_column_text(st, 0);
        const char *dev = (const char *)sqlite3_column_text(st, 2);
        kgc_resources r;
        char why[1024];
        if (!config || kgc_read_resources(h, x->tmpl, config, &r, why, sizeof why) != KG_OK) {
            skipped++;
            continue;
        }
        if (dev && !first_device[0])
            snprintf(first_device, sizeof first_device, "%s", dev);
        else if (dev && strcmp(dev, first_device) != 0)
            several = 1;
        if (n == cap) {
            int ncap = cap ? cap * 2 : 64;
            kgc_point *p = realloc(x->points, sizeof *p * (size_t)ncap);
            if (!p) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
            x->points = p;
            cap = ncap;
        }
        kgc_point *p = &x->points[n++];
        kgc_traffic t;
        kgc_traffic_calc(&x->shape, r.tile_m, r.tile_n, r.tile_k, &t);
        snprintf(p->config, sizeof p->config, "%s", config);
        p->intensity = t.ai_tiles;
        p->tflops = sqlite3_column_double(st, 1);
        x->npoints = n;
    }
    if (step != SQLITE_DONE) {
        snprintf(err, errlen, "'%s': %s", path, sqlite3_errmsg(q));
        goto out;
    }
    qsort(x->points, (size_t)n, sizeof *x->points, cmp_points);
    int used = snprintf(x->db_note, sizeof x->db_note, "%d timed configuration%s of %s at %lldx%lldx%lld, layout %s, on %s%s in %s",
                        n, n == 1 ? "" : "s", x->tmpl, x->shape.m, x->shape.n, x->shape.k, x->res.layout,
                        device ? device : "devices of ", device ? "" : x->mach.lim.name, path);
    if (several && used > 0 && (size_t)used < sizeof x->db_note)
        used += snprintf(x->db_note + used, sizeof x->db_note - (size_t)used, " (several devices: their roofs differ)");
    if (skipped && used > 0 && (size_t)used < sizeof x->db_note)
        snprintf(x->db_note + used, sizeof x->db_note - (size_t)used,
                 "; %d row%s left out (configuration no longer valid for the template)", skipped, skipped == 1 ? "" : "s");
    rc = 0;
out:
    sqlite3_finalize(st);
    kgi_db_close(db);
    return rc;
}
