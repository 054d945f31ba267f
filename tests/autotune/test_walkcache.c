/*
 * test_walkcache.c -- the walk cache (autotune/walkcache.h): a walk read
 * back is the walk stored (candidates, their resources and coordinates,
 * kept rejections, counts); its key changes with each input the walk
 * depends on (limits, layout, --space, the template list, a template's
 * text) and not otherwise; a changed key, a damaged, truncated or
 * malformed entry and a symbolic-linked cache directory are misses, never
 * a crash.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autotune/walkcache.h"
#include "testutil.h"

static const char *const TMPLS[] = {"tricky", "matmul"};
static const char SPACE[] = "bm=16,64 bn=32,128 bk=8 tm=1,4 tn=2,8 pad=0,4 vec=1,4";

static void walk(kgi_host *h, int sm, kgi_space *sp)
{
    char err[1024];
    memset(sp, 0, sizeof *sp);
    for (int i = 0; i < 2; i++)
        CHECK_MSG(kgi_space_add_template(sp, h, TMPLS[i], "layout=nn", i ? SPACE : NULL, kgi_arch_limits(sm), err,
                                         sizeof err) == KG_OK,
                  "%s: %s", TMPLS[i], err);
}

static int same(const kgi_space *a, const kgi_space *b)
{
    if (a->ntmpl != b->ntmpl || a->n != b->n || a->npruned != b->npruned || a->subtrees != b->subtrees ||
        a->rejected != b->rejected || a->enumerated != b->enumerated || a->checks != b->checks ||
        a->resource_calls != b->resource_calls)
        return 0;
    for (int t = 0; t < a->ntmpl; t++) {
        const kgi_space_tmpl *x = &a->tmpl[t], *y = &b->tmpl[t];
        if (strcmp(x->name, y->name) || x->version != y->version || x->nparams != y->nparams)
            return 0;
        for (int p = 0; p < x->nparams; p++) {
            if (strcmp(x->param[p], y->param[p]) || x->nraw[p] != y->nraw[p])
                return 0;
            for (int v = 0; v < x->nraw[p]; v++)
                if (strcmp(x->value[p][v], y->value[p][v]))
                    return 0;
        }
    }
    for (int c = 0; c < a->n; c++)
        if (a->cand[c].tmpl != b->cand[c].tmpl || strcmp(a->cand[c].config, b->cand[c].config) ||
            memcmp(a->cand[c].coord, b->cand[c].coord, sizeof a->cand[c].coord) ||
            memcmp(&a->cand[c].res, &b->cand[c].res, sizeof a->cand[c].res))
            return 0;
    for (int i = 0; i < a->npruned; i++)
        if (a->pruned[i].tmpl != b->pruned[i].tmpl || a->pruned[i].count != b->pruned[i].count ||
            strcmp(a->pruned[i].config, b->pruned[i].config) || strcmp(a->pruned[i].reason, b->pruned[i].reason) ||
            strcmp(a->pruned[i].free, b->pruned[i].free))
            return 0;
    return 1;
}

static unsigned long long key_of(const char *path, const char *const *tmpls, int n, const char *fixed,
                                 const char *space, int sm)
{
    kgi_host *h = kgi_host_new();
    kgi_host_set_path(h, path);
    kgi_template_info info;
    char err[1024];
    for (int i = 0; i < n; i++)
        CHECK(kgi_host_template_info(h, tmpls[i], &info, err, sizeof err) == KG_OK);
    unsigned long long k = kgi_walkcache_key(h, tmpls, n, fixed, space, kgi_arch_limits(sm));
    kgi_host_free(h);
    return k;
}

static void test_keys(const char *tdir, const char *tmp)
{
    const char *const swapped[] = {"matmul", "tricky"};
    unsigned long long k = key_of(tdir, TMPLS, 2, "layout=nn", SPACE, 90);
    CHECK(k == key_of(tdir, TMPLS, 2, "layout=nn", SPACE, 90));
    CHECK(k != key_of(tdir, TMPLS, 2, "layout=nn", SPACE, 80));
    CHECK(k != key_of(tdir, TMPLS, 2, "layout=nt", SPACE, 90));
    CHECK(k != key_of(tdir, TMPLS, 2, "layout=nn", "bm=16", 90));
    CHECK(k != key_of(tdir, TMPLS, 2, "layout=nn", NULL, 90));
    CHECK(k != key_of(tdir, swapped, 2, "layout=nn", SPACE, 90));
    CHECK(k != key_of(tdir, TMPLS, 1, "layout=nn", SPACE, 90));
    /* a copy of tricky.lua, then one changed by a comment */
    char dir[1024], src[2048], dst[2048];
    snprintf(dir, sizeof dir, "%s/tmpl", tmp);
    mkdir(dir, 0700);
    snprintf(src, sizeof src, "%s/tricky.lua", tdir);
    snprintf(dst, sizeof dst, "%s/tricky.lua", dir);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    CHECK(in && out);
    char buf[4096];
    for (size_t n; in && out && (n = fread(buf, 1, sizeof buf, in)) > 0;)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    CHECK(key_of(dir, TMPLS, 2, "layout=nn", SPACE, 90) == k);
    out = fopen(dst, "ab");
    fputs("-- changed\n", out);
    fclose(out);
    CHECK(key_of(dir, TMPLS, 2, "layout=nn", SPACE, 90) != k);
    /* a library module in the template path counts too */
    char lib[2048];
    snprintf(lib, sizeof lib, "%s/tmpl/lib", tmp);
    mkdir(lib, 0700);
    unlink(dst);
    char both[2100];
    snprintf(both, sizeof both, "%s:%s", dir, tdir);
    CHECK(key_of(both, TMPLS, 2, "layout=nn", SPACE, 90) == k);
    snprintf(lib, sizeof lib, "%s/tmpl/lib/params.lua", tmp);
    out = fopen(lib, "wb");
    snprintf(src, sizeof src, "%s/../../../templates/lib/params.lua", tdir);
    in = fopen(src, "rb");
    CHECK(in && out);
    for (size_t n; in && out && (n = fread(buf, 1, sizeof buf, in)) > 0;)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out) {
        fputs("-- changed\n", out);
        fclose(out);
    }
    CHECK(key_of(both, TMPLS, 2, "layout=nn", SPACE, 90) != k);
    unlink(lib);
}

/* Every truncation of an entry, and damaged counts, decode as malformed. */
static void test_malformed(const kgi_space *sp)
{
    size_t len;
    unsigned char *data = kgi_walkcache_encode(sp, &len);
    CHECK(data != NULL);
    kgi_space back;
    int bad = 0;
    for (size_t n = 0; data && n < len; n += n < 4096 ? 1 : 997)
        if (kgi_walkcache_decode(data, n, &back) == 0) {
            bad++;
            kgi_space_free(&back);
        }
    CHECK_MSG(bad == 0, "%d truncated entries decoded", bad);
    /* the template count, then a candidate's template index, made huge */
    unsigned char *copy = malloc(len);
    memcpy(copy, data, len);
    copy[8] = 0xff;
    CHECK(kgi_walkcache_decode(copy, len, &back) != 0);
    memcpy(copy, data, len);
    for (size_t i = len / 2; i < len / 2 + 64; i++)
        copy[i] = 0xff;
    if (kgi_walkcache_decode(copy, len, &back) == 0)
        kgi_space_free(&back); /* may decode (values only): what matters is no crash */
    free(copy);
    free(data);
}

static char *entry_file(const char *dir, unsigned long long key)
{
    static char path[2048];
    snprintf(path, sizeof path, "%s/%016llx.walk", dir, key);
    return path;
}

static void test_cache(const kgi_space *sp, const char *tmp)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/cache", tmp);
    setenv("KGEN_CACHE_DIR", dir, 1);
    kg_context *ctx;
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    kgi_space back;
    unsigned long long key = 0x1234abcd5678ULL;
    CHECK(kgi_walkcache_load(ctx, key, &back) == 0 && back.n == 0);
    kgi_walkcache_store(ctx, key, sp);
    CHECK(kgi_walkcache_load(ctx, key, &back) == 1);
    CHECK_MSG(same(sp, &back), "the space read back differs from the one stored");
    kgi_space_free(&back);
    CHECK(kgi_walkcache_load(ctx, key + 1, &back) == 0);
    /* a flipped byte in the data: a miss, and the file is gone */
    struct stat sb;
    CHECK(stat(entry_file(dir, key), &sb) == 0);
    int fd = open(entry_file(dir, key), O_RDWR);
    unsigned char b;
    CHECK(pread(fd, &b, 1, sb.st_size / 2) == 1);
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, sb.st_size / 2) == 1);
    close(fd);
    CHECK(kgi_walkcache_load(ctx, key, &back) == 0 && back.n == 0);
    CHECK(stat(entry_file(dir, key), &sb) != 0);
    /* truncated */
    kgi_walkcache_store(ctx, key, sp);
    CHECK(stat(entry_file(dir, key), &sb) == 0 && truncate(entry_file(dir, key), sb.st_size - 7) == 0);
    CHECK(kgi_walkcache_load(ctx, key, &back) == 0);
    /* a sound entry of the cache whose data is not a walk */
    kgi_cache_blob_put(ctx, "walk", key, "not a walk", 10);
    CHECK(kgi_walkcache_load(ctx, key, &back) == 0 && back.n == 0);
    kg_context_close(ctx);
    /* a symbolic link as the cache directory: nothing read or written */
    char link[1024];
    snprintf(link, sizeof link, "%s/link", tmp);
    CHECK(symlink(dir, link) == 0);
    setenv("KGEN_CACHE_DIR", link, 1);
    CHECK(kg_context_open(&ctx, KG_DEVICE_NONE) == KG_OK);
    kgi_walkcache_store(ctx, key + 2, sp);
    CHECK(stat(entry_file(dir, key + 2), &sb) != 0);
    CHECK(kgi_walkcache_load(ctx, key + 2, &back) == 0);
    kg_context_close(ctx);
}

int main(int argc, char **argv)
{
    char tdir[1024], tmp[] = "/tmp/kgen_walkcache_XXXXXX";
    snprintf(tdir, sizeof tdir, "%s/templates", argc > 1 ? argv[1] : ".");
    CHECK(mkdtemp(tmp) != NULL);
    kgi_host *h = kgi_host_new();
    CHECK(h && kgi_host_set_path(h, tdir) == 0);
    kgi_space sp, back;
    walk(h, 90, &sp);
    CHECK(sp.n > 100 && sp.npruned > 10);
    size_t len;
    unsigned char *data = kgi_walkcache_encode(&sp, &len);
    CHECK(data && kgi_walkcache_decode(data, len, &back) == 0);
    CHECK_MSG(same(&sp, &back), "encode, then decode, changed the space");
    /* what the tuner does next works on it alike */
    CHECK(kgi_space_finalize(&sp) == KG_OK && kgi_space_finalize(&back) == KG_OK && same(&sp, &back));
    kgi_space_free(&back);
    free(data);
    kgi_space_free(&sp);
    /* a parameter whose canonical text leaves it out at its default
     * (matmul_warp's skw): read back, the candidates' texts still do */
    {
        char err[1024];
        memset(&sp, 0, sizeof sp);
        CHECK_MSG(kgi_space_add_template(&sp, h, "matmul_warp", "layout=nn",
                                         "bm=64 bn=64 bk=8 wm=32 wn=32 vec=1 pack=0 stages=2 ba=0 pred=0 xb=0 raster=1 "
                                         "splitk=1 cl=0 cc=0 sk=0,1 red=1,4 skw=0,1 minb=1",
                                         kgi_arch_limits(90), err, sizeof err) == KG_OK,
                  "matmul_warp: %s", err);
        int with = 0, omitted = 0;
        for (int c = 0; c < sp.n; c++) {
            with += strstr(sp.cand[c].config, " skw=1 ") != NULL;
            omitted += strstr(sp.cand[c].config, "skw=") == NULL;
        }
        CHECK_MSG(sp.n == 4 && with == 1 && omitted == 3 && !strstr(sp.cand[0].config, "skw=0"),
                  "matmul_warp: %d candidates, %d with skw=1, %d without skw (want 4, 1, 3)", sp.n, with, omitted);
        data = kgi_walkcache_encode(&sp, &len);
        CHECK(data && kgi_walkcache_decode(data, len, &back) == 0);
        CHECK_MSG(same(&sp, &back), "encode, then decode, changed matmul_warp's space (skw)");
        kgi_space_free(&back);
        free(data);
        kgi_space_free(&sp);
    }
    walk(h, 90, &sp);
    test_malformed(&sp);
    test_cache(&sp, tmp);
    test_keys(tdir, tmp);
    kgi_space_free(&sp);
    kgi_host_free(h);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
