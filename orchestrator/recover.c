/* recover.c: after a daemon died (kill -9, power loss), its attempts are
 * still open in results.db and its jobs still 'running'.  The next daemon
 * closes those attempts as interrupted (killing any worker still alive:
 * normally the death signal has done it already) and marks the jobs
 * interrupted, so they resume from their last recorded checkpoint.
 * Must not: kill a process that is not that attempt's worker (pids are
 * reused: the command line must name the job's key). */
#include "orchestrator/daemon.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* Is pid a process whose command line mentions this job key? */
static int runs_job(int64_t pid, const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%lld/cmdline", (long long)pid);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (!buf[i])
            buf[i] = ' ';
    buf[n] = '\0';
    return strstr(buf, key) != NULL;
}

typedef struct {
    db *d;
    FILE *log;
    int n, killed;
    tlm_err *e;
} ctx;

static int close_one(void *p, const db_open_attempt *a)
{
    ctx *c = p;
    if (!strcmp(a->executor, "slurm"))
        return 0; /* still running under Slurm, perhaps: the slurm executor adopts it (exec_slurm.c) */
    if (a->pid > 0 && runs_job(a->pid, a->job)) {
        kill(-(pid_t)a->pid, SIGKILL);
        kill((pid_t)a->pid, SIGKILL);
        for (int i = 0; i < 200 && runs_job(a->pid, a->job); i++)
            usleep(10000);
        c->killed++;
    }
    if (orc_attempt_close_open(c->d, a->id,
                               "tlmd stopped (killed or crashed) while this attempt ran; closed at the next start",
                               c->e))
        return TLM_EIO;
    c->n++;
    return 0;
}

int orc_recover(db *d, FILE *log, tlm_err *e)
{
    ctx c = {.d = d, .log = log, .e = e};
    int64_t jobs = 0;
    int rc = db_begin(d, e);
    if (!rc)
        rc = db_open_attempts(d, close_one, &c, e);
    if (!rc)
        rc = db_jobs_recover_running(d, &jobs, e);
    if (!rc)
        rc = db_commit(d, e);
    else
        db_rollback(d);
    if (!rc && (c.n || jobs))
        fprintf(log, "tlmd: recovered from a previous daemon that did not stop cleanly: %d attempt(s) closed, %lld "
                     "job(s) to resume%s\n",
                c.n, (long long)jobs, c.killed ? " (its leftover workers were killed)" : "");
    return rc;
}
