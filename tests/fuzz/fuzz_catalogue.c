/*
 * fuzz_catalogue.c -- the kernel catalogue's parser (runtime/catalogue.c)
 * on any bytes. A parsed catalogue must hold what the model relies on (IDs
 * in order, NEEDS 1, 2 or 4, positive tiles, times positive or 0, every row
 * with a time), and ranking its kernels for a few shapes must give
 * positive, finite predictions in order. A refusal must say where
 * ("NAME:LINE: ...").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gen/config.h"
#include "runtime/catalogue.h"

static void rank_some(const kgi_catalogue *c, kgi_pick *p)
{
    static const int shapes[][3] = {{1, 1, 1}, {4096, 4096, 4096}, {1000, 77, 1}, {3, 100000, 5}};
    for (int s = 0; s < 4; s++)
        for (int l = 0; l < 4; l++) {
            int n = kgi_catalogue_rank(c, l, shapes[s][0], shapes[s][1], shapes[s][2], 4, 132, -1, p, c->nkernels);
            for (int i = 0; i < n; i++)
                if (!(p[i].predicted_us > 0) || !isfinite(p[i].predicted_us) ||
                    (i && p[i].predicted_us < p[i - 1].predicted_us) || p[i].nnear < 1)
                    abort();
            n = kgi_catalogue_rank_median(c, l, shapes[s][0], shapes[s][1], shapes[s][2], 1, 7, p, c->nkernels);
            for (int i = 0; i < n; i++)
                if (!(p[i].predicted_us > 0) || !isfinite(p[i].predicted_us))
                    abort();
        }
}

/* every layout's class is 4, 2 or 1, and a class of 1 binds no operand */
static int needs_ok(const kgi_cat_kernel *k)
{
    for (int l = 0; l < 4; l++)
        if ((k->needs[l] != 1 && k->needs[l] != 2 && k->needs[l] != 4) || k->needs_operand[l] < 0 ||
            k->needs_operand[l] > 2 || (k->needs[l] == 1 && k->needs_operand[l]))
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kgi_catalogue *c;
    char err[512] = "";
    if (kgi_catalogue_parse((const char *)data, size, "fuzz", &c, err, sizeof err) != 0) {
        if (c != NULL || strncmp(err, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    if (c->nkernels < 1 || c->nrows < 1 || c->arch < 10 || c->sms < 1)
        abort();
    for (int j = 0; j < c->nkernels; j++) {
        const kgi_cat_kernel *k = &c->kernels[j];
        if (k->id != j + 1 || !needs_ok(k) || k->tile_m < 1 || k->tile_n < 1 ||
            k->kslices < 1 || k->bps < 1)
            abort();
        kgi_config cfg; /* the configuration parses again, without layout */
        if (kgi_config_parse(&cfg, k->config, NULL, 0) != 0 || kgi_config_find(&cfg, "layout") >= 0)
            abort();
    }
    for (int r = 0; r < c->nrows; r++) {
        int any = 0;
        for (int j = 0; j < c->nkernels; j++) {
            double t = kgi_catalogue_time(c, r, j);
            if (t < 0 || !isfinite(t))
                abort();
            any |= t > 0;
        }
        if (!any || c->rows[r].layout < 0 || c->rows[r].layout > 3 || c->rows[r].m < 1)
            abort();
    }
    kgi_pick *p = calloc((size_t)c->nkernels, sizeof *p);
    if (p)
        rank_some(c, p);
    free(p);
    kgi_catalogue_free(c);
    return 0;
}
