/* config.c: job configuration, driven by one field table.
 *
 * Every accepted key is a row of FIELDS: its dotted name, type, range, and
 * whether it belongs to the job's identity.  Parsing walks the tree against
 * the table (so unknown keys are caught with a suggestion), resolution fills
 * what was not given from the scale preset and the global defaults, and both
 * serialisations walk the table in sorted order.  Adding a key means adding a
 * row (type, bounds, default and help: the default in code only when it
 * derives from other keys, in the resolve_<section>() it belongs to) and a
 * line in docs/config.md, whose type and default tests/engine/config/
 * test_config.c checks against the row. */
#include "engine/config/config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/arch.h"
#include "common/json.h"
#include "common/sha256.h"
#include "engine/config/presets.h"
#include "engine/config/suites.h"
#include "common/vec.h"
#include "engine/config/taper.h"

/* ------------------------------------------------------------ names */
static const char *const ARCH_NAMES[] = {"transformer", "gated_attn", "hope_attn", "titans"};
static const char *const SCHEDULE_NAMES[] = {"uniform", "linear", "cosine", "sigmoid", "blocks"};
static const char *const GATE_NAMES[] = {"elementwise", "headwise"};
static const char *const TITANS_VARIANTS[] = {"mag", "mal"};
static const char *const PRECISION_NAMES[] = {"auto", "fp32", "bf16"};
static const char *const ATTENTION_NAMES[] = {"auto", "flash", "cudnn"};
static const char *const CUDA_GRAPH_NAMES[] = {"auto", "on", "off"};
#define NAMES(a) a, (int)(sizeof a / sizeof a[0])

const char *eng_arch_name(int arch)
{
    return arch >= 0 && arch < ENG_ARCH_COUNT ? ARCH_NAMES[arch] : "?";
}

const char *eng_precision_name(int p)
{
    return p >= 0 && p < (int)(sizeof PRECISION_NAMES / sizeof PRECISION_NAMES[0]) ? PRECISION_NAMES[p] : "?";
}

const char *eng_attention_name(int a)
{
    return a >= 0 && a < (int)(sizeof ATTENTION_NAMES / sizeof ATTENTION_NAMES[0]) ? ATTENTION_NAMES[a] : "?";
}

int eng_precision_resolve(const eng_config *cfg, int gpu, int *out, tlm_err *e)
{
    int p = cfg->train.precision;
    if (p == ENG_PREC_AUTO)
        p = gpu ? ENG_PREC_BF16 : ENG_PREC_FP32;
    if (p == ENG_PREC_BF16 && !gpu)
        return tlm_errf(e, TLM_ECONFIG,
                        "train.precision: bf16 needs a CUDA device (--device cuda:K); the CPU backend stores fp32 "
                        "only (train.precision: fp32 or auto)");
    *out = p;
    return 0;
}

const char *eng_cuda_graph_name(int g)
{
    return g >= 0 && g < (int)(sizeof CUDA_GRAPH_NAMES / sizeof CUDA_GRAPH_NAMES[0]) ? CUDA_GRAPH_NAMES[g] : "?";
}

int eng_cuda_graph_resolve(const eng_config *cfg, int gpu, int *on, tlm_err *e)
{
    *on = 0;
    if (cfg->train.cuda_graph != ENG_GRAPH_ON)
        return 0;
    if (!gpu)
        return tlm_errf(e, TLM_ECONFIG,
                        "train.cuda_graph: on needs a CUDA device (--device cuda:K); the CPU backend has no graphs "
                        "(train.cuda_graph: auto or off)");
    if (cfg->train.attention == ENG_ATTN_CUDNN)
        return tlm_errf(e, TLM_ECONFIG,
                        "train.cuda_graph: on with train.attention: cudnn is not supported (cuDNN's SDPA is not "
                        "captured into the step's graph); use train.attention: flash or auto, or train.cuda_graph: off");
    *on = 1;
    return 0;
}

const char *eng_schedule_name(int s)
{
    return s >= 0 && s < ENG_TAPER_COUNT ? SCHEDULE_NAMES[s] : "?";
}

int eng_tokenizer_vocab(const char *t)
{
    if (!strcmp(t, "bytes"))
        return 256;
    if (!strcmp(t, "llama3"))
        return 128256; /* 128,000 BPE ranks + 256 special tokens */
    if (!strcmp(t, "llama2"))
        return 32000;
    if (!strncmp(t, "bpe", 3) && t[3] >= '1' && t[3] <= '9') {
        char *end;
        long v = strtol(t + 3, &end, 10);
        if (*end == '\0' && v >= 257 && v <= 1 << 20)
            return (int)v;
    }
    return 0;
}

/* ------------------------------------------------------------ field table */
enum ftype { F_INT, F_I64, F_DOUBLE, F_BOOL, F_STR, F_ENUM, F_DLIST, F_SLIST, F_PAIR };
enum {
    FLAG_EXEC = 1,  /* execution setting: not part of the job's identity */
    FLAG_LATER = 2, /* added after identities were stored: left out of the identity while it holds its
                     * default (F_ENUM rows), so configs that do not set it keep their id */
};

/* One accepted key, after redis's standardConfig: where it goes, what it
 * accepts, its default and its help.  Defaults: a key not given takes the
 * scale preset's value when `preset_off` names one and a preset is named,
 * else the row's default (`def`, `def_str`, `def_nums` or `def_names`; a
 * zero value when none is written); a key whose default depends on other
 * keys says how in `derived` and gets it in resolve_<section>() (the
 * row's default, if any, is then that code's fallback). */
typedef struct field {
    const char *key;
    int type;
    size_t off;
    size_t cap;       /* F_STR bytes; F_DLIST/F_SLIST/F_PAIR max entries; F_SLIST entry size in cap2 */
    size_t cap2;
    size_t count_off; /* lists: offset of the int count */
    double lo, hi;    /* inclusive range; lo_open makes lo exclusive */
    int lo_open;
    const char *const *names; /* F_ENUM: the values; F_SLIST: the names it may list (NULL: any) */
    int n_names;
    const char *(*choice)(size_t i); /* F_STR: the i-th name it may hold (NULL past the end); NULL: any */
    int flags;
    int (*relevant)(const eng_config *c);
    double def;                   /* F_INT, F_I64, F_DOUBLE, F_BOOL; F_ENUM: index into names */
    const char *def_str;          /* F_STR; NULL: "" */
    const double *def_nums;       /* F_PAIR, F_DLIST */
    int n_def_nums;
    const char *const *def_names; /* F_SLIST */
    int n_def_names;
    size_t preset_off;            /* offset in eng_preset of the preset's value (of the row's C type); 0: none */
    const char *derived;          /* the default in words when resolve computes it */
    const char *help;
} field;

/* preset_off 0 means "none": the preset's name is never a key's default */
_Static_assert(offsetof(eng_preset, name) == 0, "eng_preset.name must come first");

#define OFF(m) offsetof(eng_config, m)
#define MEMBER(m) (((eng_config *)0)->m)
#define NELEM(m) (sizeof MEMBER(m) / sizeof MEMBER(m)[0])
#define BIG 9.0e18
#define ROW(k, t, m) .key = (k), .type = (t), .off = OFF(m)
#define INT(k, m, l, h) ROW(k, F_INT, m), .lo = (l), .hi = (h)
#define I64(k, m, l, h) ROW(k, F_I64, m), .lo = (l), .hi = (h)
#define NUM(k, m, l, h) ROW(k, F_DOUBLE, m), .lo = (l), .hi = (h)        /* [l, h] */
#define NUM_ABOVE(k, m, l, h) NUM(k, m, l, h), .lo_open = 1             /* (l, h] */
#define BOOL(k, m) ROW(k, F_BOOL, m)
#define STR(k, m) ROW(k, F_STR, m), .cap = sizeof MEMBER(m)
#define ENUM(k, m, a) ROW(k, F_ENUM, m), .names = (a), .n_names = (int)(sizeof(a) / sizeof(a)[0])
#define PAIR(k, m, l, h) ROW(k, F_PAIR, m), .cap = NELEM(m), .lo = (l), .hi = (h)
#define DLIST(k, m, n, l, h) ROW(k, F_DLIST, m), .cap = NELEM(m), .count_off = OFF(n), .lo = (l), .hi = (h)
#define SLIST(k, m, n) ROW(k, F_SLIST, m), .cap = NELEM(m), .cap2 = sizeof MEMBER(m)[0], .count_off = OFF(n)
#define NAMES_OF(a, n) .names = (a), .n_names = (n)
#define DEF_NUMS(...) .def_nums = (const double[]){__VA_ARGS__}, \
                      .n_def_nums = (int)(sizeof(const double[]){__VA_ARGS__} / sizeof(double))
#define DEF_NAMES(...) .def_names = (const char *const[]){__VA_ARGS__}, \
                       .n_def_names = (int)(sizeof(const char *const[]){__VA_ARGS__} / sizeof(const char *))
#define PRESET(m) .preset_off = offsetof(eng_preset, m)

static int rel_gate(const eng_config *c) { return c->arch == ENG_ARCH_GATED_ATTN; }
static int rel_ratio(const eng_config *c)
{
    return c->taper.schedule == ENG_TAPER_LINEAR || c->taper.schedule == ENG_TAPER_COSINE ||
           c->taper.schedule == ENG_TAPER_SIGMOID;
}
static int rel_k(const eng_config *c) { return c->taper.schedule == ENG_TAPER_SIGMOID; }
static int rel_groups(const eng_config *c) { return c->taper.schedule == ENG_TAPER_BLOCKS; }
static int rel_multiple(const eng_config *c)
{
    return c->taper.schedule != ENG_TAPER_UNIFORM || c->arch == ENG_ARCH_HOPE_ATTN; /* hope: the levels' unit */
}
static int rel_hope(const eng_config *c) { return c->arch == ENG_ARCH_HOPE_ATTN; }
static int rel_titans(const eng_config *c) { return c->arch == ENG_ARCH_TITANS; }
static int rel_titans_hidden(const eng_config *c)
{
    return c->arch == ENG_ARCH_TITANS && c->model.titans_mem_depth == 2;
}
static int rel_val_fraction(const eng_config *c) { return c->data.val[0] == '\0'; }
static int has_suite(const eng_config *c, int suite)
{
    for (int i = 0; i < c->eval.n_suites; i++)
        if (!strcmp(c->eval.suites[i], eng_suite_names[suite]))
            return 1;
    return 0;
}
static int rel_wikitext(const eng_config *c) { return has_suite(c, ENG_SUITE_WIKITEXT); }
static int rel_lambada(const eng_config *c) { return has_suite(c, ENG_SUITE_LAMBADA); }
static int rel_commonsense(const eng_config *c) { return has_suite(c, ENG_SUITE_COMMONSENSE); }
static int rel_niah(const eng_config *c) { return has_suite(c, ENG_SUITE_NIAH); }
static int rel_alignment(const eng_config *c) { return has_suite(c, ENG_SUITE_ALIGNMENT); }
static int rel_eval_batch(const eng_config *c) { return c->eval.n_suites > has_suite(c, ENG_SUITE_VAL); }
static const char *preset_name(size_t i)
{
    const eng_preset *p = eng_preset_at(i);
    return p ? p->name : NULL;
}

/* Sorted by key: the order of --config-keys and of "expected one of" lists. */
static const field FIELDS[] = {
    {ENUM("arch", arch, ARCH_NAMES), .def = ENG_ARCH_TRANSFORMER, .help = "token mixer"},
    {STR("data.train", data.train), .help = "training shards: a .tlmtok file or a folder of them"},
    {STR("data.val", data.val), .help = "validation shards (empty: split from data.train)"},
    {NUM_ABOVE("data.val_fraction", data.val_fraction, 0, 0.5), .def = 0.05, .relevant = rel_val_fraction,
     .help = "share of data.train held out for validation when data.val is empty"},
    {STR("eval.alignment.ids", eval.alignment_ids), .flags = FLAG_EXEC, .relevant = rel_alignment,
     .help = "alignment: token ids (whitespace-separated) instead of eval.alignment.text"},
    {STR("eval.alignment.text", eval.alignment_text), .flags = FLAG_EXEC, .relevant = rel_alignment,
     .help = "alignment: text file whose first eval.alignment.tokens tokens are analysed"},
    {I64("eval.alignment.tokens", eval.alignment_tokens, 1, 1 << 24), .def = 2048, .flags = FLAG_EXEC,
     .relevant = rel_alignment, .help = "alignment: tokens averaged over (the paper: 2048)"},
    {INT("eval.batch", eval.batch, 0, 4096), .flags = FLAG_EXEC, .relevant = rel_eval_batch,
     .help = "evaluation suites: sequences per forward pass (0: automatic)"},
    {STR("eval.commonsense", eval.commonsense), .flags = FLAG_EXEC, .relevant = rel_commonsense,
     .help = "commonsense: folder of the task files (piqa.jsonl, hellaswag.jsonl, ...)"},
    {SLIST("eval.commonsense_tasks", eval.commonsense_tasks, eval.n_commonsense_tasks),
     NAMES_OF(eng_commonsense_names, ENG_CS_COUNT), .def_names = eng_commonsense_names,
     .n_def_names = ENG_CS_COUNT, .flags = FLAG_EXEC, .relevant = rel_commonsense,
     .help = "commonsense: tasks to run"},
    {I64("eval.every_tokens", eval.every_tokens, 0, BIG), PRESET(eval_every_tokens),
     .derived = "preset, else train.tokens / 10",
     .help = "evaluate every this many training tokens (0: only at the end)"},
    {STR("eval.lambada", eval.lambada), .flags = FLAG_EXEC, .relevant = rel_lambada,
     .help = "lambada: LAMBADA (OpenAI) JSONL file"},
    {STR("eval.niah.haystack", eval.niah_haystack), .flags = FLAG_EXEC, .relevant = rel_niah,
     .help = "niah: text file the S-NIAH-2/3 haystacks are cut from"},
    {DLIST("eval.niah.lengths", eval.niah_lengths, eval.n_niah_lengths, 16, 1 << 24), .flags = FLAG_EXEC,
     .relevant = rel_niah, .derived = "[train.seq_len]", .help = "niah: context lengths in tokens"},
    {INT("eval.niah.n", eval.niah_n, 1, 100000), .def = 20, .flags = FLAG_EXEC, .relevant = rel_niah,
     .help = "niah: items per task and length"},
    {I64("eval.niah.seed", eval.niah_seed, 0, (double)ENG_SEED_MAX), .flags = FLAG_EXEC, .relevant = rel_niah,
     .help = "niah: seed of the generated items (same seed, same prompts)"},
    {SLIST("eval.niah.tasks", eval.niah_tasks, eval.n_niah_tasks), NAMES_OF(eng_niah_names, ENG_NIAH_COUNT),
     .def_names = eng_niah_names, .n_def_names = ENG_NIAH_COUNT, .flags = FLAG_EXEC, .relevant = rel_niah,
     .help = "niah: tasks"},
    {SLIST("eval.suites", eval.suites, eval.n_suites), NAMES_OF(eng_suite_names, ENG_SUITE_COUNT),
     DEF_NAMES("val"), .help = "evaluation suites"},
    {I64("eval.val_tokens", eval.val_tokens, 1, BIG), PRESET(val_tokens), .derived = "preset, else 32 x train.seq_len",
     .help = "validation tokens scored per evaluation"},
    {STR("eval.wikitext", eval.wikitext), .flags = FLAG_EXEC, .relevant = rel_wikitext,
     .help = "wikitext: raw WikiText file (wiki.test.raw of wikitext-2-raw-v1)"},
    {INT("model.d_ff", model.d_ff, 1, 1 << 20), PRESET(d_ff), .derived = "preset; required without scale",
     .help = "uniform MLP width d_base (the taper redistributes it)"},
    {INT("model.d_model", model.d_model, 1, 1 << 16), PRESET(d_model), .derived = "preset; required without scale",
     .help = "residual width"},
    {ENUM("model.gate", model.gate, GATE_NAMES), .def = ENG_GATE_ELEMENTWISE, .relevant = rel_gate,
     .help = "gated_attn: one gate per channel (elementwise) or per head (headwise)"},
    {DLIST("model.hope.chunks", model.hope_chunks, model.n_hope_chunks, 1, 1e6), .relevant = rel_hope,
     .derived = "[1, 4, 16, ...] (4^i)",
     .help = "hope_attn: optimizer steps between updates of each CMS level, fastest first"},
    {INT("model.hope.levels", model.hope_levels, 1, ENG_HOPE_MAX_LEVELS), .def = 3, .relevant = rel_hope,
     .help = "hope_attn: MLP levels per layer (as many as model.hope.chunks lists, when given); their widths split "
             "the layer's d_ff"},
    {INT("model.heads", model.heads, 1, 4096), PRESET(heads), .derived = "preset; required without scale",
     .help = "attention heads"},
    {NUM_ABOVE("model.init_std", model.init_std, 0, 1), .def = 0.02,
     .help = "standard deviation of the weight initialisation"},
    {INT("model.kv_heads", model.kv_heads, 1, 4096), .derived = "model.heads",
     .help = "key/value heads (fewer than heads: grouped-query attention)"},
    {INT("model.layers", model.layers, 1, ENG_MAX_LAYERS), PRESET(layers), .derived = "preset; required without scale",
     .help = "blocks"},
    {NUM_ABOVE("model.norm_eps", model.norm_eps, 0, 1), .def = 1e-5, .help = "RMSNorm epsilon"},
    {NUM("model.rope_theta", model.rope_theta, 1, 1e9), .def = 10000, .help = "RoPE base"},
    {BOOL("model.tied", model.tied), .def = 1, PRESET(tied), .help = "share the embedding with the LM head"},
    {INT("model.titans.chunk", model.titans_chunk, 1, 512), .def = 16, .relevant = rel_titans,
     .help = "titans: memory update chunk in tokens; a chunk's gradients are all taken at its start weights"},
    /* 0.002, not the Titans paper's 0.01: a chunk sums `chunk` inner gradients (docs/titans.md) */
    {NUM_ABOVE("model.titans.max_lr", model.titans_max_lr, 0, 100), .def = 0.002, .relevant = rel_titans,
     .help = "titans: the memory's learning rate is max_lr * sigmoid(x w + b) per token and head"},
    {INT("model.titans.mem_depth", model.titans_mem_depth, 1, 2), .def = 2, .relevant = rel_titans,
     .help = "titans: memory MLP depth, 1 (linear) or 2 (a SiLU hidden layer)"},
    {INT("model.titans.mem_hidden", model.titans_mem_hidden, 1, 1 << 16), .relevant = rel_titans_hidden,
     .derived = "2 x head size", .help = "titans: hidden width of the depth-2 memory"},
    {INT("model.titans.persistent", model.titans_persistent, 0, 1024), .def = 4, .relevant = rel_titans,
     .help = "titans: persistent memory entries per layer, attended by every query"},
    {ENUM("model.titans.variant", model.titans_variant, TITANS_VARIANTS), .def = ENG_TITANS_MAG,
     .relevant = rel_titans, .help = "titans: mag (memory as a gate) or mal (memory as a layer)"},
    {INT("model.titans.window", model.titans_window, 1, 1 << 24), .def = 512, .relevant = rel_titans,
     .help = "titans: sliding-window attention width, the query included"},
    {INT("model.vocab", model.vocab, 2, 1 << 24), .derived = "the tokenizer's",
     .help = "embedding rows (at least the tokenizer's vocabulary)"},
    {STR("scale", scale), .choice = preset_name, .derived = "custom (no preset)", .help = "preset"},
    {I64("seed", seed, 0, (double)ENG_SEED_MAX), .help = "initialisation and data-order seed"},
    {DLIST("taper.groups", taper.groups, taper.n_groups, 0, 100), .lo_open = 1, .relevant = rel_groups,
     .derived = "none; required with schedule blocks",
     .help = "blocks: width multiplier per equal group of layers, e.g. [1.5, 1.0, 0.5]"},
    {NUM_ABOVE("taper.k", taper.k, 0, 1000), .def = 10, .relevant = rel_k, .help = "sigmoid steepness"},
    {INT("taper.multiple", taper.multiple, 1, 4096), .def = 16, .relevant = rel_multiple,
     .help = "every width is a multiple of this"},
    {PAIR("taper.ratio", taper.ratio, 0, 100), DEF_NUMS(1.5, 0.5), .relevant = rel_ratio,
     .help = "[start, end] as multiples of d_base, e.g. [1.5, 0.5]"},
    {ENUM("taper.schedule", taper.schedule, SCHEDULE_NAMES), .def = ENG_TAPER_UNIFORM,
     .help = "MLP width across depth"},
    {STR("tokenizer", tokenizer), .def_str = "bytes", PRESET(tokenizer),
     .help = "bytes, llama3, llama2, bpeN (a trained BPE of N ids) or a tokenizer file"},
    {NUM_ABOVE("train.adam_eps", train.adam_eps, 0, 1), .def = 1e-8, .help = "AdamW epsilon"},
    {ENUM("train.attention", train.attention, ATTENTION_NAMES), .def = ENG_ATTN_AUTO, .flags = FLAG_EXEC,
     .help = "the CUDA backend's fused attention for bf16 at head sizes 64 and 128: auto (flash today), flash "
             "(flash.cu) or cudnn (cuDNN's SDPA graph); elsewhere the plain kernels"},
    {I64("train.batch_tokens", train.batch_tokens, 1, BIG), PRESET(batch_tokens),
     .derived = "preset, else 16 x train.seq_len", .help = "tokens per optimizer step"},
    {NUM("train.beta1", train.beta1, 0, 0.999999), .def = 0.9, .help = "AdamW beta1"},
    {NUM("train.beta2", train.beta2, 0, 0.999999), .def = 0.95, .help = "AdamW beta2"},
    {I64("train.ckpt_every_tokens", train.ckpt_every_tokens, 0, BIG), .flags = FLAG_EXEC,
     .derived = "eval.every_tokens", .help = "checkpoint every this many tokens (0: at the end and on signals only)"},
    {ENUM("train.cuda_graph", train.cuda_graph, CUDA_GRAPH_NAMES), .def = ENG_GRAPH_AUTO, .flags = FLAG_EXEC,
     .help = "the CUDA backend captures each training micro-batch's forward and backward once as a CUDA graph and "
             "replays it: auto (off until measured), on or off"},
    {NUM("train.grad_clip", train.grad_clip, 0, 1e6), .def = 1.0, .help = "global gradient-norm clip (0: off)"},
    {INT("train.grad_norms_every", train.grad_norms_every, 0, 1 << 30), .def = 0, .flags = FLAG_EXEC,
     .help = "steps between per-layer gradient norms (layer events grad_norm_*; 0: off)"},
    {INT("train.keep_checkpoints", train.keep_checkpoints, 1, 1000), .def = 2, .flags = FLAG_EXEC,
     .help = "checkpoints kept on disk"},
    {INT("train.log_every", train.log_every, 1, 1 << 30), .def = 10, .flags = FLAG_EXEC,
     .help = "steps between step events"},
    {NUM_ABOVE("train.lr", train.lr, 0, 10), .def = 4e-4, .help = "peak learning rate"},
    {INT("train.micro_batch", train.micro_batch, 0, 1 << 20), .flags = FLAG_EXEC,
     .derived = "automatic: the largest divisor of a batch's sequences that keeps a pass at 64K tokens",
     .help = "sequences per forward pass (0: automatic); gradients accumulate to batch_tokens"},
    {NUM("train.min_lr_ratio", train.min_lr_ratio, 0, 1), .def = 0.1,
     .help = "cosine schedule floor as a fraction of lr"},
    {BOOL("train.recompute", train.recompute), .def = 0, .flags = FLAG_EXEC,
     .help = "activation recompute: the MLPs' gate|up and SwiGLU outputs are made again in the backward from the "
             "kept normed input, not kept for every layer (less memory, one more gate|up product a layer)"},
    {ENUM("train.precision", train.precision, PRECISION_NAMES), .def = ENG_PREC_AUTO, .flags = FLAG_LATER,
     .help = "storage precision: auto (bf16 on a CUDA device, fp32 on the CPU), fp32 or bf16 (GPU only)"},
    {INT("train.seq_len", train.seq_len, 2, 1 << 20), .def = 256, PRESET(seq_len), .help = "sequence length"},
    {I64("train.tokens", train.tokens, 1, BIG), PRESET(tokens), .derived = "preset; required without scale",
     .help = "training tokens"},
    {I64("train.warmup_tokens", train.warmup_tokens, 0, BIG), PRESET(warmup_tokens),
     .derived = "preset, else train.tokens / 20", .help = "linear warm-up length in tokens"},
    {NUM("train.weight_decay", train.weight_decay, 0, 10), .def = 0.1,
     .help = "decoupled weight decay (not applied to norms and gains)"},
    {BOOL("train.zero1", train.zero1), .def = 0, .flags = FLAG_EXEC,
     .help = "a job of several ranks shards the AdamW state over them (ZeRO-1: reduce-scatter the gradients, "
             "update each rank's shard, all-gather the weights; docs/parallel.md)"},
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

static const field *field_find(const char *key)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(FIELDS[i].key, key) == 0)
            return &FIELDS[i];
    return NULL;
}

static int is_section(const char *prefix) /* "train." */
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < NFIELDS; i++)
        if (strncmp(FIELDS[i].key, prefix, n) == 0)
            return 1;
    return 0;
}

/* "unknown key 'lrr' in train; did you mean 'lr'? (keys: ...)" */
static int unknown_key(const tlm_cfg_node *key, const char *prefix_in, tlm_err *e)
{
    /* a dotted key (train.lrr) is judged in the deepest section it names,
     * so the hint is train's 'lr', not a top-level key */
    char full[ENG_NAME_MAX * 2 + 1], prefix[ENG_NAME_MAX * 2 + 1], name_in[ENG_NAME_MAX];
    snprintf(full, sizeof full, "%s%s", prefix_in, key->text);
    snprintf(prefix, sizeof prefix, "%s", prefix_in);
    for (size_t d = strlen(full); d-- > strlen(prefix_in);)
        if (full[d] == '.') {
            char sub[sizeof full];
            snprintf(sub, sizeof sub, "%.*s", (int)(d + 1), full);
            if (is_section(sub)) {
                snprintf(prefix, sizeof prefix, "%s", sub);
                break;
            }
        }
    size_t np = strlen(prefix);
    snprintf(name_in, sizeof name_in, "%s", full + np);
    char *cut = strchr(name_in, '.');
    if (cut)
        *cut = '\0';
    char keys[600] = "";
    const char *best = NULL;
    size_t bestd = 3;
    char seen[NFIELDS][ENG_NAME_MAX];
    size_t nseen = 0;
    for (size_t i = 0; i < NFIELDS; i++) {
        if (strncmp(FIELDS[i].key, prefix, np) != 0)
            continue;
        char name[ENG_NAME_MAX];
        snprintf(name, sizeof name, "%s", FIELDS[i].key + np);
        char *dot = strchr(name, '.');
        if (dot)
            *dot = '\0';
        size_t j;
        for (j = 0; j < nseen; j++)
            if (!strcmp(seen[j], name))
                break;
        if (j < nseen)
            continue;
        strcpy(seen[nseen++], name);
        size_t len = strlen(keys);
        snprintf(keys + len, sizeof keys - len, "%s%s", len ? ", " : "", name);
        size_t d = tlm_cfg_edit_distance(name_in, name);
        if (d < bestd) {
            bestd = d;
            best = FIELDS[i].key + np;
        }
    }
    char where[80] = "";
    if (np)
        snprintf(where, sizeof where, " in %.*s", (int)(np - 1), prefix);
    if (best) {
        char b[ENG_NAME_MAX];
        snprintf(b, sizeof b, "%s", best);
        char *dot = strchr(b, '.');
        if (dot)
            *dot = '\0';
        return tlm_cfg_errf(e, key, "unknown key '%s'%s; did you mean '%s'? (expected one of: %s)", key->text, where,
                        b, keys);
    }
    return tlm_cfg_errf(e, key, "unknown key '%s'%s (expected one of: %s)", key->text, where, keys);
}

/* ------------------------------------------------------------ parsing */
typedef struct parse_ctx {
    eng_config *cfg;
    unsigned char given[NFIELDS];
    const tlm_cfg_node *node[NFIELDS]; /* where each given field was written */
    const tlm_cfg_node *root;
} parse_ctx;

static int set_field(parse_ctx *px, const field *f, const tlm_cfg_node *v, tlm_err *e)
{
    char *base = (char *)px->cfg;
    void *p = base + f->off;
    const char *what = f->key;
    switch (f->type) {
    case F_INT:
    case F_I64: {
        /* integral bounds: "more than 0" is "from 1" */
        int64_t x, lo = (int64_t)(f->lo_open ? floor(f->lo) + 1 : ceil(f->lo)), hi = (int64_t)floor(f->hi);
        if (tlm_cfg_get_int_in(v, what, lo, hi, &x, e))
            return TLM_ECONFIG;
        if (f->type == F_INT)
            *(int *)p = (int)x; /* every F_INT row's range lies within int */
        else
            *(int64_t *)p = x;
        break;
    }
    case F_DOUBLE:
        return tlm_cfg_get_double_in(v, what, f->lo, f->hi, f->lo_open, (double *)p, e);
    case F_BOOL:
        return tlm_cfg_get_bool(v, what, (int *)p, e);
    case F_STR:
        return tlm_cfg_get_string(v, what, (char *)p, f->cap, e);
    case F_ENUM: {
        char s[ENG_NAME_MAX];
        char list[256] = "";
        for (int i = 0; i < f->n_names; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? " | " : "", f->names[i]);
        }
        if (v->kind != TLM_CFG_SCALAR || tlm_cfg_is_null(v))
            return tlm_cfg_errf(e, v, "%s: expected one of %s, got %s", what, list, tlm_cfg_describe(v));
        if (tlm_cfg_get_string(v, what, s, sizeof s, e))
            return TLM_ECONFIG;
        int idx = eng_name_find(f->names, f->n_names, s);
        if (idx < 0)
            return tlm_cfg_errf(e, v, "%s: '%s' is not one of %s", what, s, list);
        *(int *)p = idx;
        break;
    }
    case F_PAIR:
    case F_DLIST: {
        if (v->kind != TLM_CFG_SEQ)
            return tlm_cfg_errf(e, v, "%s: expected a list of numbers%s, got %s", what,
                            f->type == F_PAIR ? " [start, end]" : "", tlm_cfg_describe(v));
        if (f->type == F_PAIR && v->n != 2)
            return tlm_cfg_errf(e, v, "%s: expected exactly two numbers [start, end], got %zu", what, v->n);
        if (v->n == 0 || v->n > f->cap)
            return tlm_cfg_errf(e, v, "%s: expected 1 to %zu numbers, got %zu", what, f->cap, v->n);
        double *d = (double *)p;
        for (size_t i = 0; i < v->n; i++)
            if (tlm_cfg_get_double_in(v->items[i], what, f->lo, f->hi, f->lo_open, &d[i], e))
                return TLM_ECONFIG;
        if (f->type == F_DLIST)
            *(int *)(base + f->count_off) = (int)v->n;
        break;
    }
    case F_SLIST: {
        if (v->kind != TLM_CFG_SEQ)
            return tlm_cfg_errf(e, v, "%s: expected a list of names, got %s", what, tlm_cfg_describe(v));
        if (v->n > f->cap)
            return tlm_cfg_errf(e, v, "%s: at most %zu entries", what, f->cap);
        char *s = (char *)p;
        for (size_t i = 0; i < v->n; i++) {
            if (tlm_cfg_get_string(v->items[i], what, s + i * f->cap2, f->cap2, e))
                return TLM_ECONFIG;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(s + j * f->cap2, s + i * f->cap2))
                    return tlm_cfg_errf(e, v->items[i], "%s: '%s' is listed twice", what, s + i * f->cap2);
        }
        *(int *)(base + f->count_off) = (int)v->n;
        break;
    }
    }
    return 0;
}

static int walk(parse_ctx *px, const tlm_cfg_node *map, const char *prefix, tlm_err *e)
{
    if (map->kind != TLM_CFG_MAP)
        return tlm_cfg_errf(e, map, "%s%sexpected a mapping of keys, got %s", prefix, *prefix ? ": " : "",
                        tlm_cfg_describe(map));
    for (size_t i = 0; i < map->n; i++) {
        const tlm_cfg_node *k = map->keys[i], *v = map->items[i];
        char path[ENG_NAME_MAX * 2];
        if ((size_t)snprintf(path, sizeof path, "%s%s", prefix, k->text) >= sizeof path)
            return tlm_cfg_errf(e, k, "key '%s' is too long", k->text);
        const field *f = field_find(path);
        if (f) {
            if (set_field(px, f, v, e))
                return TLM_ECONFIG;
            px->given[f - FIELDS] = 1;
            px->node[f - FIELDS] = v;
            continue;
        }
        char sub[ENG_NAME_MAX * 2 + 1];
        snprintf(sub, sizeof sub, "%s.", path);
        if (is_section(sub)) {
            if (v->kind != TLM_CFG_MAP)
                return tlm_cfg_errf(e, v, "%s: expected a mapping of keys, got %s", path, tlm_cfg_describe(v));
            if (walk(px, v, sub, e))
                return TLM_ECONFIG;
            continue;
        }
        return unknown_key(k, prefix, e);
    }
    return 0;
}

/* ------------------------------------------------------------ resolution */
#define GIVEN(px, key) (px->given[field_find(key) - FIELDS])
#define NODE(px, key) (px->node[field_find(key) - FIELDS])

/* Keys that belong to one architecture take their defaults only with it
 * (they stay zero otherwise, as the canonical form leaves them out). */
static const struct {
    const char *prefix;
    int arch;
} ARCH_KEYS[] = {{"model.hope.", ENG_ARCH_HOPE_ATTN}, {"model.titans.", ENG_ARCH_TITANS}};

static int in_section(const field *f, const char *prefix) { return !strncmp(f->key, prefix, strlen(prefix)); }

static int for_arch(const field *f, int arch)
{
    for (size_t i = 0; i < sizeof ARCH_KEYS / sizeof ARCH_KEYS[0]; i++)
        if (in_section(f, ARCH_KEYS[i].prefix))
            return ARCH_KEYS[i].arch == arch;
    return 1;
}

/* The row's default into the config (a zero default is already there). */
static void set_default(eng_config *c, const field *f)
{
    char *p = (char *)c + f->off;
    switch (f->type) {
    case F_INT:
    case F_BOOL:
    case F_ENUM: *(int *)p = (int)f->def; break;
    case F_I64: *(int64_t *)p = (int64_t)f->def; break;
    case F_DOUBLE: *(double *)p = f->def; break;
    case F_STR: snprintf(p, f->cap, "%s", f->def_str ? f->def_str : ""); break;
    case F_PAIR:
    case F_DLIST:
        for (int i = 0; i < f->n_def_nums; i++)
            ((double *)p)[i] = f->def_nums[i];
        if (f->type == F_DLIST)
            *(int *)((char *)c + f->count_off) = f->n_def_nums;
        break;
    case F_SLIST:
        for (int i = 0; i < f->n_def_names; i++)
            snprintf(p + (size_t)i * f->cap2, f->cap2, "%s", f->def_names[i]);
        *(int *)((char *)c + f->count_off) = f->n_def_names;
        break;
    }
}

/* The preset's value of the row (its member has the row's C type). */
static void set_from_preset(eng_config *c, const field *f, const eng_preset *p)
{
    char *dst = (char *)c + f->off;
    const char *src = (const char *)p + f->preset_off;
    if (f->type == F_STR)
        snprintf(dst, f->cap, "%s", *(const char *const *)src);
    else if (f->type == F_I64)
        *(int64_t *)dst = *(const int64_t *)src;
    else
        *(int *)dst = *(const int *)src;
}

/* Every key not given takes the preset's value or the row's default;
 * derived defaults are the sections' below. */
static void apply_defaults(parse_ctx *px, const eng_preset *p)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const field *f = &FIELDS[i];
        if (px->given[i] || !for_arch(f, px->cfg->arch))
            continue;
        if (p && f->preset_off)
            set_from_preset(px->cfg, f, p);
        else if (!f->derived)
            set_default(px->cfg, f);
    }
}

/* scale: the preset named (NULL for none, "custom"), or the keys that
 * must then be given. */
static int resolve_scale(parse_ctx *px, const eng_preset **out, tlm_err *e)
{
    eng_config *c = px->cfg;
    *out = NULL;
    /* "custom" is what eng_config_json writes for a config without a preset:
     * it must read back (tlmd hands workers that JSON) */
    if (GIVEN(px, "scale") && strcmp(c->scale, "custom") != 0) {
        if (!(*out = eng_preset_find(c->scale))) {
            char list[256] = "";
            for (size_t i = 0; preset_name(i); i++) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", preset_name(i));
            }
            return tlm_cfg_errf(e, NODE(px, "scale"), "scale: unknown preset '%s' (expected one of: %s)", c->scale,
                            list);
        }
        return 0;
    }
    strcpy(c->scale, "custom");
    static const char *const need[] = {"model.d_model", "model.layers", "model.heads", "model.d_ff"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!GIVEN(px, need[i]))
            return tlm_cfg_errf(e, px->root,
                            "%s is required when no scale preset is named (or set scale: 1m, 440m, ...)", need[i]);
    return 0;
}

/* model: key/value heads, the vocabulary from the tokenizer, and a shape
 * the attention can take. */
static int resolve_model(parse_ctx *px, tlm_err *e)
{
    eng_config *c = px->cfg;
    eng_model_cfg *m = &c->model;
    if (!GIVEN(px, "model.kv_heads"))
        m->kv_heads = m->heads;
    if (!c->tokenizer[0])
        return tlm_cfg_errf(e, NODE(px, "tokenizer"), "tokenizer: must not be empty");
    int tv = eng_tokenizer_vocab(c->tokenizer);
    if (!GIVEN(px, "model.vocab")) {
        /* a bpeN name outside the range sizes nothing: say so, not "vocab
         * is required" (with model.vocab given it is a name like any other) */
        if (!tv && !strncmp(c->tokenizer, "bpe", 3) && c->tokenizer[3] &&
            strspn(c->tokenizer + 3, "0123456789") == strlen(c->tokenizer + 3))
            return tlm_cfg_errf(e, NODE(px, "tokenizer"),
                            "tokenizer: '%s' is out of range: bpeN names a trained BPE of N ids, N from 257 (the 256 "
                            "bytes and one merge) to 2^20; or give model.vocab",
                            c->tokenizer);
        /* a slip of a name ("byte") is not a tokenizer file */
        static const char *const names[] = {"bytes", "llama3", "llama2"};
        for (size_t i = 0; !tv && i < sizeof names / sizeof *names; i++)
            if (tlm_cfg_edit_distance(c->tokenizer, names[i]) == 1)
                return tlm_cfg_errf(e, NODE(px, "tokenizer"),
                                    "tokenizer: unknown name '%s'; did you mean '%s'? (names: bytes, llama3, llama2, "
                                    "bpeN; else a tokenizer file, with model.vocab)",
                                    c->tokenizer, names[i]);
        if (!tv)
            return tlm_cfg_errf(e, NODE(px, "tokenizer"),
                            "model.vocab is required with tokenizer '%s' (its size is not known from the name)",
                            c->tokenizer);
        m->vocab = tv;
    } else if (tv && m->vocab < tv) {
        return tlm_cfg_errf(e, NODE(px, "model.vocab"), "model.vocab: %d is smaller than tokenizer '%s' (%d ids)",
                        m->vocab, c->tokenizer, tv);
    }
    /* heads or d_model may come from the preset: the message points at the
     * one written, else at the scale that chose them */
    const tlm_cfg_node *shape_at = NODE(px, "model.heads") ? NODE(px, "model.heads") : NODE(px, "model.d_model");
    if (!shape_at)
        shape_at = NODE(px, "scale") ? NODE(px, "scale") : px->root;
    char from[96] = "";
    if (!GIVEN(px, "model.heads") || !GIVEN(px, "model.d_model"))
        snprintf(from, sizeof from, ", %s from scale %s",
                 GIVEN(px, "model.heads") ? "d_model" : GIVEN(px, "model.d_model") ? "heads" : "both", c->scale);
    if (m->d_model % m->heads)
        return tlm_cfg_errf(e, shape_at, "model.heads: %d does not divide d_model %d%s%s%s", m->heads, m->d_model, *from ? " (" : "", from + (*from ? 2 : 0), *from ? ")" : "");
    if ((m->d_model / m->heads) % 2)
        return tlm_cfg_errf(e, shape_at, "model.heads: head size %d must be even for RoPE (d_model %d / %d heads%s)",
                        m->d_model / m->heads, m->d_model, m->heads, from);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return tlm_cfg_errf(e, NODE(px, "model.kv_heads"), "model.kv_heads: %d must divide heads (%d)", m->kv_heads,
                        m->heads);
    /* like model.hope and model.titans: a key of another architecture is
     * a mistake (the canonical form would drop it without a word) */
    if (GIVEN(px, "model.gate") && c->arch != ENG_ARCH_GATED_ATTN)
        return tlm_cfg_errf(e, NODE(px, "model.gate"), "model.gate: only used with arch gated_attn (arch is %s)",
                        eng_arch_name(c->arch));
    if (c->arch == ENG_ARCH_GATED_ATTN && m->gate == ENG_GATE_HEADWISE && m->heads < 1)
        return tlm_cfg_errf(e, NODE(px, "model.gate"), "model.gate: headwise needs heads");
    return 0;
}

/* taper: the keys of the schedule chosen, and widths it can honour. */
static int resolve_taper(parse_ctx *px, tlm_err *e)
{
    eng_config *c = px->cfg;
    if (c->taper.schedule == ENG_TAPER_BLOCKS && !GIVEN(px, "taper.groups"))
        return tlm_cfg_errf(e, NODE(px, "taper.schedule"),
                        "taper.groups is required with schedule blocks (e.g. [1.5, 1.0, 0.5] for wider-early)");
    if (c->taper.schedule != ENG_TAPER_BLOCKS && GIVEN(px, "taper.groups"))
        return tlm_cfg_errf(e, NODE(px, "taper.groups"), "taper.groups: only used with schedule blocks (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    if (c->taper.schedule != ENG_TAPER_SIGMOID && GIVEN(px, "taper.k"))
        return tlm_cfg_errf(e, NODE(px, "taper.k"), "taper.k: only used with schedule sigmoid (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    if (!rel_ratio(c) && GIVEN(px, "taper.ratio"))
        return tlm_cfg_errf(e, NODE(px, "taper.ratio"),
                        "taper.ratio: only used with linear, cosine and sigmoid (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    int widths[ENG_MAX_LAYERS];
    tlm_err te;
    if (eng_taper_widths(c, widths, &te)) {
        const tlm_cfg_node *at = NODE(px, "taper.ratio");
        if (!at)
            at = NODE(px, "taper.groups");
        if (!at)
            at = NODE(px, "taper.schedule");
        if (!at)
            at = px->root;
        return tlm_cfg_errf(e, at, "%s", te.msg);
    }
    return 0;
}

/* hope_attn: levels and chunk sizes (docs/hope.md), and a level split that
 * every layer's width allows; the keys are refused for other architectures. */
static int resolve_hope(parse_ctx *px, tlm_err *e)
{
    eng_model_cfg *m = &px->cfg->model;
    const tlm_cfg_node *chunks = NODE(px, "model.hope.chunks"), *levels = NODE(px, "model.hope.levels");
    if (px->cfg->arch != ENG_ARCH_HOPE_ATTN) {
        if (levels || chunks)
            return tlm_cfg_errf(e, levels ? levels : chunks, "model.hope: only used with arch hope_attn (arch is %s)",
                            eng_arch_name(px->cfg->arch));
        return 0;
    }
    if (!GIVEN(px, "model.hope.levels") && GIVEN(px, "model.hope.chunks"))
        m->hope_levels = m->n_hope_chunks;
    if (!GIVEN(px, "model.hope.chunks")) {
        for (int i = 0; i < m->hope_levels; i++)
            m->hope_chunks[i] = pow(4.0, i);
        m->n_hope_chunks = m->hope_levels;
    } else if (m->n_hope_chunks != m->hope_levels) {
        return tlm_cfg_errf(e, chunks, "model.hope.chunks: %d chunk sizes for %d levels (model.hope.levels)",
                        m->n_hope_chunks, m->hope_levels);
    }
    for (int i = 0; i < m->n_hope_chunks; i++)
        if (m->hope_chunks[i] != floor(m->hope_chunks[i]))
            return tlm_cfg_errf(e, chunks && (size_t)i < chunks->n ? chunks->items[i] : chunks,
                            "model.hope.chunks: %g is not a whole number of optimizer steps", m->hope_chunks[i]);
    int widths[ENG_MAX_LAYERS], lw[ENG_HOPE_MAX_LEVELS];
    tlm_err te;
    if (eng_taper_widths(px->cfg, widths, &te))
        return tlm_cfg_errf(e, px->root, "%s", te.msg);
    for (int l = 0; l < m->layers; l++)
        if (eng_hope_split(widths[l], m->hope_levels, px->cfg->taper.multiple, lw, &te)) {
            const tlm_cfg_node *at = levels ? levels : NODE(px, "taper.multiple");
            if (!at)
                at = NODE(px, "model.d_ff") ? NODE(px, "model.d_ff") : NODE(px, "arch");
            return tlm_cfg_errf(e, at ? at : px->root, "model.hope.levels: layer %d (d_ff %d): %s", l, widths[l],
                            te.msg + (strncmp(te.msg, "hope: ", 6) ? 0 : 6));
        }
    return 0;
}

/* titans: the memory's hidden width, and the model.titans keys refused for
 * other architectures (docs/titans.md). */
static int resolve_titans(parse_ctx *px, tlm_err *e)
{
    eng_config *c = px->cfg;
    eng_model_cfg *m = &c->model;
    if (c->arch != ENG_ARCH_TITANS) {
        for (size_t i = 0; i < NFIELDS; i++)
            if (px->given[i] && in_section(&FIELDS[i], "model.titans."))
                return tlm_cfg_errf(e, px->node[i], "%s: only used with arch titans (arch is %s)", FIELDS[i].key,
                                eng_arch_name(c->arch));
        return 0;
    }
    if (m->titans_mem_depth != 2 && GIVEN(px, "model.titans.mem_hidden"))
        return tlm_cfg_errf(e, NODE(px, "model.titans.mem_hidden"),
                        "model.titans.mem_hidden: only used with mem_depth 2 (mem_depth is %d)", m->titans_mem_depth);
    if (!GIVEN(px, "model.titans.mem_hidden"))
        m->titans_mem_hidden = m->titans_mem_depth == 2 ? 2 * (m->d_model / m->heads) : 0;
    return 0;
}

/* train: the budgets without a preset, the micro-batch, and a schedule
 * that fits the budget. */
static int resolve_train(parse_ctx *px, const eng_preset *p, tlm_err *e)
{
    eng_config *c = px->cfg;
    eng_train_cfg *t = &c->train;
    const tlm_cfg_node *root = px->root;
    if (!p) {
        if (!GIVEN(px, "train.batch_tokens"))
            t->batch_tokens = 16 * (int64_t)t->seq_len;
        if (!GIVEN(px, "train.tokens"))
            return tlm_cfg_errf(e, root, "train.tokens is required when no scale preset is named");
        if (!GIVEN(px, "train.warmup_tokens"))
            t->warmup_tokens = t->tokens / 20;
        if (!GIVEN(px, "eval.every_tokens"))
            c->eval.every_tokens = t->tokens / 10;
        if (!GIVEN(px, "eval.val_tokens"))
            c->eval.val_tokens = 32 * (int64_t)t->seq_len;
    }
    if (!GIVEN(px, "train.ckpt_every_tokens"))
        t->ckpt_every_tokens = c->eval.every_tokens;
    if (!GIVEN(px, "eval.niah.lengths")) {
        c->eval.niah_lengths[0] = t->seq_len;
        c->eval.n_niah_lengths = 1;
    }
    if (t->batch_tokens % t->seq_len)
        return tlm_cfg_errf(e, NODE(px, "train.batch_tokens") ? NODE(px, "train.batch_tokens") : root,
                        "train.batch_tokens: %" PRId64 " is not a multiple of seq_len %d", t->batch_tokens,
                        t->seq_len);
    int64_t seqs = t->batch_tokens / t->seq_len;
    if (!GIVEN(px, "train.micro_batch") || t->micro_batch == 0) {
        /* largest divisor of the batch that keeps one pass at <= 64K tokens */
        int64_t best = 1;
        for (int64_t d = 1; d <= seqs && d * t->seq_len <= 65536; d++)
            if (seqs % d == 0)
                best = d;
        t->micro_batch = (int)best;
    } else if (seqs % t->micro_batch) {
        return tlm_cfg_errf(e, NODE(px, "train.micro_batch"),
                        "train.micro_batch: %d does not divide the %" PRId64 " sequences of a batch", t->micro_batch,
                        seqs);
    }
    if (t->tokens < t->batch_tokens)
        return tlm_cfg_errf(e, NODE(px, "train.tokens") ? NODE(px, "train.tokens") : root,
                        "train.tokens: %" PRId64 " is less than one batch (%" PRId64 ")", t->tokens, t->batch_tokens);
    /* a warm-up the preset gave: said at the budget the user wrote, with the
     * key to set, not at a line of the preset the user never wrote */
    if (t->warmup_tokens > t->tokens && !GIVEN(px, "train.warmup_tokens") && p)
        return tlm_cfg_errf(e, NODE(px, "train.tokens") ? NODE(px, "train.tokens") : root,
                            "train.tokens: %" PRId64 " is less than the warm-up of preset '%s' (%" PRId64
                            " tokens, its train.warmup_tokens); set train.warmup_tokens too (say %" PRId64
                            ", a twentieth of train.tokens), or train more tokens",
                            t->tokens, p->name, t->warmup_tokens, t->tokens / 20);
    if (t->warmup_tokens > t->tokens)
        return tlm_cfg_errf(e, NODE(px, "train.warmup_tokens") ? NODE(px, "train.warmup_tokens") : root,
                        "train.warmup_tokens: %" PRId64 " exceeds train.tokens %" PRId64, t->warmup_tokens, t->tokens);
    if (t->beta2 < t->beta1 && GIVEN(px, "train.beta2"))
        return tlm_cfg_errf(e, NODE(px, "train.beta2"), "train.beta2: %g is below beta1 %g", t->beta2, t->beta1);
    return 0;
}

/* Every name of a list key is one its row allows (the suites and tasks
 * of engine/config/suites.h). */
static int check_names(parse_ctx *px, const char *key, const char *what, tlm_err *e)
{
    const field *f = field_find(key);
    const char *v = (const char *)px->cfg + f->off;
    int n = *(const int *)((const char *)px->cfg + f->count_off);
    for (int i = 0; i < n; i++, v += f->cap2)
        if (eng_name_find(f->names, f->n_names, v) < 0) {
            const tlm_cfg_node *at = px->node[f - FIELDS];
            char list[256];
            return tlm_cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at, "%s: unknown %s '%s' (expected %s)", key,
                            what, v, eng_names_join(f->names, f->n_names, list, sizeof list));
        }
    return 0;
}

/* eval: the suites and tasks by name, NIAH lengths in whole tokens. */
static int resolve_eval(parse_ctx *px, tlm_err *e)
{
    const eng_eval_cfg *v = &px->cfg->eval;
    int rc = check_names(px, "eval.suites", "suite", e);
    if (!rc)
        rc = check_names(px, "eval.commonsense_tasks", "task", e);
    if (!rc)
        rc = check_names(px, "eval.niah.tasks", "task", e);
    for (int i = 0; i < v->n_niah_lengths && !rc; i++)
        if (v->niah_lengths[i] != floor(v->niah_lengths[i])) {
            const tlm_cfg_node *at = NODE(px, "eval.niah.lengths");
            return tlm_cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at,
                            "eval.niah.lengths: %g is not a whole number of tokens", v->niah_lengths[i]);
        }
    return rc;
}

/* The given values, then the preset's and the rows' defaults, then what
 * derives from them, section by section; each section checks its keys
 * together (in this order, which decides which error a config with
 * several gets). */
static int resolve(parse_ctx *px, tlm_err *e)
{
    const eng_preset *p;
    int rc = resolve_scale(px, &p, e);
    if (rc)
        return rc;
    apply_defaults(px, p);
    rc = resolve_model(px, e);
    if (!rc)
        rc = resolve_taper(px, e);
    if (!rc)
        rc = resolve_hope(px, e);
    if (!rc)
        rc = resolve_titans(px, e);
    if (!rc)
        rc = resolve_train(px, p, e);
    if (!rc)
        rc = resolve_eval(px, e);
    return rc;
}

int eng_config_from_tree(const tlm_cfg_node *root, eng_config *cfg, tlm_err *e)
{
    parse_ctx *px = calloc(1, sizeof *px);
    if (!px)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    memset(cfg, 0, sizeof *cfg);
    px->cfg = cfg;
    px->root = root;
    int rc = tlm_cfg_check_paths_unique(root, e);
    if (!rc)
        rc = walk(px, root, "", e);
    if (!rc)
        rc = resolve(px, e);
    free(px);
    return rc;
}

int eng_config_load(const char *path, eng_config *cfg, tlm_err *e)
{
    tlm_cfg_node *root;
    int rc = tlm_cfg_parse_file(path, &root, e);
    if (rc)
        return rc;
    rc = eng_config_from_tree(root, cfg, e);
    tlm_cfg_free(root);
    return rc;
}

int eng_config_from_text(const char *name, const char *text, size_t len, eng_config *cfg, tlm_err *e)
{
    tlm_cfg_node *root;
    int rc = tlm_cfg_parse_buffer(name, text, len, &root, e);
    if (rc)
        return rc;
    rc = eng_config_from_tree(root, cfg, e);
    tlm_cfg_free(root);
    return rc;
}

int eng_config_from_json(const char *json, eng_config *cfg, tlm_err *e)
{
    return eng_config_from_text("<stored config>", json, strlen(json), cfg, e);
}

/* ------------------------------------------------------------ serialisation */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (TLM_GROW(b->p, b->cap, b->n + n + 1, 1024)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_sink(void *b, const char *s, size_t n) { sb_put(b, s, n); }

/* policy 0: the canonical form is hashed into the job's key, so its
 * escape must never change (common/json.h) */
static void sb_json_string(sbuf *b, const char *s) { tlm_json_escape(s, TLM_JSON_QUOTE, sb_sink, b); }

static void sb_number(sbuf *b, double v)
{
    char s[TLM_NUMBER_TEXT];
    tlm_fmt_exact(s, sizeof s, v); /* the canonical form's numbers: shortest, exact */
    sb_str(b, s);
}

static void emit_value(sbuf *b, const eng_config *c, const field *f)
{
    const char *base = (const char *)c;
    const void *p = base + f->off;
    char s[32];
    switch (f->type) {
    case F_INT:
        snprintf(s, sizeof s, "%d", *(const int *)p);
        sb_str(b, s);
        break;
    case F_I64:
        snprintf(s, sizeof s, "%" PRId64, *(const int64_t *)p);
        sb_str(b, s);
        break;
    case F_DOUBLE:
        sb_number(b, *(const double *)p);
        break;
    case F_BOOL:
        sb_str(b, *(const int *)p ? "true" : "false");
        break;
    case F_STR:
        sb_json_string(b, (const char *)p);
        break;
    case F_ENUM:
        sb_json_string(b, f->names[*(const int *)p]);
        break;
    case F_PAIR:
    case F_DLIST: {
        int n = f->type == F_PAIR ? 2 : *(const int *)(base + f->count_off);
        sb_put(b, "[", 1);
        for (int i = 0; i < n; i++) {
            if (i)
                sb_put(b, ",", 1);
            sb_number(b, ((const double *)p)[i]);
        }
        sb_put(b, "]", 1);
        break;
    }
    case F_SLIST: {
        int n = *(const int *)(base + f->count_off);
        sb_put(b, "[", 1);
        for (int i = 0; i < n; i++) {
            if (i)
                sb_put(b, ",", 1);
            sb_json_string(b, (const char *)p + (size_t)i * f->cap2);
        }
        sb_put(b, "]", 1);
        break;
    }
    }
}

static int cmp_field(const void *a, const void *b)
{
    return strcmp((*(const field *const *)a)->key, (*(const field *const *)b)->key);
}

/* Nested JSON object from the sorted dotted keys. */
static char *serialise(const eng_config *c, int identity)
{
    const field *order[NFIELDS];
    size_t n = 0;
    for (size_t i = 0; i < NFIELDS; i++) {
        const field *f = &FIELDS[i];
        if (identity && (f->flags & FLAG_EXEC))
            continue;
        /* train.precision: auto hashes as configs written before the key;
         * fp32 or bf16 in words is another job (the numbers differ) */
        if (identity && (f->flags & FLAG_LATER) && *(const int *)((const char *)c + f->off) == (int)f->def)
            continue;
        if (f->relevant && !f->relevant(c))
            continue;
        order[n++] = f;
    }
    qsort(order, n, sizeof order[0], cmp_field);

    sbuf b = {0};
    sb_put(&b, "{", 1);
    char open[8][ENG_NAME_MAX]; /* currently open sections */
    int depth = 0, first = 1;
    for (size_t i = 0; i < n; i++) {
        char segs[8][ENG_NAME_MAX];
        int ns = 0;
        const char *k = order[i]->key;
        while (ns < 8) {
            const char *dot = strchr(k, '.');
            size_t len = dot ? (size_t)(dot - k) : strlen(k);
            snprintf(segs[ns++], ENG_NAME_MAX, "%.*s", (int)len, k);
            if (!dot)
                break;
            k = dot + 1;
        }
        int common = 0;
        while (common < depth && common < ns - 1 && !strcmp(open[common], segs[common]))
            common++;
        for (; depth > common; depth--)
            sb_put(&b, "}", 1);
        for (; depth < ns - 1; depth++) {
            if (!first)
                sb_put(&b, ",", 1);
            sb_json_string(&b, segs[depth]);
            sb_put(&b, ":{", 2);
            strcpy(open[depth], segs[depth]);
            first = 1;
        }
        if (!first)
            sb_put(&b, ",", 1);
        sb_json_string(&b, segs[ns - 1]);
        sb_put(&b, ":", 1);
        emit_value(&b, c, order[i]);
        first = 0;
    }
    for (; depth > 0; depth--)
        sb_put(&b, "}", 1);
    sb_put(&b, "}", 1);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

char *eng_config_canonical(const eng_config *cfg) { return serialise(cfg, 1); }
char *eng_config_json(const eng_config *cfg) { return serialise(cfg, 0); }

void eng_config_id(const eng_config *cfg, char hex[65])
{
    char *s = eng_config_canonical(cfg);
    if (!s) {
        hex[0] = '\0';
        return;
    }
    tlm_sha256_hex(s, strlen(s), hex);
    free(s);
}

/* ------------------------------------------------------------ key list */
static const char *type_name(int type)
{
    switch (type) {
    case F_INT:
    case F_I64: return "integer";
    case F_DOUBLE: return "number";
    case F_BOOL: return "true|false";
    case F_STR: return "string";
    case F_ENUM: return "name";
    case F_DLIST: return "list of numbers";
    case F_SLIST: return "list of names";
    case F_PAIR: return "[start, end]";
    }
    return "?";
}

/* The row's own default as the config would write it: 0.002, "", [val]. */
static void row_default_text(const field *f, char *out, size_t cap)
{
    char num[TLM_NUMBER_TEXT];
    size_t n = 0;
    switch (f->type) {
    case F_INT:
    case F_I64:
    case F_DOUBLE:
        tlm_fmt_exact(num, sizeof num, f->def);
        tlm_msg_copy(out, cap, num);
        return;
    case F_BOOL: tlm_msg_copy(out, cap, f->def ? "true" : "false"); return;
    case F_ENUM: tlm_msg_copy(out, cap, f->names[(int)f->def]); return;
    case F_STR: tlm_msg_copy(out, cap, f->def_str && f->def_str[0] ? f->def_str : "\"\""); return;
    case F_PAIR:
    case F_DLIST:
        tlm_msg_copy(out, cap, "[");
        for (int i = 0; i < f->n_def_nums && (n = strlen(out)) < cap; i++) {
            tlm_fmt_exact(num, sizeof num, f->def_nums[i]);
            tlm_msg_printf(out + n, cap - n, "%s%s", i ? ", " : "", num);
        }
        break;
    case F_SLIST:
        tlm_msg_copy(out, cap, "[");
        for (int i = 0; i < f->n_def_names && (n = strlen(out)) < cap; i++)
            tlm_msg_printf(out + n, cap - n, "%s%s", i ? ", " : "", f->def_names[i]);
        break;
    }
    n = strlen(out);
    tlm_msg_copy(out + n, cap - n, "]");
}

int eng_config_key_at(size_t i, eng_config_key *k)
{
    if (i >= NFIELDS)
        return -1;
    const field *f = &FIELDS[i];
    memset(k, 0, sizeof *k);
    k->key = f->key;
    k->type = type_name(f->type);
    k->help = f->help;
    k->identity = !(f->flags & FLAG_EXEC);
    k->computed = f->derived != NULL;
    if (f->derived) {
        tlm_msg_copy(k->def, sizeof k->def, f->derived);
    } else {
        char v[sizeof k->def];
        row_default_text(f, v, sizeof v);
        tlm_msg_printf(k->def, sizeof k->def, "%s%s", f->preset_off ? "preset, else " : "", v);
    }
    if (f->names)
        eng_names_join(f->names, f->n_names, k->choices, sizeof k->choices);
    for (size_t c = 0; f->choice && f->choice(c); c++) {
        size_t n = strlen(k->choices);
        tlm_msg_printf(k->choices + n, sizeof k->choices - n, "%s%s", c ? ", " : "", f->choice(c));
    }
    return 0;
}

void eng_config_print_keys(FILE *f)
{
    eng_config_key k;
    for (size_t i = 0; eng_config_key_at(i, &k) == 0; i++)
        fprintf(f, "  %-26s %-16s %s%s%s%s (default: %s)%s\n", k.key, k.type, k.help,
                k.choices[0] ? (strcmp(k.type, "list of names") ? " (one of: " : " (any of: ") : "", k.choices,
                k.choices[0] ? ")" : "", k.def, k.identity ? "" : " (not part of the job's identity)");
}
