/*
 * fuzz_config.c -- configuration text ("bm=128 bn=64 ..."), as the CLI's
 * --config, the runtime and the database pass it: parsed, completed and
 * checked against sm_90's limits by the template host. Kept thin: the parse
 * call is the only line that names the parser.
 */
#include <stdlib.h>
#include <string.h>

#include <lua.h>

#include "fuzz.h"
#include "runtime/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static kgi_host *host;
    if (!host && !(host = kgi_host_new()))
        abort();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int top = lua_gettop(kgi_host_lua(host));
    char canon[1024], err[1024];
    kgi_host_check(host, NULL, text, kgi_arch_limits(90), canon, sizeof canon, err, sizeof err);
    if (lua_gettop(kgi_host_lua(host)) != top) /* the host must leave the Lua stack as it found it */
        abort();
    free(text);
    return 0;
}
