/* config.h: one job's configuration, fully resolved.
 *
 * A job config is read from YAML or JSON (or from a tree built by the sweep
 * expander), checked against the field table in config.c (unknown keys, wrong
 * types and out-of-range values are positioned errors), completed from the
 * scale preset and the global defaults, and validated as a whole.  Its
 * canonical serialisation (sorted keys, normalised numbers, only the fields
 * that matter for the chosen arch/schedule) is hashed into the job's identity.
 * docs/config.md lists every key.
 *
 * Must not: read data files or touch the filesystem beyond the config file
 * itself (identity must not depend on what is on disk). */
#ifndef TLM_ENGINE_CONFIG_H
#define TLM_ENGINE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/cfgtree.h"
#include "common/err.h"
#include "common/fmt.h"

#define ENG_CONFIG_VERSION 1
#define ENG_MAX_LAYERS 256
#define ENG_MAX_GROUPS 16
#define ENG_MAX_SUITES 16
#define ENG_NAME_MAX 64
#define ENG_HOPE_MAX_LEVELS 8 /* hope_attn: most Continuum Memory System levels per layer */
#define ENG_PATH_MAX 512
#define ENG_SEED_MAX 4294967295LL /* seeds are 0 to 2^32-1 */

typedef enum eng_arch {
    ENG_ARCH_TRANSFORMER = 0, /* Transformer++ */
    ENG_ARCH_GATED_ATTN,      /* + sigmoid output gate */
    ENG_ARCH_HOPE_ATTN,       /* + Continuum Memory System */
    ENG_ARCH_TITANS,          /* + neural long-term memory */
    ENG_ARCH_COUNT
} eng_arch;

typedef enum eng_schedule {
    ENG_TAPER_UNIFORM = 0,
    ENG_TAPER_LINEAR,
    ENG_TAPER_COSINE,
    ENG_TAPER_SIGMOID,
    ENG_TAPER_BLOCKS,
    ENG_TAPER_COUNT
} eng_schedule;

typedef enum eng_gate_mode { ENG_GATE_ELEMENTWISE = 0, ENG_GATE_HEADWISE } eng_gate_mode;
typedef enum eng_titans_variant { ENG_TITANS_MAG = 0, ENG_TITANS_MAL } eng_titans_variant;
/* train.precision (docs/engine.md "Precision"): auto is bf16 on a CUDA
 * device and fp32 on the CPU, resolved by eng_precision_resolve once the
 * device is known. */
typedef enum eng_precision { ENG_PREC_AUTO = 0, ENG_PREC_FP32, ENG_PREC_BF16 } eng_precision;
/* train.attention (docs/engine.md "Precision"): which fused attention the
 * CUDA backend runs where it has a choice (bf16 activations at head sizes
 * 64 and 128): auto (flash.cu today), flash, or cuDNN's SDPA graph.  An
 * execution setting: the same job whichever runs. */
typedef enum eng_attention { ENG_ATTN_AUTO = 0, ENG_ATTN_FLASH, ENG_ATTN_CUDNN } eng_attention;
/* train.cuda_graph (docs/engine.md "The training step as a CUDA graph"):
 * each training micro-batch's device work captured once as a CUDA graph
 * and replayed; auto is off until a GPU has timed both.  An execution
 * setting; on needs a CUDA device and flash or plain attention
 * (eng_cuda_graph_resolve). */
typedef enum eng_cuda_graph { ENG_GRAPH_AUTO = 0, ENG_GRAPH_ON, ENG_GRAPH_OFF } eng_cuda_graph;

typedef struct eng_model_cfg {
    int d_model;      /* residual width */
    int layers;       /* L */
    int heads;        /* query heads */
    int kv_heads;     /* key/value heads (grouped-query when < heads) */
    int d_ff;         /* the uniform MLP width d_base */
    int vocab;        /* embedding rows; must cover the tokenizer */
    int tied;         /* lm_head shares the embedding */
    double norm_eps;  /* RMSNorm epsilon */
    double rope_theta;
    double init_std;  /* normal(0, init_std) for weights; output projections scaled by 1/sqrt(2L) */
    int gate;         /* eng_gate_mode, gated_attn only */
    int hope_levels;  /* hope_attn: MLP levels per layer (docs/hope.md) */
    double hope_chunks[ENG_HOPE_MAX_LEVELS]; /* hope_attn: level i updates every hope_chunks[i] optimizer steps */
    int n_hope_chunks;
    /* titans (docs/titans.md) */
    int titans_variant;    /* eng_titans_variant: memory as a gate (MAG) or as a layer (MAL) */
    int titans_window;     /* sliding-window attention: a query sees this many positions, itself included */
    int titans_persistent; /* N_p persistent key/value entries per layer, visible to every query */
    int titans_chunk;      /* memory update chunk b (tokens) */
    int titans_mem_depth;  /* memory MLP depth: 1 (linear) or 2 (SiLU hidden layer) */
    int titans_mem_hidden; /* depth 2: hidden width */
    double titans_max_lr;  /* theta_t = max_lr * sigmoid(.) */
} eng_model_cfg;

typedef struct eng_taper_cfg {
    int schedule;                  /* eng_schedule */
    double ratio[2];               /* start, end (x d_base) */
    double k;                      /* sigmoid steepness */
    double groups[ENG_MAX_GROUPS]; /* blocks: multiplier per equal layer group */
    int n_groups;
    int multiple;                  /* widths are multiples of this */
} eng_taper_cfg;

typedef struct eng_train_cfg {
    int64_t tokens;          /* total training tokens */
    int64_t batch_tokens;    /* tokens per optimizer step (global batch) */
    int seq_len;             /* T */
    int micro_batch;         /* sequences per forward pass (0 = whole batch) */
    double lr;               /* peak learning rate */
    double min_lr_ratio;     /* cosine floor as a fraction of lr */
    int64_t warmup_tokens;
    double weight_decay;
    double grad_clip;        /* global norm; 0 disables */
    double beta1, beta2, adam_eps;
    int64_t ckpt_every_tokens; /* 0 = only at the end and on signals */
    int keep_checkpoints;      /* newest N kept */
    int log_every;             /* steps between step events */
    int grad_norms_every;      /* steps between per-layer gradient-norm layer events; 0 = off */
    int precision;             /* eng_precision, as written (auto until resolved for a device) */
    int attention;             /* eng_attention: the CUDA backend's fused attention */
    int recompute;             /* the MLPs' gate|up and SwiGLU outputs remade in the backward, not kept */
    int cuda_graph;            /* eng_cuda_graph: the training micro-step as a CUDA graph */
    int zero1;                 /* data parallel: optimizer state sharded over the ranks (ZeRO-1) */
} eng_train_cfg;

typedef struct eng_eval_cfg {
    int64_t every_tokens;     /* 0 = only at the end */
    char suites[ENG_MAX_SUITES][ENG_NAME_MAX];
    int n_suites;
    int64_t val_tokens;       /* validation tokens per evaluation */
    /* inputs of the other suites (engine/eval/eval.h, docs/evaluation.md); none
     * is part of the job's identity */
    char wikitext[ENG_PATH_MAX];      /* raw WikiText file (wiki.test.raw) */
    char lambada[ENG_PATH_MAX];       /* LAMBADA (OpenAI) JSONL */
    char commonsense[ENG_PATH_MAX];   /* folder of the tasks' files */
    char commonsense_tasks[ENG_MAX_SUITES][ENG_NAME_MAX];
    int n_commonsense_tasks;
    char niah_haystack[ENG_PATH_MAX]; /* text the S-NIAH-2/3 haystacks are cut from */
    double niah_lengths[ENG_MAX_SUITES]; /* context lengths (tokens, integral) */
    int n_niah_lengths;
    char niah_tasks[ENG_MAX_SUITES][ENG_NAME_MAX];
    int n_niah_tasks;
    int niah_n;                       /* items per task and length */
    int64_t niah_seed;
    char alignment_text[ENG_PATH_MAX];  /* text file, encoded with the job's tokenizer */
    char alignment_ids[ENG_PATH_MAX];   /* or token ids (whitespace-separated) */
    int64_t alignment_tokens;         /* N tokens averaged over */
    int batch;                        /* sequences per forward pass (0: automatic) */
} eng_eval_cfg;

typedef struct eng_data_cfg {
    char train[ENG_PATH_MAX];  /* shard file or folder */
    char val[ENG_PATH_MAX];    /* "" = split from train */
    double val_fraction;       /* used when val is "" */
} eng_data_cfg;

typedef struct eng_config {
    char scale[ENG_NAME_MAX];     /* preset name or "custom" */
    int arch;                     /* eng_arch */
    char tokenizer[ENG_PATH_MAX]; /* bytes | llama3 | llama2 | bpeN | path */
    int64_t seed;
    eng_model_cfg model;
    eng_taper_cfg taper;
    eng_train_cfg train;
    eng_eval_cfg eval;
    eng_data_cfg data;
} eng_config;

/* Read and resolve a job config from a file (.yaml, .yml or .json). */
int eng_config_load(const char *path, eng_config *cfg, tlm_err *e);
/* Resolve from a parsed tree (errors point into the tree's file). */
int eng_config_from_tree(const tlm_cfg_node *root, eng_config *cfg, tlm_err *e);
/* Resolve from YAML or JSON text of len bytes; `name` stands for the file
 * in messages ("job.yaml:3:7: ..."). */
int eng_config_from_text(const char *name, const char *text, size_t len, eng_config *cfg, tlm_err *e);
/* Resolve from a canonical JSON string (as stored in results.db). */
int eng_config_from_json(const char *json, eng_config *cfg, tlm_err *e);

/* Canonical JSON of the resolved config; malloc'd, NUL-terminated. */
char *eng_config_canonical(const eng_config *cfg);
/* Every field, execution settings (micro_batch, log_every...) included:
 * what tlmd hands a worker.  Sorted and normalised like the canonical form. */
char *eng_config_json(const eng_config *cfg);
/* Job identity: SHA-256 hex of the canonical form. */
void eng_config_id(const eng_config *cfg, char hex[65]);

/* Names. */
const char *eng_arch_name(int arch);
const char *eng_precision_name(int precision); /* "auto", "fp32", "bf16" */
const char *eng_attention_name(int attention); /* "auto", "flash", "cudnn" */
/* The storage precision of a run of cfg on a GPU (gpu 1) or the CPU:
 * ENG_PREC_FP32 or ENG_PREC_BF16 in *out.  TLM_ECONFIG for bf16 on the
 * CPU, whose backend stores fp32 only. */
int eng_precision_resolve(const eng_config *cfg, int gpu, int *out, tlm_err *e);
const char *eng_cuda_graph_name(int g); /* "auto", "on", "off" */
/* Whether a run of cfg on a GPU (gpu 1) or the CPU captures its training
 * micro-step as a CUDA graph: *on 1 or 0 (auto: 0, until measured).
 * TLM_ECONFIG for on with the CPU (it has no graphs) or with
 * train.attention cudnn (the cuDNN graph is not captured into ours). */
int eng_cuda_graph_resolve(const eng_config *cfg, int gpu, int *on, tlm_err *e);
const char *eng_schedule_name(int schedule);

/* Vocabulary size implied by a tokenizer name (bytes 256, llama3 128256,
 * llama2 32000, bpeN N); 0 if it must come from model.vocab. */
int eng_tokenizer_vocab(const char *tokenizer);

/* One accepted key as `tlm-worker --config-keys` and docs/config.md
 * describe it. */
typedef struct eng_config_key {
    const char *key;      /* "train.lr" */
    const char *type;     /* "integer", "number", "true|false", "string", "name", "list of numbers",
                             "list of names", "[start, end]" */
    const char *help;
    char def[256];        /* the default, in words: "0.0004", "preset, else 256", "[val]" */
    char choices[256];    /* the names it takes ("" when any value in range) */
    int computed;         /* the default derives from other keys (def says how) */
    int identity;         /* part of the job's identity */
} eng_config_key;

/* The i-th key in table order (sorted): 0, or -1 past the end. */
int eng_config_key_at(size_t i, eng_config_key *k);

/* Print every accepted key with its type, meaning and default (tlm-worker
 * --config-keys). */
void eng_config_print_keys(FILE *f);

#endif
