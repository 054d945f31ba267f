/*
 * context.c -- contexts, the last-error text, status messages, rendering.
 *
 * A context owns everything a caller's kernels need: the Lua host, the
 * target's limits, the driver (when a device is open), the kernel caches
 * and the tuning database. No state is process-wide except the driver
 * library's handle (driver.c): libcuda.so.1 is opened once per process and
 * never closed, because unloading the driver after cuInit is unsafe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "runtime.h"
#include "tunedb.h"

static const char *const status_text[] = {
    [KG_OK] = "success",
    [KG_ERR_INVALID_ARG] = "invalid argument",
    [KG_ERR_CONFIG] = "invalid configuration",
    [KG_ERR_TEMPLATE] = "template error",
    [KG_ERR_SHAPE] = "shape breaks the kernel's precondition",
    [KG_ERR_NO_DRIVER] = "no CUDA driver (libcuda.so.1 not found)",
    [KG_ERR_NO_DEVICE] = "no such CUDA device",
    [KG_ERR_DRIVER] = "CUDA driver error",
    [KG_ERR_COMPILE] = "NVRTC compilation failed",
    [KG_ERR_RESOURCES] = "kernel exceeds the device's resources",
    [KG_ERR_CACHE] = "kernel cache error",
    [KG_ERR_DB] = "tuning database error",
    [KG_ERR_IO] = "I/O error",
    [KG_ERR_NOMEM] = "out of memory",
    [KG_ERR_WRONG] = "result disagrees with the reference",
    [KG_ERR_TIMEOUT] = "timed out",
};

const char *kg_strerror(kg_status status)
{
    if ((unsigned)status < sizeof status_text / sizeof *status_text && status_text[status])
        return status_text[status];
    return "unknown status";
}

kg_status kgi_fail_owned(kg_context *ctx, kg_status status, char *msg)
{
    if (!ctx) {
        free(msg);
        return status;
    }
    free(ctx->error);
    ctx->error = msg;
    return status;
}

kg_status kgi_fail(kg_context *ctx, kg_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return kgi_fail_owned(ctx, status, msg);
}

const char *kg_last_error(const kg_context *ctx)
{
    if (!ctx)
        return "no context";
    return ctx->error ? ctx->error : "";
}

unsigned long long kgi_hash(const void *data, size_t n, unsigned long long h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

char *kgi_read_stream(FILE *f, const char *what, const char *path, size_t max, size_t *len, char *err,
                      size_t errlen)
{
    const char *sp = what[0] ? " " : "";
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n > max) {
            snprintf(err, errlen, "%s%s'%s' is larger than %zu MiB", what, sp, path, max >> 20);
            free(buf);
            return NULL;
        }
        if (n == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    if (!buf || ferror(f)) {
        snprintf(err, errlen, "cannot read %s%s'%s': %s", what, sp, path, buf ? strerror(errno) : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

char *kgi_read_file(const char *what, const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s%s'%s': %s", what, what[0] ? " " : "", path, strerror(errno));
        return NULL;
    }
    char *buf = kgi_read_stream(f, what, path, max, len, err, errlen);
    fclose(f);
    return buf;
}

kg_status kg_context_open(kg_context **out, int device)
{
    if (!out)
        return KG_ERR_INVALID_ARG;
    kg_context *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx)
        return KG_ERR_NOMEM;
    ctx->device = KG_DEVICE_NONE;
    ctx->arch = 90;
    ctx->limits = *kgi_arch_limits(90);
    const char *v = getenv("KGEN_VERBOSE");
    ctx->verbose = v && v[0] && strcmp(v, "0") != 0;
    if (!(ctx->host = kgi_host_new()))
        return kgi_fail(ctx, KG_ERR_NOMEM, "cannot create the Lua state");
    const char *path = getenv("KGEN_TEMPLATE_PATH");
    if (path && kgi_host_set_path(ctx->host, path) != 0)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    kg_status st = kgi_cache_open(ctx);
    if (st != KG_OK)
        return st;
    if (device == KG_DEVICE_NONE)
        return KG_OK;
    if (device < 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "device ordinal %d is negative", device);
    return kgi_driver_open(ctx, device);
}

void kg_context_close(kg_context *ctx)
{
    if (!ctx)
        return;
    kgi_tunedb_close(ctx);
    kgi_catalogues_close(ctx);
    kgi_kernels_free(ctx);
    kgi_cache_close(ctx);
    kgi_driver_close(ctx);
    kgi_host_free(ctx->host);
    free(ctx->error);
    free(ctx);
}

kg_status kg_set_template_path(kg_context *ctx, const char *path)
{
    if (!ctx)
        return KG_ERR_INVALID_ARG;
    if (!path)
        path = getenv("KGEN_TEMPLATE_PATH");
    if (kgi_host_set_path(ctx->host, path) != 0)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    kgi_kernels_free(ctx); /* kernels may have come from the old path */
    return KG_OK;
}

kg_status kg_set_arch(kg_context *ctx, int sm)
{
    if (!ctx)
        return KG_ERR_INVALID_ARG;
    if (ctx->drv && sm != ctx->arch)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG,
                        "the context is open on a device of sm_%d; its architecture cannot be changed to sm_%d",
                        ctx->arch, sm);
    const kgi_limits *lim = kgi_arch_limits(sm);
    if (!lim) {
        char known[256] = "";
        for (const kgi_limits *l = kgi_arch_table(); l->sm; l++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", known[0] ? ", " : "", l->name);
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "unknown architecture sm_%d (known: %s)", sm, known);
    }
    ctx->arch = sm;
    ctx->limits = *lim;
    return KG_OK;
}

int kg_arch(const kg_context *ctx) { return ctx ? ctx->arch : 0; }

const kgi_limits *kgi_context_limits(kg_context *ctx) { return &ctx->limits; }

kg_status kg_render(kg_context *ctx, const char *tmpl, const char *config, kg_source **out)
{
    if (!ctx || !out)
        return KG_ERR_INVALID_ARG;
    char err[4096];
    kg_status st = kgi_host_render(ctx->host, tmpl, config, &ctx->limits, out, err, sizeof err);
    if (st != KG_OK)
        return kgi_fail(ctx, st, "%s", err);
    return KG_OK;
}

const char *kg_source_text(const kg_source *src, size_t *len)
{
    if (len)
        *len = src ? src->len : 0;
    return src ? src->text : NULL;
}

const char *kg_source_entry(const kg_source *src) { return src ? src->entry : NULL; }
const char *kg_source_config(const kg_source *src) { return src ? src->config : NULL; }

void kg_source_free(kg_source *src)
{
    if (!src)
        return;
    free(src->text);
    free(src);
}
