/*
 * test_nodriver.c -- a machine without the CUDA driver: opening a device
 * fails with a clear error, every GPU operation says there is no device,
 * and everything CPU-side (render, compile, explain, offline limits) works.
 *
 * KGEN_CUDA_DRIVER names a library that does not exist, so this runs the
 * same on a GPU machine. Where no libcuda.so.1 exists at all (CI), the real
 * name is tried too.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "testutil.h"

int main(void)
{
    setenv("KGEN_CUDA_DRIVER", "libkgen-test-no-such-driver.so.1", 1);
    setenv("KGEN_CACHE", "0", 1);

    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    CHECK_MSG(st == KG_ERR_NO_DRIVER, "open device 0: %d (%s)", st, kg_last_error(ctx));
    CHECK_MSG(strstr(kg_last_error(ctx), "libkgen-test-no-such-driver.so.1") &&
                  strstr(kg_last_error(ctx), "CUDA driver"),
              "unclear error: %s", kg_last_error(ctx));
    kg_context_close(ctx);

    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    int count = 7;
    CHECK(kg_device_count(ctx, &count) == KG_ERR_NO_DRIVER && count == 0);
    kg_device_info info;
    CHECK(kg_device_query(ctx, 0, &info) == KG_ERR_NO_DRIVER);
    /* the table's limits for the target architecture */
    CHECK(kg_device_query(ctx, KG_DEVICE_NONE, &info) == KG_OK);
    CHECK(info.cc_major == 9 && info.cc_minor == 0 && info.sm_count > 0 && info.peak_fp32_tflops > 10);
    CHECK(kg_set_arch(ctx, 80) == KG_OK && kg_device_query(ctx, KG_DEVICE_NONE, &info) == KG_OK);
    CHECK(info.cc_major == 8 && info.smem_per_block_optin == 163 * 1024);
    CHECK(kg_set_arch(ctx, 90) == KG_OK);

    /* GPU operations: a clear "no device" */
    kg_kernel *k = (kg_kernel *)1;
    CHECK(kg_kernel_get(ctx, NULL, "", &k) == KG_ERR_NO_DEVICE && k == NULL);
    CHECK(strstr(kg_last_error(ctx), "GPU"));
    float dummy[4];
    CHECK(kg_matmul(ctx, "nn", 4, 4, 4, 1, dummy, 4, dummy, 4, 0, dummy, 4, NULL) == KG_ERR_NO_DEVICE);
    void *p = (void *)1;
    CHECK(kgi_dev_alloc(ctx, 16, &p) == KG_ERR_NO_DEVICE && p == NULL);
    CHECK(kgi_dev_sync(ctx) == KG_ERR_NO_DEVICE);
    int version;
    CHECK(kgi_driver_version(ctx, &version) == KG_ERR_NO_DRIVER && version == 0);

    /* CPU-side work */
    kg_source *src;
    CHECK(kg_render(ctx, NULL, "bm=64 bn=64", &src) == KG_OK);
    kg_source_free(src);
    kg_cubin *cubin;
    CHECK_MSG(kg_compile(ctx, NULL, "bm=32 bn=32 bk=8 tm=2 tn=2", 0, &cubin) == KG_OK, "%s", kg_last_error(ctx));
    CHECK(kg_cubin_info(cubin)->registers > 0);
    kg_cubin_free(cubin);
    char config[512], why[2048];
    CHECK(kg_matmul_explain(ctx, "tn", 1000, 1000, 1000, config, sizeof config, why, sizeof why) == KG_OK);
    CHECK_MSG(strstr(config, "layout=tn") &&
                  (strstr(why, "catalogue sm_90 (") || strstr(why, "no catalogue for sm_90: model-only choice")),
              "%s / %s", config, why);
    kg_context_close(ctx);

    /* the real driver's name, where there is none */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        printf("libcuda.so.1 present: only the KGEN_CUDA_DRIVER path was tested\n");
        dlclose(h);
    }
    TEST_DONE();
}
