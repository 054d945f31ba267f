/*
 * config.h -- a configuration as C holds it: an ordered list of named
 * parameters, parsed from and formatted to the text every part of kgen
 * shares ("bm=128 bn=128 bk=16 tm=8 tn=8").
 *
 * The syntax is owned here; the meaning is not. Parsing is strict about
 * form -- each item is name=value, a name is an identifier, a value is one
 * non-empty token without '=', and no name appears twice -- and every error
 * names the parameter. Whether a template has the parameter and whether the
 * value is allowed is the template's to say (its `params` and `check`, through
 * the Lua host: kgi_host_has_param in host.h, kgi_host_check, kg_render).
 *
 * Items keep the order in which they were parsed or first set, so text that
 * the host made canonical formats back to the same bytes after any number
 * of gets and of sets of parameters it already holds.
 *
 * A kgi_config is a plain value (no heap): declare one, kgi_config_init or
 * kgi_config_parse it, copy it with `=`. Functions that can fail return 0 or
 * -1 with a message in err (which may be NULL).
 */
#ifndef KGEN_GEN_CONFIG_H
#define KGEN_GEN_CONFIG_H

#include <stddef.h>

#define KGI_CONFIG_MAX 64     /* parameters in one configuration */
#define KGI_CONFIG_NAME 32    /* bytes of a name, with its NUL */
#define KGI_CONFIG_VALUE 128  /* bytes of a value, with its NUL */

typedef struct kgi_config {
    int n; /* param[0 .. n-1] are set; read them freely, change them through the functions */
    struct kgi_config_param {
        char name[KGI_CONFIG_NAME];
        char value[KGI_CONFIG_VALUE];
    } param[KGI_CONFIG_MAX];
} kgi_config;

/* Makes c empty. */
void kgi_config_init(kgi_config *c);

/* Parses `text` (NULL or blank: empty) into c, replacing what it held.
 * Errors: "'tok' is not of the form name=value", "'=4' has no parameter
 * name", "'b-m' is not a parameter name (...)", "bm: missing value",
 * "bm: bad value '4=5'", "bm given twice (64 and 128)", and the limits
 * above. On error c is left empty. */
int kgi_config_parse(kgi_config *c, const char *text, char *err, size_t errlen);

/* Index of `name` in c, or -1. */
int kgi_config_find(const kgi_config *c, const char *name);

/* The value of `name`, or NULL when c does not hold it. */
const char *kgi_config_get(const kgi_config *c, const char *name);

/* The value of `name` as an int. -1 when c does not hold it ("bm: not
 * set") or its value is not a decimal integer in int's range. */
int kgi_config_get_int(const kgi_config *c, const char *name, int *out, char *err, size_t errlen);

/* Sets `name` to `value`: in place where c holds it, else appended.
 * The name and value must pass the checks of kgi_config_parse. */
int kgi_config_set(kgi_config *c, const char *name, const char *value, char *err, size_t errlen);
int kgi_config_set_int(kgi_config *c, const char *name, int value, char *err, size_t errlen);

/* Removes `name`; 1 when it was there, 0 when not. The others keep their order. */
int kgi_config_unset(kgi_config *c, const char *name);

/* The text "name=value name=value" in c's order ("" when empty). -1 when it
 * does not fit in len bytes (out then holds ""). */
int kgi_config_format(const kgi_config *c, char *out, size_t len);

/* The value of `name` in configuration text, without building a kgi_config
 * (for scanning many texts): 0 and the value in out, or -1 when the text
 * has no well-formed item of that name or the value does not fit. */
int kgi_config_text_get(const char *text, const char *name, char *out, size_t len);


#endif /* KGEN_GEN_CONFIG_H */
