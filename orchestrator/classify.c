/* classify.c: exit status -> reason (see classify.h and docs/protocol.md):
 * the worker's exit statuses by the failure table (common/failure.h), and
 * the ways an attempt ends that only tlmd sees (a kill, a spawn failure). */
#include "orchestrator/classify.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "orchestrator/shim.h"

static void set(orc_outcome *o, const char *reason, int next, const char *msg)
{
    o->reason = reason;
    o->next = next;
    snprintf(o->message, sizeof o->message, "%s", msg);
}

/* The kills whose reason decides the outcome, however the worker ended. */
static const struct {
    int kill; /* ORC_KILL_* */
    const char *reason;
    int next; /* ORC_NEXT_* */
    const char *message;
} KILLS[] = {
    {ORC_KILL_PROTOCOL, "protocol", ORC_NEXT_FAIL, "the worker reported a different config_id than the job's key"},
    {ORC_KILL_TIMELIMIT, "timeout", ORC_NEXT_REQUEUE,
     "the Slurm time limit came: checkpointed on its early signal and submitted again (not a failure)"},
    {ORC_KILL_TIMEOUT, "timeout", ORC_NEXT_RETRY, "no event within --heartbeat-timeout; stopped by tlmd"},
    {ORC_KILL_STALL, "timeout", ORC_NEXT_RETRY,
     "stuck: heartbeats kept coming but showed no progress within --stall-timeout; stopped by tlmd"},
};

void orc_classify(const orc_exit *x, orc_outcome *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < sizeof KILLS / sizeof KILLS[0]; i++)
        if (x->kill_reason == KILLS[i].kill) {
            set(o, KILLS[i].reason, KILLS[i].next, KILLS[i].message);
            return;
        }
    if (!x->exited) {
        if (x->kill_reason == ORC_KILL_SHUTDOWN) {
            set(o, tlm_status_kind(TLM_EINTERRUPTED), ORC_NEXT_INTERRUPTED, "killed while tlmd was stopping");
            return;
        }
        set(o, "crash", ORC_NEXT_RETRY, "");
        snprintf(o->message, sizeof o->message, "killed by signal %d (%s)", x->signal, strsignal(x->signal));
        return;
    }
    if (x->saw_done && x->done_nonfinite) {
        set(o, tlm_status_kind(TLM_EDIVERGED), ORC_NEXT_FAIL,
            "the worker reported done with a final number that is not finite: no success");
        return;
    }
    if (x->status == TLM_EXIT_OK) {
        if (x->saw_done)
            set(o, "done", ORC_NEXT_DONE, "");
        else
            set(o, "protocol", ORC_NEXT_RETRY, "exited 0 without a done event");
        return;
    }
    if (x->status == ORC_EXIT_NOT_STARTED) {
        set(o, tlm_status_kind(TLM_EINTERNAL), ORC_NEXT_RETRY, "");
        snprintf(o->message, sizeof o->message, "the worker could not be started (exit %d)", ORC_EXIT_NOT_STARTED);
        o->machine = 1;
        return;
    }
    const tlm_failure *f = tlm_failure_of_exit(x->status);
    if (!f) {
        set(o, tlm_status_kind(TLM_EINTERNAL), ORC_NEXT_RETRY, "");
        snprintf(o->message, sizeof o->message, "unexpected exit status %d", x->status);
        return;
    }
    if (f->policy == TLM_POLICY_RESUME && x->kill_reason == ORC_KILL_SHUTDOWN) {
        set(o, f->kind, ORC_NEXT_INTERRUPTED, "stopped by tlmd after a checkpoint");
        return;
    }
    /* a stop that tlmd did not ask for resumes too, but is counted so that it cannot loop */
    set(o, f->kind, f->policy == TLM_POLICY_FINAL ? ORC_NEXT_FAIL : ORC_NEXT_RETRY, "");
    snprintf(o->message, sizeof o->message, "%s (exit %d)", f->what, f->exit);
    o->machine = f->policy == TLM_POLICY_MACHINE;
}
