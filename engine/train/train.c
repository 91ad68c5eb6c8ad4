/* train.c: the training loop (train.h), on one rank or on each rank of a
 * data-parallel job (engine/comm/comm.h; docs/parallel.md). */
#include "engine/train/train.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/protocol.h"
#include "engine/comm/comm.h"
#include "engine/config/ranks.h"
#include "engine/train/lr.h"

struct eng_trainer {
    eng_config cfg;
    eng_train_hooks h;
    eng_comm comm;                 /* a copy of the caller's (or one process's); its context is borrowed */
    eng_rank_split split;          /* this job's batch per rank (engine/config/ranks.h) */
    char root[ENG_CKPT_PATH_MAX];  /* "" = no checkpoints */
    eng_loader *loader;
    eng_loader_info info;
    eng_model *model;
    eng_train_state st;
    int64_t total_steps;
    int micro, accum, T;
    int32_t *tokens, *targets;     /* (micro, T) */
    float *nll;                    /* (micro, T) */
    double *seq_nll;               /* (val_seqs + 2): per-sequence mean NLL of an evaluation, then its sum and count */
    double *gn_tensor, *gn_acc;    /* train.grad_norms_every: per tensor; per (layer, part) + embed, head */
    int run_val;                   /* "val" is among eval.suites */
    eng_train_suites suites;       /* the other suites; run NULL when none */
    int64_t ckpt_step;             /* step of the newest checkpoint written or loaded (-1: none) */
    int64_t eval_step;             /* step of the last evaluation (-1: none) */
    int zero;                      /* ZeRO-1 (train.zero1 on several ranks): the optimizer state is sharded */
    size_t shard;                  /* ZeRO-1: floats per rank's shard (n_params / ranks); the tail beyond
                                      shard x ranks is every rank's */
    int hook_rc;                   /* the first failure of a collective the gradient hook started */
    tlm_err hook_err;
    char last_ckpt[ENG_CKPT_PATH_MAX];
};

static void logf_(eng_trainer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(eng_trainer *t, const char *fmt, ...)
{
    if (!t->h.log)
        return;
    char msg[TLM_MSG_MAX + 256]; /* a message and the words around it */
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t->h.log(t->h.ud, msg);
}

/* p: TLM_PHASE_* (common/protocol.h), the heartbeat's word for it */
static void phase(eng_trainer *t, int p)
{
    if (t->h.phase)
        t->h.phase(t->h.ud, tlm_phase_name(p), t->st.step, t->st.tokens);
}

int eng_trainer_create(eng_trainer **out, const eng_config *cfg, const struct eng_backend *backend,
                       const struct eng_comm *comm, const eng_train_suites *suites, const char *ckpt_root,
                       const eng_train_hooks *hooks, tlm_err *e)
{
    *out = NULL;
    eng_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    t->cfg = *cfg;
    if (hooks)
        t->h = *hooks;
    if (comm)
        t->comm = *comm;
    else
        eng_comm_init_single(&t->comm);
    if (ckpt_root && (size_t)snprintf(t->root, sizeof t->root, "%s", ckpt_root) >= sizeof t->root) {
        free(t);
        return tlm_errf(e, TLM_EIO, "%s: path too long", ckpt_root);
    }
    t->T = cfg->train.seq_len;
    t->total_steps = eng_train_total_steps(&cfg->train);
    t->ckpt_step = -1;
    t->eval_step = -1;
    int rc;
    if (cfg->train.micro_batch < 1 || eng_train_seqs_per_step(&cfg->train) % cfg->train.micro_batch) {
        rc = tlm_errf(e, TLM_ECONFIG, "train.micro_batch %d does not divide the %d sequences of a batch",
                      cfg->train.micro_batch, eng_train_seqs_per_step(&cfg->train));
        goto fail;
    }
    if ((rc = eng_rank_split_of(&cfg->train, t->comm.size, &t->split, e)))
        goto fail;
    t->micro = t->split.micro;
    t->accum = t->split.accum;
    t->zero = cfg->train.zero1 && t->comm.size > 1;
    const char *other = NULL;
    for (int i = 0; i < cfg->eval.n_suites; i++) {
        t->run_val |= !strcmp(cfg->eval.suites[i], "val");
        if (!other && strcmp(cfg->eval.suites[i], "val"))
            other = cfg->eval.suites[i];
    }
    if (other && !suites && t->comm.rank == 0) { /* rank 0 runs them (the others need none) */
        rc = tlm_errf(e, TLM_ECONFIG, "eval.suites lists %s, but the trainer was given no evaluator for it", other);
        goto fail;
    }
    if (suites)
        t->suites = *suites;
    phase(t, TLM_PHASE_SETUP);
    if ((rc = eng_loader_open(&t->loader, cfg, e)))
        goto fail;
    phase(t, TLM_PHASE_SETUP);
    eng_loader_get_info(t->loader, &t->info);
    size_t n = (size_t)t->micro * (size_t)t->T;
    t->tokens = malloc(n * sizeof *t->tokens);
    t->targets = malloc(n * sizeof *t->targets);
    t->nll = malloc(n * sizeof *t->nll);
    t->seq_nll = malloc((t->info.val_seqs + 2) * sizeof *t->seq_nll);
    if (!t->tokens || !t->targets || !t->nll || !t->seq_nll) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory for %zu-token batches", n);
        goto fail;
    }
    if ((rc = eng_model_create(&t->model, cfg, backend, t->micro, t->T, e)))
        goto fail;
    t->shard = eng_model_n_params(t->model) / (size_t)t->comm.size;
    if (cfg->train.grad_norms_every > 0) {
        t->gn_tensor = malloc((size_t)eng_model_n_tensors(t->model) * sizeof *t->gn_tensor);
        t->gn_acc = malloc(((size_t)cfg->model.layers * 3 + 2) * sizeof *t->gn_acc);
        if (!t->gn_tensor || !t->gn_acc) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory (per-layer gradient norms)");
            goto fail;
        }
    }
    phase(t, TLM_PHASE_SETUP);
    eng_model_init_weights(t->model, (uint64_t)cfg->seed);
    phase(t, TLM_PHASE_SETUP);

    eng_config_id(cfg, t->st.config_id);
    memcpy(t->st.data_id, t->info.data_id, sizeof t->st.data_id);
    t->st.train_windows = t->info.train_windows;
    t->st.seed = cfg->seed;
    t->st.loss = NAN;
    t->st.val_loss = NAN;
    t->st.lr = 0;
    *out = t;
    return 0;
fail:
    eng_trainer_free(t);
    return rc;
}

void eng_trainer_free(eng_trainer *t)
{
    if (!t)
        return;
    eng_model_free(t->model);
    eng_loader_free(t->loader);
    free(t->tokens);
    free(t->targets);
    free(t->nll);
    free(t->seq_nll);
    free(t->gn_tensor);
    free(t->gn_acc);
    free(t);
}

const eng_train_state *eng_trainer_state(const eng_trainer *t) { return &t->st; }
const eng_model *eng_trainer_model(const eng_trainer *t) { return t->model; }
int64_t eng_trainer_total_steps(const eng_trainer *t) { return t->total_steps; }
const char *eng_trainer_last_ckpt(const eng_trainer *t) { return t->last_ckpt; }

/* ------------------------------------------------------------ ranks */
/* Every rank learns whether any failed here (engine/comm/comm.h) */
static int agree(eng_trainer *t, int rc, tlm_err *e)
{
    return eng_comm_agree(&t->comm, rc, e);
}

/* A 64-bit digest of n floats (words mixed by multiply-xor: fast enough
 * for a billion parameters at every checkpoint). */
static uint64_t digest(const float *x, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    const uint32_t *w = (const uint32_t *)(const void *)x;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ w[i]) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* Every rank holds the same weights (the contract of a step; a broken
 * collective or a rank-dependent kernel would show here first): checked at
 * every checkpoint of a job of several ranks. */
static int weights_agree(eng_trainer *t, tlm_err *e)
{
    const eng_comm *c = &t->comm;
    if (c->size == 1)
        return 0;
    const size_t np = eng_model_n_params(t->model);
    float *p = malloc(np * sizeof *p);
    int rc = p ? eng_model_get_params(t->model, p) : tlm_errf(e, TLM_ENOMEM, "out of memory for the weights' digest");
    uint64_t mine = rc ? 0 : digest(p, np), first = mine;
    free(p);
    if ((rc = agree(t, rc, e)) || (rc = c->ops->broadcast(c->ctx, &first, sizeof first, 0, e)))
        return rc;
    int differ = first != mine;
    if ((rc = c->ops->max_int(c->ctx, &differ, 1, e)))
        return rc;
    if (differ)
        return tlm_errf(e, TLM_EINTERNAL, "after step %" PRId64 " the ranks' weights differ (digest %016" PRIx64
                        " on rank 0, %016" PRIx64 " on rank %d)", t->st.step, first, mine, c->rank);
    return 0;
}

/* ------------------------------------------------------------ checkpoints */
typedef struct host_copy {
    eng_tensor_info *tensors;
    float *buf;           /* 3 x n_params, then the extra optimizer state */
    eng_ckpt_data d;
} host_copy;

static void host_clear(host_copy *hc)
{
    free(hc->tensors);
    free(hc->buf);
}

static int host_alloc(eng_trainer *t, host_copy *hc, tlm_err *e)
{
    memset(hc, 0, sizeof *hc);
    int n = eng_model_n_tensors(t->model), nx = eng_model_n_optim_extra(t->model);
    size_t np = eng_model_n_params(t->model), xf = eng_model_optim_extra_floats(t->model);
    hc->tensors = malloc((size_t)(n + nx) * sizeof *hc->tensors);
    hc->buf = malloc((3 * np + xf) * sizeof *hc->buf);
    if (!hc->tensors || !hc->buf) {
        host_clear(hc);
        return tlm_errf(e, TLM_ENOMEM, "out of memory for a host copy of %zu parameters", np);
    }
    for (int i = 0; i < n; i++)
        hc->tensors[i] = *eng_model_tensor(t->model, i);
    hc->d.tensors = hc->tensors;
    hc->d.n_tensors = n;
    hc->d.n_params = np;
    hc->d.params = hc->buf;
    hc->d.exp_avg = hc->buf + np;
    hc->d.exp_avg_sq = hc->buf + 2 * np;
    for (int i = 0; i < nx; i++)
        hc->tensors[n + i] = *eng_model_optim_extra(t->model, i);
    hc->d.extra_tensors = hc->tensors + n;
    hc->d.n_extra = nx;
    hc->d.extra = hc->buf + 3 * np;
    return 0;
}

/* ZeRO-1: whether slab float i is this rank's to update (its shard, and
 * the tail on rank 0: the tail is every rank's, counted once) */
static int owns(const eng_trainer *t, size_t i)
{
    const size_t lo = (size_t)t->comm.rank * t->shard, tail = t->shard * (size_t)t->comm.size;
    return (i >= lo && i < lo + t->shard) || (i >= tail && t->comm.rank == 0);
}

/* The parameter tensor a tensor of extra optimizer state shadows: the one
 * whose name its own extends ("<name>.grad_acc", hope_attn), of the same
 * size.  Its slab offset, or (size_t)-1. */
static size_t shadowed(const eng_model *m, const eng_tensor_info *x)
{
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *p = eng_model_tensor(m, i);
        size_t n = strlen(p->name);
        if (p->numel == x->numel && !strncmp(x->name, p->name, n) && x->name[n] == '.')
            return p->offset;
    }
    return (size_t)-1;
}

/* x (n floats, host) = the sum over the ranks of x, through doubles (a sum
 * of one value and zeros is exact) */
static int sum_floats(eng_trainer *t, float *x, size_t n, double *tmp, size_t cap, tlm_err *e)
{
    for (size_t at = 0; at < n; at += cap) {
        size_t k = n - at < cap ? n - at : cap;
        for (size_t i = 0; i < k; i++)
            tmp[i] = x[at + i];
        int rc = t->comm.ops->sum_f64(t->comm.ctx, tmp, (int)k, e);
        if (rc)
            return rc;
        for (size_t i = 0; i < k; i++)
            x[at + i] = (float)tmp[i];
    }
    return 0;
}

/* ZeRO-1: the whole optimizer state into hc on every rank: each rank's own
 * part of the moments and of hope_attn's accumulators (zeros elsewhere),
 * summed over the ranks.  Collective. */
static int gather_optim(eng_trainer *t, host_copy *hc, tlm_err *e)
{
    const eng_model *m = t->model;
    const size_t np = eng_model_n_params(m);
    int rc = eng_model_get_optim(m, hc->d.exp_avg, hc->d.exp_avg_sq);
    if (!rc)
        rc = eng_model_get_optim_extra(m, hc->d.extra);
    for (size_t i = 0; !rc && i < np; i++)
        if (!owns(t, i))
            hc->d.exp_avg[i] = hc->d.exp_avg_sq[i] = 0;
    for (int k = 0; !rc && k < hc->d.n_extra; k++) {
        const eng_tensor_info *x = &hc->d.extra_tensors[k];
        size_t p = shadowed(m, x);
        if (p == (size_t)-1) {
            rc = tlm_errf(e, TLM_EINTERNAL, "ZeRO-1: the optimizer state %s shadows no parameter", x->name);
            break;
        }
        for (size_t j = 0; j < x->numel; j++)
            if (!owns(t, p + j))
                hc->d.extra[x->offset + j] = 0;
    }
    const size_t cap = (size_t)1 << 20;
    double *tmp = rc ? NULL : malloc(cap * sizeof *tmp);
    if (!rc && !tmp)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    if ((rc = eng_comm_agree(&t->comm, rc, e))) {
        free(tmp);
        return rc;
    }
    rc = sum_floats(t, hc->d.exp_avg, 2 * np, tmp, cap, e); /* exp_avg_sq follows exp_avg */
    if (!rc && hc->d.n_extra)
        rc = sum_floats(t, hc->d.extra, eng_model_optim_extra_floats(m), tmp, cap, e);
    free(tmp);
    return rc;
}

/* The checkpoint files of the current state into `written` (rank 0's
 * part of a checkpoint); hc: the optimizer state gathered already
 * (ZeRO-1), or NULL. */
static int write_checkpoint(eng_trainer *t, host_copy *gathered, char written[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    host_copy own, *hc = gathered ? gathered : &own;
    int rc = gathered ? 0 : host_alloc(t, &own, e);
    if (rc)
        return rc;
    if ((rc = eng_model_get_params(t->model, hc->d.params)) ||
        (!gathered && ((rc = eng_model_get_optim(t->model, hc->d.exp_avg, hc->d.exp_avg_sq)) ||
                       (rc = eng_model_get_optim_extra(t->model, hc->d.extra))))) {
        if (!gathered)
            host_clear(&own);
        return tlm_errf(e, rc, "checkpoint: cannot copy the model's tensors to the host");
    }
    rc = eng_ckpt_write(t->root, &hc->d, &t->cfg, &t->st, t->cfg.train.keep_checkpoints, written, e);
    if (!gathered)
        host_clear(&own);
    return rc ? tlm_err_prefix(e, "checkpoint at step %" PRId64, t->st.step) : 0;
}

/* Write a checkpoint of the current state (no-op when the newest one is of
 * this step); path may be NULL.  Collective: rank 0 writes it, once every
 * rank's weights are seen to agree, and every rank learns the outcome. */
static int eng_trainer_checkpoint(eng_trainer *t, char path[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    if (path)
        path[0] = '\0';
    if (!t->root[0])
        return 0;
    if (t->ckpt_step == t->st.step) {
        if (path)
            snprintf(path, ENG_CKPT_PATH_MAX, "%s", t->last_ckpt);
        return 0;
    }
    phase(t, TLM_PHASE_CKPT);
    /* the global data cursor: a resume on any number of ranks starts the
     * next step's batch there */
    t->st.cursor = (uint64_t)t->st.step * (uint64_t)t->split.seqs;
    char written[ENG_CKPT_PATH_MAX] = "";
    int rc = weights_agree(t, e);
    if (rc)
        return rc;
    /* ZeRO-1: the moments are gathered, so the checkpoint is the same file
     * as one process writes (and resumes on any number of ranks) */
    host_copy hc;
    if (t->zero) {
        if ((rc = agree(t, host_alloc(t, &hc, e), e)))
            return rc;
        if ((rc = gather_optim(t, &hc, e))) {
            host_clear(&hc);
            return rc;
        }
    }
    if (t->comm.rank == 0)
        rc = write_checkpoint(t, t->zero ? &hc : NULL, written, e);
    if (t->zero)
        host_clear(&hc);
    if ((rc = agree(t, rc, e)) || (rc = t->comm.ops->broadcast(t->comm.ctx, written, sizeof written, 0, e)))
        return rc;
    t->ckpt_step = t->st.step;
    snprintf(t->last_ckpt, sizeof t->last_ckpt, "%s", written);
    if (path)
        snprintf(path, ENG_CKPT_PATH_MAX, "%s", written);
    if (t->h.ckpt)
        t->h.ckpt(t->h.ud, written, t->st.step, t->st.tokens);
    return 0;
}

static void log_skip(void *ud, const char *msg) { logf_(ud, "%s", msg); }

int eng_trainer_resume(eng_trainer *t, int64_t *from_step, tlm_err *e)
{
    *from_step = -1;
    if (!t->root[0])
        return 0;
    char dir[ENG_CKPT_PATH_MAX] = "";
    phase(t, TLM_PHASE_SETUP);
    /* rank 0 chooses, every rank loads the same folder */
    int rc = t->comm.rank == 0 ? eng_ckpt_find(t->root, dir, log_skip, t, e) : 0;
    if ((rc = agree(t, rc, e)) || (rc = t->comm.ops->broadcast(t->comm.ctx, dir, sizeof dir, 0, e)))
        return rc;
    phase(t, TLM_PHASE_SETUP);
    if (!dir[0]) {
        logf_(t, "no usable checkpoint in %s: starting from step 0", t->root);
        return 0;
    }
    host_copy hc;
    if ((rc = host_alloc(t, &hc, e)))
        return rc;
    eng_train_state st;
    rc = eng_ckpt_load(dir, t->st.config_id, &hc.d, &st, e);
    phase(t, TLM_PHASE_SETUP);
    if (!rc && strcmp(st.data_id, t->st.data_id))
        rc = tlm_errf(e, TLM_EDATA,
                      "%s was trained on other data (data id %.12s, the configured shards give %.12s): the "
                      "data order would not continue; restore the data or start a fresh --out folder",
                      dir, st.data_id, t->st.data_id);
    if (!rc && (st.train_windows != t->info.train_windows || st.seed != t->cfg.seed))
        rc = tlm_errf(e, TLM_EDATA, "%s: %" PRIu64 " training windows (seed %" PRId64 "), the data gives %" PRIu64,
                      dir, st.train_windows, st.seed, t->info.train_windows);
    if (!rc && (st.step > t->total_steps || st.tokens != st.step * t->cfg.train.batch_tokens ||
                st.cursor != (uint64_t)st.step * (uint64_t)eng_train_seqs_per_step(&t->cfg.train)))
        rc = tlm_errf(e, TLM_EDATA, "%s: step %" PRId64 ", tokens %" PRId64 " and cursor %" PRIu64
                      " do not fit this config's batches", dir, st.step, st.tokens, st.cursor);
    if (!rc && ((rc = eng_model_set_params(t->model, hc.d.params)) ||
                (rc = eng_model_set_optim(t->model, hc.d.exp_avg, hc.d.exp_avg_sq)) ||
                (rc = eng_model_set_optim_extra(t->model, hc.d.extra))))
        rc = tlm_errf(e, rc, "%s: cannot copy the tensors into the model", dir);
    host_clear(&hc);
    if ((rc = agree(t, rc, e)))
        return rc;
    t->st = st;
    eng_loader_seek(t->loader, st.cursor);
    t->ckpt_step = st.step;
    snprintf(t->last_ckpt, sizeof t->last_ckpt, "%s", dir);
    *from_step = st.step;
    logf_(t, "resuming from %s (step %" PRId64 ", %" PRId64 " tokens)", dir, st.step, st.tokens);
    return 0;
}

int eng_trainer_load(eng_trainer *t, const char *dir, tlm_err *e)
{
    eng_train_state st;
    int rc = eng_ckpt_read_state(dir, &st, e);
    if (rc)
        return rc;
    host_copy hc;
    if ((rc = host_alloc(t, &hc, e)))
        return rc;
    /* the checkpoint's own config id: another config of the same shapes
     * may evaluate it (other data); the tensors' shapes are checked */
    rc = eng_ckpt_load(dir, st.config_id, &hc.d, &st, e);
    if (!rc && (rc = eng_model_set_params(t->model, hc.d.params)))
        rc = tlm_errf(e, rc, "%s: cannot copy the tensors into the model", dir);
    host_clear(&hc);
    if (rc)
        return rc;
    t->st.step = st.step;
    t->st.tokens = st.tokens;
    return 0;
}

/* ------------------------------------------------------------ evaluation */
static void report_eval(eng_trainer *t, const char *metric, double value, int64_t n, double se)
{
    if (!t->h.eval)
        return;
    eng_eval_info ev = {t->st.step, t->st.tokens, "val", "val", metric, value, n, se};
    t->h.eval(t->h.ud, &ev);
}

/* The validation set's loss.  With several ranks, rank r scores the
 * contiguous r-th share of the sequences; the per-sequence means (zero
 * outside a rank's share), the sum and the count are then summed over the
 * ranks. */
static int validate(eng_trainer *t, tlm_err *e)
{
    const uint64_t nseq = t->info.val_seqs;
    const int T = t->T;
    const uint64_t R = (uint64_t)t->comm.size, r = (uint64_t)t->comm.rank;
    const uint64_t lo = nseq * r / R, hi = nseq * (r + 1) / R;
    double sum = 0;
    int64_t count = 0;
    memset(t->seq_nll, 0, (nseq + 2) * sizeof *t->seq_nll);
    int rc = 0;
    for (uint64_t first = lo; first < hi && !rc; first += (uint64_t)t->micro) {
        int B = hi - first < (uint64_t)t->micro ? (int)(hi - first) : t->micro;
        double l;
        rc = eng_loader_val_batch(t->loader, first, B, t->tokens, t->targets, e);
        if (!rc)
            rc = eng_model_forward(t->model, t->tokens, t->targets, B, T, &l, t->nll, e);
        if (rc)
            break;
        for (int b = 0; b < B; b++) {
            double s = 0;
            for (int i = 0; i < T; i++)
                s += t->nll[(size_t)b * T + i];
            t->seq_nll[first + (uint64_t)b] = s / T;
            sum += s;
        }
        count += (int64_t)B * T;
    }
    if (rc)
        tlm_err_prefix(e, "validation");
    if ((rc = agree(t, rc, e)))
        return rc;
    if (R > 1) {
        t->seq_nll[nseq] = sum;
        t->seq_nll[nseq + 1] = (double)count;
        if ((rc = t->comm.ops->sum_f64(t->comm.ctx, t->seq_nll, (int)(nseq + 2), e)))
            return tlm_err_prefix(e, "validation");
        sum = t->seq_nll[nseq];
        count = (int64_t)t->seq_nll[nseq + 1];
    }
    double mean = sum / (double)count;
    /* standard error from the spread of per-sequence means (tokens within a
     * sequence are not independent) */
    double var = 0;
    for (uint64_t i = 0; i < nseq; i++)
        var += (t->seq_nll[i] - mean) * (t->seq_nll[i] - mean);
    double se = nseq > 1 ? sqrt(var / (double)(nseq - 1) / (double)nseq) : NAN;
    t->st.val_loss = mean;
    report_eval(t, "loss", mean, count, se);
    report_eval(t, "ppl", exp(mean), count, isfinite(se) ? exp(mean) * se : NAN);
    return 0;
}

int eng_trainer_evaluate(eng_trainer *t, double *loss, tlm_err *e)
{
    phase(t, TLM_PHASE_EVAL);
    int rc = 0;
    if (t->run_val && (rc = validate(t, e)))
        return rc;
    /* the other suites on rank 0 only (their results are rank 0's to
     * report; every rank holds the same weights) */
    if (t->suites.run && t->comm.rank == 0 &&
        (rc = t->suites.run(t->suites.ud, t->model, &t->h, t->st.step, t->st.tokens, e)))
        tlm_err_prefix(e, "evaluation at step %" PRId64, t->st.step);
    if ((rc = agree(t, rc, e)))
        return rc;
    t->eval_step = t->st.step;
    if (loss)
        *loss = t->run_val ? t->st.val_loss : NAN;
    return 0;
}

/* ------------------------------------------------------------ the loop */
/* %g, but "nan" rather than "-nan" */
static const char *fmt_num(double x, char buf[32])
{
    if (isnan(x))
        return "nan";
    snprintf(buf, 32, "%g", x);
    return buf;
}

/* Where a tensor's gradient counts in the per-layer norms: its layer (from
 * "model.layers.N."; -1 for the embedding, -2 for the final norm and the
 * output head) and its part (0 attention, 1 MLP, 2 the layer's other
 * tensors: norms, memories). */
static void tensor_place(const char *name, int *layer, int *part)
{
    static const char pre[] = "model.layers.";
    *part = 2;
    if (strncmp(name, pre, sizeof pre - 1)) {
        *layer = strstr(name, "embed_tokens") ? -1 : -2;
        return;
    }
    char *end;
    long l = strtol(name + sizeof pre - 1, &end, 10);
    *layer = (int)l;
    if (!strncmp(end, ".self_attn.", 11))
        *part = 0;
    else if (!strncmp(end, ".mlp.", 5))
        *part = 1;
}

/* The gradient norm per layer and part, as layer events of this step
 * (train.grad_norms_every; docs/protocol.md): grad_norm_attn,
 * grad_norm_mlp and grad_norm (the whole layer) for each layer, and on
 * layer 0 grad_norm_embed (the embedding), on the last layer
 * grad_norm_head (final norm and output head).  Their squares add up to
 * the step's grad_norm squared. */
static void emit_grad_norms(eng_trainer *t, int64_t s)
{
    const int nt = eng_model_n_tensors(t->model), L = t->cfg.model.layers;
    double *sq = t->gn_tensor, *acc = t->gn_acc; /* per layer: attn, mlp, other; embed; head */
    memset(acc, 0, ((size_t)L * 3 + 2) * sizeof *acc);
    eng_model_grad_sumsq(t->model, sq);
    for (int i = 0; i < nt; i++) {
        int layer, part;
        tensor_place(eng_model_tensor(t->model, i)->name, &layer, &part);
        if (layer == -1)
            acc[3 * L] += sq[i];
        else if (layer < 0 || layer >= L)
            acc[3 * L + 1] += sq[i];
        else
            acc[3 * layer + part] += sq[i];
    }
    const int64_t tok = s * t->cfg.train.batch_tokens;
    for (int l = 0; l < L; l++) {
        const double *a = acc + 3 * l;
        t->h.layer(t->h.ud, s, tok, l, "grad_norm_attn", sqrt(a[0]));
        t->h.layer(t->h.ud, s, tok, l, "grad_norm_mlp", sqrt(a[1]));
        t->h.layer(t->h.ud, s, tok, l, "grad_norm", sqrt(a[0] + a[1] + a[2]));
    }
    t->h.layer(t->h.ud, s, tok, 0, "grad_norm_embed", sqrt(acc[3 * L]));
    t->h.layer(t->h.ud, s, tok, L - 1, "grad_norm_head", sqrt(acc[3 * L + 1]));
}

/* The model's gradient hook on the last micro-batch of a step when the
 * collectives run on the device (NCCL): each range's sum over the ranks
 * starts as soon as the backward has finished it, on the communicator's
 * own stream, while the backward of the earlier layers goes on. */
static void on_grads_ready(void *ud, float *grad, size_t offset, size_t n)
{
    eng_trainer *t = ud;
    (void)offset;
    if (!t->hook_rc)
        t->hook_rc = t->comm.ops->allreduce_start(t->comm.ctx, grad, n, &t->hook_err);
}

/* The gradients and the loss summed over the ranks (after the last
 * backward of the step); *loss_sum in, the sum over ranks out.  ZeRO-1:
 * each rank's shard only (reduce-scatter; the tail beyond the shards by an
 * all-reduce), and *sumsq the gradient's global sum of squares; else
 * *sumsq is left alone. */
static int reduce_step(eng_trainer *t, int overlap, double *loss_sum, double *sumsq, tlm_err *e)
{
    const eng_comm *c = &t->comm;
    int rc;
    if (t->zero) {
        float *g = eng_model_grad_slab(t->model);
        const size_t np = eng_model_n_params(t->model), tail = t->shard * (size_t)c->size;
        rc = c->ops->reduce_scatter_sum(c->ctx, g, t->shard, e);
        if (!rc && tail < np)
            rc = c->ops->allreduce_sum(c->ctx, g + tail, np - tail, e);
        double v[2] = {*loss_sum, eng_model_grad_sumsq_range(t->model, (size_t)c->rank * t->shard, t->shard) +
                                      (c->rank == 0 ? eng_model_grad_sumsq_range(t->model, tail, np - tail) : 0)};
        if (!rc)
            rc = c->ops->sum_f64(c->ctx, v, 2, e);
        *loss_sum = v[0];
        *sumsq = v[1];
        return rc ? tlm_err_prefix(e, "the sum over %d ranks", c->size) : 0;
    }
    if (overlap) {
        rc = c->ops->wait(c->ctx, e);
        if (!rc && t->hook_rc)
            *e = t->hook_err, rc = t->hook_rc;
    } else {
        rc = c->ops->allreduce_sum(c->ctx, eng_model_grad_slab(t->model), eng_model_n_params(t->model), e);
    }
    if (!rc)
        rc = c->ops->sum_f64(c->ctx, loss_sum, 1, e);
    return rc ? tlm_err_prefix(e, "the sum over %d ranks", c->size) : 0;
}

static int train_step(eng_trainer *t, eng_step_info *si, tlm_err *e)
{
    const int64_t s = t->st.step + 1;
    const double t0 = tlm_clock_mono();
    const int R = t->comm.size;
    /* overlap the reduction with the backward where the collectives have
     * their own queue (a GPU); on the CPU every core is in the backward */
    const int overlap = R > 1 && t->comm.ops->device_buffers && !t->zero;
    eng_model_zero_grads(t->model);
    /* this rank's contiguous share of the step's sequences: the global
     * cursor of the step, then the shares of the ranks before it */
    eng_loader_seek(t->loader, (uint64_t)t->st.step * (uint64_t)t->split.seqs +
                                   (uint64_t)t->comm.rank * (uint64_t)t->split.share);
    int rc = 0;
    char b1[32], b2[32];
    for (int a = 0; a < t->accum; a++) {
        if (a)
            phase(t, TLM_PHASE_TRAIN); /* progress within a step of many micro-batches (heartbeats) */
        rc = eng_loader_next(t->loader, t->micro, t->tokens, t->targets, e);
        if (!rc)
            rc = eng_model_forward_train(t->model, t->tokens, t->targets, t->micro, t->T, e);
        if (rc)
            break;
        const int last = a == t->accum - 1;
        /* the hook starts collectives: every rank must be there */
        if (overlap && last && (rc = agree(t, 0, e)))
            return rc;
        t->hook_rc = 0;
        if (overlap && last)
            eng_model_set_grad_hook(t->model, on_grads_ready, t);
        /* each rank's passes weigh 1 / (passes x ranks): the sum over the
         * ranks is the mean gradient over the whole batch */
        rc = eng_model_backward(t->model, 1.0f / (float)(t->accum * R), e);
        eng_model_set_grad_hook(t->model, NULL, NULL);
        if (rc)
            break;
    }
    if (rc)
        tlm_err_prefix(e, "step %" PRId64, s);
    if ((rc = agree(t, rc, e)))
        return rc;
    /* the micro-batches' losses stay on the device: the step reads them with
     * the gradient norm in one copy (issue 24: no host round trip); on
     * several ranks the norm is the summed gradient's, after the reduction */
    double loss_sum, norm, sumsq = NAN;
    eng_model_step_report(t->model, &loss_sum, R == 1 ? &norm : NULL);
    if (R > 1) {
        if ((rc = reduce_step(t, overlap, &loss_sum, &sumsq, e)))
            return tlm_err_prefix(e, "step %" PRId64, s);
        norm = t->zero ? sqrt(sumsq) : eng_model_grad_norm(t->model);
    }
    const double loss = loss_sum / (t->accum * R);
    const double lr = eng_lr_at(&t->cfg.train, s);
    if (!isfinite(loss))
        return tlm_errf(e, TLM_EDIVERGED, "diverged at step %" PRId64 ": the loss is %s (lr %g)", s,
                        fmt_num(loss, b1), lr);
    if (!isfinite(norm))
        return tlm_errf(e, TLM_EDIVERGED, "diverged at step %" PRId64 ": the gradient norm is %s (loss %s, lr %g)", s,
                        fmt_num(norm, b1), fmt_num(loss, b2), lr);
    const int every = t->cfg.train.grad_norms_every;
    if (every > 0 && (s == 1 || s % every == 0 || s == t->total_steps)) {
        /* ZeRO-1: the per-layer norms need every shard's gradient */
        if (t->zero && (rc = t->comm.ops->all_gather(t->comm.ctx, eng_model_grad_slab(t->model), t->shard, e)))
            return tlm_err_prefix(e, "step %" PRId64 ": gathering the gradients", s);
        if (t->h.layer)
            emit_grad_norms(t, s);
    }
    const double clip = t->cfg.train.grad_clip;
    eng_adamw opt = {lr, t->cfg.train.beta1, t->cfg.train.beta2, t->cfg.train.adam_eps, t->cfg.train.weight_decay, s,
                     clip > 0 && norm > clip ? clip / norm : 1.0};
    if (t->zero) {
        /* this rank's shard and the tail, then every rank's shard to all */
        const size_t np = eng_model_n_params(t->model), tail = t->shard * (size_t)R,
                     lo = (size_t)t->comm.rank * t->shard;
        rc = eng_model_step_range(t->model, &opt, lo, lo + t->shard, e);
        if (!rc && tail < np)
            rc = eng_model_step_range(t->model, &opt, tail, np, e);
        if (!rc)
            rc = t->comm.ops->all_gather(t->comm.ctx, eng_model_param_slab(t->model), t->shard, e);
        if (!rc) /* the other ranks' shards came into the master only */
            eng_model_sync_weight_copy(t->model);
    } else {
        rc = eng_model_step(t->model, &opt, e);
    }
    if (rc)
        return tlm_err_prefix(e, "step %" PRId64, s);
    const double dt = tlm_clock_mono() - t0;
    t->st.step = s;
    t->st.tokens = s * t->cfg.train.batch_tokens;
    t->st.cursor = (uint64_t)s * (uint64_t)t->split.seqs;
    t->st.loss = loss;
    t->st.lr = lr;
    *si = (eng_step_info){s, t->total_steps, t->st.tokens, loss, lr, norm,
                          dt > 0 ? (double)t->cfg.train.batch_tokens / dt : 0, 1e3 * dt};
    return 0;
}

int eng_trainer_run(eng_trainer *t, tlm_err *e)
{
    const eng_train_cfg *tc = &t->cfg.train;
    const double start = tlm_clock_mono(), elapsed0 = t->st.elapsed_s;
    int rc = 0;
    while (t->st.step < t->total_steps) {
        /* every rank stops after the same step: the flag is any rank's */
        int stop = t->h.stop_requested && t->h.stop_requested(t->h.ud);
        if (t->comm.size > 1 && (rc = t->comm.ops->max_int(t->comm.ctx, &stop, 1, e)))
            return tlm_err_prefix(e, "after step %" PRId64, t->st.step);
        if (stop) {
            rc = TLM_EINTERRUPTED;
            break;
        }
        phase(t, TLM_PHASE_TRAIN);
        eng_step_info si;
        if ((rc = train_step(t, &si, e)))
            return rc;
        t->st.elapsed_s = elapsed0 + (tlm_clock_mono() - start);
        const int64_t s = t->st.step;
        if (t->h.step && (s == 1 || s % tc->log_every == 0 || s == t->total_steps))
            t->h.step(t->h.ud, &si);
        if (s == t->total_steps)
            break;
        if (eng_period_ends(t->cfg.eval.every_tokens, tc->batch_tokens, s) &&
            (rc = eng_trainer_evaluate(t, NULL, e)))
            return rc;
        if (eng_period_ends(tc->ckpt_every_tokens, tc->batch_tokens, s) && (rc = eng_trainer_checkpoint(t, NULL, e)))
            return rc;
    }
    if (rc == TLM_EINTERRUPTED) {
        t->st.elapsed_s = elapsed0 + (tlm_clock_mono() - start);
        if (t->st.step > 0 && (rc = eng_trainer_checkpoint(t, NULL, e)))
            return rc;
        return tlm_errf(e, TLM_EINTERRUPTED, "stopped on request at step %" PRId64, t->st.step);
    }
    if (t->eval_step != t->st.step && (rc = eng_trainer_evaluate(t, NULL, e)))
        return rc;
    t->st.elapsed_s = elapsed0 + (tlm_clock_mono() - start);
    return eng_trainer_checkpoint(t, NULL, e);
}
