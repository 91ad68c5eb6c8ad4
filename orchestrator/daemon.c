/* daemon.c: tlmd's event loop.  Opens results.db (the only writer: a lock
 * on the database file keeps a second daemon out), checks that --runs
 * belongs to it (pairing.h), recovers from a predecessor that died, loads
 * the sweeps, then starts jobs on free slots in order (attempt.c starts
 * each through the executor), batches event rows into transactions
 * committed every 100 ms (and at once for events something relies on),
 * decides what each attempt's end means for its job, retries what failed
 * retriably after a delay that doubles with each failure in a row, and
 * stops cleanly on SIGINT/SIGTERM (a second signal forces).  Exits 0 only
 * when every job of the given sweeps is done.
 * Must not: act on an event or an exit before it is committed; keep an
 * attempt's row or talk to a process itself (attempt.c, the executors). */
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
            orc_attempt_stop(d->slots[s].run, kill_reason);
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

/* A job whose worker could not even be started (run folder, log, spawn,
 * sbatch): an attempt without a process (`row`: the one the executor's
 * record opened, else 0).  Nothing of the job was tried, so it is a fault
 * of the machine (or of tlmd), never counted against the job. */
static void start_failed(orc_daemon *d, size_t job, int64_t row, const tlm_err *why)
{
    orc_job *j = &d->plan.jobs.v[job];
    tlm_err e;
    int n = 0;
    j->streak++;
    j->machine_faults++;
    int final = j->machine_faults >= d->o->max_machine_faults;
    char note[320], message[TLM_MSG_MAX];
    machine_note(d, j, final, note, sizeof note);
    tlm_msg_printf(message, sizeof message, "cannot start: %s; %s", why->msg, note);
    orc_batch(d);
    const char *reason = tlm_status_kind(TLM_EIO); /* a fault of the machine (common/failure.h) */
    if (orc_attempt_record_unstarted(d, job, row, reason, message, &n, &e) ||
        db_job_set_status(d->db, j->key, final ? DB_JOB_FAILED : DB_JOB_PENDING, reason, message, &e)) {
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

int orc_slot_find(orc_daemon *d, int grow)
{
    for (int s = 0; s < d->n_slots; s++)
        if (!d->slots[s].run)
            return s;
    if (!grow || d->n_slots == 0 || d->n_slots == ORC_MAX_SLOTS)
        return -1;
    d->slots[d->n_slots].spec = d->slots[0].spec;
    return d->n_slots++;
}

void orc_run_placed(orc_daemon *d, orc_run *r, int started)
{
    d->plan.jobs.v[r->job].status = ORC_RUNNING;
    d->slots[r->slot].run = r;
    d->n_running++;
    if (started)
        d->attempts_started++;
}

static void orc_dispatch(orc_daemon *d)
{
    while (!d->stopping) {
        int slot = orc_slot_find(d, 0);
        if (slot < 0)
            break;
        long job = next_job(d);
        if (job < 0)
            break;
        double t = tlm_clock_mono();
        tlm_err e;
        int64_t row = 0;
        if (orc_attempt_start(d, (size_t)job, slot, &row, &e)) {
            if (d->fatal)
                break;
            start_failed(d, (size_t)job, row, &e);
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
/* What an attempt's end means for its job: one verdict per outcome. */
typedef struct verdict {
    int status;          /* orc_job_status: the job's state here and in results.db */
    const char *reason;  /* jobs.reason, with the message (NULL: both cleared) */
    int failure;         /* a failure of the job's own making: counted against --max-attempts */
    int final_losses;    /* the `done` event's losses go into the job's row */
    double retry_in;     /* >= 0: started again after this many seconds, unless tlmd is stopping */
    uint64_t *count;     /* the summary's counter it adds to, or NULL */
    char say[TLM_MSG_MAX + 256]; /* the log line */
} verdict;

/* The one switch over the outcome (message may gain the machine's note). */
static void judge(orc_daemon *d, const orc_run *r, const orc_outcome *out, char *message, size_t cap, verdict *v)
{
    orc_job *j = &d->plan.jobs.v[r->job];
    const char *resumes = "it resumes on the next start";
    *v = (verdict){.status = ORC_PENDING, .reason = out->reason, .retry_in = -1};
    switch (out->next) {
    case ORC_NEXT_DONE:
        *v = (verdict){.status = ORC_DONE, .final_losses = 1, .retry_in = -1, .count = &d->done_now};
        snprintf(v->say, sizeof v->say, "job %.12s (%s) done in %.1f s, loss %.4g", j->key, r->label,
                 tlm_clock_mono() - r->started, r->final_loss);
        break;
    case ORC_NEXT_INTERRUPTED:
        *v = (verdict){.status = ORC_INTERRUPTED, .retry_in = -1, .count = &d->interrupted_now};
        snprintf(v->say, sizeof v->say, "job %.12s (%s) interrupted at step %lld; %s", j->key, r->label,
                 (long long)r->step, resumes);
        break;
    case ORC_NEXT_FAIL:
        v->status = ORC_FAILED;
        v->count = &d->failed_now;
        snprintf(v->say, sizeof v->say, "job %.12s (%s) failed (%s, not retried): %s", j->key, r->label,
                 out->reason, message);
        break;
    case ORC_NEXT_REQUEUE:
        v->retry_in = 0;
        snprintf(v->say, sizeof v->say, "job %.12s (%s) attempt %d reached its time limit at step %lld: %s", j->key,
                 r->label, r->n, (long long)r->step, d->stopping ? resumes : "submitted again");
        break;
    case ORC_NEXT_RETRY: {
        int machine = out->machine;
        j->streak++;
        j->machine_faults = machine ? j->machine_faults + 1 : 0;
        v->failure = !machine;
        int final = machine ? j->machine_faults >= d->o->max_machine_faults : j->failures + 1 >= d->o->max_attempts;
        if (machine) {
            char note[320];
            machine_note(d, j, final, note, sizeof note);
            size_t n = strlen(message);
            snprintf(message + n, cap - n, "%s%s", n ? "; " : "", note);
        }
        if (final) {
            v->status = ORC_FAILED;
            v->count = &d->failed_now;
            snprintf(v->say, sizeof v->say, "job %.12s (%s) failed (%s) after %d attempt(s): %s", j->key, r->label,
                     out->reason, machine ? j->machine_faults : j->failures + 1, message);
        } else {
            v->retry_in = retry_delay(d->o, j->streak);
            char when[48];
            fmt_retry(v->retry_in, when, sizeof when);
            snprintf(v->say, sizeof v->say, "job %.12s (%s) attempt %d ended: %s: %s; %s", j->key, r->label, r->n,
                     out->reason, message, d->stopping ? resumes : when);
        }
        break;
    }
    }
}

/* The attempt's end and its job's new state: one commit, before anything acts on it. */
static void record(orc_daemon *d, orc_run *r, const orc_outcome *out, const char *message, const verdict *v)
{
    const char *key = d->plan.jobs.v[r->job].key;
    tlm_err e;
    orc_batch(d); /* with the attempt's last events */
    int rc = orc_attempt_record_end(r, out->reason, message, &e);
    if (!rc && v->final_losses)
        rc = db_job_set_final(d->db, key, r->final_loss, r->final_val_loss, r->elapsed_s, &e);
    if (!rc && v->failure)
        rc = db_job_add_failure(d->db, key, &e);
    if (!rc)
        rc = db_job_set_status(d->db, key, v->status, v->reason, v->reason ? message : NULL, &e);
    if (rc)
        orc_fatal(d, &e);
    else
        orc_commit(d);
}

void orc_run_finished(orc_daemon *d, orc_run *r)
{
    orc_job *j = &d->plan.jobs.v[r->job];
    orc_exit x;
    orc_outcome out;
    orc_attempt_exit(r, &x);
    orc_classify(&x, &out);
    char message[TLM_MSG_MAX];
    orc_attempt_message(r, &out, message, sizeof message);
    verdict v;
    judge(d, r, &out, message, sizeof message, &v);
    if (!d->fatal)
        record(d, r, &out, message, &v);
    j->status = (uint8_t)v.status;
    j->failures += v.failure;
    if (v.count)
        (*v.count)++;
    orc_say(d, "%s", v.say);
    if (v.retry_in >= 0 && !d->stopping) {
        orc_retry_later(d, r->job, v.retry_in);
        d->retried_now++;
    }
    d->slots[r->slot].run = NULL;
    d->n_running--;
    orc_attempt_free(r);
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
            if (d->slots[s].run)
                orc_attempt_kill(d->slots[s].run, ORC_KILL_SHUTDOWN);
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
        return ORC_EXIT_ERROR;
    size_t done = 0;
    for (size_t i = 0; i < d->plan.jobs.n; i++)
        done += d->plan.jobs.v[i].status == ORC_DONE;
    if (done == d->plan.jobs.n)
        return ORC_EXIT_OK;
    return d->stopping ? ORC_EXIT_STOPPED : ORC_EXIT_FAILED;
}

/* The executor, its slots, the worker and this host's name. */
static int set_up(orc_daemon *d, tlm_err *e)
{
    const orc_opts *o = d->o;
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
        return e->code ? e->code : TLM_EINTERNAL;
    for (int i = 0; i < d->n_slots; i++)
        d->slots[i].spec = specs[i];
    if (gethostname(d->host, sizeof d->host) != 0)
        snprintf(d->host, sizeof d->host, "?");
    d->host[sizeof d->host - 1] = '\0';
    return 0;
}

typedef struct held {
    int lock_fd, runs_fd;
    int created;  /* results.db was made by this very command */
} held;

/* results.db (created, locked, opened), the runs folder (made, locked,
 * claimed), a dead predecessor's attempts closed, the plan loaded, the
 * executor's own recovery: 0, or the exit status. */
static int open_all(orc_daemon *d, held *h, int *discard, tlm_err *e)
{
    const orc_opts *o = d->o;
    /* the sweeps first: a bad or missing one is refused before results.db
     * or the runs folder exist (orc_plan_load reads them again, under the
     * lock, and records them) */
    orc_plan_needs needs;
    int rc = orc_plan_check(o, &needs, e);
    if (!rc && needs.ranks > 1)
        rc = d->ex.check_needs ? d->ex.check_needs(d, &needs, e)
                               : tlm_errf(e, TLM_ECONFIG, "sweep %s asks for %d ranks a job; the %s executor runs one",
                                          needs.sweep, needs.ranks, d->ex.name);
    if (rc)
        return orc_exit_error(rc);
    /* the lock is on the database file itself (whatever path names it), so
     * the file exists first; then the runs folder, locked too: a copy of the
     * database (the same id) must not share it with the original's daemon.
     * The database's refusals (a FIFO, a device, a folder; not a TLM
     * database, or a newer one) are the user's. */
    if (db_create(o->db_path, &h->created, e) || (h->lock_fd = orc_lock_acquire(o->db_path, e)) < 0 ||
        db_open(o->db_path, DB_READWRITE, &d->db, e))
        return orc_exit_error(e->code);
    if (tlm_mkdir_p(o->runs_dir, e)) {
        tlm_err_prefix(e, "--runs");
        return ORC_EXIT_ERROR;
    }
    if ((h->runs_fd = orc_lock_runs(o->runs_dir, e)) < 0 ||
        orc_pairing_claim(o->runs_dir, o->db_path, d->db, o->adopt_runs, stdout, e)) {
        /* a database made by this very command (a mistyped --db) goes again:
         * the refusal changes nothing */
        *discard = h->created && orc_exit_error(e->code) == ORC_EXIT_USAGE;
        return orc_exit_error(e->code);
    }
    if (orc_recover(d->db, stdout, e))
        return ORC_EXIT_ERROR;
    rc = orc_plan_load(&d->plan, o, d->db, stdout, e);
    if (rc)
        return orc_exit_error(rc);
    if ((d->ex.recover && d->ex.recover(d, e)) || db_checkpointer_start(d->db, o->db_path, 1000, &d->ckpt, e))
        return ORC_EXIT_ERROR;
    /* (what an executor adopted is running already) */
    char where[128];
    d->ex.where(d, where, sizeof where);
    printf("tlmd: %zu jobs, %zu to run %s, %d thread(s) each); worker %s\n", d->plan.jobs.n,
           d->plan.n_queue - (size_t)d->n_running, where, d->threads, d->worker);
    fflush(stdout);
    return 0;
}

/* The loop, until every job is settled or tlmd is stopped: tlmd's exit status. */
static int run_loop(orc_daemon *d, tlm_err *e)
{
    if (uv_loop_init(&d->loop)) {
        tlm_errf(e, TLM_EINTERNAL, "cannot start the event loop");
        return ORC_EXIT_ERROR;
    }
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
    if (d->fatal)
        *e = d->fatal_err;
    uv_run(&d->loop, UV_RUN_NOWAIT); /* close callbacks */
    uv_loop_close(&d->loop);
    return exit_status(d);
}

/* Every job of this run is settled: a --rerun that reset some of them has
 * finished, and the next --rerun trains them again (db.h db_job_rerun_done). */
static int end_reruns(orc_daemon *d, tlm_err *e)
{
    int rc = db_begin(d->db, e);
    for (size_t i = 0; !rc && i < d->plan.jobs.n; i++)
        rc = db_job_rerun_done(d->db, d->plan.jobs.v[i].key, e);
    if (!rc)
        return db_commit(d->db, e);
    db_rollback(d->db);
    return rc;
}

int orc_daemon_run(const orc_opts *o, tlm_err *e)
{
    orc_daemon *d = calloc(1, sizeof *d);
    if (!d) {
        tlm_errf(e, TLM_ENOMEM, "out of memory");
        return ORC_EXIT_ERROR;
    }
    d->o = o;
    d->t0 = tlm_clock_mono();
    d->tty = o->progress < 0 ? isatty(STDOUT_FILENO) : o->progress;
    held h = {.lock_fd = -1, .runs_fd = -1};
    int discard = 0;
    int status = set_up(d, e) ? ORC_EXIT_USAGE : open_all(d, &h, &discard, e);
    if (!status)
        status = run_loop(d, e);
    if ((status == ORC_EXIT_OK || status == ORC_EXIT_FAILED) && end_reruns(d, e))
        status = ORC_EXIT_ERROR;
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
    if (h.lock_fd >= 0)
        close(h.lock_fd);
    if (h.runs_fd >= 0)
        close(h.runs_fd);
    free(d);
    return status;
}
