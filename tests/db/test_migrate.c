/* test_migrate.c: a version-1 results.db (db/history/v1.sql, with data)
 * opened by the current code is migrated in place: its step metrics move
 * into `steps` (NaN kept), and its tables, columns, indexes and views end
 * up exactly as db/schema.sql creates them on a new file.  Versions 2 to 6
 * migrate too (the LAMBADA columns of the results view; the database id;
 * the executor; jobs.rerun; each job's latest numbers, which triggers then
 * keep equal to the results view's); `tlmd migrate` (db_upgrade) keeps a backup
 * first; a version stamped by hand is said as such, and nothing changes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "db/db.h"
#include "tests/lib/db_util.h"
#include "tests/lib/tap.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* A canonical text of the schema: every object's name and type, every
 * column (name, type, not null, default, pk), every index's columns. */
static void describe(sqlite3 *h, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    sqlite3_stmt *objs;
    sqlite3_prepare_v2(h, "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name", -1,
                       &objs, NULL);
    while (sqlite3_step(objs) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(objs, 0);
        const char *name = (const char *)sqlite3_column_text(objs, 1);
        at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "%s %s:", type, name);
        char sql[256];
        if (!strcmp(type, "index"))
            snprintf(sql, sizeof sql, "PRAGMA index_info('%s')", name);
        else
            snprintf(sql, sizeof sql, "PRAGMA table_info('%s')", name);
        sqlite3_stmt *cols;
        sqlite3_prepare_v2(h, sql, -1, &cols, NULL);
        while (sqlite3_step(cols) == SQLITE_ROW) {
            int nc = sqlite3_column_count(cols);
            for (int i = 0; i < nc; i++) {
                const unsigned char *v = sqlite3_column_text(cols, i);
                at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, " %s", v ? (const char *)v : "NULL");
            }
            at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, ";");
        }
        sqlite3_finalize(cols);
        at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "\n");
    }
    sqlite3_finalize(objs);
}

/* dir/old<version>.db (its path in out): db/history/v<version>.sql, then
 * the SQL `fill`; a TAP check named `what` says whether SQLite took both.
 * 1 when it did. */
static int old_db(const char *src, const char *dir, int version, const char *fill, char *out, size_t cap,
                  const char *what)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/db/history/v%d.sql", src, version);
    snprintf(out, cap, "%s/old%d.db", dir, version);
    char *schema = slurp(path), *err = NULL;
    sqlite3 *h;
    sqlite3_open(out, &h);
    int rc = schema ? sqlite3_exec(h, schema, NULL, NULL, &err) : SQLITE_ERROR;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, fill, NULL, NULL, &err);
    sqlite3_close(h);
    free(schema);
    TAP_OK(rc == SQLITE_OK, "%s (%s)", what, err ? err : "ok");
    sqlite3_free(err);
    return rc == SQLITE_OK;
}

/* PRAGMA user_version of the file at path, read by SQLite alone; -1 when it cannot. */
static int user_version(const char *path)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* EXPLAIN QUERY PLAN of sql, its steps joined by "; ", into out. */
static void query_plan(sqlite3 *h, const char *sql, char *out, size_t cap)
{
    char q[1024];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    out[0] = '\0';
    sqlite3_stmt *plan = NULL;
    if (sqlite3_prepare_v2(h, q, -1, &plan, NULL) == SQLITE_OK)
        while (sqlite3_step(plan) == SQLITE_ROW) {
            size_t at = strlen(out);
            snprintf(out + at, cap - at, "%s; ", (const char *)sqlite3_column_text(plan, 3));
        }
    sqlite3_finalize(plan);
}

int main(void)
{
    const char *src = getenv("TLM_SRCDIR") ? getenv("TLM_SRCDIR") : "..";
    char path[1024], dir[256];
    snprintf(path, sizeof path, "%s/db/history/v1.sql", src);
    char *v1 = slurp(path);
    if (!v1) {
        printf("# %s not found\n", path);
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/tlm-test-migrate-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;

    char old[512], fresh[512];
    snprintf(old, sizeof old, "%s/old.db", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.db", dir);
    sqlite3 *h;
    sqlite3_open(old, &h);
    char *err = NULL;
    int rc = sqlite3_exec(h, v1, NULL, NULL, &err);
    TAP_OK(rc == SQLITE_OK, "version-1 schema created (%s)", err ? err : "ok");
    sqlite3_free(err);
    rc = sqlite3_exec(h,
                      "PRAGMA user_version = 1;"
                      "INSERT INTO sweeps VALUES ('s', '', 's.yaml', 'h', 'src', 0, 0);"
                      "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, params,"
                      " flops_per_token, status, created_at, updated_at)"
                      " VALUES ('k', 's', '{}', 'transformer', '1m', 'uniform', 0, 'uniform', 100, 1, 1, 'done', 0, 0);"
                      "INSERT INTO attempts(id, job, n, host, device, started_at) VALUES (1, 'k', 1, 'h', 'cpu:0', 0);"
                      "INSERT INTO metrics VALUES ('k', 1, 'loss', 10, NULL, 'nan', 1);"
                      "INSERT INTO metrics VALUES ('k', 1, 'lr', 10, 0.001, NULL, 1);"
                      "INSERT INTO metrics VALUES ('k', 1, 'grad_norm', 10, 9e999, 'inf', 1);"
                      "INSERT INTO metrics VALUES ('k', 1, 'tokens_per_s', 10, 500, NULL, 1);"
                      "INSERT INTO metrics VALUES ('k', 2, 'loss', 20, 2.5, NULL, 1);"
                      "INSERT INTO metrics VALUES ('k', 2, 'lr', 20, 0.002, NULL, 1);"
                      "INSERT INTO evals VALUES ('k', 2, 20, 'val', 'val', 'ppl', 12.5, NULL, 100, NULL, 1);",
                      NULL, NULL, &err);
    TAP_OK(rc == SQLITE_OK, "version-1 data written (%s)", err ? err : "ok");
    sqlite3_free(err);
    sqlite3_close(h);

    tlm_err e = {0};
    db *d = NULL;
    TAP_OK(db_open(old, DB_READWRITE, &d, &e) == 0, "the current code opens it (%s)", e.msg);
    if (!d)
        return tap_done();
    TAP_OK(db_opened_version(d) == 1, "it was version 1");
    sqlite3 *m = db_handle(d);
    TAP_OK(q_int(d, "PRAGMA user_version") == DB_SCHEMA_VERSION, "now version %d", DB_SCHEMA_VERSION);
    TAP_OK(q_int(d, "SELECT count(*) FROM steps") == 2, "two steps");
    TAP_OK(q_int(d, "SELECT loss IS NULL FROM steps WHERE step = 1") == 1, "NaN loss kept as NaN");
    TAP_OK(q_int(d, "SELECT nonfinite = 'inf' FROM metrics WHERE step = 1 AND name = 'grad_norm'") == 1,
           "inf grad_norm kept");
    TAP_OK(q_int(d, "SELECT tokens FROM steps WHERE step = 2") == 20, "tokens kept");
    TAP_OK(q_int(d, "SELECT val_ppl * 2 FROM results") == 25, "results view over migrated data");
    TAP_OK(q_int(d, "SELECT failures FROM jobs") == 0, "new columns take their defaults");

    db *f = NULL;
    TAP_OK(db_open(fresh, DB_READWRITE, &f, &e) == 0, "a new file (%s)", e.msg);
    static char a[1 << 16], b[1 << 16];
    describe(m, a, sizeof a);
    if (f)
        describe(db_handle(f), b, sizeof b);
    int same = !strcmp(a, b);
    TAP_OK(same, "migrated schema equals schema.sql's");
    if (!same) {
        /* the first differing line */
        char *pa = a, *pb = b;
        while (*pa && *pb) {
            char *ea = strchr(pa, '\n'), *eb = strchr(pb, '\n');
            if (!ea || !eb)
                break;
            if (ea - pa != eb - pb || strncmp(pa, pb, (size_t)(ea - pa))) {
                printf("# migrated: %.*s\n# new:      %.*s\n", (int)(ea - pa), pa, (int)(eb - pb), pb);
                break;
            }
            pa = ea + 1;
            pb = eb + 1;
        }
    }
    db_close(d);
    db_close(f);

    /* opening again is a no-op */
    d = NULL;
    TAP_OK(db_open(old, DB_READWRITE, &d, &e) == 0 && db_opened_version(d) == DB_SCHEMA_VERSION,
           "a second open finds the current version");
    db_close(d);

    /* version 2 -> 3: the results view reads LAMBADA by the evaluator's names */
    char old2[512];
    old_db(src, dir, 2,
           "PRAGMA user_version = 2;"
           "INSERT INTO sweeps VALUES ('s', '', 's.yaml', 'h', 'src', 0, 0);"
           "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, params,"
           " flops_per_token, status, created_at, updated_at)"
           " VALUES ('k', 's', '{}', 'transformer', '1m', 'uniform', 0, 'uniform', 100, 1, 1, 'done', 0, 0);"
           "INSERT INTO evals VALUES ('k', 2, 20, 'lambada', 'lambada', 'perplexity', 40.5, NULL, 10, NULL, NULL);"
           "INSERT INTO evals VALUES ('k', 2, 20, 'lambada', 'lambada', 'acc', 0.25, NULL, 10, NULL, NULL);",
           old2, sizeof old2, "version-2 database with LAMBADA results");
    d = NULL;
    TAP_OK(db_open(old2, DB_READWRITE, &d, &e) == 0 && db_opened_version(d) == 2, "version 2 opens and migrates (%s)",
           e.msg);
    if (d) {
        TAP_OK(q_int(d, "SELECT lambada_ppl * 2 FROM results") == 81 &&
                   q_int(d, "SELECT lambada_acc * 4 FROM results") == 1,
               "results.lambada_ppl and lambada_acc read the evaluator's rows");
        db_close(d);
    }

    /* version 3 -> 4: the database gets its identity */
    char old3[512];
    old_db(src, dir, 3, "PRAGMA user_version = 3;", old3, sizeof old3, "a version-3 database");
    d = NULL;
    char id[DB_ID_LEN + 1] = "";
    TAP_OK(db_open(old3, DB_READWRITE, &d, &e) == 0 && db_opened_version(d) == 3 && db_database_id(d, id, &e) == 0 &&
               strlen(id) == DB_ID_LEN,
           "version 3 migrates and gets a database id (%s; %s)", id, e.msg);
    db_close(d);

    /* version 4 -> 5: attempts say their executor; the old ones were local,
     * and an open one still closes at recovery (it is not a Slurm job) */
    char old4[512];
    old_db(src, dir, 4,
           "INSERT INTO sweeps VALUES ('s', '', 'f', 'h', 'src', 1, 1);"
           "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, "
           "params, flops_per_token, status, created_at, updated_at) VALUES ('k4', 's', '{}', "
           "'transformer', 'tiny', 'uniform', 0, 'u', 1, 1, 1, 'running', 1, 1);"
           "INSERT INTO attempts(job, n, host, device, started_at) VALUES ('k4', 1, 'h', 'cpu:0', 1);"
           "PRAGMA user_version = 4;",
           old4, sizeof old4, "a version-4 database with an open attempt");
    d = NULL;
    int64_t recovered = -1;
    TAP_OK(db_open(old4, DB_READWRITE, &d, &e) == 0 && db_opened_version(d) == 4 &&
               q_int(d, "SELECT count(*) FROM attempts WHERE executor = 'local' AND events_offset = 0 "
                        "AND slurm_job IS NULL") == 1 &&
               db_jobs_recover_running(d, &recovered, &e) == 0 && recovered == 1,
           "version 4 migrates: its attempt is local, its running job recovers (%lld; %s)", (long long)recovered,
           e.msg);
    db_close(d);

    /* version 5 -> 6: jobs say whether a --rerun reset them (none did) */
    char old5[512];
    old_db(src, dir, 5,
           "INSERT INTO sweeps VALUES ('s', '', 'f', 'h', 'src', 1, 1);"
           "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, "
           "params, flops_per_token, status, created_at, updated_at) VALUES ('k5', 's', '{}', "
           "'transformer', 'tiny', 'uniform', 0, 'u', 1, 1, 1, 'done', 1, 1);"
           "PRAGMA user_version = 5;",
           old5, sizeof old5, "a version-5 database");
    /* the read-only tools name the command that upgrades it */
    d = NULL;
    char want[1200];
    snprintf(want, sizeof want, "older than this program's (%d); upgrade it with: tlmd migrate --db %s",
             DB_SCHEMA_VERSION, old5);
    TAP_OK(db_open(old5, DB_READONLY, &d, &e) != 0 && strstr(e.msg, want),
           "a read-only open of an older file names `tlmd migrate --db FILE` (%s)", e.msg);
    /* `tlmd migrate`: a backup first, then the migration */
    int from = -1;
    char backup[1200];
    TAP_OK(db_upgrade(old5, &from, backup, sizeof backup, &e) == 0 && from == 5, "db_upgrade migrates it (%s)",
           e.msg);
    char want_bak[1200];
    snprintf(want_bak, sizeof want_bak, "%s.v5.bak", old5);
    TAP_OK(!strcmp(backup, want_bak), "its backup is FILE.v5.bak (%s)", backup);
    int bv = user_version(backup);
    TAP_OK(bv == 5, "the backup is the old file, version 5 (%d)", bv);
    d = NULL;
    TAP_OK(db_open(old5, DB_READONLY, &d, &e) == 0 && q_int(d, "SELECT rerun FROM jobs WHERE key = 'k5'") == 0 &&
               q_int(d, "PRAGMA user_version") == DB_SCHEMA_VERSION,
           "the file is at version %d, jobs.rerun 0 (%s)", DB_SCHEMA_VERSION, e.msg);
    db_close(d);
    TAP_OK(db_upgrade(old5, &from, backup, sizeof backup, &e) == 0 && from == DB_SCHEMA_VERSION && !backup[0],
           "a second upgrade has nothing to do, and makes no backup");

    /* version 6 -> 7: each job keeps its latest step and val numbers, filled
     * by the migration from what the file holds, then kept by triggers
     * through every kind of write: they equal the results view's lookups */
    char old6[512];
    old_db(src, dir, 6,
           "INSERT INTO sweeps VALUES ('s', '', 'f', 'h', 'src', 1, 1);"
           "INSERT INTO jobs(key, sweep, config, arch, scale, schedule, seed, label, tokens_total, "
           "params, flops_per_token, status, created_at, updated_at) VALUES "
           "('a', 's', '{}', 'transformer', 'tiny', 'uniform', 0, 'u', 1, 1, 1, 'running', 1, 1), "
           "('b', 's', '{}', 'transformer', 'tiny', 'uniform', 1, 'u', 1, 1, 1, 'pending', 1, 1);"
           "INSERT INTO steps(job, step, tokens, loss, tokens_per_s) VALUES "
           "('a', 1, 10, 5.0, 100), ('a', 3, 30, 3.0, 300), ('a', 2, 20, 4.0, 200);"
           "INSERT INTO evals(job, step, tokens, suite, task, metric, value) VALUES "
           "('a', 2, 20, 'val', 'val', 'loss', 4.5), ('a', 2, 20, 'val', 'val', 'ppl', 90), "
           "('a', 1, 10, 'val', 'val', 'ppl', 150), ('a', 3, 30, 'wikitext', 'wikitext', 'word_perplexity', 7);"
           "PRAGMA user_version = 6;",
           old6, sizeof old6, "a version-6 database with steps and evals");
    /* every job's kept numbers against the view's (and the last step's tokens/s) */
    static const char MISMATCH[] =
        "SELECT count(*) FROM jobs j JOIN results r ON r.key = j.key WHERE j.val_loss IS NOT r.val_loss "
        "OR j.val_ppl IS NOT r.val_ppl "
        "OR (CASE WHEN j.final_loss IS NOT NULL THEN j.final_loss ELSE j.last_loss END) IS NOT r.train_loss "
        "OR j.last_step IS NOT (SELECT max(step) FROM steps s WHERE s.job = j.key) "
        "OR j.last_tokens_per_s IS NOT (SELECT tokens_per_s FROM steps s WHERE s.job = j.key ORDER BY step DESC LIMIT 1)";
    d = NULL;
    e = (tlm_err){0};
    TAP_OK(db_open(old6, DB_READWRITE, &d, &e) == 0 && db_opened_version(d) == 6, "version 6 opens and migrates (%s)",
           e.msg);
    if (!d)
        return tap_done();
    TAP_OK(q_int(d, "SELECT last_step = 3 AND last_loss = 3.0 AND last_tokens_per_s = 300 AND val_loss = 4.5 AND "
                    "val_ppl = 90 FROM jobs WHERE key = 'a'") == 1 &&
               q_int(d, "SELECT last_step IS NULL AND last_loss IS NULL AND val_ppl IS NULL FROM jobs WHERE key = 'b'") ==
                   1,
           "the migration fills each job's latest numbers (the largest step's, not the last written)");
    TAP_OK(q_int(d, MISMATCH) == 0, "...equal to the results view's");
    TAP_OK(q_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_latest_%'") == 6 &&
               q_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                        "('jobs_val_ppl', 'jobs_val_loss', 'jobs_status_val_ppl')") == 3,
           "its triggers and indexes are there");
    /* tlmd's writes: a new step, a replayed one (upsert), an older one, evals */
    db_step_row st = {.job = "a", .step = 4, .tokens = 40, .loss = 2.5, .lr = 0.1, .grad_norm = 1, .tokens_per_s = 400,
                      .step_ms = 1};
    int ok = db_step_put(d, &st, &e) == 0;
    ok &= q_int(d, "SELECT last_step = 4 AND last_loss = 2.5 AND last_tokens_per_s = 400 FROM jobs WHERE key = 'a'") ==
          1;
    st.loss = 2.25; /* the same step again (a resumed attempt replays it) */
    ok &= db_step_put(d, &st, &e) == 0;
    ok &= q_int(d, "SELECT last_loss = 2.25 FROM jobs WHERE key = 'a'") == 1;
    st.step = 1; /* an older step rewritten: the latest stays */
    st.loss = 9;
    ok &= db_step_put(d, &st, &e) == 0;
    ok &= q_int(d, "SELECT last_step = 4 AND last_loss = 2.25 FROM jobs WHERE key = 'a'") == 1;
    st = (db_step_row){.job = "b", .step = 7, .tokens = 7, .loss = NAN, .tokens_per_s = 70};
    ok &= db_step_put(d, &st, &e) == 0; /* NaN: NULL, as in the view */
    ok &= q_int(d, "SELECT last_step = 7 AND last_loss IS NULL FROM jobs WHERE key = 'b'") == 1;
    TAP_OK(ok && q_int(d, MISMATCH) == 0, "steps written, replayed, rewritten and NaN keep them (%s)", e.msg);
    db_eval_row ev = {.job = "a", .step = 4, .tokens = 40, .suite = "val", .task = "val", .metric = "ppl", .value = 12,
                      .n = -1, .stderr_ = NAN};
    ok = db_eval_put(d, &ev, &e) == 0 && q_int(d, "SELECT val_ppl = 12 AND val_loss = 4.5 FROM jobs WHERE key = 'a'") == 1;
    ev.step = 1; /* an older evaluation: not the latest */
    ev.value = 1000;
    ok &= db_eval_put(d, &ev, &e) == 0 && q_int(d, "SELECT val_ppl = 12 FROM jobs WHERE key = 'a'") == 1;
    ev.step = 4; /* the latest rewritten as NaN */
    ev.value = NAN;
    ok &= db_eval_put(d, &ev, &e) == 0 && q_int(d, "SELECT val_ppl IS NULL FROM jobs WHERE key = 'a'") == 1;
    ev = (db_eval_row){.job = "a", .step = 9, .tokens = 90, .suite = "wikitext", .task = "wikitext",
                       .metric = "word_perplexity", .value = 5, .n = -1, .stderr_ = NAN};
    ok &= db_eval_put(d, &ev, &e) == 0;
    TAP_OK(ok && q_int(d, MISMATCH) == 0, "evaluations written, older, rewritten as NaN, of another suite keep them (%s)",
           e.msg);
    /* by hand: a step's number changed, a step moved, rows deleted */
    ok = db_exec(d, "UPDATE steps SET tokens_per_s = 444 WHERE job = 'a' AND step = 4", &e) == 0 &&
         q_int(d, "SELECT last_tokens_per_s = 444 FROM jobs WHERE key = 'a'") == 1;
    ok &= db_exec(d, "UPDATE steps SET step = 8 WHERE job = 'a' AND step = 2", &e) == 0 &&
          q_int(d, "SELECT last_step = 8 AND last_loss = 4.0 FROM jobs WHERE key = 'a'") == 1;
    ok &= db_exec(d, "DELETE FROM steps WHERE job = 'a' AND step = 8", &e) == 0 &&
          q_int(d, "SELECT last_step = 4 AND last_loss = 2.25 FROM jobs WHERE key = 'a'") == 1;
    ok &= db_exec(d, "DELETE FROM steps WHERE job = 'a' AND step = 1", &e) == 0 &&
          q_int(d, "SELECT last_step = 4 FROM jobs WHERE key = 'a'") == 1;
    ok &= db_exec(d, "DELETE FROM evals WHERE job = 'a' AND step = 4 AND metric = 'ppl'", &e) == 0 &&
          q_int(d, "SELECT val_ppl = 90 FROM jobs WHERE key = 'a'") == 1;
    ok &= db_exec(d, "UPDATE evals SET job = 'b' WHERE job = 'a' AND step = 2 AND metric = 'loss'", &e) == 0 &&
          q_int(d, "SELECT (SELECT val_loss IS NULL FROM jobs WHERE key = 'a') AND "
                   "(SELECT val_loss = 4.5 FROM jobs WHERE key = 'b')") == 1;
    TAP_OK(ok && q_int(d, MISMATCH) == 0, "updates and deletes by hand keep them (%s)", e.msg);
    /* `tlmd --rerun`: the job's rows go, and its numbers with them */
    ok = db_job_reset(d, "a", &e) == 0 &&
         q_int(d, "SELECT last_step IS NULL AND last_loss IS NULL AND last_tokens_per_s IS NULL AND val_loss IS NULL "
                  "AND val_ppl IS NULL FROM jobs WHERE key = 'a'") == 1;
    TAP_OK(ok && q_int(d, MISMATCH) == 0, "a reset clears them (%s)", e.msg);
    char how[512];
    query_plan(db_handle(d), "SELECT j.rowid FROM jobs j ORDER BY (j.val_ppl) DESC NULLS LAST, j.rowid", how,
               sizeof how);
    TAP_OK(strstr(how, "COVERING INDEX jobs_val_ppl") != NULL,
           "the jobs page's sort by val ppl walks the index, no search per job (%s)", how);
    query_plan(db_handle(d),
               "SELECT j.rowid FROM jobs j WHERE 1 AND j.status = ?2 ORDER BY (j.val_ppl) NULLS LAST, j.rowid", how,
               sizeof how);
    TAP_OK(strstr(how, "COVERING INDEX jobs_status_val_ppl") != NULL && !strstr(how, "TEMP B-TREE"),
           "...and its done jobs by val ppl (the parallel view) too, without a sort (%s)", how);
    db_close(d);

    /* a version stamped by hand: the step fails on columns that are there
     * already; said as such, and nothing changes */
    char stamped[512];
    snprintf(stamped, sizeof stamped, "%s/stamped.db", dir);
    db *sd = NULL;
    TAP_OK(db_open(stamped, DB_READWRITE, &sd, &e) == 0 && db_exec(sd, "PRAGMA user_version = 4", &e) == 0,
           "a current database stamped version 4 (%s)", e.msg);
    db_close(sd);
    sd = NULL;
    TAP_OK(db_open(stamped, DB_READWRITE, &sd, &e) != 0 && e.code == TLM_ECONFIG &&
               strstr(e.msg, "its tables are not those of schema version 4, the version the file says it has") &&
               strstr(e.msg, "nothing was changed") && strstr(e.msg, "duplicate column name"),
           "opening it says that its tables are not version 4's, not only SQLite's duplicate column (%s)", e.msg);
    int sv = user_version(stamped);
    TAP_OK(sv == 4, "...and leaves it as it was (version %d)", sv);

    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    free(v1);
    return tap_done();
}
