/*
 * pattern.h -- Lua's string patterns (find, match, gmatch, gsub) for the
 * template sandbox, with every matching step charged to the template's
 * instruction budget. Private to gen/.
 */
#ifndef KGEN_PATTERN_H
#define KGEN_PATTERN_H

#include <lua.h>

/* Replaces string.find, string.match, string.gmatch and string.gsub in the
 * string library table at the top of the stack. */
void kgi_pattern_install(lua_State *L);

/* Charges `steps` matching steps to the template running in L; raises the
 * template's "instruction limit" error when the budget is spent. Defined by
 * the host (host.c). */
void kgi_host_charge(lua_State *L, unsigned long steps);

#endif
