/*
 * gpu_lookup.c -- after a real sweep (gpu_tune.sh), kg_matmul uses the tuned
 * entry: the fastest `ok` row of the database for this device and shape
 * (the final stage's fastest finalist where it ran), read here straight
 * from SQLite; its result is right; a nearby shape takes the kernel
 * catalogue's pick where the architecture has a catalogue, else the
 * nearest tuned shape; a far shape takes neither tuned entry.
 *
 *   gpu_lookup --probe            exit 0 with a GPU, 77 without
 *   gpu_lookup DB M N K           the checks (KGEN_DB is set to DB)
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/catalogue.h"
#include "runtime/internal.h"
#include "testutil.h"

/* The best ok configuration stored for (device, nn, M, N, K): the fastest
 * finalist by final_ms, else the fastest by the search's time_ms. */
static int best_row(const char *path, const kg_device_info *info, int m, int n, int k, char *cfg, size_t len)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return 0;
    /* every ok row, compared here rather than by the lookup's ORDER BY */
    if (sqlite3_prepare_v2(db,
                           "SELECT config, time_ms, final_ms FROM results WHERE device = ?1 AND sm_count = ?2"
                           " AND layout = 'nn' AND m = ?3 AND n = ?4 AND k = ?5 AND outcome = 'ok'",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, info->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, info->sm_count);
        sqlite3_bind_int(st, 3, m);
        sqlite3_bind_int(st, 4, n);
        sqlite3_bind_int(st, 5, k);
        double best_final = INFINITY, best_time = INFINITY;
        char by_final[512] = "", by_time[512] = "";
        while (sqlite3_step(st) == SQLITE_ROW) {
            double t = sqlite3_column_double(st, 1), f = sqlite3_column_double(st, 2);
            const char *c = (const char *)sqlite3_column_text(st, 0);
            if (f > 0 && f < best_final)
                best_final = f, snprintf(by_final, sizeof by_final, "%s", c);
            if (t > 0 && t < best_time)
                best_time = t, snprintf(by_time, sizeof by_time, "%s", c);
        }
        snprintf(cfg, len, "%s", by_final[0] ? by_final : by_time);
        found = cfg[0] != '\0';
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return found;
}

/* kg_matmul on fresh random data with C poisoned, against float64. */
static void check_matmul(kg_context *ctx, int m, int n, int k)
{
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4);
    double *ref = malloc(nc * sizeof *ref);
    void *da, *db, *dc;
    CHECK(a && b && c && ref);
    kgi_fill_random(a, na, 11);
    kgi_fill_random(b, nb, 12);
    CHECK(kgi_dev_alloc(ctx, na * 4, &da) == KG_OK && kgi_dev_alloc(ctx, nb * 4, &db) == KG_OK &&
          kgi_dev_alloc(ctx, nc * 4, &dc) == KG_OK);
    CHECK(kgi_dev_upload(ctx, da, a, na * 4) == KG_OK && kgi_dev_upload(ctx, db, b, nb * 4) == KG_OK);
    CHECK(kgi_dev_fill32(ctx, dc, 0x7fc00000u, nc) == KG_OK);
    kg_status st = kg_matmul(ctx, "nn", m, n, k, 1.0f, da, k, db, n, 0.0f, dc, n, NULL);
    CHECK_MSG(st == KG_OK, "kg_matmul: %s", kg_last_error(ctx));
    CHECK(kgi_dev_sync(ctx) == KG_OK && kgi_dev_download(ctx, c, dc, nc * 4) == KG_OK);
    kgi_ref_gemm("nn", m, n, k, 1.0, a, k, b, n, 0.0, NULL, n, ref);
    double err = kgi_gemm_error("nn", m, n, k, 1.0, a, k, b, n, 0.0, NULL, c, n, ref);
    CHECK_MSG(err <= kgi_gemm_tolerance(k), "kg_matmul %dx%dx%d error %g over %g", m, n, k, err,
              kgi_gemm_tolerance(k));
    kgi_dev_free(ctx, da);
    kgi_dev_free(ctx, db);
    kgi_dev_free(ctx, dc);
    free(a), free(b), free(c), free(ref);
}

int main(int argc, char **argv)
{
    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    if (st == KG_ERR_NO_DRIVER || st == KG_ERR_NO_DEVICE) {
        kg_context_close(ctx);
        TEST_SKIP("no GPU: %s", kg_strerror(st));
    }
    if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
        kg_context_close(ctx);
        return st == KG_OK ? 0 : 1;
    }
    CHECK_MSG(st == KG_OK, "kg_context_open: %s", kg_last_error(ctx));
    if (st != KG_OK || argc != 5) {
        fprintf(stderr, "usage: gpu_lookup DB M N K\n");
        return 1;
    }
    kg_context_close(ctx);
    setenv("KGEN_DB", argv[1], 1);
    setenv("KGEN_VERBOSE", "1", 1);
    int m = atoi(argv[2]), n = atoi(argv[3]), k = atoi(argv[4]);
    CHECK(kg_context_open(&ctx, 0) == KG_OK);
    kg_device_info info;
    CHECK(kg_device_query(ctx, 0, &info) == KG_OK);

    char best[512] = "", cfg[512], why[2048];
    CHECK_MSG(best_row(argv[1], &info, m, n, k, best, sizeof best), "no ok row for %dx%dx%d in %s", m, n, k, argv[1]);
    /* 1. the exact shape: the database's fastest row */
    CHECK(kg_matmul_explain(ctx, "nn", m, n, k, cfg, sizeof cfg, why, sizeof why) == KG_OK);
    printf("%dx%dx%d: %s\n  %s\n", m, n, k, cfg, why);
    CHECK_MSG(strstr(why, "exact shape") != NULL, "not the exact entry: %s", why);
    CHECK_MSG(strcmp(cfg, best) == 0, "uses '%s', the database's best is '%s'", cfg, best);
    check_matmul(ctx, m, n, k);
    /* after the call, the recorded choice says the same */
    CHECK(kg_matmul_explain(ctx, "nn", m, n, k, cfg, sizeof cfg, why, sizeof why) == KG_OK);
    CHECK_MSG(strstr(why, "exact shape") && strcmp(cfg, best) == 0, "recorded choice: %s (%s)", cfg, why);

    /* 2. a shape near it: the catalogue of the architecture where there is
     * one (its measurements near the shape win over another shape's
     * winner), else the nearest tuned shape */
    int m2 = m + m / 4, n2 = n - n / 8;
    const kgi_catalogue *cat = NULL;
    CHECK(kgi_catalogue_for(ctx, kg_arch(ctx), &cat) == KG_OK);
    CHECK(kg_matmul_explain(ctx, "nn", m2, n2, k, cfg, sizeof cfg, why, sizeof why) == KG_OK);
    printf("%dx%dx%d: %s\n  %s\n", m2, n2, k, cfg, why);
    if (cat) {
        /* the reason is "[template T] catalogue sm_NN (...": the source right after the template */
        const char *src = strncmp(why, "[template ", 10) == 0 ? strstr(why, "] ") : NULL;
        CHECK_MSG(src && strncmp(src + 2, "catalogue sm_", 13) == 0 && strstr(why, "nearest shape") == NULL,
                  "not the catalogue: %s", why);
    }
    else
        CHECK_MSG(strstr(why, "nearest shape") != NULL, "not the nearest entry: %s", why);
    check_matmul(ctx, m2, n2, k);

    /* 3. far from every tuned shape: neither tuned entry */
    CHECK(kg_matmul_explain(ctx, "nn", 8, 8, 8, cfg, sizeof cfg, why, sizeof why) == KG_OK);
    printf("8x8x8: %s\n  %s\n", cfg, why);
    CHECK_MSG(strstr(why, "exact shape") == NULL && strstr(why, "nearest shape") == NULL, "8x8x8 used: %s", why);
    check_matmul(ctx, 8, 8, 8);
    kg_context_close(ctx);
    TEST_DONE();
}
