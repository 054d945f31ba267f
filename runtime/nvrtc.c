/*
 * nvrtc.c -- compiling generated CUDA to CUBIN with NVRTC.
 *
 * We compile straight to CUBIN for one sm_XY, never PTX: ptxas then runs at
 * compile time, so resource overflows surface here (without a GPU) and the
 * `-v` report gives registers, spills, stack and shared memory, which the
 * tuner prunes on before anything is launched. NVRTC is thread-safe; so is
 * this file (no shared state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

#include "internal.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int kgi_nvrtc_version(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return 0;
    return major * 1000 + minor * 10;
}

int kgi_nvrtc_supports(int arch, char *why, size_t why_len)
{
    int n = 0, list[128];
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n < 1 || n > 128 ||
        nvrtcGetSupportedArchs(list) != NVRTC_SUCCESS)
        return 1; /* unknown: let the compile say */
    for (int i = 0; i < n; i++)
        if (list[i] == arch)
            return 1;
    int v = kgi_nvrtc_version();
    snprintf(why, why_len, "NVRTC %d.%d does not compile for sm_%d (it compiles for sm_%d to sm_%d)", v / 1000,
             v % 1000 / 10, arch, list[0], list[n - 1]);
    return 0;
}

/* -default-device is not needed (kernels are explicit); --std is NVRTC's
 * default. The options are part of the cache key: keep them in one place. */
#define OPT_COUNT 3
static void options(int arch, char archopt[32], const char *opts[OPT_COUNT])
{
    snprintf(archopt, 32, "--gpu-architecture=sm_%d", arch);
    opts[0] = archopt;
    opts[1] = "--ptxas-options=-v";
    opts[2] = "--fmad=true";
}

const char *kgi_nvrtc_options_text(int arch)
{
    static _Thread_local char text[128];
    char archopt[32];
    const char *opts[OPT_COUNT];
    options(arch, archopt, opts);
    snprintf(text, sizeof text, "%s %s %s", opts[0], opts[1], opts[2]);
    return text;
}

/* Finds `key` in s and reads the integer just before it ("40 registers"). */
static int number_before(const char *s, const char *key, long *out)
{
    const char *k = strstr(s, key);
    if (!k)
        return 0;
    const char *p = k;
    while (p > s && p[-1] == ' ')
        p--;
    const char *end = p;
    while (p > s && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == end)
        return 0;
    *out = strtol(p, NULL, 10);
    return 1;
}

void kgi_parse_ptxas(const char *log, kg_compile_info *info)
{
    /* One kernel per program; read each "Used" and "stack frame" line. */
    for (const char *line = log; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        long v;
        if (strstr(buf, "Used ")) {
            if (number_before(buf, "registers", &v))
                info->registers = (int)v;
            if (number_before(buf, "bytes smem", &v))
                info->smem_static = (size_t)v;
        }
        if (strstr(buf, "stack frame")) {
            if (number_before(buf, "bytes stack frame", &v))
                info->stack_bytes = (int)v;
            if (number_before(buf, "bytes spill stores", &v))
                info->spill_stores = (int)v;
            if (number_before(buf, "bytes spill loads", &v))
                info->spill_loads = (int)v;
        }
        line = nl ? nl + 1 : NULL;
    }
}

static char *dupf(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

kg_status kgi_nvrtc_compile(const char *src, const char *name, int arch, kgi_nvrtc_result *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    char why[160];
    if (!kgi_nvrtc_supports(arch, why, sizeof why)) {
        *err = dupf("%s%s", why, NULL);
        return KG_ERR_COMPILE;
    }
    double t0 = now_ms();
    nvrtcProgram prog;
    nvrtcResult rc = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
    if (rc != NVRTC_SUCCESS) {
        *err = dupf("nvrtcCreateProgram: %s%s", nvrtcGetErrorString(rc), NULL);
        return KG_ERR_COMPILE;
    }
    char archopt[32];
    const char *opts[OPT_COUNT];
    options(arch, archopt, opts);
    nvrtcResult crc = nvrtcCompileProgram(prog, OPT_COUNT, opts);
    size_t loglen = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && (log = malloc(loglen + 1))) {
        if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
            log[0] = '\0';
        log[loglen] = '\0';
    }
    kg_status st = KG_OK;
    if (crc != NVRTC_SUCCESS) {
        *err = dupf("NVRTC could not compile %s for the target:\n%s", name, log ? log : "(no log)");
        st = KG_ERR_COMPILE;
        goto done;
    }
    size_t size = 0;
    if ((rc = nvrtcGetCUBINSize(prog, &size)) != NVRTC_SUCCESS || size == 0) {
        *err = dupf("nvrtcGetCUBINSize: %s%s", nvrtcGetErrorString(rc), NULL);
        st = KG_ERR_COMPILE;
        goto done;
    }
    if (!(out->cubin = malloc(size))) {
        st = KG_ERR_NOMEM;
        goto done;
    }
    if ((rc = nvrtcGetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS) {
        *err = dupf("nvrtcGetCUBIN: %s%s", nvrtcGetErrorString(rc), NULL);
        free(out->cubin);
        out->cubin = NULL;
        st = KG_ERR_COMPILE;
        goto done;
    }
    out->cubin_size = size;
    out->info.cubin_size = size;
    snprintf(out->info.arch, sizeof out->info.arch, "sm_%d", arch);
    if (log)
        kgi_parse_ptxas(log, &out->info);
    out->info.compile_ms = now_ms() - t0;
    out->log = log;
    log = NULL;
done:
    free(log);
    nvrtcDestroyProgram(&prog);
    return st;
}

void kgi_nvrtc_result_free(kgi_nvrtc_result *r)
{
    if (!r)
        return;
    free(r->cubin);
    free(r->log);
    memset(r, 0, sizeof *r);
}
