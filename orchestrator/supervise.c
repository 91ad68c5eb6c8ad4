/* supervise.c: one worker process per attempt.  Spawns it through the
 * exec shim (own process group, killed with the daemon), reads its events
 * pipe, watches for silence, escalates SIGTERM -> SIGKILL, and when both
 * the exit status and the end of the pipe are in, hands the attempt to
 * daemon.c to be recorded.
 * Must not: run a shell, or record an attempt's end before every event it
 * sent has been read. */
#include "orchestrator/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/config/config.h"
#include "orchestrator/rundir.h"
#include "orchestrator/shim.h"

extern char **environ;

#define EOF_WAIT_S 5.0 /* after the exit, how long a stray holder of the pipe may keep it open */

void orc_run_signal(orc_run *r, int sig)
{
    if (r->pid > 0)
        kill(-r->pid, sig); /* the whole group: the worker is its leader (setsid) */
}

void orc_run_stop(orc_run *r, int kill_reason)
{
    if (r->exited)
        return;
    if (!r->kill_reason)
        r->kill_reason = kill_reason;
    if (!r->term_sent) {
        r->term_sent = 1;
        r->term_at = tlm_clock_mono();
        orc_run_signal(r, SIGTERM);
        orc_run_signal(r, SIGCONT); /* a stopped worker must run to see SIGTERM */
    }
}

static void on_close(uv_handle_t *h)
{
    orc_run *r = h->data;
    if (--r->open_handles == 0) {
        orc_linebuf_clear(&r->lb);
        free(r->parser);
        free(r);
    }
}

void orc_run_close(orc_run *r)
{
    if (!uv_is_closing((uv_handle_t *)&r->pipe))
        uv_close((uv_handle_t *)&r->pipe, on_close);
    if (!uv_is_closing((uv_handle_t *)&r->proc))
        uv_close((uv_handle_t *)&r->proc, on_close);
}

static void maybe_finish(orc_run *r)
{
    if (r->finished || !r->exited || !r->eof)
        return;
    r->finished = 1;
    orc_run_finished(r->d, r);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
    orc_run *r = p->data;
    r->exited = 1;
    r->exit_status = status;
    r->term_signal = term_signal;
    r->exited_at = tlm_clock_mono();
    /* anything the worker left in its group goes with it */
    orc_run_signal(r, SIGKILL);
    maybe_finish(r);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    orc_run *r = h->data;
    buf->base = r->d->readbuf;
    buf->len = sizeof r->d->readbuf;
}

static void sink_line(void *ctx, const char *s, size_t n) { orc_ingest_line(ctx, s, n); }

static void sink_too_long(void *ctx)
{
    char why[64];
    snprintf(why, sizeof why, "line longer than %d bytes", ORC_EVENT_MAX);
    orc_ingest_protocol_error(ctx, why, NULL, 0);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    orc_run *r = s->data;
    if (n > 0) {
        orc_line_sink sink = {sink_line, sink_too_long, r};
        if (orc_linebuf_feed(&r->lb, buf->base, (size_t)n, &sink)) {
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
    if (orc_linebuf_finish(&r->lb))
        orc_ingest_protocol_error(r, "the last line has no newline (the worker stopped mid-write)", NULL, 0);
    r->eof = 1;
    maybe_finish(r);
}

void orc_run_tick(orc_run *r, double now)
{
    if (r->finished)
        return;
    if (r->exited && !r->eof && now - r->exited_at > EOF_WAIT_S) {
        /* something outside the group holds the pipe: stop waiting for it */
        uv_read_stop((uv_stream_t *)&r->pipe);
        orc_linebuf_finish(&r->lb);
        r->eof = 1;
        maybe_finish(r);
        return;
    }
    if (r->exited)
        return;
    const orc_opts *o = r->d->o;
    if (!r->term_sent && now - r->last_event > o->heartbeat_timeout) {
        orc_say(r->d, "job %.12s (%s): silent for %.0f s; stopping it", r->d->plan.jobs.v[r->job].key, r->label,
                now - r->last_event);
        orc_run_stop(r, ORC_KILL_TIMEOUT);
    } else if (!r->term_sent && o->stall_timeout > 0 && now - r->progress_at > o->stall_timeout) {
        /* alive (its heartbeat thread speaks) but the work does not move: a
         * read that never returns (a FIFO, a hung file system), a deadlock */
        snprintf(r->stall_note, sizeof r->stall_note, "no progress for %.0f s in phase %s at step %lld",
                 now - r->progress_at, r->phase[0] ? r->phase : "?", (long long)(r->step > 0 ? r->step : 0));
        orc_say(r->d, "job %.12s (%s): heartbeats, but %s; stuck, stopping it", r->d->plan.jobs.v[r->job].key,
                r->label, r->stall_note);
        orc_run_stop(r, ORC_KILL_STALL);
    } else if (r->term_sent && !r->kill_sent &&
               (r->kill_reason != ORC_KILL_SHUTDOWN ? now - r->term_at > o->kill_grace
                                                    : now - r->last_event > o->heartbeat_timeout)) {
        /* a stopping worker keeps sending heartbeats while it checkpoints;
         * one that does not within the grace (or, on shutdown, the heartbeat
         * timeout) is killed */
        r->kill_sent = 1;
        orc_run_signal(r, SIGKILL);
    }
}

/* ------------------------------------------------------------ start */
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

void orc_run_free_prepared(orc_run *r)
{
    free(r->parser);
    free(r);
}

orc_run *orc_run_prepare(orc_daemon *d, size_t job, int slot, tlm_err *e)
{
    orc_job *j = &d->plan.jobs.v[job];
    orc_run *r = calloc(1, sizeof *r);
    if (!r || !(r->parser = malloc(sizeof *r->parser))) {
        free(r);
        tlm_errf(e, TLM_ENOMEM, "out of memory");
        return NULL;
    }
    r->d = d;
    r->job = job;
    r->slot = slot;
    r->n = j->attempts + 1;
    r->resumed_from = -1;
    r->step = r->tokens = -1; /* unknown until the start event */
    if (orc_rundir_path(d->o->runs_dir, j->key, r->run_dir, sizeof r->run_dir, e)) {
        free(r->parser);
        free(r);
        return NULL;
    }

    /* the run folder agrees with the database before the worker sees it */
    char *json = NULL, aside[TLM_PATH_CAP];
    int rc = db_job_config(d->db, j->key, &json, e);
    if (rc == 0)
        rc = tlm_errf(e, TLM_EINTERNAL, "job %.12s is not in %s", j->key, d->o->db_path);
    int64_t keep = -1;
    int moved = 0;
    if (rc == 1)
        rc = orc_rundir_prepare(r->run_dir, json, aside, sizeof aside, e);
    free(json);
    if (!rc && aside[0])
        orc_notice(d, j->key, "job %.12s: %s/config.json was not %s's copy of the job's config; kept in %s",
                   j->key, r->run_dir, d->o->db_path, aside);
    if (!rc)
        rc = db_last_ckpt_step(d->db, j->key, &keep, e);
    if (!rc) {
        /* Newer checkpoints than the database recorded: their events may be
         * lost (tlmd died between the worker's checkpoint and its commit), or
         * the database is an older copy.  Resuming from one would skip steps
         * the database never saw, so the worker replays from the last one it
         * knows; the newer ones are kept, never deleted. */
        char note[2048];
        snprintf(note, sizeof note,
                 "tlmd set these checkpoints aside: the database %s records checkpoints of job\n%s only up to "
                 "step %lld (-1: none), so resuming from them would skip steps whose events it does not hold\n"
                 "(tlmd stopped between a worker's checkpoint and its record, or the database is an older copy).\n"
                 "The job resumed from its last recorded checkpoint instead.  tlmd never reads this folder again.\n"
                 "Each step-N folder is a whole checkpoint if its files match its MANIFEST.json\n"
                 "(tlm-worker --eval --checkpoint FOLDER verifies it).  Move one back into ../../ckpt/ only\n"
                 "together with the database that recorded it; delete this folder when no longer needed.\n",
                 d->o->db_path, j->key, (long long)keep);
        rc = orc_rundir_set_aside(r->run_dir, keep, "unrecorded", note, &moved, aside, sizeof aside, e);
    }
    if (rc) {
        free(r->parser);
        free(r);
        return NULL;
    }
    if (moved)
        orc_notice(d, j->key,
                   "job %.12s: %d checkpoint(s) newer than the last one %s recorded (step %lld) set aside in %s; "
                   "it resumes from step %lld",
                   j->key, moved, d->o->db_path, (long long)keep, aside, (long long)(keep > 0 ? keep : 0));
    return r;
}

int orc_run_start(orc_daemon *d, size_t job, int slot, tlm_err *e)
{
    orc_job *j = &d->plan.jobs.v[job];
    const orc_slot_spec *spec = &d->slots[slot].spec;
    orc_run *r = orc_run_prepare(d, job, slot, e);
    if (!r)
        return e->code ? e->code : TLM_EIO;
    int rc;

    char cfg[TLM_PATH_CAP + sizeof "/config.json"], pid[24], threads[16], hb[16], device[24];
    snprintf(cfg, sizeof cfg, "%s/config.json", r->run_dir);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    snprintf(threads, sizeof threads, "%d", d->threads);
    double hbs = d->o->heartbeat_timeout / 4;
    snprintf(hb, sizeof hb, "%.0f", hbs < 1 ? 1 : hbs);
    snprintf(device, sizeof device, "%s", spec->gpu >= 0 ? "cuda:0" : "cpu");
    char *argv[] = {"tlmd-shim", ORC_SHIM_ARG, pid, d->worker, d->worker, "--config", cfg, "--out", r->run_dir,
                    "--events-fd", "3", "--job", j->key, "--threads", threads, "--device", device,
                    "--heartbeat", hb, "--resume", NULL};
    char *owned[8] = {0};
    int n_owned = 0;
    char **env = child_env(d, spec, owned, 8, &n_owned);
    int log_fd = open_log(r->run_dir, r->n);
    if (!env || log_fd < 0) {
        rc = env ? tlm_errf(e, TLM_EIO, "%s/worker.log: %s", r->run_dir, strerror(errno))
                 : tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto fail_early;
    }

    uv_stdio_container_t stdio[4];
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = log_fd;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = log_fd;
    stdio[3].flags = (uv_stdio_flags)(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[3].data.stream = (uv_stream_t *)&r->pipe;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.file = "/proc/self/exe";
    po.args = argv;
    po.env = env;
    po.flags = UV_PROCESS_DETACHED; /* setsid: its own session and process group */
    po.stdio_count = 4;
    po.stdio = stdio;
    po.exit_cb = on_exit_cb;

    uv_pipe_init(&d->loop, &r->pipe, 0);
    r->pipe.data = r;
    r->proc.data = r;
    r->open_handles = 2;
    int uvrc = uv_spawn(&d->loop, &r->proc, &po);
    close(log_fd);
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(env);
    if (uvrc) {
        orc_run_close(r); /* frees r */
        return tlm_errf(e, TLM_EIO, "cannot start %s: %s", d->worker, uv_strerror(uvrc));
    }
    r->pid = r->proc.pid;
    r->started = r->last_event = r->progress_at = tlm_clock_mono();
    r->progress = -1;
    uv_read_start((uv_stream_t *)&r->pipe, on_alloc, on_read);

    /* recorded (and committed) with its pid, so that a restart can find it */
    db_job_state st;
    int n = 0;
    orc_batch(d); /* one commit for the attempt's rows */
    rc = db_job_start_attempt(d->db, j->key, &n, e);
    if (!rc && db_job_state_get(d->db, j->key, &st, e) < 0)
        rc = TLM_EIO;
    if (!rc) {
        r->n = n;
        if (d->plan.arch_mask & (d->plan.arch_mask - 1)) /* several architectures */
            snprintf(r->label, sizeof r->label, "%.11s %.50s", eng_arch_name(j->arch), st.label);
        else
            snprintf(r->label, sizeof r->label, "%s", st.label);
        db_attempt_row ar = {.job = j->key, .n = n, .pid = r->pid, .host = d->host, .device = spec->name,
                             .started_at = tlm_clock_wall()};
        rc = db_attempt_begin(d->db, &ar, &r->attempt, e);
    }
    if (rc) {
        /* the database refused: this worker must not run unrecorded */
        orc_run_signal(r, SIGKILL);
        r->kill_sent = 1;
        orc_fatal(d, e);
    }
    j->attempts = r->n;
    j->status = ORC_RUNNING;
    d->slots[slot].run = r;
    d->n_running++;
    d->attempts_started++;
    /* committed by the next tick (within 100 ms) with the worker's first
     * events: nothing acts on the attempt row before then */
    return d->fatal ? TLM_EIO : 0;

fail_early:
    if (log_fd >= 0)
        close(log_fd);
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(env);
    free(r->parser);
    free(r);
    return rc;
}
