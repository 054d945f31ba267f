/*
 * cache.c -- compiled kernels in memory (per context) and on disk.
 *
 * The key of a kernel is a hash of everything its CUBIN depends on: the
 * source text, the NVRTC options, NVRTC's version, the target architecture
 * and this file's format version. On disk each key is one file,
 * DIR/<16 hex digits of the key>.cubin:
 *
 *   offset  size  field
 *        0     8  magic "KGENCUBN"
 *        8     4  format version                 (little-endian, as all)
 *       12     4  header size (128)
 *       16     8  key
 *       24     8  hash of the source with another seed (a second key check)
 *       32     8  payload (CUBIN) size
 *       40     8  FNV-1a of the payload
 *       48    16  registers, spill stores, spill loads, stack bytes (int32)
 *       64     8  static shared memory bytes
 *       72     8  NVRTC version, architecture (uint32 each)
 *       80    16  arch text ("sm_90")
 *       96     8  compile time in ms (IEEE double)
 *      104    16  zero
 *      120     8  FNV-1a of bytes 0..119
 *      128     -  payload
 *
 * Other entries (kgi_cache_blob_get/put: the tuner's space walks) are
 * DIR/<key>.<ext>, with a shorter header of their own (see below).
 *
 * A file is written to a temporary name in the same directory and renamed
 * into place, so readers and concurrent writers of the same key never see a
 * partial file: the last rename wins and every writer wrote the same bytes.
 * A file that fails any check (magic, version, sizes, either checksum, key)
 * is deleted and treated as a miss, so it is rebuilt.
 *
 * The directory: $KGEN_CACHE_DIR, else $XDG_CACHE_HOME/kgen, else
 * $HOME/.cache/kgen; KGEN_CACHE=0 turns the disk cache off. It is created
 * on the first write with mode 0700 (parents too). A directory that is not
 * the user's (the effective user's, root included), that others may write
 * to, or that is a symbolic link, is not used: a CUBIN is code that will
 * run, and must come from no one else, and a link could point the writes
 * anywhere (as root, into /etc). Only regular files are read, opened without
 * blocking (a FIFO named like an entry is a miss, not a hang). Trouble with
 * the disk cache never fails a compile: it proceeds without the disk cache,
 * and kgi_cache_dir says what went wrong (`kgen compile` prints it); the
 * library itself never prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "runtime.h"

#define HDR_SIZE 128
static const char MAGIC[8] = {'K', 'G', 'E', 'N', 'C', 'U', 'B', 'N'};

typedef struct entry {
    void *cubin;
    size_t size;
    kg_compile_info info;
} entry;

struct kgi_cache {
    kgi_map mem;             /* key -> entry */
    char *dir;               /* NULL: disk cache off */
    int dir_ready;           /* the directory exists and is trusted */
    char why[512];           /* why the disk cache is off, or the last write problem */
};

/* ------------------------------------------------------------ hash map */

static unsigned long long nz(unsigned long long key) { return key ? key : 1; }

void *kgi_map_get(const kgi_map *m, unsigned long long key)
{
    if (!m->cap)
        return NULL;
    key = nz(key);
    for (size_t i = (size_t)key & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return NULL;
    }
}

int kgi_map_put(kgi_map *m, unsigned long long key, void *val)
{
    key = nz(key);
    if ((m->count + 1) * 2 > m->cap) {
        /* grow to keep the load under a half, rehashing every key */
        size_t cap = m->cap ? m->cap * 2 : 16;
        unsigned long long *keys = calloc(cap, sizeof *keys);
        void **vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t j = 0; j < m->cap; j++) {
            if (!m->keys[j])
                continue;
            size_t i = (size_t)m->keys[j] & (cap - 1);
            while (keys[i])
                i = (i + 1) & (cap - 1);
            keys[i] = m->keys[j];
            vals[i] = m->vals[j];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t i = (size_t)key & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void kgi_map_free(kgi_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ keys */

unsigned long long kgi_cache_key(const kg_source *src, int arch)
{
    const char *opts = kgi_nvrtc_options_text(arch);
    int fields[3] = {KGI_CACHE_FORMAT, kgi_nvrtc_version(), arch};
    unsigned long long h = kgi_hash(fields, sizeof fields, KGI_HASH_SEED);
    h = kgi_hash(opts, strlen(opts) + 1, h);
    return kgi_hash(src->text, src->len, h);
}

static unsigned long long source_check(const kg_source *src)
{
    return kgi_hash(src->text, src->len, 0x84222325cbf29ce4ULL);
}

/* ------------------------------------------------------------ open, close */

kg_status kgi_cache_open(kg_context *ctx)
{
    struct kgi_cache *c = calloc(1, sizeof *c);
    if (!c)
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    ctx->cache = c;
    const char *off = getenv("KGEN_CACHE");
    if (off && strcmp(off, "0") == 0) {
        snprintf(c->why, sizeof c->why, "off (KGEN_CACHE=0)");
        return KG_OK;
    }
    const char *dir = getenv("KGEN_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *suffix = "";
    if (!dir || !dir[0]) {
        if (xdg && xdg[0] == '/') {
            dir = xdg;
            suffix = "/kgen";
        } else if (home && home[0]) {
            dir = home;
            suffix = "/.cache/kgen";
        } else {
            snprintf(c->why, sizeof c->why, "off (no KGEN_CACHE_DIR, XDG_CACHE_HOME or HOME)");
            return KG_OK;
        }
    }
    size_t n = strlen(dir) + strlen(suffix) + 1;
    if (!(c->dir = malloc(n)))
        return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
    snprintf(c->dir, n, "%s%s", dir, suffix);
    return KG_OK;
}

void kgi_cache_close(kg_context *ctx)
{
    struct kgi_cache *c = ctx->cache;
    if (!c)
        return;
    for (size_t i = 0; i < c->mem.cap; i++) {
        entry *e = c->mem.vals[i];
        if (c->mem.keys[i] && e) {
            free(e->cubin);
            free(e);
        }
    }
    kgi_map_free(&c->mem);
    free(c->dir);
    free(c);
    ctx->cache = NULL;
}

const char *kgi_cache_dir(kg_context *ctx, const char **why)
{
    struct kgi_cache *c = ctx->cache;
    if (why)
        *why = c ? c->why : "";
    return c ? c->dir : NULL;
}

/* ------------------------------------------------------------ the directory */

/* Whether an existing directory may hold code we will run: a directory
 * itself (not a symbolic link to one), ours, and not writable by group or
 * others. Sets c->why when not. */
static int dir_trusted(struct kgi_cache *c)
{
    struct stat sb;
    if (lstat(c->dir, &sb) != 0) {
        snprintf(c->why, sizeof c->why, "cannot use %s: %s", c->dir, strerror(errno));
        return 0;
    }
    if (S_ISLNK(sb.st_mode)) {
        snprintf(c->why, sizeof c->why, "off: %s is a symbolic link; give the directory itself", c->dir);
        return 0;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(c->why, sizeof c->why, "off: %s is not a directory", c->dir);
        return 0;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(c->why, sizeof c->why, "off: %s is %s; a kernel cache must be private to the user",
                 c->dir, sb.st_uid != geteuid() ? "owned by another user" : "writable by other users");
        return 0;
    }
    return 1;
}

/* Creates the directory and its parents with mode 0700. */
static int make_dirs(struct kgi_cache *c)
{
    char *p = strdup(c->dir);
    if (!p)
        return 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            snprintf(c->why, sizeof c->why, "cannot create %s: %s", p, strerror(errno));
            free(p);
            return 0;
        }
        *s = saved;
        if (!saved)
            break;
    }
    free(p);
    return 1;
}

/* ------------------------------------------------------------ entries */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void entry_path(const struct kgi_cache *c, unsigned long long key, char *path, size_t len)
{
    snprintf(path, len, "%s/%016llx.cubin", c->dir, key);
}

static void encode_header(unsigned char *h, unsigned long long key, unsigned long long check,
                          const void *cubin, size_t size, const kg_compile_info *info, int arch)
{
    memset(h, 0, HDR_SIZE);
    memcpy(h, MAGIC, 8);
    put32(h + 8, KGI_CACHE_FORMAT);
    put32(h + 12, HDR_SIZE);
    put64(h + 16, key);
    put64(h + 24, check);
    put64(h + 32, size);
    put64(h + 40, kgi_hash(cubin, size, KGI_HASH_SEED));
    put32(h + 48, (uint32_t)info->registers);
    put32(h + 52, (uint32_t)info->spill_stores);
    put32(h + 56, (uint32_t)info->spill_loads);
    put32(h + 60, (uint32_t)info->stack_bytes);
    put64(h + 64, info->smem_static);
    put32(h + 72, (uint32_t)kgi_nvrtc_version());
    put32(h + 76, (uint32_t)arch);
    memcpy(h + 80, info->arch, sizeof info->arch < 16 ? sizeof info->arch : 16);
    h[95] = '\0';
    uint64_t ms;
    memcpy(&ms, &info->compile_ms, sizeof ms);
    put64(h + 96, ms);
    put64(h + 120, kgi_hash(h, 120, KGI_HASH_SEED));
}

int kgi_cache_entry_parse(const unsigned char *buf, size_t len, unsigned long long key, unsigned long long check,
                          kg_compile_info *info)
{
    if (len < HDR_SIZE)
        return -1;
    const unsigned char *h = buf;
    uint64_t size = get64(h + 32);
    if (!(memcmp(h, MAGIC, 8) == 0 && get32(h + 8) == KGI_CACHE_FORMAT && get32(h + 12) == HDR_SIZE &&
          get64(h + 120) == kgi_hash(h, 120, KGI_HASH_SEED) && get64(h + 16) == key && get64(h + 24) == check &&
          size == (uint64_t)len - HDR_SIZE && size > 0 &&
          get64(h + 40) == kgi_hash(h + HDR_SIZE, (size_t)size, KGI_HASH_SEED)))
        return -1;
    memset(info, 0, sizeof *info);
    info->registers = (int)get32(h + 48);
    info->spill_stores = (int)get32(h + 52);
    info->spill_loads = (int)get32(h + 56);
    info->stack_bytes = (int)get32(h + 60);
    info->smem_static = (size_t)get64(h + 64);
    memcpy(info->arch, h + 80, sizeof info->arch < 16 ? sizeof info->arch : 16);
    info->arch[sizeof info->arch - 1] = '\0';
    info->cubin_size = (size_t)size;
    return 0;
}

/* Reads the regular file `path` (at least `min` bytes, under 1 GiB) whole
 * and checks it with `valid`; returns the buffer (*n bytes) when it passes,
 * NULL on a miss. A file that is read whole and fails the check is damaged:
 * it is deleted so that it is rebuilt, unless a writer has renamed a new
 * file into its place since it was opened (an I/O error says nothing about
 * the content, so that file stays). */
static unsigned char *read_checked(const char *path, size_t min,
                                   int (*valid)(const unsigned char *buf, size_t n, void *ud), void *ud, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    struct stat sb;
    unsigned char *buf = NULL;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= (off_t)min && sb.st_size < (1 << 30) &&
             (buf = malloc((size_t)sb.st_size));
    size_t got = 0;
    int unreadable = 0;
    while (ok && got < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            ok = 0, unreadable = r < 0;
        else
            got += (size_t)r;
    }
    close(fd);
    if (ok && valid(buf, (size_t)sb.st_size, ud)) {
        *n = (size_t)sb.st_size;
        return buf;
    }
    struct stat now;
    if (buf && !unreadable && stat(path, &now) == 0 && now.st_ino == sb.st_ino && now.st_dev == sb.st_dev)
        unlink(path);
    free(buf);
    return NULL;
}

struct entry_check {
    unsigned long long key, check;
    entry *e;
};

static int entry_valid(const unsigned char *buf, size_t n, void *ud)
{
    struct entry_check *c = ud;
    return kgi_cache_entry_parse(buf, n, c->key, c->check, &c->e->info) == 0;
}

/* Reads and checks the entry for `key`; 1 on a hit (e filled), 0 on a miss.
 * A damaged file is deleted. */
static int disk_load(struct kgi_cache *c, unsigned long long key, unsigned long long check, entry *e)
{
    char path[4096];
    entry_path(c, key, path, sizeof path);
    struct entry_check ec = {key, check, e};
    size_t n;
    unsigned char *buf = read_checked(path, HDR_SIZE, entry_valid, &ec, &n);
    if (!buf)
        return 0;
    e->size = e->info.cubin_size;
    /* the payload moves to the front: the entry owns one allocation */
    memmove(buf, buf + HDR_SIZE, e->size);
    e->cubin = buf;
    return 1;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        len -= (size_t)w;
    }
    return 1;
}

/* Writes header and data to `path` through a temporary file and rename();
 * a failure is noted in c->why and otherwise ignored. */
static void write_file(struct kgi_cache *c, const char *path, const void *hdr, size_t hlen, const void *data,
                       size_t len)
{
    char tmp[4096 + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(c->why, sizeof c->why, "cannot write to %s: %s", c->dir, strerror(errno));
        return;
    }
    int ok = write_all(fd, hdr, hlen) && write_all(fd, data, len);
    int err = errno;
    if (close(fd) != 0 && ok)
        ok = 0, err = errno;
    if (ok && rename(tmp, path) != 0)
        ok = 0, err = errno;
    if (!ok) {
        snprintf(c->why, sizeof c->why, "cannot write %.400s: %s", path, strerror(err));
        unlink(tmp);
    }
}

/* Writes a kernel entry (write_file). */
static void disk_store(struct kgi_cache *c, unsigned long long key, unsigned long long check, const entry *e,
                       int arch)
{
    char path[4096];
    entry_path(c, key, path, sizeof path);
    unsigned char h[HDR_SIZE];
    encode_header(h, key, check, e->cubin, e->size, &e->info, arch);
    write_file(c, path, h, sizeof h, e->cubin, e->size);
}

/* Prepares the directory the first time it is needed (create: for a write). */
static int dir_ready(struct kgi_cache *c, int create)
{
    if (!c->dir)
        return 0;
    if (c->dir_ready)
        return 1;
    struct stat sb;
    if (lstat(c->dir, &sb) != 0) {
        if (!create || !make_dirs(c))
            return 0;
    }
    if (!dir_trusted(c)) {
        free(c->dir);
        c->dir = NULL;
        return 0;
    }
    return c->dir_ready = 1;
}

const char *kgi_cache_dir_writable(kg_context *ctx, const char **why)
{
    struct kgi_cache *c = ctx->cache;
    if (why)
        *why = c ? c->why : "";
    if (!c || !dir_ready(c, 1))
        return NULL;
    char tmp[4096 + 32];
    snprintf(tmp, sizeof tmp, "%s/.kgen-probe.XXXXXX", c->dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(c->why, sizeof c->why, "cannot write to %s: %s", c->dir, strerror(errno));
        return NULL;
    }
    close(fd);
    unlink(tmp);
    c->why[0] = '\0';
    return c->dir;
}

int kgi_cache_take_problem(kg_context *ctx, char *out, size_t len)
{
    struct kgi_cache *c = ctx->cache;
    if (!c || !c->dir || !c->why[0])
        return 0;
    snprintf(out, len, "%s", c->why);
    c->why[0] = '\0';
    return 1;
}

/* ------------------------------------------------------------ other entries */

/* DIR/<key>.<ext>: a 48-byte header (magic "KGENBLOB", format, header
 * size, key, data size, FNV-1a of the data, FNV-1a of bytes 0..39), then
 * the data. */
#define BLOB_HDR 48
static const char BLOB_MAGIC[8] = {'K', 'G', 'E', 'N', 'B', 'L', 'O', 'B'};

static int blob_path(const struct kgi_cache *c, const char *ext, unsigned long long key, char *path, size_t len)
{
    return (size_t)snprintf(path, len, "%s/%016llx.%s", c->dir, key, ext) < len;
}

static int blob_valid(const unsigned char *buf, size_t n, void *ud)
{
    unsigned long long key = *(const unsigned long long *)ud;
    uint64_t size = get64(buf + 24);
    return memcmp(buf, BLOB_MAGIC, 8) == 0 && get32(buf + 8) == KGI_CACHE_FORMAT && get32(buf + 12) == BLOB_HDR &&
           get64(buf + 40) == kgi_hash(buf, 40, KGI_HASH_SEED) && get64(buf + 16) == key &&
           size == (uint64_t)n - BLOB_HDR && get64(buf + 32) == kgi_hash(buf + BLOB_HDR, (size_t)size, KGI_HASH_SEED);
}

int kgi_cache_blob_get(kg_context *ctx, const char *ext, unsigned long long key, void **data, size_t *len)
{
    struct kgi_cache *c = ctx->cache;
    char path[4096];
    *data = NULL, *len = 0;
    if (!c || !dir_ready(c, 0) || !blob_path(c, ext, key, path, sizeof path))
        return 0;
    size_t n;
    unsigned char *buf = read_checked(path, BLOB_HDR, blob_valid, &key, &n);
    if (!buf)
        return 0;
    memmove(buf, buf + BLOB_HDR, n - BLOB_HDR);
    *data = buf, *len = n - BLOB_HDR;
    return 1;
}

void kgi_cache_blob_put(kg_context *ctx, const char *ext, unsigned long long key, const void *data, size_t len)
{
    struct kgi_cache *c = ctx->cache;
    char path[4096];
    if (!c || !dir_ready(c, 1) || !blob_path(c, ext, key, path, sizeof path))
        return;
    unsigned char h[BLOB_HDR];
    memset(h, 0, sizeof h);
    memcpy(h, BLOB_MAGIC, 8);
    put32(h + 8, KGI_CACHE_FORMAT);
    put32(h + 12, BLOB_HDR);
    put64(h + 16, key);
    put64(h + 24, len);
    put64(h + 32, kgi_hash(data, len, KGI_HASH_SEED));
    put64(h + 40, kgi_hash(h, 40, KGI_HASH_SEED));
    write_file(c, path, h, sizeof h, data, len);
}

kg_status kgi_cache_compile(kg_context *ctx, const kg_source *src, int arch, const void **cubin, size_t *size,
                            kg_compile_info *info)
{
    struct kgi_cache *c = ctx->cache;
    unsigned long long key = kgi_cache_key(src, arch);
    entry *e = kgi_map_get(&c->mem, key);
    int from = 1;
    if (!e) {
        if (!(e = calloc(1, sizeof *e)))
            return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        unsigned long long check = source_check(src);
        from = 2;
        if (!dir_ready(c, 0) || !disk_load(c, key, check, e)) {
            from = 0;
            kgi_nvrtc_result r;
            char *err = NULL;
            char name[96];
            snprintf(name, sizeof name, "%s.cu", src->template_name[0] ? src->template_name : "kernel");
            kg_status st = kgi_nvrtc_compile(src->text, name, arch, &r, &err);
            if (st != KG_OK) {
                free(e);
                if (!err)
                    return kgi_fail(ctx, st, "NVRTC: %s", kg_strerror(st));
                return kgi_fail_owned(ctx, st, err);
            }
            e->cubin = r.cubin;
            e->size = r.cubin_size;
            e->info = r.info;
            r.cubin = NULL;
            kgi_nvrtc_result_free(&r);
            if (dir_ready(c, 1))
                disk_store(c, key, check, e, arch);
        }
        e->info.smem_dynamic = src->geo.smem_dynamic;
        if (kgi_map_put(&c->mem, key, e) != 0) {
            free(e->cubin);
            free(e);
            return kgi_fail(ctx, KG_ERR_NOMEM, "out of memory");
        }
    }
    *cubin = e->cubin;
    *size = e->size;
    *info = e->info;
    info->cache = from;
    if (from)
        info->compile_ms = 0;
    return KG_OK;
}
