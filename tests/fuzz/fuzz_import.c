/*
 * fuzz_import.c -- `kgen db import`: CSV and JSON exports (kgi_db_import
 * tells them apart by the first character) into an in-memory database,
 * emptied after each input.
 */
#include <stdlib.h>

#include <sqlite3.h>

#include "autotune/db.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static kgi_db *db;
    char err[2048];
    if (!db && kgi_db_open(":memory:", KGI_DB_CREATE, &db, err, sizeof err) != KG_OK)
        abort();
    int ins, upd, kept;
    kgi_db_import(db, (const char *)data, size, &ins, &upd, &kept, err, sizeof err);
    sqlite3_exec(kgi_db_handle(db), "DELETE FROM results", NULL, NULL, NULL);
    return 0;
}
