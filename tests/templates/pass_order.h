/*
 * pass_order.h -- the order of griddepcontrol in a rendered source with a
 * beta pass (programmatic dependent launch, sm_90), for the render tests of
 * matmul_warp and matmul_skinny.
 */
#ifndef KGEN_TESTS_PASS_ORDER_H
#define KGEN_TESTS_PASS_ORDER_H

#include <stdio.h>
#include <string.h>

/* The definition of kernel `entry` in `text` (from its name and first
 * parameter on), or NULL. */
static const char *kernel_def(const char *text, const char *entry)
{
    char def[200];
    snprintf(def, sizeof def, "%s(int M", entry);
    return strstr(text, def);
}

/* 1 when the beta pass `pre_entry` waits for the kernel before it, then
 * lets the main kernel start, then scales C; else 0. */
static int beta_pass_in_order(const char *text, const char *pre_entry)
{
    const char *pass = kernel_def(text, pre_entry);
    const char *wait = pass ? strstr(pass, "kgen_dep_wait();") : NULL;
    const char *launch = pass ? strstr(pass, "kgen_dep_launch();") : NULL;
    const char *scale = pass ? strstr(pass, "beta * ") : NULL;
    return wait && launch && scale && wait < launch && launch < scale;
}

#endif
