/* run.c: a training job from set-up to exit status (run.h), as one
 * process or as one rank of a data-parallel job (docs/parallel.md): the
 * rank comes from the launcher's environment (engine/comm/comm.h); rank 0
 * writes the events, heartbeats, config.json and checkpoints, the others
 * only train and, on failure, say why on stderr. */
#include "worker/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/config/account.h"
#include "common/fileio.h"
#include "common/fmt.h"
#include "engine/comm/comm.h"
#include "engine/config/build.h"
#include "engine/config/ranks.h"
#include "engine/model/ops.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/cuda/backend.h"
#include "config.h"
#include "engine/eval/eval.h"
#include "engine/train/train.h"
#include "engine/train/lr.h"
#include "worker/buildinfo.h"
#include "worker/describe.h"
#include "worker/events.h"
#include "worker/heartbeat.h"
#include "worker/signals.h"

typedef struct job {
    const wrk_opts *o;
    wrk_events ev;
    wrk_heartbeat hb;
    eng_config cfg;
    eng_backend *be;          /* what the evaluator and the trainer compute on */
    int precision;            /* train.precision resolved for the device (ENG_PREC_FP32 or ENG_PREC_BF16) */
    eng_evaluator *evaluator; /* the suites besides val, handed to the trainer */
    eng_trainer *tr;
    char ckpt_root[ENG_CKPT_PATH_MAX];
    double t_start;        /* monotonic, this attempt */
    int64_t first_step;    /* step this attempt started from */
    eng_comm_env env;      /* who this process is among the job's ranks */
    eng_comm *comm;        /* and its collectives (one process: the single one) */
    int null_fd;           /* a rank other than 0: its events go here (/dev/null); -1 */
    int gpu;               /* this rank's GPU (--device's K plus its local rank); -1: the CPU */
} job;

/* this process's rank, for the log's prefix (0 writes plain lines) */
static int g_rank;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[TLM_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    tlm_msg_vprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (g_rank)
        fprintf(stderr, "tlm-worker rank %d: %s\n", g_rank, line);
    else
        fprintf(stderr, "tlm-worker: %s\n", line);
    fflush(stderr);
}

/* tlm-worker's numbers: 1.25M tokens, 19.7k tokens/s */
static void human_count(double x, char out[32])
{
    static const tlm_fmt_step steps[] = {
        {1e9, 1e9, "%.2fG", NULL}, {1e6, 1e6, "%.2fM", NULL}, {1e3, 1e3, "%.1fk", NULL}, {0, 1, "%.0f", NULL}};
    tlm_fmt_steps(out, 32, x, steps, 4);
}

static void human_time(double s, char out[32]) { tlm_fmt_duration(out, 32, s, TLM_DUR_DOWN); }

/* ------------------------------------------------------------ hooks */
static void on_log(void *ud, const char *msg)
{
    (void)ud;
    say("%s", msg);
}

static void on_step(void *ud, const eng_step_info *s)
{
    job *j = ud;
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_STEP);
    wrk_ev_int(&ev, "step", s->step);
    wrk_ev_int(&ev, "tokens", s->tokens);
    wrk_ev_num(&ev, "loss", s->loss);
    wrk_ev_num(&ev, "lr", s->lr);
    wrk_ev_num(&ev, "grad_norm", s->grad_norm);
    wrk_ev_num(&ev, "tokens_per_s", s->tokens_per_s);
    wrk_ev_num(&ev, "step_ms", s->step_ms);
    wrk_events_emit(&j->ev, &ev);

    double spent = tlm_clock_mono() - j->t_start;
    int64_t done = s->step - j->first_step;
    double eta = done > 0 ? spent / (double)done * (double)(s->total_steps - s->step) : NAN;
    char tok[32], rate[32], left[32];
    human_count((double)s->tokens, tok);
    human_count(s->tokens_per_s, rate);
    human_time(eta, left);
    say("step %" PRId64 "/%" PRId64 " (%.1f%%) tokens %s loss %.4f lr %.3g gnorm %.3g | %s tok/s | eta %s", s->step,
        s->total_steps, 100.0 * (double)s->step / (double)s->total_steps, tok, s->loss, s->lr, s->grad_norm, rate,
        left);
}

static void on_eval(void *ud, const eng_eval_info *v)
{
    job *j = ud;
    wrk_emit_eval(&j->ev, v->step, v->tokens, v->suite, v->task, v->metric, v->value, v->n, v->stderr_);
    if (!strcmp(v->suite, v->task))
        say("eval at step %" PRId64 ": %s %s = %.4f (n %" PRId64 ")", v->step, v->suite, v->metric, v->value, v->n);
    else
        say("eval at step %" PRId64 ": %s/%s %s = %.4f (n %" PRId64 ")", v->step, v->suite, v->task, v->metric,
            v->value, v->n);
}

static void on_ckpt(void *ud, const char *path, int64_t step, int64_t tokens)
{
    job *j = ud;
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_CKPT);
    wrk_ev_str(&ev, "path", path);
    wrk_ev_int(&ev, "step", step);
    wrk_ev_int(&ev, "tokens", tokens);
    wrk_events_emit(&j->ev, &ev);
    say("checkpoint %s", path);
}

static void on_layer(void *ud, int64_t step, int64_t tokens, int layer, const char *name, double value)
{
    job *j = ud;
    wrk_emit_layer(&j->ev, step, tokens, layer, name, value);
}

static void on_phase(void *ud, const char *phase, int64_t step, int64_t tokens)
{
    job *j = ud;
    wrk_heartbeat_set(&j->hb, phase, step, tokens);
}

static int on_stop_requested(void *ud)
{
    (void)ud;
    return wrk_stop_signal() != 0;
}

/* ------------------------------------------------------------ final events */
static void progress(const job *j, int64_t *step, int64_t *tokens)
{
    *step = 0, *tokens = 0;
    if (j->tr) {
        *step = eng_trainer_state(j->tr)->step;
        *tokens = eng_trainer_state(j->tr)->tokens;
    }
}

static int fail(job *j, const tlm_err *e)
{
    int64_t step, tokens;
    progress(j, &step, &tokens);
    int code = e->code ? e->code : TLM_EINTERNAL;
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_ERROR);
    wrk_ev_str(&ev, "kind", tlm_status_kind(code));
    wrk_ev_str(&ev, "message", e->msg);
    wrk_ev_int(&ev, "step", step);
    wrk_ev_int(&ev, "tokens", tokens);
    wrk_events_emit(&j->ev, &ev);
    say("error (%s): %s", tlm_status_kind(code), e->msg);
    return tlm_exit_status(code);
}

static int stopped(job *j)
{
    int64_t step, tokens;
    progress(j, &step, &tokens);
    const char *ck = j->tr ? eng_trainer_last_ckpt(j->tr) : "";
    const char *sig = wrk_signal_name(wrk_stop_signal());
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_STOPPED);
    wrk_ev_int(&ev, "step", step);
    wrk_ev_int(&ev, "tokens", tokens);
    wrk_ev_str(&ev, "signal", sig);
    wrk_ev_str(&ev, "ckpt", ck[0] ? ck : NULL);
    wrk_events_emit(&j->ev, &ev);
    say("stopped by %s at step %" PRId64 "%s%s", sig, step, ck[0] ? "; resume from " : " (no checkpoint)", ck);
    return TLM_EXIT_INTERRUPTED;
}

static int done(job *j)
{
    const eng_train_state *st = eng_trainer_state(j->tr);
    /* a run whose final numbers are not finite has trained nothing worth
     * keeping (weights that hold NaN or inf give a NaN loss every step):
     * never a success */
    int val_run = 0; /* then the last step's evaluation gave val_loss; NaN there is a NaN loss */
    for (int i = 0; i < j->cfg.eval.n_suites; i++)
        val_run |= !strcmp(j->cfg.eval.suites[i], "val");
    if (!isfinite(st->loss) || (val_run && !isfinite(st->val_loss))) {
        tlm_err e;
        tlm_errf(&e, TLM_EDIVERGED,
                 "training ended at step %" PRId64 " with a final loss of %g and a validation loss of %g: a result "
                 "that is not finite is no result (are the weights finite? a checkpoint holding NaN or inf is "
                 "refused at load)",
                 st->step, st->loss, st->val_loss);
        return fail(j, &e);
    }
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_DONE);
    wrk_ev_int(&ev, "step", st->step);
    wrk_ev_int(&ev, "tokens", st->tokens);
    wrk_ev_num(&ev, "loss", st->loss);
    if (isnan(st->val_loss)) /* no "val" among eval.suites */
        wrk_ev_null(&ev, "val_loss");
    else
        wrk_ev_num(&ev, "val_loss", st->val_loss);
    wrk_ev_num(&ev, "elapsed_s", st->elapsed_s);
    wrk_events_emit(&j->ev, &ev);
    char left[32];
    human_time(st->elapsed_s, left);
    if (isnan(st->val_loss))
        say("done: %" PRId64 " steps, loss %.4f, %s", st->step, st->loss, left);
    else
        say("done: %" PRId64 " steps, loss %.4f, validation loss %.4f (ppl %.3f), %s", st->step, st->loss,
            st->val_loss, exp(st->val_loss), left);
    return 0;
}

/* ------------------------------------------------------------ set-up */
static int has_checkpoints(const char *root)
{
    DIR *d = opendir(root);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d)))
        found = !strncmp(de->d_name, TLM_CKPT_PREFIX, sizeof TLM_CKPT_PREFIX - 1);
    closedir(d);
    return found;
}

/* The run folder exists, is writable, holds config.json and ckpt/. */
static int prepare_out(job *j, tlm_err *e)
{
    const char *out = j->o->out;
    int rc = tlm_mkdir_p(out, e);
    if (rc) {
        e->code = TLM_EIO;
        return tlm_err_prefix(e, "--out");
    }
    char path[ENG_CKPT_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.write-test.%ld", out, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fclose(f))
        return tlm_errf(e, TLM_EIO, "--out %s: the run folder is not writable: %s", out, strerror(errno));
    unlink(path);
    if ((size_t)snprintf(j->ckpt_root, sizeof j->ckpt_root, "%s/" TLM_RUN_CKPT, out) >= sizeof j->ckpt_root)
        return tlm_errf(e, TLM_EIO, "--out %s: path too long", out);
    if ((rc = tlm_mkdir_p(j->ckpt_root, e)))
        return rc;

    /* config.json: the resolved config, unless --config is that very file */
    snprintf(path, sizeof path, "%s/" TLM_RUN_CONFIG, out);
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(j->o->config, a) && realpath(path, b) && !strcmp(a, b))
        return 0;
    char *json = eng_config_json(&j->cfg);
    if (!json)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    size_t n = strlen(json);
    json[n] = '\n'; /* the terminating NUL becomes a final newline */
    rc = tlm_write_file_atomic(path, json, n + 1, e);
    free(json);
    return rc;
}

static void emit_start(job *j, int64_t resumed_from)
{
    const eng_train_state *st = eng_trainer_state(j->tr);
    eng_account acc;
    tlm_err ae;
    double flops = eng_account_compute(&j->cfg, &acc, &ae) ? NAN : acc.flops_train;
    char host[256], os[256];
    wrk_host(host, sizeof host);
    wrk_os(os, sizeof os);
    const int64_t total = eng_trainer_total_steps(j->tr);
    wrk_ev ev;
    wrk_ev_begin(&ev, &j->ev, TLM_EV_START);
    wrk_ev_int(&ev, "pid", (int64_t)getpid());
    wrk_ev_str(&ev, "config_id", st->config_id);
    wrk_ev_int(&ev, "step", st->step);
    wrk_ev_int(&ev, "tokens", st->tokens);
    if (resumed_from >= 0)
        wrk_ev_int(&ev, "resumed_from_step", resumed_from);
    else
        wrk_ev_null(&ev, "resumed_from_step");
    wrk_ev_int(&ev, "total_steps", total);
    wrk_ev_int(&ev, "total_tokens", total * j->cfg.train.batch_tokens);
    wrk_ev_int(&ev, "params", (int64_t)eng_model_param_count(eng_trainer_model(j->tr)));
    wrk_ev_num(&ev, "flops_per_token", flops);
    wrk_ev_str(&ev, "device", j->o->device);
    wrk_ev_str(&ev, "precision", eng_precision_name(j->precision));
    wrk_ev_int(&ev, "ranks", j->comm->size);
    wrk_ev_str(&ev, "launcher", j->env.launcher);
    wrk_ev_str(&ev, "comm", j->comm->ops->name);
    wrk_ev_int(&ev, "threads", eng_backend_cpu_threads(j->be));
    wrk_ev_str(&ev, "blas", eng_runtime_blas());
    wrk_ev_str(&ev, "blas_kernel", eng_runtime_kernel());
    const char *advice = eng_runtime_kernel_advice();
    if (advice)
        wrk_ev_str(&ev, "blas_advice", advice);
    else
        wrk_ev_null(&ev, "blas_advice");
    wrk_ev_str(&ev, "compiler", eng_runtime_compiler());
    wrk_ev_str(&ev, "tlm_version", wrk_version());
    wrk_ev_str(&ev, "git_commit", wrk_git_commit());
    wrk_ev_str(&ev, "host", host);
    wrk_ev_str(&ev, "os", os);
    wrk_ev_strv(&ev, "argv", j->o->argc, j->o->argv);
    wrk_events_emit(&j->ev, &ev);

    if (advice)
        say("warning: %s", advice);

    const int *w = eng_model_widths(eng_trainer_model(j->tr));
    for (int l = 0; l < j->cfg.model.layers; l++) {
        wrk_ev_begin(&ev, &j->ev, TLM_EV_LAYER);
        wrk_ev_int(&ev, "step", st->step);
        wrk_ev_int(&ev, "tokens", st->tokens);
        wrk_ev_int(&ev, "layer", l);
        wrk_ev_str(&ev, "name", "d_ff");
        wrk_ev_int(&ev, "value", w[l]);
        wrk_events_emit(&j->ev, &ev);
    }

    char params[32], tok[32], ranks[96] = "";
    human_count((double)eng_model_param_count(eng_trainer_model(j->tr)), params);
    human_count((double)j->cfg.train.batch_tokens, tok);
    eng_rank_split sp;
    tlm_err se;
    if (eng_rank_split_of(&j->cfg.train, j->comm->size, &sp, &se))
        sp = (eng_rank_split){1, 0, 0, j->cfg.train.micro_batch, eng_train_accum_steps(&j->cfg.train)};
    if (j->comm->size > 1)
        snprintf(ranks, sizeof ranks, " on each of %d ranks (%s, %s)", j->comm->size, j->env.launcher,
                 j->comm->ops->name);
    say("job %.12s: %s %s, %s parameters; %" PRId64 " steps of %s tokens (%d x %d sequences of %d%s); %s (%s), %d "
        "threads; from step %" PRId64,
        st->config_id, j->cfg.scale, eng_arch_name(j->cfg.arch), params, total, tok, sp.accum, sp.micro,
        j->cfg.train.seq_len, ranks, eng_runtime_blas(), eng_runtime_kernel(), eng_backend_cpu_threads(j->be),
        st->step);
}

/* The backend --device names: "cpu", or "cuda:K" (K the index the CUDA
 * runtime gives, after CUDA_VISIBLE_DEVICES: tlmd sets it to the slot's GPU
 * and passes cuda:0).  In a build without the CUDA backend every GPU is a
 * config error, as tlmd refuses GPU slots on the same fact
 * (engine/config/build.h, ENG_GPU_BACKEND); so is a GPU the runtime does not
 * list ("no GPU": the job cannot run on this machine). */
/* The GPU index --device names (cuda:K: K; cpu: -1); TLM_ECONFIG for
 * anything else. */
int wrk_device_index(const char *device, int *k, tlm_err *e)
{
    *k = -1;
    if (!strcmp(device, "cpu"))
        return 0;
    if (!strncmp(device, "cuda:", 5) && device[5] >= '0' && device[5] <= '9') {
        char *end;
        long v = strtol(device + 5, &end, 10);
        if (!*end && v <= 1023)
            *k = (int)v;
    }
    if (*k < 0)
        return tlm_errf(e, TLM_ECONFIG, "--device %s: expected cpu or cuda:K (K from 0 to 1023)", device);
#ifdef TLM_HAVE_CUDA
    return 0;
#else
    return tlm_errf(e, TLM_ECONFIG, "--device %s: this build trains on the CPU only (--device cpu)", device);
#endif
}

/* The backend of this rank: the CPU, or GPU k (one rank per GPU: the rank's
 * GPU is --device's K plus its local rank; make_comm has checked it),
 * storing activations in `precision` (eng_precision_resolve's, which
 * --describe's GPU estimate plans in too), its fused attention as
 * train.attention says. */
static int make_backend(eng_backend **be, const char *device, int k, int threads, int precision, int attention,
                        tlm_err *e)
{
    if (k < 0) /* fp32 only: eng_precision_resolve refused bf16 already */
        return eng_backend_cpu_create(be, threads, e);
#ifdef TLM_HAVE_CUDA
    int rc = eng_backend_cuda_create(be, k, e);
    if (rc)
        return tlm_err_prefix(e, "--device %s", device);
    if (eng_backend_cuda_set_dtype(*be, precision == ENG_PREC_BF16 ? ENG_BF16 : ENG_F32, e)) {
        eng_backend_free(*be);
        *be = NULL;
        return tlm_err_prefix(e, "--device %s", device);
    }
    eng_backend_cuda_set_attention_cudnn(*be, attention == ENG_ATTN_CUDNN);
    return 0;
#else
    (void)be, (void)threads, (void)precision, (void)attention;
    return tlm_errf(e, TLM_ECONFIG, "--device %s: this build trains on the CPU only (--device cpu)", device);
#endif
}

/* Who this process is, and its communicator: one process, or a rank of
 * the job mpirun or srun launched (MPI on the CPU, NCCL on GPUs).  *k: the
 * GPU of this rank (-1: the CPU). */
static int make_comm(job *j, int *k, tlm_err *e)
{
    int rc = wrk_device_index(j->o->device, k, e);
    if (rc)
        return rc;
    if (*k >= 0 && j->env.size > 1) {
        *k += j->env.local_rank;
#ifdef TLM_HAVE_CUDA
        int n = 0;
        if ((rc = eng_cuda_device_count(&n, e)))
            return tlm_err_prefix(e, "rank %d of %d (--device %s)", j->env.rank, j->env.size, j->o->device);
        if (*k >= n) {
            char host[256];
            wrk_host(host, sizeof host);
            return tlm_errf(e, TLM_ECONFIG,
                            "rank %d of %d (local rank %d on %s) has no GPU: --device %s plus its local rank is GPU %d, "
                            "and this node shows %d; run one rank per GPU (resources.ranks_per_node at most %d)",
                            j->env.rank, j->env.size, j->env.local_rank, host, j->o->device, *k, n, n);
        }
#endif
    }
    j->gpu = *k;
    return eng_comm_create(&j->comm, &j->env, *k >= 0 ? ENG_COMM_CUDA : ENG_COMM_HOST, *k, e);
}

/* A failure of the trainer on the CUDA backend: the backend's own first
 * error (an op's out-of-memory or failed launch) is the cause, whatever the
 * trainer made of what followed (a NaN gradient norm reads as divergence). */
static void device_cause(const eng_backend *be, tlm_err *e)
{
#ifdef TLM_HAVE_CUDA
    tlm_err ce = {0};
    if (be && eng_backend_cuda_status(be, &ce))
        *e = ce;
#else
    (void)be, (void)e;
#endif
}

/* MemAvailable of /proc/meminfo in bytes, 0 when unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* An out-of-memory failure says what the job needs (--describe's
 * estimate) beside what the machine has, and what makes it smaller. */
static void oom_note(const job *j, tlm_err *e)
{
    if (e->code != TLM_ENOMEM)
        return;
    int gpu = j->gpu >= 0;
    size_t need = 0, state = 0;
    tlm_err ne;
    if (wrk_memory_need(&j->cfg, gpu, &need, &state, &ne))
        need = state = 0;
    uint64_t have = 0;
    int fit = 0; /* the micro-batch that fits this rank's GPU, by the estimate */
    if (!gpu)
        have = mem_available();
#ifdef TLM_HAVE_CUDA
    eng_cuda_device_info info;
    size_t fit_total;
    if (gpu && !eng_cuda_device_info_get(j->gpu, &info, &ne)) { /* this rank's own GPU */
        have = info.free_bytes;
        if (wrk_fit_micro_batch(&j->cfg, info.total_bytes, &fit, &fit_total, &ne) ||
            fit >= j->cfg.train.micro_batch)
            fit = 0;
    }
#endif
    const double gib = 1073741824.0;
    char what[400];
    int n = need ? snprintf(what, sizeof what, "the model needs about %.2f GiB on the %s (tlm-worker --describe: %s)",
                            (double)need / gib, gpu ? "GPU" : "CPU", gpu ? "gpu_memory" : "cpu_memory")
                 : snprintf(what, sizeof what, "the model's need is unknown");
    if (have && n > 0 && (size_t)n < sizeof what)
        n += snprintf(what + n, sizeof what - (size_t)n, ", %.2f GiB is available%s", (double)have / gib,
                      gpu ? " on the GPU" : " (MemAvailable)");
    /* what makes it fit: the micro-batch shrinks the activations only */
    const char *fix = have && state >= have
                          ? "its weights, gradients and AdamW state alone take %.2f GiB: a smaller model, or a machine "
                            "with more memory"
                          : "a smaller train.micro_batch (gradients accumulate to the same batch) or seq_len needs "
                            "less";
    char how[200];
    if (fit)
        snprintf(how, sizeof how,
                 "train.micro_batch: %d fits this GPU by that estimate (gradients accumulate to the same batch)", fit);
    else
        snprintf(how, sizeof how, fix, (double)state / gib);
    size_t len = strlen(e->msg);
    tlm_msg_printf(e->msg + len, sizeof e->msg - len, "; %s; %s", what, how);
}

/* The set-up that involves no other rank: config, backend, run folder,
 * evaluator, trainer.  0, or the failure (in e). */
static int set_up(job *j, int k, tlm_err *e)
{
    const wrk_opts *o = j->o;
    int rc;
    if ((rc = eng_config_load(o->config, &j->cfg, e)))
        return rc;
    wrk_heartbeat_progress(&j->hb);
    eng_runtime_set_threads(o->threads);
    /* the precision before the backend: bf16 on the CPU is refused as a
     * config error, with no device touched; so is train.cuda_graph on
     * where it cannot run (the model reads the setting itself) */
    int graph;
    if ((rc = eng_precision_resolve(&j->cfg, k >= 0, &j->precision, e)) ||
        (rc = eng_cuda_graph_resolve(&j->cfg, k >= 0, &graph, e)) ||
        (rc = make_backend(&j->be, o->device, k, o->threads, j->precision, j->cfg.train.attention, e)))
        return rc;
    /* the run folder is rank 0's; the others only read checkpoints in it */
    if (j->env.rank == 0 && (rc = prepare_out(j, e)))
        return rc;
    if (j->env.rank != 0 &&
        (size_t)snprintf(j->ckpt_root, sizeof j->ckpt_root, "%s/" TLM_RUN_CKPT, o->out) >= sizeof j->ckpt_root)
        return tlm_errf(e, TLM_EIO, "--out %s: path too long", o->out);
    wrk_heartbeat_progress(&j->hb);
    if (j->env.rank == 0 && !o->resume && has_checkpoints(j->ckpt_root))
        return tlm_errf(e, TLM_ECONFIG,
                        "%s already holds checkpoints of an earlier run: pass --resume to continue it, or use a fresh "
                        "--out folder",
                        j->ckpt_root);
    /* the evaluation inputs, read in full now: a missing or corrupt file
     * fails the job before training time is spent (rank 0 runs the suites) */
    eng_train_suites suites;
    int have_suites = 0;
    if (j->env.rank == 0) {
        if ((rc = eng_evaluator_create(&j->evaluator, &j->cfg, j->be, e)) ||
            (rc = eng_evaluator_check(j->evaluator, e)))
            return rc;
        eng_evaluator_suites(j->evaluator, &suites);
        have_suites = eng_evaluator_n_suites(j->evaluator) > 0;
    }
    wrk_heartbeat_progress(&j->hb);
    eng_train_hooks hooks = {j, on_log, on_step, on_eval, on_ckpt, on_phase, on_stop_requested, on_layer};
    if (j->env.rank != 0) /* the others report nothing but their failure, which wrk_run says */
        hooks = (eng_train_hooks){.ud = j, .stop_requested = on_stop_requested};
    if ((rc = eng_trainer_create(&j->tr, &j->cfg, j->be, j->comm, have_suites ? &suites : NULL, j->ckpt_root, &hooks,
                                 e)))
        oom_note(j, e);
    return rc;
}

int wrk_run(const wrk_opts *o)
{
    job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.null_fd = -1;
    j.gpu = -1;
    tlm_err e = {0};
    wrk_signals_install();
    int status, rc = eng_comm_env_read(&j.env, &e), k = -1;
    if (rc)
        j.env = (eng_comm_env){0, 1, 0, 1, "none"};
    g_rank = j.env.rank;
    /* events are rank 0's alone: the others write theirs nowhere */
    int evfd = o->events_fd;
    if (j.env.rank != 0 && (evfd = j.null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
        evfd = o->events_fd;
    wrk_events_init(&j.ev, evfd, o->job);
    j.ev.sync = o->events_sync && j.env.rank == 0;
    if (rc) {
        status = fail(&j, &e);
        goto out;
    }
    if (j.env.rank == 0 && wrk_heartbeat_start(&j.hb, &j.ev, o->heartbeat))
        say("cannot start the heartbeat thread; continuing without heartbeats");
    if (make_comm(&j, &k, &e)) {
        status = fail(&j, &e);
        goto out;
    }
    /* from here on every rank fails together (engine/comm/comm.h,
     * eng_comm_agree): none waits for one that has given up */
    rc = eng_comm_agree(j.comm, set_up(&j, k, &e), &e);
    int64_t from = -1;
    if (!rc && o->resume)
        rc = eng_trainer_resume(j.tr, &from, &e);
    if (rc) {
        status = fail(&j, &e);
        goto out;
    }
    j.first_step = eng_trainer_state(j.tr)->step;
    j.t_start = tlm_clock_mono();
    if (j.env.rank == 0)
        emit_start(&j, from);

    rc = eng_trainer_run(j.tr, &e);
    if (rc != 0 && rc != TLM_EINTERRUPTED) {
        device_cause(j.be, &e);
        rc = e.code;
    }
    if (rc == 0)
        status = j.env.rank == 0 ? done(&j) : 0;
    else if (rc == TLM_EINTERRUPTED)
        /* the attempt's status is rank 0's: the others, whose checkpoint
         * share is written, exit 0, since both launchers end a job as soon
         * as one rank exits non-zero (srun --kill-on-bad-exit, mpirun) and
         * would kill rank 0 while it still reports the stop */
        status = j.env.rank == 0 ? stopped(&j) : 0;
    else {
        oom_note(&j, &e);
        status = fail(&j, &e);
    }
out:
    wrk_heartbeat_stop(&j.hb);
    eng_trainer_free(j.tr);
    eng_evaluator_free(j.evaluator);
    eng_backend_free(j.be);
    eng_comm_free(j.comm);
    wrk_events_clear(&j.ev);
    if (j.null_fd >= 0)
        close(j.null_fd);
    return status;
}
