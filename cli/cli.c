/*
 * cli.c -- option parsing and helpers shared by the kgen subcommands.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "common/write_file.h"
#include "gen/config.h"
#include "runtime/catalogue.h"
#include "runtime/internal.h"

int kgc_int(const char *opt, const char *text, long lo, long hi, long *out)
{
    if (!text || !text[0]) {
        fprintf(stderr, "kgen: %s: missing value\n", opt);
        return -1;
    }
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || end == text) {
        fprintf(stderr, "kgen: %s: '%s' is not an integer\n", opt, text);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "kgen: %s must be %ld..%ld (got '%s')\n", opt, lo, hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

int kgc_real(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    double v = text ? strtod(text, &end) : 0;
    if (!text || !text[0] || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "kgen: %s must be a number in %g..%g (got '%s')\n", opt, lo, hi, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

const char *kgc_template_path(const kgc_args *args)
{
    const char *path = args->template_dir ? args->template_dir : getenv("KGEN_TEMPLATE_PATH");
    return path && path[0] ? path : NULL;
}

int kgc_layout(const char *opt, const char *text)
{
    if (kgi_layout_index(text) >= 0)
        return 0;
    fprintf(stderr, "kgen: %s must be nn, nt, tn or tt (got '%s')\n", opt, text ? text : "");
    return -1;
}

int kgc_report(kg_context *ctx, kg_status st, const char *what)
{
    const char *msg = ctx ? kg_last_error(ctx) : "";
    if (!msg || !msg[0])
        msg = kg_strerror(st);
    fprintf(stderr, "kgen: %s%s%s\n", what ? what : "", what ? ": " : "", msg);
    return (st == KG_ERR_CONFIG || st == KG_ERR_INVALID_ARG) ? KGC_USAGE : KGC_FAIL;
}

/* Points the context at the template directory and architecture the
 * options chose. Reports and returns an exit code != 0 on failure. */
static int apply_args(kg_context *ctx, const kgc_args *args)
{
    if (args->arch) {
        kg_status st = kg_set_arch(ctx, args->arch);
        if (st != KG_OK)
            return kgc_report(ctx, st, "--arch");
    }
    if (args->template_dir)
        kg_set_template_path(ctx, args->template_dir);
    return KGC_OK;
}

int kgc_open(kg_context **ctx, int device, const kgc_args *args)
{
    kg_status st = kg_context_open(ctx, device);
    int rc = st == KG_OK ? KGC_OK : kgc_report(*ctx, st, device == KG_DEVICE_NONE ? "context" : "device");
    if (rc == KGC_OK && args)
        rc = apply_args(*ctx, args);
    if (rc != KGC_OK) {
        kg_context_close(*ctx);
        *ctx = NULL;
    }
    return rc;
}

/* The configuration the options build, and where each of its items came
 * from (from[i] for cfg->param[i]), for the message when one is repeated. */
typedef struct items {
    kgi_config cfg;
    char from[KGI_CONFIG_MAX][96];
} items;

/* `from` says where the item came from ("--tile 32"), `opt` which option
 * gave its value ("--tile"). */
static int add_item(items *it, const char *name, const char *value, const char *from, const char *opt)
{
    int i = kgi_config_find(&it->cfg, name);
    if (i >= 0) {
        fprintf(stderr, "kgen: %s given twice (%s and %s)\n", name, it->from[i], from);
        return -1;
    }
    char err[256];
    if (kgi_config_set(&it->cfg, name, value, err, sizeof err) != 0) {
        size_t n = strlen(name); /* "bm: missing value" from --bm: "--bm: missing value" */
        fprintf(stderr, "kgen: %s: %s\n", opt, strncmp(err, name, n) == 0 && err[n] == ':' ? err + n + 2 : err);
        return -1;
    }
    snprintf(it->from[it->cfg.n - 1], sizeof it->from[0], "%s", from);
    return 0;
}

/* Whether the template declares a parameter called `name`. */
static int has_param(const kgi_template_info *info, const char *name)
{
    return kgi_template_param(info, name) >= 0;
}

/* "-x", "--name": an option, so not the value of the one before it; "-4"
 * (a negative number) and "-" (standard output) are values. */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9');
}

int kgc_parse(kg_context *ctx, int argc, char **argv, const kgc_opt *own, int max_positional, kgc_args *out)
{
    memset(out, 0, sizeof *out);
    out->tmpl = "matmul";
    const char *config = NULL, *tile = NULL, *arch = NULL;
    const char *pname[64], *pval[64];
    int np = 0, tmpl_given = 0;
    unsigned char seen[64] = {0}; /* own options with a value given so far: each once */
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        const char *inl = NULL; /* value given as --opt=value */
        char name[128];
        if (a[0] == '-' && a[1] == '-' && strchr(a, '=')) {
            size_t n = (size_t)(strchr(a, '=') - a);
            if (n >= sizeof name)
                n = sizeof name - 1;
            snprintf(name, sizeof name, "%.*s", (int)n, a);
            inl = strchr(a, '=') + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        if (a[0] != '-' || !a[1]) {
            if (out->npositional >= max_positional) {
                fprintf(stderr, "kgen: unexpected argument '%s'\n", a);
                return KGC_USAGE;
            }
            out->positional[out->npositional++] = a;
            continue;
        }
#define TAKE(dst)                                                                                  \
    do {                                                                                           \
        const char *v_ = inl ? inl : (i + 1 < argc && !is_option(argv[i + 1]) ? argv[++i] : NULL); \
        if (!v_) {                                                                                 \
            fprintf(stderr, "kgen: %s needs a value\n", name);                                     \
            return KGC_USAGE;                                                                      \
        }                                                                                          \
        (dst) = v_;                                                                                \
    } while (0)
        const kgc_opt *o = own;
        for (; o && o->name; o++)
            if (strcmp(name, o->name) == 0 || (o->alias && strcmp(name, o->alias) == 0))
                break;
        if (o && o->name) {
            size_t at = (size_t)(o - own);
            if (at < sizeof seen && seen[at]++) {
                fprintf(stderr, "kgen: %s given twice\n", o->name);
                return KGC_USAGE;
            }
            if (o->has_arg) {
                TAKE(*o->value);
                if (!(*o->value)[0]) { /* no command option takes an empty value */
                    fprintf(stderr, "kgen: %s: empty value\n", name);
                    return KGC_USAGE;
                }
            } else if (inl) {
                fprintf(stderr, "kgen: %s takes no value\n", name);
                return KGC_USAGE;
            } else {
                *o->value = "1";
            }
        } else if (strcmp(name, "--template") == 0) {
            if (tmpl_given++) {
                fprintf(stderr, "kgen: --template given twice\n");
                return KGC_USAGE;
            }
            TAKE(out->tmpl);
            out->tmpl_given = 1;
        } else if (strcmp(name, "--template-dir") == 0) {
            if (out->template_dir) {
                fprintf(stderr, "kgen: --template-dir given twice\n");
                return KGC_USAGE;
            }
            TAKE(out->template_dir);
        } else if (strcmp(name, "--arch") == 0) {
            if (arch) {
                fprintf(stderr, "kgen: --arch given twice\n");
                return KGC_USAGE;
            }
            TAKE(arch);
        } else if (strcmp(name, "--config") == 0) {
            if (config) {
                fprintf(stderr, "kgen: --config given twice\n");
                return KGC_USAGE;
            }
            TAKE(config);
        } else if (strcmp(name, "--tile") == 0) {
            if (tile) {
                fprintf(stderr, "kgen: --tile given twice\n");
                return KGC_USAGE;
            }
            TAKE(tile);
        } else if (name[0] == '-' && name[1] == '-' && name[2]) {
            if (np == (int)(sizeof pname / sizeof *pname)) {
                fprintf(stderr, "kgen: too many options\n");
                return KGC_USAGE;
            }
            pname[np] = a;
            if (!inl && !(i + 1 < argc && !is_option(argv[i + 1]))) {
                fprintf(stderr, "kgen: %s needs a value, or is no option of this command ('kgen help COMMAND';"
                                " template parameters: 'kgen params')\n", name);
                return KGC_USAGE;
            }
            TAKE(pval[np]);
            np++;
        } else {
            fprintf(stderr, "kgen: unknown option '%s'\n", a);
            return KGC_USAGE;
        }
#undef TAKE
    }

    if (arch) {
        long sm;
        const char *num = strncmp(arch, "sm_", 3) == 0 ? arch + 3 : arch;
        char label[] = "--arch";
        if (kgc_int(label, num, KGI_ARCH_MIN, KGI_ARCH_MAX, &sm) != 0)
            return KGC_USAGE;
        out->arch = (int)sm;
    }
    if (out->template_dir) {
        struct stat sb;
        if (stat(out->template_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "kgen: --template-dir: '%s' is not a directory\n", out->template_dir);
            return KGC_USAGE;
        }
    }
    int rc = apply_args(ctx, out);
    if (rc != KGC_OK)
        return rc;

    /* The template's parameter list decides which --NAME options exist. */
    char err[2048];
    kgi_template_info info;
    kg_status st = kgi_host_template_info(ctx->host, out->tmpl, &info, err, sizeof err);
    if (st != KG_OK) {
        fprintf(stderr, "kgen: %s\n", err);
        return st == KG_ERR_CONFIG ? KGC_USAGE : KGC_FAIL;
    }
    items it;
    kgi_config_init(&it.cfg);
    if (config) {
        kgi_config given;
        if (kgi_config_parse(&given, config, err, sizeof err) != 0) {
            fprintf(stderr, "kgen: --config: %s\n", err);
            return KGC_USAGE;
        }
        for (int i = 0; i < given.n; i++) {
            char from[96];
            snprintf(from, sizeof from, "--config %.30s=%.20s", given.param[i].name, given.param[i].value);
            if (add_item(&it, given.param[i].name, given.param[i].value, from, "--config") != 0)
                return KGC_USAGE;
        }
    }
    if (tile) {
        long t;
        if (kgc_int("--tile", tile, 1, 512, &t) != 0)
            return KGC_USAGE;
        static const char *const dims[] = {"bm", "bn", "bk"};
        char from[64];
        snprintf(from, sizeof from, "--tile %ld", t);
        for (int d = 0; d < 3; d++) {
            if (!has_param(&info, dims[d])) {
                fprintf(stderr, "kgen: --tile: template '%s' has no parameter %s\n", out->tmpl, dims[d]);
                return KGC_USAGE;
            }
            if (add_item(&it, dims[d], tile, from, "--tile") != 0)
                return KGC_USAGE;
        }
    }
    for (int i = 0; i < np; i++) {
        const char *nm = pname[i] + 2;
        size_t nlen = strcspn(nm, "=");
        char nbuf[64];
        snprintf(nbuf, sizeof nbuf, "%.*s", (int)(nlen < 63 ? nlen : 63), nm);
        if (!has_param(&info, nbuf)) {
            fprintf(stderr, "kgen: unknown option '--%s' (not an option of this command nor a parameter of template '%s'; see 'kgen params')\n",
                    nbuf, out->tmpl);
            return KGC_USAGE;
        }
        char opt[80], from[96];
        snprintf(opt, sizeof opt, "--%s", nbuf);
        snprintf(from, sizeof from, "--%.50s %.40s", nbuf, pval[i]);
        if (add_item(&it, nbuf, pval[i], from, opt) != 0)
            return KGC_USAGE;
    }
    /* --tile T means one output per thread unless tm/tn are given. */
    if (tile) {
        static const char *const reg[] = {"tm", "tn"};
        for (int d = 0; d < 2; d++) {
            if (has_param(&info, reg[d]) && kgi_config_find(&it.cfg, reg[d]) < 0 &&
                add_item(&it, reg[d], "1", "--tile", "--tile") != 0)
                return KGC_USAGE;
        }
    }
    out->nparam = it.cfg.n;
    if (kgi_config_format(&it.cfg, out->config, sizeof out->config) != 0) {
        fprintf(stderr, "kgen: configuration too long\n");
        return KGC_USAGE;
    }
    return KGC_OK;
}

/* The rules for output files are common/write_file.c's, shared with the
 * bench/ programs; these give them kgen's name. */
int kgc_not_input(const char *what, const char *output, const char *input)
{
    return kgw_not_input("kgen", what, output, input);
}

int kgc_write_file(const char *path, const void *data, size_t len)
{
    return kgw_write_file("kgen", path, data, len);
}
