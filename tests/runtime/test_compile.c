/*
 * test_compile.c -- kg_compile: configurations to CUBIN through NVRTC for
 * several architectures, without a GPU (runtime/compile.c, cache.c).
 *
 * Every configuration must compile for every architecture whose limits it
 * fits, report registers and shared memory that agree with what the
 * template declared, and give a CUBIN (an ELF image) of the reported size.
 * A configuration a smaller part cannot hold is refused by check() for that
 * architecture only; a compile error carries NVRTC's whole log.
 *
 * argv[1]: the directory of the test templates (broken.lua).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "testutil.h"

static const char *const configs[] = {
    "bm=16 bn=16 bk=16 tm=1 tn=1 pad=0",
    "bm=32 bn=32 bk=32 tm=1 tn=1 pad=1 layout=tn",
    "bm=64 bn=64 bk=16 tm=4 tn=4 pad=4 vec=4 bounds=0",
    "bm=128 bn=128 bk=8 tm=8 tn=8 pad=4 vec=4 bounds=0 layout=nt",
    "bm=32 bn=32 bk=32 tm=2 tn=2 pad=1 vec=4 layout=tt",
    "bm=128 bn=64 bk=16 tm=8 tn=4 vec=2 layout=nt",
    "bm=48 bn=48 bk=12 tm=3 tn=3 pad=3",
    "bm=33 bn=31 bk=5 tm=3 tn=1 pad=0 layout=tt",
    "bm=96 bn=64 bk=8 tm=6 tn=8 vec=2 layout=nt",
    "bm=1 bn=1 bk=1 tm=1 tn=1 pad=0",
    "bm=256 bn=128 bk=32 tm=16 tn=8 vec=4 pad=1", /* 50 KB: dynamic shared memory */
    "bm=128 bn=128 bk=64 tm=8 tn=8 vec=4 pad=4 layout=tn", /* 68 KB */
};
static const int archs[] = {75, 80, 90};

/* Shared memory the matmul template gives a configuration: 4 (bm (bk+pad) + bk (bn+pad)). */
static size_t smem_of(kg_context *ctx, const char *config)
{
    kg_source *src;
    if (kg_render(ctx, NULL, config, &src) != KG_OK)
        return 0;
    size_t s = src->geo.smem_static + src->geo.smem_dynamic;
    kg_source_free(src);
    return s;
}

static void test_configs(kg_context *ctx)
{
    int compiled = 0, refused = 0;
    for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
        const kgi_limits *lim = kgi_arch_limits(archs[a]);
        for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
            size_t smem = smem_of(ctx, configs[i]);
            CHECK(smem > 0);
            kg_cubin *cubin = NULL;
            kg_status st = kg_compile(ctx, NULL, configs[i], archs[a], &cubin);
            if (smem > lim->smem_per_block_optin) {
                /* check() knows the target's shared memory */
                CHECK_MSG(st == KG_ERR_CONFIG && strstr(kg_last_error(ctx), "shared memory"),
                          "sm_%d [%s]: %zu bytes should be refused (%d: %s)", archs[a], configs[i], smem, st,
                          kg_last_error(ctx));
                refused++;
                continue;
            }
            CHECK_MSG(st == KG_OK, "sm_%d [%s]: %s", archs[a], configs[i], kg_last_error(ctx));
            if (st != KG_OK)
                continue;
            compiled++;
            size_t size;
            const unsigned char *data = kg_cubin_data(cubin, &size);
            const kg_compile_info *ci = kg_cubin_info(cubin);
            char arch[16];
            snprintf(arch, sizeof arch, "sm_%d", archs[a]);
            CHECK_MSG(strcmp(ci->arch, arch) == 0, "arch %s, expected %s", ci->arch, arch);
            CHECK(size > 64 && size == ci->cubin_size);
            CHECK(data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F');
            CHECK_MSG(ci->registers > 0 && ci->registers <= 255, "[%s] %d registers", configs[i], ci->registers);
            CHECK(ci->spill_stores >= 0 && ci->spill_loads >= 0 && ci->stack_bytes >= 0);
            /* ptxas's shared memory is the template's static array; the
             * dynamic part is the launch's */
            CHECK_MSG(ci->smem_static + ci->smem_dynamic == smem, "sm_%d [%s]: %zu + %zu bytes, template says %zu",
                      archs[a], configs[i], ci->smem_static, ci->smem_dynamic, smem);
            CHECK(ci->cache == 0 && ci->compile_ms > 0);
            size_t first_size = ci->cubin_size;
            kg_cubin_free(cubin);
            /* the same again: from the memory cache, same bytes */
            kg_cubin *again;
            CHECK(kg_compile(ctx, NULL, configs[i], archs[a], &again) == KG_OK);
            size_t size2;
            const void *data2 = kg_cubin_data(again, &size2);
            CHECK(kg_cubin_info(again)->cache == 1 && kg_cubin_info(again)->compile_ms == 0);
            CHECK(size2 == first_size && data2);
            kg_cubin_free(again);
        }
    }
    CHECK_MSG(compiled >= 30, "only %d compiled", compiled);
    CHECK_MSG(refused >= 1, "the 68 KB tile should not fit sm_75's 64 KB");
    printf("compiled %d configurations (%d refused by check for a smaller part)\n", compiled, refused);
}

static void test_errors(kg_context *ctx, const char *tdir)
{
    kg_cubin *c = (kg_cubin *)1;
    CHECK(kg_compile(ctx, NULL, "bm=64 bn=64 tm=3", 90, &c) == KG_ERR_CONFIG && c == NULL);
    CHECK_MSG(strstr(kg_last_error(ctx), "tm=3"), "%s", kg_last_error(ctx));
    CHECK(kg_compile(ctx, NULL, "colour=red", 90, &c) == KG_ERR_CONFIG);
    CHECK_MSG(strstr(kg_last_error(ctx), "colour"), "%s", kg_last_error(ctx));
    CHECK(kg_compile(ctx, NULL, "", 12, &c) == KG_ERR_INVALID_ARG);
    CHECK_MSG(strstr(kg_last_error(ctx), "sm_12") && strstr(kg_last_error(ctx), "sm_90"), "%s", kg_last_error(ctx));
    CHECK(kg_compile(ctx, "no_such_template", "", 90, &c) != KG_OK);
    CHECK(kg_compile(ctx, NULL, "", 90, NULL) == KG_ERR_INVALID_ARG);
    CHECK(kg_compile(NULL, NULL, "", 90, &c) == KG_ERR_INVALID_ARG);

    /* NVRTC's log, whole, in the last error */
    CHECK(kg_set_template_path(ctx, tdir) == KG_OK);
    kg_status st = kg_compile(ctx, "broken", "x=3", 90, &c);
    const char *e = kg_last_error(ctx);
    CHECK_MSG(st == KG_ERR_COMPILE, "broken template: %d %s", st, e);
    CHECK_MSG(strstr(e, "undefined_identifier_kgen_test_42") && strstr(e, "error") && strstr(e, "broken.cu"),
              "the log is not in the error: %s", e);
    CHECK(kg_set_template_path(ctx, NULL) == KG_OK);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TEST_TEMPLATE_DIR\n", argv[0]);
        return 2;
    }
    char dir[] = "/tmp/kgen-test-compile-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("KGEN_CACHE_DIR", dir, 1);
    unsetenv("KGEN_CACHE");
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    test_configs(ctx);
    test_errors(ctx, argv[1]);
    kg_context_close(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
