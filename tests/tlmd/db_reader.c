/* db_reader.c: helper of tests/tlmd/test_reader.sh (not a test on its
 * own): reads results.db in a loop while tlmd writes it, as tlm-report or
 * a person with sqlite3 would, and counts every failure.
 *
 *   test_db_reader DB STOPFILE api|plain
 *
 * api: through db_open(DB_READONLY) (busy_timeout set); plain: a bare
 * sqlite3_open_v2 without any busy timeout, like the sqlite3 shell.  Each
 * round opens the file, holds one read transaction over several queries
 * (with a pause inside, so the daemon commits meanwhile), and closes.
 * Runs until STOPFILE exists; prints each failure ("# error RC at
 * UNIXTIME: ...", the first 200) and then rounds, errors and the slowest
 * query; exits 1 if it never completed a round.  The caller judges the
 * failures by their time (tests/tlmd/test_reader.sh: only those while the
 * daemon ran count). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "db/db.h"

static int errors, busy;
static double slowest;

static void report(int rc, const char *what, const char *sql)
{
    errors++;
    busy += (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
    if (errors <= 200) {
        printf("# error %d at %.3f: %s (%s)\n", rc, tlm_clock_wall(), what, sql);
    }
}

static int run(sqlite3 *h, const char *sql)
{
    double t = tlm_clock_mono();
    char *msg = NULL;
    int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
    double dt = tlm_clock_mono() - t;
    if (dt > slowest)
        slowest = dt;
    if (rc != SQLITE_OK)
        report(rc, msg ? msg : sqlite3_errstr(rc), sql);
    sqlite3_free(msg);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_db_reader DB STOPFILE api|plain\n");
        return 2;
    }
    const char *path = argv[1], *stop = argv[2];
    int api = !strcmp(argv[3], "api");
    /* the daemon creates the file: wait for its schema */
    for (;;) {
        db *d = NULL;
        tlm_err e;
        if (access(path, F_OK) == 0 && db_open(path, DB_READONLY, &d, &e) == 0) {
            db_close(d);
            break;
        }
        if (access(stop, F_OK) == 0) {
            printf("# the database never appeared\n");
            return 1;
        }
        usleep(10000);
    }
    int rounds = 0;
    while (access(stop, F_OK) != 0) {
        db *d = NULL;
        sqlite3 *h = NULL;
        tlm_err e;
        if (api) {
            if (db_open(path, DB_READONLY, &d, &e)) {
                report(SQLITE_CANTOPEN, e.msg, "open");
                continue;
            }
            h = db_handle(d);
        } else {
            int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
            if (rc != SQLITE_OK) {
                report(rc, sqlite3_errmsg(h), "open");
                sqlite3_close(h);
                continue;
            }
            sqlite3_extended_result_codes(h, 1);
        }
        if (run(h, "BEGIN") == SQLITE_OK) {
            run(h, "SELECT count(*) FROM steps");
            run(h, "SELECT * FROM results");
            run(h, "SELECT name, max(step), count(*) FROM metrics GROUP BY name");
            usleep(20000); /* a long reader: the daemon commits meanwhile */
            run(h, "SELECT job, max(step) FROM evals GROUP BY job");
            run(h, "SELECT status, count(*) FROM jobs GROUP BY status");
            run(h, "COMMIT");
        }
        if (api)
            db_close(d);
        else
            sqlite3_close(h);
        rounds++;
    }
    printf("# %s reader: %d rounds, %d errors (%d busy/locked), slowest query %.1f ms\n", argv[3], rounds, errors,
           busy, slowest * 1e3);
    return rounds == 0 ? 1 : 0;
}
