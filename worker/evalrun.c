/* evalrun.c: `tlm-worker --eval` (evalrun.h). */
#include "worker/evalrun.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/config/suites.h"
#include "common/clock.h"
#include "engine/train/ckpt.h"
#include "engine/eval/eval.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "worker/events.h"
#include "worker/heartbeat.h"
#include "worker/run.h"

typedef struct ejob {
    wrk_events ev;
    wrk_heartbeat hb;
    int64_t step, tokens;
} ejob;

static void on_result(void *ud, const eng_eval_result *r)
{
    ejob *j = ud;
    wrk_emit_eval(&j->ev, j->step, j->tokens, r->suite, r->task, r->metric, r->value, r->n, r->stderr_);
    fprintf(stderr, "tlm-worker: %s/%s %s = %.6g (n %lld)\n", r->suite, r->task, r->metric, r->value,
            (long long)r->n);
}

static void on_layer(void *ud, const char *suite, int layer, const char *name, double value)
{
    ejob *j = ud;
    (void)suite;
    wrk_emit_layer(&j->ev, j->step, j->tokens, layer, name, value);
}

static void on_log(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "tlm-worker: %s\n", msg);
}

static int on_tick(void *ud)
{
    ejob *j = ud;
    wrk_heartbeat_set(&j->hb, tlm_phase_name(TLM_PHASE_EVAL), j->step, j->tokens);
    return 0;
}

static int fail(ejob *j, const tlm_err *e)
{
    int code = e->code ? e->code : TLM_EINTERNAL;
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_ERROR);
    wrk_ev_str(&ev, "kind", tlm_status_kind(code));
    wrk_ev_str(&ev, "message", e->msg);
    wrk_ev_int(&ev, "step", j->step);
    wrk_ev_int(&ev, "tokens", j->tokens);
    wrk_events_emit(&j->ev, &ev);
    fprintf(stderr, "tlm-worker: error (%s): %s\n", tlm_status_kind(code), e->msg);
    return tlm_exit_status(code);
}

/* "a,b,c" -> cfg->eval.suites; "val" is the trainer's, not the evaluator's. */
static int set_suites(eng_config *cfg, const char *list, tlm_err *e)
{
    cfg->eval.n_suites = 0;
    if (!*list) {
        char names[128];
        return tlm_errf(e, TLM_ECONFIG, "--suites: '' is empty (expected a comma-separated list of suites: %s)",
                        eng_eval_suite_list(names, sizeof names));
    }
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= ENG_NAME_MAX || cfg->eval.n_suites == ENG_MAX_SUITES)
            return tlm_errf(e, TLM_ECONFIG, "--suites %s: expected a comma-separated list of suite names", list);
        char name[ENG_NAME_MAX];
        memcpy(name, p, n);
        name[n] = '\0';
        char names[128];
        if (!strcmp(name, eng_suite_names[ENG_SUITE_VAL]))
            return tlm_errf(e, TLM_ECONFIG,
                            "--suites: val is measured while training (eval events of the run); --eval runs %s",
                            eng_eval_suite_list(names, sizeof names));
        if (!eng_eval_is_suite(name))
            return tlm_errf(e, TLM_ECONFIG, "--suites: unknown suite '%s' (%s)", name,
                            eng_eval_suite_list(names, sizeof names));
        strcpy(cfg->eval.suites[cfg->eval.n_suites++], name);
        p += n;
        if (*p == ',')
            p++;
    }
    if (!cfg->eval.n_suites)
        return tlm_errf(e, TLM_ECONFIG, "--suites: no suite named");
    return 0;
}

int wrk_eval_run(const wrk_eval_opts *o)
{
    ejob j;
    memset(&j, 0, sizeof j);
    wrk_events_init(&j.ev, o->events_fd, o->job);
    wrk_heartbeat_start(&j.hb, &j.ev, o->heartbeat);
    eng_runtime_set_threads(o->threads);
    const double t0 = tlm_clock_mono();
    tlm_err e = {0};
    eng_config cfg;
    char path[ENG_CKPT_PATH_MAX] = "";
    eng_backend *be = NULL;
    eng_evaluator *ev = NULL;
    int status, rc;

    /* the checkpoint's own config, unless --config names one (a GPT-2 folder needs it) */
    if (o->config)
        rc = eng_config_load(o->config, &cfg, &e);
    else if ((rc = eng_eval_checkpoint_config(o->checkpoint, &cfg, path, &e)) == TLM_EDATA) {
        struct stat st; /* the hint is for a folder without a TLM config, not for one that is not there */
        tlm_err_prefix(&e, stat(o->checkpoint, &st) == 0 && S_ISDIR(st.st_mode)
                               ? "--checkpoint (give --config for a checkpoint without a TLM config)"
                               : "--checkpoint");
    }
    if (!rc && path[0]) {
        eng_train_state st;
        if (!eng_ckpt_read_state(path, &st, NULL))
            j.step = st.step, j.tokens = st.tokens;
    }
    if (!rc && o->suites)
        rc = set_suites(&cfg, o->suites, &e);
    if (!rc)
        rc = eng_backend_cpu_create(&be, o->threads, &e);
    if (!rc)
        rc = eng_evaluator_create(&ev, &cfg, be, &e);
    if (!rc && !eng_evaluator_n_suites(ev))
        rc = tlm_errf(&e, TLM_ECONFIG, "nothing to evaluate: name suites with --suites (eval.suites holds only val)");
    if (!rc)
        rc = eng_evaluator_load(ev, o->checkpoint, &e);
    if (!rc) {
        eng_eval_sink sink = {&j, on_result, on_layer, NULL, on_log, on_tick};
        rc = eng_evaluator_run(ev, NULL, &sink, &e);
    }
    if (rc) {
        status = fail(&j, &e);
    } else {
        wrk_ev d;
        wrk_ev_begin(&d, &j.ev, TLM_EV_DONE);
        wrk_ev_int(&d, "step", j.step);
        wrk_ev_int(&d, "tokens", j.tokens);
        wrk_ev_null(&d, "loss");
        wrk_ev_null(&d, "val_loss");
        wrk_ev_num(&d, "elapsed_s", tlm_clock_mono() - t0);
        wrk_events_emit(&j.ev, &d);
        status = 0;
    }
    if (ev)
        eng_evaluator_free(ev);
    eng_backend_free(be);
    wrk_heartbeat_stop(&j.hb);
    wrk_events_clear(&j.ev);
    return status;
}
