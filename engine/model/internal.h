/* internal.h: the inside of an eng_model, shared by model.c (planning,
 * tensors, init, optimizer), pass.c (forward/backward over the stack) and
 * the token mixers (attn.c; the Hope and Titans mixers beside it in hope.c
 * and titans.c, each a case in pass.c).
 *
 * Every pointer below is backend memory planned once in eng_model_create;
 * shapes use N = B*T positions of the current call (<= max_batch*seq_len),
 * d = d_model, F = the layer's d_ff, S = the fused input projection's
 * width (H*hd q + 2*Hkv*hd k,v [+ G gate]). */
#ifndef TLM_ENGINE_MODEL_IMPL_H
#define TLM_ENGINE_MODEL_IMPL_H

#include "engine/model/model.h"
#include "engine/model/hope.h"
#include "engine/model/titans.h"
#include "engine/model/ops.h"

/* Offsets (floats) of one layer's parameters in the parameter slab; the
 * gradient and moment slabs use the same offsets. */
typedef struct eng_layer_params {
    size_t ln1;   /* (d) input_layernorm */
    size_t wqkvg; /* (S, d) q_proj, k_proj, v_proj [, g_proj] stacked: one matmul */
    size_t wo;    /* (d, H*hd) o_proj */
    size_t ln2;   /* (d) post_attention_layernorm */
    size_t wgu;   /* (2F, d) gate_proj then up_proj stacked: one matmul */
    size_t wdown; /* (d, F) down_proj */
} eng_layer_params;

/* One layer's activations, kept from forward for backward. */
typedef struct eng_layer_acts {
    float *ln1;       /* (N, d) normed block input */
    float *rstd1;     /* (N) */
    float *qkvg;      /* (N, S) q, k after RoPE; v; gate pre-activation */
    float *lse;       /* (B, H, T) attention rows' log-sum-exp */
    float *atty;      /* (N, d) attention output, heads concatenated */
    float *gated;     /* (N, d) gated_attn: atty * sigmoid(gate); else NULL */
    float *resid_mid; /* (N, d) block input + attention branch */
    float *ln2;       /* (N, d) */
    float *rstd2;     /* (N) */
    float *gu;        /* (N, 2F) gate_proj | up_proj outputs */
    float *h;         /* (N, F) SwiGLU output */
} eng_layer_acts;

struct eng_model {
    const eng_ops *ops; /* the backend's table */
    void *ctx;          /* and its context, the first argument of every op */
    eng_config cfg;
    int arch;              /* eng_arch */
    int d, L, H, Hkv, hd, V;
    int S;                 /* fused q/k/v/gate projection width */
    int G;                 /* gate width: d (elementwise), H (headwise), 0 (no gate) */
    int max_B, max_T;
    int widths[ENG_MAX_LAYERS];
    int max_F;

    /* tensor table (host) */
    eng_tensor_info *tensors;
    int n_tensors;
    size_t n_params;
    size_t off_embed, off_norm, off_head; /* off_head == off_embed when tied */
    eng_layer_params lp[ENG_MAX_LAYERS];

    /* slabs (backend memory, n_params floats each) */
    float *params, *grads, *m, *v;
    /* extra optimizer state (eng_model_optim_extra): tensors indexing one
     * backend slab of xopt_floats; filled by the architecture that needs it */
    eng_tensor_info *xopt;
    int n_xopt;
    size_t xopt_floats;
    float *xopt_slab;
    struct eng_hope *hope;     /* hope_attn: the CMS levels (hope.c); NULL otherwise */
    struct eng_titans *titans; /* titans: the memory mixer (titans.c); NULL otherwise */

    /* activations (one slab) */
    void *act_slab;
    size_t act_floats;
    int32_t *tokens, *targets; /* (N) */
    float *rope_cs;            /* (max_T, 2, hd/2) */
    float *resid;              /* (L+1, N, d): resid[l] enters layer l, resid[L] leaves the stack */
    eng_layer_acts la[ENG_MAX_LAYERS];
    float *lnf, *rstdf;        /* (N, d), (N) */
    float *logits;             /* (N, V); gradient in place after backward */
    float *losses;             /* (N) */
    /* backward scratch, shared by the layers */
    float *dresid;             /* (N, d) gradient of the residual stream */
    float *dqkvg;              /* (N, S) */
    float *datty;              /* (N, d) */
    float *dgated;             /* (N, d) */
    float *dln;                /* (N, d) */
    float *dgu;                /* (N, 2 max_F) */
    float *dh;                 /* (N, max_F) */
    float *att_ws;             /* attention workspace (both passes) */

    /* host side */
    float *losses_host;        /* (max N) */
    float *logits_host;        /* (max N, V) when backend memory is not host memory; else == logits */
    int host_visible;
    int cur_B, cur_T;          /* of the last forward */
    int64_t n_counted;         /* targets >= 0 in the last forward */
    int have_forward;
};

/* model.c: appends one tensor to the table in layout() (fmt has one %d, the
 * layer), for an architecture's own tensors; returns its offset */
size_t eng__model_add_tensor(eng_model *m, int cap, int ndim, int64_t d0, int64_t d1, int decay, const char *fmt,
                             int layer);

/* pass.c */

/* attn.c: the attention token mixer (transformer, gated_attn) */
void eng__attn_fwd(eng_model *m, int l, int B, int T);
void eng__attn_bwd(eng_model *m, int l, int B, int T);

#endif
