/* gpt2.h: a forward-only GPT-2 from a Hugging Face checkpoint, for the
 * paper's alignment analysis on pretrained GPT-2 models (and any suite
 * that can score through eng_eval_lm).
 *
 * Layout read: a folder with config.json (n_embd, n_layer, n_head,
 * n_positions, vocab_size, layer_norm_epsilon, activation_function) and
 * model.safetensors with the names of GPT2Model, with or without the
 * "transformer." prefix: wte.weight (V, d), wpe.weight (P, d),
 * h.N.ln_1.{weight,bias} (d), h.N.attn.c_attn.{weight (d, 3d), bias (3d)},
 * h.N.attn.c_proj.{weight (d, d), bias}, h.N.ln_2.*, h.N.mlp.c_fc.{weight
 * (d, 4d), bias}, h.N.mlp.c_proj.{weight (4d, d), bias}, ln_f.*.  Conv1D
 * weights are (in, out): y = x W + b.  F32, F16 and BF16 are read (kept in
 * fp32); the LM head is wte (tied).  Block: learned positions, pre-LayerNorm,
 * causal attention, GELU MLP (gelu_new, the tanh form, unless the config
 * says "gelu").
 * Must not: train; it holds no gradients. */
#ifndef TLM_ENGINE_GPT2_H
#define TLM_ENGINE_GPT2_H

#include "common/err.h"
#include "engine/eval/eval.h"

typedef struct eng_gpt2 eng_gpt2;

/* Does path (a folder or a .safetensors file) hold a GPT-2 checkpoint? */
int eng_gpt2_detect(const char *path);
/* Load; max_batch bounds the rows of one logits call.  Its products run
 * on `backend` (borrowed: free the GPT-2 first), which must be on host
 * memory (TLM_ECONFIG otherwise): the GPT-2 keeps its weights and
 * activations in host memory. */
struct eng_backend;
int eng_gpt2_load(eng_gpt2 **out, const char *path, const struct eng_backend *backend, int max_batch, tlm_err *e);
void eng_gpt2_free(eng_gpt2 *g);
/* Score through it (max_length = n_positions). */
void eng_gpt2_lm(eng_eval_lm *lm, eng_gpt2 *g);

#endif
