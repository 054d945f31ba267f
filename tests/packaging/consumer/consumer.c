/*
 * consumer.c -- a program built against an installed kgen (find_package or
 * pkg-config): renders and compiles a kernel without a GPU.
 */
#include <stdio.h>

#include "kgen.h"

int main(void)
{
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK) {
        fprintf(stderr, "consumer: %s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        return 1;
    }
    kg_source *src = NULL;
    kg_cubin *bin = NULL;
    size_t len = 0;
    int ok = kg_render(ctx, NULL, "bm=32 bn=32 bk=16 tm=2 tn=2", &src) == KG_OK &&
             kg_source_text(src, &len) && len > 0 &&
             kg_compile(ctx, NULL, "bm=32 bn=32 bk=16 tm=2 tn=2", 90, &bin) == KG_OK;
    if (!ok)
        fprintf(stderr, "consumer: %s\n", kg_last_error(ctx));
    else
        printf("consumer: rendered %zu bytes of CUDA and compiled them for sm_90\n", len);
    kg_cubin_free(bin);
    kg_source_free(src);
    kg_context_close(ctx);
    return ok ? 0 : 1;
}
