/*
 * configs.h -- a list of configurations to evaluate (`kgen tune --configs
 * FILE`), one a line: "TEMPLATE k=v k=v ...", '#' starting a comment, blank
 * lines ignored. The run's --layout applies to every line, so a line may not
 * set `layout`. `kgen catalogue candidates` writes this format.
 */
#ifndef KGEN_AUTOTUNE_CONFIGS_H
#define KGEN_AUTOTUNE_CONFIGS_H

#include <stddef.h>

#include "runtime/internal.h"

typedef struct kgi_config_entry {
    char tmpl[64];
    char *config;              /* as written (validated by kgi_config_parse) */
    int line;                  /* in the file, for messages */
} kgi_config_entry;

typedef struct kgi_config_list {
    kgi_config_entry *e;
    int n, cap;
    char name[512];            /* what messages call the list (its `name`) */
} kgi_config_list;

/* Parses the list in `text` (`name` for messages: "--configs FILE").
 * KG_ERR_CONFIG naming the line and what was wrong: a template name that
 * is not a module name, a bad configuration, a `layout`, no entries. */
kg_status kgi_config_list_parse(const char *text, size_t len, const char *name, kgi_config_list *out, char *err,
                                size_t errlen);
/* Reads and parses a file (KG_ERR_IO when it cannot be read, or is over
 * 64 MiB). */
kg_status kgi_config_list_read(const char *path, kgi_config_list *out, char *err, size_t errlen);
void kgi_config_list_free(kgi_config_list *l);

#endif
