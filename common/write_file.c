/*
 * write_file.c -- output files for kgen, kgen-bench and kgen-bench-plot
 * (see write_file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write_file.h"

/* Writes all of `len` bytes to fd; 0, or -1 with errno set. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* A path that names something other than a regular file (a character device
 * such as /dev/null or a terminal, a FIFO, /dev/stdout) is written in place:
 * replacing it would turn a device into a plain file. It is opened without
 * O_CREAT and O_TRUNC. A FIFO is opened without blocking: with no process
 * reading it, the write fails at once ("no process is reading it") rather
 * than waiting forever; once open, the write blocks as any writer to a pipe.
 * Returns 0 or -1 after printing the error, or 1 when the path turned out to
 * be a regular file after all (replaced since the caller's stat). */
static int write_in_place(const char *prog, const char *path, const struct stat *sb, const void *data, size_t len)
{
    if (S_ISDIR(sb->st_mode)) {
        fprintf(stderr, "%s: cannot write '%s': it is a directory\n", prog, path);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(sb->st_mode))
            fprintf(stderr, "%s: cannot write '%s': it is a FIFO and no process is reading it\n", prog, path);
        else
            fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
        return -1;
    }
    struct stat now;
    if (fstat(fd, &now) == 0 && S_ISREG(now.st_mode)) {
        close(fd);
        return 1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || write_all(fd, data, len) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
        close(fd);
        return -1;
    }
    if (close(fd) != 0 && errno != EINTR) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
        return -1;
    }
    return 0;
}

int kgw_not_input(const char *prog, const char *what, const char *output, const char *input)
{
    struct stat o, i;
    if (!output || !input || strcmp(output, "-") == 0 || stat(output, &o) != 0 || stat(input, &i) != 0 ||
        o.st_dev != i.st_dev || o.st_ino != i.st_ino)
        return 0;
    fprintf(stderr, "%s: %s '%s' is '%s', which this command reads: writing it would replace it; give another file\n",
            prog, what, output, input);
    return -1;
}

int kgw_write_file(const char *prog, const char *path, const void *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            fprintf(stderr, "%s: writing standard output: %s\n", prog, strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        int rc = write_in_place(prog, path, &sb, data, len);
        if (rc <= 0)
            return rc;
    }
    /* Write through a symbolic link to the file it names, and keep an
     * existing file's permissions; a new file honours the umask. */
    char *real = NULL;
    mode_t mode;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (!(real = realpath(path, NULL))) {
            fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(errno));
            return -1;
        }
        path = real;
    }
    if (stat(path, &sb) == 0) {
        mode = sb.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        fprintf(stderr, "%s: out of memory\n", prog);
        free(real);
        return -1;
    }
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", prog, path, strerror(errno));
        free(tmp);
        free(real);
        return -1;
    }
    int ok = write_all(fd, data, len) == 0;
    int saved = errno;
    if (ok && fchmod(fd, mode) != 0)
        ok = 0, saved = errno;
    if (close(fd) != 0 && ok)
        ok = 0, saved = errno;
    if (ok && rename(tmp, path) != 0)
        ok = 0, saved = errno;
    if (!ok) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    free(real);
    return ok ? 0 : -1;
}

/* The folder a file of `path` is created in (kgw_write_file's temporary
 * file goes there), into buf. */
static void folder_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else if (slash == path)
        snprintf(buf, len, "/");
    else
        snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* The same tests kgw_write_file meets at the end, made up front: a run of
 * minutes (kgen-bench) should not end in "cannot write" for a path that was
 * wrong from the start. Space on the disk and a FIFO's reader can only be
 * known when writing. */
int kgw_check_output(const char *prog, const char *opt, const char *path)
{
    if (!path[0]) {
        fprintf(stderr, "%s: %s '': the path is empty\n", prog, opt);
        return -1;
    }
    if (strcmp(path, "-") == 0)
        return 0;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "%s: %s '%s': it is a directory\n", prog, opt, path);
            return -1;
        }
        if (!S_ISREG(sb.st_mode)) { /* a device or FIFO: written in place */
            if (access(path, W_OK) != 0) {
                fprintf(stderr, "%s: %s '%s': not writable: %s\n", prog, opt, path, strerror(errno));
                return -1;
            }
            return 0;
        }
    } else if (path[strlen(path) - 1] == '/') {
        fprintf(stderr, "%s: %s '%s': names a directory (it ends in '/'), not a file\n", prog, opt, path);
        return -1;
    }
    /* A symbolic link is written through: the folder that matters is its
     * target's. */
    char *real = NULL;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (!(real = realpath(path, NULL))) {
            fprintf(stderr, "%s: %s '%s': a symbolic link that cannot be followed: %s\n", prog, opt, path,
                    strerror(errno));
            return -1;
        }
    }
    char folder[4096];
    folder_of(real ? real : path, folder, sizeof folder);
    free(real);
    char why[160] = "";
    if (stat(folder, &sb) != 0)
        snprintf(why, sizeof why, errno == ENOENT ? "does not exist" : "cannot be examined: %s", strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        snprintf(why, sizeof why, "is not a directory");
    else if (access(folder, W_OK | X_OK) != 0)
        snprintf(why, sizeof why, "is not writable: %s", strerror(errno));
    if (why[0]) {
        fprintf(stderr, "%s: %s '%s': its folder '%s' %s\n", prog, opt, path, folder, why);
        return -1;
    }
    return 0;
}
