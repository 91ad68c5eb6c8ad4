/* internal.h: the inside of an eng_model, shared by model.c (planning,
 * tensors, init, optimizer), pass.c (forward/backward over the stack),
 * mlp.c (the block's SwiGLU MLP) and the token mixers (attn.c, hope.c,
 * titans.c), each of which fills rows of the token-mixer table below.
 *
 * Every pointer below is backend memory planned once in eng_model_create;
 * shapes use N = B*T positions of the current call (<= max_batch*seq_len),
 * d = d_model, F = the layer's d_ff, S = the fused input projection's
 * width (H*hd q + 2*Hkv*hd k,v [+ the mixer's own columns]).
 *
 * Must not: be included outside engine/model/ (tests excepted). */
#ifndef TLM_ENGINE_MODEL_IMPL_H
#define TLM_ENGINE_MODEL_IMPL_H

#include "engine/model/model.h"
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
    eng_act *ln1;     /* (N, d) normed block input */
    float *rstd1;     /* (N) */
    eng_act *qkvg;    /* (N, S) q, k after RoPE; v; gate pre-activation */
    float *lse;       /* (B, H, T) attention rows' log-sum-exp */
    eng_act *atty;    /* (N, d) attention output, heads concatenated */
    eng_act *gated;   /* (N, d) gated_attn: atty * sigmoid(gate) (planned by its row); else NULL */
    eng_act *resid_mid; /* (N, d) block input + attention branch */
    eng_act *ln2;     /* (N, d) */
    float *rstd2;     /* (N) */
    eng_act *gu;      /* (N, 2F) gate_proj | up_proj outputs */
    eng_act *h;       /* (N, F) SwiGLU output */
} eng_layer_acts;

typedef struct eng_mixer eng_mixer;

struct eng_model {
    const eng_ops *ops;       /* the backend's table */
    void *ctx;                /* and its context, the first argument of every op */
    const eng_mixer *mixer;   /* the architecture's row of the token-mixer table */
    void *mixer_ctx;          /* and the row's own state (Hope's levels, Titans' memory, gated_attn's slab; NULL for transformer) */
    eng_config cfg;
    int d, L, H, Hkv, hd, V;
    int S;                 /* fused projection width: q, k, v, then the row's own columns */
    int G;                 /* gate width: d (elementwise), H (headwise), 0 (no gate; set by the row) */
    int max_B, max_T;
    int widths[ENG_MAX_LAYERS];
    int max_F;
    int recompute; /* train.recompute: every layer's gu and h are one shared buffer, remade in the backward */

    /* tensor table (host) */
    eng_tensor_info *tensors;
    int n_tensors;
    /* The slab's layout (model.c, layout()): every tensor starts at a
     * multiple of ENG__PARAM_ALIGN floats, but the rows a product reads
     * as one matrix with the tensor before it (eng__model_add_rows).
     * n_params counts the parameters (the account, the start event);
     * n_slab is every slab's length, the padding between tensors
     * included (fewer than ENG__PARAM_ALIGN floats before a tensor; none
     * after the last).  Padding is zero in every slab and no AdamW
     * segment covers it. */
    size_t n_params, n_slab;
    size_t off_embed, off_norm, off_head; /* off_head == off_embed when tied */
    eng_layer_params lp[ENG_MAX_LAYERS];
    eng_adamw_seg *adamw_seg;  /* every tensor as AdamW segments (eng__model_adamw_table), host */
    int n_adamw_seg;

    /* slabs (backend memory, n_slab floats each) */
    float *params, *grads, *m, *v;
    /* the weights every product reads (eng__wlp), n_slab of wlp_dtype at
     * the slab's offsets: on fp32 it IS params (no copy); on bf16 its own
     * allocation, made whole from the master by eng_model_sync_weight_copy
     * (initialisation, set_params, ZeRO-1's gather) and rewritten by every
     * AdamW launch with the elements it updates (eng__lp_at) */
    void *params_lp;
    /* extra optimizer state (eng_model_optim_extra): tensors indexing one
     * backend slab of xopt_floats; filled by the row that needs it */
    eng_tensor_info *xopt;
    int n_xopt;
    size_t xopt_floats;
    float *xopt_slab;

    /* activations every row uses (one slab; a row plans its own beside it) */
    void *act_slab;
    size_t act_bytes;
    eng_dtype act_dtype;       /* the backend's (ops->act_dtype), fixed at create */
    eng_dtype wlp_dtype;       /* params_lp's type */
    int32_t *tokens, *targets; /* (N) */
    float *rope_cs;            /* (max_T, 2, hd/2) */
    eng_act *resid;            /* (L+1, N, d): resid[l] enters layer l, resid[L] leaves the stack */
    eng_layer_acts la[ENG_MAX_LAYERS];
    eng_act *lnf;              /* (N, d) */
    float *rstdf;              /* (N) */
    float *cls_ws;             /* the fused classifier's workspace (ops.h classifier_*) */
    float *losses;             /* (N) */
    double *stats;             /* ENG__STATS doubles: the device's scalars (ENG__STAT_*) */
    double *tensor_sq;         /* (n_tensors): eng_model_grad_sumsq's sums, copied back at once */
    int32_t *emb_sort;         /* (3 max N + 2): U, then order, ids, starts for embedding_bwd_sorted */
    float *logits;             /* (max N, V): eng_model_logits' own, made on its first call (NULL before) */
    /* backward scratch, shared by the layers */
    eng_act *dresid;           /* (N, d) gradient of the residual stream */
    eng_act *dqkvg;            /* (N, S) */
    eng_act *datty;            /* (N, d) */
    eng_act *dgated;           /* (N, d) */
    eng_act *dln;              /* (N, d) */
    eng_act *dgu;              /* (N, 2 max_F) */
    eng_act *dh;               /* (N, max_F) */
    float *att_ws;             /* attention workspace (both passes) */

    /* host side */
    float *losses_host;        /* (max N) */
    float *logits_host;        /* (max N, V) when backend memory is not host memory; else == logits */
    int host_visible;
    int32_t *sort_host;        /* (3 max N + 2): emb_sort's host side */
    int32_t *sort_count;       /* (V): the counting sort's buckets */
    int cur_B, cur_T;          /* of the last forward */
    int64_t n_counted;         /* targets >= 0 in the last forward */
    int have_forward;
    int have_logits;           /* logits_host holds the last forward's (eng_model_logits) */
    eng_grad_ready_fn grad_hook; /* eng_model_set_grad_hook (NULL: none) */
    void *grad_hook_ud;
    size_t step_lo, step_hi;   /* the slab range a step updates: [0, n_slab) but in eng_model_step_range */
    /* train.cuda_graph (pass.c): a training forward's device work waits
     * for its backward (pending), and both run as one graph, captured for
     * the key (graph_B, graph_T, graph_dscale: dscale's bits) at the
     * key's second micro-batch (the first runs op by op) and replayed
     * while the key holds */
    int graph_on;              /* the setting is on and the backend has graphs */
    int pending;               /* the last training forward's stack and loss are not run yet */
    void *graph;               /* the backend's graph; NULL: none */
    int graph_B, graph_T;      /* the key of the last training backward; 0 before the first */
    uint32_t graph_dscale;
};

/* The scalars kept on the device (model.stats): a forward's mean loss
 * (eng_model_forward), the step's sum of its micro-batches' mean losses
 * (eng_model_forward_train) and the gradient's sum of squares, read in
 * one copy (eng_model_step_report). */
enum { ENG__STAT_LOSS, ENG__STAT_STEP_LOSS, ENG__STAT_GRAD_SQ, ENG__STATS };

/* The part of the slab range [*off, *off + *n) that the current step
 * updates (eng_model_step_range): 0 when none; else *off and *n narrowed
 * and *skip the floats cut from the front (an array aligned with the
 * range moves by as much). */
static inline int eng__step_clip(const eng_model *m, size_t *off, size_t *n, size_t *skip)
{
    size_t lo = *off > m->step_lo ? *off : m->step_lo, hi = *off + *n < m->step_hi ? *off + *n : m->step_hi;
    if (hi <= lo)
        return 0;
    *skip = lo - *off;
    *off = lo;
    *n = hi - lo;
    return 1;
}

/* The products' operand types (ops->matmul): activations by weights into
 * activations (forward, input gradients), and activations by activations
 * added into the fp32 weight gradients. */
static inline eng_mm eng__mm_x(const eng_model *m)
{
    return eng_mm_of(m->act_dtype, m->wlp_dtype, m->act_dtype);
}
static inline eng_mm eng__mm_w(const eng_model *m)
{
    return eng_mm_of(m->act_dtype, m->act_dtype, ENG_F32);
}

/* Activation n elements on from p, in the backend's activation dtype
 * (ops.h eng_act_off) */
static inline eng_act *eng__act_at(const eng_model *m, const eng_act *p, size_t n)
{
    return eng_act_off(m->act_dtype, p, n);
}

/* The weights a product reads, from the slab offset off (floats in the
 * master slab, elements of wlp_dtype in params_lp). */
static inline const void *eng__wlp(const eng_model *m, size_t off)
{
    return (const char *)m->params_lp + off * eng_dtype_size(m->wlp_dtype);
}

/* What AdamW writes the updated weights from slab offset off into besides
 * the master (ops.h adamw's p_lp): the copy's elements there, or NULL when
 * the copy is the master itself (fp32). */
static inline void *eng__lp_at(const eng_model *m, size_t off)
{
    return m->params_lp == (const void *)m->params ? NULL
                                                   : (char *)m->params_lp + off * eng_dtype_size(m->wlp_dtype);
}

/* the bytes of n activations (the memory ops count bytes) */
static inline size_t eng__act_bytes(const eng_model *m, size_t n)
{
    return n * eng_dtype_size(m->act_dtype);
}

/* resid[l] of the current call's N positions */
static inline eng_act *eng__resid(const eng_model *m, int l, int N)
{
    return eng__act_at(m, m->resid, (size_t)l * N * m->d);
}

/* ------------------------------------------------------------ the token-mixer table
 *
 * One row per architecture (eng_arch), as eng_ops is one table per
 * backend: what the architecture adds to or changes in the block.  The
 * model's code (model.c, pass.c) calls the row's entries and never asks
 * which architecture it runs; a new token mixer is a new row beside its
 * code and an entry in model.c's eng_arch -> row index.  Every entry is
 * filled (rows share the functions they have in common: attn.c's
 * attention, mlp.c's SwiGLU MLP, model.c's AdamW step).
 *
 * Order of the calls: create, layout and mlp->layout per layer (twice:
 * count, then fill), plan, init, then per step fwd and mlp->fwd per
 * layer, mlp->bwd and bwd per layer in reverse, step; free last (also
 * after a failed create or plan, so it must cope with whatever they left).
 *
 * Activation memory goes through one planner (eng__plan_*, below) for
 * the model and every row: what a buffer holds is said where it is
 * requested, and how it is stored (its precision, its alignment) is
 * decided in that one place. */

/* The block's MLP: mlp.c's SwiGLU (eng__mlp_swiglu), or hope.c's levels */
typedef struct eng_mlp {
    /* Layer l's MLP tensors (after the token mixer's), through
     * eng__model_add_tensor. */
    void (*layout)(eng_model *m, int cap, int l);
    /* resid[l+1] from resid_mid; backward: in m->dresid d/d resid[l+1],
     * out d/d resid_mid. */
    void (*fwd)(eng_model *m, int l, int N);
    void (*bwd)(eng_model *m, int l, int N);
} eng_mlp;

struct eng_mixer {
    int arch;           /* the eng_arch this row is */
    unsigned groups;    /* ENG_OPS_* groups its passes call (eng_model_create checks the backend) */
    const eng_mlp *mlp; /* the MLP after the token mixer */
    /* After the taper widths, before the layout: model.c has set S to the
     * q, k, v columns and G to 0; the row adds its own columns to S, sets
     * G and makes its state (m->mixer_ctx). */
    int (*create)(eng_model *m, tlm_err *e);
    /* Layer l's token-mixer tensors, q_proj to o_proj (after
     * input_layernorm), through eng__model_add_tensor. */
    void (*layout)(eng_model *m, int cap, int l);
    /* After the model's own activations: the row's, through the shared
     * planner (eng__plan_*), and any extra optimizer state (m->xopt*). */
    int (*plan)(eng_model *m, tlm_err *e);
    /* After the generic initialisation (eng_model_init_weights): the
     * tensors that start otherwise. */
    void (*init)(eng_model *m, uint64_t seed);
    /* Layer l's token mixer: resid_mid from resid[l]; backward: in
     * m->dresid d/d resid_mid, out d/d resid[l]. */
    void (*fwd)(eng_model *m, int l, int B, int T);
    void (*bwd)(eng_model *m, int l, int B, int T);
    /* eng_model_step (opt->t >= 1 checked) */
    int (*step)(eng_model *m, const eng_adamw *opt, tlm_err *e);
    /* The row's state and memory (m->mixer_ctx may be NULL). */
    void (*free)(eng_model *m);
};

/* The rows, each beside its mixer */
extern const eng_mixer eng__mixer_transformer; /* attn.c */
extern const eng_mixer eng__mixer_gated_attn;  /* attn.c */
extern const eng_mixer eng__mixer_hope_attn;   /* hope.c */
extern const eng_mixer eng__mixer_titans;      /* titans.c */

/* ------------------------------------------------------------ shared by the rows */

/* Where every parameter tensor starts in the slabs, in floats: 16 bytes
 * of the bf16 weight copy (cuBLASLt's bf16 operands and vector loads want
 * 16-byte aligned starts), 32 of the fp32 master. */
#define ENG__PARAM_ALIGN 8
/* model.c: appends one tensor to the table in layout() (fmt has one %d, the
 * layer) at the next multiple of ENG__PARAM_ALIGN floats; returns its
 * offset */
size_t eng__model_add_tensor(eng_model *m, int cap, int ndim, int64_t d0, int64_t d1, int decay, const char *fmt,
                             int layer);
/* The same for a (d0, d1) matrix with weight decay whose rows a product
 * reads together with the tensor before it (q | k | v | g, gate | up,
 * Titans' init_w1 | init_w2): right after it, unpadded.  Aligned too when
 * the rows before it are a multiple of ENG__PARAM_ALIGN floats, as they
 * are whenever d_model is a multiple of 8. */
size_t eng__model_add_rows(eng_model *m, int cap, int64_t d0, int64_t d1, const char *fmt, int layer);
/* model.c: AdamW on every tensor in one op (the step of the rows without
 * their own); on the segments seg of the slabs, the gradient read from
 * grad at the same offsets (the gradient slab, or an accumulator's base),
 * with the bias correction of step t; the tensors as a segment table
 * (consecutive tensors of one decay flag merged; keep NULL or keep(m, i)
 * 1 for the tensors wanted), seg of n_tensors entries: returns how many */
int eng__model_adamw_step(eng_model *m, const eng_adamw *opt, tlm_err *e);
void eng__model_adamw_segs(eng_model *m, const eng_adamw *opt, const eng_adamw_seg *seg, int nseg,
                           const float *grad, double t, float grad_scale);
int eng__model_adamw_table(const eng_model *m, eng_adamw_seg *seg, int (*keep)(const eng_model *m, int i));
/* model.c: the init of the rows that start as the generic pass leaves them */
void eng__mixer_no_init(eng_model *m, uint64_t seed);

/* The activation planner (model.c), one for the model and every row:
 * requests of `bytes` each (each start 64-byte aligned: cuBLASLt and the
 * vector loads want 16), then one backend slab for all of them, each *ptr
 * pointed into it in request order.  Activations are planned in the
 * backend's activation dtype (eng__plan_act), per-row statistics, states
 * and workspaces in fp32 (eng__plan_f32). */
typedef struct eng_plan {
    struct eng_plan_req *req;
    int n, cap;
    int oom; /* a request could not be recorded (host memory) */
} eng_plan;
void eng__plan_want(eng_plan *p, void *ptr, size_t bytes);
static inline void eng__plan_f32(eng_plan *p, void *ptr, size_t n)
{
    eng__plan_want(p, ptr, n * sizeof(float));
}
static inline void eng__plan_act(const eng_model *m, eng_plan *p, void *ptr, size_t n)
{
    eng__plan_want(p, ptr, n * eng_dtype_size(m->act_dtype));
}
/* The slab (ops->alloc; free it with ops->free), or NULL when the backend
 * or the host is out of memory; *bytes: its size.  Clears p. */
void *eng__plan_alloc(eng_model *m, eng_plan *p, size_t *bytes);

/* attn.c: the attention mixer's tensors: q_proj, k_proj, v_proj, o_proj;
 * the first three and the last alone, for a row that puts its own tensors
 * between them (gated_attn's g_proj, titans.c's memory) */
void eng__attn_layout(eng_model *m, int cap, int l);
void eng__attn_layout_qkv(eng_model *m, int cap, int l);
void eng__attn_layout_o(eng_model *m, int cap, int l);
void eng__attn_fwd(eng_model *m, int l, int B, int T);
void eng__attn_bwd(eng_model *m, int l, int B, int T);

/* mlp.c: one pre-norm SwiGLU branch, out = x + down(silu(gate(n)) * up(n)),
 * n = rmsnorm(x): its parameters' offsets and its activations (N rows) */
typedef struct eng_swiglu {
    int F;                   /* width */
    size_t norm, wgu, wdown; /* (d), (2F, d) gate_proj then up_proj, (d, F) */
    eng_act *x, *ln;         /* (N, d) input, (N, d) normed input */
    float *rstd;             /* (N) */
    eng_act *gu, *h;         /* (N, 2F) gate | up outputs, (N, F) SwiGLU output */
} eng_swiglu;
/* forward into out (N, d); backward: in m->dresid d/d out, out d/d x
 * (the branch's share added onto the skip path's) */
void eng__swiglu_fwd(eng_model *m, const eng_swiglu *b, eng_act *out, int N);
void eng__swiglu_bwd(eng_model *m, const eng_swiglu *b, int N);
/* mlp.c: the block's MLP, one such branch of the layer's tapered width */
extern const eng_mlp eng__mlp_swiglu;

#endif
