-- history/v1.sql: results.db schema version 1, frozen (the first draft).  Kept so
-- tests/test_db_migrate can build a version-1 database and check that
-- migrations bring it to the current schema.  Never edit.
--
-- tlmd is the only writer.  Readers (tlm-report, tlmd status, sqlite3 by
-- hand) never block it: the database runs in WAL mode.  Later versions add
-- migrations in db/migrations.c; names here may grow, never change.
--
-- Non-finite numbers: SQLite stores +-Inf in REAL columns but turns NaN into
-- NULL, so every metric value has a companion `nonfinite` column: NULL for
-- ordinary numbers, 'nan' | 'inf' | '-inf' otherwise (value holds +-Inf for
-- the infinities and NULL for NaN).  The db API reads them back as C doubles.
--
-- Times are Unix seconds (REAL).  Job keys are the SHA-256 hex of the job's
-- canonical config (engine/config.c); `jobs.config` holds its full JSON.

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
    updated_at   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE INDEX IF NOT EXISTS jobs_axes ON jobs(arch, scale, schedule, ratio_start, ratio_end);

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
    UNIQUE (job, n)
);

-- One row per (job, step, name): a resumed attempt that replays steps after
-- its checkpoint overwrites them (same values: training is deterministic).
CREATE TABLE IF NOT EXISTS metrics (
    job       TEXT NOT NULL REFERENCES jobs(key),
    step      INTEGER NOT NULL,
    name      TEXT NOT NULL,               -- loss, lr, grad_norm, tokens_per_s
    tokens    INTEGER NOT NULL,
    value     REAL,
    nonfinite TEXT CHECK (nonfinite IN ('nan', 'inf', '-inf')),
    attempt   INTEGER REFERENCES attempts(id),
    PRIMARY KEY (job, name, step)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS evals (
    job       TEXT NOT NULL REFERENCES jobs(key),
    step      INTEGER NOT NULL,
    tokens    INTEGER NOT NULL,
    suite     TEXT NOT NULL,               -- val, wikitext, lambada, commonsense, niah
    task      TEXT NOT NULL,               -- val, wikitext, lambada_openai, piqa, ..., s_niah_1@4096
    metric    TEXT NOT NULL,               -- loss, ppl, acc, acc_norm, word_perplexity, ...
    value     REAL,
    nonfinite TEXT CHECK (nonfinite IN ('nan', 'inf', '-inf')),
    n         INTEGER,                     -- items or tokens scored
    stderr    REAL,
    attempt   INTEGER REFERENCES attempts(id),
    PRIMARY KEY (job, step, suite, task, metric)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS evals_metric ON evals(suite, task, metric);

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

-- The software and machine behind each attempt.
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
-- just works.  "final" = the evaluation at the largest step.
CREATE VIEW IF NOT EXISTS results AS
WITH last_eval AS (
    SELECT e.job, e.suite, e.task, e.metric, e.value, e.nonfinite
    FROM evals e
    WHERE e.step = (SELECT MAX(step) FROM evals e2
                    WHERE e2.job = e.job AND e2.suite = e.suite AND e2.task = e.task AND e2.metric = e.metric)
)
SELECT
    j.key, j.sweep, j.label, j.arch, j.scale, j.schedule, j.ratio_start, j.ratio_end, j.groups, j.seed,
    j.status, j.attempts, j.reason, j.params, j.tokens_total, j.tokens_done,
    (SELECT value FROM metrics m WHERE m.job = j.key AND m.name = 'loss' ORDER BY step DESC LIMIT 1) AS train_loss,
    (SELECT value FROM last_eval WHERE job = j.key AND suite = 'val' AND metric = 'loss') AS val_loss,
    (SELECT value FROM last_eval WHERE job = j.key AND suite = 'val' AND metric = 'ppl') AS val_ppl,
    (SELECT value FROM last_eval WHERE job = j.key AND suite = 'wikitext' AND metric = 'word_perplexity') AS wikitext_ppl,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'lambada_openai' AND metric = 'ppl') AS lambada_ppl,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'lambada_openai' AND metric = 'acc') AS lambada_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'piqa' AND metric = 'acc') AS piqa_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'hellaswag' AND metric = 'acc_norm') AS hellaswag_acc_norm,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'winogrande' AND metric = 'acc') AS winogrande_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'arc_easy' AND metric = 'acc') AS arc_easy_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'arc_challenge' AND metric = 'acc_norm') AS arc_challenge_acc_norm,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'siqa' AND metric = 'acc') AS siqa_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'boolq' AND metric = 'acc') AS boolq_acc,
    (SELECT value FROM last_eval WHERE job = j.key AND task = 'openbookqa' AND metric = 'acc_norm') AS openbookqa_acc_norm
FROM jobs j;
