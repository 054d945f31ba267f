/*
 * test_config.c -- the configuration type: parse and format round trips,
 * get/set/unset, and every malformed input refused with a message that
 * names the parameter (or quotes the token when there is no name).
 */
#include <stdio.h>
#include <string.h>

#include "gen/config.h"
#include "runtime/internal.h"
#include "testutil.h"

/* Parses `text`, expecting failure with `want` in the message. */
static void expect_error(const char *text, const char *want)
{
    kgi_config c;
    char err[256] = "";
    int rc = kgi_config_parse(&c, text, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, want) && c.n == 0, "parse '%s': rc %d, message '%s', wanted '%s'", text, rc,
              err, want);
}

int main(void)
{
    kgi_config c;
    char err[256], out[1024];

    /* round trip: canonical text formats back to the same bytes */
    const char *canon = "bm=128 bn=128 bk=16 tm=8 tn=8 pad=4 vec=4 bounds=1 layout=nn";
    CHECK(kgi_config_parse(&c, canon, err, sizeof err) == 0 && c.n == 9);
    CHECK(kgi_config_format(&c, out, sizeof out) == 0 && strcmp(out, canon) == 0);
    /* blanks of any kind and width between items collapse to one space */
    CHECK(kgi_config_parse(&c, "  bm=64\t bn=32\n\nlayout=tt  ", err, sizeof err) == 0);
    CHECK(kgi_config_format(&c, out, sizeof out) == 0 && strcmp(out, "bm=64 bn=32 layout=tt") == 0);
    CHECK(kgi_config_parse(&c, "", err, sizeof err) == 0 && c.n == 0);
    CHECK(kgi_config_parse(&c, NULL, err, sizeof err) == 0 && c.n == 0);
    CHECK(kgi_config_format(&c, out, sizeof out) == 0 && out[0] == '\0');

    /* get, get_int */
    CHECK(kgi_config_parse(&c, canon, err, sizeof err) == 0);
    CHECK(kgi_config_get(&c, "layout") && strcmp(kgi_config_get(&c, "layout"), "nn") == 0);
    CHECK(kgi_config_get(&c, "bogus") == NULL && kgi_config_get(&c, "b") == NULL && kgi_config_get(&c, "bmx") == NULL);
    CHECK(kgi_config_find(&c, "bm") == 0 && kgi_config_find(&c, "layout") == 8 && kgi_config_find(&c, "x") == -1);
    int v = 0;
    CHECK(kgi_config_get_int(&c, "bk", &v, err, sizeof err) == 0 && v == 16);
    CHECK_MSG(kgi_config_get_int(&c, "layout", &v, err, sizeof err) == -1 && strstr(err, "layout: 'nn' is not an integer"),
              "get_int layout: %s", err);
    CHECK_MSG(kgi_config_get_int(&c, "wm", &v, err, sizeof err) == -1 && strstr(err, "wm: not set"), "get_int wm: %s",
              err);

    /* set keeps the order: in place when present, appended when not */
    CHECK(kgi_config_set(&c, "vec", "1", err, sizeof err) == 0);
    CHECK(kgi_config_set_int(&c, "splitk", 4, err, sizeof err) == 0);
    CHECK(kgi_config_format(&c, out, sizeof out) == 0 &&
          strcmp(out, "bm=128 bn=128 bk=16 tm=8 tn=8 pad=4 vec=1 bounds=1 layout=nn splitk=4") == 0);
    CHECK(kgi_config_unset(&c, "pad") == 1 && kgi_config_unset(&c, "pad") == 0);
    CHECK(kgi_config_format(&c, out, sizeof out) == 0 &&
          strcmp(out, "bm=128 bn=128 bk=16 tm=8 tn=8 vec=1 bounds=1 layout=nn splitk=4") == 0);
    /* a copy is independent */
    kgi_config d = c;
    CHECK(kgi_config_set(&d, "bm", "64", err, sizeof err) == 0 && strcmp(kgi_config_get(&c, "bm"), "128") == 0);
    /* too small a buffer: -1 and an empty string */
    CHECK(kgi_config_format(&c, out, 10) == -1 && out[0] == '\0');

    /* set refuses what parse refuses, naming the parameter */
    CHECK_MSG(kgi_config_set(&c, "bm", "", err, sizeof err) == -1 && strstr(err, "bm: missing value"), "%s", err);
    CHECK_MSG(kgi_config_set(&c, "bm", "4 5", err, sizeof err) == -1 && strstr(err, "bm: bad value '4 5'"), "%s", err);
    CHECK_MSG(kgi_config_set(&c, "bm", "4=5", err, sizeof err) == -1 && strstr(err, "bm: bad value '4=5'"), "%s", err);
    CHECK_MSG(kgi_config_set(&c, "", "4", err, sizeof err) == -1 && strstr(err, "no parameter name"), "%s", err);
    CHECK_MSG(kgi_config_set(&c, "9x", "4", err, sizeof err) == -1 && strstr(err, "'9x' is not a parameter name"), "%s",
              err);
    CHECK(strcmp(kgi_config_get(&c, "bm"), "128") == 0); /* unchanged by the failures */

    /* every malformed input: the message names the parameter or quotes the token */
    expect_error("bm", "'bm' is not of the form name=value");
    expect_error("bm=64 bn", "'bn' is not of the form name=value");
    expect_error("=64", "'=64' has no parameter name");
    expect_error("bm=", "bm: missing value");
    expect_error("bm=64 bn=", "bn: missing value");
    expect_error("bm=4=5", "bm: bad value '4=5'");
    expect_error("b-m=4", "'b-m' is not a parameter name");
    expect_error("2bm=4", "'2bm' is not a parameter name");
    expect_error("bk=8 bk=16", "bk given twice (8 and 16)");
    expect_error("bm=1 bn=2 bm=1", "bm given twice (1 and 1)");
    char longname[80], longvalue[200];
    memset(longname, 'a', 40);
    snprintf(longname + 40, sizeof longname - 40, "=1");
    expect_error(longname, "is too long");
    snprintf(longvalue, sizeof longvalue, "bm=");
    memset(longvalue + 3, '7', 150);
    longvalue[153] = '\0';
    expect_error(longvalue, "bm: value too long");
    char many[2048] = "";
    for (int i = 0; i <= KGI_CONFIG_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "p%d=1 ", i);
    expect_error(many, "more than 64 parameters");

    /* reading one value out of text without parsing it all */
    char val[16];
    CHECK(kgi_config_text_get(canon, "tn", val, sizeof val) == 0 && strcmp(val, "8") == 0);
    CHECK(kgi_config_text_get(canon, "layout", val, sizeof val) == 0 && strcmp(val, "nn") == 0);
    CHECK(kgi_config_text_get(canon, "t", val, sizeof val) == -1);
    CHECK(kgi_config_text_get("bm=", "bm", val, sizeof val) == -1);
    CHECK(kgi_config_text_get("bm=12345", "bm", val, 3) == -1);

    /* the host answers which parameters a template has */
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    int has = -1;
    CHECK(kgi_host_has_param(ctx->host, "matmul", "bm", &has, err, sizeof err) == 0 && has == 1);
    CHECK(kgi_host_has_param(ctx->host, "matmul", "wm", &has, err, sizeof err) == 0 && has == 0);
    CHECK(kgi_host_has_param(ctx->host, "matmul_warp", "wm", &has, err, sizeof err) == 0 && has == 1);
    CHECK_MSG(kgi_host_has_param(ctx->host, "nope", "bm", &has, err, sizeof err) == KG_ERR_CONFIG &&
                  strstr(err, "unknown template 'nope'"),
              "%s", err);
    CHECK(kgi_host_has_param(ctx->host, "matmul", NULL, &has, err, sizeof err) == KG_OK && has == 0);
    kg_context_close(ctx);
    TEST_DONE();
}
