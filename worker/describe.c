/* describe.c: builds the --describe document with Jansson, with the
 * memory estimates of the job's micro-batch on the CPU and on a GPU (the
 * worker's out-of-memory message uses them too).  Every GPU estimate
 * plans in the precision the worker trains a GPU run in
 * (eng_precision_resolve for a GPU: auto is bf16). */
#include "worker/describe.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/account.h"
#include "engine/config/arch.h"
#include "engine/cpu/backend.h"
#include "engine/cuda/plan.h"
#include "engine/model/model.h"

static json_t *account_json(const eng_account *a)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "total", (json_int_t)a->total, "embedding",
                     (json_int_t)a->embedding, "non_embedding", (json_int_t)a->non_embedding, "mlp",
                     (json_int_t)a->mlp, "attention", (json_int_t)a->attn, "norm", (json_int_t)a->norm, "extra",
                     (json_int_t)a->extra, "mlp_share", a->mlp_share);
}

/* ---- the memory estimates.  The model is planned (eng_model_create) on a
 * counting table: the CPU's ops with the memory ops replaced by ones that
 * only add up what would be allocated (for the GPU rounded to cudaMalloc's
 * granule, with the CUDA backend's workspace queries: engine/cuda/plan.h;
 * for the CPU the CPU backend's own queries, each block 64-byte aligned).
 * No op runs and model creation reaches the slabs only through the table,
 * so an estimate costs no memory and needs no GPU.  is_host stays 1: the
 * host copies a device model keeps are host memory, not GPU memory, and
 * would be real allocations here.  The logits are not planned (a
 * training step never makes them whole: the classifier's workspace is a
 * chunk of rows on the GPU, engine/cuda/plan.h).  The table reports the
 * activation dtype of the precision planned (act), so the model plans its
 * activations in it and, on bf16, the weight copy (its own allocation of
 * the slab's floats x 2 bytes). */
typedef struct count_ctx {
    size_t bytes, granule;
    int overflow;
    eng_dtype act;
    const eng_ops *cpu;  /* the CPU backend's queries, asked with its own context */
    void *cpu_ctx;
} count_ctx;

static _Alignas(64) char count_fake[64];

static size_t round_up(size_t n, size_t g) { return (n + g - 1) / g * g; }

static void *count_alloc(void *ctx, size_t bytes)
{
    count_ctx *c = ctx;
    size_t r = bytes + c->granule - 1;
    if (r < bytes || SIZE_MAX - c->bytes < r)
        c->overflow = 1;
    else
        c->bytes += r / c->granule * c->granule;
    return count_fake;
}
static void count_free(void *ctx, void *p)
{
    (void)ctx, (void)p;
}
static void count_copy_in(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx, (void)dst, (void)src, (void)bytes;
}
static void count_zero(void *ctx, void *x, size_t n)
{
    (void)ctx, (void)x, (void)n;
}
static void count_copy(void *ctx, void *dst, const void *src, size_t n)
{
    (void)ctx, (void)dst, (void)src, (void)n;
}
static void count_cast(void *ctx, void *dst, eng_dtype t, const float *src, size_t n)
{
    (void)ctx, (void)dst, (void)t, (void)src, (void)n;
}
static eng_dtype count_act_dtype(void *ctx)
{
    return ((count_ctx *)ctx)->act;
}
/* the CUDA backend's answers (plan.h), the same in either storage */
static size_t count_att_ws(void *ctx, int B, int T, int H, int hd)
{
    (void)ctx, (void)hd;
    return eng_cu_attention_ws_floats(B, T, H);
}
static size_t count_swa_ws(void *ctx, int B, int T, int Hkv, int hd, int window, int Np)
{
    (void)ctx, (void)B, (void)T, (void)Hkv, (void)hd, (void)window, (void)Np;
    return 0; /* titans.cu keeps swa's D in dq */
}
static size_t count_mem_ws(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk)
{
    (void)ctx;
    return eng_cu_mem_ws_floats(B, T, H, hd, hm, depth, chunk);
}

static size_t count_cls_ws(void *ctx, int N, int V, int C)
{
    (void)ctx, (void)C;
    return eng_cu_classifier_ws_floats(N, V);
}

static size_t cpu_att_ws(void *ctx, int B, int T, int H, int hd)
{
    count_ctx *c = ctx;
    return c->cpu->attention_workspace(c->cpu_ctx, B, T, H, hd);
}
static size_t cpu_swa_ws(void *ctx, int B, int T, int Hkv, int hd, int window, int Np)
{
    count_ctx *c = ctx;
    return c->cpu->swa_workspace(c->cpu_ctx, B, T, Hkv, hd, window, Np);
}
static size_t cpu_mem_ws(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk)
{
    count_ctx *c = ctx;
    return c->cpu->titans_mem_workspace(c->cpu_ctx, B, T, H, hd, hm, depth, chunk);
}

/* The job's micro-batch in sequences (micro_batch, or the whole batch). */
static int micro_batch_of(const eng_config *cfg)
{
    if (cfg->train.micro_batch > 0)
        return cfg->train.micro_batch;
    int64_t b = cfg->train.seq_len > 0 ? cfg->train.batch_tokens / cfg->train.seq_len : 1;
    return b < 1 ? 1 : b > INT32_MAX ? INT32_MAX : (int)b;
}

/* One estimate, in bytes. */
typedef struct mem_est {
    int micro_batch, seq_len, precision;
    size_t weights, weight_copy, grads, adamw, activations, workspace, total;
} mem_est;

/* The plan of cfg's micro-batch on the CPU (gpu 0: fp32, the only
 * precision there) or a GPU in precision prec (ENG_PREC_FP32 or
 * ENG_PREC_BF16, whatever this build would run). */
static int estimate(const eng_config *cfg, int gpu, int prec, mem_est *out, tlm_err *e)
{
    if (!gpu)
        prec = ENG_PREC_FP32;
    eng_backend *cpu;
    if (eng_backend_cpu_create(&cpu, 1, e))
        return e->code;
    eng_ops ops = *cpu->ops;
    ops.alloc = count_alloc, ops.free = count_free, ops.to_device = count_copy_in, ops.to_host = count_copy_in;
    ops.zero = count_zero, ops.copy = count_copy, ops.cast = count_cast, ops.act_dtype = count_act_dtype;
    if (gpu) {
        ops.name = "cuda (estimate)";
        ops.groups = ENG_OPS_TITANS;
        ops.attention_workspace = count_att_ws, ops.swa_workspace = count_swa_ws;
        ops.titans_mem_workspace = count_mem_ws, ops.classifier_workspace = count_cls_ws;
    } else {
        ops.name = "cpu (estimate)";
        ops.attention_workspace = cpu_att_ws, ops.swa_workspace = cpu_swa_ws;
        ops.titans_mem_workspace = cpu_mem_ws;
    }
    const size_t g = gpu ? ENG_CU_ALLOC_GRANULE : 64;
    count_ctx cc = {0, g, 0, prec == ENG_PREC_BF16 ? ENG_BF16 : ENG_F32, cpu->ops, cpu->ctx};
    eng_backend counting = *cpu;
    counting.ops = &ops;
    counting.ctx = &cc;
    const int mb = micro_batch_of(cfg), T = cfg->train.seq_len;
    eng_model *m;
    int rc = eng_model_create(&m, cfg, &counting, mb, T, e);
    if (rc) {
        eng_backend_free(cpu);
        return rc;
    }
    const size_t np = eng_model_slab_floats(m), extra = eng_model_optim_extra_floats(m);
    eng_model_free(m);
    eng_backend_free(cpu);
    const size_t slab = round_up(np * sizeof(float), g), xslab = extra ? round_up(extra * sizeof(float), g) : 0,
                 copy = prec == ENG_PREC_BF16 ? round_up(np * eng_dtype_size(ENG_BF16), g) : 0,
                 state = 4 * slab + xslab + copy;
    if (cc.overflow || cc.bytes < state)
        return tlm_errf(e, TLM_EINTERNAL, "describe: the memory estimate overflows or misses the parameter slabs");
    const size_t ws = gpu ? ENG_CU_BACKEND_BYTES : 0;
    *out = (mem_est){mb, T, prec, slab, copy, slab, 2 * slab + xslab, cc.bytes - state, ws, cc.bytes + ws};
    return 0;
}

/* {micro_batch, seq_len, precision, weights, weight_copy, grads, adamw,
 * activations, workspace, total} in bytes, or NULL with *e set. */
static json_t *memory_json(const eng_config *cfg, int gpu, int prec, tlm_err *e)
{
    mem_est m;
    if (estimate(cfg, gpu, prec, &m, e))
        return NULL;
    return json_pack("{s:i, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "micro_batch", m.micro_batch, "seq_len",
                     m.seq_len, "precision", eng_precision_name(m.precision), "weights", (json_int_t)m.weights,
                     "weight_copy", (json_int_t)m.weight_copy, "grads", (json_int_t)m.grads, "adamw",
                     (json_int_t)m.adamw, "activations", (json_int_t)m.activations, "workspace",
                     (json_int_t)m.workspace, "total", (json_int_t)m.total);
}

int wrk_fit_micro_batch(const eng_config *cfg, size_t budget, int *mb, size_t *total, tlm_err *e)
{
    /* the micro-batches the trainer can run: divisors of the batch's
     * sequences up to the configured one, largest first */
    const int64_t S = cfg->train.seq_len > 0 ? cfg->train.batch_tokens / cfg->train.seq_len : 0;
    *mb = 0, *total = 0;
    int prec, rc = eng_precision_resolve(cfg, 1, &prec, e);
    if (rc)
        return rc;
    for (int d = micro_batch_of(cfg); d >= 1; d--) {
        if (S % d)
            continue;
        eng_config c = *cfg;
        c.train.micro_batch = d;
        mem_est m;
        if ((rc = estimate(&c, 1, prec, &m, e)))
            return rc;
        if (m.total <= budget / 20 * 19) { /* 5% left for the CUDA context and what the plan does not see */
            *mb = d, *total = m.total;
            return 0;
        }
        if (m.total - m.activations >= budget / 20 * 19) /* the state alone does not fit: no micro-batch will */
            return 0;
    }
    return 0;
}

/* {budget, micro_batch, accum_steps, total, fits}: the largest micro-batch
 * whose GPU plan fits `budget` bytes (micro_batch and total null when none
 * does), or NULL with *e set. */
static json_t *fit_json(const eng_config *cfg, size_t budget, tlm_err *e)
{
    int mb;
    size_t total;
    if (wrk_fit_micro_batch(cfg, budget, &mb, &total, e))
        return NULL;
    const int64_t S = cfg->train.batch_tokens / cfg->train.seq_len;
    return json_pack("{s:I, s:o, s:o, s:o, s:b}", "budget", (json_int_t)budget, "micro_batch",
                     mb ? json_integer(mb) : json_null(), "accum_steps", mb ? json_integer(S / mb) : json_null(),
                     "total", mb ? json_integer((json_int_t)total) : json_null(), "fits", mb > 0);
}

int wrk_memory_need(const eng_config *cfg, int gpu, size_t *total, size_t *state, tlm_err *e)
{
    mem_est m;
    int prec = ENG_PREC_FP32;
    int rc = gpu ? eng_precision_resolve(cfg, 1, &prec, e) : 0;
    if (!rc)
        rc = estimate(cfg, gpu, prec, &m, e);
    *total = rc ? 0 : m.total;
    *state = rc ? 0 : m.weights + m.weight_copy + m.grads + m.adamw;
    return rc;
}

int wrk_describe(const eng_config *cfg, size_t gpu_budget, FILE *out, tlm_err *e)
{
    eng_account acc, uni;
    int rc = eng_account_compute(cfg, &acc, e);
    if (rc)
        return rc;
    eng_config u = *cfg;
    u.taper.schedule = ENG_TAPER_UNIFORM;
    if ((rc = eng_account_compute(&u, &uni, e)))
        return rc;

    char *full = eng_config_json(cfg);
    char id[65];
    eng_config_id(cfg, id);
    json_error_t jerr;
    json_t *cj = full ? json_loads(full, 0, &jerr) : NULL;
    free(full);
    if (!cj)
        return tlm_errf(e, TLM_EINTERNAL, "describe: cannot re-read the resolved config");

    json_t *widths = json_array(), *layers = json_array();
    long sum = 0;
    for (int l = 0; l < acc.n_layers; l++) {
        const eng_layer_account *la = &acc.layer[l];
        sum += la->d_ff;
        json_array_append_new(widths, json_integer(la->d_ff));
        json_t *lj = json_pack("{s:i, s:i, s:f, s:I, s:I, s:I, s:I, s:f}", "layer", l, "d_ff", la->d_ff, "ratio",
                               (double)la->d_ff / cfg->model.d_ff, "params", (json_int_t)la->total, "mlp",
                               (json_int_t)la->mlp, "attention", (json_int_t)la->attn, "extra", (json_int_t)la->extra,
                               "flops_fwd_per_token", la->flops_fwd);
        if (lj && la->n_levels) { /* hope_attn: the CMS levels' widths and update periods, fastest first */
            json_t *lv = json_array();
            for (int i = 0; i < la->n_levels; i++)
                json_array_append_new(lv, json_pack("{s:i, s:i, s:I}", "d_ff", la->level_d_ff[i], "chunk",
                                                    la->level_chunk[i], "params",
                                                    (json_int_t)(3 * (int64_t)cfg->model.d_model * la->level_d_ff[i] +
                                                                 cfg->model.d_model)));
            json_object_set_new(lj, "levels", lv);
        }
        if (lj && cfg->arch == ENG_ARCH_TITANS) { /* the layer's extra, by part (docs/titans.md) */
            eng_titans_parts tp;
            eng_titans_parts_of(cfg, &tp);
            json_object_set_new(lj, "titans",
                                json_pack("{s:I, s:I, s:I, s:I, s:f}", "memory", (json_int_t)tp.memory, "gates",
                                          (json_int_t)tp.gates, "persistent", (json_int_t)tp.persistent,
                                          "attention_norm", (json_int_t)tp.attn_norm, "memory_flops_fwd_per_token",
                                          tp.memory_flops));
        }
        json_array_append_new(layers, lj);
    }
    json_t *doc = json_pack(
        "{s:s, s:o, s:{s:s, s:o, s:I, s:I, s:b}, s:o, s:o, s:{s:f, s:f, s:f}, s:o}", "id", id, "config", cj,
        "widths", "schedule", eng_schedule_name(cfg->taper.schedule), "d_ff", widths, "sum", (json_int_t)sum,
        "budget", (json_int_t)cfg->model.layers * cfg->model.d_ff, "exact",
        sum == (long)cfg->model.layers * cfg->model.d_ff, "params", account_json(&acc), "uniform_params",
        account_json(&uni), "flops_per_token", "train", acc.flops_train, "forward", acc.flops_fwd, "attention",
        acc.flops_attention, "layers", layers);
    if (!doc)
        return tlm_errf(e, TLM_EINTERNAL, "describe: cannot build the JSON document");
    /* train.precision as each device would run it in this build (null:
     * refused there); the GPU's plan in each storage precision, and
     * gpu_memory the one a run would have (null when the GPU refuses) */
    int pc, pg;
    tlm_err pe;
    const int gpu_ok = !eng_precision_resolve(cfg, 1, &pg, &pe);
    json_t *cm = memory_json(cfg, 0, ENG_PREC_FP32, e), *g32 = cm ? memory_json(cfg, 1, ENG_PREC_FP32, e) : NULL,
           *g16 = g32 ? memory_json(cfg, 1, ENG_PREC_BF16, e) : NULL;
    if (!g16) {
        json_decref(cm);
        json_decref(g32);
        json_decref(doc);
        return e->code ? e->code : tlm_errf(e, TLM_EINTERNAL, "describe: cannot build the memory estimates");
    }
    json_t *prec = json_pack("{s:s?, s:s?}", "cpu",
                             eng_precision_resolve(cfg, 0, &pc, &pe) ? NULL : eng_precision_name(pc), "gpu",
                             gpu_ok ? eng_precision_name(pg) : NULL);
    json_object_set_new(doc, "precision", prec);
    json_object_set_new(doc, "cpu_memory", cm);
    json_object_set(doc, "gpu_memory", !gpu_ok ? json_null() : pg == ENG_PREC_BF16 ? g16 : g32);
    json_object_set_new(doc, "gpu_memory_by_precision", json_pack("{s:o, s:o}", "fp32", g32, "bf16", g16));
    if (gpu_budget && !gpu_ok) {
        json_object_set_new(doc, "gpu_fit", json_null());
    } else if (gpu_budget) {
        json_t *fit = fit_json(cfg, gpu_budget, e);
        if (!fit) {
            json_decref(doc);
            return e->code ? e->code : tlm_errf(e, TLM_EINTERNAL, "describe: cannot fit the micro-batch");
        }
        json_object_set_new(doc, "gpu_fit", fit);
    }
    int bad = json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) || fputc('\n', out) == EOF;
    json_decref(doc);
    if (bad || fflush(out))
        return tlm_errf(e, TLM_EIO, "describe: cannot write the output");
    return 0;
}
