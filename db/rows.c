/* rows.c: the statements tlmd writes with (sweeps, jobs, attempts, event
 * rows), prepared once per connection and reused, so that an event costs
 * one bound insert inside the caller's batch transaction.
 * Must not: paste values into SQL text (everything is bound). */
#include "db/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

static const char *const SQL[DB_ST_COUNT] = {
    [DB_ST_SWEEP_GET_HASH] = "SELECT content_hash FROM sweeps WHERE name = ?1",
    [DB_ST_SWEEP_PUT] =
        "INSERT INTO sweeps(name, description, file, content_hash, source, created_at, updated_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT(name) DO UPDATE SET "
        "description = excluded.description, file = excluded.file, source = excluded.source, "
        "updated_at = CASE WHEN content_hash <> excluded.content_hash THEN excluded.updated_at ELSE updated_at END, "
        "content_hash = excluded.content_hash",
    [DB_ST_JOB_PUT] =
        "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, ratio_start, ratio_end, groups, seed, label, "
        "tokens_total, params, flops_per_token, widths, run_dir, created_at, updated_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17) "
        "ON CONFLICT(key) DO NOTHING",
    [DB_ST_JOB_STATE] =
        "SELECT status, attempts, failures, reason, tokens_done, tokens_total, label, seed, rerun FROM jobs "
        "WHERE key = ?1",
    [DB_ST_JOB_STATUS] =
        "UPDATE jobs SET status = ?2, reason = ?3, message = ?4, updated_at = ?5, "
        "finished_at = CASE WHEN ?2 IN ('done', 'failed') THEN ?5 ELSE NULL END WHERE key = ?1",
    [DB_ST_JOB_START] = "UPDATE jobs SET attempts = attempts + 1, status = 'running', updated_at = ?2 WHERE key = ?1",
    [DB_ST_JOB_FAIL] = "UPDATE jobs SET failures = failures + 1 WHERE key = ?1",
    [DB_ST_JOB_TOKENS] = "UPDATE jobs SET tokens_done = ?2 WHERE key = ?1",
    [DB_ST_JOB_FINAL] = "UPDATE jobs SET final_loss = ?2, final_val_loss = ?3, train_seconds = ?4 WHERE key = ?1",
    [DB_ST_JOB_CLEAR_FAILURES] = "UPDATE jobs SET failures = 0 WHERE key = ?1 AND failures <> 0",
    [DB_ST_JOB_RERUN_DONE] = "UPDATE jobs SET rerun = 0 WHERE key = ?1 AND rerun <> 0",
    /* Reconciliation states: 0/1 inactive/active at rest; during a pass
     * 2 = was inactive, 3 = was active (not listed yet), 1 = still listed,
     * 4 = newly listed. */
    [DB_ST_SJ_MARK] = "UPDATE sweep_jobs SET active = active + 2 WHERE sweep = ?1 AND active IN (0, 1)",
    [DB_ST_SJ_LINK] = "INSERT INTO sweep_jobs(sweep, job, ord, active) VALUES (?1, ?2, ?3, 4) "
                      "ON CONFLICT(sweep, job) DO UPDATE SET ord = excluded.ord, "
                      "active = CASE WHEN active IN (1, 3) THEN 1 ELSE 4 END",
    [DB_ST_SJ_COUNT_ADDED] = "SELECT count(*) FROM sweep_jobs WHERE sweep = ?1 AND active = 4",
    [DB_ST_SJ_COUNT_REMOVED] = "SELECT count(*) FROM sweep_jobs WHERE sweep = ?1 AND active = 3",
    [DB_ST_SJ_SETTLE] = "UPDATE sweep_jobs SET active = (active IN (1, 4)) WHERE sweep = ?1 AND active <> 1",
    [DB_ST_ATT_BEGIN] = "INSERT INTO attempts(job, n, pid, host, device, started_at, executor, token, slurm_job, "
                        "slurm_restart, slurm_state, events_offset) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(?7, 'local'), ?8, ?9, ?10, ?11, ?12)",
    [DB_ST_ATT_RESUMED] = "UPDATE attempts SET resumed_from_step = ?2 WHERE id = ?1",
    [DB_ST_ATT_FINISH] = "UPDATE attempts SET ended_at = ?2, exit_code = ?3, signal = ?4, reason = ?5, message = ?6, "
                         "step = ?7, tokens = ?8, protocol_errors = ?9 WHERE id = ?1",
    [DB_ST_STEP_PUT] =
        "INSERT INTO steps(job, step, tokens, loss, lr, grad_norm, tokens_per_s, step_ms, attempt) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(job, step) DO UPDATE SET "
        "tokens = excluded.tokens, loss = excluded.loss, lr = excluded.lr, grad_norm = excluded.grad_norm, "
        "tokens_per_s = excluded.tokens_per_s, step_ms = excluded.step_ms, attempt = excluded.attempt",
    [DB_ST_EVAL_PUT] =
        "INSERT INTO evals(job, step, tokens, suite, task, metric, value, nonfinite, n, stderr, attempt) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
        "ON CONFLICT(job, step, suite, task, metric) DO UPDATE SET tokens = excluded.tokens, "
        "value = excluded.value, nonfinite = excluded.nonfinite, n = excluded.n, stderr = excluded.stderr, "
        "attempt = excluded.attempt",
    [DB_ST_LAYER_PUT] = "INSERT INTO layer_stats(job, step, layer, name, value, nonfinite) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(job, step, layer, name) DO UPDATE SET "
                        "value = excluded.value, nonfinite = excluded.nonfinite",
    [DB_ST_CKPT_PUT] = "INSERT INTO checkpoints(job, step, tokens, path, created_at) VALUES (?1, ?2, ?3, ?4, ?5) "
                       "ON CONFLICT(job, step) DO UPDATE SET tokens = excluded.tokens, path = excluded.path, "
                       "created_at = excluded.created_at",
    [DB_ST_ENV_PUT] = "INSERT OR REPLACE INTO environment(attempt, git_commit, tlm_version, compiler, blas, "
                      "blas_kernel, threads, cuda, driver, host, os, cmdline) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [DB_ST_LOG] = "INSERT INTO logs(job, attempt, at, level, message) VALUES (?1, ?2, ?3, ?4, ?5)",
    [DB_ST_LAST_CKPT] = "SELECT max(step) FROM checkpoints WHERE job = ?1",
    [DB_ST_JOB_CONFIG] = "SELECT config FROM jobs WHERE key = ?1",
    [DB_ST_JOB_RECOVER] = "UPDATE jobs SET status = 'interrupted', updated_at = ?1 WHERE status = 'running' AND key NOT IN "
                          "(SELECT job FROM attempts WHERE ended_at IS NULL AND executor = 'slurm')",
    [DB_ST_ATT_SLURM] = "UPDATE attempts SET slurm_job = coalesce(?2, slurm_job), slurm_state = coalesce(?3, slurm_state), "
                        "node = coalesce(?4, node) WHERE id = ?1",
    [DB_ST_ATT_OFFSET] = "UPDATE attempts SET events_offset = ?2 WHERE id = ?1",
};

/* The cached statement, reset and with its bindings cleared; NULL with e set. */
static sqlite3_stmt *db__stmt(db *d, db_stmt_id id, tlm_err *e)
{
    sqlite3_stmt *s = d->st[id];
    if (!s) {
        if (sqlite3_prepare_v3(d->h, SQL[id], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
            db__fail(d, e, "preparing a statement");
            return NULL;
        }
        d->st[id] = s;
        return s;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

#define STMT(id)                                                                                              \
    sqlite3_stmt *s = db__stmt(d, id, e);                                                                     \
    if (!s)                                                                                                   \
    return TLM_EIO

/* ------------------------------------------------------------ sweeps and jobs */
int db_sweep_hash(db *d, const char *name, char hash[65], tlm_err *e)
{
    STMT(DB_ST_SWEEP_GET_HASH);
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        snprintf(hash, 65, "%s", (const char *)sqlite3_column_text(s, 0));
        rc = 1;
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = db__fail(d, e, "reading a sweep");
    }
    sqlite3_reset(s);
    return rc;
}

int db_sweep_put(db *d, const db_sweep_row *r, int *changed, tlm_err *e)
{
    char old[65];
    int found = db_sweep_hash(d, r->name, old, e);
    if (found < 0)
        return found;
    STMT(DB_ST_SWEEP_PUT);
    sqlite3_bind_text(s, 1, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, r->description ? r->description : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, r->file, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, r->content_hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->source, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 6, tlm_clock_wall());
    if (db__run(d, s, e, "writing a sweep"))
        return TLM_EIO;
    if (changed)
        *changed = !found ? 2 : strcmp(old, r->content_hash) != 0;
    return 0;
}

int db_job_put(db *d, const db_job_row *r, int *inserted, tlm_err *e)
{
    STMT(DB_ST_JOB_PUT);
    sqlite3_bind_text(s, 1, r->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, r->sweep, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, r->config, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, r->arch, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->scale, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, r->schedule, -1, SQLITE_STATIC);
    if (!isnan(r->ratio_start))
        sqlite3_bind_double(s, 7, r->ratio_start);
    if (!isnan(r->ratio_end))
        sqlite3_bind_double(s, 8, r->ratio_end);
    db__bind_text(s, 9, r->groups);
    sqlite3_bind_int64(s, 10, r->seed);
    sqlite3_bind_text(s, 11, r->label, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 12, r->tokens_total);
    sqlite3_bind_int64(s, 13, r->params);
    sqlite3_bind_double(s, 14, r->flops_per_token);
    db__bind_text(s, 15, r->widths);
    db__bind_text(s, 16, r->run_dir);
    sqlite3_bind_double(s, 17, tlm_clock_wall());
    if (db__run(d, s, e, "writing a job"))
        return TLM_EIO;
    if (inserted)
        *inserted = sqlite3_changes(d->h) > 0;
    return 0;
}

int db_job_state_get(db *d, const char *key, db_job_state *st, tlm_err *e)
{
    STMT(DB_ST_JOB_STATE);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(s);
        return 0;
    }
    if (rc != SQLITE_ROW) {
        rc = db__fail(d, e, "reading a job");
        sqlite3_reset(s);
        return rc;
    }
    memset(st, 0, sizeof *st);
    tlm_msg_copy(st->status, sizeof st->status, (const char *)sqlite3_column_text(s, 0));
    st->attempts = sqlite3_column_int(s, 1);
    st->failures = sqlite3_column_int(s, 2);
    if (sqlite3_column_type(s, 3) == SQLITE_TEXT)
        tlm_msg_copy(st->reason, sizeof st->reason, (const char *)sqlite3_column_text(s, 3));
    st->tokens_done = sqlite3_column_int64(s, 4);
    st->tokens_total = sqlite3_column_int64(s, 5);
    tlm_msg_copy(st->label, sizeof st->label, (const char *)sqlite3_column_text(s, 6));
    st->seed = sqlite3_column_int64(s, 7);
    st->rerun = sqlite3_column_int(s, 8);
    sqlite3_reset(s);
    return 1;
}

int db_job_set_status(db *d, const char *key, db_job_status status, const char *reason, const char *message,
                      tlm_err *e)
{
    STMT(DB_ST_JOB_STATUS);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, db_job_status_name(status), -1, SQLITE_STATIC);
    db__bind_text(s, 3, reason);
    db__bind_text(s, 4, message);
    sqlite3_bind_double(s, 5, tlm_clock_wall());
    return db__run(d, s, e, "updating a job's status");
}

int db_job_start_attempt(db *d, const char *key, int *n, tlm_err *e)
{
    {
        STMT(DB_ST_JOB_START);
        sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_double(s, 2, tlm_clock_wall());
        if (db__run(d, s, e, "starting an attempt"))
            return TLM_EIO;
    }
    db_job_state st;
    int rc = db_job_state_get(d, key, &st, e);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return tlm_errf(e, TLM_EINTERNAL, "%s: job %.12s vanished", d->path, key);
    *n = st.attempts;
    return 0;
}

static int job_key_only(db *d, db_stmt_id id, const char *key, tlm_err *e, const char *what)
{
    STMT(id);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    return db__run(d, s, e, what);
}

int db_job_rerun_done(db *d, const char *key, tlm_err *e)
{
    return job_key_only(d, DB_ST_JOB_RERUN_DONE, key, e, "ending a job's rerun");
}

int db_job_add_failure(db *d, const char *key, tlm_err *e)
{
    return job_key_only(d, DB_ST_JOB_FAIL, key, e, "counting a failure");
}

int db_job_clear_failures(db *d, const char *key, tlm_err *e)
{
    return job_key_only(d, DB_ST_JOB_CLEAR_FAILURES, key, e, "clearing failures");
}

int db_job_set_tokens(db *d, const char *key, int64_t tokens_done, tlm_err *e)
{
    STMT(DB_ST_JOB_TOKENS);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, tokens_done);
    return db__run(d, s, e, "updating a job's progress");
}

int db_job_set_final(db *d, const char *key, double loss, double val_loss, double seconds, tlm_err *e)
{
    STMT(DB_ST_JOB_FINAL);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    db__bind_number(s, 2, -1, loss);
    db__bind_number(s, 3, -1, val_loss);
    db__bind_number(s, 4, -1, seconds);
    return db__run(d, s, e, "recording a job's final numbers");
}

int db_job_reset(db *d, const char *key, tlm_err *e)
{
    static const char *const sql[] = {
        "DELETE FROM steps WHERE job = ?1",
        "DELETE FROM evals WHERE job = ?1",
        "DELETE FROM layer_stats WHERE job = ?1",
        "DELETE FROM checkpoints WHERE job = ?1",
        "UPDATE jobs SET status = 'pending', failures = 0, tokens_done = 0, reason = NULL, message = NULL, "
        "finished_at = NULL, final_loss = NULL, final_val_loss = NULL, train_seconds = NULL, rerun = 1 "
        "WHERE key = ?1",
    };
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(d->h, sql[i], -1, &s, NULL) != SQLITE_OK)
            return db__fail(d, e, "resetting a job");
        sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return db__fail(d, e, "resetting a job");
    }
    return 0;
}

/* ------------------------------------------------------------ sweep membership */
static int count_sweep(db *d, db_stmt_id id, const char *sweep, int64_t *out, tlm_err *e)
{
    STMT(id);
    sqlite3_bind_text(s, 1, sweep, -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_ROW) {
        int rc = db__fail(d, e, "counting a sweep's jobs");
        sqlite3_reset(s);
        return rc;
    }
    *out = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return 0;
}

int db_sweep_jobs_mark(db *d, const char *sweep, tlm_err *e)
{
    STMT(DB_ST_SJ_MARK);
    sqlite3_bind_text(s, 1, sweep, -1, SQLITE_STATIC);
    return db__run(d, s, e, "reconciling a sweep");
}

int db_sweep_job_link(db *d, const char *sweep, const char *job, int64_t ord, tlm_err *e)
{
    STMT(DB_ST_SJ_LINK);
    sqlite3_bind_text(s, 1, sweep, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, job, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, ord);
    return db__run(d, s, e, "linking a job to its sweep");
}

int db_sweep_jobs_settle(db *d, const char *sweep, int64_t *added, int64_t *removed, tlm_err *e)
{
    int64_t a = 0, r = 0;
    if (count_sweep(d, DB_ST_SJ_COUNT_ADDED, sweep, &a, e) || count_sweep(d, DB_ST_SJ_COUNT_REMOVED, sweep, &r, e))
        return TLM_EIO;
    STMT(DB_ST_SJ_SETTLE);
    sqlite3_bind_text(s, 1, sweep, -1, SQLITE_STATIC);
    if (db__run(d, s, e, "reconciling a sweep"))
        return TLM_EIO;
    if (added)
        *added = a;
    if (removed)
        *removed = r;
    return 0;
}

/* ------------------------------------------------------------ attempts */
int db_attempt_begin(db *d, const db_attempt_row *r, int64_t *id, tlm_err *e)
{
    STMT(DB_ST_ATT_BEGIN);
    sqlite3_bind_text(s, 1, r->job, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, r->n);
    if (r->pid > 0)
        sqlite3_bind_int64(s, 3, r->pid);
    sqlite3_bind_text(s, 4, r->host ? r->host : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->device ? r->device : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 6, r->started_at);
    if (r->executor)
        sqlite3_bind_text(s, 7, r->executor, -1, SQLITE_STATIC);
    if (r->token)
        sqlite3_bind_text(s, 8, r->token, -1, SQLITE_STATIC);
    if (r->slurm_job)
        sqlite3_bind_text(s, 9, r->slurm_job, -1, SQLITE_STATIC);
    if (r->executor && r->slurm_restart >= 0)
        sqlite3_bind_int64(s, 10, r->slurm_restart);
    if (r->slurm_state)
        sqlite3_bind_text(s, 11, r->slurm_state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 12, r->events_offset > 0 ? r->events_offset : 0);
    if (db__run(d, s, e, "recording an attempt"))
        return TLM_EIO;
    *id = sqlite3_last_insert_rowid(d->h);
    return 0;
}

int db_attempt_set_resumed(db *d, int64_t id, int64_t resumed_from_step, tlm_err *e)
{
    STMT(DB_ST_ATT_RESUMED);
    sqlite3_bind_int64(s, 1, id);
    if (resumed_from_step >= 0)
        sqlite3_bind_int64(s, 2, resumed_from_step);
    return db__run(d, s, e, "recording a resume");
}

int db_attempt_finish(db *d, int64_t id, const db_attempt_end *r, tlm_err *e)
{
    STMT(DB_ST_ATT_FINISH);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_double(s, 2, r->ended_at);
    if (r->exit_code >= 0)
        sqlite3_bind_int(s, 3, r->exit_code);
    if (r->signal > 0)
        sqlite3_bind_int(s, 4, r->signal);
    db__bind_text(s, 5, r->reason);
    db__bind_text(s, 6, r->message);
    if (r->step >= 0)
        sqlite3_bind_int64(s, 7, r->step);
    if (r->tokens >= 0)
        sqlite3_bind_int64(s, 8, r->tokens);
    sqlite3_bind_int(s, 9, r->protocol_errors);
    return db__run(d, s, e, "finishing an attempt");
}

/* ------------------------------------------------------------ event rows */
static void bind_attempt(sqlite3_stmt *s, int i, int64_t attempt)
{
    if (attempt > 0)
        sqlite3_bind_int64(s, i, attempt);
}

int db_step_put(db *d, const db_step_row *r, tlm_err *e)
{
    STMT(DB_ST_STEP_PUT);
    sqlite3_bind_text(s, 1, r->job, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, r->step);
    sqlite3_bind_int64(s, 3, r->tokens);
    db__bind_number(s, 4, -1, r->loss);
    db__bind_number(s, 5, -1, r->lr);
    db__bind_number(s, 6, -1, r->grad_norm);
    db__bind_number(s, 7, -1, r->tokens_per_s);
    db__bind_number(s, 8, -1, r->step_ms);
    bind_attempt(s, 9, r->attempt);
    return db__run(d, s, e, "writing a step");
}

int db_eval_put(db *d, const db_eval_row *r, tlm_err *e)
{
    STMT(DB_ST_EVAL_PUT);
    sqlite3_bind_text(s, 1, r->job, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, r->step);
    sqlite3_bind_int64(s, 3, r->tokens);
    sqlite3_bind_text(s, 4, r->suite, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->task, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, r->metric, -1, SQLITE_STATIC);
    db__bind_number(s, 7, 8, r->value);
    if (r->n >= 0)
        sqlite3_bind_int64(s, 9, r->n);
    if (!isnan(r->stderr_))
        sqlite3_bind_double(s, 10, r->stderr_);
    bind_attempt(s, 11, r->attempt);
    return db__run(d, s, e, "writing an evaluation");
}

int db_layer_put(db *d, const char *job, int64_t step, int layer, const char *name, double value, tlm_err *e)
{
    STMT(DB_ST_LAYER_PUT);
    sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, step);
    sqlite3_bind_int(s, 3, layer);
    sqlite3_bind_text(s, 4, name, -1, SQLITE_STATIC);
    db__bind_number(s, 5, 6, value);
    return db__run(d, s, e, "writing a layer statistic");
}

int db_ckpt_put(db *d, const char *job, int64_t step, int64_t tokens, const char *path, double at, tlm_err *e)
{
    STMT(DB_ST_CKPT_PUT);
    sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, step);
    sqlite3_bind_int64(s, 3, tokens);
    sqlite3_bind_text(s, 4, path, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 5, at);
    return db__run(d, s, e, "writing a checkpoint");
}

int db_env_put(db *d, const db_env_row *r, tlm_err *e)
{
    STMT(DB_ST_ENV_PUT);
    sqlite3_bind_int64(s, 1, r->attempt);
    db__bind_text(s, 2, r->git_commit);
    db__bind_text(s, 3, r->tlm_version);
    db__bind_text(s, 4, r->compiler);
    db__bind_text(s, 5, r->blas);
    db__bind_text(s, 6, r->blas_kernel);
    if (r->threads >= 0)
        sqlite3_bind_int(s, 7, r->threads);
    db__bind_text(s, 8, r->cuda);
    db__bind_text(s, 9, r->driver);
    db__bind_text(s, 10, r->host);
    db__bind_text(s, 11, r->os);
    db__bind_text(s, 12, r->cmdline);
    return db__run(d, s, e, "writing the environment");
}

int db_log(db *d, const char *job, int64_t attempt, const char *level, const char *message, tlm_err *e)
{
    STMT(DB_ST_LOG);
    db__bind_text(s, 1, job);
    bind_attempt(s, 2, attempt);
    sqlite3_bind_double(s, 3, tlm_clock_wall());
    sqlite3_bind_text(s, 4, level, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, message, -1, SQLITE_STATIC);
    return db__run(d, s, e, "writing a log line");
}

int db_last_ckpt_step(db *d, const char *job, int64_t *step, tlm_err *e)
{
    STMT(DB_ST_LAST_CKPT);
    sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_ROW) {
        int rc = db__fail(d, e, "reading checkpoints");
        sqlite3_reset(s);
        return rc;
    }
    *step = sqlite3_column_type(s, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return 0;
}

int db_job_config(db *d, const char *key, char **json, tlm_err *e)
{
    *json = NULL;
    STMT(DB_ST_JOB_CONFIG);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *json = strdup((const char *)sqlite3_column_text(s, 0));
        rc = *json ? 1 : tlm_errf(e, TLM_ENOMEM, "out of memory");
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = db__fail(d, e, "reading a job's config");
    }
    sqlite3_reset(s);
    return rc;
}

int db_jobs_recover_running(db *d, int64_t *n, tlm_err *e)
{
    STMT(DB_ST_JOB_RECOVER);
    sqlite3_bind_double(s, 1, tlm_clock_wall());
    if (db__run(d, s, e, "recovering jobs"))
        return TLM_EIO;
    *n = sqlite3_changes(d->h);
    return 0;
}

/* ------------------------------------------------------------ slurm attempts */
int db_attempt_slurm_set(db *d, int64_t id, const char *slurm_job, const char *state, const char *node, tlm_err *e)
{
    STMT(DB_ST_ATT_SLURM);
    sqlite3_bind_int64(s, 1, id);
    if (slurm_job)
        sqlite3_bind_text(s, 2, slurm_job, -1, SQLITE_STATIC);
    if (state)
        sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC);
    if (node)
        sqlite3_bind_text(s, 4, node, -1, SQLITE_STATIC);
    return db__run(d, s, e, "recording a Slurm job");
}

int db_attempt_set_offset(db *d, int64_t id, int64_t offset, tlm_err *e)
{
    STMT(DB_ST_ATT_OFFSET);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, offset);
    return db__run(d, s, e, "recording an events offset");
}
