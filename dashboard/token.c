/* token.c: --token-file, tlm-dash's access token kept in a file, so that
 * the URL (and every bookmark of a page) stays the same across restarts.
 *
 * The file is a secret like an SSH key: it must be a regular file of the
 * user who runs tlm-dash, and neither group nor others may have any access
 * to it (mode 0600); anything else is refused with what to do, never
 * repaired.  A missing file is created with mode 0600 from the start (open
 * with O_EXCL, never a window with wider bits) and a new random token,
 * written whole before it takes the name (link: a file made meanwhile by
 * another tlm-dash wins, and is read).
 *
 * Must not: follow a symbolic link at the path, read more than a token's
 * worth, or write a token anywhere but a new file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "dashboard/dash.h"

#define TOKEN_MAX 64

void dash__hex(char *out, const unsigned char *b, size_t n)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

int dash_token_ok(const char *t)
{
    size_t n = strlen(t);
    return n >= 16 && n <= TOKEN_MAX &&
           strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == n;
}

/* The token in an existing file: 1 read, 0 no file there, negative refused. */
static int read_token(const char *path, char *token, size_t cap, tlm_err *e)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno == ELOOP)
            return tlm_errf(e, TLM_ECONFIG, "--token-file %s: is a symbolic link; give the file itself", path);
        return tlm_errf(e, TLM_EIO, "--token-file %s: %s", path, strerror(errno));
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st)) {
        rc = tlm_errf(e, TLM_EIO, "--token-file %s: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = tlm_errf(e, TLM_ECONFIG, "--token-file %s: is not a regular file", path);
    } else if (st.st_uid != geteuid()) {
        rc = tlm_errf(e, TLM_ECONFIG, "--token-file %s: belongs to another user (uid %u); a token file must be "
                      "your own", path, (unsigned)st.st_uid);
    } else if (st.st_mode & 077) {
        rc = tlm_errf(e, TLM_ECONFIG, "--token-file %s: mode %04o lets %s at the token; run chmod 600 %s (and "
                      "remove it to draw a new token if others may have read it)", path, (unsigned)(st.st_mode & 07777),
                      st.st_mode & 070 ? (st.st_mode & 07 ? "its group and everyone" : "its group") : "everyone", path);
    }
    char buf[TOKEN_MAX + 4];
    ssize_t n = rc ? 0 : read(fd, buf, sizeof buf - 1);
    close(fd);
    if (rc)
        return rc;
    if (n < 0)
        return tlm_errf(e, TLM_EIO, "--token-file %s: %s", path, strerror(errno));
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0; /* one line; its newline is not part of it */
    if (!dash_token_ok(buf) || strlen(buf) >= cap)
        return tlm_errf(e, TLM_ECONFIG, "--token-file %s: expected one line of 16 to %d letters, digits, '-' or "
                        "'_' (remove the file to have tlm-dash draw a new token into it)", path, TOKEN_MAX);
    strcpy(token, buf);
    return 1;
}

/* A new file at path holding a new token: 1 made, 0 another process made one first, negative failed. */
static int make_token(const char *path, char *token, tlm_err *e)
{
    unsigned char rnd[32];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return tlm_errf(e, TLM_EIO, "getrandom: %s", strerror(errno));
    dash__hex(token, rnd, sizeof rnd);
    char tmp[TLM_PATH_CAP];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return tlm_errf(e, TLM_ECONFIG, "--token-file %s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return tlm_errf(e, TLM_EIO, "--token-file %s: cannot create it (as %s): %s", path, tmp, strerror(errno));
    char line[TOKEN_MAX + 2];
    int len = snprintf(line, sizeof line, "%s\n", token);
    int rc = 0;
    if (write(fd, line, (size_t)len) != len || fsync(fd))
        rc = tlm_errf(e, TLM_EIO, "--token-file %s: cannot write %s: %s", path, tmp, strerror(errno));
    if (close(fd) && !rc)
        rc = tlm_errf(e, TLM_EIO, "--token-file %s: cannot write %s: %s", path, tmp, strerror(errno));
    if (!rc && link(tmp, path)) {
        if (errno == EEXIST)
            rc = 1; /* not ours: read the one that is there */
        else
            rc = tlm_errf(e, TLM_EIO, "--token-file %s: %s", path, strerror(errno));
    }
    unlink(tmp);
    if (rc)
        return rc > 0 ? 0 : rc;
    tlm_fsync_dir(path);
    return 1;
}

int dash_token_file(const char *path, char *token, size_t cap, int *created, tlm_err *e)
{
    *created = 0;
    if (cap <= TOKEN_MAX)
        return tlm_errf(e, TLM_EINTERNAL, "dash_token_file: buffer too small");
    for (int tries = 0; tries < 3; tries++) {
        int rc = read_token(path, token, cap, e);
        if (rc)
            return rc < 0 ? rc : 0;
        if ((rc = make_token(path, token, e)) < 0)
            return rc;
        if (rc) {
            *created = 1;
            return 0;
        }
    }
    return tlm_errf(e, TLM_EIO, "--token-file %s: appears and vanishes; is another program removing it?", path);
}
