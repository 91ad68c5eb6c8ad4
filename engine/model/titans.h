/* titans.h: Titans (`arch: titans`, docs/titans.md, Behrouz et al.
 * 2024): a token mixer of sliding-window attention with persistent
 * key/value entries and a neural long-term memory trained online inside
 * the forward pass, combined as a gate (MAG) or stacked as a layer (MAL);
 * the layer's MLP is the usual tapered SwiGLU.
 *
 * Public part: the architecture's share of the parameter/FLOP account.
 * Internal part (eng__titans_*): what model.c and pass.c call; the
 * code is in titans.c, the numbers in engine/cpu/{dconv, silu_norm,
 * swa, titans_mem}.c behind engine/model/ops.h.
 *
 * Must not: change anything for the other architectures (every entry point
 * is reached only when m->titans is set). */
#ifndef TLM_ENGINE_MODEL_TITANS_H
#define TLM_ENGINE_MODEL_TITANS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"
#include "engine/config/arch.h"

/* ------------------------------------------------------------ internal */
struct eng_model;
/* After the widths are known, before layout(): dimensions, m->S. */
int eng__titans_create(struct eng_model *m, tlm_err *e);
/* Inside layout(), right after v_proj: the memory's tensors (its
 * projections first, so that q, k, v and they form one matrix). */
void eng__titans_layout(struct eng_model *m, int cap, int l);
/* After plan_activations(): the mixer's own activations and workspaces. */
int eng__titans_plan(struct eng_model *m, tlm_err *e);
void eng__titans_free(struct eng_model *m);
/* After the generic initialisation: the tensors that start otherwise
 * (gate biases, convolutions, the memory's initial weights). */
void eng__titans_init(struct eng_model *m, uint64_t seed);
/* The mixer of layer l: resid_mid from resid[l]; backward: in m->dresid
 * d/d resid_mid, out d/d resid[l]. */
void eng__titans_fwd(struct eng_model *m, int l, int B, int T);
void eng__titans_bwd(struct eng_model *m, int l, int B, int T);

#endif
