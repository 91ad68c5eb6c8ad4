/* cmd.c: a short command run to its end (see cmd.h). */
#include "orchestrator/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/spawn.h"


void orc_cmd_result_free(orc_cmd_result *r)
{
    free(r->out);
    r->out = NULL;
}

/* The command with stdin /dev/null, stdout and stderr into two pipes
 * (their read ends in fds), default signal dispositions: 0 or an error. */
static int spawn(char *const argv[], pid_t *pid, int fds[2], tlm_err *e)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        int err = errno;
        for (int i = 0; i < 2; i++) {
            if (po[i] >= 0)
                close(po[i]);
            if (pe[i] >= 0)
                close(pe[i]);
        }
        return tlm_errf(e, TLM_EIO, "%s: cannot make a pipe: %s", argv[0], strerror(err));
    }
    int rc = tlm_spawn(pid, argv[0], 1, argv, po[1], pe[1]);
    close(po[1]);
    close(pe[1]);
    if (rc) {
        close(po[0]);
        close(pe[0]);
        return tlm_errf(e, TLM_EIO, "cannot run %s: %s", argv[0], strerror(rc));
    }
    fds[0] = po[0];
    fds[1] = pe[0];
    return 0;
}

/* What the command printed so far: stdout up to its bound, the start of stderr. */
typedef struct output {
    char *out;
    size_t n, cap, max, en;
    int too_long, oom;
} output;

static void keep_out(output *o, const char *buf, size_t got)
{
    if (!o->out || o->too_long)
        return;
    if (o->n + got + 1 > o->max) {
        o->too_long = 1;
        return;
    }
    if (o->n + got + 1 > o->cap) {
        size_t cap = o->cap;
        while (o->n + got + 1 > cap)
            cap *= 2;
        char *t = realloc(o->out, cap);
        if (!t) {
            o->oom = o->too_long = 1;
            return;
        }
        o->out = t;
        o->cap = cap;
    }
    memcpy(o->out + o->n, buf, got);
    o->n += got;
}

static void keep_err(output *o, orc_cmd_result *r, const char *buf, size_t got)
{
    for (size_t c = 0; c < got && o->en + 1 < sizeof r->err; c++) {
        unsigned char ch = (unsigned char)buf[c];
        r->err[o->en++] = ch == '\n' ? ' ' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    r->err[o->en] = '\0';
}

/* Both pipes until they close or the time is up (r->timed_out). */
static void read_all(int fd[2], double timeout, output *o, orc_cmd_result *r)
{
    double end = tlm_clock_mono() + timeout;
    struct pollfd fds[2] = {{fd[0], POLLIN, 0}, {fd[1], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        double left = end - tlm_clock_mono();
        if (left <= 0) {
            r->timed_out = 1;
            break;
        }
        int k = poll(fds, 2, (int)(left * 1000) + 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else if (i == 0) {
                keep_out(o, buf, (size_t)got);
            } else {
                keep_err(o, r, buf, (size_t)got);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
}

int orc_cmd_run(char *const argv[], double timeout, size_t out_max, orc_cmd_result *r, tlm_err *e)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    pid_t pid;
    int fd[2];
    int rc = spawn(argv, &pid, fd, e);
    if (rc)
        return rc;
    output o = {.out = malloc(4096), .cap = 4096, .max = out_max};
    o.oom = !o.out;
    read_all(fd, timeout, &o, r);
    if (r->timed_out)
        kill(pid, SIGKILL);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    while (o.en > 0 && r->err[o.en - 1] == ' ')
        r->err[--o.en] = '\0';
    if (!r->timed_out && WIFEXITED(ws))
        r->status = WEXITSTATUS(ws);
    if (o.oom || o.too_long) {
        free(o.out);
        return o.oom ? tlm_errf(e, TLM_ENOMEM, "out of memory reading %s's output", argv[0])
                     : tlm_errf(e, TLM_EIO, "%s printed more than %zu bytes", argv[0], out_max);
    }
    o.out[o.n] = '\0';
    r->out = o.out;
    r->out_len = o.n;
    return 0;
}
