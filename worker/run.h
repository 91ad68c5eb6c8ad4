/* run.h: one training job from start to exit status: run folder checks,
 * trainer set-up and resume, the event stream (start, layer, step, eval,
 * ckpt, heartbeat, and exactly one of done / stopped / error), progress on
 * stderr, and the mapping of failures to the exit statuses of
 * docs/protocol.md. */
#ifndef TLM_WORKER_RUN_H
#define TLM_WORKER_RUN_H

#include "common/err.h"

typedef struct wrk_opts {
    const char *config;   /* --config FILE */
    const char *out;      /* --out DIR */
    const char *device;   /* "cpu" or "cuda:K" */
    const char *job;      /* --job KEY or NULL */
    int resume;
    int threads;          /* 0 = all cores */
    int events_fd;
    int events_sync;      /* --events-file: fsync at checkpoints and the end */
    double heartbeat;     /* seconds */
    int argc;
    char **argv;
} wrk_opts;

/* The GPU index --device names (cuda:K: K; cpu: -1); TLM_ECONFIG for
 * anything else, and for cuda:K in a build without the CUDA backend. */
int wrk_device_index(const char *device, int *k, tlm_err *e);

/* Exit status of the job: TLM_EXIT_OK, or its failure's (common/failure.h). */
int wrk_run(const wrk_opts *o);

#endif
