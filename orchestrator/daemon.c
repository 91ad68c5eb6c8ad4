/* daemon.c: tlmd's event loop.  Opens results.db (the only writer: a lock
 * on the database file keeps a second daemon out), checks that --runs
 * belongs to it (pairing.h), recovers from a predecessor that died, loads
 * the sweeps, then starts jobs on free slots in order, batches event rows
 * into transactions committed every 100 ms (and at once for events
 * something relies on), retries what failed retriably after a delay that
 * doubles with each failure in a row, and stops cleanly on SIGINT/SIGTERM
 * (a second signal forces).  Exits 0 only when every job of the given
 * sweeps is done.
 * Must not: act on an event or an exit before it is committed. */
#include "orchestrator/daemon.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/vec.h"
#include "orchestrator/lock.h"
#include "orchestrator/pairing.h"

#define TICK_MS 100

/* ------------------------------------------------------------ batching */
void orc_batch(orc_daemon *d)
{
    tlm_err e;
    if (!d->fatal && !db_in_transaction(d->db) && db_begin(d->db, &e))
        orc_fatal(d, &e);
}

int orc_commit(orc_daemon *d)
{
    if (d->fatal)
        return -1;
    if (!db_in_transaction(d->db))
        return 0;
    double t = tlm_clock_mono();
    tlm_err e;
    if (db_commit(d->db, &e)) {
        orc_fatal(d, &e);
        return -1;
    }
    double ms = (tlm_clock_mono() - t) * 1e3;
    d->commits++;
    d->commit_ms_total += ms;
    if (ms > d->commit_ms_max)
        d->commit_ms_max = ms;
    d->batch_rows = 0;
    return 0;
}

static void stop_all(orc_daemon *d, int kill_reason)
{
    for (int s = 0; s < d->n_slots; s++)
        if (d->slots[s].run)
            d->ex.stop(d->slots[s].run, kill_reason);
}

void orc_fatal(orc_daemon *d, const tlm_err *e)
{
    if (d->fatal)
        return;
    d->fatal = 1;
    d->fatal_err = *e;
    db_rollback(d->db);
    orc_say(d, "the database %s failed: %s; stopping every worker (they checkpoint)", d->o->db_path, e->msg);
    d->stopping = 1;
    stop_all(d, ORC_KILL_SHUTDOWN);
}

/* ------------------------------------------------------------ queue */
/* Retries whose delay is over come first (oldest first), then the queue;
 * retries still waiting hold up nothing. */
static long next_job(orc_daemon *d)
{
    double now = tlm_clock_mono();
    for (size_t i = 0; i < d->retry_n; i++) {
        uint32_t j = d->retry[i].job;
        int pending = d->plan.jobs.v[j].status == ORC_PENDING;
        if (pending && d->retry[i].at > now)
            continue;
        memmove(d->retry + i, d->retry + i + 1, (d->retry_n - i - 1) * sizeof *d->retry);
        d->retry_n--;
        if (pending)
            return j;
        i--;
    }
    while (d->q_head < d->plan.n_queue) {
        uint32_t j = d->plan.queue[d->q_head++];
        if (d->plan.jobs.v[j].status == ORC_PENDING)
            return j;
    }
    return -1;
}

static int has_next(const orc_daemon *d) { return d->retry_n > 0 || d->q_head < d->plan.n_queue; }

static int retry_ready(const orc_daemon *d, double now)
{
    for (size_t i = 0; i < d->retry_n; i++)
        if (d->retry[i].at <= now)
            return 1;
    return 0;
}

/* The wait before the next attempt of a job that failed `streak` times in a
 * row: --retry-delay, doubled each time, at most --retry-delay-max. */
static double retry_delay(const orc_opts *o, int streak)
{
    double v = o->retry_delay;
    for (int i = 1; i < streak && v < o->retry_delay_max; i++)
        v *= 2;
    return v < o->retry_delay_max ? v : o->retry_delay_max;
}

void orc_retry_later(orc_daemon *d, size_t job, double delay)
{
    if (TLM_GROW(d->retry, d->retry_cap, d->retry_n + 1, 64)) {
        tlm_err e;
        tlm_errf(&e, TLM_ENOMEM, "out of memory");
        orc_fatal(d, &e);
        return;
    }
    d->retry[d->retry_n++] = (orc_retry){(uint32_t)job, tlm_clock_mono() + delay};
}

/* "retrying in 20 s" / "retrying now" */
static void fmt_retry(double delay, char *out, size_t cap)
{
    if (delay <= 0)
        snprintf(out, cap, "retrying now");
    else
        snprintf(out, cap, "retrying in %.3g s", delay);
}

static void maybe_end(orc_daemon *d)
{
    if (d->closing || d->n_running > 0 || (!d->stopping && has_next(d)))
        return;
    d->closing = 1;
    uv_close((uv_handle_t *)&d->tick, NULL);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&d->sig[i], NULL);
}

/* What a fault of the machine means for a job, for its messages: not its
 * fault (and how many in a row so far), or, the last one, what to do. */
static void machine_note(const orc_daemon *d, const orc_job *j, int final, char *out, size_t cap)
{
    if (final)
        snprintf(out, cap,
                 "the machine failed it %d time(s) in a row (--max-machine-faults); fix the machine (disk space, "
                 "permissions, the run folder) and run tlmd again: it retries jobs that failed this way",
                 j->machine_faults);
    else
        snprintf(out, cap, "a fault of the machine, not of the job (%d of --max-machine-faults %d, not counted in "
                           "--max-attempts)",
                 j->machine_faults, d->o->max_machine_faults);
}

/* A job whose worker could not even be started (run folder, log, spawn):
 * an attempt without a process.  Nothing of the job was tried, so it is a
 * fault of the machine (or of tlmd), never counted against the job. */
static void start_failed(orc_daemon *d, size_t job, const tlm_err *why)
{
    orc_job *j = &d->plan.jobs.v[job];
    tlm_err e;
    int n = 0;
    int64_t id = 0;
    j->streak++;
    j->machine_faults++;
    int final = j->machine_faults >= d->o->max_machine_faults;
    char note[320], message[TLM_MSG_MAX];
    machine_note(d, j, final, note, sizeof note);
    tlm_msg_printf(message, sizeof message, "cannot start: %s; %s", why->msg, note);
    orc_batch(d);
    db_attempt_row ar = {.job = j->key, .host = d->host, .device = "-", .started_at = tlm_clock_wall()};
    const char *reason = tlm_status_kind(TLM_EIO); /* a fault of the machine (common/failure.h) */
    db_attempt_end end = {.ended_at = tlm_clock_wall(), .exit_code = -1, .reason = reason, .message = message,
                          .step = -1, .tokens = -1};
    /* the slurm executor records its attempt before sbatch: that one ends here */
    if (d->start_attempt > 0) {
        id = d->start_attempt;
        n = j->attempts;
        d->start_attempt = 0;
    } else if (db_job_start_attempt(d->db, j->key, &n, &e) || ((ar.n = n), db_attempt_begin(d->db, &ar, &id, &e))) {
        orc_fatal(d, &e);
        return;
    }
    if (db_attempt_finish(d->db, id, &end, &e) ||
        db_job_set_status(d->db, j->key, final ? "failed" : "pending", reason, message, &e)) {
        orc_fatal(d, &e);
        return;
    }
    j->attempts = n;
    double delay = retry_delay(d->o, j->streak);
    char when[48];
    fmt_retry(delay, when, sizeof when);
    orc_say(d, "job %.12s: %s; %s", j->key, message, final ? "failed" : when);
    if (final) {
        j->status = ORC_FAILED;
        d->failed_now++;
    } else {
        orc_retry_later(d, job, delay);
    }
    orc_commit(d);
}

static void orc_dispatch(orc_daemon *d)
{
    while (!d->stopping) {
        int slot = -1;
        for (int s = 0; s < d->n_slots && slot < 0; s++)
            if (!d->slots[s].run)
                slot = s;
        if (slot < 0)
            break;
        long job = next_job(d);
        if (job < 0)
            break;
        double t = tlm_clock_mono();
        tlm_err e;
        d->start_attempt = 0;
        if (d->ex.start(d, (size_t)job, slot, &e)) {
            if (d->fatal)
                break;
            start_failed(d, (size_t)job, &e);
            continue;
        }
        double ms = (tlm_clock_mono() - t) * 1e3;
        d->dispatch_ms_total += ms;
        if (ms > d->dispatch_ms_max)
            d->dispatch_ms_max = ms;
        orc_run *r = d->slots[slot].run;
        if (r->pid > 0)
            orc_say(d, "job %.12s (%s) started on %s, attempt %d, pid %d", d->plan.jobs.v[job].key, r->label,
                    d->slots[slot].spec.name, r->n, r->pid);
        else
            orc_say(d, "job %.12s (%s) submitted, attempt %d, %s", d->plan.jobs.v[job].key, r->label, r->n,
                    r->where);
    }
    maybe_end(d);
}

/* ------------------------------------------------------------ attempt end */
/* Last non-empty line of the worker's stderr, for failures it did not explain. */
static void stderr_tail(const char *run_dir, char *out, size_t cap)
{
    out[0] = '\0';
    char path[TLM_PATH_CAP];
    if ((size_t)snprintf(path, sizeof path, "%s/worker.log", run_dir) >= sizeof path)
        return; /* cannot happen: run folders leave room for their files (TLM_RUN_DIR_MAX) */
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char buf[2048];
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
    long from = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    if (!strncmp(line, "=== tlmd: attempt ", 18)) /* supervise.c's header: the worker said nothing */
        return;
    size_t k = 0;
    for (; *line && k + 1 < cap; line++)
        out[k++] = ((unsigned char)*line >= 0x20 && (unsigned char)*line < 0x7f) ? *line : '?';
    out[k] = '\0';
}

void orc_run_finished(orc_daemon *d, orc_run *r)
{
    orc_job *j = &d->plan.jobs.v[r->job];
    orc_exit x = {.exited = r->term_signal == 0, .status = (int)r->exit_status, .signal = r->term_signal,
                  .kill_reason = r->kill_reason, .saw_done = r->saw_done,
                  .error_kind = r->error_kind[0] ? r->error_kind : NULL};
    orc_outcome out;
    orc_classify(&x, &out);
    char message[TLM_MSG_MAX];
    if (r->stall_note[0])
        tlm_msg_printf(message, sizeof message, "%s (%s)", out.message, r->stall_note);
    else
        tlm_msg_copy(message, sizeof message, out.message);
    if (r->message[0]) {
        size_t n = strlen(message);
        tlm_msg_printf(message + n, sizeof message - n, "%s%s", n ? ": " : "", r->message);
    } else if (out.next != ORC_NEXT_DONE && out.next != ORC_NEXT_INTERRUPTED && out.next != ORC_NEXT_REQUEUE) {
        char tail[300];
        stderr_tail(r->run_dir, tail, sizeof tail);
        size_t n = strlen(message);
        if (tail[0])
            tlm_msg_printf(message + n, sizeof message - n, "%slast stderr line: %s", n ? "; " : "", tail);
    }
    if (r->protocol_errors) {
        size_t n = strlen(message);
        tlm_msg_printf(message + n, sizeof message - n, "%s%d invalid event line(s)", n ? "; " : "",
                       r->protocol_errors);
    }

    int machine = out.next == ORC_NEXT_RETRY && out.machine;
    if (out.next == ORC_NEXT_RETRY) {
        j->streak++;
        j->machine_faults = machine ? j->machine_faults + 1 : 0;
    }
    int final_failure = out.next == ORC_NEXT_FAIL ||
                        (out.next == ORC_NEXT_RETRY && (machine ? j->machine_faults >= d->o->max_machine_faults
                                                                : j->failures + 1 >= d->o->max_attempts));
    if (machine) {
        char note[320];
        machine_note(d, j, final_failure, note, sizeof note);
        size_t n = strlen(message);
        snprintf(message + n, sizeof message - n, "%s%s", n ? "; " : "", note);
    }
    if (!d->fatal) {
        orc_batch(d); /* the attempt's last events and its end: one commit, before anything acts on it */
        tlm_err e;
        db_attempt_end end = {.ended_at = tlm_clock_wall(), .exit_code = x.exited ? x.status : -1, .signal = x.signal,
                              .reason = out.reason, .message = message[0] ? message : NULL, .step = r->step,
                              .tokens = r->tokens, .protocol_errors = r->protocol_errors};
        int rc = db_attempt_finish(d->db, r->attempt, &end, &e);
        if (!rc && r->got_start) /* an attempt that never started knows nothing of the progress */
            rc = db_job_set_tokens(d->db, j->key, r->tokens, &e);
        if (!rc) {
            switch (out.next) {
            case ORC_NEXT_DONE:
                rc = db_job_set_final(d->db, j->key, r->final_loss, r->final_val_loss, r->elapsed_s, &e);
                if (!rc)
                    rc = db_job_set_status(d->db, j->key, "done", NULL, NULL, &e);
                break;
            case ORC_NEXT_RETRY:
                if (!machine)
                    rc = db_job_add_failure(d->db, j->key, &e);
                if (!rc)
                    rc = db_job_set_status(d->db, j->key, final_failure ? "failed" : "pending", out.reason, message,
                                           &e);
                break;
            case ORC_NEXT_FAIL:
                rc = db_job_set_status(d->db, j->key, "failed", out.reason, message, &e);
                break;
            case ORC_NEXT_INTERRUPTED:
                rc = db_job_set_status(d->db, j->key, "interrupted", NULL, NULL, &e);
                break;
            case ORC_NEXT_REQUEUE:
                rc = db_job_set_status(d->db, j->key, "pending", out.reason, message, &e);
                break;
            }
        }
        if (rc)
            orc_fatal(d, &e);
        else
            orc_commit(d);
    }

    double secs = tlm_clock_mono() - r->started;
    switch (out.next) {
    case ORC_NEXT_DONE:
        j->status = ORC_DONE;
        d->done_now++;
        orc_say(d, "job %.12s (%s) done in %.1f s, loss %.4g", j->key, r->label, secs, r->final_loss);
        break;
    case ORC_NEXT_INTERRUPTED:
        j->status = ORC_INTERRUPTED;
        d->interrupted_now++;
        orc_say(d, "job %.12s (%s) interrupted at step %lld; it resumes on the next start", j->key, r->label,
                (long long)r->step);
        break;
    case ORC_NEXT_RETRY:
        if (!machine)
            j->failures++;
        if (final_failure) {
            j->status = ORC_FAILED;
            d->failed_now++;
            orc_say(d, "job %.12s (%s) failed (%s) after %d attempt(s): %s", j->key, r->label, out.reason,
                    machine ? j->machine_faults : j->failures, message);
        } else {
            j->status = ORC_PENDING;
            double delay = retry_delay(d->o, j->streak);
            char when[48];
            fmt_retry(delay, when, sizeof when);
            orc_say(d, "job %.12s (%s) attempt %d ended: %s: %s; %s", j->key, r->label, r->n, out.reason, message,
                    d->stopping ? "it resumes on the next start" : when);
            if (!d->stopping) {
                orc_retry_later(d, r->job, delay);
                d->retried_now++;
            }
        }
        break;
    case ORC_NEXT_FAIL:
        j->status = ORC_FAILED;
        d->failed_now++;
        orc_say(d, "job %.12s (%s) failed (%s, not retried): %s", j->key, r->label, out.reason, message);
        break;
    case ORC_NEXT_REQUEUE:
        j->status = ORC_PENDING;
        orc_say(d, "job %.12s (%s) attempt %d reached its time limit at step %lld: %s", j->key, r->label, r->n,
                (long long)r->step, d->stopping ? "it resumes on the next start" : "submitted again");
        if (!d->stopping) {
            orc_retry_later(d, r->job, 0);
            d->retried_now++;
        }
        break;
    }
    d->slots[r->slot].run = NULL;
    d->n_running--;
    d->ex.close(r);
    orc_dispatch(d);
}

/* ------------------------------------------------------------ loop */
static void on_tick(uv_timer_t *t)
{
    orc_daemon *d = t->data;
    double now = tlm_clock_mono();
    for (int s = 0; s < d->n_slots; s++) {
        orc_run *r = d->slots[s].run;
        if (!r)
            continue;
        if (r->tokens > r->db_tokens && !d->fatal) {
            /* progress for `tlmd status`, in the batch */
            tlm_err e;
            orc_batch(d);
            if (db_job_set_tokens(d->db, d->plan.jobs.v[r->job].key, r->tokens, &e))
                orc_fatal(d, &e);
            r->db_tokens = r->tokens;
        }
        d->ex.tick_run(r, now);
    }
    if (d->ex.poll)
        d->ex.poll(d, now);
    orc_commit(d);
    if (!d->stopping && retry_ready(d, now))
        orc_dispatch(d);
    orc_progress_tick(d, now);
}

static void on_signal(uv_signal_t *h, int signum)
{
    orc_daemon *d = h->data;
    if (!d->stopping) {
        d->stopping = 1;
        d->stop_signal = signum;
        orc_say(d, "%s: stopping %d worker(s); they checkpoint and exit (send the signal again to force)",
                strsignal(signum), d->n_running);
        stop_all(d, ORC_KILL_SHUTDOWN);
        maybe_end(d);
        return;
    }
    if (!d->forced) {
        d->forced = 1;
        orc_say(d, "%s again: killing %d worker(s) now", strsignal(signum), d->n_running);
        for (int s = 0; s < d->n_slots; s++)
            if (d->slots[s].run) {
                d->slots[s].run->kill_sent = 1;
                if (!d->slots[s].run->kill_reason)
                    d->slots[s].run->kill_reason = ORC_KILL_SHUTDOWN;
                d->ex.signal(d->slots[s].run, SIGKILL);
            }
    }
}

/* The worker: --worker, $TLM_WORKER, or beside tlmd (installed or in the build tree). */
static int find_worker(const orc_opts *o, char *out, size_t cap, tlm_err *e)
{
    const char *env = getenv("TLM_WORKER");
    if (o->worker || (env && *env)) {
        snprintf(out, cap, "%s", o->worker ? o->worker : env);
        if (access(out, X_OK) != 0)
            return tlm_errf(e, TLM_ECONFIG, "worker %s: %s", out, strerror(errno));
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            static const char *const rel[] = {"/tlm-worker", "/../worker/tlm-worker"};
            for (size_t i = 0; i < 2; i++) {
                char real[PATH_MAX];
                if ((size_t)snprintf(out, cap, "%s%s", self, rel[i]) < cap && access(out, X_OK) == 0 &&
                    realpath(out, real)) {
                    snprintf(out, cap, "%s", real);
                    return 0;
                }
            }
        }
    }
    return tlm_errf(e, TLM_ECONFIG, "tlm-worker not found beside tlmd; give --worker PATH or set TLM_WORKER");
}

static int exit_status(orc_daemon *d)
{
    if (d->fatal)
        return 3;
    size_t done = 0;
    for (size_t i = 0; i < d->plan.jobs.n; i++) {
        done += d->plan.jobs.v[i].status == ORC_DONE;
    }
    if (done == d->plan.jobs.n)
        return 0;
    if (d->stopping)
        return 75;
    return 1;
}

int orc_daemon_run(const orc_opts *o, tlm_err *e)
{
    orc_daemon *d = calloc(1, sizeof *d);
    if (!d) {
        tlm_errf(e, TLM_ENOMEM, "out of memory");
        return 3;
    }
    d->o = o;
    d->t0 = tlm_clock_mono();
    d->tty = o->progress < 0 ? isatty(STDOUT_FILENO) : o->progress;
    int lock_fd = -1, runs_fd = -1, status = 2, loop_ok = 0, created = 0, discard = 0;
    orc_slot_spec specs[ORC_MAX_SLOTS];
    int slurm = o->executor && !strcmp(o->executor, "slurm");
    if (slurm) {
        /* a slot is a Slurm job that may be queued or running at a time */
        d->n_slots = o->slurm_max_jobs;
        d->threads = o->threads_per_worker > 0 ? o->threads_per_worker : 1;
        for (int i = 0; i < d->n_slots; i++)
            specs[i] = (orc_slot_spec){.name = "slurm", .gpu = -1};
    } else {
        orc_executor_local(&d->ex);
    }
    if (find_worker(o, d->worker, sizeof d->worker, e) || (slurm && orc_executor_slurm(&d->ex, o, e)) ||
        (!slurm &&
         orc_slots_plan(o->devices, o->workers, o->threads_per_worker, specs, &d->n_slots, &d->threads, e)))
        goto out;
    for (int i = 0; i < d->n_slots; i++)
        d->slots[i].spec = specs[i];
    if (gethostname(d->host, sizeof d->host) != 0)
        snprintf(d->host, sizeof d->host, "?");
    d->host[sizeof d->host - 1] = '\0';

    /* the sweeps first: a bad or missing one is refused before results.db
     * or the runs folder exist (orc_plan_load reads them again, under the
     * lock, and records them) */
    int rc = orc_plan_check(o, e);
    if (rc) {
        status = rc == TLM_ECONFIG ? 2 : 3;
        goto out;
    }
    status = 3;
    /* the lock is on the database file itself (whatever path names it), so
     * the file exists first; then the runs folder, locked too: a copy of the
     * database (the same id) must not share it with the original's daemon */
    if (db_create(o->db_path, &created, e)) {
        status = e->code == TLM_ECONFIG ? 2 : 3; /* a FIFO, a device, a folder */
        goto out;
    }
    if ((lock_fd = orc_lock_acquire(o->db_path, e)) < 0) {
        status = e->code == TLM_ECONFIG ? 2 : 3;
        goto out;
    }
    if (db_open(o->db_path, DB_READWRITE, &d->db, e)) {
        status = e->code == TLM_ECONFIG ? 2 : 3; /* not a TLM database, or a newer one */
        goto out;
    }
    if (tlm_mkdir_p(o->runs_dir, e)) {
        tlm_err_prefix(e, "--runs");
        goto out;
    }
    if ((runs_fd = orc_lock_runs(o->runs_dir, e)) < 0 ||
        orc_pairing_claim(o->runs_dir, o->db_path, d->db, o->adopt_runs, stdout, e)) {
        status = e->code == TLM_ECONFIG ? 2 : 3;
        /* a database made by this very command (a mistyped --db) goes again:
         * the refusal changes nothing */
        discard = created && status == 2;
        goto out;
    }
    if (orc_recover(d->db, stdout, e))
        goto out;
    rc = orc_plan_load(&d->plan, o, d->db, stdout, e);
    if (rc) {
        status = rc == TLM_ECONFIG ? 2 : 3;
        goto out;
    }
    if (d->ex.recover && d->ex.recover(d, e))
        goto out;
    if (db_checkpointer_start(d->db, o->db_path, 1000, &d->ckpt, e))
        goto out;
    if (slurm)
        printf("tlmd: %zu jobs, %zu to run as Slurm jobs (at most %d at a time, %d thread(s) each); worker %s\n",
               d->plan.jobs.n, d->plan.n_queue - (size_t)d->n_running, d->n_slots, d->threads, d->worker);
    else
        printf("tlmd: %zu jobs, %zu to run on %d slot(s) (%s, %d thread(s) each); worker %s\n", d->plan.jobs.n,
               d->plan.n_queue, d->n_slots, d->slots[0].spec.name, d->threads, d->worker);
    fflush(stdout);

    if (uv_loop_init(&d->loop)) {
        tlm_errf(e, TLM_EINTERNAL, "cannot start the event loop");
        goto out;
    }
    loop_ok = 1;
    uv_timer_init(&d->loop, &d->tick);
    d->tick.data = d;
    uv_timer_start(&d->tick, on_tick, TICK_MS, TICK_MS);
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(&d->loop, &d->sig[i]);
        d->sig[i].data = d;
        uv_signal_start(&d->sig[i], on_signal, sigs[i]);
    }
    orc_dispatch(d);
    uv_run(&d->loop, UV_RUN_DEFAULT);
    orc_commit(d);
    orc_summary(d, stdout);
    status = exit_status(d);
    if (d->fatal)
        *e = d->fatal_err;
out:
    if (loop_ok) {
        uv_run(&d->loop, UV_RUN_NOWAIT); /* close callbacks */
        uv_loop_close(&d->loop);
    }
    if (d->ex.shutdown)
        d->ex.shutdown(d);
    db_checkpointer_stop(d->ckpt);
    db_close(d->db);
    if (discard) {
        static const char *const ext[] = {"", "-wal", "-shm"};
        for (int i = 0; i < 3; i++) {
            char p[4200];
            snprintf(p, sizeof p, "%s%s", o->db_path, ext[i]);
            unlink(p);
        }
    }
    orc_plan_clear(&d->plan);
    free(d->retry);
    /* only now: closing a descriptor of the database file drops this
     * process's POSIX locks on it, SQLite's included (lock.h) */
    if (lock_fd >= 0)
        close(lock_fd);
    if (runs_fd >= 0)
        close(runs_fd);
    free(d);
    return status;
}
