/* internal.h: internals of db/ shared by its files (the connection struct and
 * the prepared-statement cache).  Nothing outside db/ includes this. */
#ifndef TLM_DB_DB_INT_H
#define TLM_DB_DB_INT_H

#include "db/db.h"

/* Statements prepared once per connection, on first use. */
typedef enum db_stmt_id {
    DB_ST_SWEEP_GET_HASH,
    DB_ST_SWEEP_PUT,
    DB_ST_JOB_PUT,
    DB_ST_JOB_STATE,
    DB_ST_JOB_STATUS,
    DB_ST_JOB_START,
    DB_ST_JOB_FAIL,
    DB_ST_JOB_TOKENS,
    DB_ST_JOB_FINAL,
    DB_ST_JOB_CLEAR_FAILURES,
    DB_ST_JOB_RERUN_DONE,
    DB_ST_SJ_MARK,
    DB_ST_SJ_LINK,
    DB_ST_SJ_COUNT_ADDED,
    DB_ST_SJ_COUNT_REMOVED,
    DB_ST_SJ_SETTLE,
    DB_ST_ATT_BEGIN,
    DB_ST_ATT_RESUMED,
    DB_ST_ATT_FINISH,
    DB_ST_STEP_PUT,
    DB_ST_EVAL_PUT,
    DB_ST_LAYER_PUT,
    DB_ST_CKPT_PUT,
    DB_ST_ENV_PUT,
    DB_ST_LOG,
    DB_ST_LAST_CKPT,
    DB_ST_JOB_CONFIG,
    DB_ST_JOB_RECOVER,
    DB_ST_ATT_SLURM,
    DB_ST_ATT_OFFSET,
    DB_ST_COUNT
} db_stmt_id;

struct db {
    sqlite3 *h;
    char *path;        /* as the caller named it: every message says which database */
    int mode;
    int opened_version;
    int in_tx;
    sqlite3_stmt *st[DB_ST_COUNT];
};

/* "what: sqlite's message" as TLM_EIO. */
int db__fail(db *d, tlm_err *e, const char *what);
/* Step a statement that returns no rows (SQLITE_DONE), then reset it. */
int db__run(db *d, sqlite3_stmt *s, tlm_err *e, const char *what);

/* The path's refusals before SQLite meets it (db.c): a folder, a FIFO or
 * device, a file it cannot read or that is no SQLite file, and for
 * DB_READWRITE a file or folder it cannot write. */
int db__check_path(const char *path, int mode, tlm_err *e);

/* SQLite's quick_check on a connection: 0 whole, 1 damaged (what it found
 * in `found`, one line), -1 it could not run (SQLite's message there). */
int db__quick_check(sqlite3 *h, char *found, size_t cap);

/* Binding helpers: NULL pointers bind NULL. */
void db__bind_text(sqlite3_stmt *s, int i, const char *v);
/* value + nonfinite companion (nonfinite_i < 0: NaN binds NULL, +-inf as is). */
void db__bind_number(sqlite3_stmt *s, int value_i, int nonfinite_i, double v);

/* The current schema (generated from db/schema.sql) and the migrations. */
extern const char db_schema_sql[];
/* Runs the steps from `from` to DB_SCHEMA_VERSION inside the caller's transaction. */
int db__migrate_from(db *d, int from, tlm_err *e);

#endif
