/* attempt.c: one attempt of one job, the same for every executor
 * (executor.h says who owns what).  Makes the run folder agree with the
 * database before a worker sees it, opens the attempt's row (before the
 * launch when the executor must be found again after a crash, else right
 * after it with the process id), gives the run its label, builds the
 * worker's command line and heartbeat period, sends every stop and kill
 * through the run's own executor, takes back what the executor observes
 * (event lines, the scheduler's view, the end, a requeue), and records the
 * attempt's end once its process and its event lines have both ended.
 * Must not: run or signal a process itself, decide what an end means for
 * the job (daemon.c), or record an end before every event line is in. */
#include "orchestrator/daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "engine/config/config.h"
#include "orchestrator/rundir.h"

/* ------------------------------------------------------------ a new run */
static orc_run *run_alloc(orc_daemon *d, size_t job, int slot, tlm_err *e)
{
    orc_run *r = calloc(1, sizeof *r);
    if (!r || !(r->parser = malloc(sizeof *r->parser))) {
        free(r);
        tlm_errf(e, TLM_ENOMEM, "out of memory");
        return NULL;
    }
    r->d = d;
    r->job = job;
    r->slot = slot;
    r->resumed_from = -1;
    r->step = r->tokens = -1; /* unknown until the start event */
    if (orc_rundir_path(d->o->runs_dir, d->plan.jobs.v[job].key, r->run_dir, sizeof r->run_dir, e)) {
        orc_attempt_free(r);
        return NULL;
    }
    return r;
}

void orc_attempt_free(orc_run *r)
{
    if (r->ex && r->d->ex.release)
        r->d->ex.release(r);
    free(r->parser);
    free(r);
}

/* Checkpoints newer than the database recorded: their events may be lost
 * (tlmd died between the worker's checkpoint and its commit), or the
 * database is an older copy.  Resuming from one would skip steps the
 * database never saw, so the worker replays from the last one it knows;
 * the newer ones are kept, never deleted. */
static int set_aside_unrecorded(orc_run *r, const orc_job *j, tlm_err *e)
{
    orc_daemon *d = r->d;
    int64_t keep = -1;
    int moved = 0;
    char note[2048], aside[TLM_PATH_CAP];
    int rc = db_last_ckpt_step(d->db, j->key, &keep, e);
    if (rc)
        return rc;
    snprintf(note, sizeof note,
             "tlmd set these checkpoints aside: the database %s records checkpoints of job\n%s only up to "
             "step %lld (-1: none), so resuming from them would skip steps whose events it does not hold\n"
             "(tlmd stopped between a worker's checkpoint and its record, or the database is an older copy).\n"
             "The job resumed from its last recorded checkpoint instead.  tlmd never reads this folder again.\n"
             "Each step-N folder is a whole checkpoint if its files match its MANIFEST.json\n"
             "(tlm-worker --eval --checkpoint FOLDER verifies it).  Move one back into ../../ckpt/ only\n"
             "together with the database that recorded it; delete this folder when no longer needed.\n",
             d->o->db_path, j->key, (long long)keep);
    rc = orc_rundir_set_aside(r->run_dir, keep, "unrecorded", note, &moved, aside, sizeof aside, e);
    if (!rc && moved)
        orc_notice(d, j->key,
                   "job %.12s: %d checkpoint(s) newer than the last one %s recorded (step %lld) set aside in %s; "
                   "it resumes from step %lld",
                   j->key, moved, d->o->db_path, (long long)keep, aside, (long long)(keep > 0 ? keep : 0));
    return rc;
}

/* The run folder agrees with the database before the worker sees it:
 * its config.json, and no checkpoint the database never recorded. */
static orc_run *prepare(orc_daemon *d, size_t job, int slot, tlm_err *e)
{
    orc_job *j = &d->plan.jobs.v[job];
    orc_run *r = run_alloc(d, job, slot, e);
    if (!r)
        return NULL;
    r->n = j->attempts + 1;
    char *json = NULL, aside[TLM_PATH_CAP];
    int rc = db_job_config(d->db, j->key, &json, e);
    if (rc == 0)
        rc = tlm_errf(e, TLM_EINTERNAL, "job %.12s is not in %s", j->key, d->o->db_path);
    if (rc == 1)
        rc = orc_rundir_prepare(r->run_dir, json, aside, sizeof aside, e);
    free(json);
    if (!rc && aside[0])
        orc_notice(d, j->key, "job %.12s: %s/config.json was not %s's copy of the job's config; kept in %s",
                   j->key, r->run_dir, d->o->db_path, aside);
    if (!rc)
        rc = set_aside_unrecorded(r, j, e);
    if (rc) {
        orc_attempt_free(r);
        return NULL;
    }
    return r;
}

/* Log lines name the architecture when the run has several. */
static void set_label(orc_run *r, const db_job_state *st)
{
    const orc_plan *p = &r->d->plan;
    r->seed = st->seed;
    if (p->arch_mask & (p->arch_mask - 1))
        snprintf(r->label, sizeof r->label, "%.11s %.50s", eng_arch_name(p->jobs.v[r->job].arch), st->label);
    else
        snprintf(r->label, sizeof r->label, "%s", st->label);
}

/* The attempt's row, in the batch (the executor adds its fields). */
static int open_row(orc_run *r, tlm_err *e)
{
    orc_daemon *d = r->d;
    const orc_job *j = &d->plan.jobs.v[r->job];
    db_job_state st;
    int n = 0;
    orc_batch(d);
    int rc = db_job_start_attempt(d->db, j->key, &n, e);
    if (!rc && db_job_state_get(d->db, j->key, &st, e) < 0)
        rc = TLM_EIO;
    if (rc)
        return rc;
    r->n = n;
    set_label(r, &st);
    db_attempt_row row = {.job = j->key, .n = n, .host = d->host, .started_at = tlm_clock_wall()};
    d->ex.fill_row(r, &row);
    return db_attempt_begin(d->db, &row, &r->attempt, e);
}

/* ------------------------------------------------------------ the worker */
int orc_attempt_worker_cmd(const orc_run *r, const orc_worker_place *at, orc_worker_cmd *c, tlm_err *e)
{
    const orc_daemon *d = r->d;
    if ((size_t)snprintf(c->config, sizeof c->config, "%s/config.json", at->run_dir) >= sizeof c->config)
        return tlm_errf(e, TLM_ECONFIG, "%s: path too long", at->run_dir);
    snprintf(c->threads, sizeof c->threads, "%d", at->threads);
    /* a heartbeat four times per --heartbeat-timeout: three may be late */
    double hb = d->o->heartbeat_timeout / 4;
    snprintf(c->heartbeat, sizeof c->heartbeat, "%.0f", hb < 1 ? 1 : hb);
    size_t k = 0;
    c->argv[k++] = (char *)d->worker;
    c->argv[k++] = "--config";
    c->argv[k++] = c->config;
    c->argv[k++] = "--out";
    c->argv[k++] = (char *)at->run_dir;
    if (at->events_fd) {
        c->argv[k++] = "--events-fd";
        c->argv[k++] = (char *)at->events_fd;
    }
    char *tail[] = {"--job", (char *)d->plan.jobs.v[r->job].key, "--threads", c->threads, "--device",
                    (char *)at->device, "--heartbeat", c->heartbeat, "--resume", NULL};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        c->argv[k++] = tail[i];
    return 0;
}

/* ------------------------------------------------------------ start */
int orc_attempt_start(orc_daemon *d, size_t job, int slot, int64_t *row, tlm_err *e)
{
    const orc_executor *x = &d->ex;
    *row = 0;
    orc_run *r = prepare(d, job, slot, e);
    if (!r)
        return e->code ? e->code : TLM_EIO;
    int rc = x->prepare ? x->prepare(r, e) : 0;
    if (!rc && x->record_first) {
        /* the attempt is on disk before anything can run it */
        if (open_row(r, e) || orc_commit(d)) {
            if (!d->fatal)
                orc_fatal(d, e);
            orc_attempt_free(r);
            return TLM_EIO;
        }
        d->plan.jobs.v[job].attempts = r->n;
    }
    if (!rc)
        rc = x->launch(r, e);
    if (rc) {
        *row = r->attempt;
        orc_attempt_free(r);
        return rc;
    }
    r->started = r->last_event = r->progress_at = tlm_clock_mono();
    r->progress = -1;
    /* recorded (and committed by the next tick, within 100 ms, with the
     * worker's first events) with its pid, so that a restart can find it */
    if (!x->record_first && open_row(r, e)) {
        /* the database refused: this worker must not run unrecorded */
        orc_attempt_kill(r, ORC_KILL_NONE);
        orc_fatal(d, e);
    }
    d->plan.jobs.v[job].attempts = r->n;
    orc_run_placed(d, r, 1);
    return d->fatal ? TLM_EIO : 0;
}

orc_run *orc_attempt_adopt(orc_daemon *d, size_t job, int slot, int64_t attempt, int n, tlm_err *e)
{
    orc_run *r = run_alloc(d, job, slot, e);
    if (!r)
        return NULL;
    r->attempt = attempt;
    r->n = n;
    int has_env = db_attempt_has_env(d->db, attempt, e);
    db_job_state st;
    if (has_env < 0 || db_job_state_get(d->db, d->plan.jobs.v[job].key, &st, e) < 0) {
        orc_attempt_free(r);
        return NULL;
    }
    r->got_start = has_env;
    r->tokens = has_env ? st.tokens_done : -1;
    r->db_tokens = st.tokens_done;
    set_label(r, &st);
    r->started = r->last_event = r->progress_at = tlm_clock_mono();
    r->progress = -1;
    return r;
}

/* ------------------------------------------------------------ stops */
void orc_attempt_stop(orc_run *r, int kill_reason)
{
    if (r->exited)
        return;
    if (!r->kill_reason)
        r->kill_reason = kill_reason;
    if (!r->term_sent) {
        r->term_sent = 1;
        r->term_at = tlm_clock_mono();
        r->d->ex.signal(r, SIGTERM);
    }
}

void orc_attempt_kill(orc_run *r, int kill_reason)
{
    r->kill_sent = 1;
    if (!r->kill_reason)
        r->kill_reason = kill_reason;
    r->d->ex.signal(r, SIGKILL);
}

/* ------------------------------------------------------------ the way back */
/* Where the executor's stream goes on, in the batch with the rows of the
 * line before it, and written before them: a commit inside the ingest (a
 * checkpoint's) takes both.  0 when recorded (or nothing to record). */
static int resume_at(orc_run *r, int64_t at)
{
    orc_daemon *d = r->d;
    tlm_err e;
    if (at < 0)
        return 0;
    orc_batch(d);
    if (db_attempt_set_offset(d->db, r->attempt, at, &e)) {
        orc_fatal(d, &e);
        return -1;
    }
    return 0;
}

void orc_attempt_line(orc_run *r, const char *line, size_t len, int64_t resume)
{
    if (r->d->fatal || resume_at(r, resume))
        return;
    if (len > ORC_EVENT_MAX) {
        char why[64];
        snprintf(why, sizeof why, "line longer than %d bytes", ORC_EVENT_MAX);
        orc_ingest_protocol_error(r, why, NULL, 0);
        return;
    }
    orc_ingest_line(r, line, len);
}

void orc_attempt_bad_line(orc_run *r, const char *why, int64_t resume)
{
    if (!r->d->fatal && resume_at(r, resume))
        return;
    orc_ingest_protocol_error(r, why, NULL, 0);
}

void orc_attempt_sched(orc_run *r, const char *job, const char *state, const char *node)
{
    orc_daemon *d = r->d;
    tlm_err e;
    if (d->fatal)
        return;
    orc_batch(d);
    if (db_attempt_slurm_set(d->db, r->attempt, job, state, node, &e))
        orc_fatal(d, &e);
}

static void maybe_finish(orc_run *r)
{
    if (r->finished || !r->exited || !r->eof)
        return;
    r->finished = 1;
    orc_run_finished(r->d, r);
}

void orc_attempt_exited(orc_run *r, int64_t status, int signal)
{
    r->exited = 1;
    r->exit_status = status;
    r->term_signal = signal;
    maybe_finish(r);
}

void orc_attempt_stream_end(orc_run *r)
{
    r->eof = 1;
    maybe_finish(r);
}

int orc_attempt_requeued(orc_run *r, int64_t status, int signal, const char *message)
{
    orc_daemon *d = r->d;
    orc_job *j = &d->plan.jobs.v[r->job];
    r->exit_status = status;
    r->term_signal = signal;
    tlm_err e;
    int64_t id = 0;
    int n = 0;
    orc_batch(d);
    db_attempt_row row = {.job = j->key, .host = d->host, .started_at = tlm_clock_wall()};
    d->ex.fill_row(r, &row);
    if (orc_attempt_record_end(r, tlm_status_kind(TLM_EINTERRUPTED), message, &e) ||
        db_job_start_attempt(d->db, j->key, &n, &e) || ((row.n = n), db_attempt_begin(d->db, &row, &id, &e))) {
        orc_fatal(d, &e);
        return TLM_EIO;
    }
    orc_commit(d);
    orc_say(d, "job %.12s (%s) attempt %d: %s; attempt %d follows", j->key, r->label, r->n, message, n);
    j->attempts = n;
    r->attempt = id;
    r->n = n;
    r->exit_status = 0;
    r->term_signal = 0;
    r->got_start = r->terminal = r->saw_done = r->done_nonfinite = r->protocol_errors = 0;
    r->error_kind[0] = r->message[0] = r->stall_note[0] = '\0';
    r->kill_reason = r->term_sent = r->kill_sent = 0;
    r->last_event = r->progress_at = tlm_clock_mono();
    r->progress = -1;
    return 0;
}

/* ------------------------------------------------------------ the end */
void orc_attempt_exit(const orc_run *r, orc_exit *x)
{
    *x = (orc_exit){.exited = r->term_signal == 0, .status = (int)r->exit_status, .signal = r->term_signal,
                    .kill_reason = r->kill_reason, .saw_done = r->saw_done, .done_nonfinite = r->done_nonfinite,
                    .error_kind = r->error_kind[0] ? r->error_kind : NULL};
}

/* Last non-empty line of the worker's stderr, for failures it did not explain. */
static void stderr_tail(const char *run_dir, char *out, size_t cap)
{
    out[0] = '\0';
    char path[TLM_PATH_CAP];
    if ((size_t)snprintf(path, sizeof path, "%s/worker.log", run_dir) >= sizeof path)
        return; /* cannot happen: run folders leave room for their files (TLM_RUN_DIR_MAX) */
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char buf[2048];
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
    long from = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    if (!strncmp(line, "=== tlmd: attempt ", 18)) /* the local executor's header: the worker said nothing */
        return;
    size_t k = 0;
    for (; *line && k + 1 < cap; line++)
        out[k++] = ((unsigned char)*line >= 0x20 && (unsigned char)*line < 0x7f) ? *line : '?';
    out[k] = '\0';
}

void orc_attempt_message(const orc_run *r, const orc_outcome *out, char *message, size_t cap)
{
    if (r->stall_note[0])
        tlm_msg_printf(message, cap, "%s (%s)", out->message, r->stall_note);
    else
        tlm_msg_copy(message, cap, out->message);
    size_t n = strlen(message);
    if (r->message[0]) {
        tlm_msg_printf(message + n, cap - n, "%s%s", n ? ": " : "", r->message);
    } else if (out->next != ORC_NEXT_DONE && out->next != ORC_NEXT_INTERRUPTED && out->next != ORC_NEXT_REQUEUE) {
        char tail[300];
        stderr_tail(r->run_dir, tail, sizeof tail);
        if (tail[0])
            tlm_msg_printf(message + n, cap - n, "%slast stderr line: %s", n ? "; " : "", tail);
    }
    if (r->protocol_errors) {
        n = strlen(message);
        tlm_msg_printf(message + n, cap - n, "%s%d invalid event line(s)", n ? "; " : "", r->protocol_errors);
    }
}

int orc_attempt_record_end(orc_run *r, const char *reason, const char *message, tlm_err *e)
{
    orc_daemon *d = r->d;
    db_attempt_end end = {.ended_at = tlm_clock_wall(), .exit_code = r->term_signal ? -1 : (int)r->exit_status,
                          .signal = r->term_signal, .reason = reason, .message = message && message[0] ? message : NULL,
                          .step = r->step, .tokens = r->tokens, .protocol_errors = r->protocol_errors};
    int rc = db_attempt_finish(d->db, r->attempt, &end, e);
    if (!rc && r->got_start) /* an attempt that never started knows nothing of the progress */
        rc = db_job_set_tokens(d->db, d->plan.jobs.v[r->job].key, r->tokens, e);
    return rc;
}

int orc_attempt_record_unstarted(orc_daemon *d, size_t job, int64_t row, const char *reason, const char *message,
                                 int *n, tlm_err *e)
{
    const orc_job *j = &d->plan.jobs.v[job];
    db_attempt_row ar = {.job = j->key, .host = d->host, .device = "-", .started_at = tlm_clock_wall()};
    db_attempt_end end = {.ended_at = tlm_clock_wall(), .exit_code = -1, .reason = reason, .message = message,
                          .step = -1, .tokens = -1};
    *n = j->attempts;
    if (!row && (db_job_start_attempt(d->db, j->key, n, e) || ((ar.n = *n), db_attempt_begin(d->db, &ar, &row, e))))
        return TLM_EIO;
    return db_attempt_finish(d->db, row, &end, e);
}

int orc_attempt_close_open(db *dbh, int64_t id, const char *message, tlm_err *e)
{
    db_attempt_end end = {.ended_at = tlm_clock_wall(), .exit_code = -1,
                          .reason = tlm_status_kind(TLM_EINTERRUPTED), .message = message, .step = -1,
                          .tokens = -1};
    return db_attempt_finish(dbh, id, &end, e);
}
