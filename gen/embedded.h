/* embedded.h -- files compiled into libkgen (cmake/embed_files.cmake): the Lua templates here, the
 * kernel catalogues in runtime/catalogue.h. */
#ifndef KGEN_EMBEDDED_H
#define KGEN_EMBEDDED_H

#include <stddef.h>

typedef struct kgi_embedded {
    const char *module;   /* "matmul", "lib.params" (a catalogue: "sm_90") */
    const char *path;     /* "templates/matmul.lua": the name in error messages */
    const char *text;
    size_t len;
} kgi_embedded;

/* Ends with an entry whose module is NULL. */
extern const kgi_embedded kgi_embedded_files[];

#endif
