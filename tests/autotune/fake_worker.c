/*
 * fake_worker.c -- a stand-in for `kgen tune --worker` (test_resume.c), so
 * that the tuner's flow around its GPU workers runs without a GPU: says
 * hello as an sm_90 device ("kgen fake GPU", the architecture table's
 * figures), appends "probe" or "worker" to the file $KGEN_FAKE_LOG, and
 * answers every EVAL and FINAL request with an ok result whose time
 * depends only on the configuration's text.
 *
 *   fake_worker tune --worker FD DEVICE TEMPLATE_PATH [probe]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune/worker.h"

static int io(int fd, void *buf, size_t n, int out)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = out ? write(fd, (char *)buf + done, n - done) : read(fd, (char *)buf + done, n - done);
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[2], "--worker") != 0)
        return 2;
    int fd = atoi(argv[3]), probe = argc > 6 && strcmp(argv[6], "probe") == 0;
    const char *log = getenv("KGEN_FAKE_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", probe ? "probe" : "worker");
        fclose(f);
    }
    kgi_whello hello;
    memset(&hello, 0, sizeof hello);
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK || kg_device_query(ctx, KG_DEVICE_NONE, &hello.info) != KG_OK)
        return 3;
    kg_context_close(ctx);
    snprintf(hello.info.name, sizeof hello.info.name, "kgen fake GPU");
    hello.limits = *kgi_arch_limits(90);
    hello.device_count = 1;
    if (io(fd, &hello, sizeof hello, 1) != 0 || probe)
        return 0;
    for (kgi_wreq q; io(fd, &q, sizeof q, 0) == 0 && q.op != KGI_WOP_QUIT;) {
        kgi_wmsg m;
        memset(&m, 0, sizeof m);
        m.type = KGI_WMSG_RESULT;
        m.res.outcome = KGI_OUT_OK;
        m.res.time_ms = 1.0 + (double)(kgi_hash(q.config, strlen(q.config), KGI_HASH_SEED) % 1000) / 1000.0;
        m.res.time_min_ms = m.res.time_max_ms = m.res.time_ms;
        m.res.reps = 10;
        m.res.tflops = 2.0 * q.m * q.n * q.k / (m.res.time_ms * 1e9);
        if (io(fd, &m, sizeof m, 1) != 0)
            return 1;
    }
    return 0;
}
