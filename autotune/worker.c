/*
 * worker.c -- starting, talking to and stopping GPU worker processes, and
 * the worker's own loop (see worker.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autotune/worker.h"

double kgi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads exactly n bytes: 1, 0 at end of file before any byte, -1 error. */
static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

static int write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t w = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        put += (size_t)w;
    }
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void describe_status(int status, char *how, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(how, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(how, len, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(how, len, "ended (status 0x%x)", status);
}

void kgi_worker_kill(kgi_worker *w, char *how, size_t howlen)
{
    if (how && howlen)
        how[0] = '\0';
    close_fd(&w->fd);
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        int status = 0;
        pid_t got;
        while ((got = waitpid(w->pid, &status, 0)) < 0 && errno == EINTR)
            ;
        if (how) {
            if (got == w->pid)
                describe_status(status, how, howlen);
            else
                snprintf(how, howlen, "killed (its exit status could not be read: %s)", strerror(errno));
        }
    }
    w->pid = 0;
    w->busy = 0;
}

void kgi_worker_quit(kgi_worker *w)
{
    if (w->pid <= 0)
        return;
    kgi_wreq q;
    memset(&q, 0, sizeof q);
    q.op = KGI_WOP_QUIT;
    if (w->fd >= 0)
        write_full(w->fd, &q, sizeof q);
    close_fd(&w->fd);
    for (double end = kgi_now() + 5.0; kgi_now() < end;) {
        int status;
        pid_t r = waitpid(w->pid, &status, WNOHANG);
        if (r == w->pid || (r < 0 && errno != EINTR)) {
            w->pid = 0;
            return;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    kgi_worker_kill(w, NULL, 0);
}

int kgi_worker_send(kgi_worker *w, const kgi_wreq *req)
{
    return w->fd >= 0 ? write_full(w->fd, req, sizeof *req) : -1;
}

int kgi_worker_read(kgi_worker *w, kgi_wmsg *msg)
{
    return w->fd >= 0 ? read_full(w->fd, msg, sizeof *msg) : 0;
}

/* Waits up to `timeout_s` for fd to become readable: 1, 0 on timeout. */
static int wait_readable(int fd, double timeout_s)
{
    double end = kgi_now() + timeout_s;
    for (;;) {
        double left = end - kgi_now();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
    }
}

static kg_status spawn(kgi_worker *w, const char *exe, int device, const char *template_path, int probe,
                       double timeout_s, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->device = device;
    w->cand = -1;
    /* Close-on-exec, so that a later worker does not inherit this one's
     * socket (only the main thread starts workers: setting the flag after
     * socketpair() is not racy). */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        goto sys_fail;
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    fcntl(sv[1], F_SETFD, FD_CLOEXEC);
    /* Everything the child needs is prepared before fork: between fork and
     * exec only async-signal-safe calls are allowed (the parent has threads). */
    char fd_s[16], dev_s[16];
    snprintf(fd_s, sizeof fd_s, "%d", sv[1]);
    snprintf(dev_s, sizeof dev_s, "%d", device);
    char *argv[] = {"kgen", "tune", "--worker", fd_s, dev_s, (char *)(template_path ? template_path : ""),
                    probe ? "probe" : NULL, NULL};
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]);
        goto sys_fail;
    }
    if (pid == 0) {
        /* The worker dies with the tuner, even when the tuner is killed -9. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(126);
        fcntl(sv[1], F_SETFD, 0);
        execv(exe, argv);
        _exit(127);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];
    if (!wait_readable(w->fd, timeout_s)) {
        kgi_worker_kill(w, NULL, 0);
        snprintf(err, errlen, "GPU worker for device %d did not start within %.0f s", device, timeout_s);
        return KG_ERR_TIMEOUT;
    }
    if (read_full(w->fd, &w->hello, sizeof w->hello) != 1) {
        char how[128];
        kgi_worker_kill(w, how, sizeof how);
        snprintf(err, errlen, "GPU worker for device %d (%s) %s before saying hello", device, exe, how);
        return KG_ERR_IO;
    }
    if (w->hello.status != KG_OK) {
        snprintf(err, errlen, "device %d: %s", device, w->hello.error);
        kgi_worker_quit(w);
        return w->hello.status;
    }
    return KG_OK;
sys_fail:
    snprintf(err, errlen, "cannot start a GPU worker: %s", strerror(errno));
    return KG_ERR_IO;
}

kg_status kgi_worker_spawn(kgi_worker *w, const char *exe, int device, const char *template_path,
                           double timeout_s, char *err, size_t errlen)
{
    return spawn(w, exe, device, template_path, 0, timeout_s, err, errlen);
}

kg_status kgi_worker_probe(const char *exe, int device, const char *template_path, double timeout_s,
                           kgi_whello *hello, char *err, size_t errlen)
{
    kgi_worker w;
    kg_status st = spawn(&w, exe, device, template_path, 1, timeout_s, err, errlen);
    if (st == KG_OK) {
        *hello = w.hello;
        kgi_worker_quit(&w);
    }
    return st;
}

int kgi_worker_main(int device, int fd, const char *template_path, int probe)
{
    signal(SIGPIPE, SIG_IGN);
    kgi_whello hello;
    memset(&hello, 0, sizeof hello);
    kg_context *ctx;
    /* a probe opens no context on the device: the driver's attributes only */
    hello.status = kg_context_open(&ctx, probe ? KG_DEVICE_NONE : device);
    if (hello.status == KG_OK && template_path && template_path[0])
        hello.status = kg_set_template_path(ctx, template_path);
    if (hello.status == KG_OK)
        hello.status = kg_device_query(ctx, device, &hello.info);
    if (hello.status == KG_OK && probe)
        kgi_limits_from_device(&hello.info, &hello.limits);
    else if (hello.status == KG_OK)
        hello.limits = *kgi_context_limits(ctx);
    if (hello.status == KG_OK) {
        if (kg_device_count(ctx, &hello.device_count) != KG_OK)
            hello.device_count = 1;
    }
    if (hello.status != KG_OK)
        snprintf(hello.error, sizeof hello.error, "%s", ctx ? kg_last_error(ctx) : kg_strerror(hello.status));
    int said = write_full(fd, &hello, sizeof hello) == 0;
    if (!said || hello.status != KG_OK || probe) {
        kg_context_close(ctx);
        return said && hello.status == KG_OK ? 0 : 1;
    }
    kgi_bufs *bufs = NULL;
    int rc = 0;
    for (;;) {
        kgi_wreq req;
        if (read_full(fd, &req, sizeof req) != 1 || (req.op != KGI_WOP_EVAL && req.op != KGI_WOP_FINAL))
            break;
        kgi_wmsg msg;
        if (req.op == KGI_WOP_EVAL)
            kgi_measure(ctx, &bufs, &req, fd, &msg);
        else
            kgi_measure_final(ctx, &bufs, &req, &msg);
        if (write_full(fd, &msg, sizeof msg) != 0) {
            rc = 1;
            break;
        }
        if (msg.fatal) {
            /* The context is not to be trusted (nor, after a fault, closed
             * cleanly): leave at once and let the parent start a new worker. */
            _exit(3);
        }
    }
    kgi_measure_free(ctx, bufs);
    kg_context_close(ctx);
    return rc;
}
