/* config.c: job configuration, driven by one field table.
 *
 * Every accepted key is a row of FIELDS: its dotted name, type, range, and
 * whether it belongs to the job's identity.  Parsing walks the tree against
 * the table (so unknown keys are caught with a suggestion), resolution fills
 * what was not given from the scale preset and the global defaults, and both
 * serialisations walk the table in sorted order.  Adding a key means adding a
 * row, a default in resolve(), and a line in docs/config.md. */
#include "engine/config/config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/arch.h"
#include "engine/config/presets.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/config/taper.h"

/* ------------------------------------------------------------ names */
static const char *const ARCH_NAMES[] = {"transformer", "gated_attn", "hope_attn", "titans"};
static const char *const SCHEDULE_NAMES[] = {"uniform", "linear", "cosine", "sigmoid", "blocks"};
static const char *const GATE_NAMES[] = {"elementwise", "headwise"};
static const char *const TITANS_VARIANTS[] = {"mag", "mal"};
#define NAMES(a) a, (int)(sizeof a / sizeof a[0])

const char *eng_arch_name(int arch)
{
    return arch >= 0 && arch < ENG_ARCH_COUNT ? ARCH_NAMES[arch] : "?";
}

const char *eng_schedule_name(int s)
{
    return s >= 0 && s < ENG_TAPER_COUNT ? SCHEDULE_NAMES[s] : "?";
}

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
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
enum { FLAG_EXEC = 1 }; /* execution setting: not part of the job's identity */

typedef struct field {
    const char *key;
    int type;
    size_t off;
    size_t cap;       /* F_STR bytes; F_DLIST/F_SLIST max entries; F_SLIST entry size in cap2 */
    size_t cap2;
    size_t count_off; /* lists: offset of the int count */
    double lo, hi;    /* inclusive range; lo_open makes lo exclusive */
    int lo_open;
    const char *const *names;
    int n_names;
    int flags;
    int (*relevant)(const eng_config *c);
    const char *help;
} field;

#define OFF(m) offsetof(eng_config, m)
#define BIG 9.0e18

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
static int has_suite(const eng_config *c, const char *name)
{
    for (int i = 0; i < c->eval.n_suites; i++)
        if (!strcmp(c->eval.suites[i], name))
            return 1;
    return 0;
}
static int rel_wikitext(const eng_config *c) { return has_suite(c, "wikitext"); }
static int rel_lambada(const eng_config *c) { return has_suite(c, "lambada"); }
static int rel_commonsense(const eng_config *c) { return has_suite(c, "commonsense"); }
static int rel_niah(const eng_config *c) { return has_suite(c, "niah"); }
static int rel_alignment(const eng_config *c) { return has_suite(c, "alignment"); }
static int rel_eval_batch(const eng_config *c) { return c->eval.n_suites > has_suite(c, "val"); }
static const char *const COMMONSENSE_TASKS[] = {"piqa", "hellaswag", "winogrande", "arc_easy",
                                                "arc_challenge", "siqa", "boolq", "openbookqa"};
static const char *const NIAH_TASKS[] = {"s_niah_1", "s_niah_2", "s_niah_3"};

static const field FIELDS[] = {
    {"arch", F_ENUM, OFF(arch), 0, 0, 0, 0, 0, 0, NAMES(ARCH_NAMES), 0, NULL, "token mixer"},
    {"data.train", F_STR, OFF(data.train), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, 0, NULL,
     "training shards: a .tlmtok file or a folder of them"},
    {"data.val", F_STR, OFF(data.val), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, 0, NULL,
     "validation shards (empty: split from data.train)"},
    {"data.val_fraction", F_DOUBLE, OFF(data.val_fraction), 0, 0, 0, 0, 0.5, 1, NULL, 0, 0, rel_val_fraction,
     "share of data.train held out for validation when data.val is empty"},
    {"eval.alignment.ids", F_STR, OFF(eval.alignment_ids), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC,
     rel_alignment, "alignment: token ids (whitespace-separated) instead of eval.alignment.text"},
    {"eval.alignment.text", F_STR, OFF(eval.alignment_text), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC,
     rel_alignment, "alignment: text file whose first eval.alignment.tokens tokens are analysed"},
    {"eval.alignment.tokens", F_I64, OFF(eval.alignment_tokens), 0, 0, 0, 1, 1 << 24, 0, NULL, 0, FLAG_EXEC,
     rel_alignment, "alignment: tokens averaged over (the paper: 2048)"},
    {"eval.batch", F_INT, OFF(eval.batch), 0, 0, 0, 0, 4096, 0, NULL, 0, FLAG_EXEC, rel_eval_batch,
     "evaluation suites: sequences per forward pass (0: automatic)"},
    {"eval.commonsense", F_STR, OFF(eval.commonsense), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC,
     rel_commonsense, "commonsense: folder of the task files (piqa.jsonl, hellaswag.jsonl, ...)"},
    {"eval.commonsense_tasks", F_SLIST, OFF(eval.commonsense_tasks), ENG_MAX_SUITES, ENG_NAME_MAX,
     OFF(eval.n_commonsense_tasks), 0, 0, 0, NULL, 0, FLAG_EXEC, rel_commonsense,
     "commonsense: tasks to run (default all: piqa, hellaswag, winogrande, arc_easy, arc_challenge, siqa, boolq, "
     "openbookqa)"},
    {"eval.every_tokens", F_I64, OFF(eval.every_tokens), 0, 0, 0, 0, BIG, 0, NULL, 0, 0, NULL,
     "evaluate every this many training tokens (0: only at the end)"},
    {"eval.lambada", F_STR, OFF(eval.lambada), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC, rel_lambada,
     "lambada: LAMBADA (OpenAI) JSONL file"},
    {"eval.niah.haystack", F_STR, OFF(eval.niah_haystack), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC,
     rel_niah, "niah: text file the S-NIAH-2/3 haystacks are cut from"},
    {"eval.niah.lengths", F_DLIST, OFF(eval.niah_lengths), ENG_MAX_SUITES, 0, OFF(eval.n_niah_lengths), 16,
     1 << 24, 0, NULL, 0, FLAG_EXEC, rel_niah, "niah: context lengths in tokens (default [train.seq_len])"},
    {"eval.niah.n", F_INT, OFF(eval.niah_n), 0, 0, 0, 1, 100000, 0, NULL, 0, FLAG_EXEC, rel_niah,
     "niah: items per task and length"},
    {"eval.niah.seed", F_I64, OFF(eval.niah_seed), 0, 0, 0, 0, (double)ENG_SEED_MAX, 0, NULL, 0, FLAG_EXEC, rel_niah,
     "niah: seed of the generated items (same seed, same prompts)"},
    {"eval.niah.tasks", F_SLIST, OFF(eval.niah_tasks), ENG_MAX_SUITES, ENG_NAME_MAX, OFF(eval.n_niah_tasks), 0, 0,
     0, NULL, 0, FLAG_EXEC, rel_niah, "niah: tasks (default s_niah_1, s_niah_2, s_niah_3)"},
    {"eval.suites", F_SLIST, OFF(eval.suites), ENG_MAX_SUITES, ENG_NAME_MAX, OFF(eval.n_suites), 0, 0, 0, NULL,
     0, 0, NULL, "evaluation suites: val, wikitext, lambada, commonsense, niah, alignment"},
    {"eval.val_tokens", F_I64, OFF(eval.val_tokens), 0, 0, 0, 1, BIG, 0, NULL, 0, 0, NULL,
     "validation tokens scored per evaluation"},
    {"eval.wikitext", F_STR, OFF(eval.wikitext), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, FLAG_EXEC, rel_wikitext,
     "wikitext: raw WikiText file (wiki.test.raw of wikitext-2-raw-v1)"},
    {"model.d_ff", F_INT, OFF(model.d_ff), 0, 0, 0, 1, 1 << 20, 0, NULL, 0, 0, NULL,
     "uniform MLP width d_base (the taper redistributes it)"},
    {"model.d_model", F_INT, OFF(model.d_model), 0, 0, 0, 1, 1 << 16, 0, NULL, 0, 0, NULL, "residual width"},
    {"model.gate", F_ENUM, OFF(model.gate), 0, 0, 0, 0, 0, 0, NAMES(GATE_NAMES), 0, rel_gate,
     "gated_attn: one gate per channel (elementwise) or per head (headwise)"},
    {"model.hope.chunks", F_DLIST, OFF(model.hope_chunks), ENG_HOPE_MAX_LEVELS, 0, OFF(model.n_hope_chunks), 1,
     1e6, 0, NULL, 0, 0, rel_hope,
     "hope_attn: optimizer steps between updates of each CMS level, fastest first (default 1, 4, 16, ...: 4^i)"},
    {"model.hope.levels", F_INT, OFF(model.hope_levels), 0, 0, 0, 1, ENG_HOPE_MAX_LEVELS, 0, NULL, 0, 0, rel_hope,
     "hope_attn: MLP levels per layer; their widths split the layer's d_ff (default 3)"},
    {"model.heads", F_INT, OFF(model.heads), 0, 0, 0, 1, 4096, 0, NULL, 0, 0, NULL, "attention heads"},
    {"model.init_std", F_DOUBLE, OFF(model.init_std), 0, 0, 0, 0, 1, 1, NULL, 0, 0, NULL,
     "standard deviation of the weight initialisation"},
    {"model.kv_heads", F_INT, OFF(model.kv_heads), 0, 0, 0, 1, 4096, 0, NULL, 0, 0, NULL,
     "key/value heads (fewer than heads: grouped-query attention)"},
    {"model.layers", F_INT, OFF(model.layers), 0, 0, 0, 1, ENG_MAX_LAYERS, 0, NULL, 0, 0, NULL, "blocks"},
    {"model.norm_eps", F_DOUBLE, OFF(model.norm_eps), 0, 0, 0, 0, 1, 1, NULL, 0, 0, NULL, "RMSNorm epsilon"},
    {"model.rope_theta", F_DOUBLE, OFF(model.rope_theta), 0, 0, 0, 1, 1e9, 0, NULL, 0, 0, NULL, "RoPE base"},
    {"model.tied", F_BOOL, OFF(model.tied), 0, 0, 0, 0, 0, 0, NULL, 0, 0, NULL,
     "share the embedding with the LM head"},
    {"model.titans.chunk", F_INT, OFF(model.titans_chunk), 0, 0, 0, 1, 512, 0, NULL, 0, 0, rel_titans,
     "titans: memory update chunk in tokens; a chunk's gradients are all taken at its start weights (default 16)"},
    {"model.titans.max_lr", F_DOUBLE, OFF(model.titans_max_lr), 0, 0, 0, 0, 100, 1, NULL, 0, 0, rel_titans,
     "titans: the memory's learning rate is max_lr * sigmoid(x w + b) per token and head (default 0.01)"},
    {"model.titans.mem_depth", F_INT, OFF(model.titans_mem_depth), 0, 0, 0, 1, 2, 0, NULL, 0, 0, rel_titans,
     "titans: memory MLP depth, 1 (linear) or 2 (default)"},
    {"model.titans.mem_hidden", F_INT, OFF(model.titans_mem_hidden), 0, 0, 0, 1, 1 << 16, 0, NULL, 0, 0,
     rel_titans_hidden, "titans: hidden width of the depth-2 memory (default 2 x head size)"},
    {"model.titans.persistent", F_INT, OFF(model.titans_persistent), 0, 0, 0, 0, 1024, 0, NULL, 0, 0, rel_titans,
     "titans: persistent memory entries per layer, attended by every query (default 4)"},
    {"model.titans.variant", F_ENUM, OFF(model.titans_variant), 0, 0, 0, 0, 0, 0, NAMES(TITANS_VARIANTS), 0,
     rel_titans, "titans: mag (memory as a gate, default) or mal (memory as a layer)"},
    {"model.titans.window", F_INT, OFF(model.titans_window), 0, 0, 0, 1, 1 << 24, 0, NULL, 0, 0, rel_titans,
     "titans: sliding-window attention width, the query included (default 512)"},
    {"model.vocab", F_INT, OFF(model.vocab), 0, 0, 0, 2, 1 << 24, 0, NULL, 0, 0, NULL,
     "embedding rows (default: the tokenizer's vocabulary)"},
    {"scale", F_STR, OFF(scale), ENG_NAME_MAX, 0, 0, 0, 0, 0, NULL, 0, 0, NULL,
     "preset: 1m, 3m, 5m, 10m, 20m, 440m, 760m, 1.3b"},
    {"seed", F_I64, OFF(seed), 0, 0, 0, 0, (double)ENG_SEED_MAX, 0, NULL, 0, 0, NULL,
     "initialisation and data-order seed"},
    {"taper.groups", F_DLIST, OFF(taper.groups), ENG_MAX_GROUPS, 0, OFF(taper.n_groups), 0, 100, 1, NULL, 0, 0,
     rel_groups, "blocks: width multiplier per equal group of layers, e.g. [1.5, 1.0, 0.5]"},
    {"taper.k", F_DOUBLE, OFF(taper.k), 0, 0, 0, 0, 1000, 1, NULL, 0, 0, rel_k, "sigmoid steepness"},
    {"taper.multiple", F_INT, OFF(taper.multiple), 0, 0, 0, 1, 4096, 0, NULL, 0, 0, rel_multiple,
     "every width is a multiple of this"},
    {"taper.ratio", F_PAIR, OFF(taper.ratio), 2, 0, 0, 0, 100, 0, NULL, 0, 0, rel_ratio,
     "[start, end] as multiples of d_base, e.g. [1.5, 0.5]"},
    {"taper.schedule", F_ENUM, OFF(taper.schedule), 0, 0, 0, 0, 0, 0, NAMES(SCHEDULE_NAMES), 0, NULL,
     "MLP width across depth"},
    {"tokenizer", F_STR, OFF(tokenizer), ENG_PATH_MAX, 0, 0, 0, 0, 0, NULL, 0, 0, NULL,
     "bytes, llama3, llama2, bpeN (a trained BPE of N ids) or a tokenizer file"},
    {"train.adam_eps", F_DOUBLE, OFF(train.adam_eps), 0, 0, 0, 0, 1, 1, NULL, 0, 0, NULL, "AdamW epsilon"},
    {"train.batch_tokens", F_I64, OFF(train.batch_tokens), 0, 0, 0, 1, BIG, 0, NULL, 0, 0, NULL,
     "tokens per optimizer step"},
    {"train.beta1", F_DOUBLE, OFF(train.beta1), 0, 0, 0, 0, 0.999999, 0, NULL, 0, 0, NULL, "AdamW beta1"},
    {"train.beta2", F_DOUBLE, OFF(train.beta2), 0, 0, 0, 0, 0.999999, 0, NULL, 0, 0, NULL, "AdamW beta2"},
    {"train.ckpt_every_tokens", F_I64, OFF(train.ckpt_every_tokens), 0, 0, 0, 0, BIG, 0, NULL, 0, FLAG_EXEC, NULL,
     "checkpoint every this many tokens (0: at the end and on signals only)"},
    {"train.grad_clip", F_DOUBLE, OFF(train.grad_clip), 0, 0, 0, 0, 1e6, 0, NULL, 0, 0, NULL,
     "global gradient-norm clip (0: off)"},
    {"train.keep_checkpoints", F_INT, OFF(train.keep_checkpoints), 0, 0, 0, 1, 1000, 0, NULL, 0, FLAG_EXEC, NULL,
     "checkpoints kept on disk"},
    {"train.log_every", F_INT, OFF(train.log_every), 0, 0, 0, 1, 1 << 30, 0, NULL, 0, FLAG_EXEC, NULL,
     "steps between step events"},
    {"train.lr", F_DOUBLE, OFF(train.lr), 0, 0, 0, 0, 10, 1, NULL, 0, 0, NULL, "peak learning rate"},
    {"train.micro_batch", F_INT, OFF(train.micro_batch), 0, 0, 0, 0, 1 << 20, 0, NULL, 0, FLAG_EXEC, NULL,
     "sequences per forward pass (0: automatic); gradients accumulate to batch_tokens"},
    {"train.min_lr_ratio", F_DOUBLE, OFF(train.min_lr_ratio), 0, 0, 0, 0, 1, 0, NULL, 0, 0, NULL,
     "cosine schedule floor as a fraction of lr"},
    {"train.seq_len", F_INT, OFF(train.seq_len), 0, 0, 0, 2, 1 << 20, 0, NULL, 0, 0, NULL, "sequence length"},
    {"train.tokens", F_I64, OFF(train.tokens), 0, 0, 0, 1, BIG, 0, NULL, 0, 0, NULL, "training tokens"},
    {"train.warmup_tokens", F_I64, OFF(train.warmup_tokens), 0, 0, 0, 0, BIG, 0, NULL, 0, 0, NULL,
     "linear warm-up length in tokens"},
    {"train.weight_decay", F_DOUBLE, OFF(train.weight_decay), 0, 0, 0, 0, 10, 0, NULL, 0, 0, NULL,
     "decoupled weight decay (not applied to norms and gains)"},
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
static int unknown_key(const cfg_node *key, const char *prefix, eng_err *e)
{
    size_t np = strlen(prefix);
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
        size_t d = cfg_edit_distance(key->text, name);
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
        return cfg_errf(e, key, "unknown key '%s'%s; did you mean '%s'? (expected one of: %s)", key->text, where,
                        b, keys);
    }
    return cfg_errf(e, key, "unknown key '%s'%s (expected one of: %s)", key->text, where, keys);
}

/* ------------------------------------------------------------ parsing */
typedef struct parse_ctx {
    eng_config *cfg;
    unsigned char given[NFIELDS];
    const cfg_node *node[NFIELDS]; /* where each given field was written */
    const cfg_node *root;
} parse_ctx;

static int set_field(parse_ctx *px, const field *f, const cfg_node *v, eng_err *e)
{
    char *base = (char *)px->cfg;
    void *p = base + f->off;
    const char *what = f->key;
    switch (f->type) {
    case F_INT:
    case F_I64: {
        /* integral bounds: "more than 0" is "from 1" */
        int64_t x, lo = (int64_t)(f->lo_open ? floor(f->lo) + 1 : ceil(f->lo)), hi = (int64_t)floor(f->hi);
        if (cfg_get_int_in(v, what, lo, hi, &x, e))
            return ENG_ECONFIG;
        if (f->type == F_INT)
            *(int *)p = (int)x; /* every F_INT row's range lies within int */
        else
            *(int64_t *)p = x;
        break;
    }
    case F_DOUBLE:
        return cfg_get_double_in(v, what, f->lo, f->hi, f->lo_open, (double *)p, e);
    case F_BOOL:
        return cfg_get_bool(v, what, (int *)p, e);
    case F_STR:
        return cfg_get_string(v, what, (char *)p, f->cap, e);
    case F_ENUM: {
        char s[ENG_NAME_MAX];
        char list[256] = "";
        for (int i = 0; i < f->n_names; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? " | " : "", f->names[i]);
        }
        if (v->kind != CFG_SCALAR || cfg_is_null(v))
            return cfg_errf(e, v, "%s: expected one of %s, got %s", what, list, cfg_describe(v));
        if (cfg_get_string(v, what, s, sizeof s, e))
            return ENG_ECONFIG;
        int idx = name_index(f->names, f->n_names, s);
        if (idx < 0)
            return cfg_errf(e, v, "%s: '%s' is not one of %s", what, s, list);
        *(int *)p = idx;
        break;
    }
    case F_PAIR:
    case F_DLIST: {
        if (v->kind != CFG_SEQ)
            return cfg_errf(e, v, "%s: expected a list of numbers%s, got %s", what,
                            f->type == F_PAIR ? " [start, end]" : "", cfg_describe(v));
        if (f->type == F_PAIR && v->n != 2)
            return cfg_errf(e, v, "%s: expected exactly two numbers [start, end], got %zu", what, v->n);
        if (v->n == 0 || v->n > f->cap)
            return cfg_errf(e, v, "%s: expected 1 to %zu numbers, got %zu", what, f->cap, v->n);
        double *d = (double *)p;
        for (size_t i = 0; i < v->n; i++)
            if (cfg_get_double_in(v->items[i], what, f->lo, f->hi, f->lo_open, &d[i], e))
                return ENG_ECONFIG;
        if (f->type == F_DLIST)
            *(int *)(base + f->count_off) = (int)v->n;
        break;
    }
    case F_SLIST: {
        if (v->kind != CFG_SEQ)
            return cfg_errf(e, v, "%s: expected a list of names, got %s", what, cfg_describe(v));
        if (v->n > f->cap)
            return cfg_errf(e, v, "%s: at most %zu entries", what, f->cap);
        char *s = (char *)p;
        for (size_t i = 0; i < v->n; i++) {
            if (cfg_get_string(v->items[i], what, s + i * f->cap2, f->cap2, e))
                return ENG_ECONFIG;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(s + j * f->cap2, s + i * f->cap2))
                    return cfg_errf(e, v->items[i], "%s: '%s' is listed twice", what, s + i * f->cap2);
        }
        *(int *)(base + f->count_off) = (int)v->n;
        break;
    }
    }
    return 0;
}

static int walk(parse_ctx *px, const cfg_node *map, const char *prefix, eng_err *e)
{
    if (map->kind != CFG_MAP)
        return cfg_errf(e, map, "%s%sexpected a mapping of keys, got %s", prefix, *prefix ? ": " : "",
                        cfg_describe(map));
    for (size_t i = 0; i < map->n; i++) {
        const cfg_node *k = map->keys[i], *v = map->items[i];
        char path[ENG_NAME_MAX * 2];
        if ((size_t)snprintf(path, sizeof path, "%s%s", prefix, k->text) >= sizeof path)
            return cfg_errf(e, k, "key '%s' is too long", k->text);
        const field *f = field_find(path);
        if (f) {
            if (set_field(px, f, v, e))
                return ENG_ECONFIG;
            px->given[f - FIELDS] = 1;
            px->node[f - FIELDS] = v;
            continue;
        }
        char sub[ENG_NAME_MAX * 2 + 1];
        snprintf(sub, sizeof sub, "%s.", path);
        if (is_section(sub)) {
            if (v->kind != CFG_MAP)
                return cfg_errf(e, v, "%s: expected a mapping of keys, got %s", path, cfg_describe(v));
            if (walk(px, v, sub, e))
                return ENG_ECONFIG;
            continue;
        }
        return unknown_key(k, prefix, e);
    }
    return 0;
}

/* ------------------------------------------------------------ resolution */
#define GIVEN(px, key) (px->given[field_find(key) - FIELDS])
#define NODE(px, key) (px->node[field_find(key) - FIELDS])

/* titans: defaults of the model.titans keys, refused for other
 * architectures (docs/titans.md). */
static int resolve_titans(parse_ctx *px, eng_err *e)
{
    eng_config *c = px->cfg;
    eng_model_cfg *m = &c->model;
    static const char *const keys[] = {"model.titans.chunk",      "model.titans.max_lr",  "model.titans.mem_depth",
                                       "model.titans.mem_hidden", "model.titans.persistent", "model.titans.variant",
                                       "model.titans.window"};
    if (c->arch != ENG_ARCH_TITANS) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (GIVEN(px, keys[i]))
                return cfg_errf(e, NODE(px, keys[i]), "%s: only used with arch titans (arch is %s)", keys[i],
                                eng_arch_name(c->arch));
        return 0;
    }
    if (!GIVEN(px, "model.titans.variant"))
        m->titans_variant = ENG_TITANS_MAG;
    if (!GIVEN(px, "model.titans.window"))
        m->titans_window = 512;
    if (!GIVEN(px, "model.titans.persistent"))
        m->titans_persistent = 4;
    if (!GIVEN(px, "model.titans.chunk"))
        m->titans_chunk = 16;
    if (!GIVEN(px, "model.titans.mem_depth"))
        m->titans_mem_depth = 2;
    if (!GIVEN(px, "model.titans.max_lr"))
        m->titans_max_lr = 0.002;
    if (m->titans_mem_depth != 2 && GIVEN(px, "model.titans.mem_hidden"))
        return cfg_errf(e, NODE(px, "model.titans.mem_hidden"),
                        "model.titans.mem_hidden: only used with mem_depth 2 (mem_depth is %d)", m->titans_mem_depth);
    if (!GIVEN(px, "model.titans.mem_hidden"))
        m->titans_mem_hidden = m->titans_mem_depth == 2 ? 2 * (m->d_model / m->heads) : 0;
    return 0;
}

/* hope_attn: levels and chunk sizes (docs/hope.md), and a level split that
 * every layer's width allows. */
static int resolve_hope(parse_ctx *px, eng_err *e)
{
    eng_model_cfg *m = &px->cfg->model;
    const cfg_node *chunks = NODE(px, "model.hope.chunks"), *levels = NODE(px, "model.hope.levels");
    if (!GIVEN(px, "model.hope.levels"))
        m->hope_levels = GIVEN(px, "model.hope.chunks") ? m->n_hope_chunks : 3;
    if (!GIVEN(px, "model.hope.chunks")) {
        for (int i = 0; i < m->hope_levels; i++)
            m->hope_chunks[i] = pow(4.0, i);
        m->n_hope_chunks = m->hope_levels;
    } else if (m->n_hope_chunks != m->hope_levels) {
        return cfg_errf(e, chunks, "model.hope.chunks: %d chunk sizes for %d levels (model.hope.levels)",
                        m->n_hope_chunks, m->hope_levels);
    }
    for (int i = 0; i < m->n_hope_chunks; i++)
        if (m->hope_chunks[i] != floor(m->hope_chunks[i]))
            return cfg_errf(e, chunks && (size_t)i < chunks->n ? chunks->items[i] : chunks,
                            "model.hope.chunks: %g is not a whole number of optimizer steps", m->hope_chunks[i]);
    int widths[ENG_MAX_LAYERS], lw[ENG_HOPE_MAX_LEVELS];
    eng_err te;
    if (eng_taper_widths(px->cfg, widths, &te))
        return cfg_errf(e, px->root, "%s", te.msg);
    for (int l = 0; l < m->layers; l++)
        if (eng_hope_split(widths[l], m->hope_levels, px->cfg->taper.multiple, lw, &te)) {
            const cfg_node *at = levels ? levels : NODE(px, "taper.multiple");
            if (!at)
                at = NODE(px, "model.d_ff") ? NODE(px, "model.d_ff") : NODE(px, "arch");
            return cfg_errf(e, at ? at : px->root, "model.hope.levels: layer %d (d_ff %d): %s", l, widths[l],
                            te.msg + (strncmp(te.msg, "hope: ", 6) ? 0 : 6));
        }
    return 0;
}

static int resolve(parse_ctx *px, eng_err *e)
{
    eng_config *c = px->cfg;
    const cfg_node *root = px->root;
    const eng_preset *p = NULL;

    /* "custom" is what eng_config_json writes for a config without a preset:
     * it must read back (tlmd hands workers that JSON) */
    if (GIVEN(px, "scale") && strcmp(c->scale, "custom") != 0) {
        p = eng_preset_find(c->scale);
        if (!p) {
            char list[256] = "";
            for (size_t i = 0; eng_preset_at(i); i++) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", eng_preset_at(i)->name);
            }
            return cfg_errf(e, NODE(px, "scale"), "scale: unknown preset '%s' (expected one of: %s)", c->scale,
                            list);
        }
    } else {
        strcpy(c->scale, "custom");
        static const char *const need[] = {"model.d_model", "model.layers", "model.heads", "model.d_ff"};
        for (size_t i = 0; i < 4; i++)
            if (!GIVEN(px, need[i]))
                return cfg_errf(e, root, "%s is required when no scale preset is named (or set scale: 1m, 440m, ...)",
                                need[i]);
    }

#define DEF(key, lvalue, value)                                                                                \
    do {                                                                                                       \
        if (!GIVEN(px, key))                                                                                   \
            lvalue = (value);                                                                                  \
    } while (0)
    /* model */
    if (p) {
        DEF("model.d_model", c->model.d_model, p->d_model);
        DEF("model.layers", c->model.layers, p->layers);
        DEF("model.heads", c->model.heads, p->heads);
        DEF("model.d_ff", c->model.d_ff, p->d_ff);
        DEF("model.tied", c->model.tied, p->tied);
        if (!GIVEN(px, "model.kv_heads") && !GIVEN(px, "model.heads"))
            c->model.kv_heads = p->kv_heads;
        if (!GIVEN(px, "tokenizer"))
            snprintf(c->tokenizer, sizeof c->tokenizer, "%s", p->tokenizer);
    } else {
        DEF("model.tied", c->model.tied, 1);
        if (!GIVEN(px, "tokenizer"))
            strcpy(c->tokenizer, "bytes");
    }
    DEF("model.kv_heads", c->model.kv_heads, c->model.heads);
    DEF("model.norm_eps", c->model.norm_eps, 1e-5);
    DEF("model.rope_theta", c->model.rope_theta, 10000.0);
    DEF("model.init_std", c->model.init_std, 0.02);
    DEF("model.gate", c->model.gate, ENG_GATE_ELEMENTWISE);
    if (!c->tokenizer[0])
        return cfg_errf(e, NODE(px, "tokenizer"), "tokenizer: must not be empty");
    int tv = eng_tokenizer_vocab(c->tokenizer);
    if (!GIVEN(px, "model.vocab")) {
        if (!tv)
            return cfg_errf(e, NODE(px, "tokenizer"),
                            "model.vocab is required with tokenizer '%s' (its size is not known from the name)",
                            c->tokenizer);
        c->model.vocab = tv;
    } else if (tv && c->model.vocab < tv) {
        return cfg_errf(e, NODE(px, "model.vocab"), "model.vocab: %d is smaller than tokenizer '%s' (%d ids)",
                        c->model.vocab, c->tokenizer, tv);
    }
    const eng_model_cfg *m = &c->model;
    if (m->d_model % m->heads)
        return cfg_errf(e, GIVEN(px, "model.heads") ? NODE(px, "model.heads") : NODE(px, "model.d_model"),
                        "model.heads: %d does not divide d_model %d", m->heads, m->d_model);
    if ((m->d_model / m->heads) % 2)
        return cfg_errf(e, NODE(px, "model.heads"), "model.heads: head size %d must be even for RoPE",
                        m->d_model / m->heads);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return cfg_errf(e, NODE(px, "model.kv_heads"), "model.kv_heads: %d must divide heads (%d)", m->kv_heads,
                        m->heads);
    if (c->arch == ENG_ARCH_GATED_ATTN && m->gate == ENG_GATE_HEADWISE && m->heads < 1)
        return cfg_errf(e, NODE(px, "model.gate"), "model.gate: headwise needs heads");

    /* taper */
    DEF("taper.schedule", c->taper.schedule, ENG_TAPER_UNIFORM);
    if (!GIVEN(px, "taper.ratio")) {
        c->taper.ratio[0] = 1.5;
        c->taper.ratio[1] = 0.5;
    }
    DEF("taper.k", c->taper.k, 10.0);
    DEF("taper.multiple", c->taper.multiple, 16);
    if (c->taper.schedule == ENG_TAPER_BLOCKS && !GIVEN(px, "taper.groups"))
        return cfg_errf(e, NODE(px, "taper.schedule"),
                        "taper.groups is required with schedule blocks (e.g. [1.5, 1.0, 0.5] for wider-early)");
    if (c->taper.schedule != ENG_TAPER_BLOCKS && GIVEN(px, "taper.groups"))
        return cfg_errf(e, NODE(px, "taper.groups"), "taper.groups: only used with schedule blocks (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    if (c->taper.schedule != ENG_TAPER_SIGMOID && GIVEN(px, "taper.k"))
        return cfg_errf(e, NODE(px, "taper.k"), "taper.k: only used with schedule sigmoid (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    if (!rel_ratio(c) && GIVEN(px, "taper.ratio"))
        return cfg_errf(e, NODE(px, "taper.ratio"),
                        "taper.ratio: only used with linear, cosine and sigmoid (schedule is %s)",
                        eng_schedule_name(c->taper.schedule));
    {
        int widths[ENG_MAX_LAYERS];
        eng_err te;
        if (eng_taper_widths(c, widths, &te)) {
            const cfg_node *at = NODE(px, "taper.ratio");
            if (!at)
                at = NODE(px, "taper.groups");
            if (!at)
                at = NODE(px, "taper.schedule");
            if (!at)
                at = root;
            return cfg_errf(e, at, "%s", te.msg);
        }
    }
    if (c->arch == ENG_ARCH_HOPE_ATTN) {
        int rc = resolve_hope(px, e);
        if (rc)
            return rc;
    } else if (GIVEN(px, "model.hope.levels") || GIVEN(px, "model.hope.chunks")) {
        return cfg_errf(e, GIVEN(px, "model.hope.levels") ? NODE(px, "model.hope.levels") : NODE(px, "model.hope.chunks"),
                        "model.hope: only used with arch hope_attn (arch is %s)", eng_arch_name(c->arch));
    }
    {
        int rc = resolve_titans(px, e);
        if (rc)
            return rc;
    }

    /* train */
    if (p) {
        DEF("train.seq_len", c->train.seq_len, p->seq_len);
        DEF("train.batch_tokens", c->train.batch_tokens, p->batch_tokens);
        DEF("train.tokens", c->train.tokens, p->tokens);
        DEF("train.warmup_tokens", c->train.warmup_tokens, p->warmup_tokens);
        DEF("eval.every_tokens", c->eval.every_tokens, p->eval_every_tokens);
        DEF("eval.val_tokens", c->eval.val_tokens, p->val_tokens);
    } else {
        DEF("train.seq_len", c->train.seq_len, 256);
        DEF("train.batch_tokens", c->train.batch_tokens, 16 * (int64_t)c->train.seq_len);
        if (!GIVEN(px, "train.tokens"))
            return cfg_errf(e, root, "train.tokens is required when no scale preset is named");
        DEF("train.warmup_tokens", c->train.warmup_tokens, c->train.tokens / 20);
        DEF("eval.every_tokens", c->eval.every_tokens, c->train.tokens / 10);
        DEF("eval.val_tokens", c->eval.val_tokens, 32 * (int64_t)c->train.seq_len);
    }
    DEF("train.lr", c->train.lr, 4e-4);
    DEF("train.min_lr_ratio", c->train.min_lr_ratio, 0.1);
    DEF("train.weight_decay", c->train.weight_decay, 0.1);
    DEF("train.grad_clip", c->train.grad_clip, 1.0);
    DEF("train.beta1", c->train.beta1, 0.9);
    DEF("train.beta2", c->train.beta2, 0.95);
    DEF("train.adam_eps", c->train.adam_eps, 1e-8);
    DEF("train.keep_checkpoints", c->train.keep_checkpoints, 2);
    DEF("train.log_every", c->train.log_every, 10);
    DEF("train.ckpt_every_tokens", c->train.ckpt_every_tokens, c->eval.every_tokens);
    DEF("data.val_fraction", c->data.val_fraction, 0.05);
    if (!GIVEN(px, "eval.suites")) {
        strcpy(c->eval.suites[0], "val");
        c->eval.n_suites = 1;
    }
    if (!GIVEN(px, "eval.commonsense_tasks")) {
        for (int i = 0; i < 8; i++)
            strcpy(c->eval.commonsense_tasks[i], COMMONSENSE_TASKS[i]);
        c->eval.n_commonsense_tasks = 8;
    }
    if (!GIVEN(px, "eval.niah.tasks")) {
        for (int i = 0; i < 3; i++)
            strcpy(c->eval.niah_tasks[i], NIAH_TASKS[i]);
        c->eval.n_niah_tasks = 3;
    }
    if (!GIVEN(px, "eval.niah.lengths")) {
        c->eval.niah_lengths[0] = c->train.seq_len;
        c->eval.n_niah_lengths = 1;
    }
    DEF("eval.niah.n", c->eval.niah_n, 20);
    DEF("eval.alignment.tokens", c->eval.alignment_tokens, 2048);
#undef DEF

    eng_train_cfg *t = &c->train;
    if (t->batch_tokens % t->seq_len)
        return cfg_errf(e, NODE(px, "train.batch_tokens") ? NODE(px, "train.batch_tokens") : root,
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
        return cfg_errf(e, NODE(px, "train.micro_batch"),
                        "train.micro_batch: %d does not divide the %" PRId64 " sequences of a batch", t->micro_batch,
                        seqs);
    }
    if (t->tokens < t->batch_tokens)
        return cfg_errf(e, NODE(px, "train.tokens") ? NODE(px, "train.tokens") : root,
                        "train.tokens: %" PRId64 " is less than one batch (%" PRId64 ")", t->tokens, t->batch_tokens);
    if (t->warmup_tokens > t->tokens)
        return cfg_errf(e, NODE(px, "train.warmup_tokens") ? NODE(px, "train.warmup_tokens") : root,
                        "train.warmup_tokens: %" PRId64 " exceeds train.tokens %" PRId64, t->warmup_tokens, t->tokens);
    if (t->beta2 < t->beta1 && GIVEN(px, "train.beta2"))
        return cfg_errf(e, NODE(px, "train.beta2"), "train.beta2: %g is below beta1 %g", t->beta2, t->beta1);
    static const char *const SUITES[] = {"val", "wikitext", "lambada", "commonsense", "niah", "alignment"};
    for (int i = 0; i < c->eval.n_suites; i++)
        if (name_index(SUITES, 6, c->eval.suites[i]) < 0) {
            const cfg_node *at = NODE(px, "eval.suites");
            return cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at,
                            "eval.suites: unknown suite '%s' (expected val, wikitext, lambada, commonsense, niah, "
                            "alignment)",
                            c->eval.suites[i]);
        }
    for (int i = 0; i < c->eval.n_commonsense_tasks; i++)
        if (name_index(NAMES(COMMONSENSE_TASKS), c->eval.commonsense_tasks[i]) < 0) {
            const cfg_node *at = NODE(px, "eval.commonsense_tasks");
            return cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at,
                            "eval.commonsense_tasks: unknown task '%s' (expected piqa, hellaswag, winogrande, "
                            "arc_easy, arc_challenge, siqa, boolq, openbookqa)",
                            c->eval.commonsense_tasks[i]);
        }
    for (int i = 0; i < c->eval.n_niah_tasks; i++)
        if (name_index(NAMES(NIAH_TASKS), c->eval.niah_tasks[i]) < 0) {
            const cfg_node *at = NODE(px, "eval.niah.tasks");
            return cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at,
                            "eval.niah.tasks: unknown task '%s' (expected s_niah_1, s_niah_2, s_niah_3)",
                            c->eval.niah_tasks[i]);
        }
    for (int i = 0; i < c->eval.n_niah_lengths; i++)
        if (c->eval.niah_lengths[i] != floor(c->eval.niah_lengths[i])) {
            const cfg_node *at = NODE(px, "eval.niah.lengths");
            return cfg_errf(e, at && (size_t)i < at->n ? at->items[i] : at,
                            "eval.niah.lengths: %g is not a whole number of tokens", c->eval.niah_lengths[i]);
        }
    return 0;
}

int eng_config_from_tree(const cfg_node *root, eng_config *cfg, eng_err *e)
{
    parse_ctx *px = calloc(1, sizeof *px);
    if (!px)
        return eng_errf(e, ENG_ENOMEM, "out of memory");
    memset(cfg, 0, sizeof *cfg);
    px->cfg = cfg;
    px->root = root;
    int rc = cfg_check_paths_unique(root, e);
    if (!rc)
        rc = walk(px, root, "", e);
    if (!rc)
        rc = resolve(px, e);
    free(px);
    return rc;
}

int eng_config_load(const char *path, eng_config *cfg, eng_err *e)
{
    cfg_node *root;
    int rc = cfg_parse_file(path, &root, e);
    if (rc)
        return rc;
    rc = eng_config_from_tree(root, cfg, e);
    cfg_free(root);
    return rc;
}

int eng_config_from_json(const char *json, eng_config *cfg, eng_err *e)
{
    cfg_node *root;
    int rc = cfg_parse_buffer("<stored config>", json, strlen(json), &root, e);
    if (rc)
        return rc;
    rc = eng_config_from_tree(root, cfg, e);
    cfg_free(root);
    return rc;
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
    if (ENG_GROW(b->p, b->cap, b->n + n + 1, 1024)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_json_string(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            sb_put(b, esc, 2);
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            sb_str(b, esc);
        } else {
            sb_put(b, (const char *)&ch, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_number(sbuf *b, double v)
{
    char s[ENG_NUMBER_TEXT];
    eng_fmt_exact(s, sizeof s, v); /* the canonical form's numbers: shortest, exact */
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
    eng_sha256_hex(s, strlen(s), hex);
    free(s);
}

void eng_config_print_keys(FILE *f)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const field *fd = &FIELDS[i];
        const char *type = "";
        switch (fd->type) {
        case F_INT: case F_I64: type = "integer"; break;
        case F_DOUBLE: type = "number"; break;
        case F_BOOL: type = "true|false"; break;
        case F_STR: type = "string"; break;
        case F_ENUM: type = "name"; break;
        case F_DLIST: type = "list of numbers"; break;
        case F_SLIST: type = "list of names"; break;
        case F_PAIR: type = "[start, end]"; break;
        }
        fprintf(f, "  %-26s %-16s %s%s\n", fd->key, type, fd->help,
                (fd->flags & FLAG_EXEC) ? " (not part of the job's identity)" : "");
    }
}
