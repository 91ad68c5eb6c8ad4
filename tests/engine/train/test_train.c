/* test_train.c: the trainer's own contract, in process: the step loop
 * allocates nothing (malloc & co. are wrapped at link time and counted
 * between the first and the last step); gradient accumulation honours
 * batch_tokens whatever micro_batch is (one pass of 8 sequences and eight
 * passes of 1 train the same model up to rounding); clipping reaches the
 * update; the validation set is fixed; the hooks see every step with the
 * schedule's learning rate; and the suites besides val come from the
 * caller (run after val at every evaluation, at the trainer's step; a
 * config that lists one needs them); a step copies one thing from the
 * device to the host, its scalars (issue 24), counted on a backend whose
 * memory is not the host's; and two runs give the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/format/shard.h"
#include "engine/train/train.h"
#include "engine/train/lr.h"
#include "tests/lib/alloc_count.h"
#include "tests/lib/tap.h"

static eng_backend *BE; /* the CPU backend, on 1 thread */

/* "counting": the CPU's ops behind the table of a device backend (is_host
 * 0: the model keeps host copies and must copy), counting the copies from
 * the backend to the host */
static long n_d2h;
static eng_ops counting_ops;
static eng_backend counting_be;
static void counting_to_host(void *ctx, void *dst, const void *src, size_t bytes)
{
    n_d2h++;
    BE->ops->to_host(ctx, dst, src, bytes);
}

#define MAX_STEPS 64
typedef struct record {
    int n_steps;
    double loss[MAX_STEPS + 1], lr[MAX_STEPS + 1], norm[MAX_STEPS + 1];
    long allocs_at[MAX_STEPS + 1], d2h_at[MAX_STEPS + 1];
    int n_evals;
    double eval_loss;
} record;

static void on_step(void *ud, const eng_step_info *s)
{
    record *r = ud;
    if (s->step <= MAX_STEPS) {
        r->loss[s->step] = s->loss;
        r->lr[s->step] = s->lr;
        r->norm[s->step] = s->grad_norm;
        r->allocs_at[s->step] = n_allocs;
        r->d2h_at[s->step] = n_d2h;
    }
    r->n_steps++;
}

static void on_eval(void *ud, const eng_eval_info *ev)
{
    record *r = ud;
    if (!strcmp(ev->metric, "loss")) {
        r->n_evals++;
        r->eval_loss = ev->value;
    }
}

/* The caller's suites, standing in for engine/eval's evaluator: count the
 * runs, report one result through the trainer's hooks. */
typedef struct mock_suites {
    int runs, bad_model;
    int64_t last_step;
    const eng_model *model;
} mock_suites;

static int mock_run(void *ud, const eng_model *m, const eng_train_hooks *h, int64_t step, int64_t tokens, tlm_err *e)
{
    mock_suites *ms = ud;
    (void)e;
    ms->runs++;
    ms->bad_model |= m != ms->model;
    ms->last_step = step;
    eng_eval_info ev = {step, tokens, "mock", "mock", "loss", 1.0, 1, NAN};
    if (h->eval)
        h->eval(h->ud, &ev);
    return 0;
}

static char shard[256];

/* A small learnable text: sentences built from a few words by a fixed LCG. */
static int make_text(void)
{
    static const char *const words[] = {"the ", "model ", "tapers ", "its ", "width ", "across ", "depth ",
                                        "and ", "learns ", "text. ", "wider ", "early ", "layers "};
    eng_shard_writer *w;
    tlm_err e = {0};
    uint8_t sha[32] = {0};
    if (eng_shard_writer_open(&w, shard, 0, 256, "bytes", sha, &e))
        return -1;
    uint32_t x = 12345;
    for (int i = 0; i < 6000; i++) {
        x = x * 1103515245u + 12345u;
        const char *s = words[(x >> 16) % 13];
        for (; *s; s++) {
            uint32_t t = (uint8_t)*s;
            if (eng_shard_writer_append(w, &t, 1, &e))
                return -1;
        }
    }
    return eng_shard_writer_close(w, &e);
}

static int config(eng_config *c, int micro, double clip, int64_t eval_every, tlm_err *e)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"tokenizer\": \"bytes\", \"seed\": 1,"
             " \"model\": {\"d_model\": 32, \"layers\": 2, \"heads\": 2, \"d_ff\": 64},"
             " \"taper\": {\"schedule\": \"linear\", \"ratio\": [1.5, 0.5]},"
             " \"data\": {\"train\": \"%s\", \"val_fraction\": 0.1},"
             " \"train\": {\"tokens\": 8192, \"seq_len\": 32, \"batch_tokens\": 256, \"micro_batch\": %d,"
             "   \"lr\": 0.01, \"warmup_tokens\": 512, \"grad_clip\": %g, \"log_every\": 1},"
             " \"eval\": {\"every_tokens\": %lld, \"val_tokens\": 512}}",
             shard, micro, clip, (long long)eval_every);
    return eng_config_from_json(json, c, e);
}

static int train_on(const eng_backend *be, record *r, int micro, double clip, tlm_err *e)
{
    memset(r, 0, sizeof *r);
    eng_config c;
    int rc = config(&c, micro, clip, 0, e);
    if (rc)
        return rc;
    eng_train_hooks h = {r, NULL, on_step, on_eval, NULL, NULL, NULL, NULL};
    eng_trainer *t;
    if ((rc = eng_trainer_create(&t, &c, be, NULL, NULL, NULL, &h, e)))
        return rc;
    rc = eng_trainer_run(t, e);
    eng_trainer_free(t);
    return rc;
}

static int train(record *r, int micro, double clip, tlm_err *e)
{
    return train_on(BE, r, micro, clip, e);
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    eng_runtime_set_threads(1);
    tlm_err be_err = {0};
    if (eng_backend_cpu_create(&BE, 1, &be_err)) {
        printf("Bail out! %s\n", be_err.msg);
        return 1;
    }
    char dir[200];
    if (!tap_tmpdir(dir, sizeof dir, "tlm-test-train"))
        return 99;
    snprintf(shard, sizeof shard, "%s/train.tlmtok", dir);
    if (make_text()) {
        printf("cannot write %s\n", shard);
        return 99;
    }
    tlm_err e = {0};
    record whole, parts, clipped;

    int rc = train(&whole, 8, 1.0, &e);
    TAP_OK(rc == 0 && whole.n_steps == 32, "32 steps of 256 tokens in one pass of 8 sequences (%s)", e.msg);
    long leaked = whole.allocs_at[32] - whole.allocs_at[2];
    TAP_OK(leaked == 0, "the step loop allocates nothing (%ld allocations between steps 2 and 32)", leaked);
    TAP_OK(whole.n_evals == 1 && whole.eval_loss < whole.loss[1] - 1.0,
           "one evaluation at the end (eval.every_tokens 0), loss %.3f -> validation %.3f", whole.loss[1],
           whole.eval_loss);
    eng_config c;
    config(&c, 8, 1.0, 0, &e);
    int lr_ok = 1;
    for (int s = 1; s <= 32; s++)
        lr_ok &= whole.lr[s] == eng_lr_at(&c.train, s);
    TAP_OK(lr_ok, "each step reports the schedule's learning rate");

    rc = train(&parts, 1, 1.0, &e);
    TAP_OK(rc == 0 && parts.n_steps == 32, "the same batches as eight accumulated passes of 1 sequence");
    double worst = 0;
    for (int s = 1; s <= 32; s++) {
        double d = fabs(parts.loss[s] - whole.loss[s]) / whole.loss[s];
        worst = d > worst ? d : worst;
    }
    TAP_OK(worst < 1e-3, "accumulation trains the same model: losses agree to %.2e (relative) over 32 steps", worst);
    TAP_OK(fabs(parts.norm[1] - whole.norm[1]) < 1e-4 * whole.norm[1], "and step 1's gradient norm to %.2e",
           fabs(parts.norm[1] - whole.norm[1]) / whole.norm[1]);

    /* issue 24: a step copies its scalars to the host, once, and nothing
     * else (no losses, no logits), micro-batches accumulated or not; the
     * numbers are the host backend's, bit for bit */
    counting_ops = *BE->ops;
    counting_ops.name = "counting";
    counting_ops.is_host = 0;
    counting_ops.to_host = counting_to_host;
    counting_be = (eng_backend){&counting_ops, BE->ctx};
    for (int micro = 8; micro >= 2; micro /= 4) {
        record cnt;
        rc = train_on(&counting_be, &cnt, micro, 1.0, &e);
        int one_each = rc == 0 && cnt.n_steps == 32, most = 0;
        for (int s = 2; s <= 32; s++) {
            const int k = (int)(cnt.d2h_at[s] - cnt.d2h_at[s - 1]);
            one_each &= k == 1;
            most = k > most ? k : most;
        }
        TAP_OK(one_each, "micro_batch %d (%d passes a step): one copy to the host a step (at most %d)", micro,
               8 / micro, most);
        if (micro == 8)
            TAP_OK(!memcmp(cnt.loss, whole.loss, sizeof cnt.loss) && !memcmp(cnt.norm, whole.norm, sizeof cnt.norm),
                   "and the same losses and gradient norms, bit for bit, as on the host");
    }
    record again;
    rc = train(&again, 8, 1.0, &e);
    TAP_OK(rc == 0 && !memcmp(again.loss, whole.loss, sizeof again.loss) &&
               !memcmp(again.norm, whole.norm, sizeof again.norm),
           "a second run repeats the first bit for bit (losses and gradient norms of 32 steps)");

    /* clipping to a tiny norm shrinks every update below Adam's epsilon */
    rc = train(&clipped, 8, 1e-12, &e);
    TAP_OK(rc == 0 && clipped.norm[1] == whole.norm[1], "clipped run: same first gradient (norm before clipping)");
    TAP_OK(fabs(clipped.loss[32] - clipped.loss[1]) < 0.05 && whole.loss[32] < whole.loss[1] - 1.0,
           "grad_clip 1e-12 freezes training (%.3f -> %.3f) where grad_clip 1 learns (%.3f -> %.3f)",
           clipped.loss[1], clipped.loss[32], whole.loss[1], whole.loss[32]);

    /* the validation set is fixed: two evaluations of one model agree */
    config(&c, 4, 1.0, 2048, &e);
    record r;
    memset(&r, 0, sizeof r);
    eng_train_hooks h = {&r, NULL, on_step, on_eval, NULL, NULL, NULL, NULL};
    eng_trainer *t;
    if (!eng_trainer_create(&t, &c, BE, NULL, NULL, NULL, &h, &e)) {
        double a, b;
        eng_trainer_evaluate(t, &a, &e);
        eng_trainer_evaluate(t, &b, &e);
        TAP_OK(a == b && fabs(a - log(256)) < 0.2, "two evaluations of the untrained model: %.6f, %.6f (ln 256 = %.3f)",
               a, b, log(256));
        rc = eng_trainer_run(t, &e);
        TAP_OK(rc == 0 && r.n_evals == 2 + 4, "eval every 2048 tokens: after steps 8, 16, 24, 32 (%d evaluations)",
               r.n_evals);
        eng_trainer_free(t);
    }

    /* the other suites: the caller's, after val, at every evaluation */
    config(&c, 4, 1.0, 4096, &e);
    memset(&r, 0, sizeof r);
    mock_suites ms = {0};
    eng_train_suites suites = {&ms, mock_run};
    rc = eng_trainer_create(&t, &c, BE, NULL, &suites, NULL, &h, &e);
    if (!rc) {
        ms.model = eng_trainer_model(t);
        rc = eng_trainer_run(t, &e);
        eng_trainer_free(t);
    }
    TAP_OK(rc == 0 && ms.runs == 2 && !ms.bad_model && ms.last_step == 32 && r.n_evals == 2 * 2,
           "the caller's suites run on the trainer's model after val at each evaluation (%d runs, last at step %lld, "
           "%d results)",
           ms.runs, (long long)ms.last_step, r.n_evals);
    config(&c, 4, 1.0, 0, &e);
    c.eval.n_suites = 2;
    snprintf(c.eval.suites[1], ENG_NAME_MAX, "wikitext");
    rc = eng_trainer_create(&t, &c, BE, NULL, NULL, NULL, &h, &e);
    TAP_OK(rc == TLM_ECONFIG, "eval.suites listing wikitext without the caller's suites is refused: %s", e.msg);
    if (!rc)
        eng_trainer_free(t);
    eng_backend_free(BE);
    unlink(shard);
    rmdir(dir);
    return tap_done();
}
