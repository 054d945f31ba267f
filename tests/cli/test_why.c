/*
 * test_why.c -- kgwhy_template (common/why.c): the template a
 * kg_matmul_explain reason names, and the reason after it.
 */
#include <string.h>

#include "testutil.h"
#include "why.h"

int main(void)
{
    char t[64];
    const char *rest = kgwhy_template("[template matmul_warp] tuned: exact shape 64x64x64 in db", t, sizeof t);
    CHECK(strcmp(t, "matmul_warp") == 0);
    CHECK(strcmp(rest, "tuned: exact shape 64x64x64 in db") == 0); /* what kgen-bench's --no-db check reads */
    rest = kgwhy_template("catalogue sm_90 (...): kernel 3 matmul 32x32", t, sizeof t);
    CHECK(strcmp(t, "matmul") == 0); /* no prefix: matmul */
    CHECK(strcmp(rest, "catalogue sm_90 (...): kernel 3 matmul 32x32") == 0);
    rest = kgwhy_template("", t, sizeof t);
    CHECK(strcmp(t, "matmul") == 0 && rest[0] == '\0');
    rest = kgwhy_template("[template matmul_skinny] x", t, 8); /* cut to the buffer */
    CHECK(strcmp(t, "matmul_") == 0 && strcmp(rest, "x") == 0);
    rest = kgwhy_template("[template unterminated", t, sizeof t); /* not the prefix: the whole reason */
    CHECK(strcmp(t, "matmul") == 0 && strcmp(rest, "[template unterminated") == 0);
    TEST_DONE();
}
