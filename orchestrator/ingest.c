/* ingest.c: worker event lines -> results.db rows.  Every line is checked
 * (event.c) before anything is written; refused lines become protocol
 * errors in `logs`.  Rows go into the daemon's batch transaction; events
 * that something will rely on (a checkpoint the worker may resume from, the
 * end of a run) commit the batch at once: the daemon persists an event
 * before acting on it.
 * Must not: act on a line it could not check. */
#include "orchestrator/daemon.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"

#define PROTOCOL_ERRORS_LOGGED 20 /* per attempt; later ones are only counted */

static int db_ok(orc_run *r, int rc, tlm_err *e)
{
    if (rc)
        orc_fatal(r->d, e);
    return rc == 0;
}

void orc_ingest_protocol_error(orc_run *r, const char *why, const char *line, size_t len)
{
    orc_daemon *d = r->d;
    r->protocol_errors++;
    d->bad_lines++;
    if (d->fatal || r->protocol_errors > PROTOCOL_ERRORS_LOGGED + 1)
        return;
    char msg[512];
    if (r->protocol_errors == PROTOCOL_ERRORS_LOGGED + 1) {
        snprintf(msg, sizeof msg, "protocol: more invalid lines; only counted from here on");
    } else {
        /* the line is untrusted: keep a printable ASCII excerpt only */
        char excerpt[161];
        size_t n = 0;
        for (size_t i = 0; line && i < len && n < sizeof excerpt - 1; i++) {
            unsigned char c = (unsigned char)line[i];
            excerpt[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
        }
        excerpt[n] = '\0';
        tlm_msg_printf(msg, sizeof msg, "protocol: %s%s%s%s", why, line ? ": " : "", excerpt,
                       line && len > n ? "..." : "");
    }
    tlm_err e;
    orc_batch(d);
    db_ok(r, db_log(d->db, d->plan.jobs.v[r->job].key, r->attempt, "error", msg, &e), &e);
    d->batch_rows++;
}

static void on_start(orc_run *r, const orc_event *ev, const char *key, tlm_err *e)
{
    orc_daemon *d = r->d;
    if (strcmp(ev->config_id, key) != 0) {
        char why[200];
        snprintf(why, sizeof why, "start event: config_id %.12s... is not this job's key %.12s...", ev->config_id,
                 key);
        orc_ingest_protocol_error(r, why, NULL, 0);
        orc_say(d, "job %.12s: the worker trains another config (config_id %.12s); stopping it", key,
                ev->config_id);
        orc_attempt_stop(r, ORC_KILL_PROTOCOL); /* through the run's own executor */
        return;
    }
    r->got_start = 1;
    r->step = ev->step;
    r->tokens = ev->tokens;
    r->resumed_from = ev->resumed_from_step;
    if (ev->total_tokens > 0)
        r->total_tokens = ev->total_tokens;
    db_env_row env = {.attempt = r->attempt, .git_commit = ev->git_commit, .tlm_version = ev->tlm_version,
                      .compiler = ev->compiler, .blas = ev->blas, .blas_kernel = ev->blas_kernel,
                      .threads = ev->threads, .cuda = ev->cuda, .driver = ev->driver, .host = ev->host,
                      .os = ev->os, .cmdline = ev->argv};
    if (db_ok(r, db_env_put(d->db, &env, e), e))
        db_ok(r, db_attempt_set_resumed(d->db, r->attempt, ev->resumed_from_step, e), e);
    if (ev->resumed_from_step >= 0)
        orc_say(d, "job %.12s (%s): resumed from step %lld", key, r->label, (long long)ev->resumed_from_step);
}

/* Why a parsed event cannot be taken from this run now, or NULL. */
static const char *refused(const orc_run *r, const orc_event *ev, const char *key)
{
    if (ev->job && strcmp(ev->job, key) != 0)
        return "the event names another job";
    if (r->terminal)
        return "an event after the run's end (done, stopped or error)";
    /* set-up (data, model, a checkpoint to load) may take long: heartbeats
     * of phase "setup" keep the worker alive before its start event */
    int setup_beat = ev->kind == ORC_EV_HEARTBEAT && tlm_phase_find(ev->phase) == TLM_PHASE_SETUP;
    if (!r->got_start && ev->kind != ORC_EV_START && ev->kind != ORC_EV_ERROR && !setup_beat)
        return "an event before the start event (only heartbeats of phase setup may come first)";
    if (r->got_start && ev->kind == ORC_EV_START)
        return "a second start event";
    return NULL;
}

/* done, stopped or error: the run's last event, committed at once */
static void on_end(orc_run *r, const orc_event *ev)
{
    r->terminal = 1;
    if (ev->kind == ORC_EV_DONE) {
        r->saw_done = 1;
        r->loss = r->final_loss = ev->loss;
        r->has_loss = 1;
        r->final_val_loss = ev->val_loss;
        r->elapsed_s = ev->elapsed_s;
        /* a final number that is not finite is no result (docs/tlmd.md): the
         * attempt ends as diverged, whatever the worker's exit status */
        if (!isfinite(ev->loss) || (ev->has_val_loss && !isfinite(ev->val_loss))) {
            r->done_nonfinite = 1;
            tlm_msg_printf(r->message, sizeof r->message, "final loss %g, validation loss %g", ev->loss,
                           ev->val_loss);
        }
    }
    if (ev->kind == ORC_EV_ERROR) {
        tlm_msg_copy(r->error_kind, sizeof r->error_kind, ev->error_kind);
        tlm_msg_copy(r->message, sizeof r->message, ev->message);
    }
    if (ev->step >= 0) {
        r->step = ev->step;
        r->tokens = ev->tokens;
    }
    orc_commit(r->d);
}

/* step, eval, layer, ckpt: their rows */
static void on_row(orc_run *r, const orc_event *ev, const char *key, tlm_err *e)
{
    orc_daemon *d = r->d;
    switch (ev->kind) {
    case ORC_EV_STEP: {
        db_step_row s = {.job = key, .attempt = r->attempt, .step = ev->step, .tokens = ev->tokens, .loss = ev->loss,
                         .lr = ev->lr, .grad_norm = ev->grad_norm, .tokens_per_s = ev->tokens_per_s,
                         .step_ms = ev->step_ms};
        db_ok(r, db_step_put(d->db, &s, e), e);
        r->step = ev->step;
        r->tokens = ev->tokens;
        r->loss = ev->loss;
        r->has_loss = 1;
        r->tokens_per_s = ev->tokens_per_s;
        break;
    }
    case ORC_EV_EVAL: {
        db_eval_row v = {.job = key, .attempt = r->attempt, .step = ev->step, .tokens = ev->tokens,
                         .suite = ev->suite, .task = ev->task, .metric = ev->metric, .value = ev->value, .n = ev->n,
                         .stderr_ = ev->stderr_};
        db_ok(r, db_eval_put(d->db, &v, e), e);
        break;
    }
    case ORC_EV_LAYER:
        /* d_ff is the model's shape, announced after every start (fresh or
         * resumed): one row per layer, at step 0, however often it is told */
        db_ok(r, db_layer_put(d->db, key, strcmp(ev->name, "d_ff") ? ev->step : 0, ev->layer, ev->name, ev->value, e),
              e);
        break;
    case ORC_EV_CKPT:
        /* the worker may resume from this checkpoint: it must be on disk in the database too */
        if (db_ok(r, db_ckpt_put(d->db, key, ev->step, ev->tokens, ev->path, ev->t, e), e))
            orc_commit(d);
        break;
    default:
        break;
    }
}

void orc_ingest_line(orc_run *r, const char *line, size_t len)
{
    orc_daemon *d = r->d;
    if (d->fatal)
        return;
    d->events++;
    orc_event ev;
    char why[256];
    if (orc_event_parse(r->parser, line, len, &ev, why, sizeof why)) {
        orc_ingest_protocol_error(r, why, line, len);
        return;
    }
    const char *key = d->plan.jobs.v[r->job].key;
    const char *no = refused(r, &ev, key);
    if (no) {
        orc_ingest_protocol_error(r, no, line, len);
        return;
    }
    r->last_event = tlm_clock_mono();
    /* progress: any event but a heartbeat; a heartbeat whose counter moved;
     * a heartbeat without one (a worker older than the field: it cannot
     * show a stall, so it is not judged by one) */
    if (ev.kind != ORC_EV_HEARTBEAT || ev.progress < 0 || ev.progress != r->progress)
        r->progress_at = r->last_event;
    d->batch_rows++;
    orc_batch(d); /* rows share the tick's transaction: one commit per 100 ms, not per row */
    tlm_err e;
    switch (ev.kind) {
    case ORC_EV_START:
        on_start(r, &ev, key, &e);
        break;
    case ORC_EV_HEARTBEAT:
        d->batch_rows--; /* nothing written */
        if (ev.step >= 0 && r->got_start)
            r->step = ev.step;
        r->progress = ev.progress;
        snprintf(r->phase, sizeof r->phase, "%s", ev.phase);
        break;
    case ORC_EV_STOPPED:
    case ORC_EV_DONE:
    case ORC_EV_ERROR:
        on_end(r, &ev);
        break;
    default:
        on_row(r, &ev, key, &e);
        break;
    }
}
