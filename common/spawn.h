/* spawn.h: start a helper program with argv (never a shell), its stdin on
 * /dev/null and its stdout/stderr on descriptors the caller chose, with
 * default signal dispositions and nothing blocked, so that the caller's
 * signal handlers and mask never reach it.  Used by tlmd's short commands
 * (orchestrator/cmd.c: sbatch, squeue, ...) and tlm-report's SVG converter
 * (reports/plot_convert.c).
 *
 * Must not: wait for the child or read its output (the callers poll with
 * their own deadlines), or pass a string to a shell. */
#ifndef TLM_COMMON_SPAWN_H
#define TLM_COMMON_SPAWN_H

#include <sys/types.h>

/* Starts argv[0] (searched in PATH when `search` is non-zero, else a path)
 * with argv; stdout on out_fd, stderr on err_fd.  Returns 0 and *pid, or
 * the errno of the failure (the child was not started). */
int tlm_spawn(pid_t *pid, const char *prog, int search, char *const argv[], int out_fd, int err_fd);

#endif
