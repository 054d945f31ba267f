/*
 * test_explain.c -- the arithmetic of `kgen explain`, without a GPU: the bank
 * rules (32 banks, broadcast, 8- and 16-byte phases), sectors per request,
 * the seeds' worked numbers (CGMA of the naive and tiled kernels, their
 * occupancy example), limits files good and bad, the matmul template's own
 * accesses (a transposed store that conflicts without padding and not with
 * pad=1), a template without accesses(), the SVG's structure, and the
 * sweep query of --from-db against a real tuning database.
 *
 * argv[1]: this test's source folder (for its template fixtures).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "autotune/db.h"
#include "explain.h"
#include "testutil.h"

static const char *srcdir = ".";

/* addresses in floats for lanes 0..31 from a stride; -1 stays inactive */
static void strided(long long *a, int lanes, long long base, long long stride_floats)
{
    for (int l = 0; l < lanes; l++)
        a[l] = (base + l * stride_floats) * 4;
}

static void test_banks(void)
{
    long long a[32];
    kgc_bank b;
    strided(a, 32, 0, 1);
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.wavefronts == 1 && b.ideal == 1 && b.way == 1 && b.active == 32);

    strided(a, 32, 0, 32); /* every lane in bank 0, distinct words */
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK_MSG(b.wavefronts == 32 && b.ideal == 1 && b.way == 32 && b.bank == 0, "stride 32: %d/%d", b.wavefronts, b.ideal);
    CHECK(b.nexample == 8 && b.example[1].tid == 1 && b.example[1].word == 32);

    strided(a, 32, 7, 0); /* all lanes read one word: broadcast */
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.wavefronts == 1 && b.ideal == 1);

    strided(a, 32, 0, 2); /* two words per bank */
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.wavefronts == 2 && b.ideal == 1);

    strided(a, 32, 0, 33); /* the padded column: every bank once */
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.wavefronts == 1 && b.ideal == 1);

    /* half the lanes share words with the other half: still one wavefront */
    for (int l = 0; l < 32; l++)
        a[l] = (l % 16) * 4;
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.wavefronts == 1 && b.ideal == 1);

    /* inactive lanes take no part: lanes 0 and 16 alone at stride 32 */
    for (int l = 0; l < 32; l++)
        a[l] = -1;
    a[0] = 0;
    a[16] = 32 * 4;
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.active == 2 && b.wavefronts == 2 && b.ideal == 1);
    for (int l = 0; l < 32; l++)
        a[l] = -1;
    kgc_bank_request(a, 32, 4, 0, &b);
    CHECK(b.active == 0 && b.wavefronts == 0 && b.phases == 0);

    /* 8-byte accesses, consecutive: two half-warp phases, no conflict */
    strided(a, 32, 0, 2);
    kgc_bank_request(a, 32, 8, 0, &b);
    CHECK_MSG(b.phases == 2 && b.wavefronts == 2 && b.ideal == 2, "float2: %d phases %d/%d", b.phases, b.wavefronts, b.ideal);
    /* 16-byte accesses, consecutive: 512 B in two half-warp phases of two
     * wavefronts each, no conflict */
    strided(a, 32, 0, 4);
    kgc_bank_request(a, 32, 16, 0, &b);
    CHECK_MSG(b.phases == 2 && b.wavefronts == 4 && b.ideal == 4, "float4: %d phases %d/%d", b.phases, b.wavefronts,
              b.ideal);
    /* 16-byte accesses a row of 32 floats apart: each half-warp's 16 lanes
     * all land on banks 0..3, 16 words per bank */
    strided(a, 32, 0, 32);
    kgc_bank_request(a, 32, 16, 0, &b);
    CHECK_MSG(b.wavefronts == 32 && b.ideal == 4 && b.way == 16, "float4 stride 32: %d/%d way %d", b.wavefronts, b.ideal,
              b.way);
    /* the seeds' As[ty][k..k+3] fused into LDS.128: lanes 0-15 read one row,
     * 16-31 the next (16 floats on): 2 wavefronts, as ncu counts on an H200 */
    for (int l = 0; l < 32; l++)
        a[l] = (l < 16 ? 0 : 16) * 4;
    kgc_bank_request(a, 32, 16, 0, &b);
    CHECK_MSG(b.wavefronts == 2 && b.ideal == 2, "LDS.128 broadcast: %d/%d", b.wavefronts, b.ideal);
    /* the example names lane tid0 + l */
    strided(a, 32, 0, 32);
    kgc_bank_request(a, 32, 4, 64, &b);
    CHECK(b.example[0].tid == 64 && b.example[2].tid == 66);
}

static void test_coalescing(void)
{
    long long a[32];
    kgc_coal c;
    strided(a, 32, 0, 1); /* a row: 128 B in 4 sectors, 1 line */
    kgc_coal_request(a, 32, 4, &c);
    CHECK(c.requested == 128 && c.unique == 128 && c.sectors == 4 && c.ideal_sectors == 4 && c.lines == 1);

    strided(a, 32, 0, 4096); /* a column of a 4096-wide matrix */
    kgc_coal_request(a, 32, 4, &c);
    CHECK_MSG(c.sectors == 32 && c.ideal_sectors == 4 && c.lines == 32, "column: %d sectors %d lines", c.sectors, c.lines);

    strided(a, 32, 1, 1); /* a row one float off alignment */
    kgc_coal_request(a, 32, 4, &c);
    CHECK(c.sectors == 5 && c.lines == 2 && c.ideal_sectors == 4);

    strided(a, 32, 9, 0); /* one word for all: 4 useful bytes, one sector */
    kgc_coal_request(a, 32, 4, &c);
    CHECK(c.requested == 128 && c.unique == 4 && c.sectors == 1 && c.ideal_sectors == 1);

    strided(a, 32, 0, 4); /* float4 per lane: 512 B in 16 sectors, 4 lines */
    kgc_coal_request(a, 32, 16, &c);
    CHECK(c.requested == 512 && c.unique == 512 && c.sectors == 16 && c.lines == 4);

    for (int l = 0; l < 32; l++) /* 16 lanes active */
        a[l] = l < 16 ? l * 4 : -1;
    kgc_coal_request(a, 32, 4, &c);
    CHECK(c.active == 16 && c.requested == 64 && c.sectors == 2);
}

static kgc_machine seeds_machine(void)
{
    kgc_machine m;
    char err[1024];
    const char *text = "# the seeds' example SM (course notes, 'Memory Limits to Parallelism')\n"
                       "base = sm_86\n"
                       "name = seeds-example\n"
                       "max_threads_per_sm = 1536   # 48 warps\n"
                       "regs_per_sm = 16384\n"
                       "reg_alloc_unit = 1\n"
                       "max_blocks_per_sm = 8\n"
                       "smem_per_sm = 16K\n"
                       "smem_reserved_per_block = 0\n"
                       "smem_alloc_unit = 1\n";
    int rc = kgc_machine_parse(text, "seeds.limits", 90, &m, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    return m;
}

static void test_seeds_occupancy(void)
{
    kgc_machine m = seeds_machine();
    const kgi_limits *l = &m.lim;
    CHECK(l->max_warps_per_sm == 48 && l->regs_per_block == 16384 && l->smem_per_block_optin == 16384);
    CHECK(l->regs_per_sm / l->max_threads_per_sm == 10); /* 16,384 / 1,536 = 10.67: 10 registers */
    kgi_occupancy o;
    kgi_occupancy_calc(l, 512, 10, 0, &o);
    CHECK(o.blocks_per_sm == 3 && o.threads_per_sm == 1536);
    kgi_occupancy_calc(l, 512, 11, 0, &o);
    CHECK_MSG(o.threads_per_sm == 1024 && strcmp(o.limiter, "registers") == 0, "11 regs: %d threads", o.threads_per_sm);
    kgi_occupancy_calc(l, 512, 17, 0, &o);
    CHECK(o.threads_per_sm == 512 && strcmp(o.limiter, "registers") == 0);
    CHECK(kgi_occupancy_max_regs(l, 512, 0) == 10);
    /* 16x16 tiles: 1 KB of A + 1 KB of B; 16 KB holds 8 such blocks */
    kgi_occupancy_calc(l, 256, 10, 2048, &o);
    CHECK(o.by_smem == 8);
    /* the table's sm_90 with the 256-register allocation unit */
    kgi_occupancy_calc(kgi_arch_limits(90), 256, 40, 0, &o);
    CHECK(o.regs_per_warp == 1280 && o.by_regs == 6);
    kgi_occupancy_calc(kgi_arch_limits(90), 256, 33, 0, &o); /* 1,056 rounds up to 1,280 */
    CHECK(o.regs_per_warp == 1280);
    CHECK(kgi_occupancy_max_regs(kgi_arch_limits(90), 256, 0) == 32);
}

static void test_limits_files(void)
{
    kgc_machine m;
    char err[2048];
    struct { const char *text, *want; } bad[] = {
        {"regs_per_sm = 1000\nbogus_key = 3\n", "seeds.limits:2: unknown key 'bogus_key'"},
        {"regs_per_sm = many\n", "seeds.limits:1: regs_per_sm: 'many' is not a positive integer"},
        {"regs_per_sm = -5\n", "regs_per_sm: '-5'"},
        {"regs_per_sm = 0\n", "regs_per_sm: '0'"},
        {"regs_per_sm = 12x\n", "regs_per_sm: '12x'"},
        {"smem_per_sm = 16Q\n", "smem_per_sm: '16Q'"},
        {"clock_ghz = fast\n", "clock_ghz: 'fast' is not a positive number"},
        {"regs_per_sm = 100\nregs_per_sm = 200\n", "seeds.limits:2: regs_per_sm given twice (first on line 1)"},
        {"just words\n", "seeds.limits:1: 'just words' is not of the form key = value"},
        {"regs_per_sm =\n", "seeds.limits:1:"},
        {"base = sm_12\n", "base: 'sm_12' is not an architecture of the table"},
        {"regs_per_sm = 1024\nregs_per_block = 2048\n", "regs_per_block (2048) exceeds regs_per_sm (1024)"},
        {"max_threads_per_sm = 512\nmax_threads_per_block = 1024\n", "max_threads_per_block (1024) exceeds max_threads_per_sm (512)"},
        {"sm = 5\n", "seeds.limits: sm: 5 is not an architecture number (10-1000"},
        {"sm = 1001\n", "seeds.limits: sm: 1001 is not an architecture number"},
        {"warp_size = 7\n", "seeds.limits: warp_size: 7 is not a power of two up to 64"},
        {"warp_size = 128\nmax_threads_per_block = 1024\n", "warp_size: 128 is not a power of two up to 64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int rc = kgc_machine_parse(bad[i].text, "seeds.limits", 90, &m, err, sizeof err);
        CHECK_MSG(rc != 0 && strstr(err, bad[i].want), "case %zu: rc %d, message '%s', want '%s'", i, rc, err, bad[i].want);
    }
    /* good: base wherever it stands, suffixes, derived values, peak given */
    int rc = kgc_machine_parse("smem_per_sm = 64K\nmax_threads_per_sm = 1024\nbase = sm_75\npeak_tflops = 12\n"
                               "bandwidth_gbs = 1000   # the seeds' 4.1 example\n",
                               "x.limits", 90, &m, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(m.lim.sm == 75 && m.lim.smem_per_sm == 65536 && m.lim.max_warps_per_sm == 32);
    CHECK(fabs(m.peak_gflops - 12000) < 1e-9 && m.peak_given && fabs(m.bandwidth_gbs - 1000) < 1e-9);
    /* the seeds: 12 TFLOP/s over 1000 GB/s needs 48 FLOP per 4-byte load */
    CHECK(fabs(m.peak_gflops / m.bandwidth_gbs * 4 - 48) < 1e-9);
    /* an architecture outside the table, a warp of 16 lanes: allowed (the file describes another device) */
    rc = kgc_machine_parse("sm = 100\nwarp_size = 16\n", "y.limits", 90, &m, err, sizeof err);
    CHECK_MSG(rc == 0 && m.lim.sm == 100 && m.lim.warp_size == 16, "rc %d: %s", rc, err);
    CHECK(kgc_machine_from_file("/nonexistent/limits", 90, &m, err, sizeof err) != 0 &&
          strstr(err, "cannot read limits file '/nonexistent/limits'"));
    /* table: H100's FP32 peak from its SMs, lanes and clock */
    CHECK(kgc_machine_from_table(90, &m) == 0 && fabs(m.peak_gflops - 132 * 128 * 2 * 1.98) < 1e-6);
    CHECK(kgc_machine_from_table(12, &m) != 0);
}

static void test_traffic(kgi_host *h)
{
    char err[4096];
    kgc_resources r;
    /* the naive kernel: one multiply-add per element of A and of B */
    CHECK(kgc_read_resources(h, "matmul", "bm=1 bn=1 bk=1 tm=1 tn=1", &r, err, sizeof err) == KG_OK);
    CHECK_MSG(fabs(r.cgma - 1.0) < 1e-12 && fabs(r.cgma / 4 - 0.25) < 1e-12, "naive cgma %g", r.cgma);
    /* a T x T tile raises it by T */
    for (int t = 2; t <= 32; t *= 2) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "bm=%d bn=%d bk=%d tm=1 tn=1", t, t, t);
        CHECK(kgc_read_resources(h, "matmul", cfg, &r, err, sizeof err) == KG_OK);
        CHECK_MSG(fabs(r.cgma - t) < 1e-12, "tile %d: cgma %g", t, r.cgma);
    }
    CHECK(kgc_read_resources(h, "matmul", "bm=64 bn=32 bk=8 tm=4 tn=4", &r, err, sizeof err) == KG_OK);
    CHECK(fabs(r.cgma - 2.0 * 64 * 32 * 8 / (64 * 8 + 8 * 32)) < 1e-12 && r.threads == 128);
    CHECK(r.tile_m == 64 && r.tile_n == 32 && r.tile_k == 8 && strcmp(r.layout, "nn") == 0 && r.pad == 1);
    /* the whole problem: 16x16 tiles at 4096^3 re-read A and B 256 times */
    kgc_shape s = {4096, 4096, 4096, 4096, 4096, 4096};
    kgc_traffic t;
    kgc_traffic_calc(&s, 16, 16, 16, &t);
    CHECK(t.blocks == 65536 && t.phases == 256 && fabs(t.flops - 2.0 * 4096 * 4096 * 4096) < 1);
    CHECK(fabs(t.bytes_tiles - 4.0 * (256.0 * 4096 * 4096 * 2 + 4096.0 * 4096)) < 1);
    CHECK(fabs(t.bytes_once - 12.0 * 4096 * 4096) < 1);
    kgc_shape odd = {17, 33, 5, 5, 33, 33}; /* edge tiles: ceil */
    kgc_traffic_calc(&odd, 16, 16, 16, &t);
    CHECK(t.blocks == 2 * 3 && t.phases == 1);
    kgc_machine m;
    kgc_machine_from_table(90, &m);
    CHECK(fabs(kgc_roof(&m, 0.25) - 0.25 * 3352) < 1e-9 && fabs(kgc_roof(&m, 1000) - m.peak_gflops) < 1e-9);
}

static const kgc_access *find_access(const kgc_access_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    return NULL;
}

static void test_template_accesses(kgi_host *h)
{
    char err[4096];
    int missing;
    kgc_access_set s;
    kgc_shape sh = {4096, 4096, 4096, 4096, 4096, 4096};
    /* layout tn: A is stored K x M, so consecutive threads walk M, which is
     * the row index of As[m][k]: a column store, 32 floats apart */
    CHECK(kgc_eval_accesses(h, "matmul", "bm=32 bn=32 bk=32 tm=1 tn=1 pad=0 layout=tn", &sh, 1024, 32, 32, &s,
                            &missing, err, sizeof err) == KG_OK);
    const kgc_access *st = find_access(&s, "store A tile to As");
    CHECK_MSG(st && st->shared && st->store && st->worst.wavefronts == 32 && st->worst.ideal == 1 &&
              st->wavefronts == 32 * st->ideal, "tn pad=0: %lld/%lld", st ? st->wavefronts : 0, st ? st->ideal : 0);
    CHECK(st && st->requests == 32); /* 32 warps, one repetition */
    const kgc_access *ld = find_access(&s, "load A tile from A");
    CHECK(ld && !ld->shared && ld->sectors == 4LL * ld->requests && ld->lines == ld->requests);
    kgc_access_set_free(&s);
    CHECK(kgc_eval_accesses(h, "matmul", "bm=32 bn=32 bk=32 tm=1 tn=1 pad=1 layout=tn", &sh, 1024, 32, 32, &s,
                            &missing, err, sizeof err) == KG_OK);
    st = find_access(&s, "store A tile to As");
    CHECK_MSG(st && st->wavefronts == st->ideal && st->worst.wavefronts == 1, "tn pad=1 conflicts");
    kgc_access_set_free(&s);
    /* layout nn: rows of As, conflict-free without padding */
    CHECK(kgc_eval_accesses(h, "matmul", "bm=32 bn=32 bk=32 tm=1 tn=1 pad=0", &sh, 1024, 32, 32, &s, &missing, err,
                            sizeof err) == KG_OK);
    for (int i = 0; i < s.n; i++)
        if (s.v[i].shared)
            CHECK_MSG(s.v[i].wavefronts == s.v[i].ideal, "nn pad=0: %s conflicts", s.v[i].name);
    const kgc_access *a = find_access(&s, "load a from As (inner loop)");
    CHECK(a && a->per_phase == 32 && !a->per_phase_given); /* once per k step */
    kgc_access_set_free(&s);
    /* C is stored a row of 32 floats per warp: 128 B in 4 sectors */
    kgc_shape small = {64, 64, 64, 64, 64, 64};
    CHECK(kgc_eval_accesses(h, "matmul", "bm=32 bn=32 bk=8 tm=1 tn=1", &small, 1024, 32, 8, &s, &missing, err,
                            sizeof err) == KG_OK);
    const kgc_access *c = find_access(&s, "store C");
    CHECK(c && c->requests == 32 && c->sectors == 4LL * 32 && c->requested == 128LL * 32);
    kgc_access_set_free(&s);
    /* bounds: threads outside M x N do not store */
    kgc_shape edge = {5, 7, 3, 3, 7, 7};
    CHECK(kgc_eval_accesses(h, "matmul", "bm=32 bn=32 bk=8 tm=1 tn=1", &edge, 1024, 32, 8, &s, &missing, err,
                            sizeof err) == KG_OK);
    c = find_access(&s, "store C");
    CHECK(c && c->requests == 5 && c->requested == 5LL * 7 * 4);
    kgc_access_set_free(&s);
}

/* Fixture templates: one without accesses(), one whose accesses() lies. */
static void test_bad_templates(kgi_host *h)
{
    char dir[4096], err[4096];
    snprintf(dir, sizeof dir, "%s/templates", srcdir);
    CHECK(kgi_host_set_path(h, dir) == 0);
    int missing = 0;
    kgc_access_set s;
    kgc_shape sh = {64, 64, 64, 64, 64, 64};
    kg_status st = kgc_eval_accesses(h, "noaccess", "", &sh, 64, 32, 8, &s, &missing, err, sizeof err);
    CHECK_MSG(st == KG_ERR_TEMPLATE && missing && strstr(err, "provides no accesses"), "%s", err);
    st = kgc_eval_accesses(h, "badaccess", "", &sh, 64, 32, 8, &s, &missing, err, sizeof err);
    CHECK_MSG(st == KG_ERR_TEMPLATE && !missing && strstr(err, "not aligned") && strstr(err, "template 'badaccess'"), "%s", err);
    st = kgc_eval_accesses(h, "badaccess", "mode=1", &sh, 64, 32, 8, &s, &missing, err, sizeof err);
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(err, "not a float offset"), "%s", err);
    st = kgc_eval_accesses(h, "badaccess", "mode=2", &sh, 64, 32, 8, &s, &missing, err, sizeof err);
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(err, "space must be"), "%s", err);
    kgc_resources r;
    CHECK(kgc_read_resources(h, "noaccess", "", &r, err, sizeof err) == KG_OK && r.threads == 64);
    CHECK(kgi_host_set_path(h, NULL) == 0);
}

/* ------------------------------------------------------------ SVG */

typedef struct xml_counts {
    int elements, roots;
    int svg, polyline_roof, circle_sweep, circle_predicted, circle_measured, text;
} xml_counts;

static int entity_ok(const char *p)
{
    static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (int i = 0; i < 5; i++)
        if (strncmp(p, ents[i], strlen(ents[i])) == 0)
            return (int)strlen(ents[i]);
    return 0;
}

static int name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_'; }

/* A small well-formedness check: one root, tags nest and match, attribute
 * values quoted, '<' and '&' escaped in text and values. Returns 0 when
 * well formed and counts the elements the roofline must have. */
static int xml_check(const char *s, xml_counts *c)
{
    memset(c, 0, sizeof *c);
    char stack[64][32];
    int depth = 0;
    const char *p = s;
    if (strncmp(p, "<?xml", 5) == 0) {
        p = strstr(p, "?>");
        if (!p)
            return -1;
        p += 2;
    }
    while (*p) {
        if (*p != '<') {
            if (*p == '&') {
                int n = entity_ok(p);
                if (!n)
                    return -2;
                p += n;
                continue;
            }
            if (depth == 0 && !strchr(" \t\r\n", *p))
                return -3; /* text outside the root */
            p++;
            continue;
        }
        if (p[1] == '/') {
            const char *q = p + 2;
            size_t n = 0;
            while (name_char(q[n]))
                n++;
            if (depth == 0 || strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], q, n) != 0 || q[n] != '>')
                return -4;
            depth--;
            p = q + n + 1;
            continue;
        }
        const char *q = p + 1;
        size_t n = 0;
        while (name_char(q[n]))
            n++;
        if (n == 0 || n >= 32 || depth == 64)
            return -5;
        char name[32];
        memcpy(name, q, n);
        name[n] = '\0';
        if (depth == 0)
            c->roots++;
        c->elements++;
        q += n;
        char cls[64] = "";
        for (;;) {
            while (*q == ' ' || *q == '\n')
                q++;
            if (*q == '>' || (q[0] == '/' && q[1] == '>'))
                break;
            size_t an = 0;
            while (name_char(q[an]))
                an++;
            if (an == 0 || q[an] != '=' || q[an + 1] != '"')
                return -6;
            const char *v = q + an + 2;
            const char *e = v;
            while (*e && *e != '"') {
                if (*e == '<')
                    return -7;
                if (*e == '&') {
                    int k = entity_ok(e);
                    if (!k)
                        return -8;
                    e += k;
                } else {
                    e++;
                }
            }
            if (!*e)
                return -9;
            if (an == 5 && strncmp(q, "class", 5) == 0)
                snprintf(cls, sizeof cls, "%.*s", (int)(e - v), v);
            q = e + 1;
        }
        c->svg += strcmp(name, "svg") == 0;
        c->text += strcmp(name, "text") == 0;
        c->polyline_roof += strcmp(name, "polyline") == 0 && strcmp(cls, "roof") == 0;
        c->circle_sweep += strcmp(name, "circle") == 0 && strcmp(cls, "sweep") == 0;
        c->circle_predicted += strcmp(name, "circle") == 0 && strcmp(cls, "predicted") == 0;
        c->circle_measured += strcmp(name, "circle") == 0 && strcmp(cls, "measured") == 0;
        if (*q == '/') {
            p = q + 2;
        } else {
            snprintf(stack[depth++], 32, "%s", name);
            p = q + 1;
        }
    }
    return depth == 0 && c->roots == 1 ? 0 : -10;
}

/* A kgc_explain as cmd_explain.c fills it for the 16x16 kernel on sm_90. */
static void sample_explain(kgc_explain *x)
{
    memset(x, 0, sizeof *x);
    snprintf(x->tmpl, sizeof x->tmpl, "matmul");
    snprintf(x->config, sizeof x->config, "bm=16 <escaped> & \"quoted\"");
    x->shape = (kgc_shape){4096, 4096, 4096, 4096, 4096, 4096};
    kgc_machine_from_table(90, &x->mach);
    snprintf(x->res.layout, sizeof x->res.layout, "nn");
    x->res.tile_m = x->res.tile_n = x->res.tile_k = 16;
    kgc_traffic_calc(&x->shape, 16, 16, 16, &x->traffic);
    x->ridge = x->mach.peak_gflops / x->mach.bandwidth_gbs;
    x->bound_tiles = kgc_roof(&x->mach, x->traffic.ai_tiles);
    x->have_smem_roof = 1;
    x->smem_bound_gflops = 7870;
    x->bound_pred = 7870;
}

static void test_svg(void)
{
    kgc_explain x;
    sample_explain(&x);
    char *svg = kgc_explain_svg(&x);
    xml_counts c;
    int rc = svg ? xml_check(svg, &c) : -100;
    CHECK_MSG(rc == 0, "SVG not well formed (%d)", rc);
    CHECK(c.svg == 1 && c.polyline_roof == 1 && c.circle_predicted == 1 && c.circle_measured == 0 && c.text >= 8);
    CHECK(svg && strstr(svg, "&lt;escaped&gt; &amp; &quot;quoted&quot;") && strstr(svg, "FP32 peak 66.9 TFLOP/s"));
    free(svg);
    x.measured = 1;
    x.tflops = 5.5;
    kgc_point pts[3] = {{"bm=64", 15.9, 30.1}, {"bm=128", 31.9, 45.2}, {"bm=32", 7.9, 12.0}};
    x.points = pts;
    x.npoints = 3;
    svg = kgc_explain_svg(&x);
    rc = svg ? xml_check(svg, &c) : -100;
    CHECK_MSG(rc == 0 && c.circle_sweep == 3 && c.circle_measured == 1, "SVG with points: rc %d, %d sweep", rc,
              c.circle_sweep);
    CHECK(svg && strstr(svg, "3 timed configurations"));
    free(svg);
    /* the checker itself rejects broken XML */
    CHECK(xml_check("<svg><g></svg>", &c) != 0);
    CHECK(xml_check("<svg a=\"<\"/>", &c) != 0);
    CHECK(xml_check("<svg>a & b</svg>", &c) != 0);
    CHECK(xml_check("<svg/><svg/>", &c) != 0);
}

/* ------------------------------------------------------------ --from-db */

static void put_row(kgi_db *db, const char *device, int cc, const char *config, kgi_outcome out, double tflops)
{
    kgi_dbkey key;
    kgi_result res;
    memset(&key, 0, sizeof key);
    memset(&res, 0, sizeof res);
    snprintf(key.device, sizeof key.device, "%s", device);
    key.cc = cc;
    key.sm_count = 132;
    snprintf(key.tmpl, sizeof key.tmpl, "matmul");
    key.tmpl_version = 1;
    snprintf(key.dtype, sizeof key.dtype, "f32");
    snprintf(key.layout, sizeof key.layout, "nn");
    key.m = key.n = key.k = 4096;
    snprintf(key.config, sizeof key.config, "%s", config);
    res.outcome = out;
    res.tflops = tflops;
    res.time_ms = tflops > 0 ? 2.0 * 4096 * 4096 * 4096 / (tflops * 1e9) : 0;
    CHECK_MSG(kgi_db_put(db, &key, &res, 0, 1) == KG_OK, "put %s: %s", config, kgi_db_error(db));
}

static void test_from_db(kgi_host *h)
{
    char path[] = "/tmp/kgen-explain-db-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    unlink(path);
    char err[2048];
    kgi_db *db = NULL;
    CHECK_MSG(kgi_db_open(path, KGI_DB_CREATE, &db, err, sizeof err) == KG_OK, "%s", err);
    if (!db)
        return;
    put_row(db, "NVIDIA H100 80GB HBM3", 90, "bm=64 bn=64 bk=16 tm=4 tn=4", KGI_OUT_OK, 20.5);
    put_row(db, "NVIDIA H100 80GB HBM3", 90, "bm=128 bn=128 bk=8 tm=8 tn=8 vec=4", KGI_OUT_OK, 31.0);
    put_row(db, "NVIDIA H200", 90, "bm=16 bn=16 bk=16 tm=1 tn=1", KGI_OUT_OK, 5.1);
    put_row(db, "NVIDIA H100 80GB HBM3", 90, "bm=32 bn=32 bk=8 tm=2 tn=2", KGI_OUT_WRONG, 0);
    put_row(db, "NVIDIA A100", 80, "bm=32 bn=32 bk=8 tm=4 tn=4", KGI_OUT_OK, 12.0);
    put_row(db, "NVIDIA H100 80GB HBM3", 90, "bm=64 zz=3", KGI_OUT_OK, 9.0);
    kgi_db_close(db);

    kgc_explain x;
    sample_explain(&x);
    snprintf(x.config, sizeof x.config, "bm=16 bn=16 bk=16 tm=1 tn=1");
    CHECK_MSG(kgc_explain_points(path, NULL, &x, h, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(x.npoints == 3, "sm_90 points: %d (%s)", x.npoints, x.db_note);
    CHECK(x.npoints == 3 && x.points[0].tflops == 31.0 && x.points[2].tflops == 5.1);
    CHECK(x.npoints == 3 && fabs(x.points[2].intensity - x.traffic.ai_tiles) < 1e-9); /* the 16x16 tile */
    CHECK(strstr(x.db_note, "1 row left out") && strstr(x.db_note, "several devices"));
    free(x.points);
    sample_explain(&x);
    CHECK(kgc_explain_points(path, "NVIDIA H100 80GB HBM3", &x, h, err, sizeof err) == 0 && x.npoints == 2);
    free(x.points);
    sample_explain(&x);
    CHECK(kgc_explain_points("/nonexistent/dir/tune.db", NULL, &x, h, err, sizeof err) != 0 &&
          strstr(err, "/nonexistent/dir/tune.db"));
    unlink(path);
    char side[4200];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        srcdir = argv[1];
    kgi_host *h = kgi_host_new();
    CHECK(h != NULL);
    if (!h)
        TEST_DONE();
    test_banks();
    test_coalescing();
    test_seeds_occupancy();
    test_limits_files();
    test_traffic(h);
    test_template_accesses(h);
    test_bad_templates(h);
    test_svg();
    test_from_db(h);
    kgi_host_free(h);
    TEST_DONE();
}
