/* test_comm.c: the parts of data parallelism that need no second process:
 * who a process is from each launcher's environment (engine/comm/comm.h),
 * the share of a batch per rank (engine/config/ranks.h), the one-process
 * communicator (every collective the identity), and the model's
 * gradient-ready hook: for the four architectures, tied and untied heads,
 * the ranges it reports tile the gradient slab, each once, in the order
 * the backward finishes them, and each range already holds its final
 * value when reported (what an all-reduce started from the hook sums). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/comm/comm.h"
#include "engine/config/config.h"
#include "engine/config/ranks.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/model/model.h"
#include "tests/lib/tap.h"

static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS",
                                   "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_PROCID"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        unsetenv(VARS[i]);
}

static void test_env(void)
{
    eng_comm_env env;
    tlm_err e = {0};
    clear_env();
    int rc = eng_comm_env_read(&env, &e);
    TAP_OK(!rc && env.size == 1 && env.rank == 0 && !strcmp(env.launcher, "none"), "no launcher: one process");

    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(!rc && env.size == 4 && env.rank == 2 && env.local_rank == 1 && env.local_size == 2 &&
               !strcmp(env.launcher, "mpirun"),
           "mpirun: rank 2 of 4, local rank 1 of 2 (%s)", rc ? e.msg : env.launcher);
    setenv("OMPI_COMM_WORLD_RANK", "4", 1);
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "rank 4 of 4"), "rank 4 of 4 ranks is refused: %s", e.msg);
    setenv("OMPI_COMM_WORLD_RANK", "x1", 1);
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "OMPI_COMM_WORLD_RANK='x1'"), "a rank that is no number: %s", e.msg);

    clear_env();
    setenv("PMIX_RANK", "1", 1);
    setenv("SLURM_NTASKS", "8", 1);
    setenv("SLURM_STEP_NUM_TASKS", "2", 1);
    setenv("SLURM_LOCALID", "0", 1);
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(!rc && env.size == 2 && env.rank == 1 && env.local_rank == 0 && !strcmp(env.launcher, "pmix"),
           "srun --mpi=pmix: rank 1 of the step's 2 tasks, local rank 0");
    unsetenv("SLURM_STEP_NUM_TASKS");
    unsetenv("SLURM_NTASKS");
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(rc == TLM_ECONFIG, "PMIX_RANK without the job's size is refused: %s", e.msg);

    clear_env();
    setenv("SLURM_NTASKS", "4", 1);
    setenv("SLURM_PROCID", "0", 1);
    rc = eng_comm_env_read(&env, &e);
    TAP_OK(!rc && env.size == 1, "a shell inside a Slurm allocation (no PMIX_RANK) is one process, not a rank");
    clear_env();
}

static void test_split(void)
{
    eng_train_cfg t = {0};
    t.seq_len = 16;
    t.batch_tokens = 32 * 16;
    t.micro_batch = 8;
    eng_rank_split s;
    tlm_err e = {0};
    int ok = 1;
    const int want[][3] = {{1, 8, 4}, {2, 8, 2}, {4, 8, 1}, {8, 4, 1}, {16, 2, 1}, {32, 1, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ok &= !eng_rank_split_of(&t, want[i][0], &s, &e) && s.share == 32 / want[i][0] && s.micro == want[i][1] &&
              s.accum == want[i][2] && s.share == s.micro * s.accum && s.seqs == 32;
    TAP_OK(ok, "32 sequences, micro_batch 8, on 1, 2, 4, 8, 16, 32 ranks: shares of 32/N in passes of min(8, 32/N)");
    int rc = eng_rank_split_of(&t, 3, &s, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "do not divide among 3 ranks") && strstr(e.msg, "batch_tokens 480 or 528"),
           "32 sequences on 3 ranks: refused with the sizes that divide: %s", e.msg);
    t.batch_tokens = 36 * 16;
    t.micro_batch = 6;
    rc = eng_rank_split_of(&t, 4, &s, &e);
    TAP_OK(!rc && s.share == 9 && s.micro == 3 && s.accum == 3,
           "36 sequences, micro_batch 6, 4 ranks: 9 each in 3 passes of 3 (the largest divisor of 9 up to 6)");
}

static void test_single(void)
{
    eng_comm c;
    eng_comm_init_single(&c);
    float x[4] = {1, 2, 3, 4};
    double d[2] = {0.5, -1};
    int k[1] = {7};
    tlm_err e = {0};
    int rc = c.ops->allreduce_sum(c.ctx, x, 4, &e) || c.ops->reduce_scatter_sum(c.ctx, x, 4, &e) ||
             c.ops->all_gather(c.ctx, x, 4, &e) || c.ops->allreduce_start(c.ctx, x, 4, &e) || c.ops->wait(c.ctx, &e) ||
             c.ops->sum_f64(c.ctx, d, 2, &e) || c.ops->max_int(c.ctx, k, 1, &e) ||
             c.ops->broadcast(c.ctx, x, sizeof x, 0, &e) || c.ops->barrier(c.ctx, &e);
    TAP_OK(!rc && c.size == 1 && c.rank == 0 && x[0] == 1 && x[3] == 4 && d[0] == 0.5 && k[0] == 7,
           "one process: every collective leaves its data as it is");
    tlm_errf(&e, TLM_EDATA, "mine");
    TAP_OK(eng_comm_agree(&c, TLM_EDATA, &e) == TLM_EDATA && !strcmp(e.msg, "mine") && eng_comm_agree(&c, 0, &e) == 0,
           "one process: agreeing returns its own outcome");
}

/* ------------------------------------------------------------ the gradient hook */
#define MAXR 64
typedef struct hook_log {
    int n;
    size_t off[MAXR], len[MAXR];
    float *seen; /* the slab as each range was reported */
    const float *slab;
} hook_log;

static void on_ready(void *ud, float *grad, size_t offset, size_t n)
{
    hook_log *h = ud;
    if (h->n < MAXR) {
        h->off[h->n] = offset;
        h->len[h->n] = n;
    }
    h->n++;
    if (grad != h->slab + offset)
        h->off[0] = (size_t)-1; /* the pointer must be the slab's, at the offset */
    memcpy(h->seen + offset, grad, n * sizeof *grad);
}

static void test_hook(eng_backend *be, const char *arch, const char *extra, int tied)
{
    char y[512];
    snprintf(y, sizeof y,
             "arch: %s\ntokenizer: bytes\nmodel: {d_model: 32, layers: 3, heads: 2, d_ff: 64, vocab: 256, tied: %s%s}\n"
             "taper: {schedule: linear, ratio: [1.5, 0.5]}\ntrain: {seq_len: 16, tokens: 100000}\n",
             arch, tied ? "true" : "false", extra);
    eng_config c;
    tlm_err e = {0};
    eng_model *m = NULL;
    if (eng_config_from_text(arch, y, strlen(y), &c, &e) || eng_model_create(&m, &c, be, 2, 16, &e)) {
        TAP_OK(0, "%s: a model (%s)", arch, e.msg);
        return;
    }
    eng_model_init_weights(m, 5);
    const size_t np = eng_model_slab_floats(m);
    hook_log h = {0};
    h.seen = calloc(np, sizeof *h.seen);
    h.slab = eng_model_grad_slab(m);
    float *final = malloc(np * sizeof *final);
    int32_t tok[32], tgt[32];
    for (int i = 0; i < 32; i++) {
        tok[i] = (i * 37 + 11) % 256;
        tgt[i] = (i * 53 + 7) % 256;
    }
    double loss;
    int rc = 0;
    /* two micro-batches; the hook only on the second, as the trainer does */
    eng_model_zero_grads(m);
    rc |= eng_model_forward(m, tok, tgt, 2, 16, &loss, NULL, &e) || eng_model_backward(m, 0.5f, &e);
    eng_model_set_grad_hook(m, on_ready, &h);
    rc |= eng_model_forward(m, tgt, tok, 2, 16, &loss, NULL, &e) || eng_model_backward(m, 0.5f, &e);
    eng_model_set_grad_hook(m, NULL, NULL);
    eng_model_get_grads(m, final);
    /* tiling: sorted by offset the ranges are contiguous from 0 to np */
    int tiles = h.n <= MAXR && h.n == 3 + 2 && h.off[0] != (size_t)-1; /* head, 3 layers, embedding */
    size_t covered = 0;
    for (int pass = 0; tiles && pass < h.n; pass++) {
        int found = 0;
        for (int i = 0; i < h.n; i++)
            if (h.off[i] == covered && h.len[i] > 0) {
                covered += h.len[i];
                found = 1;
                break;
            }
        tiles = found;
    }
    tiles = tiles && covered == np;
    /* order: the head and final norm first, the embedding (offset 0) last,
     * the layers from the last to the first between */
    int order = h.n == 5 && h.off[4] == 0 && h.off[1] > h.off[2] && h.off[2] > h.off[3] && h.off[0] > h.off[1];
    int same = !rc && memcmp(h.seen, final, np * sizeof *final) == 0;
    double norm = 0;
    for (size_t i = 0; i < np; i++)
        norm += (double)final[i] * final[i];
    TAP_OK(!rc && tiles && order && same && norm > 0,
           "%s%s: the hook reports %d ranges that tile the %zu gradients, head first, embedding last, each final "
           "when reported",
           arch, tied ? " (tied head)" : "", h.n, np);
    free(h.seen);
    free(final);
    eng_model_free(m);
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    test_env();
    test_split();
    test_single();
    eng_backend *be;
    tlm_err e = {0};
    if (eng_backend_cpu_create(&be, 1, &e)) {
        printf("Bail out! %s\n", e.msg);
        return 1;
    }
    test_hook(be, "transformer", "", 0);
    test_hook(be, "transformer", "", 1);
    test_hook(be, "gated_attn", "", 0);
    test_hook(be, "hope_attn", ", hope: {levels: 2, chunks: [1, 4]}", 0);
    test_hook(be, "titans", ", titans: {window: 8, chunk: 5, persistent: 2}", 0);
    eng_backend_free(be);
    return tap_done();
}
