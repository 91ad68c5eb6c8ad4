-- schema.sql: results.db, the current schema (version 7, PRAGMA user_version).
--
-- db/db.c runs this file on a new database and sets user_version; an older
-- database is brought forward by the steps in db/migrations.c instead, and
-- must end up identical to what this file creates (tests/db/test_migrate
-- checks it).  Names may grow, never change.  Versions 1 to 6 are kept in
-- db/history/.
--
-- tlmd is the only writer.  Readers (tlm-report, tlmd status, sqlite3 by
-- hand) never block it: the database runs in WAL mode.
--
-- Non-finite numbers: SQLite stores +-Inf in REAL columns but turns NaN into
-- NULL.  In evals and layer_stats every value has a companion `nonfinite`
-- column: NULL for ordinary numbers, 'nan' | 'inf' | '-inf' otherwise (value
-- holds +-Inf for the infinities and NULL for NaN).  In `steps` every field
-- of a step event is required by the protocol, so NULL there means NaN and
-- the `metrics` view spells it out.  The db API reads all of them back as C
-- doubles (db_column_number).
--
-- Times are Unix seconds (REAL).  Job keys are the SHA-256 hex of the job's
-- canonical config (engine/config/config.c); `jobs.config` holds its full JSON.

-- Facts about the database itself (version 4), one row per key:
--   database_id  32 random hex digits drawn when the database is created (or
--                migrated to version 4): tlmd writes it into the marker file
--                of its --runs folder (runs/tlmd-runs.json), so that a run
--                folder is only ever used with the database it belongs to.
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta(key, value) VALUES ('database_id', lower(hex(randomblob(16))));

CREATE TABLE IF NOT EXISTS sweeps (
    name         TEXT PRIMARY KEY,
    description  TEXT NOT NULL DEFAULT '',
    file         TEXT NOT NULL,            -- path it was read from
    content_hash TEXT NOT NULL,            -- SHA-256 of the expanded job keys, in order
    source       TEXT NOT NULL,            -- the YAML text as read
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS jobs (
    key          TEXT PRIMARY KEY,         -- SHA-256 hex of the canonical config
    sweep        TEXT NOT NULL REFERENCES sweeps(name),  -- the sweep that first asked for it
    config       TEXT NOT NULL,            -- full resolved config (JSON)
    arch         TEXT NOT NULL,
    scale        TEXT NOT NULL,
    schedule     TEXT NOT NULL,            -- uniform | linear | cosine | sigmoid | blocks
    ratio_start  REAL,                     -- NULL unless linear/cosine/sigmoid
    ratio_end    REAL,
    groups       TEXT,                     -- blocks: "1.5,1,0.5"; NULL otherwise
    seed         INTEGER NOT NULL,
    label        TEXT NOT NULL,            -- short human name: "cosine 1.5->0.5", "wider-early"
    tokens_total INTEGER NOT NULL,         -- train.tokens
    params       INTEGER NOT NULL,         -- total parameters
    flops_per_token REAL NOT NULL,         -- training FLOPs per token
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'running', 'done', 'failed', 'interrupted')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    reason       TEXT,                     -- last failure class (see attempts.reason)
    message      TEXT,                     -- last failure message
    run_dir      TEXT,                     -- runs/<key12>
    tokens_done  INTEGER NOT NULL DEFAULT 0,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    -- version 2
    failures     INTEGER NOT NULL DEFAULT 0, -- failed attempts counted against --max-attempts
    widths       TEXT,                     -- per-layer d_ff as a JSON array, from the config
    finished_at  REAL,                     -- when it became done (or failed for good)
    final_loss   REAL,                     -- the `done` event's training loss (NULL: not done, or NaN)
    final_val_loss REAL,                   -- the `done` event's validation loss, if it reported one
    train_seconds REAL,                    -- the `done` event's elapsed_s (training time, resumes summed by the worker)
    -- version 6
    rerun        INTEGER NOT NULL DEFAULT 0, -- 1: `tlmd --rerun` reset it and no run of it has finished since; a
                                           -- --rerun then resumes it (it applies once), a finished run clears it
    -- version 7: the latest numbers of the job's rows, kept by the triggers
    -- below (never written by hand), so that a page of 100,000 jobs sorted
    -- by one of them walks an index instead of searching steps or evals
    -- once per job.  Each equals the `results` view's lookup of the same
    -- number (tests/db/test_migrate checks it); NULL: no such row, or NaN.
    last_step    INTEGER,                  -- the largest step of its `steps` rows
    last_loss    REAL,                     -- that step's loss
    last_tokens_per_s REAL,                -- that step's tokens_per_s
    val_loss     REAL,                     -- = results.val_loss: the val loss at the largest step evaluated
    val_ppl      REAL                      -- = results.val_ppl
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE INDEX IF NOT EXISTS jobs_axes ON jobs(arch, scale, schedule, ratio_start, ratio_end);
-- version 7: the dashboard's jobs page sorted by val ppl or val loss (dashboard/jobs.c),
-- and its done jobs by val ppl (the parallel coordinates view)
CREATE INDEX IF NOT EXISTS jobs_val_ppl ON jobs(val_ppl);
CREATE INDEX IF NOT EXISTS jobs_val_loss ON jobs(val_loss);
CREATE INDEX IF NOT EXISTS jobs_status_val_ppl ON jobs(status, val_ppl);

-- Which sweeps ask for which jobs (a job may belong to several).  A sweep
-- file edited so that it no longer asks for a job sets active = 0.
CREATE TABLE IF NOT EXISTS sweep_jobs (
    sweep   TEXT NOT NULL REFERENCES sweeps(name),
    job     TEXT NOT NULL REFERENCES jobs(key),
    ord     INTEGER NOT NULL,              -- position in the sweep's expansion
    active  INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (sweep, job)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sweep_jobs_job ON sweep_jobs(job);

CREATE TABLE IF NOT EXISTS attempts (
    id          INTEGER PRIMARY KEY,
    job         TEXT NOT NULL REFERENCES jobs(key),
    n           INTEGER NOT NULL,          -- 1, 2, ... per job
    pid         INTEGER,
    host        TEXT NOT NULL,
    device      TEXT NOT NULL,             -- "cpu:0" (slot), "cuda:1", ...
    resumed_from_step INTEGER,             -- checkpoint step it resumed from, NULL if fresh
    started_at  REAL NOT NULL,
    ended_at    REAL,
    exit_code   INTEGER,
    signal      INTEGER,
    reason      TEXT CHECK (reason IN ('done', 'diverged', 'oom', 'config', 'data', 'io', 'crash',
                                       'timeout', 'interrupted', 'protocol', 'internal')),
    message     TEXT,
    -- version 2
    step        INTEGER,                   -- last step reported by this attempt
    tokens      INTEGER,                   -- tokens trained when it ended
    protocol_errors INTEGER NOT NULL DEFAULT 0, -- event lines refused (see logs)
    -- version 5: the executor that ran it (docs/tlmd.md "Running on a Slurm cluster")
    executor    TEXT NOT NULL DEFAULT 'local', -- local | slurm
    token       TEXT,                      -- slurm: the submission's token, in the Slurm job's --comment
    slurm_job   TEXT,                      -- slurm: the job id sbatch gave (NULL while submitting)
    slurm_restart INTEGER,                 -- slurm: SLURM_RESTART_COUNT (a requeue runs again under the same id)
    slurm_state TEXT,                      -- slurm: submitting, or what squeue last said (PENDING, RUNNING, ...)
    node        TEXT,                      -- slurm: the node it ran on
    events_offset INTEGER NOT NULL DEFAULT 0, -- slurm: bytes of its events file whose rows are committed
    UNIQUE (job, n)
);

-- One row per step event (version 2; version 1 kept one row per metric,
-- which cost four B-tree inserts per event).  A resumed attempt that replays
-- steps after its checkpoint overwrites them (same values: training is
-- deterministic).  NULL in a number column means NaN.
CREATE TABLE IF NOT EXISTS steps (
    job          TEXT NOT NULL REFERENCES jobs(key),
    step         INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,
    loss         REAL,
    lr           REAL,
    grad_norm    REAL,                     -- before clipping
    tokens_per_s REAL,
    step_ms      REAL,
    attempt      INTEGER REFERENCES attempts(id),
    PRIMARY KEY (job, step)
) WITHOUT ROWID;

-- The design's metrics table (job, step, tokens, name, value, nonfinite),
-- one row per (job, step, name), read from `steps`.
CREATE VIEW IF NOT EXISTS metrics AS
SELECT job, step, 'loss' AS name, tokens, loss AS value,
       CASE WHEN loss IS NULL THEN 'nan' WHEN loss = 9e999 THEN 'inf' WHEN loss = -9e999 THEN '-inf' END AS nonfinite,
       attempt FROM steps
UNION ALL
SELECT job, step, 'lr', tokens, lr,
       CASE WHEN lr IS NULL THEN 'nan' WHEN lr = 9e999 THEN 'inf' WHEN lr = -9e999 THEN '-inf' END,
       attempt FROM steps
UNION ALL
SELECT job, step, 'grad_norm', tokens, grad_norm,
       CASE WHEN grad_norm IS NULL THEN 'nan' WHEN grad_norm = 9e999 THEN 'inf' WHEN grad_norm = -9e999 THEN '-inf' END,
       attempt FROM steps
UNION ALL
SELECT job, step, 'tokens_per_s', tokens, tokens_per_s,
       CASE WHEN tokens_per_s IS NULL THEN 'nan' WHEN tokens_per_s = 9e999 THEN 'inf' WHEN tokens_per_s = -9e999 THEN '-inf' END,
       attempt FROM steps
UNION ALL
SELECT job, step, 'step_ms', tokens, step_ms,
       CASE WHEN step_ms IS NULL THEN 'nan' WHEN step_ms = 9e999 THEN 'inf' WHEN step_ms = -9e999 THEN '-inf' END,
       attempt FROM steps;

CREATE TABLE IF NOT EXISTS evals (
    job       TEXT NOT NULL REFERENCES jobs(key),
    step      INTEGER NOT NULL,
    tokens    INTEGER NOT NULL,
    suite     TEXT NOT NULL,               -- val, wikitext, lambada, commonsense, niah
    task      TEXT NOT NULL,               -- val, wikitext, lambada, piqa, ..., s_niah_1@4096 (docs/evaluation.md)
    metric    TEXT NOT NULL,               -- loss, ppl, acc, acc_norm, word_perplexity, ...
    value     REAL,
    nonfinite TEXT CHECK (nonfinite IN ('nan', 'inf', '-inf')),
    n         INTEGER,                     -- items or tokens scored
    stderr    REAL,
    attempt   INTEGER REFERENCES attempts(id),
    PRIMARY KEY (job, step, suite, task, metric)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS evals_metric ON evals(suite, task, metric);
-- version 2: the `results` view's "latest value of this metric" lookups
CREATE INDEX IF NOT EXISTS evals_job_suite ON evals(job, suite, metric, step);
CREATE INDEX IF NOT EXISTS evals_job_task ON evals(job, task, metric, step);

-- version 7: jobs.last_step, last_loss, last_tokens_per_s and val_loss,
-- val_ppl follow every write of steps and evals, whoever makes it (tlmd's
-- ingest, a reset, sqlite3 by hand), in the writer's transaction.  A new
-- step at or after the last one is copied (one jobs row updated per step
-- event, no search); any other change searches the job's last row again,
-- as the `results` view does (a reset's DELETE: once, at its last row).
CREATE TRIGGER IF NOT EXISTS steps_latest_insert AFTER INSERT ON steps BEGIN
    UPDATE jobs SET last_step = NEW.step, last_loss = NEW.loss, last_tokens_per_s = NEW.tokens_per_s
    WHERE key = NEW.job AND (last_step IS NULL OR last_step <= NEW.step);
END;
CREATE TRIGGER IF NOT EXISTS steps_latest_update AFTER UPDATE ON steps BEGIN
    UPDATE jobs SET (last_step, last_loss, last_tokens_per_s) =
        (SELECT s.step, s.loss, s.tokens_per_s FROM steps s WHERE s.job = jobs.key ORDER BY s.step DESC LIMIT 1)
    WHERE key IN (OLD.job, NEW.job);
END;
CREATE TRIGGER IF NOT EXISTS steps_latest_delete AFTER DELETE ON steps
WHEN OLD.step >= (SELECT last_step FROM jobs WHERE key = OLD.job) BEGIN
    UPDATE jobs SET (last_step, last_loss, last_tokens_per_s) =
        (SELECT s.step, s.loss, s.tokens_per_s FROM steps s WHERE s.job = jobs.key ORDER BY s.step DESC LIMIT 1)
    WHERE key = OLD.job;
END;
CREATE TRIGGER IF NOT EXISTS evals_latest_insert AFTER INSERT ON evals
WHEN NEW.suite = 'val' AND NEW.metric IN ('loss', 'ppl') BEGIN
    UPDATE jobs SET
        val_loss = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'loss' ORDER BY e.step DESC LIMIT 1),
        val_ppl = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'ppl' ORDER BY e.step DESC LIMIT 1)
    WHERE key = NEW.job;
END;
CREATE TRIGGER IF NOT EXISTS evals_latest_update AFTER UPDATE ON evals
WHEN (OLD.suite = 'val' AND OLD.metric IN ('loss', 'ppl')) OR (NEW.suite = 'val' AND NEW.metric IN ('loss', 'ppl')) BEGIN
    UPDATE jobs SET
        val_loss = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'loss' ORDER BY e.step DESC LIMIT 1),
        val_ppl = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'ppl' ORDER BY e.step DESC LIMIT 1)
    WHERE key IN (OLD.job, NEW.job);
END;
CREATE TRIGGER IF NOT EXISTS evals_latest_delete AFTER DELETE ON evals
WHEN OLD.suite = 'val' AND OLD.metric IN ('loss', 'ppl') BEGIN
    UPDATE jobs SET
        val_loss = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'loss' ORDER BY e.step DESC LIMIT 1),
        val_ppl = (SELECT value FROM evals e WHERE e.job = jobs.key AND e.suite = 'val' AND e.metric = 'ppl' ORDER BY e.step DESC LIMIT 1)
    WHERE key = OLD.job;
END;

CREATE TABLE IF NOT EXISTS layer_stats (
    job       TEXT NOT NULL REFERENCES jobs(key),
    step      INTEGER NOT NULL,
    layer     INTEGER NOT NULL,
    name      TEXT NOT NULL,               -- d_ff, rho_mlp, rho_block, ...
    value     REAL,
    nonfinite TEXT CHECK (nonfinite IN ('nan', 'inf', '-inf')),
    PRIMARY KEY (job, step, layer, name)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS checkpoints (
    job        TEXT NOT NULL REFERENCES jobs(key),
    step       INTEGER NOT NULL,
    tokens     INTEGER NOT NULL,
    path       TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (job, step)
) WITHOUT ROWID;

-- The software and machine behind each attempt (from its `start` event).
CREATE TABLE IF NOT EXISTS environment (
    attempt      INTEGER PRIMARY KEY REFERENCES attempts(id),
    git_commit   TEXT,
    tlm_version  TEXT,
    compiler     TEXT,
    blas         TEXT,                     -- "OpenBLAS 0.3.21"
    blas_kernel  TEXT,                     -- "Cooperlake", "SkylakeX", ...
    threads      INTEGER,
    cuda         TEXT,
    driver       TEXT,
    host         TEXT,
    os           TEXT,
    cmdline      TEXT                      -- JSON array: the worker's argv
);

-- Worker output that is not protocol, and daemon notices, per attempt.
CREATE TABLE IF NOT EXISTS logs (
    id       INTEGER PRIMARY KEY,
    job      TEXT REFERENCES jobs(key),
    attempt  INTEGER REFERENCES attempts(id),
    at       REAL NOT NULL,
    level    TEXT NOT NULL CHECK (level IN ('info', 'warn', 'error')),
    message  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS logs_job ON logs(job);

-- One row per job: its axes and final numbers as columns, so that
--   SELECT arch, schedule, ratio_start, val_ppl FROM results
-- just works.  "final" = the evaluation at the largest step; every lookup
-- is an index search (jobs x columns, no scans), so 10,000 jobs read in
-- well under a second.  NaN reads as NULL here (the job's status and
-- reason say why); the nonfinite columns of evals have the detail.
CREATE VIEW IF NOT EXISTS results AS
SELECT
    j.key, j.sweep, j.label, j.arch, j.scale, j.schedule, j.ratio_start, j.ratio_end, j.groups, j.seed,
    j.status, j.attempts, j.reason, j.params, j.tokens_total, j.tokens_done,
    CASE WHEN j.final_loss IS NOT NULL THEN j.final_loss
         ELSE (SELECT loss FROM steps s WHERE s.job = j.key ORDER BY s.step DESC LIMIT 1) END AS train_loss,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.suite = 'val' AND e.metric = 'loss' ORDER BY e.step DESC LIMIT 1) AS val_loss,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.suite = 'val' AND e.metric = 'ppl' ORDER BY e.step DESC LIMIT 1) AS val_ppl,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.suite = 'wikitext' AND e.metric = 'word_perplexity' ORDER BY e.step DESC LIMIT 1) AS wikitext_ppl,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'lambada' AND e.metric = 'perplexity' ORDER BY e.step DESC LIMIT 1) AS lambada_ppl,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'lambada' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS lambada_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'piqa' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS piqa_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'hellaswag' AND e.metric = 'acc_norm' ORDER BY e.step DESC LIMIT 1) AS hellaswag_acc_norm,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'winogrande' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS winogrande_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'arc_easy' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS arc_easy_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'arc_challenge' AND e.metric = 'acc_norm' ORDER BY e.step DESC LIMIT 1) AS arc_challenge_acc_norm,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'siqa' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS siqa_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'boolq' AND e.metric = 'acc' ORDER BY e.step DESC LIMIT 1) AS boolq_acc,
    (SELECT value FROM evals e WHERE e.job = j.key AND e.task = 'openbookqa' AND e.metric = 'acc_norm' ORDER BY e.step DESC LIMIT 1) AS openbookqa_acc_norm,
    -- version 2
    j.widths, j.flops_per_token, j.failures, j.finished_at, j.final_val_loss, j.train_seconds
FROM jobs j;
