/* test_migrate.c: a version-1 results.db (db/history/v1.sql, with data)
 * opened by the current code is migrated in place: its step metrics move
 * into `steps` (NaN kept), and its tables, columns, indexes and views end
 * up exactly as db/schema.sql creates them on a new file.  Versions 2 to 5
 * migrate too (the LAMBADA columns of the results view; the database id;
 * the executor; jobs.rerun); `tlmd migrate` (db_upgrade) keeps a backup
 * first; a version stamped by hand is said as such, and nothing changes. */
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
