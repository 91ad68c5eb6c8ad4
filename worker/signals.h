/* signals.h: how a worker is asked to stop.  SIGTERM and SIGINT set a flag
 * (the first one wins; repeats change nothing) that the training loop
 * polls between steps: it finishes the step, writes a checkpoint, emits
 * `stopped` and exits 75.  SIGPIPE is ignored (a reader that went away is
 * noticed as a failed write).  --die-with-parent asks Linux to send
 * SIGTERM when the parent process exits. */
#ifndef TLM_WORKER_SIGNALS_H
#define TLM_WORKER_SIGNALS_H

void wrk_signals_install(void);
/* 0 while no stop was asked, else the signal number. */
int wrk_stop_signal(void);
/* "SIGTERM", "SIGINT" or "SIG<n>". */
const char *wrk_signal_name(int sig);
/* PR_SET_PDEATHSIG(SIGTERM).  0 when armed, 1 when the parent (pid ppid0,
 * read at start) is already gone, -1 when the system cannot do it. */
int wrk_die_with_parent(int ppid0);

#endif
