/*
 * fuzz_limits.c -- the limits file of `kgen explain --limits FILE`
 * (kgc_machine_parse in explain/explain_model.c), on top of sm_90's table.
 */
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, '\0', size)) /* kgc_machine_from_file refuses a file with a NUL */
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    kgc_machine m;
    char err[1024];
    kgc_machine_parse(text, "fuzz.limits", 90, &m, err, sizeof err);
    free(text);
    return 0;
}
