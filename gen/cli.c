/*
 * cli.c -- option parsing and helpers shared by the kgen subcommands.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "cli.h"
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

int kgc_report(kg_context *ctx, kg_status st, const char *what)
{
    const char *msg = ctx ? kg_last_error(ctx) : "";
    if (!msg || !msg[0])
        msg = kg_strerror(st);
    fprintf(stderr, "kgen: %s%s%s\n", what ? what : "", what ? ": " : "", msg);
    return (st == KG_ERR_CONFIG || st == KG_ERR_INVALID_ARG) ? KGC_USAGE : KGC_FAIL;
}

int kgc_open(kg_context **ctx, int device, const kgc_args *args)
{
    kg_status st = kg_context_open(ctx, device);
    if (st != KG_OK) {
        int rc = kgc_report(*ctx, st, device == KG_DEVICE_NONE ? "context" : "device");
        kg_context_close(*ctx);
        *ctx = NULL;
        return rc;
    }
    (void)args;
    return KGC_OK;
}

/* One name=value item of the configuration and where it came from. */
typedef struct item {
    char name[64];
    char value[64];
    char from[96];
} item;

typedef struct items {
    item v[128];
    int n;
} items;

static int add_item(items *it, const char *name, size_t nlen, const char *value, size_t vlen, const char *from)
{
    for (int i = 0; i < it->n; i++) {
        if (strlen(it->v[i].name) == nlen && strncmp(it->v[i].name, name, nlen) == 0) {
            fprintf(stderr, "kgen: %.*s given twice (%s and %s)\n", (int)nlen, name, it->v[i].from, from);
            return -1;
        }
    }
    if (it->n == (int)(sizeof it->v / sizeof *it->v) || nlen >= sizeof it->v[0].name ||
        vlen >= sizeof it->v[0].value) {
        fprintf(stderr, "kgen: %s: parameter name or value too long\n", from);
        return -1;
    }
    item *x = &it->v[it->n++];
    snprintf(x->name, sizeof x->name, "%.*s", (int)nlen, name);
    snprintf(x->value, sizeof x->value, "%.*s", (int)vlen, value);
    snprintf(x->from, sizeof x->from, "%s", from);
    return 0;
}

/* Whether the template declares a parameter called `name`. */
static int has_param(lua_State *L, const char *name)
{
    /* the template's params table is at the top of the stack */
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "name");
        int same = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), name) == 0;
        lua_pop(L, 2);
        if (same)
            return 1;
    }
    return 0;
}

/* A parameter's value is one token: no blanks, no '=' (it is pasted into
 * configuration text). */
static int value_ok(const char *opt, const char *v)
{
    if (!v[0] || strpbrk(v, " \t\n=")) {
        fprintf(stderr, "kgen: %s: bad value '%s'\n", opt, v);
        return 0;
    }
    return 1;
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
    int np = 0;
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
            TAKE(out->tmpl);
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
        if (kgc_int(label, num, 10, 1000, &sm) != 0)
            return KGC_USAGE;
        out->arch = (int)sm;
        kg_status st = kg_set_arch(ctx, out->arch);
        if (st != KG_OK)
            return kgc_report(ctx, st, "--arch");
    }
    if (out->template_dir) {
        struct stat sb;
        if (stat(out->template_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "kgen: --template-dir: '%s' is not a directory\n", out->template_dir);
            return KGC_USAGE;
        }
        kg_set_template_path(ctx, out->template_dir);
    }

    /* The template's parameter list decides which --NAME options exist. */
    char err[2048];
    lua_State *L = kgi_host_lua(ctx->host);
    int top = lua_gettop(L);
    kg_status st = kgi_host_push_template(ctx->host, out->tmpl, err, sizeof err);
    if (st != KG_OK) {
        fprintf(stderr, "kgen: %s\n", err);
        return st == KG_ERR_CONFIG ? KGC_USAGE : KGC_FAIL;
    }
    lua_getfield(L, -1, "params");
    items it = {.n = 0};
    int rc = KGC_OK;
    if (config) {
        for (const char *p = config; *p;) {
            p += strspn(p, " \t\n");
            if (!*p)
                break;
            size_t len = strcspn(p, " \t\n");
            const char *eq = memchr(p, '=', len);
            if (!eq || eq == p) {
                fprintf(stderr, "kgen: --config: '%.*s' is not of the form name=value\n", (int)len, p);
                rc = KGC_USAGE;
                goto done;
            }
            char from[96];
            snprintf(from, sizeof from, "--config %.*s", (int)(len < 60 ? len : 60), p);
            if (add_item(&it, p, (size_t)(eq - p), eq + 1, len - (size_t)(eq - p) - 1, from) != 0) {
                rc = KGC_USAGE;
                goto done;
            }
            p += len;
        }
    }
    if (tile) {
        long t;
        if (kgc_int("--tile", tile, 1, 512, &t) != 0) {
            rc = KGC_USAGE;
            goto done;
        }
        static const char *const dims[] = {"bm", "bn", "bk"};
        char from[64];
        snprintf(from, sizeof from, "--tile %ld", t);
        for (int d = 0; d < 3; d++) {
            if (!has_param(L, dims[d])) {
                fprintf(stderr, "kgen: --tile: template '%s' has no parameter %s\n", out->tmpl, dims[d]);
                rc = KGC_USAGE;
                goto done;
            }
            if (add_item(&it, dims[d], 2, tile, strlen(tile), from) != 0) {
                rc = KGC_USAGE;
                goto done;
            }
        }
    }
    for (int i = 0; i < np; i++) {
        const char *nm = pname[i] + 2;
        size_t nlen = strcspn(nm, "=");
        char nbuf[64];
        snprintf(nbuf, sizeof nbuf, "%.*s", (int)(nlen < 63 ? nlen : 63), nm);
        if (!has_param(L, nbuf)) {
            fprintf(stderr, "kgen: unknown option '--%s' (not an option of this command nor a parameter of template '%s'; see 'kgen params')\n",
                    nbuf, out->tmpl);
            rc = KGC_USAGE;
            goto done;
        }
        char opt[80], from[96];
        snprintf(opt, sizeof opt, "--%s", nbuf);
        snprintf(from, sizeof from, "--%s %s", nbuf, pval[i]);
        if (!value_ok(opt, pval[i]) || add_item(&it, nbuf, strlen(nbuf), pval[i], strlen(pval[i]), from) != 0) {
            rc = KGC_USAGE;
            goto done;
        }
    }
    /* --tile T means one output per thread unless tm/tn are given. */
    if (tile) {
        static const char *const reg[] = {"tm", "tn"};
        for (int d = 0; d < 2; d++) {
            int given = 0;
            for (int i = 0; i < it.n; i++)
                given |= strcmp(it.v[i].name, reg[d]) == 0;
            if (!given && has_param(L, reg[d]))
                add_item(&it, reg[d], 2, "1", 1, "--tile");
        }
    }
    out->nparam = it.n;
    size_t used = 0;
    for (int i = 0; i < it.n; i++) {
        int w = snprintf(out->config + used, sizeof out->config - used, "%s%s=%s", i ? " " : "", it.v[i].name,
                         it.v[i].value);
        if (w < 0 || (size_t)w >= sizeof out->config - used) {
            fprintf(stderr, "kgen: configuration too long\n");
            rc = KGC_USAGE;
            goto done;
        }
        used += (size_t)w;
    }
done:
    lua_settop(L, top);
    return rc;
}

/* Writes all of `len` bytes to fd; 0, or -1 with errno set. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* A path that names something other than a regular file (a character device
 * such as /dev/null or a terminal, a FIFO, /dev/stdout) is written in place:
 * replacing it would turn a device into a plain file. It is opened without
 * O_CREAT and O_TRUNC. A FIFO is opened without blocking: with no process
 * reading it, the write fails at once ("no process is reading it") rather
 * than waiting forever; once open, the write blocks as any writer to a pipe.
 * Returns 0 or -1 after printing the error, or 1 when the path turned out to
 * be a regular file after all (replaced since the caller's stat). */
static int write_in_place(const char *path, const struct stat *sb, const void *data, size_t len)
{
    if (S_ISDIR(sb->st_mode)) {
        fprintf(stderr, "kgen: cannot write '%s': it is a directory\n", path);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(sb->st_mode))
            fprintf(stderr, "kgen: cannot write '%s': it is a FIFO and no process is reading it\n", path);
        else
            fprintf(stderr, "kgen: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    struct stat now;
    if (fstat(fd, &now) == 0 && S_ISREG(now.st_mode)) {
        close(fd);
        return 1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || write_all(fd, data, len) != 0) {
        fprintf(stderr, "kgen: cannot write '%s': %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (close(fd) != 0 && errno != EINTR) {
        fprintf(stderr, "kgen: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int kgc_write_file(const char *path, const void *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            fprintf(stderr, "kgen: writing standard output: %s\n", strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        int rc = write_in_place(path, &sb, data, len);
        if (rc <= 0)
            return rc;
    }
    /* Write through a symbolic link to the file it names, and keep an
     * existing file's permissions; a new file honours the umask. */
    char *real = NULL;
    mode_t mode;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (!(real = realpath(path, NULL))) {
            fprintf(stderr, "kgen: cannot write '%s': %s\n", path, strerror(errno));
            return -1;
        }
        path = real;
    }
    if (stat(path, &sb) == 0) {
        mode = sb.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        fprintf(stderr, "kgen: out of memory\n");
        free(real);
        return -1;
    }
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "kgen: cannot create '%s': %s\n", path, strerror(errno));
        free(tmp);
        free(real);
        return -1;
    }
    int ok = write_all(fd, data, len) == 0;
    int saved = errno;
    if (ok && fchmod(fd, mode) != 0)
        ok = 0, saved = errno;
    if (close(fd) != 0 && ok)
        ok = 0, saved = errno;
    if (ok && rename(tmp, path) != 0)
        ok = 0, saved = errno;
    if (!ok) {
        fprintf(stderr, "kgen: cannot write '%s': %s\n", path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    free(real);
    return ok ? 0 : -1;
}
