/* model_titans.h: Titans (`arch: titans`, docs/titans.md, Behrouz et al.
 * 2024): a token mixer of sliding-window attention with persistent
 * key/value entries and a neural long-term memory trained online inside
 * the forward pass, combined as a gate (MAG) or stacked as a layer (MAL);
 * the layer's MLP is the usual tapered SwiGLU.
 *
 * Public part: the architecture's share of the parameter/FLOP account.
 * Internal part (eng__titans_*): what model.c and model_pass.c call; the
 * code is in model_titans.c, the numbers in engine/cpu/{dconv, silu_norm,
 * swa, titans_mem}.c behind engine/ops.h.
 *
 * Must not: change anything for the other architectures (every entry point
 * is reached only when m->titans is set). */
#ifndef TLM_ENGINE_MODEL_TITANS_H
#define TLM_ENGINE_MODEL_TITANS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/err.h"

/* Kernel width of the depthwise causal convolutions after q, k, v. */
#define ENG_TITANS_CONV 4

/* One layer of a resolved titans config, beyond the Transformer's
 * attention (q, k, v, o), norms and MLP: the memory's projections, gates,
 * convolution, initial weights and output norm, the attention output norm
 * (MAG) and the persistent entries.  flops_fwd: per token, forward, of
 * those parts plus the memory's online training and reads; attn_flops: the
 * sliding-window attention's scores and weighted sums per token (it
 * replaces the Transformer's causal term). */
void eng_titans_account(const eng_config *c, int64_t *extra_params, double *extra_flops_fwd, double *attn_flops);

/* The same layer's Titans parameters by part (they sum to extra_params),
 * and the memory's own forward FLOPs per token (reads and online
 * training), for `tlm-worker --describe`. */
typedef struct eng_titans_parts {
    int64_t memory;     /* q, k, v projections, convolution, initial weights, output norm */
    int64_t gates;      /* theta, eta, alpha projection and bias */
    int64_t persistent; /* persistent key/value entries */
    int64_t attn_norm;  /* MAG: the attention output's norm */
    double memory_flops;
} eng_titans_parts;
void eng_titans_parts_of(const eng_config *c, eng_titans_parts *p);

/* ------------------------------------------------------------ internal */
struct eng_model;
/* After the widths are known, before layout(): dimensions, m->S. */
int eng__titans_create(struct eng_model *m, eng_err *e);
/* Inside layout(), right after v_proj: the memory's tensors (its
 * projections first, so that q, k, v and they form one matrix). */
void eng__titans_layout(struct eng_model *m, int cap, int l);
/* After plan_activations(): the mixer's own activations and workspaces. */
int eng__titans_plan(struct eng_model *m, eng_err *e);
void eng__titans_free(struct eng_model *m);
/* After the generic initialisation: the tensors that start otherwise
 * (gate biases, convolutions, the memory's initial weights). */
void eng__titans_init(struct eng_model *m, uint64_t seed);
/* The mixer of layer l: resid_mid from resid[l]; backward: in m->dresid
 * d/d resid_mid, out d/d resid[l]. */
void eng__titans_fwd(struct eng_model *m, int l, int B, int T);
void eng__titans_bwd(struct eng_model *m, int l, int B, int T);

#endif
