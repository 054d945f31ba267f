/*
 * test_catalogue.c -- the catalogue format's parser (runtime/catalogue.c):
 * a good file, each kind of bad line (the error names the line and what
 * was wrong), and every catalogue embedded in libkgen: it parses, and each
 * of its kernels renders for its architecture in every layout it has times
 * for (so a broken catalogue/sm_*.txt fails the build's tests).
 *   rt_test_catalogue [FILE...]    FILE: more catalogues to check the same way
 * No GPU needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/catalogue.h"
#include "testutil.h"

#define HEADER                                                                                                 \
    "# a comment\n"                                                                                            \
    "kgen-catalogue 1\n"                                                                                       \
    "arch 90\n"                                                                                                \
    "sms 132\n"                                                                                                \
    "device NVIDIA H200\n"                                                                                     \
    "driver 580.159.04\n"                                                                                      \
    "date 2026-11-23\n"                                                                                        \
    "command scripts/build-catalogue.sh\n"
#define KERNELS                                                                                                \
    "kernel 1 matmul_warp 4 128 256 1 0 1 bn=256 bk=16 wm=64 raster=8 stages=1\n"                              \
    "kernel 2 matmul 1 32 32 1 0 4 bm=32 bn=32 bk=32 tm=2 tn=2 vec=1\n"

/* text parsed, or NULL after a failed check naming the error */
static kgi_catalogue *parse_ok(const char *text, const char *name)
{
    kgi_catalogue *c = NULL;
    char err[512] = "";
    CHECK_MSG(kgi_catalogue_parse(text, strlen(text), name, &c, err, sizeof err) == 0, "%s: %s", name, err);
    return c;
}

static void good(void)
{
    const char *text = HEADER "\n" KERNELS "#\n"
                              "time nn 4096 4096 4096 812.5 1e4\n"
                              "time\ttn  1000 1000 64\t-  \t12\n"
                              "   \n";
    kgi_catalogue *c = parse_ok(text, "good");
    if (!c)
        return;
    CHECK(c->arch == 90 && c->sms == 132 && strcmp(c->device, "NVIDIA H200") == 0);
    CHECK(strcmp(c->driver, "580.159.04") == 0 && strcmp(c->date, "2026-11-23") == 0);
    CHECK(strcmp(c->command, "scripts/build-catalogue.sh") == 0);
    CHECK(c->nkernels == 2 && c->nrows == 2);
    CHECK(c->kernels[0].id == 1 && strcmp(c->kernels[0].tmpl, "matmul_warp") == 0 && c->kernels[0].needs[0] == 4 &&
          c->kernels[0].needs[3] == 4);
    CHECK(c->kernels[0].tile_m == 128 && c->kernels[0].tile_n == 256 && c->kernels[0].bps == 1);
    CHECK(strcmp(c->kernels[0].config, "bn=256 bk=16 wm=64 raster=8 stages=1") == 0);
    CHECK(c->kernels[1].line == 11 && c->rows[1].line == 14);
    CHECK(c->rows[0].layout == 0 && c->rows[0].m == 4096 && c->rows[1].layout == 2 && c->rows[1].k == 64);
    CHECK(kgi_catalogue_time(c, 0, 0) == 812.5 && kgi_catalogue_time(c, 0, 1) == 1e4);
    CHECK(kgi_catalogue_time(c, 1, 0) == 0 && kgi_catalogue_time(c, 1, 1) == 12);
    kgi_catalogue_free(c);
}

typedef struct bad {
    const char *text;
    const char *want; /* in the error, after "bad:" */
} bad;

static const bad bads[] = {
    {"", "bad:1: empty"},
    {"# only a comment\n", "bad:2: empty"},
    {"arch 90\n", "bad:1: expected 'kgen-catalogue 3' first"},
    {"kgen-catalogue 4\n", "bad:1: format version 4; this kgen reads versions 1 to 3"},
    {"kgen-catalogue 0\n", "bad:1: format version 0; this kgen reads versions 1 to 3"},
    {"kgen-catalogue one\n", "bad:1: version 'one' is not a whole number"},
    {"kgen-catalogue\n", "bad:1: 'kgen-catalogue' takes one version number"},
    {"kgen-catalogue 1\ncolour red\n", "bad:2: unknown key 'colour'"},
    {"kgen-catalogue 1\narch 90\narch 80\n", "bad:3: 'arch' given twice (first on line 2)"},
    {"kgen-catalogue 1\narch 5\n", "bad:2: arch 5 is out of range"},
    {"kgen-catalogue 1\narch 9x\n", "bad:2: arch '9x' is not a whole number"},
    {"kgen-catalogue 1\nsms 0\n", "bad:2: sms 0 is out of range"},
    {"kgen-catalogue 1\nsms 1 2\n", "bad:2: 'sms' takes one number"},
    {"kgen-catalogue 1\ndate 2026-13-01\n", "bad:2: date 2026-13-01 is not a real date"},
    {"kgen-catalogue 1\ndate 2027-02-29\n", "bad:2: date 2027-02-29 is not a real date"},
    {"kgen-catalogue 1\ndate 2026/11/23\n", "bad:2: date '2026/11/23' is not YYYY-MM-DD"},
    {"kgen-catalogue 1\ndevice\n", "bad:2: 'device' needs a value"},
    {"kgen-catalogue 1\narch 90\nsms 132\ndevice X\ndriver 1\ndate 2026-11-23\n" KERNELS,
     "bad:7: the header has no 'command'"},
    {HEADER, "bad:9: no kernel lines"},
    {HEADER KERNELS, "bad:11: no time lines"},
    {HEADER "kernel 2 matmul 1 32 32 1 0 4 bm=32\n", "bad:9: kernel ID 2 out of order (expected 1"},
    {HEADER "kernel 1 matmul 3 32 32 1 0 4 bm=32\n", "bad:9: kernel 1: NEEDS is 4, 2 or 1 (got 3)"},
    {HEADER "kernel 1 matmul 8 32 32 1 0 4 bm=32\n", "bad:9: NEEDS 8 is out of range"},
    {HEADER "kernel 1 matmul 4C 32 32 1 0 4 bm=32\n", "bad:9: NEEDS '4C'"},
    {HEADER "kernel 1 matmul 4AB 32 32 1 0 4 bm=32\n", "bad:9: NEEDS '4AB'"},
    {HEADER "kernel 1 matmul 1 32 32 K/0 0 4 bm=32\n", "bad:9: KSLICES' depth 0 is out of range"},
    {HEADER "kernel 1 lib.params 1 32 32 1 0 4 bm=32\n", "bad:9: kernel 1: 'lib.params' is not a template name"},
    {HEADER "kernel 1 matmul 1 32 32 1 0 4\n", "bad:9: kernel 1 has no configuration"},
    {HEADER "kernel 1 matmul 1 32\n", "bad:9: a kernel line needs ID TEMPLATE NEEDS"},
    {HEADER "kernel 1 matmul 1 32 32 1 70000 4 bm=32\n", "bad:9: PERSISTENT 70000 is out of range"},
    {HEADER "kernel 1 matmul 1 32 0 1 0 4 bm=32\n", "bad:9: TILE_N 0 is out of range"},
    {HEADER "kernel 1 matmul 1 32 32 1 0 4 bm=32 layout=nn\n", "bad:9: kernel 1's configuration sets layout"},
    {HEADER "kernel 1 matmul 1 32 32 1 0 4 bm=32 bm=64\n", "bad:9: kernel 1's configuration: "},
    {HEADER "kernel 1 matmul 1 32 32 1 0 4 bm=\n", "bad:9: kernel 1's configuration: "},
    {HEADER KERNELS "kernel 3 matmul 1 32 32 1 0 4 bm=32 bn=32   bk=32 tm=2 tn=2 vec=1\n",
     "bad:11: kernel 3 repeats kernel 2 (line 10)"},
    {HEADER "time nn 1 1 1 5\n", "bad:9: a time line before any kernel line"},
    {HEADER KERNELS "time nn 64 64 64 1\n", "bad:11: 1 time fields for 2 kernels"},
    {HEADER KERNELS "time nn 64 64 64 1 2 3\n", "bad:11: 3 time fields for 2 kernels"},
    {HEADER KERNELS "time nn 64 64\n", "bad:11: a time line needs LAYOUT M N K"},
    {HEADER KERNELS "time nx 64 64 64 1 2\n", "bad:11: layout 'nx' is not nn, nt, tn or tt"},
    {HEADER KERNELS "time nn 0 64 64 1 2\n", "bad:11: M 0 is out of range"},
    {HEADER KERNELS "time nn 64 64 -64 1 2\n", "bad:11: K '-64' is not a whole number"},
    {HEADER KERNELS "time nn 64 64 64 -5 2\n", "bad:11: kernel 1's time '-5' is neither a positive decimal"},
    {HEADER KERNELS "time nn 64 64 64 1 nan\n", "bad:11: kernel 2's time 'nan' is neither"},
    {HEADER KERNELS "time nn 64 64 64 1 0x10\n", "bad:11: kernel 2's time '0x10' is neither"},
    {HEADER KERNELS "time nn 64 64 64 1 1e\n", "bad:11: kernel 2's time '1e' is neither"},
    {HEADER KERNELS "time nn 64 64 64 0 2\n", "bad:11: kernel 1's time 0 is not positive"},
    {HEADER KERNELS "time nn 64 64 64 1 1e999\n", "bad:11: kernel 2's time 1e999 is not positive and finite"},
    {HEADER KERNELS "time nn 64 64 64 1 2e303\n",
     "bad:11: kernel 2's time 2e303 is not a kernel time in microseconds (0.001 to 1e9)"},
    {HEADER KERNELS "time nn 64 64 64 0.0009 2\n", "bad:11: kernel 1's time 0.0009 is not a kernel time"},
    {HEADER KERNELS "time nn 64 64 64 - -\n", "bad:11: no kernel has a time for nn 64x64x64"},
    {HEADER KERNELS "time nn 64 64 64 1 2\ntime nn 64 64 64 3 4\n", "bad:12: nn 64x64x64 repeats line 11"},
    {HEADER KERNELS "time nn 64 64 64 1 2\nkernel 3 matmul 1 64 64 1 0 1 bm=64\n",
     "bad:12: a kernel line after the first time line"},
    {HEADER KERNELS "date 2026-11-24\n", "bad:11: 'date' after the kernels"},
    {"kgen-catalogue 1\r\n", "bad:1: carriage return"},
    {"kgen-catalogue 1\narch 9\x01\n", "bad:2: control character 0x01"},
};

static void bad_lines(void)
{
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        kgi_catalogue *c = (kgi_catalogue *)1;
        char err[512] = "";
        int rc = kgi_catalogue_parse(bads[i].text, strlen(bads[i].text), "bad", &c, err, sizeof err);
        CHECK_MSG(rc != 0 && c == NULL, "case %zu parsed", i);
        CHECK_MSG(strstr(err, bads[i].want) == err, "case %zu: got '%s', want '%s...'", i, err, bads[i].want);
        kgi_catalogue_free(rc == 0 ? c : NULL);
    }
    /* a line too long to be a catalogue's */
    static char longline[20100];
    int n = snprintf(longline, sizeof longline, "kgen-catalogue 1\ndevice ");
    memset(longline + n, 'x', 20000);
    kgi_catalogue *lc;
    char lerr[256];
    CHECK(kgi_catalogue_parse(longline, strlen(longline), "long", &lc, lerr, sizeof lerr) != 0 && !lc);
    CHECK_MSG(strcmp(lerr, "long:2: line longer than 16384 characters") == 0, "%s", lerr);
    /* no NUL needed: the length bounds the text */
    const char text[] = HEADER KERNELS "time nn 64 64 64 1 2\nGARBAGE";
    kgi_catalogue *c;
    char err[512];
    CHECK(kgi_catalogue_parse(text, strlen(text) - strlen("GARBAGE"), "n", &c, err, sizeof err) == 0);
    kgi_catalogue_free(c);
}

/* Version 2: each kernel line says how many kernels a call launches (LAUNCHES, after BPS); the fastest time of
 * a kernel of one launch is the catalogue's floor per launch. Version 1 (good() above) says nothing: 0 and 0. */
#define HEADER2 "kgen-catalogue 2\narch 90\nsms 132\ndevice D\ndriver 1\ndate 2026-11-28\ncommand c\n"
static void version2(void)
{
    const char *text = HEADER2
                       "kernel 1 matmul_warp 1 32 32 8 0 4 2 bm=32 bn=32 splitk=8 cl=0\n"
                       "kernel 2 matmul_warp 1 32 32 2 0 4 1 bm=32 bn=32 splitk=2 cl=1\n"
                       "kernel 3 matmul 1 32 32 1 0 4 1 bm=32 bn=32 bk=32\n"
                       "time nn 64 64 64 2.5 4.5 -\n"
                       "time nn 128 128 128 7 5.25 9\n"
                       "time tn 128 128 128 8 - 3.75\n";
    kgi_catalogue *c = parse_ok(text, "v2");
    if (!c)
        return;
    CHECK(c->nkernels == 3 && c->kernels[0].launches == 2 && c->kernels[1].launches == 1 &&
          c->kernels[2].launches == 1);
    CHECK(c->kernels[0].bps == 4 && strcmp(c->kernels[0].config, "bm=32 bn=32 splitk=8 cl=0") == 0);
    /* kernel 1's 2.5 is faster, but it launches two */
    CHECK_MSG(c->launch_us == 3.75, "launch_us %g", c->launch_us);
    kgi_catalogue_free(c);
    if ((c = parse_ok(HEADER KERNELS "time nn 64 64 64 1 2\n", "v1"))) {
        CHECK(c->kernels[0].launches == 0 && c->kernels[1].launches == 0 && c->launch_us == 0);
        CHECK(c->kernels[0].bps == 1 && strcmp(c->kernels[0].config, "bn=256 bk=16 wm=64 raster=8 stages=1") == 0);
        kgi_catalogue_free(c);
    }
    static const bad v2bads[] = {
        {"kernel 1 matmul 1 32 32 1 0 4 0 bm=32\n", "v2:8: LAUNCHES 0 is out of range"},
        {"kernel 1 matmul 1 32 32 1 0 4 5 bm=32\n", "v2:8: LAUNCHES 5 is out of range"},
        {"kernel 1 matmul 1 32 32 1 0 4 two bm=32\n", "v2:8: LAUNCHES 'two' is not a whole number"},
        {"kernel 1 matmul 1 32 32 1 0 4 bm=32\n", "v2:8: LAUNCHES 'bm=32' is not a whole number"},
        {"kernel 1 matmul 1 32 32 1 0 4 1\n", "v2:8: kernel 1 has no configuration"},
        {"kernel 1 matmul 1 32 32 1 0 4\n", "v2:8: a kernel line needs ID TEMPLATE NEEDS TILE_M TILE_N KSLICES "
                                            "PERSISTENT BPS LAUNCHES CONFIG"},
    };
    for (size_t i = 0; i < sizeof v2bads / sizeof *v2bads; i++) {
        char t[512];
        snprintf(t, sizeof t, HEADER2 "%s" "time nn 64 64 64 1\n", v2bads[i].text);
        char err[512] = "";
        c = (kgi_catalogue *)1;
        int rc = kgi_catalogue_parse(t, strlen(t), "v2", &c, err, sizeof err);
        CHECK_MSG(rc != 0 && c == NULL, "v2 case %zu parsed", i);
        CHECK_MSG(strstr(err, v2bads[i].want) == err, "v2 case %zu: got '%s', want '%s...'", i, err, v2bads[i].want);
    }
}

/* Every kernel renders for the catalogue's architecture in each layout it has times for. */
/* Every kernel of the catalogue renders in each layout it has times in; with `exact`, its NEEDS there is what
 * the rendered kernel's preconditions ask (kgi_geometry_needs), so that kg_matmul passes over no kernel that
 * would run and picks none the launcher refuses. */
static void renders(kg_context *ctx, const char *name, const char *text, size_t len, int exact)
{
    kgi_catalogue *c;
    char err[1024];
    int rc = kgi_catalogue_parse(text, len, name, &c, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc != 0)
        return;
    CHECK_MSG(kg_set_arch(ctx, c->arch) == KG_OK, "%s: sm_%d: %s", name, c->arch, kg_last_error(ctx));
    int checked = 0;
    for (int j = 0; j < c->nkernels; j++)
        for (int l = 0; l < 4; l++) {
            int has = 0;
            for (int r = 0; r < c->nrows && !has; r++)
                has = c->rows[r].layout == l && kgi_catalogue_time(c, r, j) > 0;
            if (!has)
                continue;
            char cfg[640];
            snprintf(cfg, sizeof cfg, "%s layout=%s", c->kernels[j].config, kgi_layout_name(l));
            kg_source *src = NULL;
            CHECK_MSG(kg_render(ctx, c->kernels[j].tmpl, cfg, &src) == KG_OK, "%s: kernel %d (line %d) %s: %s", name,
                      j + 1, c->kernels[j].line, kgi_layout_name(l), kg_last_error(ctx));
            if (src && exact) {
                int need, op;
                kgi_geometry_needs(&src->geo, &need, &op);
                CHECK_MSG(need == c->kernels[j].needs[l] && op == c->kernels[j].needs_operand[l],
                          "%s: kernel %d (line %d) in %s: NEEDS says %d%s, its preconditions ask %d%s", name, j + 1,
                          c->kernels[j].line, kgi_layout_name(l), c->kernels[j].needs[l],
                          c->kernels[j].needs_operand[l] == 1 ? "A" : c->kernels[j].needs_operand[l] == 2 ? "B" : "",
                          need, op == 1 ? "A" : op == 2 ? "B" : "");
            }
            kg_source_free(src);
            checked++;
        }
    printf("%s: sm_%d, %d kernels, %d shapes, %d kernel-layouts render\n", name, c->arch, c->nkernels, c->nrows,
           checked);
    kgi_catalogue_free(c);
}

/* Version 3: NEEDS per layout (nn,nt,tn,tt), or one class for all four. */
static void version3(void)
{
#define HEADER3 "kgen-catalogue 3\narch 90\nsms 132\ndevice D\ndriver 1\ndate 2026-11-28\ncommand c\n"
    const char *text = HEADER3 "kernel 1 matmul_warp 4B,1,4,4A 64 64 1 0 6 1 bm=64 bn=64 vec=4 stages=3\n"
                               "kernel 2 matmul_warp 4 64 64 1 0 6 1 bm=64 bn=64 vec=4 stages=1\n"
                               "time nt 63 61 59 10 -\n";
    kgi_catalogue *c = parse_ok(text, "v3");
    if (c) {
        const kgi_cat_kernel *k = &c->kernels[0];
        CHECK(k->needs[0] == 4 && k->needs_operand[0] == 2 && k->needs[1] == 1 && k->needs_operand[1] == 0);
        CHECK(k->needs[2] == 4 && k->needs_operand[2] == 0 && k->needs[3] == 4 && k->needs_operand[3] == 1);
        CHECK(c->kernels[1].needs[1] == 4 && c->kernels[1].needs_operand[1] == 0);
        /* an odd nt call: kernel 1 alone may run */
        CHECK(kgi_catalogue_admits(k, 1, 1) && !kgi_catalogue_admits(&c->kernels[1], 1, 1));
        kgi_catalogue_free(c);
    }
    static const bad v3bads[] = {
        {"4B,1,4", "v3:8: kernel 1: NEEDS gives one class, or four (nn,nt,tn,tt) separated by commas"},
        {"4B,1,4,4A,4", "v3:8: kernel 1: NEEDS gives one class, or four (nn,nt,tn,tt) separated by commas"},
        {"4B,1,,4A", "v3:8: NEEDS '' is not a whole number"},
        {"4B,1,3,4A", "v3:8: kernel 1: NEEDS is 4, 2 or 1 (got 3)"},
        {"4B,1A,4,4", "v3:8: kernel 1: NEEDS 1 binds no operand (got 1A)"},
        {"4C,1,4,4", "v3:8: NEEDS '4C' is not a whole number"},
    };
    for (size_t i = 0; i < sizeof v3bads / sizeof *v3bads; i++) {
        char t[512], err[512] = "";
        snprintf(t, sizeof t, HEADER3 "kernel 1 matmul %s 32 32 1 0 4 1 bm=32\ntime nn 64 64 64 1\n", v3bads[i].text);
        c = (kgi_catalogue *)1;
        int rc = kgi_catalogue_parse(t, strlen(t), "v3", &c, err, sizeof err);
        CHECK_MSG(rc != 0 && c == NULL, "v3 case %zu parsed", i);
        CHECK_MSG(strstr(err, v3bads[i].want) == err, "v3 case %zu: got '%s', want '%s...'", i, err, v3bads[i].want);
    }
    /* a version 2 file gives one class */
    const char *v2 = HEADER2 "kernel 1 matmul 4B,1,4,4A 32 32 1 0 4 1 bm=32\ntime nn 64 64 64 1\n";
    char err[512] = "";
    CHECK(kgi_catalogue_parse(v2, strlen(v2), "v2", &c, err, sizeof err) != 0 &&
          strstr(err, "v2:8: kernel 1: NEEDS '4B,1,4,4A' gives one class per layout, which version 3 reads") == err);
#undef HEADER3
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* NEEDS with an operand: the kernel's vector loads bind only that operand's alignment. */
static void operand_needs(void)
{
    kgi_cat_kernel both = {.needs = {4, 4, 4, 4}}, a_only = {.needs = {4, 4, 4, 4}, .needs_operand = {1, 1, 1, 1}},
                   b_only = {.needs = {4, 4, 4, 4}, .needs_operand = {2, 2, 2, 2}};
    CHECK(kgi_catalogue_admits(&both, 0, 4) && kgi_catalogue_admits(&both, 0, KGI_ALIGN(4, 4, 4)));
    CHECK(!kgi_catalogue_admits(&both, 0, KGI_ALIGN(1, 4, 4)) && !kgi_catalogue_admits(&both, 0, KGI_ALIGN(4, 2, 4)));
    CHECK(kgi_catalogue_admits(&b_only, 0, KGI_ALIGN(1, 4, 4)) && !kgi_catalogue_admits(&b_only, 0, KGI_ALIGN(4, 1, 4)));
    CHECK(kgi_catalogue_admits(&a_only, 0, KGI_ALIGN(4, 1, 4)) && !kgi_catalogue_admits(&a_only, 0, KGI_ALIGN(2, 4, 4)));
    /* per layout (version 3): B alone in nn, nothing in nt, both in tn, A alone in tt */
    kgi_cat_kernel per = {.needs = {4, 1, 4, 4}, .needs_operand = {2, 0, 0, 1}};
    CHECK(kgi_catalogue_admits(&per, 0, KGI_ALIGN(1, 4, 1)) && !kgi_catalogue_admits(&per, 0, KGI_ALIGN(4, 1, 4)));
    CHECK(kgi_catalogue_admits(&per, 1, KGI_ALIGN(1, 1, 1)) && !kgi_catalogue_admits(&per, 2, KGI_ALIGN(4, 2, 4)));
    CHECK(kgi_catalogue_admits(&per, 3, KGI_ALIGN(4, 1, 1)) && !kgi_catalogue_admits(&per, 3, KGI_ALIGN(1, 4, 4)));
    /* M = 1 in tn: lda = 1 allows no vectors, ldb = N = 4096 does */
    CHECK(kgi_natural_align(2, 1, 4096, 4096) == KGI_ALIGN(1, 4, 4));
    CHECK(kgi_natural_align(0, 64, 64, 64) == KGI_ALIGN(4, 4, 4) && KGI_ALIGN_B(KGI_ALIGN(4, 4, 4)) == 4);
    /* C's rows are N long: N = 63 in nn leaves B and C without vectors, A (K = 64) with them */
    CHECK(kgi_natural_align(0, 64, 63, 64) == KGI_ALIGN(4, 1, 1) && kgi_natural_align(1, 64, 62, 64) == KGI_ALIGN(4, 4, 2));
    CHECK(KGI_ALIGN_C(KGI_ALIGN(4, 4, 2)) == 2 && KGI_ALIGN_C(2) == 2 && KGI_ALIGN_B(KGI_ALIGN(4, 1, 4)) == 1);
    CHECK(kgi_ld_class(8) == 4 && kgi_ld_class(6) == 2 && kgi_ld_class(7) == 1 && kgi_ld_class(1) == 1);
    /* C's class does not decide what may run */
    CHECK(kgi_catalogue_admits(&both, 0, KGI_ALIGN(4, 4, 1)) && !kgi_catalogue_admits(&both, 0, KGI_ALIGN(4, 1, 4)));
    kgi_catalogue *c;
    char err[512];
    const char *text = "kgen-catalogue 1\narch 90\nsms 132\ndevice X\ndriver 1\ndate 2026-11-23\ncommand c\n"
                       "kernel 1 matmul 4B 32 32 1 0 4 bm=32\nkernel 2 matmul 1 32 32 K/512 0 4 bm=64\n"
                       "time nn 64 64 64 1.5 2.5\n";
    CHECK_MSG(kgi_catalogue_parse(text, strlen(text), "op", &c, err, sizeof err) == 0, "%s", err);
    if (c) {
        CHECK(c->kernels[0].needs[1] == 4 && c->kernels[0].needs_operand[1] == 2 && c->kernels[1].needs[2] == 1);
        /* K/512: as many slices as K needs */
        CHECK(c->kernels[1].kslice_depth == 512 && kgi_kernel_slices(&c->kernels[1], 100) == 1 &&
              kgi_kernel_slices(&c->kernels[1], 1025) == 3 && kgi_kernel_slices(&c->kernels[0], 1025) == 1);
        kgi_catalogue_free(c);
    }
}

int main(int argc, char **argv)
{
    good();
    operand_needs();
    bad_lines();
    version2();
    version3();
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    int embedded = 0;
    for (const kgi_embedded *e = kgi_embedded_catalogues; e->module; e++, embedded++) {
        CHECK_MSG(strncmp(e->module, "sm_", 3) == 0, "%s", e->path);
        renders(ctx, e->path, e->text, e->len, 1);
    }
    printf("%d embedded catalogues\n", embedded);
    for (int i = 1; i < argc; i++) {
        size_t len;
        char *text = slurp(argv[i], &len);
        CHECK_MSG(text != NULL, "cannot read %s", argv[i]);
        if (text)
            renders(ctx, argv[i], text, len, 0);
        free(text);
    }
    kg_context_close(ctx);
    TEST_DONE();
}
