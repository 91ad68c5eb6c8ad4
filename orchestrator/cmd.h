/* cmd.h: one short command (sbatch, squeue, scancel) run to its end: argv,
 * never a shell; found on PATH; its stdout kept (up to a bound), the start
 * of its stderr kept for messages, killed when it outlasts its timeout.
 * Synchronous: the slurm executor calls it from the loop, rarely (one
 * squeue per poll for the whole sweep, one sbatch per attempt), with
 * timeouts of seconds.
 * Must not: leave a child behind, or take more than `timeout` seconds. */
#ifndef TLM_ORC_CMD_H
#define TLM_ORC_CMD_H

#include <stddef.h>

#include "common/err.h"

typedef struct orc_cmd_result {
    int status;       /* exit status; -1 when killed by a signal or timed out */
    int timed_out;
    char *out;        /* stdout, NUL-terminated (malloc'd; caller frees) */
    size_t out_len;
    char err[512];    /* the start of stderr, control characters replaced */
} orc_cmd_result;

/* 0 once the command ran (whatever its status), or an error when it could
 * not be started or its output exceeded out_max bytes. */
int orc_cmd_run(char *const argv[], double timeout, size_t out_max, orc_cmd_result *r, tlm_err *e);
void orc_cmd_result_free(orc_cmd_result *r);

#endif
