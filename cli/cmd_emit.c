/*
 * cmd_emit.c -- `kgen emit` (write one .cu file) and `kgen params`.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cli.h"
#include "runtime/internal.h"

int kgc_cmd_emit(int argc, char **argv)
{
    const char *output = NULL;
    const kgc_opt own[] = {{"-o", "--output", 1, &output}, {NULL, NULL, 0, NULL}};
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, own, 0, &args)) != KGC_OK)
        goto out;
    kg_source *src;
    kg_status st = kg_render(ctx, args.tmpl, args.config, &src);
    if (st != KG_OK) {
        rc = kgc_report(ctx, st, NULL);
        goto out;
    }
    size_t len;
    const char *text = kg_source_text(src, &len);
    rc = kgc_write_file(output, text, len) == 0 ? KGC_OK : KGC_FAIL;
    kg_source_free(src);
out:
    kg_context_close(ctx);
    return rc;
}

/* The allowed values of the parameter declaration at the top of the stack. */
static void allowed_text(lua_State *L, char *buf, size_t len)
{
    buf[0] = '\0';
    if (lua_getfield(L, -1, "values") == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, -1);
        size_t used = 0;
        for (lua_Integer i = 1; i <= n && used < len; i++) {
            lua_geti(L, -1, i);
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 1 ? "," : "", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "min");
    lua_getfield(L, -2, "max");
    snprintf(buf, len, "%s..%s", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 2);
}

int kgc_cmd_params(int argc, char **argv)
{
    kg_context *ctx;
    int rc = kgc_open(&ctx, KG_DEVICE_NONE, NULL);
    if (rc)
        return rc;
    kgc_args args;
    if ((rc = kgc_parse(ctx, argc, argv, NULL, 0, &args)) != KGC_OK)
        goto out;
    if (args.nparam > 0) {
        fprintf(stderr, "kgen: params takes no parameter options (only --template, --template-dir)\n");
        rc = KGC_USAGE;
        goto out;
    }
    char err[2048];
    lua_State *L = kgi_host_lua(ctx->host);
    if (kgi_host_push_template(ctx->host, args.tmpl, err, sizeof err) != KG_OK) {
        fprintf(stderr, "kgen: %s\n", err);
        rc = KGC_FAIL;
        goto out;
    }
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "version");
    printf("template %s, version %s\n\n", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 2);
    printf("%-8s %-8s %-14s %s\n", "name", "default", "allowed", "meaning");
    lua_getfield(L, -1, "params");
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "name");
        lua_getfield(L, -2, "default");
        printf("%-8s %-8s ", lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 2);
        char allowed[64];
        allowed_text(L, allowed, sizeof allowed);
        lua_getfield(L, -1, "doc");
        printf("%-14s %s\n", allowed, lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
        lua_pop(L, 2);
    }
    lua_pop(L, 2);
    printf("\nSet them as options (--bm 128) or as --config \"bm=128 bn=128\";\n"
           "--tile T is short for bm=bn=bk=T tm=tn=1.\n");
    rc = KGC_OK;
out:
    kg_context_close(ctx);
    return rc;
}
