/*
 * test_resume.c -- a second run on a shape starts no GPU worker when
 * nothing is left to time, with a stand-in worker (fake_worker.c), so no
 * GPU is needed (NVRTC compiles the two candidates):
 *   run 1: a probe, then workers; both candidates timed; the final stage runs;
 *   run 2: the same: a probe only; both from the database; the walk from the
 *          walk cache; the stored final set is current;
 *   run 3: one more candidate: workers again, the final stage runs again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/tune.h"
#include "testutil.h"

static char logfile[1024];

/* The starts the fake worker logged since the last call ("probe worker"). */
static void starts(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(logfile, "r");
    char line[64];
    size_t used = 0;
    while (f && fgets(line, sizeof line, f) && used < len)
        used += (size_t)snprintf(out + used, len - used, "%s%.*s", used ? " " : "", (int)strcspn(line, "\n"), line);
    if (f)
        fclose(f);
    remove(logfile);
}

static void run(const char *exe, const char *db, const char *space, kgi_tune_report *rep)
{
    static const char *const tmpls[] = {"matmul"};
    static const kgi_tune_shape shape = {"s", 64, 64, 64};
    kgi_tune_opts o = {.tmpls = tmpls, .ntmpl = 1, .layout = "nn", .space = space, .shapes = &shape, .nshapes = 1,
                       .alpha = 1.0f, .strategy = "exhaustive", .seed = 1, .jobs = 1, .shard_n = 1, .db_path = db,
                       .max_seconds = 0.25, .timeout_s = 60, .slow_factor = 3, .flush_l2 = 1, .final_n = 8,
                       .final_rounds = 2, .final_sample_ms = 1.0, .rules = {.min_occupancy = 1.0 / 64}, .exe = exe,
                       .command = "test_resume"};
    char err[1024];
    kg_status st = kgi_tune_run(&o, rep, err, sizeof err);
    CHECK_MSG(st == KG_OK, "%s", err);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char tmp[] = "/tmp/kgen_resume_XXXXXX", db[1024], cache[1024], got[256];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(db, sizeof db, "%s/t.db", tmp);
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    snprintf(logfile, sizeof logfile, "%s/starts", tmp);
    setenv("KGEN_CACHE_DIR", cache, 1);
    setenv("KGEN_FAKE_LOG", logfile, 1);
    const char *two = "bm=32,64 bn=32 bk=8 tm=4 tn=4 pad=0 vec=4", *three = "bm=16,32,64 bn=32 bk=8 tm=4 tn=4 pad=0 vec=4";
    kgi_tune_report rep;

    run(argv[1], db, two, &rep);
    starts(got, sizeof got);
    CHECK_MSG(strcmp(got, "probe worker") == 0, "run 1 started: %s", got);
    CHECK(rep.nshapes == 1 && rep.space.n == 2 && !rep.space_cached);
    CHECK_MSG(rep.shapes[0].count[KGI_OUT_OK] == 2 && rep.shapes[0].cached_n == 0, "run 1: %d ok, %d cached",
              rep.shapes[0].count[KGI_OUT_OK], rep.shapes[0].cached_n);
    CHECK(rep.shapes[0].nfinal == 2 && !rep.shapes[0].final_current && rep.shapes[0].final[0].final_ms > 0);
    double best = rep.shapes[0].final[0].final_ms;
    kgi_tune_report_free(&rep);

    run(argv[1], db, two, &rep);
    starts(got, sizeof got);
    CHECK_MSG(strcmp(got, "probe") == 0, "run 2 started: %s", got);
    CHECK(rep.nshapes == 1 && rep.space.n == 2 && rep.space_cached && rep.nworkers == 0);
    CHECK_MSG(rep.shapes[0].cached_n == 2, "run 2: %d cached", rep.shapes[0].cached_n);
    CHECK_MSG(rep.shapes[0].final_current && rep.shapes[0].nfinal == 2 && rep.shapes[0].final[0].final_ms == best,
              "run 2: final set current %d, %d finalists", rep.shapes[0].final_current, rep.shapes[0].nfinal);
    kgi_tune_report_free(&rep);

    run(argv[1], db, three, &rep);
    starts(got, sizeof got);
    CHECK_MSG(strcmp(got, "probe worker") == 0, "run 3 started: %s", got);
    CHECK(rep.space.n == 3 && !rep.space_cached);
    CHECK_MSG(rep.shapes[0].cached_n == 2 && rep.shapes[0].count[KGI_OUT_OK] == 3, "run 3: %d cached, %d ok",
              rep.shapes[0].cached_n, rep.shapes[0].count[KGI_OUT_OK]);
    CHECK(!rep.shapes[0].final_current && rep.shapes[0].nfinal == 3);
    kgi_tune_report_free(&rep);

    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
