/* hope.h: Hope-attention (`arch: hope_attn`, docs/hope.md): causal
 * softmax attention followed by a Continuum Memory System, a chain of k
 * SwiGLU levels per layer, each with its own pre-norm and residual, level i
 * updated by the optimizer every C_i steps with the mean of its gradients
 * over those steps.
 *
 * What model.c and pass.c call (eng__hope_*; the code is in hope.c); the
 * split of a layer's width into levels is a config fact
 * (engine/config/arch.h).
 *
 * Must not: change anything for the other architectures (every entry point
 * is reached only when m->hope is set). */
#ifndef TLM_ENGINE_MODEL_HOPE_H
#define TLM_ENGINE_MODEL_HOPE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"
#include "engine/config/arch.h"
#include "engine/model/model.h"

/* ------------------------------------------------------------ internal */
struct eng_model;
/* After the taper widths are known, before layout(): the level split. */
int eng__hope_create(struct eng_model *m, tlm_err *e);
/* Inside layout(), in place of post_attention_layernorm and mlp.*: the
 * layer's levels (norm, gate_proj, up_proj, down_proj each). */
void eng__hope_layout(struct eng_model *m, int cap, int l);
/* After plan_activations(): the levels' own activations and the slow
 * levels' gradient accumulators (the model's extra optimizer state). */
int eng__hope_plan(struct eng_model *m, tlm_err *e);
void eng__hope_free(struct eng_model *m);
/* The CMS of layer l: resid[l+1] from resid_mid, and its backward (in:
 * m->dresid = d/d resid[l+1]; out: d/d resid_mid). */
void eng__hope_mlp_fwd(struct eng_model *m, int l, int N);
void eng__hope_mlp_bwd(struct eng_model *m, int l, int N);
/* eng_model_step for hope_attn: AdamW on every tensor, the slow levels'
 * through their accumulators on their own schedule. */
int eng__hope_step(struct eng_model *m, const eng_adamw *opt, tlm_err *e);

#endif
