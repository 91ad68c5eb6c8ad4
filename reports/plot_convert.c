/* plot_convert.c: PNG and PDF from a figure's SVG, by rsvg-convert
 * (Debian's librsvg2-bin: the same renderer GNOME uses, text through Pango
 * in the font the SVG names, PDF text kept as text).  One renderer for the
 * three formats, so they show the same picture.  PNG at twice the SVG's
 * size (crisp on screens and in print), PDF at the SVG's size in points
 * (1 px = 0.75 pt).
 * Must not: run a shell (posix_spawn with argv), wait forever (a minute,
 * then the converter is killed), or leave a partial output behind (the
 * caller reads a temporary file and writes the target atomically). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/spawn.h"
#include "reports/plot_internal.h"


#define CONVERTER "rsvg-convert"
#define TIMEOUT_MS 60000

const char *rpt__converter(char *buf, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && (size_t)snprintf(buf, cap, "%.*s/%s", (int)n, p, CONVERTER) < cap) {
            struct stat st;
            if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
                return buf;
        }
        p += n + (end != NULL);
    }
    return NULL;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int rpt__convert(const char *svg_path, const char *out_path, int kind, tlm_err *e)
{
    char exe[4096];
    if (!rpt__converter(exe, sizeof exe))
        return rpt_plot_device_check(kind, e);
    char *argv[] = {exe, kind == RPT_IMG_PNG ? "--format=png" : "--format=pdf",
                    kind == RPT_IMG_PNG ? "--zoom=2" : "--zoom=1", (char *)svg_path, NULL};
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        return tlm_errf(e, TLM_EIO, "%s: cannot create: %s", out_path, strerror(errno));
    int pe[2];
    if (pipe2(pe, O_CLOEXEC)) {
        int err = errno;
        close(out);
        return tlm_errf(e, TLM_EIO, "cannot make a pipe for %s: %s", CONVERTER, strerror(err));
    }
    pid_t pid;
    int rc = tlm_spawn(&pid, exe, 0, argv, out, pe[1]);
    close(out);
    close(pe[1]);
    if (rc) {
        close(pe[0]);
        return tlm_errf(e, TLM_EIO, "cannot run %s: %s", exe, strerror(rc));
    }
    /* its complaints, for the message; the rest is drained and dropped */
    char err[512] = "";
    size_t en = 0;
    int timed_out = 0;
    double end = now_ms() + TIMEOUT_MS;
    for (;;) {
        double left = end - now_ms();
        if (left <= 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        struct pollfd p = {pe[0], POLLIN, 0};
        int k = poll(&p, 1, (int)left + 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            continue;
        char buf[1024];
        ssize_t got = read(pe[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got && en + 1 < sizeof err; i++) {
            unsigned char ch = (unsigned char)buf[i];
            err[en++] = ch == '\n' ? ' ' : ch < 0x20 ? '?' : (char)ch;
        }
        err[en] = '\0';
    }
    close(pe[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
        return tlm_errf(e, TLM_EIO, "%s: %s took more than %d s; killed", out_path, CONVERTER, TIMEOUT_MS / 1000);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        return tlm_errf(e, TLM_EIO, "%s: %s failed (%s %d)%s%s", out_path, CONVERTER, WIFEXITED(st) ? "exit" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), en ? ": " : "", err);
    return 0;
}
