/*
 * bench_opts.h -- kgen-bench's command line and the kernels it is asked to
 * time: parsing, the configurations file, and the checks made before any
 * GPU work (bad input exits 2 without touching a device).
 */
#ifndef KGEN_BENCH_OPTS_H
#define KGEN_BENCH_OPTS_H

#include <stddef.h>

/* One explicit kernel to time: a template and its configuration, from
 * --template/--config or a line of --configs FILE. */
typedef struct kgb_spec {
    char tmpl[64];
    char config[1024];
    char origin[300];      /* "--config" or "FILE:LINE", for messages */
} kgb_spec;

typedef struct kgb_opts {
    const char *shapes, *csv, *tmpl, *config, *configs;
    const char *layouts[4]; /* the layouts to run, in order */
    int nlayouts;
    int samples, device, ld_mult, no_db, device_name;
    char no_db_dir[64];    /* --no-db: the empty directory KGEN_DB points into */
    double min_ms;
    float alpha, beta;
    kgb_spec *specs;       /* the explicit kernels; none: kg_matmul chooses */
    int nspecs;
} kgb_opts;

/* Parses the command line. Returns 0, 1 after printing the usage (--help:
 * the caller exits 0), or -1 after printing what was wrong. */
int kgb_parse(int argc, char **argv, kgb_opts *o);

/* Loads the explicit kernels (--config or --configs) into o->specs and
 * renders every one in every layout it runs in on a CPU-only context, so
 * that a wrong configuration is reported, naming its line, before any GPU
 * work. Returns 0 or -1 after printing what was wrong. */
int kgb_load_specs(kgb_opts *o);
void kgb_free_specs(kgb_opts *o);

/* The configuration text `spec` runs with in `layout`: its own text, with
 * " layout=L" added when it names no layout. Returns 0, or -1 when the spec
 * names another layout (it does not run in this one). */
int kgb_spec_config(const kgb_spec *spec, const char *layout, char *buf, size_t len);

/* --no-db: points KGEN_DB at a path inside a fresh empty directory
 * (o->no_db_dir), so that kg_matmul finds no tuning database; kgb_no_db_end
 * removes the directory. Must run before the first context is opened. */
int kgb_no_db_begin(kgb_opts *o);
void kgb_no_db_end(kgb_opts *o);

#endif
