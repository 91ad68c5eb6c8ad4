/* lock.c: the daemon's locks (see lock.h). */
#include "orchestrator/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define TRIES 20          /* a `tlmd status` probe holds a shared lock for microseconds */
#define TRY_GAP_NS 50000000L

/* pid of the process holding an exclusive flock on this inode, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234567 0 EOF");
 * -1 if none is listed (or the file cannot be read). */
static long flock_writer(const struct stat *st)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return -1;
    char line[256];
    long found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        const char *p = strchr(line, ':');
        if (!p)
            continue;
        p++;
        while (*p == ' ')
            p++;
        if (!strncmp(p, "->", 2)) /* a waiter, not the holder */
            continue;
        char type[16], mode[16], rw[16];
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        if (sscanf(p, "%15s %15s %15s %ld %x:%x:%llu", type, mode, rw, &pid, &maj, &min, &ino) == 7 &&
            !strcmp(type, "FLOCK") && !strcmp(rw, "WRITE") && maj == major(st->st_dev) && min == minor(st->st_dev) &&
            ino == (unsigned long long)st->st_ino && pid > 0)
            found = pid;
    }
    fclose(f);
    return found;
}

/* An exclusive flock on `path` (a file or a folder).  `what` names it in
 * messages ("database", "runs folder"). */
static int lock_one(const char *path, int dir, const char *what, tlm_err *e)
{
    for (int round = 0; round < 3; round++) {
        int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
            return tlm_errf(e, TLM_EIO, "%s: cannot open the %s to lock it: %s", path, what, strerror(errno));
        int rc = -1, err = 0;
        long pid = -1;
        struct stat held, now;
        for (int i = 0; i < TRIES; i++) {
            if ((rc = flock(fd, LOCK_EX | LOCK_NB)) == 0 || (err = errno) != EWOULDBLOCK)
                break;
            /* a daemon holds it for good: say so at once; anything else (a
             * `tlmd status` probe, or a holder /proc/locks does not show) is
             * given a second to let go */
            if ((pid = fstat(fd, &held) == 0 ? flock_writer(&held) : -1) > 0)
                break;
            struct timespec gap = {0, TRY_GAP_NS};
            nanosleep(&gap, NULL);
        }
        if (rc != 0) {
            close(fd);
            if (err != EWOULDBLOCK)
                return tlm_errf(e, TLM_EIO, "%s: cannot lock the %s: %s", path, what, strerror(err));
            char who[48] = "";
            if (pid > 0)
                snprintf(who, sizeof who, " (pid %ld)", pid);
            return tlm_errf(e, TLM_ECONFIG,
                            "another tlmd%s is running on the %s %s (the same file, whatever path names it); one "
                            "daemon per %s: wait for it to finish or stop it (kill -INT, it resumes later)",
                            who, what, path, what);
        }
        /* the name may have been moved to another file between open and flock
         * (a database created beside it and renamed into place): the lock must
         * be on the file the name means now */
        if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev && held.st_ino == now.st_ino)
            return fd;
        close(fd);
    }
    return tlm_errf(e, TLM_EIO, "%s: the %s keeps being replaced while tlmd locks it", path, what);
}

int orc_lock_acquire(const char *db_path, tlm_err *e) { return lock_one(db_path, 0, "database", e); }

int orc_lock_runs(const char *runs_dir, tlm_err *e) { return lock_one(runs_dir, 1, "runs folder", e); }

long orc_lock_holder(const char *db_path)
{
    /* non-blocking: --db may name a FIFO, whose open would never return
     * (db_open then refuses it by name) */
    int fd = open(db_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return 0;
    }
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
        struct stat st;
        if (errno == EWOULDBLOCK)
            pid = fstat(fd, &st) == 0 ? flock_writer(&st) : -1;
    } else {
        flock(fd, LOCK_UN);
    }
    close(fd);
    return pid;
}
