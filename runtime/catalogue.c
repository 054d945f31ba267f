/*
 * catalogue.c -- the catalogue format's one parser, and the catalogues a
 * context reads (see catalogue.h; the format: catalogue/README.md).
 *
 * The parser is strict: every rule of the format is checked, and the first
 * broken one is reported as "NAME:LINE: what was wrong". A catalogue is
 * trusted input once parsed: the model (pick.c) relies on what is checked
 * here (IDs in order, one time field per kernel, positive times, no
 * repeated shape).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "gen/config.h"
#include "runtime.h"

#define MAX_LINE 16384
#define MAX_FIELDS 1100 /* a time line's: 5 + one per kernel */
#define MAX_KERNELS (MAX_FIELDS - 5)
#define MAX_DIM 1000000000

static const char *const layouts[] = {"nn", "nt", "tn", "tt"};

const char *kgi_layout_name(int layout) { return layout >= 0 && layout < 4 ? layouts[layout] : "?"; }

int kgi_layout_index(const char *name)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, layouts[i]) == 0)
            return i;
    return -1;
}

int kgi_ld_class(int ld)
{
    return ld % 4 == 0 ? 4 : ld % 2 == 0 ? 2 : 1;
}

int kgi_natural_align(int layout, int m, int n, int k)
{
    return KGI_ALIGN(kgi_ld_class(layout >= 2 ? m : k), kgi_ld_class(layout % 2 ? k : n), kgi_ld_class(n));
}

int kgi_kernel_slices(const kgi_cat_kernel *k, int depth)
{
    if (k->kslice_depth > 0)
        return depth > k->kslice_depth ? (int)(((long long)depth + k->kslice_depth - 1) / k->kslice_depth) : 1;
    return k->kslices;
}

int kgi_catalogue_admits(const kgi_cat_kernel *k, int layout, int align)
{
    int a = KGI_ALIGN_A(align), b = KGI_ALIGN_B(align), op = k->needs_operand[layout];
    int allowed = op == 1 ? a : op == 2 ? b : a < b ? a : b;
    return k->needs[layout] <= allowed;
}

void kgi_geometry_needs(const kgi_geometry *g, int *needs, int *operand)
{
    int need = 1;
    if (!g->pack_multiple) {
        if ((int)g->ld_multiple > need)
            need = (int)g->ld_multiple;
        if ((int)g->align / 4 > need)
            need = (int)g->align / 4;
    }
    *needs = need > 4 ? 4 : need;
    *operand = *needs == 1 ? 0 : g->vec_operands == 1 ? 1 : g->vec_operands == 2 ? 2 : 0;
}

int kgi_catalogue_in_layout(const kgi_catalogue *c, int j, int layout)
{
    for (int r = 0; r < c->nrows; r++)
        if (c->rows[r].layout == layout && kgi_catalogue_time(c, r, j) > 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ parsing */

typedef struct parser {
    const char *name;
    int line;
    char *err;
    size_t errlen;
    kgi_catalogue *c;
    int kcap, rcap;
    int version;           /* the file's format version */
} parser;

static int fail(parser *p, const char *fmt, ...) KGI_PRINTF(2, 3);
static int fail(parser *p, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int used = snprintf(p->err, p->errlen, "%s:%d: ", p->name, p->line);
        if (used >= 0 && (size_t)used < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + used, p->errlen - (size_t)used, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* Splits `s` in place at spaces and tabs; returns the field count (up to
 * max + 1, so a caller sees that there were more). */
static int split(char *s, char **f, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            *s++ = '\0';
        if (!*s)
            break;
        if (n > max)
            break;
        f[n++] = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
    }
    return n;
}

/* A whole decimal integer in [lo, hi]. */
static int int_field(parser *p, const char *what, const char *s, long lo, long hi, int *out)
{
    int ok = s[0] >= '0' && s[0] <= '9';
    for (const char *q = s; ok && *q; q++)
        ok = *q >= '0' && *q <= '9';
    long v = 0;
    if (ok) {
        errno = 0;
        v = strtol(s, NULL, 10);
        ok = errno == 0;
    }
    if (!ok)
        return fail(p, "%s '%.40s' is not a whole number", what, s);
    if (v < lo || v > hi)
        return fail(p, "%s %ld is out of range (%ld to %ld)", what, v, lo, hi);
    *out = (int)v;
    return 0;
}

/* KSLICES: a count, or K/D for ceil(K / D) slices (a kernel that cuts K
 * into pieces of D, as many as K needs). */
static int kslices_field(parser *p, const char *text, kgi_cat_kernel *k)
{
    k->kslice_depth = 0;
    if (text[0] == 'K' && text[1] == '/') {
        k->kslices = 1;
        return int_field(p, "KSLICES' depth", text + 2, 1, 1 << 30, &k->kslice_depth);
    }
    return int_field(p, "KSLICES", text, 1, 65536, &k->kslices);
}

/* A measured kernel time is at least a nanosecond and at most 1000 s: the
 * model scales and divides times by each other (pick.c), and a value far
 * outside that (the catalogue fuzzer's 2e303) overflows its predictions. */
#define TIME_MIN_US 1e-3
#define TIME_MAX_US 1e9

/* A positive decimal ("12", "0.5", "1.5e3"): digits, an optional
 * fraction and exponent; no sign, no hex, no inf or nan; within
 * TIME_MIN_US .. TIME_MAX_US. */
static int time_field(parser *p, int kernel, const char *s, double *out)
{
    const char *q = s;
    int digits = 0;
    while (*q >= '0' && *q <= '9')
        q++, digits++;
    if (*q == '.')
        for (q++; *q >= '0' && *q <= '9'; q++)
            digits++;
    if (digits && (*q == 'e' || *q == 'E')) {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (!(*q >= '0' && *q <= '9'))
            digits = 0;
        while (*q >= '0' && *q <= '9')
            q++;
    }
    double v = digits && !*q ? strtod(s, NULL) : 0;
    if (!digits || *q)
        return fail(p, "kernel %d's time '%.40s' is neither a positive decimal (microseconds) nor '-'", kernel, s);
    if (!(v > 0) || !isfinite(v))
        return fail(p, "kernel %d's time %.40s is not positive and finite", kernel, s);
    if (v < TIME_MIN_US || v > TIME_MAX_US)
        return fail(p, "kernel %d's time %.40s is not a kernel time in microseconds (0.001 to 1e9)", kernel, s);
    *out = v;
    return 0;
}

/* The rest of a line after its key, as text (at least one character). */
static int rest_field(parser *p, const char *key, const char *rest, char *out, size_t len)
{
    if (!rest || !*rest)
        return fail(p, "'%s' needs a value", key);
    if (strlen(rest) >= len)
        return fail(p, "'%s' is too long (at most %zu characters)", key, len - 1);
    snprintf(out, len, "%s", rest);
    return 0;
}

int kgi_catalogue_date_check(const char *s, char *err, size_t errlen)
{
    int y, mo, d, n = 0;
    if (strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10 || s[4] != '-' ||
        s[7] != '-' || strspn(s, "0123456789-") != 10) {
        snprintf(err, errlen, "date '%.40s' is not YYYY-MM-DD", s);
        return -1;
    }
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 2000 || mo < 1 || mo > 12 || d < 1 || d > days[mo - 1] || (mo == 2 && d == 29 && !leap)) {
        snprintf(err, errlen, "date %s is not a real date", s);
        return -1;
    }
    return 0;
}

static int date_field(parser *p, const char *s, char *out, size_t len)
{
    char why[96];
    if (kgi_catalogue_date_check(s, why, sizeof why) != 0)
        return fail(p, "%s", why);
    snprintf(out, len, "%s", s);
    return 0;
}

/* Header keys, each once, before the first kernel line. */
enum { H_ARCH, H_SMS, H_DEVICE, H_DRIVER, H_DATE, H_COMMAND, H_COUNT };
static const char *const header_keys[H_COUNT] = {"arch", "sms", "device", "driver", "date", "command"};

static int header_line(parser *p, char *key, char *rest, int *seen)
{
    kgi_catalogue *c = p->c;
    int h = 0;
    while (h < H_COUNT && strcmp(key, header_keys[h]) != 0)
        h++;
    if (h == H_COUNT)
        return fail(p, "unknown key '%.40s' (expected arch, sms, device, driver, date, command, kernel or time)", key);
    if (seen[h])
        return fail(p, "'%s' given twice (first on line %d)", key, seen[h]);
    seen[h] = p->line;
    char *f[3];
    switch (h) {
    case H_ARCH:
    case H_SMS:
        if (split(rest, f, 1) != 1)
            return fail(p, "'%s' takes one number", key);
        return h == H_ARCH ? int_field(p, "arch", f[0], 10, 999, &c->arch)
                           : int_field(p, "sms", f[0], 1, 100000, &c->sms);
    case H_DEVICE:
        return rest_field(p, key, rest, c->device, sizeof c->device);
    case H_DRIVER:
        return rest_field(p, key, rest, c->driver, sizeof c->driver);
    case H_COMMAND:
        return rest_field(p, key, rest, c->command, sizeof c->command);
    default:
        if (split(rest, f, 1) != 1)
            return fail(p, "'date' takes one YYYY-MM-DD");
        return date_field(p, f[0], c->date, sizeof c->date);
    }
}

/* One alignment class of NEEDS: 4, 2 or 1, and A or B after it when the kernel's vector loads read only that
 * operand (4B). */
static int needs_field(parser *p, int id, const char *text, int *needs, int *operand)
{
    char v[8];
    size_t nl = strlen(text);
    snprintf(v, sizeof v, "%.7s", text);
    *operand = 0;
    if (nl == 2 && (v[1] == 'A' || v[1] == 'B')) {
        *operand = v[1] == 'A' ? 1 : 2;
        v[1] = '\0';
    }
    if (int_field(p, "NEEDS", v, 1, 4, needs))
        return -1;
    if (*needs == 3)
        return fail(p, "kernel %d: NEEDS is 4, 2 or 1 (got 3)", id);
    if (*needs == 1 && *operand)
        return fail(p, "kernel %d: NEEDS 1 binds no operand (got %s)", id, text);
    return 0;
}

/* kernel ID TEMPLATE NEEDS TILE_M TILE_N KSLICES PERSISTENT BPS LAUNCHES CONFIG... (version 1: no LAUNCHES) */
static int kernel_line(parser *p, char *rest)
{
    kgi_catalogue *c = p->c;
    char *f[9];
    /* the fixed fields; CONFIG is what follows them */
    int fixed = p->version >= 2 ? 9 : 8;
    char *q = rest;
    int nf = 0;
    while (nf < fixed) {
        while (*q == ' ' || *q == '\t')
            q++;
        if (!*q)
            break;
        f[nf++] = q;
        while (*q && *q != ' ' && *q != '\t')
            q++;
        if (*q)
            *q++ = '\0';
    }
    if (nf < fixed)
        return fail(p, "a kernel line needs ID TEMPLATE NEEDS TILE_M TILE_N KSLICES PERSISTENT BPS%s CONFIG...",
                    fixed == 9 ? " LAUNCHES" : "");
    while (*q == ' ' || *q == '\t')
        q++;
    if (c->nkernels >= MAX_KERNELS)
        return fail(p, "too many kernels (at most %d)", MAX_KERNELS);
    if (c->nkernels == p->kcap) {
        int cap = p->kcap ? 2 * p->kcap : 16;
        kgi_cat_kernel *k = realloc(c->kernels, (size_t)cap * sizeof *k);
        if (!k)
            return fail(p, "out of memory");
        c->kernels = k;
        p->kcap = cap;
    }
    kgi_cat_kernel *k = &c->kernels[c->nkernels];
    memset(k, 0, sizeof *k);
    k->line = p->line;
    if (int_field(p, "kernel ID", f[0], 1, MAX_KERNELS, &k->id))
        return -1;
    if (k->id != c->nkernels + 1)
        return fail(p, "kernel ID %d out of order (expected %d: IDs are 1, 2, 3 ... in order)", k->id,
                    c->nkernels + 1);
    if (strlen(f[1]) >= sizeof k->tmpl || !kgi_template_name_valid(f[1]))
        return fail(p, "kernel %d: '%.64s' is not a template name", k->id, f[1]);
    snprintf(k->tmpl, sizeof k->tmpl, "%s", f[1]);
    /* NEEDS: one class for every layout, or (version 3) one per layout, nn,nt,tn,tt */
    char *per[4] = {f[2], f[2], f[2], f[2]};
    int commas = 0;
    for (const char *s = f[2]; *s; s++)
        commas += *s == ',';
    if (commas && p->version < 3)
        return fail(p, "kernel %d: NEEDS '%.40s' gives one class per layout, which version 3 reads (the file is"
                       " version %d)", k->id, f[2], p->version);
    if (commas && commas != 3)
        return fail(p, "kernel %d: NEEDS gives one class, or four (nn,nt,tn,tt) separated by commas", k->id);
    for (int l = 1; commas && l < 4; l++) {
        per[l] = strchr(per[l - 1], ',');
        *per[l]++ = '\0';
    }
    for (int l = 0; l < 4; l++)
        if (needs_field(p, k->id, per[l], &k->needs[l], &k->needs_operand[l]))
            return -1;
    if (int_field(p, "TILE_M", f[3], 1, 65536, &k->tile_m) || int_field(p, "TILE_N", f[4], 1, 65536, &k->tile_n) ||
        kslices_field(p, f[5], k) ||
        int_field(p, "PERSISTENT", f[6], 0, 65536, &k->persistent) || int_field(p, "BPS", f[7], 1, 1024, &k->bps) ||
        (fixed == 9 && int_field(p, "LAUNCHES", f[8], 1, 4, &k->launches)))
        return -1;
    /* CONFIG: strict configuration text, without layout (the call's is added) */
    char cerr[256];
    kgi_config cfg;
    if (!*q)
        return fail(p, "kernel %d has no configuration", k->id);
    if (strlen(q) >= sizeof k->config)
        return fail(p, "kernel %d's configuration is too long (at most %zu characters)", k->id, sizeof k->config - 1);
    if (kgi_config_parse(&cfg, q, cerr, sizeof cerr) != 0)
        return fail(p, "kernel %d's configuration: %s", k->id, cerr);
    if (kgi_config_find(&cfg, "layout") >= 0)
        return fail(p, "kernel %d's configuration sets layout (the runtime adds the call's)", k->id);
    /* the text as written, blanks between items collapsed */
    if (kgi_config_format(&cfg, k->config, sizeof k->config) != 0)
        return fail(p, "kernel %d's configuration is too long", k->id);
    for (int j = 0; j < c->nkernels; j++)
        if (strcmp(c->kernels[j].tmpl, k->tmpl) == 0 && strcmp(c->kernels[j].config, k->config) == 0)
            return fail(p, "kernel %d repeats kernel %d (line %d)", k->id, j + 1, c->kernels[j].line);
    c->nkernels++;
    return 0;
}

/* time LAYOUT M N K T1 ... Tn */
static int time_line(parser *p, char *rest)
{
    kgi_catalogue *c = p->c;
    char *fp[MAX_FIELDS + 1];
    int nf = split(rest, fp, MAX_FIELDS);
    if (nf < 4)
        return fail(p, "a time line needs LAYOUT M N K and one time per kernel");
    if (nf != 4 + c->nkernels)
        return fail(p, "%d time fields for %d kernels (one per kernel, '-' where not measured)", nf - 4,
                    c->nkernels);
    if (c->nrows == p->rcap) {
        int cap = p->rcap ? 2 * p->rcap : 64;
        kgi_cat_row *r = realloc(c->rows, (size_t)cap * sizeof *r);
        if (!r)
            return fail(p, "out of memory");
        c->rows = r;
        double *t = realloc(c->time, (size_t)cap * (size_t)c->nkernels * sizeof *t);
        if (!t)
            return fail(p, "out of memory");
        c->time = t;
        p->rcap = cap;
    }
    kgi_cat_row *r = &c->rows[c->nrows];
    r->line = p->line;
    if ((r->layout = kgi_layout_index(fp[0])) < 0)
        return fail(p, "layout '%.40s' is not nn, nt, tn or tt", fp[0]);
    if (int_field(p, "M", fp[1], 1, MAX_DIM, &r->m) || int_field(p, "N", fp[2], 1, MAX_DIM, &r->n) ||
        int_field(p, "K", fp[3], 1, MAX_DIM, &r->k))
        return -1;
    for (int i = 0; i < c->nrows; i++) {
        const kgi_cat_row *o = &c->rows[i];
        if (o->layout == r->layout && o->m == r->m && o->n == r->n && o->k == r->k)
            return fail(p, "%s %dx%dx%d repeats line %d", fp[0], r->m, r->n, r->k, o->line);
    }
    double *t = &c->time[(size_t)c->nrows * (size_t)c->nkernels];
    int any = 0;
    for (int j = 0; j < c->nkernels; j++) {
        t[j] = 0;
        if (strcmp(fp[4 + j], "-") == 0)
            continue;
        if (time_field(p, j + 1, fp[4 + j], &t[j]))
            return -1;
        any = 1;
    }
    if (!any)
        return fail(p, "no kernel has a time for %s %dx%dx%d", fp[0], r->m, r->n, r->k);
    c->nrows++;
    return 0;
}

void kgi_catalogue_free(kgi_catalogue *c)
{
    if (!c)
        return;
    free(c->kernels);
    free(c->rows);
    free(c->time);
    free(c);
}

int kgi_catalogue_parse(const char *text, size_t len, const char *name, kgi_catalogue **out, char *err,
                        size_t errlen)
{
    parser p = {name ? name : "catalogue", 0, err, errlen, NULL, 0, 0, 0};
    *out = NULL;
    if (!(p.c = calloc(1, sizeof *p.c)))
        return fail(&p, "out of memory");
    kgi_catalogue *c = p.c;
    snprintf(c->name, sizeof c->name, "%s", p.name);
    /* 0: before the version line, 1: header, 2: kernels, 3: times */
    int stage = 0, seen[H_COUNT] = {0};
    char line[MAX_LINE + 1];
    size_t pos = 0;
    while (pos < len) {
        p.line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t n = end - pos;
        if (n > MAX_LINE) {
            fail(&p, "line longer than %d characters", MAX_LINE);
            goto bad;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = end + 1;
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)line[i];
            if (ch == '\r') {
                fail(&p, "carriage return (lines end with \\n only)");
                goto bad;
            }
            if ((ch < 32 && ch != '\t') || ch == 127) {
                fail(&p, "control character 0x%02x", ch);
                goto bad;
            }
        }
        if (line[0] == '#')
            continue;
        char *s = line + strspn(line, " \t");
        if (!*s)
            continue;
        /* the key, then the rest of the line without its surrounding blanks */
        char *key = s, *rest = s + strcspn(s, " \t");
        if (*rest)
            *rest++ = '\0';
        rest += strspn(rest, " \t");
        for (size_t e = strlen(rest); e > 0 && (rest[e - 1] == ' ' || rest[e - 1] == '\t'); e--)
            rest[e - 1] = '\0';
        if (stage == 0) {
            char *f[2];
            if (strcmp(key, "kgen-catalogue") != 0) {
                fail(&p, "expected 'kgen-catalogue %d' first, got '%.40s'", KGI_CATALOGUE_VERSION, key);
                goto bad;
            }
            int v;
            if (split(rest, f, 1) != 1) {
                fail(&p, "'kgen-catalogue' takes one version number");
                goto bad;
            }
            if (int_field(&p, "version", f[0], 0, 1000000, &v) != 0)
                goto bad;
            if (v < 1 || v > KGI_CATALOGUE_VERSION) {
                fail(&p, "format version %d; this kgen reads versions 1 to %d", v, KGI_CATALOGUE_VERSION);
                goto bad;
            }
            p.version = v;
            stage = 1;
        } else if (strcmp(key, "kernel") == 0) {
            if (stage == 3) {
                fail(&p, "a kernel line after the first time line (kernels come first)");
                goto bad;
            }
            for (int h = 0; h < H_COUNT; h++)
                if (!seen[h]) {
                    fail(&p, "the header has no '%s' (every header key comes before the kernels)", header_keys[h]);
                    goto bad;
                }
            stage = 2;
            if (kernel_line(&p, rest))
                goto bad;
        } else if (strcmp(key, "time") == 0) {
            if (stage < 2) {
                fail(&p, "a time line before any kernel line");
                goto bad;
            }
            stage = 3;
            if (time_line(&p, rest))
                goto bad;
        } else if (stage >= 2) {
            fail(&p, "'%.40s' after the kernels (only kernel and time lines follow the header)", key);
            goto bad;
        } else if (header_line(&p, key, rest, seen)) {
            goto bad;
        }
    }
    p.line++;
    if (stage == 0)
        fail(&p, "empty: no 'kgen-catalogue %d' line", KGI_CATALOGUE_VERSION);
    else if (stage < 2)
        fail(&p, "no kernel lines");
    else if (stage < 3)
        fail(&p, "no time lines");
    else {
        /* the fastest streaming any kernel measured: a floor for predictions (pick.c) */
        for (int r = 0; r < c->nrows; r++)
            for (int j = 0; j < c->nkernels; j++) {
                const kgi_cat_row *w = &c->rows[r];
                double t = c->time[(size_t)r * c->nkernels + j];
                double bytes = 4.0 * ((double)w->m * w->k + (double)w->k * w->n + (double)w->m * w->n);
                if (t > 0 && bytes / t > c->bytes_per_us)
                    c->bytes_per_us = bytes / t;
                /* the fastest call of one launch: the host's launch, a floor per launch (pick.c) */
                if (t > 0 && c->kernels[j].launches == 1 && (c->launch_us == 0 || t < c->launch_us))
                    c->launch_us = t;
            }
        *out = c;
        return 0;
    }
bad:
    kgi_catalogue_free(c);
    return -1;
}

/* ------------------------------------------------------------ a context's catalogues */

struct kgi_catset {
    int tried;
    kgi_catalogue **list;  /* KGEN_CATALOGUE's first, then the embedded ones */
    int n;
    char error[1100];      /* KGEN_CATALOGUE's problem ("" when none) */
    kg_status status;
};

void kgi_catalogues_close(kg_context *ctx)
{
    if (!ctx || !ctx->catalogues)
        return;
    for (int i = 0; i < ctx->catalogues->n; i++)
        kgi_catalogue_free(ctx->catalogues->list[i]);
    free(ctx->catalogues->list);
    free(ctx->catalogues);
    ctx->catalogues = NULL;
}

static int add(struct kgi_catset *s, kgi_catalogue *c)
{
    kgi_catalogue **l = realloc(s->list, (size_t)(s->n + 1) * sizeof *l);
    if (!l) {
        kgi_catalogue_free(c);
        return -1;
    }
    s->list = l;
    s->list[s->n++] = c;
    return 0;
}

static kg_status catset(kg_context *ctx, struct kgi_catset **out)
{
    if (!ctx->catalogues && !(ctx->catalogues = calloc(1, sizeof *ctx->catalogues)))
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    struct kgi_catset *s = ctx->catalogues;
    *out = s;
    if (s->tried)
        return s->status == KG_OK ? KG_OK : kgi_fail(ctx, s->status, "%s", s->error);
    s->tried = 1;
    char err[1024];
    const char *env = getenv("KGEN_CATALOGUE");
    if (env && env[0]) {
        size_t len;
        char *text = kgi_read_file("KGEN_CATALOGUE", env, (size_t)256 << 20, &len, err, sizeof err);
        kgi_catalogue *c = NULL;
        if (!text || kgi_catalogue_parse(text, len, env, &c, err, sizeof err) != 0) {
            free(text);
            snprintf(s->error, sizeof s->error, "KGEN_CATALOGUE: %s", err);
            s->status = text ? KG_ERR_CONFIG : KG_ERR_IO;
            return kgi_fail(ctx, s->status, "%s", s->error);
        }
        free(text);
        if (add(s, c) != 0)
            return kgi_fail(ctx, (s->status = KG_ERR_NOMEM), "%s", strcpy(s->error, "out of memory"));
    }
    for (const kgi_embedded *e = kgi_embedded_catalogues; e->module; e++) {
        kgi_catalogue *c;
        /* a broken embedded file fails the build's tests (runtime.catalogue),
         * so it never ships; were one to, it is left out here */
        if (kgi_catalogue_parse(e->text, e->len, e->path, &c, err, sizeof err) != 0)
            continue;
        if (add(s, c) != 0)
            return kgi_fail(ctx, (s->status = KG_ERR_NOMEM), "%s", strcpy(s->error, "out of memory"));
    }
    return KG_OK;
}

kg_status kgi_catalogue_for(kg_context *ctx, int arch, const kgi_catalogue **out)
{
    *out = NULL;
    struct kgi_catset *s;
    kg_status st = catset(ctx, &s);
    if (st != KG_OK)
        return st;
    for (int i = 0; i < s->n; i++)
        if (s->list[i]->arch == arch) {
            *out = s->list[i];
            break;
        }
    return KG_OK;
}

kg_status kgi_catalogue_nearest(kg_context *ctx, int arch, const kgi_catalogue **out)
{
    *out = NULL;
    struct kgi_catset *s;
    kg_status st = catset(ctx, &s);
    if (st != KG_OK)
        return st;
    const kgi_catalogue *older = NULL, *newer = NULL;
    for (int i = 0; i < s->n; i++) {
        const kgi_catalogue *c = s->list[i];
        if (c->arch <= arch && (!older || c->arch > older->arch))
            older = c;
        if (c->arch > arch && (!newer || c->arch < newer->arch))
            newer = c;
    }
    *out = older ? older : newer;
    return KG_OK;
}
