/*
 * test_host.c -- the Lua host against templates that are broken or that
 * meddle: errors come back as KG_ERR_TEMPLATE with a message (never an
 * abort), and nothing one template does changes what another renders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "testutil.h"

static char *render_text(kg_context *ctx, const char *tmpl, const char *config, kg_status *st)
{
    kg_source *src = NULL;
    *st = kg_render(ctx, tmpl, config, &src);
    char *copy = *st == KG_OK ? strdup(src->text) : NULL;
    kg_source_free(src);
    return copy;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_host TEMPLATE_DIR\n");
        return 2;
    }
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    CHECK(kg_set_template_path(ctx, argv[1]) == KG_OK);
    kg_status st;

    char *before = render_text(ctx, "matmul", "bm=32 bn=32 bk=8 tm=2 tn=2", &st);
    CHECK(st == KG_OK && before);

    free(render_text(ctx, "badgrid", "", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "grid"), "badgrid: %s", kg_last_error(ctx));
    free(render_text(ctx, "badrequires", "how=1", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "vector_operand"), "badrequires how=1: %s",
              kg_last_error(ctx));
    free(render_text(ctx, "badrequires", "how=2", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "m_max"), "badrequires how=2: %s",
              kg_last_error(ctx));
    free(render_text(ctx, "badparams", "", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "params[1]"), "badparams: %s",
              kg_last_error(ctx));

    static const char *const tricks[] = {"global", "string", "module", "metatable"};
    for (size_t i = 0; i < sizeof tricks / sizeof *tricks; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "how=%s", tricks[i]);
        free(render_text(ctx, "meddler", cfg, &st));
        /* "global" succeeds within its own environment; the others are refused */
        if (i == 0)
            CHECK_MSG(st == KG_OK, "meddler %s: %s", tricks[i], kg_last_error(ctx));
        else
            CHECK_MSG(st == KG_ERR_TEMPLATE && (strstr(kg_last_error(ctx), "read-only") ||
                                                strstr(kg_last_error(ctx), "nil value") ||
                                                strstr(kg_last_error(ctx), "boolean value")),
                      "meddler %s: %s", tricks[i], kg_last_error(ctx));
        char *after = render_text(ctx, "matmul", "bm=32 bn=32 bk=8 tm=2 tn=2", &st);
        CHECK_MSG(st == KG_OK && after && strcmp(after, before) == 0, "matmul changed after meddler %s",
                  tricks[i]);
        free(after);
    }

    free(render_text(ctx, "meddler", "how=bytecode", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "nil value"), "bytecode: %s",
              kg_last_error(ctx));
    free(render_text(ctx, "meddler", "how=memory", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "memory"), "memory: %s", kg_last_error(ctx));
    free(render_text(ctx, "meddler", "how=loop", &st));
    CHECK_MSG(st == KG_ERR_TEMPLATE && strstr(kg_last_error(ctx), "instruction limit"), "loop: %s",
              kg_last_error(ctx));

    /* The host still works after all of that. */
    char *last = render_text(ctx, "matmul", "bm=32 bn=32 bk=8 tm=2 tn=2", &st);
    CHECK(st == KG_OK && last && strcmp(last, before) == 0);
    free(last);
    free(before);
    kg_context_close(ctx);
    TEST_DONE();
}
