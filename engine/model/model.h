/* model.h: one model instance (the contract between the model code and the
 * trainer, the checkpoint code and the evaluation suites).
 *
 * A model owns its parameters, gradients, AdamW moments and activations,
 * planned once for at most `max_batch` sequences of `seq_len` tokens; after
 * eng_model_create nothing in forward/backward/step allocates.  Memory may
 * live on a device (CUDA backend): callers never dereference the slabs, they
 * go through get/set for host copies.
 *
 * Layout: all parameters are one flat float slab; eng_model_tensor(m, i)
 * names each tensor (Hugging Face Llama names, docs/protocol.md), its shape
 * (PyTorch nn.Linear order: out, in) and its offset.  Gradients and the two
 * AdamW moments use the same layout. */
#ifndef TLM_ENGINE_MODEL_H
#define TLM_ENGINE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"

typedef struct eng_model eng_model;

typedef struct eng_tensor_info {
    char name[96];      /* "model.layers.3.mlp.up_proj.weight" */
    int ndim;
    int64_t shape[4];
    size_t offset;      /* in floats, into the parameter slab */
    size_t numel;
    int decay;          /* AdamW weight decay applies (matrices yes; norms, gains no) */
} eng_tensor_info;

typedef struct eng_adamw {
    double lr;          /* this step's learning rate */
    double beta1, beta2, eps;
    double weight_decay;
    int64_t t;          /* 1-based step number, for bias correction */
    double grad_scale;  /* multiply gradients by this first (clipping: min(1, clip/norm)) */
} eng_adamw;

/* Build for a resolved config on a backend (engine/model/ops.h; the CPU's:
 * engine/cpu/backend.h), which the model borrows: free the model first.
 * TLM_ECONFIG when the backend lacks an op group the architecture needs. */
struct eng_backend;
int eng_model_create(eng_model **out, const eng_config *cfg, const struct eng_backend *backend, int max_batch,
                     int seq_len, tlm_err *e);
void eng_model_free(eng_model *m);

/* Deterministic initialisation from a seed (same seed, same weights). */
void eng_model_init_weights(eng_model *m, uint64_t seed);

size_t eng_model_n_params(const eng_model *m);
int eng_model_n_tensors(const eng_model *m);
const eng_tensor_info *eng_model_tensor(const eng_model *m, int i);
const eng_tensor_info *eng_model_find_tensor(const eng_model *m, const char *name);
/* The gradient's sum of squares per tensor, in tensor order, into
 * out[n_tensors] (the gradient of the last backward pass, before clipping). */
void eng_model_grad_sumsq(eng_model *m, double *out);
/* Per-layer MLP widths the model was built with. */
const int *eng_model_widths(const eng_model *m);

/* Host copies of the slabs (n_params floats each). */
int eng_model_get_params(const eng_model *m, float *dst);
int eng_model_set_params(eng_model *m, const float *src);
int eng_model_get_grads(const eng_model *m, float *dst);
int eng_model_get_optim(const eng_model *m, float *exp_avg, float *exp_avg_sq);
int eng_model_set_optim(eng_model *m, const float *exp_avg, const float *exp_avg_sq);
/* Optimizer state beyond the AdamW moments (hope_attn: the slow levels'
 * gradient accumulators; none for transformer and gated_attn): named
 * tensors in one slab of eng_model_optim_extra_floats floats, each
 * tensor's offset indexing that slab.  A resumed run needs them as much as
 * the moments (checkpoints save them in optim.safetensors). */
int eng_model_n_optim_extra(const eng_model *m);
const eng_tensor_info *eng_model_optim_extra(const eng_model *m, int i);
size_t eng_model_optim_extra_floats(const eng_model *m);
int eng_model_get_optim_extra(const eng_model *m, float *dst);
int eng_model_set_optim_extra(eng_model *m, const float *src);

/* Forward over tokens (B, T) predicting targets (B, T); a target < 0 is not
 * counted.  *loss is the mean NLL (nats) over counted targets; nll (B*T, may
 * be NULL) receives each position's NLL (0 where not counted).  B <= max_batch,
 * T <= seq_len. */
int eng_model_forward(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, double *loss,
                      float *nll, tlm_err *e);
/* Logits (B, T, vocab) of the last forward, host memory valid until the
 * next forward.  Made on request (the forward's fused classifier never
 * holds them whole): the first call allocates their buffers (max_batch x
 * seq_len x vocab floats, on the backend and a host copy), each call after
 * a forward runs the LM head once more.  NULL when that allocation fails
 * or before any forward. */
const float *eng_model_logits(eng_model *m);

/* A training forward (targets required): as eng_model_forward, but nothing
 * comes back to the host: the batch's mean loss over counted targets is
 * added to the step's sum on the device.  Then eng_model_backward as
 * after eng_model_forward. */
int eng_model_forward_train(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, tlm_err *e);
/* The step's scalars in one copy from the device: *loss_sum, the sum of
 * the mean losses of the eng_model_forward_train calls since the last
 * report (which starts the next sum at 0), and *grad_norm, the global L2
 * norm of the gradient slab (as eng_model_grad_norm); grad_norm NULL: the
 * loss only (several ranks take the norm after summing the gradients). */
int eng_model_step_report(eng_model *m, double *loss_sum, double *grad_norm);

/* Backward of the last forward: ADDS d(mean loss)/d(params) x scale into the
 * gradient slab (accumulation: scale = 1/micro_steps). */
int eng_model_backward(eng_model *m, float scale, tlm_err *e);
void eng_model_zero_grads(eng_model *m);

/* ZeRO-1 (a data-parallel trainer's optimizer shards): eng_model_step on
 * the slab floats [lo, hi) only; parameters, moments and hope_attn's
 * accumulators outside the range are left as they are. */
int eng_model_step_range(eng_model *m, const eng_adamw *opt, size_t lo, size_t hi, tlm_err *e);
/* The parameter slab itself (backend memory; what ZeRO-1 gathers after
 * the sharded step), and the sum of squares of the gradient floats
 * [off, off + n) (double accumulation). */
float *eng_model_param_slab(eng_model *m);
/* The products' weight copy (bf16 on a bf16 backend; on fp32 the master
 * itself, and this does nothing) made whole again from the master: call it
 * after writing the master through eng_model_param_slab (ZeRO-1's gather).
 * eng_model_init_weights, eng_model_set_params and the AdamW steps keep
 * the copy current themselves. */
void eng_model_sync_weight_copy(eng_model *m);
double eng_model_grad_sumsq_range(eng_model *m, size_t off, size_t n);

/* The gradient slab itself (n_params floats of backend memory, in the
 * tensors' layout): what a data-parallel trainer sums over its ranks. */
float *eng_model_grad_slab(eng_model *m);

/* Data parallel, overlap: with a hook set, eng_model_backward calls it
 * each time a range of the gradient slab, floats [offset, offset + n),
 * holds its final value for this backward (the output head and final norm
 * first, then each layer's tensors, last layer first, the embedding last),
 * so its reduction over the ranks can start while the earlier layers'
 * backward runs.  grad points at the range in backend memory, complete
 * (a device backend's queue has finished it) when the hook is called.  The
 * ranges tile the slab.  fn NULL: no hook (the default). */
typedef void (*eng_grad_ready_fn)(void *ud, float *grad, size_t offset, size_t n);
void eng_model_set_grad_hook(eng_model *m, eng_grad_ready_fn fn, void *ud);

/* Global L2 norm of the gradient slab (double accumulation). */
double eng_model_grad_norm(eng_model *m);
/* AdamW update of every parameter from the gradient slab (decoupled decay
 * only on tensors with decay = 1).  hope_attn: a level with chunk C > 1
 * adds grad_scale x its gradients to an accumulator at every step and is
 * updated only at steps t with t % C == 0, from the accumulator's mean,
 * with bias correction by its own update count t / C (docs/hope.md). */
int eng_model_step(eng_model *m, const eng_adamw *opt, tlm_err *e);

#endif
