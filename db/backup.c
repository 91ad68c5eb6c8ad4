/* backup.c: `tlmd backup` and `tlmd migrate` (db.h).  A backup is
 * SQLite's online backup of one snapshot (a read transaction in WAL mode
 * never holds up the daemon), written beside its final name, checked with
 * quick_check, fsync'd and renamed into place: the file at --out is either
 * absent or a whole, sound database.  An upgrade takes such a backup first
 * and then migrates in the one transaction db_open's migration always uses.
 * Must not: replace an existing file, or write to the source database
 * (the upgrade writes only through db_open, after its backup). */
#include "db/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"

/* The file at out must be new, in a folder that exists. */
static int check_out(const char *out, tlm_err *e)
{
    struct stat st;
    if (lstat(out, &st) == 0)
        return tlm_errf(e, TLM_ECONFIG, "--out %s: %s; a backup never replaces a file: give a new name", out,
                        S_ISDIR(st.st_mode) ? "is a directory" : "exists");
    if (errno != ENOENT)
        return tlm_errf(e, TLM_EIO, "--out %s: %s", out, strerror(errno));
    return 0;
}

/* src's pages into the file tmp, as of one snapshot. */
static int copy_pages(const char *src, const char *tmp, tlm_err *e)
{
    sqlite3 *from = NULL, *to = NULL;
    int rc = sqlite3_open_v2(src, &from, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        sqlite3_busy_timeout(from, DB_BUSY_TIMEOUT_MS);
    if (rc != SQLITE_OK) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot open: %s", src, from ? sqlite3_errmsg(from) : sqlite3_errstr(rc));
        goto done;
    }
    rc = sqlite3_open_v2(tmp, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot create: %s", tmp, to ? sqlite3_errmsg(to) : sqlite3_errstr(rc));
        goto done;
    }
    sqlite3_backup *b = sqlite3_backup_init(to, "main", from, "main");
    if (!b) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot start the backup: %s", src, sqlite3_errmsg(to));
        goto done;
    }
    /* -1: every page in one step, under one read transaction of the
     * source, so the copy is one consistent snapshot; busy or locked (the
     * daemon checkpointing at that instant) is tried again */
    int tries = 0;
    do {
        rc = sqlite3_backup_step(b, -1);
        if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries++ < 200)
            sqlite3_sleep(50);
        else
            break;
    } while (1);
    sqlite3_backup_finish(b);
    char *msg = NULL;
    if (rc != SQLITE_DONE)
        rc = tlm_errf(e, TLM_EIO, "%s: backup failed: %s", src,
                      sqlite3_errcode(to) != SQLITE_OK ? sqlite3_errmsg(to) : sqlite3_errstr(rc));
    /* the copy is one self-contained file: the source's WAL mode, which
     * its pages carry, would give it -wal and -shm files at its first
     * open (tlmd switches it back to WAL when it writes to it) */
    else if (sqlite3_exec(to, "PRAGMA journal_mode=DELETE", NULL, NULL, &msg) != SQLITE_OK)
        rc = tlm_errf(e, TLM_EIO, "%s: backup failed: %s", tmp, msg ? msg : sqlite3_errmsg(to));
    else
        rc = 0;
    sqlite3_free(msg);
done:
    sqlite3_close(to);
    sqlite3_close(from);
    return rc;
}

/* The copy is sound: a damaged database backed up is a damaged backup. */
static int check_copy(const char *src, const char *tmp, tlm_err *e)
{
    sqlite3 *h = NULL;
    char found[400];
    int rc = sqlite3_open_v2(tmp, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        rc = tlm_errf(e, TLM_EIO, "%s: cannot read the copy: %s", tmp, h ? sqlite3_errmsg(h) : "?");
    else if ((rc = db__quick_check(h, found, sizeof found)) < 0)
        rc = tlm_errf(e, TLM_EIO, "%s: cannot check the copy: %s", tmp, found);
    else if (rc > 0)
        rc = tlm_errf(e, TLM_EIO,
                      "%s: the database is damaged (SQLite's quick_check: %s), and so would be its copy: no backup "
                      "written. Recover what it holds instead: sqlite3 %s .recover | sqlite3 recovered.db",
                      src, found, src);
    sqlite3_close(h);
    return rc;
}

int db_backup(const char *src, const char *out, tlm_err *e)
{
    int rc = db__check_path(src, DB_READONLY, e);
    if (rc || (rc = check_out(out, e)))
        return rc;
    char tmp[TLM_PATH_CAP + 32];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%ld", out, (long)getpid()) >= sizeof tmp)
        return tlm_errf(e, TLM_ECONFIG, "--out %s: path too long", out);
    unlink(tmp);
    rc = copy_pages(src, tmp, e);
    if (!rc)
        rc = check_copy(src, tmp, e);
    if (!rc) {
        int fd = open(tmp, O_RDONLY | O_CLOEXEC);
        int synced = fd >= 0 && fsync(fd) == 0;
        if (fd >= 0)
            close(fd);
        /* link, not rename: a file that appeared at out meanwhile stays */
        if (!synced || link(tmp, out) != 0)
            rc = tlm_errf(e, TLM_EIO, "--out %s: cannot write the backup: %s", out, strerror(errno));
    }
    unlink(tmp);
    if (!rc)
        tlm_fsync_dir(out);
    return rc;
}

/* user_version of the file, read without writing anything; -1 when SQLite
 * cannot read it (e filled). */
static int file_version(const char *path, int *has_tables, tlm_err *e)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *s;
    int v = -1;
    *has_tables = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(h, DB_BUSY_TIMEOUT_MS);
        if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW)
                v = sqlite3_column_int(s, 0);
            sqlite3_finalize(s);
        }
        if (v >= 0 && sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW)
                *has_tables = sqlite3_column_int(s, 0) > 0;
            sqlite3_finalize(s);
        }
    }
    if (v < 0)
        tlm_errf(e, TLM_EIO, "%s: not a database, or unreadable: %s", path, h ? sqlite3_errmsg(h) : "?");
    sqlite3_close(h);
    return v;
}

int db_upgrade(const char *path, int *from, char *backup, size_t cap, tlm_err *e)
{
    int has_tables;
    backup[0] = '\0';
    int rc = db__check_path(path, DB_READONLY, e);
    if (rc || (rc = db__check_path(path, DB_READWRITE, e)))
        return rc;
    int v = *from = file_version(path, &has_tables, e);
    if (v < 0)
        return TLM_EIO;
    if (v == 0)
        return tlm_errf(e, TLM_ECONFIG, "%s: %s", path,
                        has_tables ? "the file holds tables but no TLM schema version; not a TLM results database"
                                   : "not a TLM results database (no schema); tlmd creates one");
    if (v > DB_SCHEMA_VERSION)
        return tlm_errf(e, TLM_ECONFIG, "%s: schema version %d is newer than this program's (%d); use a newer tlm",
                        path, v, DB_SCHEMA_VERSION);
    if (v == DB_SCHEMA_VERSION)
        return 0;
    /* PATH.vN.bak, else PATH.vN.bak-2, -3...: an earlier backup stays */
    for (int k = 1; k <= 100; k++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, k == 1 ? ".v%d.bak" : ".v%d.bak-%d", v, k);
        if ((size_t)snprintf(backup, cap, "%s%s", path, suffix) >= cap)
            return tlm_errf(e, TLM_ECONFIG, "%s: path too long for its backup's name", path);
        struct stat st;
        if (lstat(backup, &st) != 0)
            break;
        if (k == 100)
            return tlm_errf(e, TLM_ECONFIG, "%s: 100 backups of version %d are there already; remove some", path, v);
    }
    if ((rc = db_backup(path, backup, e))) {
        backup[0] = '\0';
        return tlm_err_prefix(e, "no migration (the backup comes first)");
    }
    db *d = NULL;
    rc = db_open(path, DB_READWRITE, &d, e); /* quick_check, then every step in one transaction */
    db_close(d);
    return rc;
}
