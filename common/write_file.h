/*
 * write_file.h -- writing a program's output file, shared by kgen (cli/),
 * kgen-bench and kgen-bench-plot (bench/): one place for the rules of
 * replacing a file, so that every program keeps a user's other files,
 * symbolic links and devices alike.
 *
 * Prefix kgw_. Depends on nothing but the C library and POSIX (no CUDA, no
 * libkgen), so kgen-bench-plot links it and stays free of CUDA. Each call
 * takes the program's name (`prog`: "kgen", "kgen-bench") for the messages
 * it prints: "PROG: cannot write 'PATH': ...".
 */
#ifndef KGEN_WRITE_FILE_H
#define KGEN_WRITE_FILE_H

#include <stddef.h>

/* Writes `len` bytes to `path` atomically (a temporary file of a fresh
 * name beside it, then rename), or to stdout when path is NULL or "-".
 * Leaves an existing file untouched on failure. A symbolic link is written
 * through to the file it names; an existing file keeps its permissions. A
 * path that is not a regular file (device, FIFO, /dev/stdout) is written in
 * place, never replaced; a FIFO without a reader is an error. Returns 0 or
 * prints the error and returns -1. */
int kgw_write_file(const char *prog, const char *path, const void *data, size_t len);

/* Checks, before any long work, that `path` (the value of option `opt`)
 * can be written later by kgw_write_file: not empty, not a directory, in a
 * folder that exists and is writable. "-" (standard output) passes.
 * Returns 0, or -1 after printing "PROG: OPT 'PATH': what is wrong". */
int kgw_check_output(const char *prog, const char *opt, const char *path);

/* Whether `output` (an option's file, `what` naming the option) is the
 * same file as `input`, which the program reads: then says so and returns
 * -1 (the caller exits 2 before writing); else 0. "-" and a file that does
 * not exist yet are never an input. */
int kgw_not_input(const char *prog, const char *what, const char *output, const char *input);

#endif
