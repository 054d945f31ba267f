/*
 * explain_model.c -- the arithmetic of `kgen explain`: what one warp request
 * costs in shared-memory wavefronts or global sectors, the machine's limits
 * and peak figures (table, limits file), and the traffic and roofline of a
 * tile. Pure functions: no Lua, no printing.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

/* ------------------------------------------------------------ bank conflicts */

typedef struct word_ref {
    long long word;
    int tid;
} word_ref;

static int cmp_word(const void *a, const void *b)
{
    const word_ref *x = a, *y = b;
    if (x->word != y->word)
        return x->word < y->word ? -1 : 1;
    return x->tid - y->tid;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/*
 * A request is served phase by phase: the whole warp for accesses of up to
 * 4 bytes, half-warps for 8- and 16-byte accesses. Within a phase each bank
 * delivers one 4-byte word per wavefront, so the phase costs as many
 * wavefronts as its busiest bank has distinct words; lanes asking for the
 * same word are served together (broadcast). The ideal is what the phase's
 * distinct words need on 32 banks, so a result above it is a conflict.
 *
 * Half-warps for 16-byte accesses, not the quarter-warps one might expect
 * from "128 bytes a wavefront", because that is what the hardware counts:
 * on an H200 (ncu, l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld) the
 * seeds' 16x16 kernel with pad=0, whose As[ty][k..k+3] reads the compiler
 * fuses into LDS.128 with two distinct addresses per warp, cost 24.03
 * wavefronts per warp and phase: 16 scalar Bs reads + 4 LDS.128 x 2, where
 * quarter-warp phases would give 4 x 4. Distinct consecutive 16-byte
 * accesses still cost 4 (64 words a half-warp, two per bank).
 */
void kgc_bank_request(const long long *addr, int lanes, int width, int tid0, kgc_bank *out)
{
    memset(out, 0, sizeof *out);
    out->bank = -1;
    if (width < 1)
        width = 1;
    int per_phase = width <= KGC_BANK_BYTES ? KGC_BANKS : KGC_BANKS / 2;
    int words_per_lane = (width + KGC_BANK_BYTES - 1) / KGC_BANK_BYTES + 1;
    word_ref *w = malloc(sizeof *w * (size_t)per_phase * (size_t)words_per_lane);
    if (!w)
        return;
    for (int p0 = 0; p0 < lanes; p0 += per_phase) {
        int n = 0;
        for (int l = p0; l < lanes && l < p0 + per_phase; l++) {
            if (addr[l] < 0)
                continue;
            out->active++;
            for (long long x = addr[l] / KGC_BANK_BYTES; x <= (addr[l] + width - 1) / KGC_BANK_BYTES; x++)
                w[n++] = (word_ref){x, tid0 + l};
        }
        if (n == 0)
            continue;
        out->phases++;
        qsort(w, (size_t)n, sizeof *w, cmp_word);
        int count[KGC_BANKS] = {0};
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0 && w[i].word == w[i - 1].word)
                continue;
            distinct++;
            count[w[i].word % KGC_BANKS]++;
        }
        int way = 0, bank = 0;
        for (int b = 0; b < KGC_BANKS; b++)
            if (count[b] > way)
                way = count[b], bank = b;
        out->wavefronts += way;
        out->ideal += (distinct + KGC_BANKS - 1) / KGC_BANKS;
        if (way > out->way) {
            out->way = way;
            out->bank = bank;
            out->nexample = 0;
            for (int i = 0; i < n && out->nexample < 8; i++) {
                if ((i > 0 && w[i].word == w[i - 1].word) || w[i].word % KGC_BANKS != bank)
                    continue;
                out->example[out->nexample].tid = w[i].tid;
                out->example[out->nexample].word = w[i].word;
                out->nexample++;
            }
        }
    }
    free(w);
}

/* ------------------------------------------------------------ coalescing */

/* Sectors and lines are counted over each lane's whole byte range, so a
 * misaligned or wide access that straddles a boundary pays for both. */
void kgc_coal_request(const long long *addr, int lanes, int width, kgc_coal *out)
{
    memset(out, 0, sizeof *out);
    if (width < 1)
        width = 1;
    int per_lane = (width + KGC_SECTOR - 1) / KGC_SECTOR + 1;
    long long *sec = malloc(sizeof *sec * (size_t)lanes * (size_t)per_lane);
    long long *line = malloc(sizeof *line * (size_t)lanes * 2 * (size_t)per_lane);
    long long *start = malloc(sizeof *start * (size_t)lanes);
    if (!sec || !line || !start)
        goto done;
    int ns = 0, nl = 0, na = 0;
    for (int l = 0; l < lanes; l++) {
        if (addr[l] < 0)
            continue;
        out->active++;
        out->requested += width;
        start[na++] = addr[l];
        long long last = addr[l] + width - 1;
        for (long long s = addr[l] / KGC_SECTOR; s <= last / KGC_SECTOR; s++)
            sec[ns++] = s;
        for (long long c = addr[l] / KGC_LINE; c <= last / KGC_LINE; c++)
            line[nl++] = c;
    }
    qsort(sec, (size_t)ns, sizeof *sec, cmp_ll);
    qsort(line, (size_t)nl, sizeof *line, cmp_ll);
    qsort(start, (size_t)na, sizeof *start, cmp_ll);
    for (int i = 0; i < ns; i++)
        out->sectors += i == 0 || sec[i] != sec[i - 1];
    for (int i = 0; i < nl; i++)
        out->lines += i == 0 || line[i] != line[i - 1];
    /* distinct bytes: the union of [start, start + width) */
    long long end = -1;
    for (int i = 0; i < na; i++) {
        long long s = start[i] > end ? start[i] : end;
        if (start[i] + width > s)
            out->unique += start[i] + width - s;
        if (start[i] + width > end)
            end = start[i] + width;
    }
    out->ideal_sectors = (int)((out->unique + KGC_SECTOR - 1) / KGC_SECTOR);
done:
    free(sec);
    free(line);
    free(start);
}

/* ------------------------------------------------------------ the machine */

/* Offline peak figures come from the table's reference part: FP32 peak is
 * SMs x FP32 lanes x 2 (a fused multiply-add) x boost clock. */
int kgc_machine_from_table(int sm, kgc_machine *m)
{
    const kgi_limits *l = kgi_arch_limits(sm);
    if (!l)
        return -1;
    memset(m, 0, sizeof *m);
    m->lim = *l;
    m->from = KGC_SRC_TABLE;
    snprintf(m->part, sizeof m->part, "%s", l->ref_gpu);
    m->sm_count = l->ref_sm_count;
    m->clock_ghz = l->ref_clock_ghz;
    m->bandwidth_gbs = l->ref_bandwidth_gbs;
    m->peak_gflops = (double)m->sm_count * l->fp32_lanes_per_sm * 2.0 * m->clock_ghz;
    snprintf(m->what, sizeof m->what, "offline table for %s (reference part %s: %d SMs at %.3g GHz, %.0f GB/s)",
             l->name, l->ref_gpu, m->sm_count, m->clock_ghz, m->bandwidth_gbs);
    return 0;
}

typedef enum { K_BASE, K_INT, K_BYTES, K_REAL, K_TEXT } key_type;

typedef struct limits_key {
    const char *name;
    key_type type;
    size_t off;      /* into kgc_machine */
    size_t size;     /* of the field */
} limits_key;

#define KEY_ENTRY(name, type, field, doc) {#name, type, offsetof(kgc_machine, field), sizeof(((kgc_machine *)0)->field)},
static const limits_key keys[] = {KGC_LIMITS_KEYS(KEY_ENTRY)};
#undef KEY_ENTRY
#define NKEYS (sizeof keys / sizeof *keys)

static const limits_key *find_key(const char *name, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(keys[i].name) == len && strncmp(keys[i].name, name, len) == 0)
            return &keys[i];
    return NULL;
}

/* Parses one value into the field; returns 0, or -1 with err naming the key. */
static int set_value(kgc_machine *m, const limits_key *k, const char *v, const char *where, char *err, size_t errlen)
{
    char *p = (char *)m + k->off;
    if (k->type == K_TEXT) {
        if (strlen(v) >= k->size) {
            snprintf(err, errlen, "%s: %s: '%s' is too long (at most %zu characters)", where, k->name, v, k->size - 1);
            return -1;
        }
        snprintf(p, k->size, "%s", v);
        return 0;
    }
    errno = 0;
    char *end;
    if (k->type == K_REAL) {
        double d = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(d) || d <= 0) {
            snprintf(err, errlen, "%s: %s: '%s' is not a positive number", where, k->name, v);
            return -1;
        }
        *(double *)p = strcmp(k->name, "peak_tflops") == 0 ? d * 1000.0 : d;
        if (strcmp(k->name, "peak_tflops") == 0)
            m->peak_given = 1;
        return 0;
    }
    long long x = strtoll(v, &end, 10);
    long long mult = 1;
    if (k->type == K_BYTES && end != v) {
        if (strcmp(end, "K") == 0 || strcmp(end, "KB") == 0 || strcmp(end, "KiB") == 0)
            mult = 1024, end += strlen(end);
        else if (strcmp(end, "M") == 0 || strcmp(end, "MB") == 0 || strcmp(end, "MiB") == 0)
            mult = 1024 * 1024, end += strlen(end);
    }
    int zero_ok = strcmp(k->name, "smem_reserved_per_block") == 0;
    long long max = k->type == K_BYTES ? (1LL << 40) : 0x7fffffffLL;
    if (end == v || *end || errno || x < (zero_ok ? 0 : 1) || x > max / mult) {
        snprintf(err, errlen, "%s: %s: '%s' is not a %s integer%s", where, k->name, v,
                 zero_ok ? "non-negative" : "positive", k->type == K_BYTES ? " of bytes (suffix K or M allowed)" : "");
        return -1;
    }
    if (k->type == K_BYTES)
        *(size_t *)p = (size_t)(x * mult);
    else
        *(int *)p = (int)x;
    return 0;
}

/* One `key = value` line split in place; returns 0 for a blank or comment
 * line, 1 for an item, -1 when malformed. */
static int split_line(char *line, char **key, size_t *klen, char **val)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *s = line + strspn(line, " \t\r");
    char *e = s + strlen(s);
    while (e > s && strchr(" \t\r", e[-1]))
        *--e = '\0';
    if (!*s)
        return 0;
    char *eq = strchr(s, '=');
    if (!eq || eq == s)
        return -1;
    char *ke = eq;
    while (ke > s && strchr(" \t", ke[-1]))
        ke--;
    *key = s;
    *klen = (size_t)(ke - s);
    *val = eq + 1 + strspn(eq + 1, " \t");
    return **val ? 1 : -1;
}

/* Values the file did not give follow from those it did where they must
 * (warps from threads, per-block limits capped by per-SM ones); values it
 * gave that contradict each other are errors naming both keys. */
static int finish_machine(kgc_machine *m, const unsigned char *given, int base_sm, const char *name, char *err,
                          size_t errlen)
{
    kgi_limits *l = &m->lim;
#define GIVEN(key) given[find_key(key, strlen(key)) - keys]
    if (!GIVEN("max_warps_per_sm") && l->warp_size > 0)
        l->max_warps_per_sm = l->max_threads_per_sm / l->warp_size;
    if (!GIVEN("max_threads_per_block") && l->max_threads_per_block > l->max_threads_per_sm)
        l->max_threads_per_block = l->max_threads_per_sm;
    if (!GIVEN("regs_per_block") && l->regs_per_block > l->regs_per_sm)
        l->regs_per_block = l->regs_per_sm;
    if (!GIVEN("smem_per_block_optin") && l->smem_per_block_optin > l->smem_per_sm)
        l->smem_per_block_optin = l->smem_per_sm;
    if (!GIVEN("smem_per_block") && l->smem_per_block > l->smem_per_block_optin)
        l->smem_per_block = l->smem_per_block_optin;
    /* Figures the file changed describe its device, not the table's part. */
    if (!GIVEN("part") && (GIVEN("sm_count") || GIVEN("clock_ghz") || GIVEN("bandwidth_gbs") ||
                           GIVEN("peak_tflops") || GIVEN("fp32_lanes_per_sm")))
        snprintf(m->part, sizeof m->part, "%s", l->name);
    char base[32];
    snprintf(base, sizeof base, "sm_%d", base_sm);
#undef GIVEN
    struct { const char *a, *b; long long va, vb; } order[] = {
        {"max_threads_per_block", "max_threads_per_sm", l->max_threads_per_block, l->max_threads_per_sm},
        {"regs_per_block", "regs_per_sm", l->regs_per_block, l->regs_per_sm},
        {"smem_per_block", "smem_per_block_optin", (long long)l->smem_per_block, (long long)l->smem_per_block_optin},
        {"smem_per_block_optin", "smem_per_sm", (long long)l->smem_per_block_optin, (long long)l->smem_per_sm},
        {"warp_size", "max_threads_per_block", l->warp_size, l->max_threads_per_block},
    };
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (order[i].va > order[i].vb) {
            snprintf(err, errlen, "%s: %s (%lld) exceeds %s (%lld)", name, order[i].a, order[i].va, order[i].b,
                     order[i].vb);
            return -1;
        }
    }
    if (l->sm < KGI_ARCH_MIN || l->sm > KGI_ARCH_MAX) {
        snprintf(err, errlen, "%s: sm: %d is not an architecture number (%d-%d: 10 x major + minor, 90 for sm_90)", name,
                 l->sm, KGI_ARCH_MIN, KGI_ARCH_MAX);
        return -1;
    }
    /* a warp's lanes: a power of two (the shuffles and the access walk assume it), at most KGI_MAX_LANES */
    if (l->warp_size > KGI_MAX_LANES || (l->warp_size & (l->warp_size - 1)) != 0) {
        snprintf(err, errlen, "%s: warp_size: %d is not a power of two up to %d", name, l->warp_size, KGI_MAX_LANES);
        return -1;
    }
    if (l->max_warps_per_sm < 1) {
        snprintf(err, errlen, "%s: max_warps_per_sm must be at least 1 (max_threads_per_sm %d / warp_size %d)", name,
                 l->max_threads_per_sm, l->warp_size);
        return -1;
    }
    if (!m->peak_given)
        m->peak_gflops = (double)m->sm_count * l->fp32_lanes_per_sm * 2.0 * m->clock_ghz;
    snprintf(m->what, sizeof m->what, "limits file %s (%s; keys not given from the table's %s)", name, l->name, base);
    return 0;
}

int kgc_machine_parse(const char *text, const char *name, int base_sm, kgc_machine *m, char *err, size_t errlen)
{
    unsigned char given[NKEYS] = {0};
    int given_line[NKEYS] = {0};
    /* Pass 1: `base` decides the starting point, wherever it stands. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && kgc_machine_from_table(base_sm, m) != 0) {
            snprintf(err, errlen, "%s: base: no table entry for sm_%d", name, base_sm);
            return -1;
        }
        const char *p = text;
        for (int lineno = 1; *p; lineno++) {
            size_t len = strcspn(p, "\n");
            char line[1024], where[600];
            if (len >= sizeof line) {
                snprintf(err, errlen, "%s:%d: line too long", name, lineno);
                return -1;
            }
            memcpy(line, p, len);
            line[len] = '\0';
            p += len + (p[len] == '\n');
            snprintf(where, sizeof where, "%s:%d", name, lineno);
            /* text only: a control character (a carriage return, an escape) would reach the terminal in the
             * report or in a message */
            for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)line[i];
                if ((c < 0x20 && c != '\t') || c == 0x7f) {
                    snprintf(err, errlen, "%s: control character 0x%02X in column %zu (a limits file is text: key = value lines)",
                             where, c, i + 1);
                    return -1;
                }
            }
            char *key, *val;
            size_t klen;
            int kind = split_line(line, &key, &klen, &val);
            if (kind == 0)
                continue;
            if (kind < 0) {
                snprintf(err, errlen, "%s: '%s' is not of the form key = value", where, line);
                return -1;
            }
            const limits_key *k = find_key(key, klen);
            if (!k) {
                size_t used = (size_t)snprintf(err, errlen, "%s: unknown key '%.*s' (known:", where, (int)klen, key);
                for (size_t i = 0; i < NKEYS && used < errlen; i++)
                    used += (size_t)snprintf(err + used, errlen - used, " %s", keys[i].name);
                if (used < errlen)
                    snprintf(err + used, errlen - used, ")");
                return -1;
            }
            size_t ki = (size_t)(k - keys);
            int is_base = k->type == K_BASE;
            if (pass == 0) {
                if (given[ki]) {
                    snprintf(err, errlen, "%s: %s given twice (first on line %d)", where, k->name, given_line[ki]);
                    return -1;
                }
                given[ki] = 1;
                given_line[ki] = lineno;
                if (is_base) {
                    const char *num = strncmp(val, "sm_", 3) == 0 ? val + 3 : val;
                    char *end;
                    long sm = strtol(num, &end, 10);
                    if (end == num || *end || !kgi_arch_limits((int)sm)) {
                        size_t used = (size_t)snprintf(err, errlen, "%s: base: '%s' is not an architecture of the table (known:",
                                                       where, val);
                        for (const kgi_limits *t = kgi_arch_table(); t->sm && used < errlen; t++)
                            used += (size_t)snprintf(err + used, errlen - used, " %s", t->name);
                        if (used < errlen)
                            snprintf(err + used, errlen - used, ")");
                        return -1;
                    }
                    base_sm = (int)sm;
                }
            } else if (!is_base && set_value(m, k, val, where, err, errlen) != 0) {
                return -1;
            }
        }
    }
    if (finish_machine(m, given, base_sm, name, err, errlen) != 0)
        return -1;
    m->from = KGC_SRC_FILE;
    return 0;
}

int kgc_machine_from_file(const char *path, int base_sm, kgc_machine *m, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read limits file '%s': %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(1 << 20);
    size_t n = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    int bad = !text || ferror(f) || !feof(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "cannot read limits file '%s': %s", path,
                 !text ? "out of memory" : "read error or larger than 1 MB");
        free(text);
        return -1;
    }
    text[n] = '\0';
    if (memchr(text, '\0', n)) {
        snprintf(err, errlen, "limits file '%s' is not text", path);
        free(text);
        return -1;
    }
    int rc = kgc_machine_parse(text, path, base_sm, m, err, errlen);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ figures */

void kgc_traffic_calc(const kgc_shape *s, int tile_m, int tile_n, int tile_k, kgc_traffic *t)
{
    double m = (double)s->m, n = (double)s->n, k = (double)s->k;
    long long bm = (s->m + tile_m - 1) / tile_m, bn = (s->n + tile_n - 1) / tile_n;
    t->flops = 2.0 * m * n * k;
    t->bytes_tiles = 4.0 * ((double)bn * m * k + (double)bm * k * n + m * n);
    t->bytes_once = 4.0 * (m * k + k * n + m * n);
    t->ai_tiles = t->flops / t->bytes_tiles;
    t->ai_once = t->flops / t->bytes_once;
    t->blocks = bm * bn;
    t->phases = (s->k + tile_k - 1) / tile_k;
}

double kgc_roof(const kgc_machine *m, double intensity)
{
    double mem = intensity * m->bandwidth_gbs;
    return mem < m->peak_gflops ? mem : m->peak_gflops;
}
