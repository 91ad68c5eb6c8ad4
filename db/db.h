/* db.h: results.db, the C API shared by tlmd, tlm-report and the tests.
 *
 * One `db` is one SQLite connection with its prepared statements.  A
 * read-write open creates the file if needed, sets busy_timeout before it
 * switches to WAL (and checks that WAL took), turns foreign keys on and
 * brings the schema to DB_SCHEMA_VERSION (db/schema.sql for a new file, the
 * steps of db/migrations.c for an older one), after SQLite's quick_check
 * (a damaged file is refused).  A read-only open never writes and refuses
 * a database older than this code (`tlmd migrate` upgrades it); a newer one
 * is readable, since names only grow.
 *
 * Writers batch: db_begin opens a transaction that many inserts share, and
 * db_commit ends it; an insert outside a transaction is its own one.
 * Non-finite numbers (NaN, +-inf) are stored and read back as such
 * (schema.sql explains the columns); db_column_number decodes them.
 *
 * Every function returns 0 or a negative tlm_status with `e` filled; SQLite
 * failures are TLM_EIO, "database is busy" included.  Must not: exit, print,
 * or keep state outside the db handle (two handles are independent). */
#ifndef TLM_DB_DB_H
#define TLM_DB_DB_H

#include <stdint.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/fileio.h"

#define DB_SCHEMA_VERSION 7
#define DB_BUSY_TIMEOUT_MS 10000
#define DB_DEFAULT_PATH "results.db" /* --db of tlmd and tlm-report when not given */

/* XX(id, name): the states of a job (jobs.status, whose CHECK in
 * db/schema.sql lists the same names: tests/db/test_db.c checks it), for
 * tlmd's job table and tlm-report's. */
#define DB_JOB_STATUS_MAP(XX)                                                                                    \
    XX(PENDING, "pending")                                                                                       \
    XX(RUNNING, "running")                                                                                       \
    XX(DONE, "done")                                                                                             \
    XX(FAILED, "failed")                                                                                         \
    XX(INTERRUPTED, "interrupted")

typedef enum db_job_status {
#define DB_XX_(id, name) DB_JOB_##id,
    DB_JOB_STATUS_MAP(DB_XX_)
#undef DB_XX_
    DB_JOB_STATUS_COUNT
} db_job_status;

/* The name of a status ("?" out of range); the status of a name (-1 if none). */
const char *db_job_status_name(int status);
int db_job_status_find(const char *name);

typedef struct db db;

enum { DB_READONLY = 0, DB_READWRITE = 1 };

/* ------------------------------------------------------------ connection */
int db_open(const char *path, int mode, db **out, tlm_err *e);
/* A new, complete database at path (built aside, renamed into place) unless
 * a non-empty file is there already; db_open(DB_READWRITE) calls it.  tlmd
 * calls it first so that it can lock the file before opening it.
 * *created (may be NULL): 1 when there was no file at path before. */
int db_create(const char *path, int *created, tlm_err *e);
void db_close(db *d);
/* The raw connection, for ad-hoc queries (tests, reports).  Still owned by d. */
sqlite3 *db_handle(db *d);
/* user_version found when the file was opened (before any migration). */
int db_opened_version(const db *d);
/* SQLite's quick_check: 0 when the file is whole, else TLM_EIO with what it
 * found and how to recover (db_open runs it on every read-write open). */
int db_quick_check(db *d, tlm_err *e);

/* ------------------------------------------------------------ backup and upgrade (backup.c) */
/* A copy of the database at src, consistent as of one moment, written to
 * out with SQLite's online backup API: readers and the daemon go on
 * meanwhile (WAL).  Built beside out and renamed into place (fsync'd), so
 * out is either absent or whole; out must not exist. */
int db_backup(const char *src, const char *out, tlm_err *e);
/* `tlmd migrate`: an older database brought to DB_SCHEMA_VERSION after a
 * backup of it (its path in backup, "" when nothing was to be done); *from
 * the version it had.  The caller holds tlmd's lock on the file. */
int db_upgrade(const char *path, int *from, char *backup, size_t cap, tlm_err *e);

int db_begin(db *d, tlm_err *e);  /* BEGIN IMMEDIATE; no-op if one is open */
int db_commit(db *d, tlm_err *e); /* no-op if none is open */
void db_rollback(db *d);
int db_in_transaction(const db *d);

/* Execute SQL text without results (several statements allowed). */
int db_exec(db *d, const char *sql, tlm_err *e);

/* Checkpoints moved off the writer: a thread with its own connection
 * copies the WAL into the database file (PASSIVE: it never waits for, nor
 * holds up, the writer or readers) every period_ms, and the writer's
 * automatic checkpoints are turned off, so that no commit of the writer
 * ever pays for one.  Stop it before closing the writer. */
typedef struct db_checkpointer db_checkpointer;
int db_checkpointer_start(db *writer, const char *path, int period_ms, db_checkpointer **out, tlm_err *e);
void db_checkpointer_stop(db_checkpointer *c);

/* ------------------------------------------------------------ numbers */
/* A number read from a `value` column and its `nonfinite` companion
 * (nonfinite_col < 0: NULL in value_col means NaN, as in `steps`). */
double db_column_number(sqlite3_stmt *s, int value_col, int nonfinite_col);

/* ------------------------------------------------------------ rows tlmd writes */
typedef struct db_sweep_row {
    const char *name, *description, *file, *content_hash, *source;
} db_sweep_row;

typedef struct db_job_row {
    const char *key, *sweep, *config;
    const char *arch, *scale, *schedule;
    double ratio_start, ratio_end; /* NaN: not applicable (stored as NULL) */
    const char *groups;            /* NULL unless blocks */
    int64_t seed;
    const char *label;
    int64_t tokens_total, params;
    double flops_per_token;
    const char *widths; /* JSON array */
    const char *run_dir;
} db_job_row;

typedef struct db_job_state {
    char status[16];     /* a name of DB_JOB_STATUS_MAP */
    int attempts, failures;
    char reason[16];     /* "" when none */
    int64_t tokens_done, tokens_total;
    char label[64];
    int64_t seed;
    int rerun;           /* reset by --rerun, and no run of it has finished since */
} db_job_state;

/* Inserts or updates the sweep row.  *changed (may be NULL): 0 same
 * content_hash as stored, 1 a different one, 2 a new sweep. */
int db_sweep_put(db *d, const db_sweep_row *r, int *changed, tlm_err *e);
/* Inserts the job if absent (an existing job keeps its state); *inserted = 1 when new. */
int db_job_put(db *d, const db_job_row *r, int *inserted, tlm_err *e);
/* The stored content_hash of a sweep: 1 if found, 0 if absent, negative on error. */
int db_sweep_hash(db *d, const char *name, char hash[65], tlm_err *e);
/* A job's full config JSON (malloc'd, caller frees): 1 found, 0 absent, negative on error. */
int db_job_config(db *d, const char *key, char **json, tlm_err *e);
/* Jobs left 'running' (their daemon died) become 'interrupted'; *n counts
 * them.  Jobs with an open slurm attempt stay running: the next daemon
 * adopts them (orchestrator/exec_slurm.c). */
int db_jobs_recover_running(db *d, int64_t *n, tlm_err *e);
/* State of a job; 1 if found, 0 if absent, negative on error. */
int db_job_state_get(db *d, const char *key, db_job_state *st, tlm_err *e);
/* status (db_job_status: one outside the map is refused by the schema's
 * CHECK), and reason/message (NULL clears them). */
int db_job_set_status(db *d, const char *key, db_job_status status, const char *reason, const char *message,
                      tlm_err *e);
/* attempts = attempts + 1 (returns the new count in *n), status running. */
int db_job_start_attempt(db *d, const char *key, int *n, tlm_err *e);
int db_job_add_failure(db *d, const char *key, tlm_err *e);
int db_job_set_tokens(db *d, const char *key, int64_t tokens_done, tlm_err *e);
/* From the `done` event: training loss, validation loss (NaN: none), elapsed seconds (NaN: none). */
int db_job_set_final(db *d, const char *key, double loss, double val_loss, double seconds, tlm_err *e);
/* --rerun: forget the job's results (steps, evals, layer stats,
 * checkpoints) and counters, keep its attempt history, status pending;
 * marks it as rerun (db_job_state.rerun) until db_job_rerun_done. */
int db_job_reset(db *d, const char *key, tlm_err *e);
/* A run of the job has finished (every job of tlmd's run settled): the
 * next --rerun trains it again. */
int db_job_rerun_done(db *d, const char *key, tlm_err *e);
/* Failures counter back to 0 (a new tlmd run retries retriable failures). */
int db_job_clear_failures(db *d, const char *key, tlm_err *e);

/* Sweep membership, reconciled in three calls: db_sweep_jobs_mark before,
 * db_sweep_job_link for every job of the new expansion (in order),
 * db_sweep_jobs_settle after: jobs the sweep no longer lists get active = 0.
 * *added / *removed count the changes (may be NULL). */
int db_sweep_jobs_mark(db *d, const char *sweep, tlm_err *e);
int db_sweep_job_link(db *d, const char *sweep, const char *job, int64_t ord, tlm_err *e);
int db_sweep_jobs_settle(db *d, const char *sweep, int64_t *added, int64_t *removed, tlm_err *e);

typedef struct db_attempt_row {
    const char *job;
    int n;
    int64_t pid;
    const char *host, *device;
    double started_at;
    /* NULL: a local attempt.  slurm: executor "slurm", its token, its job
     * id once sbatch gave one, its restart count, slurm_state, and where
     * in its events file it starts */
    const char *executor, *token, *slurm_job, *slurm_state;
    int64_t slurm_restart;
    int64_t events_offset;
} db_attempt_row;

typedef struct db_attempt_end {
    double ended_at;
    int exit_code;      /* -1: none (killed by a signal) */
    int signal;         /* 0: none */
    const char *reason; /* done | diverged | ... (schema CHECK) */
    const char *message;
    int64_t step, tokens;
    int protocol_errors;
} db_attempt_end;

int db_attempt_begin(db *d, const db_attempt_row *r, int64_t *id, tlm_err *e);
int db_attempt_set_resumed(db *d, int64_t id, int64_t resumed_from_step /* <0: fresh */, tlm_err *e);
int db_attempt_finish(db *d, int64_t id, const db_attempt_end *r, tlm_err *e);

/* Event rows (upserts: a replayed step overwrites itself). */
typedef struct db_step_row {
    const char *job;
    int64_t attempt;
    int64_t step, tokens;
    double loss, lr, grad_norm, tokens_per_s, step_ms;
} db_step_row;
int db_step_put(db *d, const db_step_row *r, tlm_err *e);

typedef struct db_eval_row {
    const char *job;
    int64_t attempt;
    int64_t step, tokens;
    const char *suite, *task, *metric;
    double value;
    int64_t n;      /* <0: unknown */
    double stderr_; /* NaN: unknown (NULL) */
} db_eval_row;
int db_eval_put(db *d, const db_eval_row *r, tlm_err *e);

int db_layer_put(db *d, const char *job, int64_t step, int layer, const char *name, double value, tlm_err *e);
int db_ckpt_put(db *d, const char *job, int64_t step, int64_t tokens, const char *path, double at, tlm_err *e);

typedef struct db_env_row {
    int64_t attempt;
    const char *git_commit, *tlm_version, *compiler, *blas, *blas_kernel;
    int threads; /* <0: unknown */
    const char *cuda, *driver, *host, *os, *cmdline;
} db_env_row;
int db_env_put(db *d, const db_env_row *r, tlm_err *e);

/* level: info | warn | error.  job and attempt may be NULL / <= 0. */
int db_log(db *d, const char *job, int64_t attempt, const char *level, const char *message, tlm_err *e);

/* ------------------------------------------------------------ queries */
/* The database's identity (meta.database_id: 32 hex digits drawn at its
 * creation), which a runs folder records to say which database it belongs to. */
#define DB_ID_LEN 32
int db_database_id(db *d, char id[DB_ID_LEN + 1], tlm_err *e);
/* Does the database hold a job whose key starts with `prefix` (a run folder's
 * name)?  1 yes, 0 no, negative on error. */
int db_job_prefix_known(db *d, const char *prefix, tlm_err *e);

/* Largest checkpoint step recorded for a job; -1 if none. */
int db_last_ckpt_step(db *d, const char *job, int64_t *step, tlm_err *e);

/* Attempts left open (ended_at NULL) by a daemon that died: calls cb for
 * each; cb may write (it runs after the query finished). */
typedef struct db_open_attempt {
    int64_t id;
    char job[65];
    int64_t pid;
    char device[32];
    char executor[16];   /* local | slurm */
} db_open_attempt;
int db_open_attempts(db *d, int (*cb)(void *ctx, const db_open_attempt *a), void *ctx, tlm_err *e);

/* Slurm attempts (executor 'slurm'): the job id, state and node as squeue
 * reports them (NULL leaves a field as it is); the offset in the attempt's
 * events file up to which its rows are in the database (set in the same
 * transaction as those rows). */
int db_attempt_slurm_set(db *d, int64_t id, const char *slurm_job, const char *state, const char *node, tlm_err *e);
int db_attempt_set_offset(db *d, int64_t id, int64_t offset, tlm_err *e);
/* Open Slurm attempts, for the next daemon to adopt: cb for each (it may write). */
typedef struct db_slurm_attempt {
    int64_t id;
    char job[65];
    int n;
    char token[40];
    char slurm_job[32];  /* "" while submitting */
    int64_t restart;
    char state[24];
    char node[64];
    int64_t events_offset;
    double started_at;
} db_slurm_attempt;
int db_open_slurm_attempts(db *d, int (*cb)(void *ctx, const db_slurm_attempt *a), void *ctx, tlm_err *e);
/* Did the attempt's start event arrive (its environment row)?  1, 0, negative on error. */
int db_attempt_has_env(db *d, int64_t id, tlm_err *e);

typedef struct db_sweep_summary {
    char name[128];
    char file[TLM_PATH_CAP];   /* the sweep file as given to tlmd */
    int64_t jobs, pending, running, done, failed, interrupted, inactive;
    int64_t tokens_done, tokens_total;
} db_sweep_summary;
/* Every sweep with counts of its active jobs by status. */
int db_sweep_summaries(db *d, int (*cb)(void *ctx, const db_sweep_summary *s), void *ctx, tlm_err *e);

typedef struct db_job_summary {
    char key[65];
    char label[64];
    char arch[32], scale[32];
    int64_t seed;
    char status[16];
    int attempts;
    char reason[16];
    int64_t tokens_done, tokens_total;
    double last_loss; /* NaN when none (or NaN) */
    int has_loss;
    double val_ppl;   /* the latest validation perplexity (NaN: none, or NaN) */
    int has_val_ppl;
    char message[TLM_MSG_MAX];
    /* its latest attempt's end: reason and message ("" when none or still open) */
    char last_reason[16], last_message[TLM_MSG_MAX];
    /* its latest attempt: executor ("" without attempts); Slurm job id, state, node ("" if none) */
    char executor[16], slurm_job[32], slurm_state[24], node[64];
} db_job_summary;
/* Active jobs of one sweep in expansion order. */
int db_sweep_jobs(db *d, const char *sweep, int (*cb)(void *ctx, const db_job_summary *j), void *ctx, tlm_err *e);

#endif
