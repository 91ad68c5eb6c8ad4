/* exec_local.c: the local executor (--executor local, the default): one
 * worker process per attempt on this machine (a job of several ranks: one
 * mpirun, which starts the ranks; docs/parallel.md).  Launches the worker
 * attempt.c describes through the exec shim (own session and process
 * group, killed with the daemon), on its slot's device and threads, its
 * stdout and stderr appended to the run folder's worker.log, its events
 * over a pipe; hands every line, the end of the pipe and the exit back to
 * attempt.c; signals go to the worker's whole process group; watches for
 * silence and for heartbeats without progress, and escalates a stop to
 * SIGKILL.
 * Must not: run a shell, write to results.db, or hand back the exit
 * before the worker's group has been killed. */
#include "orchestrator/daemon.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/config/ranks.h"
#include "orchestrator/linebuf.h"
#include "orchestrator/plan.h"
#include "orchestrator/shim.h"

extern char **environ;

#define EOF_WAIT_S 5.0 /* after the exit, how long a stray holder of the pipe may keep it open */

/* The executor's part of a run.  Its handles may outlive the run: r is
 * NULL once the run is released, and their close callbacks free it. */
typedef struct local_run {
    orc_run *r;
    uv_process_t proc;
    uv_pipe_t pipe;
    int open_handles;       /* freed when both handles are closed */
    orc_linebuf lb;
    double exited_at;       /* monotonic seconds */
    int ranks;              /* >1: r->pid is mpirun, the ranks its children */
} local_run;

/* mpirun, found on PATH by check_needs (a job of several ranks) */
static char g_mpirun[PATH_MAX];

/* Signals every process of session `sid` (the attempt's: the shim made
 * its leader with setsid), but its leader when `leader` is 0.  The ranks
 * mpirun starts lead process groups of their own, so the group of the
 * leader does not reach them; the session does. */
static void signal_session(pid_t sid, int sig, int leader)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        /* pid (comm) state ppid pgrp session: comm may hold anything */
        const char *p = strrchr(buf, ')');
        long ppid, pgrp, session;
        char state;
        if (!p || sscanf(p + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4 || session != (long)sid)
            continue;
        pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
        if (pid != sid || leader)
            kill(pid, sig);
    }
    closedir(dir);
}

static void local_signal(orc_run *r, int sig)
{
    if (r->pid <= 0)
        return;
    local_run *l = r->ex;
    if (l && l->ranks > 1) {
        /* the ranks themselves: mpirun would end them SIGTERM then SIGKILL
         * a second later, before a large model has checkpointed, and exit
         * 1; the ranks, stopped, checkpoint together and exit 75, and so
         * does mpirun (docs/parallel.md) */
        if (sig == SIGKILL)
            kill(-r->pid, sig);
        signal_session(r->pid, sig, sig == SIGKILL);
        if (sig == SIGTERM)
            signal_session(r->pid, SIGCONT, 0);
        return;
    }
    kill(-r->pid, sig); /* the whole group: the worker is its leader (setsid) */
    if (sig == SIGTERM)
        kill(-r->pid, SIGCONT); /* a stopped worker must run to see SIGTERM */
}

static void on_close(uv_handle_t *h)
{
    local_run *l = h->data;
    if (--l->open_handles == 0) {
        orc_linebuf_clear(&l->lb);
        free(l);
    }
}

static void local_release(orc_run *r)
{
    local_run *l = r->ex;
    r->ex = NULL;
    l->r = NULL;
    if (l->open_handles == 0) { /* never launched */
        free(l);
        return;
    }
    if (!uv_is_closing((uv_handle_t *)&l->pipe))
        uv_close((uv_handle_t *)&l->pipe, on_close);
    if (!uv_is_closing((uv_handle_t *)&l->proc))
        uv_close((uv_handle_t *)&l->proc, on_close);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
    local_run *l = p->data;
    l->exited_at = tlm_clock_mono();
    /* anything the worker left in its group goes with it (mpirun's ranks:
     * in its session) */
    if (l->r->pid > 0) {
        kill(-l->r->pid, SIGKILL);
        if (l->ranks > 1)
            signal_session(l->r->pid, SIGKILL, 1);
    }
    /* mpirun says a rank killed by signal n as its own exit status 128 + n */
    if (l->ranks > 1 && !term_signal && status > 128 && status < 128 + 65) {
        term_signal = (int)status - 128;
        status = 0;
    }
    orc_attempt_exited(l->r, status, term_signal);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    local_run *l = h->data;
    buf->base = l->r->d->readbuf;
    buf->len = sizeof l->r->d->readbuf;
}

static void sink_line(void *ctx, const char *s, size_t n) { orc_attempt_line(ctx, s, n, -1); }

static void sink_too_long(void *ctx)
{
    char why[64];
    snprintf(why, sizeof why, "line longer than %d bytes", ORC_EVENT_MAX);
    orc_attempt_bad_line(ctx, why, -1);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    local_run *l = s->data;
    orc_run *r = l->r;
    if (n > 0) {
        orc_line_sink sink = {sink_line, sink_too_long, r};
        if (orc_linebuf_feed(&l->lb, buf->base, (size_t)n, &sink)) {
            tlm_err e;
            tlm_errf(&e, TLM_ENOMEM, "out of memory reading events");
            orc_fatal(r->d, &e);
        }
        return;
    }
    if (n == 0)
        return;
    /* UV_EOF or a read error: the stream is over either way */
    uv_read_stop(s);
    if (orc_linebuf_finish(&l->lb))
        orc_attempt_bad_line(r, "the last line has no newline (the worker stopped mid-write)", -1);
    orc_attempt_stream_end(r);
}

static void local_tick_run(orc_run *r, double now)
{
    local_run *l = r->ex;
    if (r->finished)
        return;
    if (r->exited && !r->eof && now - l->exited_at > EOF_WAIT_S) {
        /* something outside the group holds the pipe: stop waiting for it */
        uv_read_stop((uv_stream_t *)&l->pipe);
        orc_linebuf_finish(&l->lb);
        orc_attempt_stream_end(r);
        return;
    }
    if (r->exited)
        return;
    const orc_opts *o = r->d->o;
    if (!r->term_sent && now - r->last_event > o->heartbeat_timeout) {
        orc_say(r->d, "job %.12s (%s): silent for %.0f s; stopping it", r->d->plan.jobs.v[r->job].key, r->label,
                now - r->last_event);
        orc_attempt_stop(r, ORC_KILL_TIMEOUT);
    } else if (!r->term_sent && o->stall_timeout > 0 && now - r->progress_at > o->stall_timeout) {
        /* alive (its heartbeat thread speaks) but the work does not move: a
         * read that never returns (a FIFO, a hung file system), a deadlock */
        snprintf(r->stall_note, sizeof r->stall_note, "no progress for %.0f s in phase %s at step %lld",
                 now - r->progress_at, r->phase[0] ? r->phase : "?", (long long)(r->step > 0 ? r->step : 0));
        orc_say(r->d, "job %.12s (%s): heartbeats, but %s; stuck, stopping it", r->d->plan.jobs.v[r->job].key,
                r->label, r->stall_note);
        orc_attempt_stop(r, ORC_KILL_STALL);
    } else if (r->term_sent && !r->kill_sent &&
               (r->kill_reason != ORC_KILL_SHUTDOWN ? now - r->term_at > o->kill_grace
                                                    : now - r->last_event > o->heartbeat_timeout)) {
        /* a stopping worker keeps sending heartbeats while it checkpoints;
         * one that does not within the grace (or, on shutdown, the heartbeat
         * timeout) is killed */
        orc_attempt_kill(r, ORC_KILL_NONE);
    }
}

/* ------------------------------------------------------------ launch */
static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* environ with the slot's settings in place of any inherited ones */
static char **child_env(const orc_daemon *d, const orc_slot_spec *slot, char **owned, int n_owned_cap, int *n_owned)
{
    static const char *const ours[] = {"CUDA_VISIBLE_DEVICES=", "OMP_NUM_THREADS=", "OPENBLAS_NUM_THREADS=",
                                       "TLM_SLOT="};
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (size_t j = 0; j < sizeof ours / sizeof ours[0]; j++)
            skip |= !strncmp(environ[i], ours[j], strlen(ours[j]));
        if (!skip)
            env[k++] = environ[i];
    }
    *n_owned = 0;
    if (slot->gpu >= 0)
        owned[(*n_owned)++] = dupf("CUDA_VISIBLE_DEVICES=%d", slot->gpu);
    owned[(*n_owned)++] = dupf("OMP_NUM_THREADS=%d", d->threads);
    owned[(*n_owned)++] = dupf("OPENBLAS_NUM_THREADS=%d", d->threads);
    owned[(*n_owned)++] = dupf("TLM_SLOT=%s", slot->name);
    for (int i = 0; i < *n_owned && i < n_owned_cap; i++) {
        if (!owned[i]) {
            free(env);
            return NULL;
        }
        env[k++] = owned[i];
    }
    env[k] = NULL;
    return env;
}

static int open_log(const char *dir, int n)
{
    char path[TLM_PATH_CAP];
    if ((size_t)snprintf(path, sizeof path, "%s/worker.log", dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        char head[128];
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        int len = snprintf(head, sizeof head, "=== tlmd: attempt %d, %04d-%02d-%02d %02d:%02d:%02d ===\n", n,
                           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (write(fd, head, (size_t)len) < 0) {
            /* the log is a convenience; the worker's stderr still goes there */
        }
    }
    return fd;
}

/* The worker through the shim, stdout and stderr to log_fd, events on fd 3;
 * mpirun (several ranks): events on its stdout, which carries rank 0's
 * (mpirun forwards the ranks' stdout and writes its own words to stderr). */
static int spawn(orc_run *r, local_run *l, char **argv, char **env, int log_fd)
{
    uv_stdio_container_t stdio[4];
    const int ev = l->ranks > 1 ? 1 : 3;
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = log_fd;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = log_fd;
    stdio[3].flags = UV_IGNORE;
    stdio[ev].flags = (uv_stdio_flags)(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[ev].data.stream = (uv_stream_t *)&l->pipe;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.file = "/proc/self/exe";
    po.args = argv;
    po.env = env;
    po.flags = UV_PROCESS_DETACHED; /* setsid: its own session and process group */
    po.stdio_count = ev + 1;
    po.stdio = stdio;
    po.exit_cb = on_exit_cb;
    uv_pipe_init(&r->d->loop, &l->pipe, 0);
    l->pipe.data = l;
    l->proc.data = l;
    l->open_handles = 2;
    return uv_spawn(&r->d->loop, &l->proc, &po);
}

static void local_fill_row(const orc_run *r, db_attempt_row *row)
{
    row->pid = r->pid;
    row->device = r->d->slots[r->slot].spec.name;
}

/* The sweeps' ranks against this machine: one node, mpirun on PATH and
 * willing to run (as root only when Open MPI's own switch says so), the
 * CPU (a GPU slot is one GPU: one rank). */
static int local_check_needs(const orc_daemon *d, const orc_plan_needs *n, tlm_err *e)
{
    if (n->nodes > 1)
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s: resources.nodes %d: the local executor runs on this machine only; run it with "
                        "--executor slurm, or set nodes: 1",
                        n->sweep, n->nodes);
    if (d->slots[0].spec.gpu >= 0)
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s: %d ranks a job on GPU slots: the local executor gives a job one GPU (its slot), "
                        "and a job of several ranks needs one GPU a rank; run it with --executor slurm (one rank "
                        "per GPU of --gres), or on the CPU (--devices cpu), or with ranks_per_node: 1",
                        n->sweep, n->ranks);
    const char *path = getenv("PATH");
    g_mpirun[0] = '\0';
    for (const char *p = path ? path : ""; *p && !g_mpirun[0];) {
        size_t k = strcspn(p, ":");
        char cand[PATH_MAX];
        if (k && k + sizeof "/mpirun" < sizeof cand) {
            snprintf(cand, sizeof cand, "%.*s/mpirun", (int)k, p);
            if (access(cand, X_OK) == 0)
                snprintf(g_mpirun, sizeof g_mpirun, "%s", cand);
        }
        p += k + (p[k] == ':');
    }
    if (!g_mpirun[0])
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s asks for %d ranks a job, which the local executor starts with Open MPI's mpirun: "
                        "mpirun is not on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev; "
                        "scripts/setup.sh does)",
                        n->sweep, n->ranks);
    if (geteuid() == 0 && !(getenv("OMPI_ALLOW_RUN_AS_ROOT") && getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")))
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s asks for %d ranks a job, and mpirun refuses to run as root unless told: set "
                        "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (Open MPI's own switch), or "
                        "run tlmd as another user",
                        n->sweep, n->ranks);
    return 0;
}

/* The ranks of r's job (its sweep's resources over the command line's) */
static int run_ranks(const orc_run *r)
{
    const orc_daemon *d = r->d;
    orc_resources res;
    orc_resources_merge(&res, &d->o->res, &d->plan.sweeps[d->plan.jobs.v[r->job].sweep].res);
    return orc_resources_ranks(&res);
}

static int local_launch(orc_run *r, tlm_err *e)
{
    orc_daemon *d = r->d;
    const orc_slot_spec *spec = &d->slots[r->slot].spec;
    local_run *l = calloc(1, sizeof *l);
    if (!l)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    l->r = r;
    r->ex = l;
    l->ranks = run_ranks(r);
    orc_worker_cmd w;
    /* several ranks share the slot's threads */
    int threads = l->ranks > 1 ? (d->threads / l->ranks > 0 ? d->threads / l->ranks : 1) : d->threads;
    orc_worker_place at = {.run_dir = r->run_dir, .events_fd = l->ranks > 1 ? "1" : "3",
                           .device = spec->gpu >= 0 ? "cuda:0" : "cpu", .threads = threads};
    if (orc_attempt_worker_cmd(r, &at, &w, e))
        return e->code;
    /* tlmd-shim --exec-shim PID WORKER ARGV...: argv[0] of the worker is the
     * worker; several ranks: mpirun -np N [its options] WORKER ARGV, the
     * ranks stopping (checkpoint, exit 75) if mpirun dies */
    char pid[24], np[16], *argv[16 + ORC_WORKER_ARGC] = {"tlmd-shim", ORC_SHIM_ARG, pid, w.argv[0]};
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    size_t k = 4;
    if (l->ranks > 1) {
        snprintf(np, sizeof np, "%d", l->ranks);
        char *mpi[] = {g_mpirun, "mpirun", "-np", np, "--oversubscribe", "--bind-to", "none"};
        k = 3;
        for (size_t i = 0; i < sizeof mpi / sizeof *mpi; i++)
            argv[k++] = mpi[i];
    }
    for (size_t i = 0; w.argv[i]; i++)
        argv[k++] = w.argv[i];
    if (l->ranks > 1)
        argv[k++] = "--die-with-parent";
    argv[k] = NULL;
    char *owned[8] = {0};
    int n_owned = 0, rc = 0;
    char **env = child_env(d, spec, owned, 8, &n_owned);
    int log_fd = open_log(r->run_dir, r->n);
    if (!env || log_fd < 0)
        rc = env ? tlm_errf(e, TLM_EIO, "%s/worker.log: %s", r->run_dir, strerror(errno))
                 : tlm_errf(e, TLM_ENOMEM, "out of memory");
    int uvrc = rc ? 0 : spawn(r, l, argv, env, log_fd);
    if (log_fd >= 0)
        close(log_fd);
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(env);
    if (rc)
        return rc;
    if (uvrc)
        return tlm_errf(e, TLM_EIO, "cannot start %s: %s", d->worker, uv_strerror(uvrc));
    r->pid = l->proc.pid;
    uv_read_start((uv_stream_t *)&l->pipe, on_alloc, on_read);
    return 0;
}

static int local_where(const orc_daemon *d, char *buf, size_t n)
{
    return snprintf(buf, n, "on %d slot(s) (%s", d->n_slots, d->slots[0].spec.name);
}

void orc_executor_local(orc_executor *x)
{
    *x = (orc_executor){
        .name = "local",
        .record_first = 0,
        .where = local_where,
        .fill_row = local_fill_row,
        .check_needs = local_check_needs,
        .launch = local_launch,
        .signal = local_signal,
        .tick_run = local_tick_run,
        .release = local_release,
    };
}
