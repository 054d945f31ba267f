/* embedded.h -- the Lua templates compiled into libkgen (see cmake/embed_templates.cmake). */
#ifndef KGEN_EMBEDDED_H
#define KGEN_EMBEDDED_H

#include <stddef.h>

typedef struct kgi_embedded {
    const char *module;   /* "matmul", "lib.params" */
    const char *path;     /* "templates/matmul.lua": the chunk name in error messages */
    const char *text;
    size_t len;
} kgi_embedded;

/* Ends with an entry whose module is NULL. */
extern const kgi_embedded kgi_embedded_files[];

#endif
