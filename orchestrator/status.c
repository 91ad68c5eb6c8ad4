/* status.c: `tlmd status` (see status.h). */
#include "orchestrator/status.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "orchestrator/lock.h"

typedef struct {
    db *d;
    FILE *out;
    const char *only;
    int jobs;
    int n;
    tlm_err *e;
} ctx;

static int print_job(void *p, const db_job_summary *j)
{
    ctx *c = p;
    char loss[32] = "-";
    if (j->has_loss)
        snprintf(loss, sizeof loss, "%.4g", j->last_loss);
    double pct = j->tokens_total > 0 ? 100.0 * (double)j->tokens_done / (double)j->tokens_total : 0;
    if (pct > 100)
        pct = 100;
    fprintf(c->out, "  %.12s  %-11s %-11s %-5s %-18s seed %-4lld %3.0f%%  attempts %-2d loss %-8s %s%s%s\n", j->key,
            j->status, j->arch, j->scale, j->label, (long long)j->seed, pct, j->attempts, loss,
            j->reason[0] ? j->reason : "", j->message[0] ? ": " : "", j->message);
    if (!strcmp(j->executor, "slurm")) /* its latest attempt's job, as squeue last said */
        fprintf(c->out, "                slurm job %s %s on %s\n", j->slurm_job[0] ? j->slurm_job : "(not yet known)",
                j->slurm_state[0] ? j->slurm_state : "?", j->node[0] ? j->node : "(no node yet)");
    return 0;
}

static int print_sweep(void *p, const db_sweep_summary *s)
{
    ctx *c = p;
    if (c->only && strcmp(c->only, s->name) != 0)
        return 0;
    c->n++;
    double pct = s->tokens_total > 0 ? 100.0 * (double)s->tokens_done / (double)s->tokens_total : 0;
    fprintf(c->out, "sweep %s (%s): %lld jobs: %lld done, %lld running, %lld pending, %lld interrupted, %lld failed; "
                    "%.1f%% of its tokens trained",
            s->name, s->file, (long long)s->jobs, (long long)s->done, (long long)s->running, (long long)s->pending,
            (long long)s->interrupted, (long long)s->failed, pct);
    if (s->inactive)
        fprintf(c->out, "; %lld job(s) no longer listed", (long long)s->inactive);
    fprintf(c->out, "\n");
    if (c->jobs)
        return db_sweep_jobs(c->d, s->name, print_job, c, c->e);
    return 0;
}

int orc_status(const char *db_path, const char *sweep, int jobs, FILE *out, tlm_err *e)
{
    if (access(db_path, F_OK) != 0)
        return tlm_errf(e, TLM_ECONFIG, "%s does not exist (tlmd --sweeps FILE creates it)", db_path);
    long pid = orc_lock_holder(db_path);
    if (pid > 0)
        fprintf(out, "tlmd is running on %s (pid %ld)\n", db_path, pid);
    else if (pid < 0)
        fprintf(out, "tlmd is running on %s\n", db_path);
    else
        fprintf(out, "no tlmd is running on %s\n", db_path);
    ctx c = {.out = out, .only = sweep, .jobs = jobs, .e = e};
    int rc = db_open(db_path, DB_READONLY, &c.d, e);
    if (rc)
        return rc;
    /* one snapshot for the whole report */
    rc = db_exec(c.d, "BEGIN", e);
    if (!rc)
        rc = db_sweep_summaries(c.d, print_sweep, &c, e);
    db_exec(c.d, "COMMIT", NULL);
    if (!rc && sweep && !c.n)
        rc = tlm_errf(e, TLM_ECONFIG, "%s: no sweep named '%s'", db_path, sweep);
    db_close(c.d);
    return rc;
}
