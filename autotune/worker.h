/*
 * worker.h -- GPU worker processes.
 *
 * A kernel that writes out of bounds poisons its CUDA context for good, and
 * one that never ends takes its process with it. So candidates run in a
 * child process per GPU: the parent (which never initialises the driver)
 * keeps the database and a watchdog; a worker opens its own context, answers
 * requests over a pipe, and is killed (SIGKILL) and replaced when it exceeds
 * its time limit or dies. Workers are fresh processes (fork, then exec of
 * the kgen binary), so nothing of the parent's threads or state leaks in.
 *
 * Messages are fixed-size structs (the same binary on both ends) over a
 * Unix socket pair; the parent sends with MSG_NOSIGNAL, so a worker that
 * died makes a send fail rather than kill the tuner with SIGPIPE.
 */
#ifndef KGEN_AUTOTUNE_WORKER_H
#define KGEN_AUTOTUNE_WORKER_H

#include <sys/types.h>

#include "autotune/result.h"

/* EVAL: verify and time a candidate (measure.c). FINAL: one sample of the
 * final stage: a candidate that was already verified at this shape, launched
 * back to back for about `sample_ms` (tune.c). */
enum { KGI_WOP_EVAL = 1, KGI_WOP_QUIT = 2, KGI_WOP_FINAL = 3 };
enum { KGI_WMSG_PROBE = 1, KGI_WMSG_RESULT = 2 };

/* Parent -> worker: evaluate one candidate. */
typedef struct kgi_wreq {
    int op;
    char tmpl[64];
    char config[512];
    char layout[4];
    int m, n, k;
    float alpha, beta;
    int m_multiple, n_multiple, k_multiple, ld_multiple; /* the kernel's preconditions */
    int m_max, n_max;          /* the largest M, N the kernel takes; 0: any */
    double max_seconds;        /* timing cap */
    double cut_ms;             /* > 0: a first launch slower than this is `slow`, not timed in full */
    double slow_factor;        /* for the reason text */
    int flush_l2;
    int back_to_back;          /* time launches queued back to back (kgi_time_loop), not one at a time */
    double sample_ms;          /* FINAL: the back-to-back run's target length */
    double expect_ms;          /* FINAL: the search's time per launch, to size the run */
    unsigned long long seed;
} kgi_wreq;

/* Worker -> parent: a heartbeat after the first launch (PROBE), then the
 * RESULT. `fatal`: the context is unusable and the worker exits. */
typedef struct kgi_wmsg {
    int type;
    int fatal;
    int compiled_here;         /* the CUBIN was not in the disk cache */
    double probe_ms;
    kgi_result res;
} kgi_wmsg;

/* Worker -> parent, once, after opening its context. */
typedef struct kgi_whello {
    kg_status status;
    char error[1024];
    kg_device_info info;
    kgi_limits limits;
    int device_count;
} kgi_whello;

typedef struct kgi_worker {
    pid_t pid;
    int fd;                    /* the parent's end of the socket pair, -1 when closed */
    int device;
    int busy;                  /* a request is outstanding */
    int cand;                  /* its candidate */
    double started, deadline;  /* monotonic seconds */
    double probe_ms;           /* from the heartbeat, 0 before */
    kgi_whello hello;
} kgi_worker;

/* Starts a worker for `device` by running `exe tune --worker ...` and waits
 * (at most timeout_s) for its hello. On failure err says why and the worker
 * is cleaned up; KG_ERR_NO_DRIVER / KG_ERR_NO_DEVICE as the worker reports. */
kg_status kgi_worker_spawn(kgi_worker *w, const char *exe, int device, const char *template_path,
                           double timeout_s, char *err, size_t errlen);
/* The hello of a worker that only queries `device` (the driver's
 * attributes, no context: much cheaper than a worker) and exits: what a
 * run needs to walk its space and read the database before it knows
 * whether anything is left to time. Errors as kgi_worker_spawn's. */
kg_status kgi_worker_probe(const char *exe, int device, const char *template_path, double timeout_s,
                           kgi_whello *hello, char *err, size_t errlen);
int kgi_worker_send(kgi_worker *w, const kgi_wreq *req);
/* Reads one message: 1, 0 at end of file (the worker died), -1 on error. */
int kgi_worker_read(kgi_worker *w, kgi_wmsg *msg);
/* Kills (SIGKILL) and reaps; *how describes how it ended ("killed by
 * signal 9", "exited with status 3"). */
void kgi_worker_kill(kgi_worker *w, char *how, size_t howlen);
/* Asks the worker to quit and reaps it (killing it after 5 s). */
void kgi_worker_quit(kgi_worker *w);

/* The worker's side: serves requests on fd until QUIT or end of file
 * (probe: says hello and exits). Returns the process exit status. */
int kgi_worker_main(int device, int fd, const char *template_path, int probe);

/* measure.c, in the worker: verifies and times one candidate; sends the
 * PROBE heartbeat on out_fd and fills *msg with the RESULT. `bufs` keeps
 * the tuned shape's operands between candidates (free with
 * kgi_measure_free). */
typedef struct kgi_bufs kgi_bufs;
void kgi_measure(kg_context *ctx, kgi_bufs **bufs, const kgi_wreq *req, int out_fd, kgi_wmsg *msg);
void kgi_measure_free(kg_context *ctx, kgi_bufs *bufs);
/* measure.c, in the worker: one FINAL sample. After one warm-up launch,
 * the RESULT's time_ms is the time per launch of ceil(sample_ms /
 * expect_ms) launches (at most 1000) back to back on the tuned shape's
 * operands (no L2 flush, no restore of C between them), reps their count. */
void kgi_measure_final(kg_context *ctx, kgi_bufs **bufs, const kgi_wreq *req, kgi_wmsg *msg);

/* monotonic seconds */
double kgi_now(void);

#endif
