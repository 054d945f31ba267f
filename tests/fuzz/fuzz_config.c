/*
 * fuzz_config.c -- configuration text ("bm=128 bn=64 ..."), as the CLI's
 * --config, the runtime and the database pass it: first the C type's strict
 * parse (gen/config.c), whose formatted text must parse again to the same
 * text, then the template host's parse, completion and check against
 * sm_90's limits, which must leave the host's Lua stack as it found it.
 */
#include <stdlib.h>
#include <string.h>

#include <lua.h>

#include "fuzz.h"
#include "gen/config.h"
#include "gen/host.h"
#include "gen/host_lua.h"
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
    char canon[1024], again[1024], err[1024];
    kgi_config c, d;
    if (kgi_config_parse(&c, text, err, sizeof err) == 0 && kgi_config_format(&c, canon, sizeof canon) == 0) {
        /* what format writes, parse reads back unchanged */
        if (kgi_config_parse(&d, canon, err, sizeof err) != 0 || kgi_config_format(&d, again, sizeof again) != 0 ||
            strcmp(canon, again) != 0)
            abort();
    }
    int top = lua_gettop(kgi_host_lua(host));
    kgi_host_check(host, NULL, text, kgi_arch_limits(90), canon, sizeof canon, err, sizeof err);
    if (lua_gettop(kgi_host_lua(host)) != top) /* the host must leave the Lua stack as it found it */
        abort();
    free(text);
    return 0;
}
