/* cmd.c: a short command run to its end (see cmd.h). */
#include "orchestrator/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"

extern char **environ;

void orc_cmd_result_free(orc_cmd_result *r)
{
    free(r->out);
    r->out = NULL;
}

int orc_cmd_run(char *const argv[], double timeout, size_t out_max, orc_cmd_result *r, tlm_err *e)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
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
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    /* the loop's signal handlers must not reach the command: default dispositions, nothing blocked */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    close(pe[1]);
    if (rc) {
        close(po[0]);
        close(pe[0]);
        return tlm_errf(e, TLM_EIO, "cannot run %s: %s", argv[0], strerror(rc));
    }
    size_t cap = 4096, n = 0, en = 0;
    char *out = malloc(cap);
    int too_long = 0, oom = !out;
    double end = tlm_clock_mono() + timeout;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
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
                continue;
            }
            if (i == 0 && out && !too_long) {
                if (n + (size_t)got + 1 > out_max) {
                    too_long = 1;
                } else {
                    if (n + (size_t)got + 1 > cap) {
                        while (n + (size_t)got + 1 > cap)
                            cap *= 2;
                        char *t = realloc(out, cap);
                        if (!t) {
                            oom = 1;
                            too_long = 1;
                            continue;
                        }
                        out = t;
                    }
                    memcpy(out + n, buf, (size_t)got);
                    n += (size_t)got;
                }
            } else if (i == 1) {
                for (ssize_t c = 0; c < got && en + 1 < sizeof r->err; c++) {
                    unsigned char ch = (unsigned char)buf[c];
                    r->err[en++] = ch == '\n' ? ' ' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
                }
                r->err[en] = '\0';
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    if (r->timed_out)
        kill(pid, SIGKILL);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    while (en > 0 && r->err[en - 1] == ' ')
        r->err[--en] = '\0';
    if (!r->timed_out && WIFEXITED(ws))
        r->status = WEXITSTATUS(ws);
    if (oom || too_long) {
        free(out);
        return oom ? tlm_errf(e, TLM_ENOMEM, "out of memory reading %s's output", argv[0])
                   : tlm_errf(e, TLM_EIO, "%s printed more than %zu bytes", argv[0], out_max);
    }
    out[n] = '\0';
    r->out = out;
    r->out_len = n;
    return 0;
}
