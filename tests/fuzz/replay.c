/*
 * replay.c -- runs a fuzz harness over files, without libFuzzer: every
 * build's test suite replays each harness's committed corpus and every crash
 * once found (tests/fuzz/crashes/NAME/), so that a fixed crash stays fixed.
 *   replay_NAME DIR|FILE...    (a missing DIR is skipped; no input at all fails)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            unsigned char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            printf("replay: %s: none\n", argv[i]);
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (run_file(path) != 0) {
                closedir(d);
                return 1;
            }
            runs++;
        }
        closedir(d);
    }
    printf("replay: %d inputs\n", runs);
    return runs > 0 ? 0 : 1;
}
