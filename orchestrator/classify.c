/* classify.c: exit status -> reason (see classify.h and docs/protocol.md). */
#include "orchestrator/classify.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static void set(orc_outcome *o, const char *reason, int next, const char *msg)
{
    o->reason = reason;
    o->next = next;
    snprintf(o->message, sizeof o->message, "%s", msg);
}

void orc_classify(const orc_exit *x, orc_outcome *o)
{
    memset(o, 0, sizeof *o);
    if (x->kill_reason == ORC_KILL_PROTOCOL) {
        set(o, "protocol", ORC_NEXT_FAIL, "the worker reported a different config_id than the job's key");
        return;
    }
    if (x->kill_reason == ORC_KILL_TIMEOUT) {
        set(o, "timeout", ORC_NEXT_RETRY, "no event within --heartbeat-timeout; stopped by tlmd");
        return;
    }
    if (x->kill_reason == ORC_KILL_STALL) {
        set(o, "timeout", ORC_NEXT_RETRY,
            "stuck: heartbeats kept coming but showed no progress within --stall-timeout; stopped by tlmd");
        return;
    }
    if (!x->exited) {
        if (x->kill_reason == ORC_KILL_SHUTDOWN) {
            set(o, "interrupted", ORC_NEXT_INTERRUPTED, "killed while tlmd was stopping");
            return;
        }
        set(o, "crash", ORC_NEXT_RETRY, "");
        snprintf(o->message, sizeof o->message, "killed by signal %d (%s)", x->signal, strsignal(x->signal));
        return;
    }
    switch (x->status) {
    case 0:
        if (x->saw_done)
            set(o, "done", ORC_NEXT_DONE, "");
        else
            set(o, "protocol", ORC_NEXT_RETRY, "exited 0 without a done event");
        return;
    case 1: set(o, "internal", ORC_NEXT_RETRY, "internal error (exit 1)"); return;
    case 2: set(o, "config", ORC_NEXT_FAIL, "configuration or usage error (exit 2)"); return;
    case 3: set(o, "data", ORC_NEXT_FAIL, "data error (exit 3)"); return;
    case 4: set(o, "diverged", ORC_NEXT_FAIL, "loss or gradients not finite (exit 4)"); return;
    case 5: set(o, "oom", ORC_NEXT_RETRY, "out of memory (exit 5)"); return;
    case 6:
        set(o, "io", ORC_NEXT_RETRY, "I/O error (exit 6)");
        o->machine = 1;
        return;
    case 75:
        if (x->kill_reason == ORC_KILL_SHUTDOWN)
            set(o, "interrupted", ORC_NEXT_INTERRUPTED, "stopped by tlmd after a checkpoint");
        else /* someone else stopped it: resume, but count it so that it cannot loop */
            set(o, "interrupted", ORC_NEXT_RETRY, "stopped by a signal from outside tlmd (exit 75)");
        return;
    case 127:
        set(o, "internal", ORC_NEXT_RETRY, "the worker could not be started (exit 127)");
        o->machine = 1;
        return;
    default:
        set(o, "internal", ORC_NEXT_RETRY, "");
        snprintf(o->message, sizeof o->message, "unexpected exit status %d", x->status);
        return;
    }
}
