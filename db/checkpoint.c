/* checkpoint.c: the WAL checkpointer thread (see db.h).  The daemon's
 * commits stay in the microseconds because copying the WAL into the main
 * file (and its fsyncs) happens here, on another connection.
 * Must not: write anything but checkpoints, or block on the writer. */
#include "db/internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

struct db_checkpointer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    int period_ms;
    sqlite3 *h;
};

static void *run(void *arg)
{
    db_checkpointer *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec until;
        tlm_clock_deadline(CLOCK_REALTIME, (long long)c->period_ms * 1000000, &until);
        pthread_cond_timedwait(&c->cv, &c->mu, &until);
        if (c->stop)
            break;
        pthread_mutex_unlock(&c->mu);
        /* failures (a reader pins old frames: SQLITE_BUSY) just mean "later" */
        sqlite3_wal_checkpoint_v2(c->h, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int db_checkpointer_start(db *writer, const char *path, int period_ms, db_checkpointer **out, tlm_err *e)
{
    *out = NULL;
    db_checkpointer *c = calloc(1, sizeof *c);
    if (!c)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    c->period_ms = period_ms > 0 ? period_ms : 1000;
    if (sqlite3_open_v2(path, &c->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int rc = tlm_errf(e, TLM_EIO, "%s: checkpointer: %s", path, sqlite3_errmsg(c->h));
        sqlite3_close(c->h);
        free(c);
        return rc;
    }
    sqlite3_busy_timeout(c->h, DB_BUSY_TIMEOUT_MS);
    sqlite3_db_config(c->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    int err = pthread_create(&c->thread, NULL, run, c);
    if (err) {
        sqlite3_close(c->h);
        free(c);
        return tlm_errf(e, TLM_EINTERNAL, "checkpointer thread: %s", strerror(err));
    }
    /* from now on the writer never checkpoints inside a commit */
    if (db_exec(writer, "PRAGMA wal_autocheckpoint = 0", e)) {
        db_checkpointer_stop(c);
        return TLM_EIO;
    }
    *out = c;
    return 0;
}

void db_checkpointer_stop(db_checkpointer *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    sqlite3_close(c->h);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
