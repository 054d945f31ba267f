/*
 * host_lua.h -- the Lua host's stack, shared by gen/host.c, gen/template.c
 * and gen/walk.c only: nothing outside gen/ includes it.
 */
#ifndef KGEN_GEN_HOST_LUA_H
#define KGEN_GEN_HOST_LUA_H

#include <lua.h>

#include "host.h"

/* The Lua state. kgi_host_push_template leaves the template's module table
 * on the stack; kgi_host_push_config parses and completes a configuration
 * and leaves its table on the stack (without calling check). Both return
 * KG_OK or set err. */
lua_State *kgi_host_lua(kgi_host *h);
kg_status kgi_host_push_template(kgi_host *h, const char *tmpl, char *err, size_t errlen);
kg_status kgi_host_push_config(kgi_host *h, const char *tmpl, const char *config, char *err, size_t errlen);
/* Pushes a table describing `lim` (the `limits` argument of check()). */
void kgi_host_push_limits(kgi_host *h, const kgi_limits *lim);
/* Calls the function at the top of the stack below nargs arguments with a
 * traceback handler; on error returns KG_ERR_TEMPLATE with the message. */
kg_status kgi_host_pcall(kgi_host *h, int nargs, int nresults, char *err, size_t errlen);
/* Fills r (zeroed first) from the configuration table at index cfg (its
 * layout and pad) and resources()'s result at index res: the one reading of
 * resources() (gen/template.c), for kgi_host_resources and the space walk. */
void kgi_read_resources(lua_State *L, int cfg, int res, kgi_resources *r);

#endif
