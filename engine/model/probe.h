/* probe.h: read-only access to a TLM model's internals for the
 * evaluation suites: the sizes it was planned for, and the per-layer
 * activations of a forward pass (the paper's alignment analysis).
 *
 * Lives beside the model (probe.c includes internal.h) and serves the
 * evaluation code, which includes it (not the other way round: the model
 * uses nothing of engine/eval); it reads what the forward pass keeps for
 * backward:
 *   resid[l]            h_l, the residual stream entering block l
 *   la[l].resid_mid     z_l = h_l + M_l(h_l)
 *   resid[l+1] - z_l    F_l(z_l), the MLP's output
 * Must not: change the model's parameters or its planned memory. */
#ifndef TLM_ENGINE_MODEL_PROBE_H
#define TLM_ENGINE_MODEL_PROBE_H

#include "common/err.h"
#include "engine/model/model.h"

/* Per-layer activations of one forward pass over T tokens, handed to a
 * probe callback layer by layer (host memory, valid during the call):
 *   h      (T, d)  h_l, the residual stream entering block l
 *   z      (T, d)  z_l = h_l + M_l(h_l), after the token mixer
 *   f      (T, d)  F_l(z_l), the MLP's output (h_{l+1} = z_l + F_l(z_l))
 * (also what a GPT-2 and the evaluation suites' eng_eval_lm hand over). */
typedef int (*eng_probe_fn)(void *ud, int layer, int n_layers, const float *h, const float *z, const float *f, int T,
                            int d, tlm_err *e);

/* Batch, sequence length and vocabulary (logits per position) planned. */
void eng_model_probe_dims(const eng_model *m, int *max_batch, int *max_seq, int *vocab);

/* Forward over one sequence tokens (1, T), then fn(layer, h, z, f) for
 * l = 0..L-1 with host copies (T, d) each. */
int eng_model_probe(eng_model *m, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e);

#endif
