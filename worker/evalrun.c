/* evalrun.c: `tlm-worker --eval` (evalrun.h). */
#include "worker/evalrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* "a,b,c" -> cfg->eval.suites; "val" (the job's validation split, scored
 * by the trainer's own code) among them. */
static int set_suites(eng_config *cfg, const char *list, tlm_err *e)
{
    cfg->eval.n_suites = 0;
    char names[128];
    if (!*list)
        return tlm_errf(e, TLM_ECONFIG, "--suites: '' is empty (expected a comma-separated list of suites: val, %s)",
                        eng_eval_suite_list(names, sizeof names));
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= ENG_NAME_MAX || cfg->eval.n_suites == ENG_MAX_SUITES)
            return tlm_errf(e, TLM_ECONFIG, "--suites %s: expected a comma-separated list of suite names", list);
        char name[ENG_NAME_MAX];
        memcpy(name, p, n);
        name[n] = '\0';
        if (strcmp(name, eng_suite_names[ENG_SUITE_VAL]) != 0 && !eng_eval_is_suite(name))
            return tlm_errf(e, TLM_ECONFIG, "--suites: unknown suite '%s' (val, %s)", name,
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

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A TLM step folder (its MANIFEST.json or trainer.json) or run folder
 * (its ckpt/): a failure to read one is not for want of a --config, which
 * only a folder of another program's weights (GPT-2) needs. */
static int is_tlm_checkpoint(const char *dir)
{
    char p[ENG_CKPT_PATH_MAX + 32];
    struct stat st;
    snprintf(p, sizeof p, "%s/" ENG_CKPT_MANIFEST, dir);
    if (stat(p, &st) == 0)
        return 1;
    snprintf(p, sizeof p, "%s/" ENG_CKPT_STATE, dir);
    if (stat(p, &st) == 0)
        return 1;
    snprintf(p, sizeof p, "%s/" TLM_RUN_CKPT, dir);
    return is_dir(p);
}

static int runs_val(const eng_config *cfg)
{
    for (int i = 0; i < cfg->eval.n_suites; i++)
        if (!strcmp(cfg->eval.suites[i], eng_suite_names[ENG_SUITE_VAL]))
            return 1;
    return 0;
}

/* The config to evaluate with (--config, else the checkpoint's own) and the
 * step folder --checkpoint resolves to (path; "" for a GPT-2 folder), with
 * its step and tokens in j, whichever config is used. */
static int resolve(ejob *j, const wrk_eval_opts *o, eng_config *cfg, char path[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    int rc;
    path[0] = '\0';
    if (o->config) {
        rc = eng_config_load(o->config, cfg, e);
        eng_config *own = rc ? NULL : malloc(sizeof *own);
        tlm_err ignored;
        /* the checkpoint's step folder: a GPT-2 folder has none (step 0) */
        if (own && eng_eval_checkpoint_config(o->checkpoint, own, path, &ignored))
            path[0] = '\0';
        free(own);
    } else if ((rc = eng_eval_checkpoint_config(o->checkpoint, cfg, path, e)) == TLM_EDATA) {
        tlm_err_prefix(e, is_tlm_checkpoint(o->checkpoint) || !is_dir(o->checkpoint)
                              ? "--checkpoint"
                              : "--checkpoint (give --config for a checkpoint without a TLM config)");
    }
    if (!rc && path[0]) {
        eng_train_state st;
        if (!eng_ckpt_read_state(path, &st, NULL))
            j->step = st.step, j->tokens = st.tokens;
    }
    if (!rc && o->suites)
        rc = set_suites(cfg, o->suites, e);
    return rc;
}

/* The trainer's hooks: its validation and the evaluator's suites it runs
 * report through them. */
static void tr_eval(void *ud, const eng_eval_info *v)
{
    eng_eval_result r = {v->suite, v->task, v->metric, v->value, v->n, v->stderr_};
    on_result(ud, &r);
}

static void tr_layer(void *ud, int64_t step, int64_t tokens, int layer, const char *name, double value)
{
    ejob *j = ud;
    wrk_emit_layer(&j->ev, step, tokens, layer, name, value);
}

static void tr_phase(void *ud, const char *phase, int64_t step, int64_t tokens)
{
    ejob *j = ud;
    (void)step, (void)tokens;
    wrk_heartbeat_set(&j->hb, phase, j->step, j->tokens);
}

/* With val: the trainer's model loaded from the checkpoint scores the
 * job's validation split as training does, then the other suites run on it
 * (a TLM checkpoint and the job's data are needed). */
static int eval_with_val(ejob *j, const eng_config *cfg, const char *path, eng_backend *be, eng_evaluator *ev,
                         double *val_loss, tlm_err *e)
{
    if (!path[0])
        return tlm_errf(e, TLM_ECONFIG,
                        "--suites val scores a TLM checkpoint on its job's validation split; --checkpoint is not a "
                        "TLM checkpoint (a GPT-2 folder has no split to score)");
    eng_train_suites suites;
    eng_evaluator_suites(ev, &suites);
    eng_train_hooks hooks = {.ud = j, .log = on_log, .eval = tr_eval, .phase = tr_phase, .layer = tr_layer};
    eng_trainer *tr = NULL;
    int rc = eng_trainer_create(&tr, cfg, be, NULL, eng_evaluator_n_suites(ev) ? &suites : NULL, NULL, &hooks, e);
    if (!rc)
        rc = eng_trainer_load(tr, path, e);
    if (!rc)
        rc = eng_trainer_evaluate(tr, val_loss, e);
    eng_trainer_free(tr);
    return rc;
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
    double val_loss = NAN;
    int status;

    int rc = resolve(&j, o, &cfg, path, &e);
    int val = !rc && runs_val(&cfg);
    if (!rc)
        rc = eng_backend_cpu_create(&be, o->threads, &e);
    if (!rc)
        rc = eng_evaluator_create(&ev, &cfg, be, &e);
    if (!rc && !val && !eng_evaluator_n_suites(ev))
        rc = tlm_errf(&e, TLM_ECONFIG, "nothing to evaluate: name suites with --suites");
    if (!rc && val) {
        rc = eval_with_val(&j, &cfg, path, be, ev, &val_loss, &e);
    } else if (!rc) {
        rc = eng_evaluator_load(ev, o->checkpoint, &e);
        if (!rc) {
            eng_eval_sink sink = {&j, on_result, on_layer, NULL, on_log, on_tick};
            rc = eng_evaluator_run(ev, NULL, &sink, &e);
        }
    }
    if (rc) {
        status = fail(&j, &e);
    } else {
        wrk_ev d;
        wrk_ev_begin(&d, &j.ev, TLM_EV_DONE);
        wrk_ev_int(&d, "step", j.step);
        wrk_ev_int(&d, "tokens", j.tokens);
        wrk_ev_null(&d, "loss");
        if (val)
            wrk_ev_num(&d, "val_loss", val_loss);
        else
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
