/* test_db.c: the results.db API.  A new file gets schema version 2 in WAL
 * mode with busy_timeout and foreign keys on; NaN and +-inf go in and come
 * back out as such (steps, evals, layer stats, the metrics view); a
 * replayed step overwrites itself; sweep reconciliation counts what it
 * added and dropped; read-only connections cannot write and refuse older
 * files; a newer file is refused for writing; the results view has one row
 * per job and reads 10,000 jobs through indexes only (no table scan). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/clock.h"
#include "db/db.h"
#include "tests/lib/db_util.h"
#include "tests/lib/tap.h"

static char dir[256];

static void q_text(db *d, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *s;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db_handle(d), sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
        sqlite3_column_text(s, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* a number and its nonfinite companion, decoded by the API */
static double q_num(db *d, const char *sql, int nonfinite_col)
{
    sqlite3_stmt *s;
    double v = -12345;
    if (sqlite3_prepare_v2(db_handle(d), sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = db_column_number(s, 0, nonfinite_col);
    sqlite3_finalize(s);
    return v;
}

static void key_of(int i, char key[65])
{
    snprintf(key, 65, "%064x", i + 1);
}

static int put_job(db *d, const char *sweep, int i, tlm_err *e)
{
    char key[65], label[32];
    key_of(i, key);
    snprintf(label, sizeof label, "cosine 1.5->0.5 #%d", i);
    db_job_row r = {.key = key, .sweep = sweep, .config = "{}", .arch = "transformer", .scale = "1m",
                    .schedule = "cosine", .ratio_start = 1.5, .ratio_end = 0.5, .seed = i, .label = label,
                    .tokens_total = 1000, .params = 1000000, .flops_per_token = 7e6, .widths = "[384,128]",
                    .run_dir = "runs/x"};
    return db_job_put(d, &r, NULL, e);
}

typedef struct {
    int n;
    db_job_summary j;
} job_seen;

static int see_job(void *ctx, const db_job_summary *j)
{
    job_seen *s = ctx;
    s->n++;
    s->j = *j;
    return 0;
}

static void test_open_and_values(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/a.db", dir);
    tlm_err e = {0};
    db *d = NULL;
    TAP_OK(db_open(path, DB_READWRITE, &d, &e) == 0, "read-write open creates the file (%s)", e.msg);
    if (!d)
        return;
    char mode[32];
    q_text(d, "PRAGMA journal_mode", mode, sizeof mode);
    TAP_OK(!strcmp(mode, "wal"), "journal mode is WAL (%s)", mode);
    TAP_OK(q_int(d, "PRAGMA busy_timeout") == DB_BUSY_TIMEOUT_MS, "busy_timeout is set");
    TAP_OK(q_int(d, "PRAGMA foreign_keys") == 1, "foreign keys are on");
    TAP_OK(q_int(d, "PRAGMA user_version") == DB_SCHEMA_VERSION, "user_version is %d", DB_SCHEMA_VERSION);
    TAP_OK(db_opened_version(d) == DB_SCHEMA_VERSION, "a new file appears complete (built aside, renamed into place)");

    int changed = -1;
    db_sweep_row sw = {.name = "s1", .description = "d", .file = "s1.yaml", .content_hash = "h1", .source = "x"};
    TAP_OK(db_sweep_put(d, &sw, &changed, &e) == 0 && changed == 2, "a new sweep is recorded as new");
    TAP_OK(db_sweep_put(d, &sw, &changed, &e) == 0 && changed == 0, "the same sweep again is unchanged");
    int inserted = -1;
    char key[65];
    key_of(0, key);
    db_job_row r = {.key = key, .sweep = "s1", .config = "{}", .arch = "transformer", .scale = "1m",
                    .schedule = "uniform", .ratio_start = NAN, .ratio_end = NAN, .seed = 7, .label = "uniform",
                    .tokens_total = 1000, .params = 10, .flops_per_token = 1, .widths = "[1]"};
    TAP_OK(db_job_put(d, &r, &inserted, &e) == 0 && inserted == 1, "a job is inserted");
    TAP_OK(db_job_put(d, &r, &inserted, &e) == 0 && inserted == 0, "the same key again is not");
    TAP_OK(q_int(d, "SELECT ratio_start IS NULL FROM jobs") == 1, "a ratio that does not apply is NULL");

    /* foreign keys are enforced */
    db_job_row orphan = r;
    orphan.key = "f00d";
    orphan.sweep = "no such sweep";
    TAP_OK(db_job_put(d, &orphan, NULL, &e) != 0, "a job of an unknown sweep is refused (%s)", e.msg);

    int n = 0;
    int64_t att = 0;
    TAP_OK(db_job_start_attempt(d, key, &n, &e) == 0 && n == 1, "attempt counter goes to 1");
    db_attempt_row ar = {.job = key, .n = n, .pid = 42, .host = "h", .device = "cpu:0", .started_at = 1};
    TAP_OK(db_attempt_begin(d, &ar, &att, &e) == 0 && att > 0, "attempt recorded");

    /* NaN and infinities through every kind of row, inside one batch */
    TAP_OK(db_begin(d, &e) == 0 && db_in_transaction(d), "batch transaction opens");
    db_step_row st = {.job = key, .attempt = att, .step = 1, .tokens = 10, .loss = NAN, .lr = INFINITY,
                      .grad_norm = -INFINITY, .tokens_per_s = 5, .step_ms = 2.5};
    TAP_OK(db_step_put(d, &st, &e) == 0, "step with NaN/inf stored");
    st.step = 2;
    st.loss = 3.25;
    st.lr = 1e-3;
    st.grad_norm = 0.5;
    TAP_OK(db_step_put(d, &st, &e) == 0, "finite step stored");
    db_eval_row ev = {.job = key, .attempt = att, .step = 2, .tokens = 20, .suite = "val", .task = "val",
                      .metric = "ppl", .value = INFINITY, .n = 100, .stderr_ = NAN};
    TAP_OK(db_eval_put(d, &ev, &e) == 0, "eval with inf stored");
    ev.metric = "loss";
    ev.value = NAN;
    TAP_OK(db_eval_put(d, &ev, &e) == 0, "eval with NaN stored");
    TAP_OK(db_layer_put(d, key, 0, 3, "rho_mlp", -INFINITY, &e) == 0, "layer stat with -inf stored");
    TAP_OK(db_commit(d, &e) == 0 && !db_in_transaction(d), "batch commits");

    TAP_OK(isnan(q_num(d, "SELECT value, nonfinite FROM metrics WHERE name = 'loss' AND step = 1", 1)),
           "metrics view: loss NaN reads back as NaN");
    TAP_OK(q_num(d, "SELECT value, nonfinite FROM metrics WHERE name = 'lr' AND step = 1", 1) == INFINITY,
           "metrics view: lr +inf");
    TAP_OK(q_num(d, "SELECT value, nonfinite FROM metrics WHERE name = 'grad_norm' AND step = 1", 1) == -INFINITY,
           "metrics view: grad_norm -inf");
    char nf[16];
    q_text(d, "SELECT nonfinite FROM metrics WHERE name = 'loss' AND step = 1", nf, sizeof nf);
    TAP_OK(!strcmp(nf, "nan"), "metrics view spells NaN as 'nan' (%s)", nf);
    TAP_OK(isnan(q_num(d, "SELECT loss FROM steps WHERE step = 1", -1)), "steps: NULL loss decodes to NaN");
    TAP_OK(q_num(d, "SELECT value, nonfinite FROM evals WHERE metric = 'ppl'", 1) == INFINITY, "eval +inf");
    TAP_OK(isnan(q_num(d, "SELECT value, nonfinite FROM evals WHERE metric = 'loss'", 1)), "eval NaN");
    TAP_OK(q_int(d, "SELECT stderr IS NULL FROM evals WHERE metric = 'loss'") == 1, "unknown stderr is NULL");
    TAP_OK(q_num(d, "SELECT value, nonfinite FROM layer_stats", 1) == -INFINITY, "layer stat -inf");
    TAP_OK(q_num(d, "SELECT step_ms, NULL FROM steps WHERE step = 2", -1) == 2.5, "finite values exact");

    /* a resumed attempt replays step 2: one row, the new values */
    st.loss = 3.0;
    TAP_OK(db_step_put(d, &st, &e) == 0, "step replayed");
    TAP_OK(q_int(d, "SELECT count(*) FROM steps") == 2, "still one row per step");
    TAP_OK(q_num(d, "SELECT loss FROM steps WHERE step = 2", -1) == 3.0, "replay overwrote the row");
    TAP_OK(q_int(d, "SELECT count(*) FROM metrics") == 10, "metrics view: 5 names x 2 steps");

    int64_t ck = 0;
    TAP_OK(db_last_ckpt_step(d, key, &ck, &e) == 0 && ck == -1, "no checkpoint yet: -1");
    db_ckpt_put(d, key, 8, 80, "runs/x/ckpt/step-00000008", 1, &e);
    db_ckpt_put(d, key, 16, 160, "runs/x/ckpt/step-00000016", 2, &e);
    TAP_OK(db_last_ckpt_step(d, key, &ck, &e) == 0 && ck == 16, "last checkpoint step 16");

    db_env_row env = {.attempt = att, .git_commit = "abc", .compiler = "gcc", .blas = "OpenBLAS 0.3.21",
                      .blas_kernel = "Haswell", .threads = 2, .host = "h", .os = "Linux", .cmdline = "[\"w\"]"};
    TAP_OK(db_env_put(d, &env, &e) == 0, "environment stored");
    char blas[64];
    q_text(d, "SELECT blas_kernel FROM environment", blas, sizeof blas);
    TAP_OK(!strcmp(blas, "Haswell"), "environment reads back");

    db_attempt_end end = {.ended_at = 3, .exit_code = 0, .reason = "done", .step = 2, .tokens = 20};
    TAP_OK(db_attempt_finish(d, att, &end, &e) == 0, "attempt finished");
    end.reason = "exploded";
    TAP_OK(db_attempt_finish(d, att, &end, &e) != 0, "an unknown reason is refused by the schema");
    TAP_OK(db_job_set_final(d, key, 2.75, NAN, 12.5, &e) == 0 && db_job_set_status(d, key, DB_JOB_DONE, NULL, NULL, &e) == 0,
           "job done");
    TAP_OK(q_num(d, "SELECT train_loss FROM results", -1) == 2.75, "results.train_loss is the done loss");
    TAP_OK(q_num(d, "SELECT val_ppl FROM results", -1) == INFINITY, "results.val_ppl: latest eval (inf)");
    TAP_OK(q_int(d, "SELECT finished_at IS NOT NULL FROM jobs") == 1, "finished_at set");

    /* `tlmd status`'s row of it: the latest val ppl, its last attempt's end */
    job_seen seen = {0};
    TAP_OK(db_sweep_jobs_mark(d, "s1", &e) == 0 && db_sweep_job_link(d, "s1", key, 0, &e) == 0 &&
               db_sweep_jobs_settle(d, "s1", NULL, NULL, &e) == 0 && db_sweep_jobs(d, "s1", see_job, &seen, &e) == 0 &&
               seen.n == 1,
           "the job is listed in its sweep (%s)", e.msg);
    TAP_OK(seen.j.has_val_ppl && seen.j.val_ppl == INFINITY && !strcmp(seen.j.last_reason, "done"),
           "...with its latest validation perplexity (inf) and its last attempt's end (%s)", seen.j.last_reason);

    db_job_state js;
    TAP_OK(db_job_state_get(d, key, &js, &e) == 1 && !strcmp(js.status, "done") && js.attempts == 1 && !js.rerun &&
               js.seed == 7,
           "job state reads back (%s, %d, rerun %d)", js.status, js.attempts, js.rerun);
    TAP_OK(db_job_reset(d, key, &e) == 0 && q_int(d, "SELECT count(*) FROM steps") == 0 &&
               q_int(d, "SELECT count(*) FROM evals") == 0 && q_int(d, "SELECT count(*) FROM attempts") == 1,
           "reset forgets results, keeps the attempt history");
    TAP_OK(db_job_state_get(d, key, &js, &e) == 1 && !strcmp(js.status, "pending") && js.rerun == 1,
           "reset job is pending, and marked as rerun (%d)", js.rerun);
    TAP_OK(db_job_rerun_done(d, key, &e) == 0 && db_job_state_get(d, key, &js, &e) == 1 && js.rerun == 0,
           "a finished run ends the rerun mark");

    /* one daemon writes, a reader reads: a read-only handle cannot write */
    db *ro = NULL;
    TAP_OK(db_open(path, DB_READONLY, &ro, &e) == 0, "read-only open (%s)", e.msg);
    if (ro) {
        TAP_OK(db_log(ro, NULL, 0, "info", "x", &e) != 0, "read-only handle refuses writes");
        db_close(ro);
    }
    db_close(d);

    TAP_OK(db_open("/nonexistent/dir/x.db", DB_READONLY, &ro, &e) != 0, "read-only open of a missing file fails");
}

/* SQL run on the file at path by SQLite itself, not through db.h. */
static void raw_sql(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_open(path, &h);
    sqlite3_exec(h, sql, NULL, NULL, NULL);
    sqlite3_close(h);
}

static void test_versions(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v.db", dir);
    tlm_err e = {0};
    raw_sql(path, "PRAGMA user_version = 99; CREATE TABLE t(x)");
    db *d = NULL;
    TAP_OK(db_open(path, DB_READWRITE, &d, &e) != 0 && strstr(e.msg, "newer"), "a newer schema is not written (%s)",
           e.msg);
    TAP_OK(db_open(path, DB_READONLY, &d, &e) != 0 && strstr(e.msg, "v.db: schema version 99 is newer than this "
                                                                     "program's") && strstr(e.msg, "no jobs table"),
           "a newer file without TLM's tables is not read as one (%s)", e.msg);
    raw_sql(path, "CREATE TABLE jobs(key TEXT)");
    TAP_OK(db_open(path, DB_READONLY, &d, &e) == 0, "a newer schema with TLM's tables can be read");
    db_close(d);
    d = NULL;

    snprintf(path, sizeof path, "%s/foreign.db", dir);
    raw_sql(path, "CREATE TABLE t(x)");
    TAP_OK(db_open(path, DB_READWRITE, &d, &e) != 0 && strstr(e.msg, "not a TLM"),
           "a database of something else is refused (%s)", e.msg);
    snprintf(path, sizeof path, "%s/old.db", dir);
    raw_sql(path, "PRAGMA user_version = 1; CREATE TABLE t(x)");
    TAP_OK(db_open(path, DB_READONLY, &d, &e) != 0 && strstr(e.msg, "older"),
           "read-only refuses an older schema, asking for a migration (%s)", e.msg);
}

/* A file that is no SQLite database is named as such, by either mode. */
static void test_not_sqlite(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("my notes, not a database\n", f);
        fclose(f);
    }
    tlm_err e = {0};
    db *d = NULL;
    TAP_OK(db_open(path, DB_READWRITE, &d, &e) != 0 && strstr(e.msg, "notes.txt: not an SQLite database") &&
               e.code == TLM_ECONFIG,
           "a text file as a read-write database: not an SQLite database (%s)", e.msg);
    TAP_OK(db_open(path, DB_READONLY, &d, &e) != 0 && strstr(e.msg, "notes.txt: not an SQLite database"),
           "...and as a read-only one (%s)", e.msg);
}

/* The page of a table's root b-tree made garbage: SQLite opens the file
 * and reads its header happily. */
static void damage_table(const char *path, const char *table)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    int root = 0, size = 0;
    sqlite3_open(path, &h);
    if (sqlite3_prepare_v2(h, "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master "
                              "WHERE name = ?1", -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
        if (sqlite3_step(s) == SQLITE_ROW) {
            root = sqlite3_column_int(s, 0);
            size = sqlite3_column_int(s, 1);
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(h);
    FILE *f = fopen(path, "r+b");
    if (!f || root < 2)
        return;
    static const unsigned char junk[12] = {0x0d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    fseek(f, (long)(root - 1) * size, SEEK_SET);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
}

/* tlmd backup (SQLite's online backup) and the damaged-file check every
 * read-write open runs (quick_check). */
static void test_backup_and_damage(void)
{
    char path[512], out[512], bad[512], bad_out[512];
    snprintf(path, sizeof path, "%s/bk-src.db", dir);
    snprintf(out, sizeof out, "%s/bk-out.db", dir);
    tlm_err e = {0};
    db *d = NULL;
    TAP_OK(db_open(path, DB_READWRITE, &d, &e) == 0, "a database to back up (%s)", e.msg);
    if (!d)
        return;
    db_sweep_row sw = {.name = "bk", .file = "bk.yaml", .content_hash = "h", .source = "x"};
    int ok = db_sweep_put(d, &sw, NULL, &e) == 0;
    for (int i = 0; ok && i < 50; i++)
        ok = put_job(d, "bk", i, &e) == 0;
    /* the writer holds a transaction with more rows, not yet committed:
     * the backup is the committed snapshot, and does not wait for it */
    ok = ok && db_begin(d, &e) == 0 && put_job(d, "bk", 50, &e) == 0;
    TAP_OK(ok, "50 jobs committed, a 51st in an open transaction (%s)", e.msg);
    TAP_OK(db_backup(path, out, &e) == 0, "db_backup copies it while the writer's transaction is open (%s)", e.msg);
    db_commit(d, &e);
    db_close(d);
    db *b = NULL;
    TAP_OK(db_open(out, DB_READONLY, &b, &e) == 0 && q_int(b, "SELECT count(*) FROM jobs") == 50,
           "the backup opens and holds the 50 committed jobs (%s)", e.msg);
    db_close(b);
    char side[600];
    snprintf(side, sizeof side, "%s-wal", out);
    struct stat st;
    TAP_OK(stat(side, &st) != 0, "the backup is one file (no -wal beside it)");
    TAP_OK(db_backup(path, out, &e) != 0 && strstr(e.msg, "exists; a backup never replaces a file"),
           "a second backup to the same name is refused (%s)", e.msg);

    /* a damaged table: refused for writing, named, with what to do */
    snprintf(bad, sizeof bad, "%s/damaged.db", dir);
    snprintf(bad_out, sizeof bad_out, "%s/damaged-copy.db", dir);
    d = NULL;
    TAP_OK(db_open(bad, DB_READWRITE, &d, &e) == 0 && db_sweep_put(d, &sw, NULL, &e) == 0 &&
               put_job(d, "bk", 1, &e) == 0,
           "a database with a job (%s)", e.msg);
    db_close(d);
    damage_table(bad, "jobs");
    d = NULL;
    TAP_OK(db_open(bad, DB_READWRITE, &d, &e) != 0 && e.code == TLM_EIO &&
               strstr(e.msg, "damaged.db: the database is damaged (SQLite's quick_check: ") &&
               strstr(e.msg, ".recover") && strstr(e.msg, "backup"),
           "a read-write open refuses the damaged file, saying how to recover (%s)", e.msg);
    db_close(d);
    TAP_OK(db_backup(bad, bad_out, &e) != 0 && strstr(e.msg, "damaged") && stat(bad_out, &st) != 0,
           "no backup of a damaged file is written (%s)", e.msg);
}

/* Every database has its own identity (a runs folder records it), kept
 * across opens; messages name the database by the path it was opened with. */
static void test_identity(void)
{
    char a[512], b[512], ida[DB_ID_LEN + 1] = "", idb[DB_ID_LEN + 1] = "", again[DB_ID_LEN + 1] = "";
    snprintf(a, sizeof a, "%s/id-a.db", dir);
    snprintf(b, sizeof b, "%s/id-b.db", dir);
    tlm_err e = {0};
    db *d = NULL;
    int ok = db_open(a, DB_READWRITE, &d, &e) == 0 && db_database_id(d, ida, &e) == 0;
    db_close(d);
    d = NULL;
    ok = ok && db_open(b, DB_READWRITE, &d, &e) == 0 && db_database_id(d, idb, &e) == 0;
    db_close(d);
    d = NULL;
    ok = ok && db_open(a, DB_READONLY, &d, &e) == 0 && db_database_id(d, again, &e) == 0;
    TAP_OK(ok && strlen(ida) == DB_ID_LEN && strspn(ida, "0123456789abcdef") == DB_ID_LEN,
           "a new database has a %d-hex-digit id (%s; %s)", DB_ID_LEN, ida, e.msg);
    TAP_OK(ok && strcmp(ida, idb) != 0, "two new databases have different ids");
    TAP_OK(ok && !strcmp(ida, again), "the id stays the same when the file is opened again");
    TAP_OK(d && db_exec(d, "SELECT * FROM no_such_table", &e) != 0 && !strncmp(e.msg, a, strlen(a)),
           "an SQL failure names the database's path (%s)", e.msg);
    db_close(d);
}

/* The names a CHECK (<column> IN ('a', 'b', ...)) of db/schema.sql allows,
 * as " a b ... " (each name between spaces); "" if the check is missing. */
static void schema_check_names(const char *column, char *out, size_t cap)
{
    char mark[64];
    snprintf(mark, sizeof mark, "CHECK (%s IN (", column);
    static char text[1 << 17];
    src_text("db/schema.sql", text, sizeof text, NULL, 0);
    out[0] = '\0';
    const char *p = strstr(text, mark);
    if (!p)
        return;
    size_t len = 0;
    for (p += strlen(mark); *p && *p != ')' && len + 2 < cap; p++)
        if (*p == '\'') {
            const char *q = strchr(p + 1, '\'');
            if (!q)
                break;
            len += (size_t)snprintf(out + len, cap - len, " %.*s", (int)(q - p - 1), p + 1);
            p = q;
        }
    if (len + 2 < cap)
        snprintf(out + len, cap - len, " ");
}

/* The job states of DB_JOB_STATUS_MAP are those jobs.status allows. */
static void test_job_status_names(void)
{
    char allowed[512], word[64];
    schema_check_names("status", allowed, sizeof allowed);
    int ok = allowed[0] != '\0', n = 0;
    for (int i = 0; i < DB_JOB_STATUS_COUNT; i++) {
        snprintf(word, sizeof word, " %s ", db_job_status_name(i));
        ok &= strstr(allowed, word) != NULL && db_job_status_find(db_job_status_name(i)) == i;
    }
    for (const char *p = allowed; *p; p++) /* names in the check: one space after each */
        n += p[1] == ' ';
    TAP_OK(ok && n == DB_JOB_STATUS_COUNT && db_job_status_find("nope") == -1 && db_job_status_find(NULL) == -1 &&
               !strcmp(db_job_status_name(DB_JOB_STATUS_COUNT), "?"),
           "the %d job states are the ones db/schema.sql allows (%s)", DB_JOB_STATUS_COUNT, allowed);
}

/* docs/tlmd.md names the schema version the code writes */
static void test_docs_version(void)
{
    char path[1024], want[64];
    snprintf(want, sizeof want, "schema version %d", DB_SCHEMA_VERSION);
    static char text[1 << 17];
    size_t n = src_text("docs/tlmd.md", text, sizeof text, path, sizeof path);
    for (char *p = text; *p; p++)
        if (*p == '\n')
            *p = ' ';
    TAP_OK(n > 0 && strstr(text, want), "%s says \"%s\"", path, want);
}

static int count_sweeps(void *ctx, const db_sweep_summary *s)
{
    db_sweep_summary *out = ctx;
    if (!strcmp(s->name, "rec"))
        *out = *s;
    return 0;
}

/* A new database of this test's folder, or NULL (a failed check). */
static db *open_new(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tlm_err e = {0};
    db *d = NULL;
    if (db_open(path, DB_READWRITE, &d, &e)) {
        TAP_OK(0, "open: %s", e.msg);
        return NULL;
    }
    return d;
}

static void test_reconcile(void)
{
    tlm_err e = {0};
    db *d = open_new("r.db");
    if (!d)
        return;
    db_sweep_row sw = {.name = "rec", .file = "rec.yaml", .content_hash = "h1", .source = "x"};
    db_sweep_put(d, &sw, NULL, &e);
    char key[65];
    int64_t added = -1, removed = -1;
    /* version 1 of the sweep: jobs 0..4 */
    db_sweep_jobs_mark(d, "rec", &e);
    for (int i = 0; i < 5; i++) {
        put_job(d, "rec", i, &e);
        key_of(i, key);
        db_sweep_job_link(d, "rec", key, i, &e);
    }
    TAP_OK(db_sweep_jobs_settle(d, "rec", &added, &removed, &e) == 0 && added == 5 && removed == 0,
           "first expansion: 5 added (%lld), 0 removed (%lld)", (long long)added, (long long)removed);
    /* version 2: jobs 2..6 */
    db_sweep_jobs_mark(d, "rec", &e);
    for (int i = 2; i < 7; i++) {
        put_job(d, "rec", i, &e);
        key_of(i, key);
        db_sweep_job_link(d, "rec", key, i - 2, &e);
    }
    TAP_OK(db_sweep_jobs_settle(d, "rec", &added, &removed, &e) == 0 && added == 2 && removed == 2,
           "edited sweep: 2 added (%lld), 2 dropped (%lld)", (long long)added, (long long)removed);
    TAP_OK(q_int(d, "SELECT count(*) FROM sweep_jobs WHERE active = 1") == 5 &&
               q_int(d, "SELECT count(*) FROM sweep_jobs WHERE active = 0") == 2 &&
               q_int(d, "SELECT count(*) FROM jobs") == 7,
           "no row duplicated: 5 active, 2 inactive, 7 jobs");
    /* back to version 1: the dropped jobs come back, nothing is duplicated */
    db_sweep_jobs_mark(d, "rec", &e);
    for (int i = 0; i < 5; i++) {
        key_of(i, key);
        db_sweep_job_link(d, "rec", key, i, &e);
    }
    TAP_OK(db_sweep_jobs_settle(d, "rec", &added, &removed, &e) == 0 && added == 2 && removed == 2 &&
               q_int(d, "SELECT count(*) FROM sweep_jobs") == 7,
           "reverted sweep: 2 re-activated, 2 dropped, 7 rows");
    db_sweep_summary sum = {0};
    TAP_OK(db_sweep_summaries(d, count_sweeps, &sum, &e) == 0 && sum.jobs == 5 && sum.inactive == 2 &&
               sum.pending == 5,
           "summary counts active jobs by status (%lld jobs, %lld inactive)", (long long)sum.jobs,
           (long long)sum.inactive);
    db_close(d);
}

static void test_results_at_scale(void)
{
    tlm_err e = {0};
    db *d = open_new("big.db");
    if (!d)
        return;
    enum { JOBS = 10000, STEPS = 5 };
    double t0 = tlm_clock_mono();
    db_begin(d, &e);
    db_sweep_row sw = {.name = "big", .file = "big.yaml", .content_hash = "h", .source = "x"};
    db_sweep_put(d, &sw, NULL, &e);
    int bad = 0;
    for (int i = 0; i < JOBS; i++) {
        char key[65];
        key_of(i, key);
        bad |= put_job(d, "big", i, &e);
        for (int s = 1; s <= STEPS; s++) {
            db_step_row st = {.job = key, .step = s, .tokens = s * 50, .loss = 5.0 / s, .lr = 1e-3, .grad_norm = 1,
                              .tokens_per_s = 1e5, .step_ms = 1};
            bad |= db_step_put(d, &st, &e);
        }
        static const char *const tasks[][3] = {{"val", "val", "loss"},          {"val", "val", "ppl"},
                                               {"lambada", "lambada_openai", "acc"}, {"commonsense", "piqa", "acc"},
                                               {"commonsense", "hellaswag", "acc_norm"}};
        for (int s = 1; s <= 4; s++)
            for (int t = 0; t < 5; t++) {
                db_eval_row ev = {.job = key, .step = s * 5, .tokens = s * 250, .suite = tasks[t][0],
                                  .task = tasks[t][1], .metric = tasks[t][2], .value = i + s, .n = 10,
                                  .stderr_ = NAN};
                bad |= db_eval_put(d, &ev, &e);
            }
    }
    db_commit(d, &e);
    double t_ins = tlm_clock_mono() - t0;
    TAP_OK(!bad, "10,000 jobs with steps and evals inserted (%.2f s, %.1f us per row)", t_ins,
           t_ins / (JOBS * (STEPS + 21.0)) * 1e6);
    /* every lookup of the view must be an index search */
    sqlite3_stmt *s;
    int scans = 0;
    char plan[4096] = "";
    sqlite3_prepare_v2(db_handle(d), "EXPLAIN QUERY PLAN SELECT * FROM results", -1, &s, NULL);
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(s, 3);
        if (strncmp(detail, "SCAN", 4) == 0 && !strstr(detail, "SCAN j"))
            scans++;
        size_t len = strlen(plan);
        snprintf(plan + len, sizeof plan - len, "%s; ", detail);
    }
    sqlite3_finalize(s);
    TAP_OK(scans == 0, "results reads steps and evals by index only");
    if (scans)
        TAP_DIAG("plan: %s", plan);
    t0 = tlm_clock_mono();
    int rows = 0, right = 1;
    sqlite3_prepare_v2(db_handle(d), "SELECT key, val_ppl, piqa_acc, train_loss FROM results ORDER BY seed", -1, &s,
                       NULL);
    while (sqlite3_step(s) == SQLITE_ROW) {
        right &= sqlite3_column_double(s, 1) == rows + 4 && sqlite3_column_double(s, 2) == rows + 4 &&
                 sqlite3_column_double(s, 3) == 5.0 / STEPS;
        rows++;
    }
    sqlite3_finalize(s);
    double t_q = tlm_clock_mono() - t0;
    TAP_OK(rows == JOBS && right, "results: one row per job, latest eval and loss (%d rows)", rows);
    TAP_DIAG("SELECT * FROM results over 10,000 jobs in %.3f s (its speed: bench/bench_report_gen)", t_q);
    db_close(d);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/tlm-test-db-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_open_and_values();
    test_versions();
    test_not_sqlite();
    test_backup_and_damage();
    test_identity();
    test_docs_version();
    test_job_status_names();
    test_reconcile();
    test_results_at_scale();
    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    return tap_done();
}
