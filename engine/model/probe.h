/* model_probe.h: read-only access to a TLM model's internals for the
 * evaluation suites: the sizes it was planned for, and the per-layer
 * activations of a forward pass (the paper's alignment analysis).
 *
 * Lives beside the model (it includes model_impl.h) but belongs to the
 * evaluation code; it reads what the forward pass keeps for backward:
 *   resid[l]            h_l, the residual stream entering block l
 *   la[l].resid_mid     z_l = h_l + M_l(h_l)
 *   resid[l+1] - z_l    F_l(z_l), the MLP's output
 * Must not: change the model's parameters or its planned memory. */
#ifndef TLM_ENGINE_MODEL_PROBE_H
#define TLM_ENGINE_MODEL_PROBE_H

#include "engine/eval/eval.h"
#include "engine/model/model.h"

/* Batch, sequence length and vocabulary (logits per position) planned. */
void eng_model_probe_dims(const eng_model *m, int *max_batch, int *max_seq, int *vocab);

/* Forward over one sequence tokens (1, T), then fn(layer, h, z, f) for
 * l = 0..L-1 with host copies (T, d) each. */
int eng_model_probe(eng_model *m, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, eng_err *e);

#endif
