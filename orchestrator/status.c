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

/* A perplexity for the table: two decimals while they fit, NaN and
 * infinities by name. */
static void fmt_ppl(double v, char *out, size_t cap)
{
    if (isnan(v))
        snprintf(out, cap, "nan");
    else if (isinf(v))
        snprintf(out, cap, v > 0 ? "inf" : "-inf");
    else if (fabs(v) < 1e6)
        snprintf(out, cap, "%.2f", v);
    else
        snprintf(out, cap, "%.3g", v);
}

/* One row of the job table, without trailing blanks. */
static void print_row(FILE *out, const char *const col[11])
{
    char line[4 * TLM_MSG_MAX];
    int n = snprintf(line, sizeof line, "  %-12s  %-11s %-11s %-6s %-18s %4s %7s %8s  %-8s %-8s  %s", col[0], col[1],
                     col[2], col[3], col[4], col[5], col[6], col[7], col[8], col[9], col[10]);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ')
        len--;
    fprintf(out, "%.*s\n", (int)len, line);
}

static void print_header(FILE *out)
{
    static const char *const head[11] = {"id",   "status",   "arch", "scale",   "label", "seed",
                                         "trained", "attempts", "loss", "val ppl", "note (why it stopped)"};
    print_row(out, head);
}

static int print_job(void *p, const db_job_summary *j)
{
    ctx *c = p;
    char loss[32] = "-", ppl[32] = "-", seed[24], pct[16], attempts[16], note[2 * TLM_MSG_MAX + 32] = "";
    if (j->has_loss)
        snprintf(loss, sizeof loss, "%.4g", j->last_loss);
    if (j->has_val_ppl)
        fmt_ppl(j->val_ppl, ppl, sizeof ppl);
    /* a done job is whole, even when its last batch was partial */
    double frac = j->tokens_total > 0 ? (double)j->tokens_done / (double)j->tokens_total : 0;
    if (!strcmp(j->status, "done") || frac > 1)
        frac = 1;
    else if (frac > 0.995)
        frac = 0.995; /* 99%, not a rounded 100%, until it is done */
    snprintf(pct, sizeof pct, "%.0f%%", 100 * frac);
    snprintf(seed, sizeof seed, "%lld", (long long)j->seed);
    snprintf(attempts, sizeof attempts, "%d", j->attempts);
    /* the job's failure; else, for a job that stopped short (interrupted,
     * or waiting for its next attempt), how its last attempt ended */
    const char *reason = j->reason[0] ? j->reason : "", *message = j->reason[0] ? j->message : "";
    if (!reason[0] && strcmp(j->status, "done") != 0 && j->last_reason[0]) {
        reason = j->last_reason;
        message = j->last_message;
    }
    if (reason[0])
        snprintf(note, sizeof note, "%s%s%s", reason, message[0] ? ": " : "", message);
    char id[13];
    snprintf(id, sizeof id, "%.12s", j->key);
    const char *const col[11] = {id, j->status, j->arch, j->scale, j->label, seed, pct, attempts, loss, ppl, note};
    print_row(c->out, col);
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
    if (!c->jobs)
        return 0;
    print_header(c->out);
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
