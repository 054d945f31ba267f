/*
 * test_cache_files.c -- the disk cache facing hostile files (runtime/cache.c),
 * without a GPU: a FIFO named like an entry is a miss, not a hang; a cache
 * directory that is a symbolic link, or that another user owns (checked
 * against the effective user, root included), is not used, and the compile
 * still succeeds with the reason in kgi_cache_dir.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "testutil.h"

static const char CONFIG[] = "bm=32 bn=32 bk=16 tm=2 tn=2 pad=1";

/* Compiles CONFIG in a fresh context: where it came from (0 compiled,
 * 2 disk) or -1; the context's disk-cache reason goes to why. */
static int compile_once(char *why, size_t len)
{
    kg_context *ctx;
    int from = -1;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK) {
        kg_cubin *c;
        if (kg_compile(ctx, NULL, CONFIG, 90, &c) == KG_OK) {
            from = kg_cubin_info(c)->cache;
            kg_cubin_free(c);
        }
        const char *w;
        const char *dir = kgi_cache_dir(ctx, &w);
        snprintf(why, len, "%s%s", dir ? "" : "(off) ", w);
    }
    kg_context_close(ctx);
    return from;
}

/* The name of the one .cubin entry in dir, or "" (count in *n). */
static void find_entry(const char *dir, char *name, size_t len, int *n)
{
    *n = 0;
    name[0] = '\0';
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".cubin") == 0) {
            (*n)++;
            snprintf(name, len, "%s", e->d_name);
        }
    }
    closedir(d);
}

int main(void)
{
    char root[] = "/tmp/kgen-cachefiles-XXXXXX";
    if (!mkdtemp(root))
        return 1;
    char dir[256], path[512], name[128], why[600];
    int n;
    /* A compile that hangs on a FIFO fails the test instead of the suite. */
    alarm(120);

    /* 1. A FIFO in place of the entry. */
    snprintf(dir, sizeof dir, "%s/c", root);
    setenv("KGEN_CACHE_DIR", dir, 1);
    CHECK(compile_once(why, sizeof why) == 0);
    CHECK(compile_once(why, sizeof why) == 2);
    find_entry(dir, name, sizeof name, &n);
    CHECK(n == 1);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    CHECK_MSG(compile_once(why, sizeof why) == 0, "a FIFO entry: %s", why);
    CHECK(compile_once(why, sizeof why) == 2); /* the compile replaced it with a real entry */

    /* 2. A cache directory that is a symbolic link (to a directory of ours). */
    char real[256], link[256];
    snprintf(real, sizeof real, "%s/real", root);
    snprintf(link, sizeof link, "%s/link", root);
    CHECK(mkdir(real, 0700) == 0 && symlink(real, link) == 0);
    setenv("KGEN_CACHE_DIR", link, 1);
    CHECK(compile_once(why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "(off)") && strstr(why, "symbolic link"), "why: %s", why);
    find_entry(real, name, sizeof name, &n);
    CHECK_MSG(n == 0, "%d entries written through the link", n);

    /* 3. A directory another user owns: as root, one chowned away; else /. */
    const char *foreign = "/";
    char owned[256];
    snprintf(owned, sizeof owned, "%s/foreign", root);
    if (geteuid() == 0) {
        CHECK(mkdir(owned, 0700) == 0 && chown(owned, 4242, 4242) == 0);
        foreign = owned;
    }
    setenv("KGEN_CACHE_DIR", foreign, 1);
    CHECK(compile_once(why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "(off)") && strstr(why, "owned by another user"), "why: %s", why);
    if (geteuid() == 0) {
        find_entry(owned, name, sizeof name, &n);
        CHECK_MSG(n == 0, "%d entries written into another user's directory", n);
    }

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    TEST_DONE();
}
