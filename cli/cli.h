/*
 * cli.h -- what the kgen subcommands share: option parsing for template
 * parameters, exit codes, atomic output files.
 *
 * Exit codes: 0 success; 2 usage error or invalid configuration; 1 any other
 * failure (no GPU, compile error, wrong result, I/O).
 */
#ifndef KGEN_CLI_H
#define KGEN_CLI_H

#include <stdio.h>

#include "kgen.h"

enum { KGC_OK = 0, KGC_FAIL = 1, KGC_USAGE = 2 };

/* A subcommand's own option. `value` receives the argument (has_arg) or is
 * set to "1" (a flag). Names include dashes: "-o", "--output". */
typedef struct kgc_opt {
    const char *name;
    const char *alias;   /* another spelling, or NULL */
    int has_arg;
    const char **value;
} kgc_opt;

/* Options every generating subcommand accepts, parsed by kgc_parse. */
typedef struct kgc_args {
    const char *tmpl;          /* --template (default "matmul") */
    int tmpl_given;            /* whether --template was given */
    const char *template_dir;  /* --template-dir, else KGEN_TEMPLATE_PATH */
    int arch;                  /* --arch sm_XY; 0 = the device's or sm_90 */
    char config[2048];         /* the configuration text assembled from the options */
    int nparam;                /* how many parameter options were given */
    const char *positional[8];
    int npositional;
} kgc_args;

/*
 * Parses argv (after the subcommand name) into `own` options and the shared
 * ones: --template NAME, --template-dir DIR, --arch sm_XY, --config "k=v ...",
 * --tile T (bm=bn=bk=T, tm=tn=1 unless given), and --NAME VALUE for every
 * parameter of the template. `ctx` (CPU-only is fine) supplies the template's
 * parameter list. Errors print one message to stderr and return KGC_USAGE.
 * `max_positional` says how many plain arguments the command takes.
 */
int kgc_parse(kg_context *ctx, int argc, char **argv, const kgc_opt *own, int max_positional,
              kgc_args *out);

/* Prints "kgen: <what>: <message>" for a failed call and returns the exit
 * code that status deserves. */
int kgc_report(kg_context *ctx, kg_status st, const char *what);

/* Opens a context for a command: `device` as given (KG_DEVICE_NONE for CPU),
 * and, when args is not NULL, the template directory and --arch that
 * kgc_parse read into it. Reports and returns an exit code != 0 on failure
 * (the context is closed then). */
int kgc_open(kg_context **ctx, int device, const kgc_args *args);

/* kgw_write_file and kgw_not_input (common/write_file.h) with kgen's name
 * in their messages: an output file written atomically (or to stdout for
 * NULL or "-"; a device or FIFO in place), and the check that an option's
 * output is not a file the command reads. */
int kgc_write_file(const char *path, const void *data, size_t len);
int kgc_not_input(const char *what, const char *output, const char *input);

/* Reads a whole file (or standard input for "-"); NULL after printing why. */
char *kgc_slurp(const char *path, size_t *len);

/* Reads a shapes file (lines `M N K` or `tag M N K`, '#' comments; cli/cmd_tune.c):
 * 0, or -1 after printing an error naming the option, file and line. */
struct kgi_tune_shape;
int kgc_read_shapes(const char *path, struct kgi_tune_shape **out, int *n);

/* Strict integer parsing for command options: the whole string, in range. */
int kgc_int(const char *opt, const char *text, long lo, long hi, long *out);
/* The same for a real number in [lo, hi]. */
int kgc_real(const char *opt, const char *text, double lo, double hi, double *out);
/* The template directory a command's own host searches first: --template-dir, else
 * $KGEN_TEMPLATE_PATH, else NULL (the embedded templates only). */
const char *kgc_template_path(const kgc_args *args);
/* A layout option's value: 0 for nn, nt, tn or tt; else -1 after printing the error. */
int kgc_layout(const char *opt, const char *text);

/* The subcommands (cli/cmd_*.c). argv[0] is the subcommand's name. */
int kgc_cmd_emit(int argc, char **argv);
int kgc_cmd_params(int argc, char **argv);
int kgc_cmd_compile(int argc, char **argv); /* cli/cmd_runtime.c */
int kgc_cmd_device(int argc, char **argv);
int kgc_cmd_run(int argc, char **argv);

int kgc_cmd_explain(int argc, char **argv); /* cmd_explain.c */
extern const char kgc_explain_usage[];

int kgc_cmd_tune(int argc, char **argv); /* cli/cmd_tune.c */
int kgc_cmd_db(int argc, char **argv);   /* cli/cmd_db.c */
int kgc_cmd_catalogue(int argc, char **argv); /* cli/cmd_catalogue.c */
int kgc_cmd_precompile(int argc, char **argv); /* cli/cmd_precompile.c */

/* One compile of kgc_compile_jobs: the caller fills tmpl, config (with its layout=) and its own kernel and layout. */
typedef struct kgc_compile_job {
    const char *tmpl;
    char config[640];
    int kernel, layout;    /* the caller's */
    long order;            /* the caller's (precompile: the tile, largest first) */
    int outcome;           /* 0 compiled, 1 already cached, 2 failed */
    double ms;             /* NVRTC's time (0 from a cache) */
    char error[512];       /* the first line of why it failed */
} kgc_compile_job;

/* Compiles jobs[0..n) for sm_`arch` in `threads` threads (at most n; NVRTC is thread-safe), one context each, in
 * the array's order, templates looked up in template_dir first (or NULL), through the caches as the environment
 * says (KGEN_CACHE, KGEN_CACHE_DIR). Returns the threads that ran (0: none could start, all ran here). */
int kgc_compile_jobs(const char *template_dir, int arch, kgc_compile_job *jobs, int n, int threads);
int kgc_cmd_choice(int argc, char **argv);     /* cli/cmd_choice.c */

#endif
