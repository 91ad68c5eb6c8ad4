/* evalrun.h: `tlm-worker --eval`: run evaluation suites (engine/eval/eval.h) on
 * a finished or intermediate checkpoint, or on a Hugging Face GPT-2 folder,
 * and report them as events: `eval` and `layer` events at the checkpoint's
 * step and tokens, heartbeats, then `done` or `error` (docs/protocol.md). */
#ifndef TLM_WORKER_EVALRUN_H
#define TLM_WORKER_EVALRUN_H

typedef struct wrk_eval_opts {
    const char *checkpoint; /* --checkpoint DIR: step folder, run folder or GPT-2 folder */
    const char *config;     /* --config FILE or NULL (then the checkpoint's own) */
    const char *suites;     /* --suites a,b,... or NULL (the config's eval.suites) */
    const char *job;
    int threads;
    int events_fd;
    double heartbeat;
} wrk_eval_opts;

/* Exit status (docs/protocol.md). */
int wrk_eval_run(const wrk_eval_opts *o);

#endif
