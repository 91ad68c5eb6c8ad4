/* lock.c: the daemon's lock file (see lock.h). */
#include "orchestrator/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void lock_path(const char *db_path, char *out, size_t cap) { snprintf(out, cap, "%s.lock", db_path); }

static long read_pid(int fd)
{
    char buf[32] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

int orc_lock_acquire(const char *db_path, eng_err *e)
{
    char path[4096];
    lock_path(db_path, path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return eng_errf(e, ENG_EIO, "%s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        long pid = read_pid(fd);
        close(fd);
        if (err == EWOULDBLOCK)
            return eng_errf(e, ENG_ECONFIG, "another tlmd (pid %ld) is running on %s; one daemon per database",
                            pid, db_path);
        return eng_errf(e, ENG_EIO, "%s: cannot lock: %s", path, strerror(err));
    }
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
        close(fd);
        return eng_errf(e, ENG_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    return fd;
}

long orc_lock_holder(const char *db_path)
{
    char path[4096];
    lock_path(db_path, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            pid = read_pid(fd);
            if (pid <= 0)
                pid = -1; /* held, pid not written yet */
        }
    } else {
        flock(fd, LOCK_UN);
    }
    close(fd);
    return pid;
}
