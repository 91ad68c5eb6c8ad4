/* exec_slurm.c: the slurm executor (--executor slurm; docs/tlmd.md
 * "Running on a Slurm cluster").  One sbatch per attempt, of a one-line
 * batch script whose interpreter is tlmd itself (slurm_job.h), so nothing
 * on the way is a shell.  The worker appends its events to
 * RUN_DIR/slurm/TOKEN.R.events in the shared run folder; every tick tlmd
 * reads the complete lines after the attempt's offset and commits the new
 * offset in the same transaction as their rows, so a kill -9 of tlmd loses
 * and duplicates nothing.  The attempt's end is the end file the batch job
 * writes (never sacct, which many clusters disable).  Scheduler calls are
 * few and batched: one squeue for the whole sweep every --slurm-poll
 * seconds, one scancel for all the jobs a tick stops.
 *
 * Recording: an attempt row (state 'submitting', its token in the job's
 * --comment) is committed before sbatch runs, the job id after (both
 * through attempt.c, which writes every row); a new tlmd
 * asks squeue once and adopts every open attempt (finding by comment the
 * jobs whose id it never recorded; slurm_adopt.c).  A failed squeue means "unknown":
 * nothing is taken for gone until squeue answers and no longer lists it.
 *
 * Ends: a requeue by Slurm (preemption, scontrol requeue) runs the batch
 * job again under the same id with SLURM_RESTART_COUNT + 1: the attempt
 * ends as interrupted (not a failure) and a new one of the same Slurm job
 * begins, which resumes from the checkpoint.  The signal before the time
 * limit (--signal=B:USR1@S) makes the worker checkpoint; tlmd submits the
 * job again at once (ORC_NEXT_REQUEUE, not a failure).  Everything else
 * is handed back to attempt.c as for a local worker.
 * Must not: take a job for gone on a failed squeue, or submit a job whose
 * attempt row is not committed (record_first: attempt.c commits it). */
#include "orchestrator/exec_slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "engine/config/config.h"
#include "orchestrator/cmd.h"
#include "orchestrator/rundir.h"
#include "orchestrator/slurm_job.h"

#define CMD_TIMEOUT_S 60      /* sbatch, squeue, scancel: a controller this slow counts as failing */
#define SQUEUE_OUT_MAX (16u << 20)
#define READ_CHUNK (1u << 20) /* events read per run and tick */
#define SHEBANG_MAX 255       /* Linux reads this much of a script's #! line (BINPRM_BUF_SIZE - 1) */


/* ------------------------------------------------------------ helpers */
static int random_token(char out[33], tlm_err *e)
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof b)
        return tlm_errf(e, TLM_EIO, "/dev/urandom: cannot read a token");
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

void orc__slurm_set_paths(orc_run *r)
{
    orc_slurm_run *s = r->ex;
    tlm_err e;
    if (orc_slurm_file(s->events, sizeof s->events, r->run_dir, s->token, s->restart, ".events", &e) ||
        orc_slurm_file(s->end, sizeof s->end, r->run_dir, s->token, s->restart, ".end", &e))
        s->events[0] = s->end[0] = '\0'; /* cannot happen: run folders leave room (TLM_RUN_DIR_MAX) */
}

void orc__slurm_set_where(orc_run *r)
{
    orc_slurm_run *s = r->ex;
    snprintf(r->where, sizeof r->where, "Slurm job %s", s->job[0] ? s->job : "(id not known yet)");
}

/* The batch script: its interpreter is tlmd, so the node runs no shell. */
int orc__slurm_write_script(orc_slurm_ctx *c, const orc_opts *o, tlm_err *e)
{
    char text[PATH_MAX + 64];
    int n = snprintf(text, sizeof text, "#!%s %s\n", c->tlmd, ORC_SLURM_JOB_ARG);
    if (n < 0 || n > SHEBANG_MAX || strchr(c->tlmd, ' '))
        return tlm_errf(e, TLM_ECONFIG,
                        "--executor slurm: tlmd's path %s is too long for a script's #! line (at most %d bytes with "
                        "' %s') or holds a space; install or link tlmd under a shorter path",
                        c->tlmd, SHEBANG_MAX, ORC_SLURM_JOB_ARG);
    if ((size_t)snprintf(c->script, sizeof c->script, "%s/tlmd-slurm-job", o->runs_dir) >= sizeof c->script)
        return tlm_errf(e, TLM_ECONFIG, "--runs %s: path too long", o->runs_dir);
    return tlm_write_file_atomic(c->script, text, (size_t)n, e);
}

/* "17|RUNNING|n1|tlmd:<dbid>:<token>" lines; only this database's jobs are kept. */
static int parse_squeue(orc_slurm_ctx *c, char *out, orc_sq_job **jobs, size_t *n, tlm_err *e)
{
    *jobs = NULL;
    *n = 0;
    size_t cap = 0;
    char prefix[8 + DB_ID_LEN];
    snprintf(prefix, sizeof prefix, "tlmd:%s:", c->dbid);
    size_t plen = strlen(prefix);
    for (char *save = NULL, *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            char *bar = f[i - 1] ? strchr(f[i - 1], '|') : NULL;
            if (bar) {
                *bar = '\0';
                f[i] = bar + 1;
            }
        }
        if (!f[3] || strncmp(f[3], prefix, plen) != 0)
            continue;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            orc_sq_job *t = realloc(*jobs, nc * sizeof *t);
            if (!t) {
                free(*jobs);
                *jobs = NULL;
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            }
            *jobs = t;
            cap = nc;
        }
        orc_sq_job *j = &(*jobs)[(*n)++];
        snprintf(j->id, sizeof j->id, "%s", f[0]);
        snprintf(j->state, sizeof j->state, "%s", f[1]);
        snprintf(j->node, sizeof j->node, "%s", f[2]);
        snprintf(j->token, sizeof j->token, "%s", f[3] + plen);
    }
    return 0;
}

/* One squeue for all of this user's jobs.  0 answered (*jobs: ours), else failed (e set). */
int orc__squeue(orc_slurm_ctx *c, orc_sq_job **jobs, size_t *n, tlm_err *e)
{
    char user[80];
    snprintf(user, sizeof user, "--user=%s", c->user);
    char *argv[] = {"squeue", "--noheader", user, "--format=%i|%T|%N|%k", NULL};
    orc_cmd_result res;
    c->squeue_calls++;
    /* the loop waits for it: a controller that does not answer (squeue
     * itself tries for about 10 s) costs at most half a poll interval */
    double limit = c->d->o->slurm_poll / 2;
    int rc = orc_cmd_run(argv, limit < 2 ? 2 : limit > CMD_TIMEOUT_S ? CMD_TIMEOUT_S : limit, SQUEUE_OUT_MAX, &res, e);
    if (rc)
        return rc;
    if (res.status != 0) {
        rc = tlm_errf(e, TLM_EIO, "squeue %s: %s", res.timed_out ? "timed out" : "failed",
                      res.err[0] ? res.err : "no message");
        orc_cmd_result_free(&res);
        return rc;
    }
    rc = parse_squeue(c, res.out, jobs, n, e);
    orc_cmd_result_free(&res);
    return rc;
}

const orc_sq_job *orc__sq_find(const orc_sq_job *v, size_t n, const char *token)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].token, token))
            return &v[i];
    return NULL;
}

/* ------------------------------------------------------------ events */
/* The complete lines after the offset, each handed back with the offset
 * after it (recorded in the batch with its rows).  final: the end file is
 * there, so a last line without its newline will never be completed. */
static void read_events(orc_run *r, int final)
{
    orc_daemon *d = r->d;
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    orc_slurm_run *s = r->ex;
    if (!s->events[0] || d->fatal)
        return;
    int fd = open(s->events, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* not there yet (pending), or the file system hides it for now */
    for (;;) {
        ssize_t n = pread(fd, c->buf, READ_CHUNK, (off_t)s->offset);
        if (n <= 0)
            break;
        size_t used = 0;
        char *p = c->buf;
        while (used < (size_t)n && !d->fatal) {
            char *nl = memchr(p + used, '\n', (size_t)n - used);
            if (!nl)
                break;
            size_t len = (size_t)(nl - (p + used));
            orc_attempt_line(r, p + used, len, s->offset + (int64_t)(used + len + 1));
            used += len + 1;
        }
        if (d->fatal)
            break;
        if (!used && ((size_t)n == READ_CHUNK || final)) {
            /* a chunk without a newline is far past any valid line: skipped;
             * after the end a partial line will never be completed */
            const char *why = (size_t)n == READ_CHUNK ? "a line longer than the read buffer"
                                                      : "the last line has no newline (the worker stopped mid-write)";
            orc_attempt_bad_line(r, why, s->offset + n);
            if (d->fatal)
                break;
            used = (size_t)n;
            s->offset += n;
            if ((size_t)n < READ_CHUNK)
                break;
            continue;
        }
        s->offset += (int64_t)used;
        if (!used || ((size_t)n < READ_CHUNK && used == (size_t)n))
            break;
    }
    close(fd);
}

/* ------------------------------------------------------------ ends */
static void finish(orc_run *r, int exited, int status, int sig)
{
    orc_slurm_run *s = r->ex;
    orc_attempt_sched(r, NULL, "ended", s->node[0] ? s->node : NULL);
    orc_attempt_stream_end(r);
    orc_attempt_exited(r, exited ? status : 0, exited ? 0 : (sig > 0 ? sig : SIGKILL));
}

/* Slurm ran the batch job again (requeue): this attempt ends, not as a
 * failure, and the next one of the same Slurm job begins. */
static void next_restart(orc_run *r)
{
    orc_slurm_run *s = r->ex;
    char message[TLM_MSG_MAX];
    tlm_msg_printf(message, sizeof message,
                   "Slurm requeued job %s (preemption or scontrol requeue) at step %lld; it runs again under the same "
                   "id, restart %lld, from its last checkpoint; not a failure",
                   s->job, (long long)r->step, (long long)(s->restart + 1));
    orc_attempt_sched(r, NULL, "requeued", NULL);
    const orc_slurm_end *x = &s->endinfo;
    int64_t status = x->exited ? x->status : -1;
    int sig = x->exited ? 0 : x->signal;
    /* the next attempt's part, which its row describes */
    s->restart++;
    s->offset = 0;
    s->have_end = 0;
    s->gone_polls = 0;
    snprintf(s->state, sizeof s->state, "PENDING");
    orc__slurm_set_paths(r);
    orc_attempt_requeued(r, status, sig, message);
}

/* What the end file (or its absence once Slurm no longer lists the job) says. */
static void check_end(orc_run *r)
{
    orc_daemon *d = r->d;
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    orc_slurm_run *s = r->ex;
    if (!s->have_end) {
        tlm_err e;
        int got = s->end[0] ? orc_slurm_end_read(s->end, &s->endinfo, &e) : 0;
        if (got < 0) {
            orc_say(d, "job %.12s: %s; waiting for it to be whole", d->plan.jobs.v[r->job].key, e.msg);
            return;
        }
        if (got == 1) {
            s->have_end = 1;
            s->end_poll = c->polls_ok;
            if (s->endinfo.node[0])
                snprintf(s->node, sizeof s->node, "%s", s->endinfo.node);
        }
    }
    if (s->have_end) {
        read_events(r, 1);
        if (d->fatal)
            return;
        const orc_slurm_end *x = &s->endinfo;
        int by_slurm = x->slurm_signal[0] && !r->kill_reason;
        if (by_slurm && !strcmp(x->slurm_signal, "USR1") && x->exited && x->status == TLM_EXIT_INTERRUPTED) {
            /* resubmitted for free only when it trained something: a time
             * limit too short for one step would otherwise loop forever
             * (it then counts as a stop from outside, against --max-attempts) */
            if (r->got_start && r->step > (r->resumed_from > 0 ? r->resumed_from : 0))
                r->kill_reason = ORC_KILL_TIMELIMIT;
        } else if (by_slurm && strcmp(x->slurm_signal, "USR1") != 0) {
            /* a SIGTERM that tlmd did not send: preemption, scontrol requeue,
             * or a scancel from outside; the next run of the batch job, or
             * squeue, tells which */
            char next[sizeof s->events];
            tlm_err e;
            int again = !orc_slurm_file(next, sizeof next, r->run_dir, s->token, s->restart + 1, ".events", &e) &&
                        access(next, F_OK) == 0;
            if (!again && c->polls_ok <= s->end_poll)
                return; /* no squeue since the end: wait for one */
            if (!again && s->gone_polls == 0 && strcmp(s->state, "COMPLETING") != 0 && strcmp(s->state, "ended"))
                again = 1; /* listed again, not merely finishing */
            if (again) {
                next_restart(r);
                return;
            }
            if (s->gone_polls == 0)
                return; /* still completing: wait */
        }
        finish(r, x->exited, x->status, x->signal);
        return;
    }
    /* no end file: only when two answers of squeue in a row no longer list
     * the job (a shared file system may show the file a little late) */
    if (s->gone_polls < 2)
        return;
    read_events(r, 1);
    if (d->fatal)
        return;
    if (!s->ever_running && r->kill_reason && !r->got_start) {
        finish(r, 0, 0, SIGTERM); /* cancelled before it ran: interrupted, or the timeout's retry */
        return;
    }
    snprintf(r->stall_note, sizeof r->stall_note, "%s",
             r->got_start ? "the Slurm job ended without an end file: its node failed, or Slurm killed it"
                          : "the Slurm job ended before its worker ran: cancelled, or it could not start");
    finish(r, 0, 0, SIGKILL);
}

/* ------------------------------------------------------------ scheduler calls */
static void scancel(orc_slurm_ctx *c, const char *const *extra, char **ids, size_t n)
{
    if (!n)
        return;
    char **argv = calloc(n + 6, sizeof *argv);
    if (!argv)
        return;
    size_t k = 0;
    argv[k++] = "scancel";
    for (; *extra; extra++)
        argv[k++] = (char *)*extra;
    for (size_t i = 0; i < n; i++)
        argv[k++] = ids[i];
    argv[k] = NULL;
    orc_cmd_result res;
    tlm_err e;
    c->scancel_calls++;
    if (orc_cmd_run(argv, CMD_TIMEOUT_S, 1 << 16, &res, &e))
        orc_say(c->d, "scancel: %s; tried again at the next tick", e.msg);
    else {
        if (res.status != 0)
            orc_say(c->d, "scancel exited %d: %s", res.status, res.err[0] ? res.err : "no message");
        orc_cmd_result_free(&res);
    }
    free(argv);
}

/* Every stop this tick asked for, in two calls at most: SIGTERM to the
 * batch job of running jobs (it passes it on to the worker, which
 * checkpoints), a plain cancel of pending ones and of those past the grace. */
static void send_stops(orc_daemon *d)
{
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    char *term[ORC_MAX_SLOTS], *kill_[ORC_MAX_SLOTS];
    size_t nt = 0, nk = 0;
    for (int i = 0; i < d->n_slots; i++) {
        orc_run *r = d->slots[i].run;
        if (!r)
            continue;
        orc_slurm_run *s = r->ex;
        if (!s->job[0])
            continue; /* its id is not known yet: the stop waits for squeue to find it */
        /* running: squeue said so, or its worker has written (squeue may not have been asked since) */
        int running = s->ever_running || r->got_start || s->offset > 0 || !strcmp(s->state, "RUNNING");
        if (s->want_kill || (s->want_term && !running))
            kill_[nk++] = s->job;
        else if (s->want_term)
            term[nt++] = s->job;
        s->want_kill = s->want_term = 0;
    }
    static const char *const sig_term[] = {"--batch", "--signal=TERM", NULL};
    static const char *const plain[] = {NULL};
    scancel(c, sig_term, term, nt);
    scancel(c, plain, kill_, nk);
}

void orc__slurm_update_state(orc_run *r, const orc_sq_job *q)
{
    orc_daemon *d = r->d;
    orc_slurm_run *s = r->ex;
    int changed = strcmp(s->state, q->state) != 0 || (q->node[0] && strcmp(s->node, q->node) != 0) ||
                  !s->job[0];
    if (!s->job[0]) {
        snprintf(s->job, sizeof s->job, "%s", q->id);
        orc__slurm_set_where(r);
        orc_say(d, "job %.12s: found Slurm job %s by its comment", d->plan.jobs.v[r->job].key, s->job);
    }
    snprintf(s->state, sizeof s->state, "%s", q->state);
    if (q->node[0] && strcmp(q->node, "(null)") != 0)
        snprintf(s->node, sizeof s->node, "%s", q->node);
    if (!strcmp(q->state, "RUNNING"))
        s->ever_running = 1;
    if (changed)
        orc_attempt_sched(r, s->job, s->state, s->node[0] ? s->node : NULL);
}

static void poll_squeue(orc_daemon *d)
{
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    orc_sq_job *jobs = NULL;
    size_t n = 0;
    tlm_err e;
    if (orc__squeue(c, &jobs, &n, &e)) {
        if (c->squeue_failing++ == 0)
            orc_say(d, "%s: the Slurm jobs' states are unknown until squeue answers; none is taken for lost", e.msg);
        return;
    }
    if (c->squeue_failing)
        orc_say(d, "squeue answers again (after %d failed call(s))", c->squeue_failing);
    c->squeue_failing = 0;
    c->polls_ok++;
    for (int i = 0; i < d->n_slots; i++) {
        orc_run *r = d->slots[i].run;
        if (!r)
            continue;
        orc_slurm_run *s = r->ex;
        const orc_sq_job *q = orc__sq_find(jobs, n, s->token);
        if (q) {
            s->gone_polls = 0;
            orc__slurm_update_state(r, q);
        } else {
            s->gone_polls++;
        }
    }
    free(jobs);
}

/* ------------------------------------------------------------ the executor's table */
static void slurm_signal(orc_run *r, int sig)
{
    orc_slurm_run *s = r->ex;
    if (sig == SIGKILL)
        s->want_kill = 1;
    else if (sig == SIGTERM)
        s->want_term = 1;
}

static void slurm_tick_run(orc_run *r, double now)
{
    orc_slurm_run *s = r->ex;
    const orc_opts *o = r->d->o;
    if (r->finished)
        return;
    /* silence counts only once the worker runs: a queued job may wait for days */
    if (!r->term_sent && s->ever_running && r->got_start && now - r->last_event > o->heartbeat_timeout) {
        orc_say(r->d, "job %.12s (%s): silent for %.0f s; stopping Slurm job %s", r->d->plan.jobs.v[r->job].key,
                r->label, now - r->last_event, s->job);
        orc_attempt_stop(r, ORC_KILL_TIMEOUT);
    } else if (r->term_sent && !r->kill_sent && now - r->term_at > o->kill_grace) {
        orc_attempt_kill(r, ORC_KILL_NONE);
    }
}

static void slurm_poll(orc_daemon *d, double now)
{
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    for (int i = 0; i < d->n_slots && !d->fatal; i++)
        if (d->slots[i].run)
            read_events(d->slots[i].run, 0);
    send_stops(d);
    if (now >= c->next_poll && d->n_running > 0) {
        poll_squeue(d);
        c->next_poll = now + d->o->slurm_poll;
    }
    /* check_end may end a run (freeing it) and start the next: go by slot */
    for (int i = 0; i < d->n_slots && !d->fatal; i++) {
        orc_run *r = d->slots[i].run;
        if (r && !r->finished)
            check_end(r);
    }
}

static void slurm_release(orc_run *r)
{
    free(r->ex);
    r->ex = NULL;
}

static void slurm_shutdown(orc_daemon *d)
{
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    if (!c)
        return;
    printf("tlmd: Slurm calls: %llu sbatch, %llu squeue, %llu scancel\n", (unsigned long long)c->sbatch_calls,
           (unsigned long long)c->squeue_calls, (unsigned long long)c->scancel_calls);
    free(c->buf);
    free(c);
    d->ex.ctx = NULL;
}

/* ------------------------------------------------------------ start */
static int slurm_prepare(orc_run *r, tlm_err *e)
{
    orc_slurm_run *s = calloc(1, sizeof *s);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    r->ex = s;
    int rc = random_token(s->token, e);
    if (rc)
        return rc;
    snprintf(s->state, sizeof s->state, "submitting");
    orc__slurm_set_paths(r);
    return 0;
}

static void slurm_fill_row(const orc_run *r, db_attempt_row *row)
{
    const orc_slurm_run *s = r->ex;
    row->device = "slurm";
    row->executor = "slurm";
    row->token = s->token;
    row->slurm_job = s->job[0] ? s->job : NULL;
    row->slurm_state = s->state;
    row->slurm_restart = s->restart;
}

/* sbatch's arguments, strings of their own (freed with it) */
typedef struct sbatch_cmd {
    char *argv[64 + ORC_RES_EXTRA_MAX + ORC_WORKER_ARGC];
    char *owned[20]; /* every push of sbatch_args, at most 14 */
    size_t k, n_owned;
    int oom;
} sbatch_cmd;

static void push(sbatch_cmd *b, const char *fmt, const char *v)
{
    char *s = NULL;
    if (asprintf(&s, fmt, v) < 0)
        s = NULL;
    b->oom |= !s;
    b->owned[b->n_owned++] = s;
    b->argv[b->k++] = s;
}

static void sbatch_cmd_free(sbatch_cmd *b)
{
    for (size_t i = 0; i < b->n_owned; i++)
        free(b->owned[i]);
}

/* The Slurm job's name, as squeue shows it: "<sweep>:<label>:s<seed>"
 * (demo:cosine_1.5->0.5:s0), anything but letters, digits and ._-+=>,@%
 * as '_' (blanks and quotes read badly in squeue's columns and in the
 * scripts that parse them). */
static void job_name(const orc_run *r, char *out, size_t cap)
{
    const orc_daemon *d = r->d;
    const char *sweep = d->plan.sweeps[d->plan.jobs.v[r->job].sweep].name;
    int n = snprintf(out, cap, "%s:%s:s%lld", sweep, r->label, (long long)r->seed);
    for (int i = 0; i < n && (size_t)i < cap - 1; i++) {
        char ch = out[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              strchr("._-+=>,@%:", ch)))
            out[i] = '_';
    }
}

/* sbatch [options] SCRIPT RUN_DIR TOKEN WORKER ARGS... (docs/tlmd.md "What tlmd submits"); a job of
 * several ranks: ... TOKEN SRUN --mpi=pmix [its options] WORKER ARGS (docs/parallel.md) */
static void sbatch_args(orc_run *r, const orc_resources *res, int threads, const char *run_abs,
                        const orc_worker_cmd *w, sbatch_cmd *b)
{
    const int ranks = orc_resources_ranks(res);
    orc_daemon *d = r->d;
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    orc_slurm_run *s = r->ex;
    char cpus[16], gres[24], sig[32], name[128], comment[80];
    snprintf(cpus, sizeof cpus, "%d", threads);
    snprintf(gres, sizeof gres, "gpu:%d", res->gpus);
    snprintf(sig, sizeof sig, "B:USR1@%.0f", d->o->slurm_signal);
    job_name(r, name, sizeof name);
    snprintf(comment, sizeof comment, "tlmd:%s:%s", c->dbid, s->token);
    b->argv[b->k++] = "sbatch";
    b->argv[b->k++] = "--parsable";
    push(b, "--job-name=%s", name);
    push(b, "--comment=%s", comment);
    b->argv[b->k++] = "--requeue";
    push(b, "--signal=%s", sig);
    b->argv[b->k++] = "--open-mode=append";
    push(b, "--output=%s/worker.log", run_abs);
    push(b, "--chdir=%s", c->cwd);
    push(b, "--cpus-per-task=%s", cpus);
    if (ranks > 1) {
        /* one attempt, one job: nodes x ranks_per_node tasks, which srun
         * inside the batch script starts */
        char nodes[16], per[16];
        snprintf(nodes, sizeof nodes, "%d", res->nodes > 0 ? res->nodes : 1);
        snprintf(per, sizeof per, "%d", res->ranks_per_node > 0 ? res->ranks_per_node : 1);
        push(b, "--nodes=%s", nodes);
        push(b, "--ntasks-per-node=%s", per);
    }
    if (res->gpus > 0)
        push(b, "--gres=%s", gres); /* per node: one GPU a rank (check_needs) */
    const char *const opt[][2] = {{"--time=%s", res->time},
                                  {"--partition=%s", res->partition},
                                  {"--account=%s", res->account},
                                  {"--qos=%s", res->qos}};
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++)
        if (opt[i][1][0])
            push(b, opt[i][0], opt[i][1]);
    for (int i = 0; i < res->n_extra; i++)
        b->argv[b->k++] = (char *)res->extra[i];
    b->argv[b->k++] = c->script;
    b->argv[b->k++] = (char *)run_abs;
    b->argv[b->k++] = s->token;
    if (ranks > 1) {
        /* the ranks are srun's tasks, wired by PMIx; a rank that dies ends
         * the step (and so the attempt); srun passes the batch script's
         * SIGTERM on to them (Slurm 22.05's srun no longer takes
         * --cpus-per-task from the job: given again) */
        b->argv[b->k++] = c->srun;
        b->argv[b->k++] = "--mpi=pmix";
        b->argv[b->k++] = "--kill-on-bad-exit=1";
        push(b, "--cpus-per-task=%s", cpus);
    }
    for (size_t i = 0; w->argv[i]; i++)
        b->argv[b->k++] = w->argv[i];
    b->argv[b->k] = NULL;
}

/* sbatch, and the job id it prints */
static int submit(orc_slurm_ctx *c, sbatch_cmd *b, orc_slurm_run *s, tlm_err *e)
{
    orc_cmd_result out = {0};
    int rc = b->oom ? tlm_errf(e, TLM_ENOMEM, "out of memory") : 0;
    c->sbatch_calls++;
    if (!rc)
        rc = orc_cmd_run(b->argv, CMD_TIMEOUT_S, 1 << 16, &out, e);
    if (!rc && out.status != 0)
        rc = tlm_errf(e, TLM_EIO, "sbatch %s: %s", out.timed_out ? "timed out" : "failed",
                      out.err[0] ? out.err : "no message");
    size_t idlen = rc ? 0 : strspn(out.out, "0123456789");
    if (!rc && (idlen == 0 || idlen >= sizeof s->job))
        rc = tlm_errf(e, TLM_EIO, "sbatch --parsable printed '%.60s', not a job id", out.out);
    if (!rc)
        memcpy(s->job, out.out, idlen);
    orc_cmd_result_free(&out);
    return rc;
}

/* The attempt's row is committed (record_first); a failure here leaves it
 * to the daemon to close. */
static int slurm_launch(orc_run *r, tlm_err *e)
{
    orc_daemon *d = r->d;
    orc_slurm_ctx *c = orc__slurm_ctx(d);
    orc_slurm_run *s = r->ex;
    orc_resources res;
    orc_resources_merge(&res, &d->o->res, &d->plan.sweeps[d->plan.jobs.v[r->job].sweep].res);
    char run_abs[PATH_MAX + 32];
    const char *base = strrchr(r->run_dir, '/');
    int threads = res.cpus > 0 ? res.cpus : d->threads;
    orc_worker_cmd w;
    orc_worker_place at = {.run_dir = run_abs, .device = "cpu", .threads = threads};
    if ((size_t)snprintf(run_abs, sizeof run_abs, "%s/%s", c->abs_runs, base ? base + 1 : r->run_dir) >=
            sizeof run_abs ||
        orc_attempt_worker_cmd(r, &at, &w, e))
        return tlm_errf(e, TLM_ECONFIG, "--runs %s: path too long for the nodes", c->abs_runs);
    sbatch_cmd b = {.k = 0};
    sbatch_args(r, &res, threads, run_abs, &w, &b);
    int rc = submit(c, &b, s, e);
    sbatch_cmd_free(&b);
    if (rc)
        return rc;
    snprintf(s->state, sizeof s->state, "PENDING");
    orc__slurm_set_where(r);
    orc_attempt_sched(r, s->job, s->state, NULL);
    double now = tlm_clock_mono();
    if (c->next_poll < now + 1)
        c->next_poll = now + 1; /* the first look at a new job: soon, but one call for a burst */
    return 0;
}

/* A job of several ranks on Slurm: srun on PATH (it runs in the batch
 * script, on the job's first node: the same install is assumed), and one
 * rank per GPU when the jobs ask for GPUs. */
static int slurm_check_needs(const orc_daemon *d, const orc_plan_needs *n, tlm_err *e)
{
    orc_slurm_ctx *c = d->ex.ctx;
    const char *path = getenv("PATH");
    c->srun[0] = '\0';
    for (const char *p = path ? path : ""; *p && !c->srun[0];) {
        size_t k = strcspn(p, ":");
        char cand[PATH_MAX];
        if (k && k + sizeof "/srun" < sizeof cand) {
            snprintf(cand, sizeof cand, "%.*s/srun", (int)k, p);
            if (access(cand, X_OK) == 0)
                snprintf(c->srun, sizeof c->srun, "%s", cand);
        }
        p += k + (p[k] == ':');
    }
    if (!c->srun[0])
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s asks for %d ranks a job, which run as the tasks of srun --mpi=pmix: srun is not "
                        "on PATH (Debian: slurm-client)",
                        n->sweep, n->ranks);
    if (n->gpu_sweep[0])
        return tlm_errf(e, TLM_ECONFIG,
                        "sweep %s: gpus %d (per node) for %d ranks per node: a job of several ranks runs one rank "
                        "per GPU; set resources.gpus equal to ranks_per_node",
                        n->gpu_sweep, n->gpus, n->gpu_ranks_per_node);
    return 0;
}

static int slurm_where(const orc_daemon *d, char *buf, size_t n)
{
    return snprintf(buf, n, "as Slurm jobs (at most %d at a time", d->n_slots);
}

int orc_executor_slurm(orc_executor *x, const orc_opts *o, tlm_err *e)
{
    (void)o;
    orc_slurm_ctx *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(READ_CHUNK + 1))) {
        free(c);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    ssize_t n = readlink("/proc/self/exe", c->tlmd, sizeof c->tlmd - 1);
    if (n <= 0) {
        free(c->buf);
        free(c);
        return tlm_errf(e, TLM_EIO, "/proc/self/exe: %s", strerror(errno));
    }
    c->tlmd[n] = '\0';
    if (!getcwd(c->cwd, sizeof c->cwd)) {
        free(c->buf);
        free(c);
        return tlm_errf(e, TLM_EIO, "the folder tlmd runs in: %s", strerror(errno));
    }
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_name)
        snprintf(c->user, sizeof c->user, "%s", pw->pw_name);
    else
        snprintf(c->user, sizeof c->user, "%u", (unsigned)getuid());
    *x = (orc_executor){
        .name = "slurm",
        .ctx = c,
        .record_first = 1,
        .where = slurm_where,
        .recover = orc__slurm_recover,
        .prepare = slurm_prepare,
        .fill_row = slurm_fill_row,
        .check_needs = slurm_check_needs,
        .launch = slurm_launch,
        .signal = slurm_signal,
        .tick_run = slurm_tick_run,
        .poll = slurm_poll,
        .release = slurm_release,
        .shutdown = slurm_shutdown,
    };
    return 0;
}
