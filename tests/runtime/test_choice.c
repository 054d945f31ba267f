/*
 * test_choice.c -- kg_matmul's choice and its reasons, without a GPU
 * (kg_matmul_explain on a CPU-only context): the catalogue of the
 * architecture (KGEN_CATALOGUE: the synthetic fixture given as argv[1]),
 * a layout the catalogue has no times for, architectures without a
 * catalogue (the model-only choice, and the templates' own defaults as the
 * last resort), and a broken KGEN_CATALOGUE. The chosen configuration
 * always renders for the context's architecture.
 *   rt_test_choice CATALOGUE.txt     (CTest sets KGEN_DB to a missing file)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/catalogue.h"
#include "testutil.h"

static kg_context *ctx;

/* Explains (layout, m, n, k) and checks that `why` holds each of `has` and
 * the configuration renders; returns the reason in why. */
static void expect(const char *layout, int m, int n, int k, const char *const *has, char *why, size_t len)
{
    char config[512];
    kg_status st = kg_matmul_explain(ctx, layout, m, n, k, config, sizeof config, why, len);
    CHECK_MSG(st == KG_OK, "%s %dx%dx%d: %s", layout, m, n, k, kg_last_error(ctx));
    if (st != KG_OK)
        return;
    printf("sm_%d %s %dx%dx%d: %s\n  %s\n", kg_arch(ctx), layout, m, n, k, config, why);
    for (int i = 0; has[i]; i++)
        CHECK_MSG(strstr(why, has[i]) != NULL, "%s %dx%dx%d: '%s' not in '%s'", layout, m, n, k, has[i], why);
    char lay[16];
    snprintf(lay, sizeof lay, "layout=%s", layout);
    CHECK_MSG(strstr(config, lay) != NULL, "%s not in %s", lay, config);
}

/* Writes text to a temporary file and returns its path (static buffer). */
static const char *temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/kgen-test-choice-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
    return path;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: rt_test_choice CATALOGUE.txt\n");
        return 2;
    }
    setenv("KGEN_CATALOGUE", argv[1], 1);
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    char why[2048];
    const kgi_catalogue *cat = NULL;
    CHECK(kgi_catalogue_for(ctx, 90, &cat) == KG_OK && cat && strcmp(cat->name, argv[1]) == 0);

    /* the catalogue: kernel, its tile, prediction, the nearest measured shapes, the runner-up */
    const char *in_cat[] = {"catalogue sm_90 (", argv[1], "synthetic sm_90 (no GPU), 2026-11-23, 132 SMs)",
                            "predicted", "waves on 132 SMs) from ", "runner-up kernel ", "tuning database", NULL};
    expect("nn", 2000, 3000, 700, in_cat, why, sizeof why);
    /* the template first, so that a reason cut to a small buffer still names it, and a cut reason ends in "..." */
    CHECK_MSG(strncmp(why, "[template matmul_warp] catalogue sm_90 (", 40) == 0, "%s", why);
    {
        char config[512], small[48];
        CHECK(kg_matmul_explain(ctx, "nn", 2000, 3000, 700, config, sizeof config, small, sizeof small) == KG_OK);
        CHECK_MSG(strncmp(small, "[template matmul_warp] ", 23) == 0 && strlen(small) == sizeof small - 1 &&
                      strcmp(small + sizeof small - 4, "...") == 0,
                  "'%s'", small);
        /* a configuration is whole or an error, never cut */
        char tiny[8];
        CHECK(kg_matmul_explain(ctx, "nn", 2000, 3000, 700, tiny, sizeof tiny, small, sizeof small) ==
              KG_ERR_INVALID_ARG);
        CHECK_MSG(strstr(kg_last_error(ctx), "config_len is 8") != NULL, "%s", kg_last_error(ctx));
    }
    /* a measured shape: its own time */
    const char *exact[] = {"catalogue sm_90 (", ", measured at this shape", NULL};
    expect("tn", 1024, 4096, 512, exact, why, sizeof why);
    /* which is the fastest measured there (same SM count: the prediction is the measurement) */
    int fastest = -1;
    for (int r = 0; cat && r < cat->nrows; r++) {
        const kgi_cat_row *row = &cat->rows[r];
        if (row->layout != 2 || row->m != 1024 || row->n != 4096 || row->k != 512)
            continue;
        for (int j = 0; j < cat->nkernels; j++) {
            double t = kgi_catalogue_time(cat, r, j);
            if (t > 0 && (fastest < 0 || t < kgi_catalogue_time(cat, r, fastest)))
                fastest = j;
        }
    }
    char want[32];
    snprintf(want, sizeof want, ": kernel %d ", fastest + 1);
    CHECK_MSG(fastest >= 0 && strstr(why, want) != NULL, "'%s' not in '%s'", want, why);
    /* a layout the catalogue has no times for: its kernels by their median efficiency */
    const char *nt[] = {"no usable kernel in the catalogue for sm_90: model-only choice from catalogue sm_90",
                        "from its median efficiency", "no kernel has times for this layout", NULL};
    expect("nt", 1000, 1000, 1000, nt, why, sizeof why);

    /* a vector operand that lies as one row (minimal leading dimensions:
     * lda = M = 1 for A stored "t", ldb = N = 1 for B stored "n") is chosen
     * in the layout that reads it as a row, and says so; one that does not
     * fold keeps its layout */
    {
        static const struct {
            const char *layout;
            int m, n;
            const char *as, *reason;
        } folds[] = {
            {"tn", 1, 3000, "nn", "tn read as nn (M = 1, lda = 1: A is one row of K floats); catalogue sm_90 ("},
            {"tt", 1, 3000, "nt", "tt read as nt (M = 1, lda = 1: A is one row of K floats); "},
            {"nn", 3000, 1, "nt", "nn read as nt (N = 1, ldb = 1: B is one row of K floats); "},
            {"tn", 3000, 1, "tt", "tn read as tt (N = 1, ldb = 1: B is one row of K floats); "},
            {"tn", 1, 1, "nt",
             "tn read as nt (M = 1, lda = 1: A is one row of K floats; N = 1, ldb = 1: B is one row of K floats); "},
            {"nt", 1, 3000, "nt", NULL}, {"nn", 1, 3000, "nn", NULL}, {"tn", 2, 3000, "tn", NULL},
            {"tt", 3000, 1, "tt", NULL}, {"nn", 3000, 2, "nn", NULL},
        };
        for (size_t i = 0; i < sizeof folds / sizeof folds[0]; i++) {
            char config[512], same[512], w2[2048], lay[16];
            const char *l = folds[i].layout;
            int m = folds[i].m, n = folds[i].n;
            CHECK_MSG(kg_matmul_explain(ctx, l, m, n, 700, config, sizeof config, why, sizeof why) == KG_OK, "%s",
                      kg_last_error(ctx));
            printf("sm_90 %s %dx%dx700: %s\n  %s\n", l, m, n, config, why);
            snprintf(lay, sizeof lay, "layout=%s", folds[i].as);
            CHECK_MSG(strstr(config, lay) != NULL, "%s %dx%d: %s not in %s", l, m, n, lay, config);
            if (folds[i].reason) {
                CHECK_MSG(strncmp(why + (strncmp(why, "[template ", 10) == 0 ? strcspn(why, "]") + 2 : 0),
                                  folds[i].reason, strlen(folds[i].reason)) == 0,
                          "%s %dx%d: '%s' does not start with '%s'", l, m, n, why, folds[i].reason);
                /* the same choice as the call in the folded layout itself */
                CHECK(kg_matmul_explain(ctx, folds[i].as, m, n, 700, same, sizeof same, w2, sizeof w2) == KG_OK);
                CHECK_MSG(strcmp(config, same) == 0, "%s %dx%d: %s, but %s: %s", l, m, n, config, folds[i].as, same);
            } else {
                CHECK_MSG(strstr(why, " read as ") == NULL, "%s %dx%d: %s", l, m, n, why);
            }
        }
    }

    /* another architecture: the nearest catalogue's kernels that render there */
    const kgi_catalogue *near = NULL;
    CHECK(kg_set_arch(ctx, 80) == KG_OK);
    if (kgi_catalogue_for(ctx, 80, &near) == KG_OK && !near) {
        const char *sm80[] = {"no catalogue for sm_80: model-only choice from catalogue sm_", NULL};
        expect("nn", 3000, 3000, 3000, sm80, why, sizeof why);
    }
    CHECK(kg_set_arch(ctx, 70) == KG_OK);
    if (kgi_catalogue_for(ctx, 70, &near) == KG_OK && !near) {
        const char *sm70[] = {"no catalogue for sm_70: model-only choice", NULL};
        expect("tt", 5, 7, 9, sm70, why, sizeof why);
    }
    kg_context_close(ctx);

    /* a catalogue none of whose kernels renders on sm_70 (cp.async needs
     * sm_80): the templates' own defaults, the ones that render there */
    const char *warp_only = temp_file("kgen-catalogue 1\narch 90\nsms 132\ndevice d\ndriver 1\ndate 2026-11-23\n"
                                      "command c\nkernel 1 matmul_warp 4 64 128 1 0 2 bm=64 bk=16 stages=3\n"
                                      "time nn 64 64 64 10\n");
    setenv("KGEN_CATALOGUE", warp_only, 1);
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK && kg_set_arch(ctx, 70) == KG_OK);
    if (kgi_catalogue_nearest(ctx, 70, &near) == KG_OK && near && strcmp(near->name, warp_only) == 0) {
        const char *defaults[] = {"no catalogue for sm_70: model-only choice: template ", "'s defaults",
                                  "kernel 1 matmul_warp 64x128 passed over; cannot render", NULL};
        expect("nn", 100, 100, 100, defaults, why, sizeof why);
    }
    kg_context_close(ctx);
    unlink(warp_only);

    /* a broken KGEN_CATALOGUE is an error naming the file and line */
    const char *broken = temp_file("kgen-catalogue 1\narch 90\nsms many\n");
    setenv("KGEN_CATALOGUE", broken, 1);
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    char config[512];
    CHECK(kg_matmul_explain(ctx, "nn", 64, 64, 64, config, sizeof config, why, sizeof why) == KG_ERR_CONFIG);
    CHECK_MSG(strstr(kg_last_error(ctx), ":3: sms 'many' is not a whole number") != NULL, "%s", kg_last_error(ctx));
    CHECK(strstr(kg_last_error(ctx), broken) != NULL);
    kg_context_close(ctx);
    unlink(broken);
    setenv("KGEN_CATALOGUE", "/nonexistent/catalogue.txt", 1);
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    CHECK(kg_matmul_explain(ctx, "nn", 64, 64, 64, config, sizeof config, why, sizeof why) == KG_ERR_IO);
    CHECK_MSG(strstr(kg_last_error(ctx), "cannot open KGEN_CATALOGUE '/nonexistent/catalogue.txt'"), "%s",
              kg_last_error(ctx));
    kg_context_close(ctx);
    TEST_DONE();
}
