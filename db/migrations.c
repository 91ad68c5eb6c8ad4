/* migrations.c: forward migrations of results.db, one step per version.
 * STEPS[v] takes a version-v database to version v+1; db_migrate runs them
 * in order inside one write transaction and then sets user_version, so a
 * failure leaves the file as it was.  The result must equal what
 * db/schema.sql creates (tests/db/test_migrate compares the two).
 * Must not: edit a step that has shipped; add a new one instead. */
#include "db/internal.h"

#include <stddef.h>
#include <string.h>

/* 1 -> 2: step events move from one row per metric (`metrics` table) into
 * one row per step (`steps`), `metrics` becomes a view of them; counters
 * and progress columns; indexes for the results view. */
static const char STEP_1_TO_2[] =
    "ALTER TABLE jobs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE jobs ADD COLUMN widths TEXT;\n"
    "ALTER TABLE jobs ADD COLUMN finished_at REAL;\n"
    "ALTER TABLE jobs ADD COLUMN final_loss REAL;\n"
    "ALTER TABLE jobs ADD COLUMN final_val_loss REAL;\n"
    "ALTER TABLE jobs ADD COLUMN train_seconds REAL;\n"
    "ALTER TABLE attempts ADD COLUMN step INTEGER;\n"
    "ALTER TABLE attempts ADD COLUMN tokens INTEGER;\n"
    "ALTER TABLE attempts ADD COLUMN protocol_errors INTEGER NOT NULL DEFAULT 0;\n"
    "CREATE TABLE steps (\n"
    "    job TEXT NOT NULL REFERENCES jobs(key), step INTEGER NOT NULL, tokens INTEGER NOT NULL,\n"
    "    loss REAL, lr REAL, grad_norm REAL, tokens_per_s REAL, step_ms REAL,\n"
    "    attempt INTEGER REFERENCES attempts(id), PRIMARY KEY (job, step)) WITHOUT ROWID;\n"
    /* NaN was NULL + 'nan' in v1 and is NULL in steps; infinities were stored as such */
    "INSERT INTO steps(job, step, tokens, loss, lr, grad_norm, tokens_per_s, step_ms, attempt)\n"
    "  SELECT job, step, max(tokens),\n"
    "         max(CASE WHEN name = 'loss' THEN value END), max(CASE WHEN name = 'lr' THEN value END),\n"
    "         max(CASE WHEN name = 'grad_norm' THEN value END),\n"
    "         max(CASE WHEN name = 'tokens_per_s' THEN value END),\n"
    "         max(CASE WHEN name = 'step_ms' THEN value END), max(attempt)\n"
    "  FROM metrics GROUP BY job, step;\n"
    "DROP TABLE metrics;\n"
    "DROP VIEW results;\n"
    "CREATE INDEX evals_job_suite ON evals(job, suite, metric, step);\n"
    "CREATE INDEX evals_job_task ON evals(job, task, metric, step);\n";

/* 2 -> 3: the results view reads LAMBADA under the names the evaluator
 * emits (task lambada, metrics perplexity and acc; docs/evaluation.md). */
static const char STEP_2_TO_3[] = "DROP VIEW IF EXISTS results;\n";

/* 3 -> 4: the database gets an identity (meta.database_id, drawn by
 * schema.sql's INSERT OR IGNORE, which the re-run below executes), so that
 * a runs folder can say which database it belongs to. */
static const char STEP_3_TO_4[] = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) "
                                  "WITHOUT ROWID;\n";

/* 4 -> 5: attempts say which executor ran them and, for Slurm, the job id,
 * its restart count, state and node, and how much of its events file is in
 * the database (orchestrator/exec_slurm.c).  Every older attempt was local. */
static const char STEP_4_TO_5[] = "ALTER TABLE attempts ADD COLUMN executor TEXT NOT NULL DEFAULT 'local';\n"
                                  "ALTER TABLE attempts ADD COLUMN token TEXT;\n"
                                  "ALTER TABLE attempts ADD COLUMN slurm_job TEXT;\n"
                                  "ALTER TABLE attempts ADD COLUMN slurm_restart INTEGER;\n"
                                  "ALTER TABLE attempts ADD COLUMN slurm_state TEXT;\n"
                                  "ALTER TABLE attempts ADD COLUMN node TEXT;\n"
                                  "ALTER TABLE attempts ADD COLUMN events_offset INTEGER NOT NULL DEFAULT 0;\n";

/* 5 -> 6: a job reset by `tlmd --rerun` says so until a run of it has
 * finished, so that the same command after a Ctrl-C resumes it instead of
 * setting aside what the interrupted rerun trained (orchestrator/plan.c). */
static const char STEP_5_TO_6[] = "ALTER TABLE jobs ADD COLUMN rerun INTEGER NOT NULL DEFAULT 0;\n";

/* 6 -> 7: each job keeps the latest numbers of its steps and val evals
 * (schema.sql's triggers keep them from then on; they are created, with the
 * two indexes, when schema.sql runs after the steps), so that the
 * dashboard sorts 100,000 jobs by val ppl without a search per job.  Filled
 * here by the `results` view's own lookups. */
static const char STEP_6_TO_7[] =
    "ALTER TABLE jobs ADD COLUMN last_step INTEGER;\n"
    "ALTER TABLE jobs ADD COLUMN last_loss REAL;\n"
    "ALTER TABLE jobs ADD COLUMN last_tokens_per_s REAL;\n"
    "ALTER TABLE jobs ADD COLUMN val_loss REAL;\n"
    "ALTER TABLE jobs ADD COLUMN val_ppl REAL;\n"
    "UPDATE jobs SET (last_step, last_loss, last_tokens_per_s) =\n"
    "    (SELECT s.step, s.loss, s.tokens_per_s FROM steps s WHERE s.job = jobs.key ORDER BY s.step DESC LIMIT 1),\n"
    "  val_loss = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'loss' "
    "ORDER BY e.step DESC LIMIT 1),\n"
    "  val_ppl = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'ppl' "
    "ORDER BY e.step DESC LIMIT 1);\n";

static const char *const STEPS[DB_SCHEMA_VERSION] = {
    [1] = STEP_1_TO_2,
    [2] = STEP_2_TO_3,
    [3] = STEP_3_TO_4,
    [4] = STEP_4_TO_5,
    [5] = STEP_5_TO_6,
    [6] = STEP_6_TO_7,
};

int db__migrate_from(db *d, int from, tlm_err *e)
{
    for (int v = from; v < DB_SCHEMA_VERSION; v++) {
        if (v < 1 || !STEPS[v])
            return tlm_errf(e, TLM_EINTERNAL, "%s: no migration from schema version %d", d->path, v);
        tlm_err why = {0};
        if (db_exec(d, STEPS[v], &why)) {
            /* a step fails on a file whose tables are not those of the
             * version it says it has: "duplicate column name" is SQLite's
             * way to say so, which names neither the cause nor the way out */
            const char *sqlite_says = strncmp(why.msg, d->path, strlen(d->path)) ? why.msg
                                                                                  : why.msg + strlen(d->path) + 2;
            return tlm_errf(e, TLM_ECONFIG,
                            "%s: its tables are not those of schema version %d, the version the file says it has "
                            "(PRAGMA user_version), so it cannot be migrated from it (step %d to %d: %s); nothing "
                            "was changed. Was user_version set by hand? Set it back to the file's own version, or "
                            "use a backup",
                            d->path, from, v, v + 1, sqlite_says);
        }
    }
    /* Views and indexes are re-created from the current schema: every
     * statement there is IF NOT EXISTS, so tables that exist stay as they are. */
    if (db_exec(d, db_schema_sql, e))
        return tlm_err_prefix(e, "migrating %s to version %d", d->path, DB_SCHEMA_VERSION);
    return 0;
}
