/* db.c: opening a results database (WAL, busy timeout, foreign keys), the schema
 * version check and migration, transactions and the statement cache; the
 * names of the job states.
 * Must not: run any statement before busy_timeout is set (a reader that
 * opens while the daemon commits would see "database is locked"). */
#include "db/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"

int db__fail(db *d, tlm_err *e, const char *what)
{
    return tlm_errf(e, TLM_EIO, "%s: %s: %s", d && d->path ? d->path : "results database", what,
                    d && d->h ? sqlite3_errmsg(d->h) : "no connection");
}

void db__bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

void db__bind_number(sqlite3_stmt *s, int value_i, int nonfinite_i, double v)
{
    if (isnan(v)) {
        sqlite3_bind_null(s, value_i);
        if (nonfinite_i > 0)
            sqlite3_bind_text(s, nonfinite_i, "nan", 3, SQLITE_STATIC);
        return;
    }
    sqlite3_bind_double(s, value_i, v);
    if (nonfinite_i <= 0)
        return;
    if (isinf(v))
        sqlite3_bind_text(s, nonfinite_i, v > 0 ? "inf" : "-inf", -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, nonfinite_i);
}

double db_column_number(sqlite3_stmt *s, int value_col, int nonfinite_col)
{
    if (nonfinite_col >= 0 && sqlite3_column_type(s, nonfinite_col) == SQLITE_TEXT) {
        const char *nf = (const char *)sqlite3_column_text(s, nonfinite_col);
        if (!strcmp(nf, "inf"))
            return INFINITY;
        if (!strcmp(nf, "-inf"))
            return -INFINITY;
        return NAN;
    }
    if (sqlite3_column_type(s, value_col) == SQLITE_NULL)
        return NAN;
    return sqlite3_column_double(s, value_col);
}

int db_exec(db *d, const char *sql, tlm_err *e)
{
    char *msg = NULL;
    if (sqlite3_exec(d->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = tlm_errf(e, TLM_EIO, "%s: %s", d->path, msg ? msg : sqlite3_errmsg(d->h));
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

/* One integer from a PRAGMA or a query; -1 on failure. */
static int64_t query_int(db *d, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* The journal mode actually in force (a PRAGMA that asks for WAL answers
 * with the mode it got: on some file systems that is still "delete"). */
static int set_wal(db *d, tlm_err *e)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->h, "PRAGMA journal_mode=WAL", -1, &s, NULL) != SQLITE_OK)
        return db__fail(d, e, "PRAGMA journal_mode");
    int rc = sqlite3_step(s);
    char mode[16] = "";
    if (rc == SQLITE_ROW)
        snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return db__fail(d, e, "switching to WAL");
    if (strcasecmp(mode, "wal") != 0)
        return tlm_errf(e, TLM_EIO,
                        "%s: the journal mode is '%s', not WAL (is the file on a network file system?); "
                        "readers would block the daemon",
                        d->path, mode);
    return 0;
}

/* SQLite's quick_check (every page, every b-tree, every record; not the
 * indexes' contents, which integrity_check would compare at many times the
 * cost) on h: 0 when it answers "ok"; 1 with what it found in `found`
 * (one line); -1 when it could not run (`found`: SQLite's message). */
int db__quick_check(sqlite3 *h, char *found, size_t cap)
{
    sqlite3_stmt *s;
    size_t at = 0;
    found[0] = '\0';
    int rc = sqlite3_prepare_v2(h, "PRAGMA quick_check(3)", -1, &s, NULL);
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            const char *line = (const char *)sqlite3_column_text(s, 0);
            if (line && !strncmp(line, "*** in database", 15)) /* "*** in database main ***\nPage 15: ..." */
                line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "";
            if (!line || !*line || !strcmp(line, "ok"))
                continue;
            if (at < cap)
                at += (size_t)snprintf(found + at, cap - at, "%s%s", at ? "; " : "", line);
        }
        sqlite3_finalize(s);
    }
    for (char *p = found; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (at)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    snprintf(found, cap, "%s", sqlite3_errmsg(h));
    /* a file SQLite finds malformed as it reads it is damaged too */
    return (sqlite3_errcode(h) & 0xff) == SQLITE_CORRUPT ? 1 : -1;
}

/* A writer never adds rows to a damaged file: the damage would spread, and
 * the study's numbers with it. */
int db_quick_check(db *d, tlm_err *e)
{
    char found[400];
    int rc = db__quick_check(d->h, found, sizeof found);
    if (rc == 0)
        return 0;
    if (rc < 0)
        return tlm_errf(e, TLM_EIO, "%s: cannot check the database: %s", d->path, found);
    return tlm_errf(e, TLM_EIO,
                    "%s: the database is damaged (SQLite's quick_check: %s); nothing was written to it. Restore a "
                    "backup (tlmd backup makes one), or recover what it holds: sqlite3 %s .recover | sqlite3 "
                    "recovered.db, then run tlmd with --db recovered.db (jobs whose rows were lost train again)",
                    d->path, found, d->path);
}

/* Brings a read-write database to DB_SCHEMA_VERSION (db_open does it). */
static int db_migrate(db *d, tlm_err *e)
{
    if (d->mode != DB_READWRITE)
        return tlm_errf(e, TLM_EINTERNAL, "%s: migrate needs a read-write connection", d->path);
    if (db_begin(d, e))
        return TLM_EIO;
    /* read inside the write transaction: no other process can migrate meanwhile */
    int v = (int)query_int(d, "PRAGMA user_version");
    int rc = 0;
    if (v < 0) {
        rc = db__fail(d, e, "reading user_version");
    } else if (v > DB_SCHEMA_VERSION) {
        rc = tlm_errf(e, TLM_ECONFIG,
                      "%s: schema version %d is newer than this program's (%d); use a newer tlm", d->path, v,
                      DB_SCHEMA_VERSION);
    } else if (v == 0) {
        if (query_int(d, "SELECT count(*) FROM sqlite_master") != 0)
            rc = tlm_errf(e, TLM_ECONFIG,
                          "%s: the file holds tables but no TLM schema version; not a TLM results database",
                          d->path);
        else
            rc = db_exec(d, db_schema_sql, e);
    } else if (v < DB_SCHEMA_VERSION) {
        rc = db__migrate_from(d, v, e);
    }
    if (!rc && v != DB_SCHEMA_VERSION) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
        rc = db_exec(d, sql, e);
    }
    if (rc) {
        db_rollback(d);
        return rc;
    }
    return db_commit(d, e);
}

/* The folder of path ("." for a bare name), in out. */
static void parent_dir(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == out)
        slash[1] = '\0';
    else
        *slash = '\0';
}

/* 1 when path begins with SQLite's header ("SQLite format 3"), 0 when it
 * does not, -1 when it cannot be read (errno set). */
static int has_sqlite_header(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, head, sizeof head);
    int saved = errno;
    close(fd);
    errno = saved;
    if (n < 0)
        return -1;
    return n == (ssize_t)sizeof head && !memcmp(head, magic, sizeof magic);
}

/* A writer of a WAL database makes its -wal and -shm files beside it: in a
 * folder it cannot write, SQLite says "unable to open database file" or
 * "attempt to write a readonly database", which names neither the folder
 * nor the reason.  Both files there and writable: SQLite needs nothing more. */
static int check_folder_writable(const char *path, tlm_err *e)
{
    char dir[TLM_PATH_CAP], side[TLM_PATH_CAP + 8];
    parent_dir(path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) == 0)
        return 0;
    int saved = errno;
    int sides_ok = 1;
    static const char *const ext[] = {"-wal", "-shm"};
    for (int i = 0; i < 2 && sides_ok; i++) {
        snprintf(side, sizeof side, "%s%s", path, ext[i]);
        sides_ok = access(side, R_OK | W_OK) == 0;
    }
    if (sides_ok)
        return 0;
    return tlm_errf(e, TLM_EIO,
                    "%s: its folder %s is not writable (%s): SQLite keeps the database's -wal and -shm files beside "
                    "it, so tlmd cannot write there; make the folder writable, or copy the database into a folder "
                    "you can write (tlmd backup --db %s --out DIR/results.db) and use that",
                    path, dir, strerror(saved), path);
}

/* What SQLite would otherwise meet: a FIFO it blocks on for ever, a device
 * it replaces (as root, /dev/null), a file it cannot read, a folder that
 * is missing or that it cannot write, a file that is not a database at
 * all, each of which it reports as "unable to open database file" or
 * "file is not a database" at best.
 * 0 when path is a regular SQLite file the mode may use (or empty), or
 * absent (for writing: in a folder that exists and is writable). */
int db__check_path(const char *path, int mode, tlm_err *e)
{
    struct stat st;
    char dir[TLM_PATH_CAP];
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return tlm_errf(e, TLM_ECONFIG, "%s: is a directory (expected an SQLite database file)", path);
        if (!S_ISREG(st.st_mode)) {
            tlm_err why = {0};
            tlm_stat_input(path, TLM_ECONFIG, &st, &why); /* "PATH: is not a regular file (a FIFO)" */
            return tlm_errf(e, TLM_ECONFIG, "%s (expected an SQLite database file)", why.msg);
        }
        if (access(path, R_OK) != 0)
            return tlm_errf(e, TLM_EIO, "%s: cannot read it: %s", path, strerror(errno));
        if (st.st_size > 0 && has_sqlite_header(path) == 0)
            return tlm_errf(e, TLM_ECONFIG,
                            "%s: not an SQLite database (the file does not begin with SQLite's header); give --db "
                            "the results database tlmd made, or a new file name",
                            path);
        if (mode != DB_READWRITE)
            return 0;
        if (access(path, W_OK) != 0)
            return tlm_errf(e, TLM_EIO,
                            "%s: not writable by this user (%s); tlmd writes its results into it (tlm-report and "
                            "tlmd status only read it)",
                            path, strerror(errno));
        return check_folder_writable(path, e);
    }
    if (errno != ENOENT)
        return tlm_errf(e, TLM_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (mode != DB_READWRITE)
        return tlm_errf(e, TLM_ECONFIG, "%s: does not exist", path);
    parent_dir(path, dir, sizeof dir);
    if (stat(dir, &st) != 0)
        return tlm_errf(e, TLM_EIO, "%s: cannot create: its folder %s: %s", path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tlm_errf(e, TLM_EIO, "%s: cannot create: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tlm_errf(e, TLM_EIO, "%s: cannot create: its folder %s is not writable by this user (%s)", path, dir,
                        strerror(errno));
    return 0;
}

/* A new database is built beside its final name (WAL mode, schema,
 * version) and renamed into place, so that a reader never meets it half
 * made: before the rename there is no file, after it a complete one. */
int db_create(const char *path, int *created, tlm_err *e)
{
    struct stat st;
    if (created)
        *created = 0;
    int rc = db__check_path(path, DB_READWRITE, e);
    if (rc)
        return rc;
    int absent = stat(path, &st) != 0 && errno == ENOENT;
    if (!absent && st.st_size > 0)
        return 0;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.new-%ld", path, (long)getpid()) >= sizeof tmp)
        return tlm_errf(e, TLM_EIO, "%s: path too long", path);
    unlink(tmp);
    sqlite3 *h = NULL;
    char *msg = NULL;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
    rc = sqlite3_open_v2(tmp, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, "BEGIN", NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, db_schema_sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, "COMMIT", NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        int r = tlm_errf(e, TLM_EIO, "%s: cannot create: %s", path, msg ? msg : h ? sqlite3_errmsg(h) : "?");
        sqlite3_free(msg);
        sqlite3_close(h);
        unlink(tmp);
        return r;
    }
    /* the only connection: closing checkpoints everything into the file and removes the WAL */
    sqlite3_close(h);
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    int synced = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    if (!synced || rename(tmp, path) != 0) {
        int r = tlm_errf(e, TLM_EIO, "%s: cannot create: %s", path, strerror(errno));
        unlink(tmp);
        return r;
    }
    tlm_fsync_dir(path);
    if (created)
        *created = absent;
    return 0;
}

int db_open(const char *path, int mode, db **out, tlm_err *e)
{
    *out = NULL;
    db *d = calloc(1, sizeof *d);
    if (!d)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    d->mode = mode;
    if (!(d->path = strdup(path))) {
        free(d);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    int rc = mode == DB_READWRITE ? db_create(path, NULL, e) : db__check_path(path, mode, e);
    if (rc) {
        db_close(d);
        return rc;
    }
    int flags = mode == DB_READWRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    flags |= SQLITE_OPEN_NOMUTEX; /* one thread per connection */
    rc = sqlite3_open_v2(path, &d->h, flags, NULL);
    if (rc != SQLITE_OK) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot open: %s", path, d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        db_close(d);
        return rc;
    }
    /* first, before anything can touch a lock */
    sqlite3_busy_timeout(d->h, DB_BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(d->h, 1);
    /* The last connection to close would take an EXCLUSIVE lock to
     * checkpoint and delete the WAL: a reader opening at that moment sees
     * "database is locked" (the sqlite3 shell has no busy timeout).  The
     * writer checkpoints passively instead (db_close); the WAL file stays. */
    sqlite3_db_config(d->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);

    d->opened_version = (int)query_int(d, "PRAGMA user_version");
    if (d->opened_version < 0) {
        rc = tlm_errf(e, TLM_EIO, "%s: not a database, or unreadable: %s", path, sqlite3_errmsg(d->h));
        goto fail;
    }
    if (mode == DB_READWRITE) {
        if ((rc = db_quick_check(d, e)) || (rc = set_wal(d, e)))
            goto fail;
        /* NORMAL in WAL mode: a crash of the process loses nothing committed;
         * only a power cut can lose the last transactions, never corrupt. */
        if ((rc = db_exec(d, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-8192;"
                             "PRAGMA temp_store=MEMORY",
                          e)))
            goto fail;
        if (query_int(d, "PRAGMA foreign_keys") != 1) {
            rc = tlm_errf(e, TLM_EINTERNAL, "%s: this SQLite cannot enforce foreign keys", path);
            goto fail;
        }
        if ((rc = db_migrate(d, e)))
            goto fail;
    } else {
        if (d->opened_version == 0) {
            rc = tlm_errf(e, TLM_ECONFIG, "%s: not a TLM results database (no schema); tlmd creates it", path);
            goto fail;
        }
        if (d->opened_version < DB_SCHEMA_VERSION) {
            rc = tlm_errf(e, TLM_ECONFIG,
                          "%s: schema version %d is older than this program's (%d); upgrade it with: tlmd migrate "
                          "--db %s (it keeps a backup of the old file)",
                          path, d->opened_version, DB_SCHEMA_VERSION, path);
            goto fail;
        }
        /* a newer TLM database is read as far as its tables allow; one
         * without TLM's tables is not one, whatever its version says */
        if (d->opened_version > DB_SCHEMA_VERSION &&
            query_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'") != 1) {
            rc = tlm_errf(e, TLM_ECONFIG,
                          "%s: schema version %d is newer than this program's (%d), and the file has no jobs "
                          "table: not a TLM results database this program can read",
                          path, d->opened_version, DB_SCHEMA_VERSION);
            goto fail;
        }
        if ((rc = db_exec(d, "PRAGMA query_only=ON", e)))
            goto fail;
    }
    *out = d;
    return 0;
fail:
    db_close(d);
    return rc;
}

void db_close(db *d)
{
    if (!d)
        return;
    if (d->in_tx)
        db_rollback(d);
    for (int i = 0; i < DB_ST_COUNT; i++)
        sqlite3_finalize(d->st[i]);
    /* Everything committed into the main file and the WAL truncated to zero
     * bytes, without the EXCLUSIVE lock of a checkpoint on close: TRUNCATE
     * lets readers go on, and waits (at most a second here) only for one
     * that still holds an older snapshot; then a passive one, which leaves
     * the rest for later.  An empty WAL matters once the daemon is gone:
     * readers that open and close in turns rebuild the WAL index whenever
     * the last one leaves, and over a WAL of many MB that takes long enough
     * for another reader without a busy timeout to see "database is
     * locked" (docs/tlmd.md). */
    if (d->mode == DB_READWRITE && d->h) {
        sqlite3_busy_timeout(d->h, 1000);
        if (sqlite3_wal_checkpoint_v2(d->h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
            sqlite3_wal_checkpoint_v2(d->h, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    sqlite3_close(d->h);
    free(d->path);
    free(d);
}

sqlite3 *db_handle(db *d) { return d->h; }
int db_opened_version(const db *d) { return d->opened_version; }
int db_in_transaction(const db *d) { return d->in_tx; }

int db_begin(db *d, tlm_err *e)
{
    if (d->in_tx)
        return 0;
    if (db_exec(d, "BEGIN IMMEDIATE", e))
        return TLM_EIO;
    d->in_tx = 1;
    return 0;
}

int db_commit(db *d, tlm_err *e)
{
    if (!d->in_tx)
        return 0;
    if (db_exec(d, "COMMIT", e)) {
        /* a failed COMMIT may leave the transaction open; end it */
        db_rollback(d);
        return TLM_EIO;
    }
    d->in_tx = 0;
    return 0;
}

void db_rollback(db *d)
{
    if (!sqlite3_get_autocommit(d->h))
        sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    d->in_tx = 0;
}

int db__run(db *d, sqlite3_stmt *s, tlm_err *e, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        int r = db__fail(d, e, what); /* before the reset: it keeps the message */
        sqlite3_reset(s);
        return r;
    }
    sqlite3_reset(s);
    return 0;
}

static const char *const JOB_STATUS[DB_JOB_STATUS_COUNT] = {
#define DB_XX_(id, name) [DB_JOB_##id] = (name),
    DB_JOB_STATUS_MAP(DB_XX_)
#undef DB_XX_
};

const char *db_job_status_name(int status)
{
    return status >= 0 && status < DB_JOB_STATUS_COUNT ? JOB_STATUS[status] : "?";
}

int db_job_status_find(const char *name)
{
    for (int i = 0; name && i < DB_JOB_STATUS_COUNT; i++)
        if (!strcmp(JOB_STATUS[i], name))
            return i;
    return -1;
}
