/* test_ckpt_bf16.c: precision does not travel with a checkpoint
 * (docs/engine.md "Precision"): through the real trainer and real
 * checkpoint folders, for a transformer and a Titans model (MAG), each
 * trained N steps with a checkpoint at step K on the emulated CUDA backend
 * in bf16 (cuda-emu-bf16) and on the CPU in fp32:
 *   1. the bf16 run's step-K checkpoint resumes on the CPU: the master
 *      weights and both AdamW moments the CPU model loads are the bf16
 *      model's at step K bit for bit, and steps K+1..N have losses within
 *      2% of the bf16 run's (issue 24's bf16-vs-fp32 bound);
 *   2. it resumes on cuda-emu-bf16 again: steps K+1..N repeat the
 *      uninterrupted run's losses and final master weights bit for bit
 *      (the weight copy made again from the loaded master is the one the
 *      AdamW step had written);
 *   3. the CPU run's step-K checkpoint resumes on cuda-emu-bf16, loads its
 *      master bit for bit, and trains to N within 2% of the CPU run's
 *      losses.
 * The data is a shard the test writes; sequences of 13 tokens, Titans
 * chunks of 8 (the emulator is slow: test_cuda_model's shapes).  A kept
 * emulator error (memory, race, barrier checks) fails the run.  Exits 77
 * when built without the emulated CUDA backend. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/protocol.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/cuda/backend.h"
#include "engine/format/shard.h"
#include "engine/train/train.h"
#include "tests/lib/tap.h"

#ifndef TLM_HAVE_CUDA_EMU
int main(void)
{
    return tap_skip("built without the emulated CUDA backend");
}
#else

enum { N = 6, K = 3, T = 13, SEQS = 4 }; /* steps, checkpoint step, tokens a sequence, sequences a step */
#define LOSS_TOL 2e-2                     /* bf16 against fp32, relative, every step */

typedef struct model_row {
    const char *name, *yaml; /* the model's config lines */
} model_row;

static const model_row models[] = {
    {"transformer", "arch: transformer\nmodel: {d_model: 64, layers: 2, heads: 4, d_ff: 128, tied: true}\n"},
    {"titans mag", "arch: titans\nmodel: {d_model: 64, layers: 2, heads: 4, d_ff: 128, tied: false,"
                   " titans: {variant: mag, chunk: 8}}\n"},
};

static char tmp[256], shard[320]; /* the test's folder, and the data shard in it */

/* The data: a phrase repeated, one letter in five replaced by a fixed
 * LCG, so that the loss falls from ln 256 within a few steps. */
static int write_shard(void)
{
    if (!tap_tmpdir(tmp, sizeof tmp, "tlm-test-ckpt-bf16"))
        return -1;
    snprintf(shard, sizeof shard, "%s/train.tlmtok", tmp);
    static const char phrase[] = "checkpoints carry the master weights, never the copy. ";
    enum { NTOK = 4000 };
    uint32_t tok[NTOK], x = 7;
    for (int i = 0; i < NTOK; i++) {
        x = x * 1664525u + 1013904223u;
        tok[i] = i % 5 ? (uint8_t)phrase[i % (int)(sizeof phrase - 1)] : 'a' + (x >> 24) % 26;
    }
    eng_shard_writer *w;
    tlm_err e = {0};
    uint8_t sha[32] = {0};
    if (eng_shard_writer_open(&w, shard, 0, 256, "bytes", sha, &e))
        return -1;
    if (eng_shard_writer_append(w, tok, NTOK, &e)) {
        eng_shard_writer_close(w, &e);
        return -1;
    }
    return eng_shard_writer_close(w, &e);
}

static int config(const model_row *mr, eng_config *c, tlm_err *e)
{
    char y[2048];
    snprintf(y, sizeof y,
             "%stokenizer: bytes\nseed: 3\n"
             "data: {train: %s, val_fraction: 0.1}\n"
             "train: {seq_len: %d, tokens: %d, batch_tokens: %d, micro_batch: %d, lr: 0.003, warmup_tokens: %d,"
             " grad_clip: 1.0, log_every: 1, ckpt_every_tokens: %d, keep_checkpoints: 4}\n"
             "eval: {suites: [val], every_tokens: 0, val_tokens: %d}\n",
             mr->yaml, shard, T, N * SEQS * T, SEQS * T, SEQS / 2, SEQS * T, K * SEQS * T, T);
    return eng_config_from_text(mr->name, y, strlen(y), c, e);
}

/* One trainer's run: the loss of every step, the master weights and both
 * moments at each checkpoint (K and N, read from the model as the
 * checkpoint is written), the step it resumed from. */
typedef struct run {
    eng_trainer *t;
    double loss[N + 1];
    size_t np;
    float *at[N + 1]; /* at[s]: params, exp_avg, exp_avg_sq of step s, 3 x np floats */
    int64_t from;
    double secs;
} run;

static void on_step(void *ud, const eng_step_info *s)
{
    run *r = ud;
    if (s->step >= 1 && s->step <= N)
        r->loss[s->step] = s->loss;
}

static void on_ckpt(void *ud, const char *path, int64_t step, int64_t tokens)
{
    run *r = ud;
    (void)path, (void)tokens;
    if (step < 1 || step > N || r->at[step])
        return;
    const eng_model *m = eng_trainer_model(r->t);
    float *p = malloc(3 * r->np * sizeof *p);
    if (p && !eng_model_get_params(m, p) && !eng_model_get_optim(m, p + r->np, p + 2 * r->np))
        r->at[step] = p;
    else
        free(p);
}

static void run_free(run *r)
{
    for (int s = 0; s <= N; s++)
        free(r->at[s]);
}

/* the state a trainer holds now into a fresh 3 x np array (NULL: no memory) */
static float *state_of(const eng_trainer *t, size_t np)
{
    float *p = malloc(3 * np * sizeof *p);
    if (p && (eng_model_get_params(eng_trainer_model(t), p) ||
              eng_model_get_optim(eng_trainer_model(t), p + np, p + 2 * np))) {
        free(p);
        p = NULL;
    }
    return p;
}

/* Train on be with checkpoints under root, from scratch (resume 0) or
 * from the newest checkpoint there (resume 1: *loaded receives the state
 * the trainer loaded, before it trains); gpu: be is the emulator, whose
 * kept error fails the run. */
static int train(const model_row *mr, const eng_backend *be, int gpu, const char *root, int resume, run *r,
                 float **loaded, tlm_err *e)
{
    memset(r, 0, sizeof *r);
    r->from = -1;
    eng_config c;
    int rc = config(mr, &c, e);
    eng_train_hooks h = {r, NULL, on_step, NULL, on_ckpt, NULL, NULL, NULL};
    if (rc || (rc = eng_trainer_create(&r->t, &c, be, NULL, NULL, root, &h, e)))
        return rc;
    r->np = eng_model_slab_floats(eng_trainer_model(r->t));
    const double t0 = tlm_clock_mono();
    if (resume && !(rc = eng_trainer_resume(r->t, &r->from, e)) && loaded &&
        !(*loaded = state_of(r->t, r->np)))
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (!rc)
        rc = eng_trainer_run(r->t, e);
    r->secs = tlm_clock_mono() - t0;
    if (!rc && gpu)
        rc = eng_backend_cuda_emu_status(be, e);
    eng_trainer_free(r->t);
    r->t = NULL;
    return rc;
}

/* Leave only the step-K checkpoint under root: the run from it writes its
 * own later ones. */
static void keep_only_k(const char *root)
{
    char name[TLM_CKPT_NAME_MAX], dir[600];
    for (int s = K + 1; s <= N; s++) {
        tlm_ckpt_name(s, name);
        snprintf(dir, sizeof dir, "%s/%s", root, name);
        tlm_rm_tree(dir);
    }
}

/* the worst relative difference of a's losses from ref's over steps K+1..N */
static double worst_after_k(const run *a, const run *ref)
{
    return tap_max_rel(ref->loss + K + 1, a->loss + K + 1, N - K);
}

static int same_state(const float *a, const float *b, size_t np)
{
    return a && b && !memcmp(a, b, 3 * np * sizeof *a);
}

static void one_model(const model_row *mr, const eng_backend *cpu, const eng_backend *bf, const char *dir,
                      double *emu_secs)
{
    char root_bf[400], root_cpu[400];
    snprintf(root_bf, sizeof root_bf, "%s/%.20s-bf16", dir, mr->name);
    snprintf(root_cpu, sizeof root_cpu, "%s/%.20s-cpu", dir, mr->name);
    tlm_err e = {0};
    run gb, cb, gg, cc, gc;
    float *ld = NULL;

    /* the bf16 run, uninterrupted, checkpointed at K and N */
    int rc = train(mr, bf, 1, root_bf, 0, &gb, NULL, &e);
    *emu_secs += gb.secs;
    TAP_OK(!rc && gb.at[K] && gb.at[N], "%s: %d steps on cuda-emu-bf16, checkpoints at %d and %d (%.1f s) %s",
           mr->name, N, K, N, gb.secs, rc ? e.msg : "");
    if (rc) {
        run_free(&gb);
        return;
    }

    /* 1. its step-K checkpoint on the CPU */
    keep_only_k(root_bf);
    rc = train(mr, cpu, 0, root_bf, 1, &cb, &ld, &e);
    TAP_OK(!rc && cb.from == K && cb.np == gb.np && same_state(ld, gb.at[K], gb.np),
           "%s: the cpu resumes the bf16 checkpoint of step %" PRId64 ": master weights and both moments bit for bit"
           " %s", mr->name, cb.from, rc ? e.msg : "");
    double w = worst_after_k(&cb, &gb);
    TAP_OK(!rc && w <= LOSS_TOL, "%s: the cpu's steps %d..%d within %.1e of the bf16 run's losses (step %d: %.6f vs %.6f)",
           mr->name, K + 1, N, w, N, cb.loss[N], gb.loss[N]);
    free(ld), ld = NULL;

    /* 2. the same checkpoint on cuda-emu-bf16 again */
    keep_only_k(root_bf);
    rc = train(mr, bf, 1, root_bf, 1, &gg, &ld, &e);
    *emu_secs += gg.secs;
    TAP_OK(!rc && gg.from == K && same_state(ld, gb.at[K], gb.np) &&
               !memcmp(gg.loss + K + 1, gb.loss + K + 1, (N - K) * sizeof *gg.loss) && gg.at[N] &&
               !memcmp(gg.at[N], gb.at[N], gb.np * sizeof *gb.at[N]),
           "%s: cuda-emu-bf16 resumes it: steps %d..%d's losses and the final master repeat the uninterrupted run's "
           "bit for bit (step %d: %.9g vs %.9g; %.1f s) %s",
           mr->name, K + 1, N, N, gg.loss[N], gb.loss[N], gg.secs, rc ? e.msg : "");
    free(ld), ld = NULL;

    /* 3. a CPU run's step-K checkpoint on cuda-emu-bf16 */
    rc = train(mr, cpu, 0, root_cpu, 0, &cc, NULL, &e);
    TAP_OK(!rc && cc.at[K], "%s: %d steps on the cpu (fp32), checkpoint at %d %s", mr->name, N, K, rc ? e.msg : "");
    keep_only_k(root_cpu);
    rc = rc || train(mr, bf, 1, root_cpu, 1, &gc, &ld, &e);
    *emu_secs += gc.secs;
    w = worst_after_k(&gc, &cc);
    TAP_OK(!rc && gc.from == K && same_state(ld, cc.at[K], cc.np) && w <= LOSS_TOL,
           "%s: cuda-emu-bf16 resumes the cpu's step-%d checkpoint (master and moments bit for bit) and trains to %d, "
           "losses within %.1e of the cpu's (step %d: %.6f vs %.6f; %.1f s) %s",
           mr->name, K, N, w, N, gc.loss[N], cc.loss[N], gc.secs, rc ? e.msg : "");
    TAP_DIAG("%s: losses, bf16 | cpu from bf16@%d | bf16 from bf16@%d || cpu | bf16 from cpu@%d", mr->name, K, K, K);
    for (int s = 1; s <= N; s++)
        if (s <= K)
            TAP_DIAG("  step %d: %.6f | - | - || %.6f | -", s, gb.loss[s], cc.loss[s]);
        else
            TAP_DIAG("  step %d: %.6f | %.6f | %.6f || %.6f | %.6f", s, gb.loss[s], cb.loss[s], gg.loss[s], cc.loss[s],
                     gc.loss[s]);
    free(ld);
    run_free(&gb), run_free(&cb), run_free(&gg), run_free(&cc), run_free(&gc);
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    tlm_err e = {0};
    eng_backend *cpu, *bf;
    if (eng_backend_cpu_create(&cpu, 0, &e) || eng_backend_cuda_emu_create(&bf, 0, &e)) {
        printf("Bail out! %s\n", e.msg);
        return 1;
    }
    if (eng_backend_cuda_emu_set_dtype(bf, ENG_BF16, &e)) {
        printf("Bail out! cuda-emu-bf16: %s\n", e.msg);
        return 1;
    }
    if (write_shard()) {
        printf("Bail out! cannot make a folder and write the data shard in it (%s)\n", tmp);
        return 1;
    }
    double emu_secs = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        one_model(&models[i], cpu, bf, tmp, &emu_secs);
    size_t now, peak;
    eng_backend_cuda_emu_memory(bf, &now, &peak);
    TAP_OK(now == 0, "cuda-emu-bf16: every allocation returned (%zu bytes held; peak %zu KiB)", now, peak >> 10);
    TAP_DIAG("cuda-emu-bf16: %.1f s in the emulated runs", emu_secs);
    eng_backend_free(bf);
    eng_backend_free(cpu);
    if (tlm_rm_tree(tmp))
        TAP_DIAG("could not remove %s", tmp);
    return tap_done();
}
#endif
