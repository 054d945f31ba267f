/*
 * test_cache.c -- the kernel caches (runtime/cache.c), without a GPU:
 * miss, memory hit, disk hit in a new context; a damaged file of each kind
 * detected, deleted and rebuilt; KGEN_CACHE=0; the directory created 0700
 * with its parents, and one others may write to refused; several processes
 * compiling the same key at once never leaving a torn or stray file.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "testutil.h"

static const char CONFIG[] = "bm=32 bn=32 bk=16 tm=2 tn=2 pad=1";
static char root[64];
static unsigned char *expected;
static size_t expected_size;

/* Compiles CONFIG in a fresh context; returns where it came from (or -1),
 * and checks the bytes against the first compile. */
static int compile_once(const char *config)
{
    kg_context *ctx;
    if (kg_context_open(&ctx, KG_DEVICE_NONE) != KG_OK) {
        kg_context_close(ctx);
        return -1;
    }
    kg_cubin *c;
    int from = -1;
    if (kg_compile(ctx, NULL, config, 90, &c) == KG_OK) {
        size_t size;
        const void *data = kg_cubin_data(c, &size);
        from = kg_cubin_info(c)->cache;
        if (expected && (size != expected_size || memcmp(data, expected, size) != 0))
            from = -2;
        if (!expected) {
            expected = malloc(size);
            memcpy(expected, data, size);
            expected_size = size;
        }
        kg_cubin_free(c);
    }
    kg_context_close(ctx);
    return from;
}

/* The entries (".cubin") and anything else (temporary files) in dir. */
static void count_files(const char *dir, int *entries, int *others, char *first, size_t len)
{
    *entries = *others = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(e->d_name);
        if (n > 6 && strcmp(e->d_name + n - 6, ".cubin") == 0) {
            if (!(*entries)++)
                snprintf(first, len, "%s/%s", dir, e->d_name);
        } else {
            (*others)++;
        }
    }
    closedir(d);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void rewrite(const char *path, const unsigned char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        if (len)
            fwrite(data, 1, len, f);
        fclose(f);
    }
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    long n = file_size(path);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void test_hits_and_damage(void)
{
    char dir[256], entry[512];
    snprintf(dir, sizeof dir, "%s/a/b/kgen", root);
    setenv("KGEN_CACHE_DIR", dir, 1);
    CHECK(compile_once(CONFIG) == 0); /* miss: compiled */
    CHECK(compile_once(CONFIG) == 2); /* a new context: from disk, the same bytes */
    /* the directory and its parents: created private */
    const char *levels[] = {"/a", "/a/b", "/a/b/kgen"};
    for (int i = 0; i < 3; i++) {
        char p[256];
        struct stat sb;
        snprintf(p, sizeof p, "%s%s", root, levels[i]);
        CHECK_MSG(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0700, "%s mode %o", p, sb.st_mode & 0777);
    }
    int entries, others;
    count_files(dir, &entries, &others, entry, sizeof entry);
    CHECK(entries == 1 && others == 0);
    struct stat sb;
    CHECK(stat(entry, &sb) == 0 && (sb.st_mode & 0077) == 0);

    /* the memory cache within one context */
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    kg_cubin *c;
    CHECK(kg_compile(ctx, NULL, CONFIG, 90, &c) == KG_OK && kg_cubin_info(c)->cache == 2);
    kg_cubin_free(c);
    CHECK(kg_compile(ctx, NULL, CONFIG, 90, &c) == KG_OK && kg_cubin_info(c)->cache == 1);
    kg_cubin_free(c);
    kg_context_close(ctx);

    /* another architecture is another key, another file: a valid entry
     * under the wrong name must not be taken */
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    CHECK(kg_compile(ctx, NULL, CONFIG, 80, &c) == KG_OK && kg_cubin_info(c)->cache == 0);
    CHECK(strcmp(kg_cubin_info(c)->arch, "sm_80") == 0);
    kg_cubin_free(c);
    kg_context_close(ctx);
    char other[512] = "";
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' && !strstr(entry, de->d_name))
            snprintf(other, sizeof other, "%s/%s", dir, de->d_name);
    if (d)
        closedir(d);
    size_t olen = 0;
    unsigned char *valid_other = slurp(other, &olen);
    CHECK(valid_other && olen > 128);

    /* each kind of damage: detected, deleted, rebuilt as it was */
    size_t len;
    unsigned char *good = slurp(entry, &len);
    CHECK(good && len > 128);
    if (!good)
        return;
    static const char *const what[] = {"truncated payload", "truncated header", "empty file",
                                       "a bit flipped in the CUBIN", "a bit flipped in the header",
                                       "trailing bytes", "bad magic", "another key's valid entry"};
    for (int kind = 0; kind < 8; kind++) {
        unsigned char *bad = malloc(len + olen + 64);
        memcpy(bad, good, len);
        size_t blen = len;
        switch (kind) {
        case 0: blen = len / 2; break;
        case 1: blen = 100; break;
        case 2: blen = 0; break;
        case 3: bad[len - 10] ^= 0x01; break;
        case 4: bad[50] ^= 0x40; break;
        case 5: memcpy(bad + len, "garbage", 7); blen = len + 7; break;
        case 6: bad[0] = 'X'; break;
        case 7: memcpy(bad, valid_other, olen); blen = olen; break;
        }
        rewrite(entry, bad, blen);
        free(bad);
        CHECK_MSG(compile_once(CONFIG) == 0, "%s: not detected", what[kind]);
        size_t nlen;
        unsigned char *now = slurp(entry, &nlen);
        /* the same entry; only the compile time (bytes 96..103) and the
         * header's checksum may differ */
        CHECK_MSG(now && nlen == len && memcmp(now, good, 96) == 0 && memcmp(now + 128, good + 128, len - 128) == 0,
                  "%s: not rebuilt as it was", what[kind]);
        free(now);
        CHECK_MSG(compile_once(CONFIG) == 2, "%s: the rebuilt entry is not used", what[kind]);
    }
    free(good);
    free(valid_other);
    count_files(dir, &entries, &others, other, sizeof other);
    CHECK_MSG(entries == 2 && others == 0, "%d entries, %d other files", entries, others);
}

static void test_disabled_and_untrusted(void)
{
    char dir[256], entry[512];
    int entries, others;
    snprintf(dir, sizeof dir, "%s/off", root);
    setenv("KGEN_CACHE_DIR", dir, 1);
    setenv("KGEN_CACHE", "0", 1);
    CHECK(compile_once(CONFIG) == 0);
    CHECK(compile_once(CONFIG) == 0);
    CHECK(access(dir, F_OK) != 0); /* nothing created */
    unsetenv("KGEN_CACHE");

    /* a directory others may write to is not trusted with code */
    snprintf(dir, sizeof dir, "%s/open", root);
    mkdir(dir, 0700);
    chmod(dir, 0777);
    setenv("KGEN_CACHE_DIR", dir, 1);
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    kg_cubin *c;
    CHECK(kg_compile(ctx, NULL, CONFIG, 90, &c) == KG_OK && kg_cubin_info(c)->cache == 0);
    kg_cubin_free(c);
    const char *why;
    CHECK(kgi_cache_dir(ctx, &why) == NULL);
    CHECK_MSG(strstr(why, "writable by other users"), "why: %s", why);
    kg_context_close(ctx);
    count_files(dir, &entries, &others, entry, sizeof entry);
    CHECK(entries == 0 && others == 0);
}

/* Several processes compile the same key at the same moment into an empty
 * directory, a few rounds, deleting the entry between rounds so that every
 * round races writers against readers. Every process must get the same
 * bytes, and the directory must end with one entry and no temporary file. */
static void test_concurrent_writers(void)
{
    enum { PROCS = 6, ROUNDS = 3 };
    char dir[256], entry[512];
    snprintf(dir, sizeof dir, "%s/race", root);
    setenv("KGEN_CACHE_DIR", dir, 1);
    for (int round = 0; round < ROUNDS; round++) {
        int go[2];
        CHECK(pipe(go) == 0);
        pid_t pids[PROCS];
        for (int p = 0; p < PROCS; p++) {
            pids[p] = fork();
            if (pids[p] == 0) {
                close(go[1]);
                char b;
                if (read(go[0], &b, 1) != 0) /* wait until the parent closes the pipe */
                    _exit(3);
                int from = compile_once(CONFIG);
                int again = compile_once(CONFIG); /* read back whatever is there now */
                _exit(from >= 0 && again == 2 ? 0 : 10 + (from < 0 ? -from : 0));
            }
        }
        close(go[0]);
        close(go[1]); /* all start together */
        int ok = 0;
        for (int p = 0; p < PROCS; p++) {
            int status;
            waitpid(pids[p], &status, 0);
            ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        CHECK_MSG(ok == PROCS, "round %d: %d of %d processes got the right bytes", round, ok, PROCS);
        int entries, others;
        count_files(dir, &entries, &others, entry, sizeof entry);
        CHECK_MSG(entries == 1 && others == 0, "round %d: %d entries, %d stray files", round, entries, others);
        CHECK(compile_once(CONFIG) == 2);
        if (round + 1 < ROUNDS)
            unlink(entry);
    }
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/kgen-test-cache-XXXXXX");
    if (!mkdtemp(root))
        return 1;
    unsetenv("KGEN_CACHE");
    /* the reference bytes, compiled with no disk cache */
    setenv("KGEN_CACHE", "0", 1);
    CHECK(compile_once(CONFIG) == 0 && expected);
    unsetenv("KGEN_CACHE");
    test_hits_and_damage();
    test_disabled_and_untrusted();
    test_concurrent_writers();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", root, root);
    CHECK(system(cmd) == 0);
    free(expected);
    TEST_DONE();
}
