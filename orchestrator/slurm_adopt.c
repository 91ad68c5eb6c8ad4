/* slurm_adopt.c: a new tlmd takes over the Slurm jobs of the one before
 * (kill -9, a crash, a reboot of the login node).  One squeue for all the
 * open slurm attempts of results.db; each becomes a run again, found by the
 * token in its job's comment (also when its id was never recorded), and
 * continues reading its events file at the committed offset.  An attempt
 * that never reached Slurm is closed and its job submitted again.  A failed
 * squeue adopts them all as "unknown".
 * Must not: take a job for gone on a failed squeue, or adopt a job twice. */
#include "orchestrator/exec_slurm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "orchestrator/rundir.h"

typedef struct {
    orc_daemon *d;
    orc_sq_job *jobs;
    size_t n_jobs;
    int squeue_ok;
    int adopted, closed;
    tlm_err *e;
} adopt_ctx;

/* An attempt that never reached Slurm (tlmd died between the record and
 * sbatch, or sbatch failed): squeue does not know its token and no worker
 * wrote its events file.  1 when a is one, 0 when not, negative on error. */
static int never_submitted(adopt_ctx *ac, const db_slurm_attempt *a, const char *run_dir)
{
    char ev[TLM_PATH_CAP + 64];
    if (a->slurm_job[0] || !ac->squeue_ok || orc__sq_find(ac->jobs, ac->n_jobs, a->token))
        return 0;
    if (orc_slurm_file(ev, sizeof ev, run_dir, a->token, a->restart, ".events", ac->e))
        return TLM_ECONFIG;
    return access(ev, F_OK) != 0;
}

static int adopt_one(void *p, const db_slurm_attempt *a)
{
    adopt_ctx *ac = p;
    orc_daemon *d = ac->d;
    size_t idx = d->plan.jobs.n;
    for (size_t i = 0; i < d->plan.jobs.n; i++)
        if (!strcmp(d->plan.jobs.v[i].key, a->job)) {
            idx = i;
            break;
        }
    if (idx == d->plan.jobs.n) {
        printf("tlmd: job %.12s: its Slurm attempt %d is still open, but the job is not in these sweeps; left as "
               "it is\n",
               a->job, a->n);
        return 0;
    }
    orc_job *j = &d->plan.jobs.v[idx];
    char run_dir[TLM_PATH_CAP];
    if (orc_rundir_path(d->o->runs_dir, j->key, run_dir, sizeof run_dir, ac->e))
        return TLM_ECONFIG;
    int rc = never_submitted(ac, a, run_dir);
    if (rc < 0)
        return rc;
    if (rc) {
        if (orc_attempt_close_open(d->db, a->id,
                                   "tlmd stopped while submitting it; squeue does not know it and it wrote nothing: "
                                   "submitted again",
                                   ac->e) ||
            db_job_set_status(d->db, j->key, DB_JOB_PENDING, NULL, NULL, ac->e))
            return TLM_EIO;
        ac->closed++;
        return 0;
    }
    int slot = orc_slot_find(d, 1);
    if (slot < 0)
        return tlm_errf(ac->e, TLM_ECONFIG, "more than %d open Slurm attempts to adopt", ORC_MAX_SLOTS);
    orc_run *r = orc_attempt_adopt(d, idx, slot, a->id, a->n, ac->e);
    if (!r)
        return ac->e->code ? ac->e->code : TLM_EIO;
    orc_slurm_run *s = calloc(1, sizeof *s);
    if (!s) {
        orc_attempt_free(r);
        return tlm_errf(ac->e, TLM_ENOMEM, "out of memory");
    }
    r->ex = s;
    const orc_sq_job *q = ac->squeue_ok ? orc__sq_find(ac->jobs, ac->n_jobs, a->token) : NULL;
    snprintf(s->token, sizeof s->token, "%s", a->token);
    snprintf(s->job, sizeof s->job, "%s", a->slurm_job);
    snprintf(s->state, sizeof s->state, "%s", ac->squeue_ok ? (q ? q->state : "gone") : "unknown");
    snprintf(s->node, sizeof s->node, "%s", a->node);
    s->restart = a->restart;
    s->offset = a->events_offset;
    s->ever_running = !strcmp(a->state, "RUNNING") || !strcmp(a->state, "ended");
    orc__slurm_set_paths(r);
    orc__slurm_set_where(r);
    orc_run_placed(d, r, 0);
    ac->adopted++;
    if (q) {
        s->gone_polls = 0;
        orc__slurm_update_state(r, q); /* also records the id of a job found by its comment */
    } else if (ac->squeue_ok) {
        s->gone_polls = 1; /* one more answer without it, and it is gone */
    }
    printf("tlmd: job %.12s: adopted %s (%s) of the previous daemon, attempt %d, from byte %lld of its events\n",
           j->key, r->where, s->state, r->n, (long long)s->offset);
    return 0;
}

static int count_one(void *p, const db_slurm_attempt *a)
{
    (void)a;
    (*(int *)p)++;
    return 0;
}

/* Also the set-up that needs the database and the runs folder. */
int orc__slurm_recover(orc_daemon *d, tlm_err *e)
{
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    const orc_opts *o = d->o;
    c->d = d;
    if (!realpath(o->runs_dir, c->abs_runs))
        return tlm_errf(e, TLM_EIO, "--runs %s: %s", o->runs_dir, strerror(errno));
    if (db_database_id(d->db, c->dbid, e) || orc__slurm_write_script(c, o, e))
        return e->code ? e->code : TLM_EIO;
    int n = 0;
    int rc = db_open_slurm_attempts(d->db, count_one, &n, e);
    if (rc || !n)
        return rc;
    /* one squeue for all of them; a failure means "unknown", never "gone" */
    adopt_ctx ac = {.d = d, .e = e};
    tlm_err qe;
    ac.squeue_ok = orc__squeue(c, &ac.jobs, &ac.n_jobs, &qe) == 0;
    if (ac.squeue_ok)
        c->polls_ok++;
    else
        printf("tlmd: %s: adopting %d open Slurm attempt(s) in state unknown; squeue is asked again every %g s\n",
               qe.msg, n, o->slurm_poll);
    rc = db_begin(d->db, e);
    if (!rc)
        rc = db_open_slurm_attempts(d->db, adopt_one, &ac, e);
    if (!rc)
        rc = db_commit(d->db, e);
    else
        db_rollback(d->db);
    free(ac.jobs);
    if (!rc)
        printf("tlmd: %d Slurm job(s) of a previous daemon adopted, %d attempt(s) that never reached Slurm closed\n",
               ac.adopted, ac.closed);
    c->next_poll = tlm_clock_mono() + o->slurm_poll;
    return rc;
}

