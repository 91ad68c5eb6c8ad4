/* test_config.c: job-config parsing, resolution and identity.
 * Good configs resolve with every default filled; a catalogue of bad ones
 * each gives its message with the file, line and column; the defaults that
 * --config-keys and docs/config.md state are the ones the code applies. */
#include <stdlib.h>

#include "common/clock.h"
#include "engine/config/account.h"
#include "engine/config/config.h"
#include "engine/config/presets.h"
#include "tests/lib/tap.h"

static int parse(const char *name, const char *text, eng_config *c, tlm_err *e)
{
    return eng_config_from_text(name, text, strlen(text), c, e);
}

static void good(void)
{
    eng_config c;
    tlm_err e = {0};
    int rc = parse("paper.yaml",
                   "scale: 440m\n"
                   "arch: transformer\n"
                   "taper: {schedule: cosine, ratio: [1.5, 0.5]}\n"
                   "train: {tokens: 30e9, lr: 4e-4}\n",
                   &c, &e);
    TAP_OK(rc == 0, "440m cosine resolves: %s", rc ? e.msg : "ok");
    TAP_OK(c.model.d_model == 1024 && c.model.layers == 24 && c.model.heads == 16 && c.model.d_ff == 2816 &&
               c.model.vocab == 128256 && c.model.tied == 1,
           "preset fills the model (d=%d L=%d H=%d d_ff=%d V=%d)", c.model.d_model, c.model.layers, c.model.heads,
           c.model.d_ff, c.model.vocab);
    TAP_OK(c.train.tokens == 30000000000LL && c.train.seq_len == 4096 && c.train.batch_tokens == 524288 &&
               c.train.lr == 4e-4 && c.train.weight_decay == 0.1 && c.train.grad_clip == 1.0,
           "paper recipe defaults");
    TAP_OK(c.eval.n_suites == 1 && !strcmp(c.eval.suites[0], "val"), "default eval suite is val");
    TAP_OK(!strcmp(c.tokenizer, "llama3"), "preset tokenizer llama3");

    char *canon = eng_config_canonical(&c);
    TAP_DIAG("canonical: %s", canon);
    TAP_OK(canon && strstr(canon, "\"tokens\":30000000000") && strstr(canon, "\"lr\":0.0004") &&
               !strstr(canon, "micro_batch") && !strstr(canon, "\"k\":") && !strstr(canon, "groups"),
           "canonical form normalises numbers and omits irrelevant and execution keys");
    /* keys sorted at every level */
    TAP_OK(canon && strstr(canon, "{\"arch\":") == canon && strstr(canon, "\"data\":") < strstr(canon, "\"eval\":") &&
               strstr(canon, "\"eval\":") < strstr(canon, "\"model\":") &&
               strstr(canon, "\"scale\":") < strstr(canon, "\"seed\":"),
           "canonical keys are sorted");
    char id1[65], id2[65];
    eng_config_id(&c, id1);

    /* the same job written differently has the same identity */
    eng_config d;
    rc = parse("same.json",
               "{\"train\": {\"lr\": 0.0004, \"tokens\": 30000000000, \"micro_batch\": 1},"
               " \"taper\": {\"ratio\": [1.50, 0.50], \"schedule\": \"cosine\"}, \"scale\": \"440m\"}",
               &d, &e);
    TAP_OK(rc == 0, "JSON form resolves: %s", rc ? e.msg : "ok");
    eng_config_id(&d, id2);
    TAP_OK(!strcmp(id1, id2), "same job, different spelling and execution settings: same id %.12s", id1);

    /* train.precision: auto (the default) is left out of the identity, so
     * configs written before the key keep their id; fp32 or bf16 in words
     * is another job; bf16 is refused on the CPU, auto follows the device */
    rc = parse("prec.yaml", "scale: 440m\ntaper: {schedule: cosine}\ntrain: {tokens: 30e9, precision: auto}\n", &d,
               &e);
    eng_config_id(&d, id2);
    TAP_OK(rc == 0 && d.train.precision == ENG_PREC_AUTO && !strcmp(id1, id2) && !strstr(canon, "precision"),
           "train.precision auto hashes as a config without the key: %s", rc ? e.msg : id2);
    int prec = -1;
    TAP_OK(!eng_precision_resolve(&d, 0, &prec, &e) && prec == ENG_PREC_FP32, "auto is fp32 on the CPU");
    TAP_OK(!eng_precision_resolve(&d, 1, &prec, &e) && prec == ENG_PREC_BF16, "auto is bf16 on a GPU");
    rc = parse("prec.yaml", "scale: 440m\ntaper: {schedule: cosine}\ntrain: {tokens: 30e9, precision: bf16}\n", &d,
               &e);
    eng_config_id(&d, id2);
    char *pcanon = rc ? NULL : eng_config_canonical(&d);
    TAP_OK(rc == 0 && strcmp(id1, id2) && pcanon && strstr(pcanon, "\"precision\":\"bf16\""),
           "train.precision bf16 is part of the identity: %s", rc ? e.msg : pcanon);
    free(pcanon);
    tlm_err pe = {0};
    rc = eng_precision_resolve(&d, 0, &prec, &pe);
    TAP_OK(rc == TLM_ECONFIG && strstr(pe.msg, "bf16 needs a CUDA device") && strstr(pe.msg, "fp32 only"),
           "bf16 on the CPU is refused: %s", pe.msg);
    TAP_OK(!eng_precision_resolve(&d, 1, &prec, &e) && prec == ENG_PREC_BF16, "bf16 on a GPU");
    rc = parse("prec.yaml", "scale: 1m\ntrain: {precision: fp16}\n", &d, &e);
    TAP_OK(rc != 0 && strstr(e.msg, "auto") && strstr(e.msg, "bf16"), "fp16 is not a precision: %s", e.msg);

    /* train.attention: an execution setting (the same job on either
     * fused attention), auto by default; names checked */
    rc = parse("attn.yaml", "scale: 440m\ntaper: {schedule: cosine}\ntrain: {tokens: 30e9, attention: cudnn}\n", &d,
               &e);
    eng_config_id(&d, id2);
    TAP_OK(rc == 0 && d.train.attention == ENG_ATTN_CUDNN && !strcmp(id1, id2) &&
               !strcmp(eng_attention_name(d.train.attention), "cudnn"),
           "train.attention cudnn resolves and keeps the job's id: %s", rc ? e.msg : id2);
    rc = parse("attn.yaml", "scale: 1m\n", &d, &e);
    TAP_OK(rc == 0 && d.train.attention == ENG_ATTN_AUTO, "train.attention defaults to auto");
    rc = parse("attn.yaml", "scale: 1m\ntrain: {attention: sdpa}\n", &d, &e);
    TAP_OK(rc != 0 && strstr(e.msg, "flash") && strstr(e.msg, "cudnn") && strstr(e.msg, "attn.yaml:2"),
           "sdpa is not an attention: %s", e.msg);

    /* train.cuda_graph: an execution setting, auto (off until measured)
     * by default; on refused on the CPU and with cudnn attention */
    int on = -1;
    rc = parse("graph.yaml", "scale: 440m\ntaper: {schedule: cosine}\ntrain: {tokens: 30e9, cuda_graph: on}\n", &d,
               &e);
    eng_config_id(&d, id2);
    TAP_OK(rc == 0 && d.train.cuda_graph == ENG_GRAPH_ON && !strcmp(id1, id2) &&
               !eng_cuda_graph_resolve(&d, 1, &on, &e) && on == 1,
           "train.cuda_graph on resolves on a GPU and keeps the job's id: %s", rc ? e.msg : id2);
    tlm_err ge = {0};
    TAP_OK(eng_cuda_graph_resolve(&d, 0, &on, &ge) == TLM_ECONFIG && on == 0 && strstr(ge.msg, "no graphs"),
           "train.cuda_graph on with the CPU is refused: %s", ge.msg);
    rc = parse("graph.yaml", "scale: 1m\ntrain: {cuda_graph: on, attention: cudnn}\n", &d, &e);
    memset(&ge, 0, sizeof ge);
    TAP_OK(rc == 0 && eng_cuda_graph_resolve(&d, 1, &on, &ge) == TLM_ECONFIG && strstr(ge.msg, "cudnn"),
           "train.cuda_graph on with train.attention cudnn is refused: %s", ge.msg);
    rc = parse("graph.yaml", "scale: 1m\n", &d, &e);
    TAP_OK(rc == 0 && d.train.cuda_graph == ENG_GRAPH_AUTO && !eng_cuda_graph_resolve(&d, 1, &on, &e) && on == 0 &&
               !eng_cuda_graph_resolve(&d, 0, &on, &e) && on == 0,
           "train.cuda_graph defaults to auto, off on a GPU and on the CPU");

    /* a different job has a different identity */
    rc = parse("seed.yaml", "scale: 440m\ntaper: {schedule: cosine}\nseed: 1\ntrain: {tokens: 30e9}\n", &d, &e);
    eng_config_id(&d, id2);
    TAP_OK(rc == 0 && strcmp(id1, id2), "another seed: another id");

    /* canonical JSON reads back to the same config */
    eng_config r;
    rc = eng_config_from_json(canon, &r, &e);
    char id3[65];
    eng_config_id(&r, id3);
    TAP_OK(rc == 0 && !strcmp(id1, id3), "canonical form round-trips: %s", rc ? e.msg : id3);
    char *full = eng_config_json(&c);
    rc = eng_config_from_json(full, &r, &e);
    TAP_OK(rc == 0 && r.train.micro_batch == c.train.micro_batch && r.train.log_every == c.train.log_every,
           "full form carries execution settings");
    free(full);
    free(canon);

    /* integers are read exactly, whatever their spelling (a double would round 2^53 + 1) */
    rc = parse("exact.yaml", "scale: 1m\ntrain: {tokens: 9.007199254740993e15, warmup_tokens: 1.5e3}\n", &c, &e);
    TAP_OK(rc == 0 && c.train.tokens == 9007199254740993LL && c.train.warmup_tokens == 1500,
           "9.007199254740993e15 tokens are exactly 9007199254740993 (%lld): %s", (long long)c.train.tokens,
           rc ? e.msg : "ok");

    /* the core tags mean what YAML says */
    rc = parse("tags.yaml", "scale: !!str 1m\nseed: !!int \"7\"\ntrain: !!map {lr: !!float 1e-3}\n", &c, &e);
    TAP_OK(rc == 0 && c.seed == 7 && c.train.lr == 1e-3 && !strcmp(c.scale, "1m"), "core tags are honoured: %s",
           rc ? e.msg : "ok");

    /* a custom model without a preset */
    rc = parse("custom.yaml",
               "model: {d_model: 64, layers: 3, heads: 2, d_ff: 128, vocab: 300}\n"
               "tokenizer: bytes\ntrain: {tokens: 100000, seq_len: 32, batch_tokens: 1024}\n",
               &c, &e);
    TAP_OK(rc == 0 && !strcmp(c.scale, "custom") && c.model.vocab == 300 && c.train.micro_batch == 32,
           "custom model resolves: %s", rc ? e.msg : "ok");

    /* blocks and gated attention keep their own keys */
    rc = parse("blocks.yaml",
               "scale: 1m\narch: gated_attn\nmodel: {gate: headwise}\n"
               "taper: {schedule: blocks, groups: [0.5, 1.0, 1.5]}\n",
               &c, &e);
    canon = rc ? NULL : eng_config_canonical(&c);
    TAP_OK(rc == 0 && canon && strstr(canon, "\"groups\":[0.5,1,1.5]") && strstr(canon, "\"gate\":\"headwise\""),
           "blocks + gated_attn canonical: %s", rc ? e.msg : canon);
    free(canon);

    /* parameter budget: a taper changes no parameter count */
    eng_account a, b;
    parse("u.yaml", "scale: 440m\n", &c, &e);
    eng_account_compute(&c, &a, &e);
    parse("t.yaml", "scale: 440m\ntaper: {schedule: cosine, ratio: [1.5, 0.5]}\n", &c, &e);
    eng_account_compute(&c, &b, &e);
    TAP_OK(a.total == b.total && a.mlp == b.mlp && a.flops_train == b.flops_train,
           "440m: tapered total %lld == uniform %lld, FLOPs equal", (long long)b.total, (long long)a.total);
    TAP_OK(llabs(a.total - 440000000LL) < 0.03 * 440e6, "440m preset has %.1fM parameters", a.total / 1e6);
    static const struct {
        const char *name;
        double target;
    } scales[] = {{"760m", 760e6}, {"1.3b", 1.3e9}};
    for (int i = 0; i < 2; i++) {
        char text[64];
        snprintf(text, sizeof text, "scale: %s\n", scales[i].name);
        parse("s.yaml", text, &c, &e);
        eng_account_compute(&c, &a, &e);
        TAP_OK(fabs((double)a.total - scales[i].target) < 0.03 * scales[i].target, "%s preset has %.1fM parameters",
               scales[i].name, a.total / 1e6);
    }
}

/* Each bad config and a fragment its message must contain. */
static const struct {
    const char *text;
    const char *expect;
} BAD[] = {
    {"scale: 440m\ntrain: {lrr: 1e-3}\n", "bad.yaml:2:9: unknown key 'lrr' in train; did you mean 'lr'?"},
    {"scale: 440m\nschedule: cosine\n", "bad.yaml:2:1: unknown key 'schedule'"},
    {"scale: 440m\ntrain:\n  lr: fast\n", "bad.yaml:3:7: train.lr: expected a number, got 'fast'"},
    {"scale: 440m\ntrain:\n  lr: \"0.1\"\n", "bad.yaml:3:7: train.lr: expected a number"},
    {"scale: 440m\ntrain: {lr: -1}\n", "bad.yaml:2:13: train.lr: -1 is out of range"},
    {"scale: 440m\ntrain: {seq_len: 1.5}\n", "bad.yaml:2:18: train.seq_len: expected an integer, got '1.5'"},
    {"scale: 440m\narch: mamba\n", "bad.yaml:2:7: arch: 'mamba' is not one of transformer | gated_attn"},
    {"scale: 999m\n", "bad.yaml:1:8: scale: unknown preset '999m'"},
    {"scale: 440m\ntaper: {schedule: cosine, ratio: [1.5, 0.75]}\n", "bad.yaml:2:34: taper.ratio [1.5, 0.75]: the mean"},
    {"scale: 440m\ntaper: {schedule: cosine, ratio: [1.5]}\n", "bad.yaml:2:34: taper.ratio: expected exactly two"},
    {"scale: 440m\ntaper: {schedule: blocks}\n", "bad.yaml:2:19: taper.groups is required with schedule blocks"},
    {"scale: 440m\ntaper: {schedule: blocks, groups: [1.5, 1, 0.5, 1, 1]}\n", "bad.yaml:2:35: taper.groups: 5 groups"},
    {"scale: 440m\ntaper: {schedule: uniform, ratio: [1.5, 0.5]}\n", "bad.yaml:2:35: taper.ratio: only used with"},
    {"scale: 440m\ntaper: {schedule: cosine, k: 5}\n", "bad.yaml:2:30: taper.k: only used with schedule sigmoid"},
    {"scale: 440m\nmodel: {heads: 5}\n", "bad.yaml:2:16: model.heads: 5 does not divide d_model 1024"},
    {"scale: 440m\nmodel: {kv_heads: 3}\n", "bad.yaml:2:19: model.kv_heads: 3 must divide heads"},
    {"scale: 440m\nmodel: {vocab: 1000}\n", "bad.yaml:2:16: model.vocab: 1000 is smaller than tokenizer 'llama3'"},
    {"model: {d_model: 64, layers: 2, heads: 2}\n", "bad.yaml:1:1: model.d_ff is required when no scale preset"},
    {"scale: 440m\ntrain: {batch_tokens: 1000}\n", "bad.yaml:2:23: train.batch_tokens: 1000 is not a multiple of seq_len"},
    {"scale: 440m\ntrain: {micro_batch: 3}\n", "bad.yaml:2:22: train.micro_batch: 3 does not divide"},
    {"scale: 440m\ntrain: {tokens: 1000}\n", "bad.yaml:2:17: train.tokens: 1000 is less than one batch"},
    {"scale: 440m\neval: {suites: [val, mmlu]}\n", "bad.yaml:2:22: eval.suites: unknown suite 'mmlu'"},
    {"scale: 440m\neval: {suites: [val, val]}\n", "bad.yaml:2:22: eval.suites: 'val' is listed twice"},
    {"scale: 440m\ntrain: 5\n", "bad.yaml:2:8: train: expected a mapping of keys, got a number"},
    {"scale: 440m\nscale: 760m\n", "bad.yaml:2:1: duplicate key 'scale' (first given at bad.yaml:1:1)"},
    /* one setting, nested and dotted */
    {"scale: 1m\nmodel: {d_model: 32}\nmodel.d_model: 64\n",
     "bad.yaml:3:1: 'model.d_model' is set twice: here and at bad.yaml:2:9"},
    {"scale: 1m\ntrain.lr: 1e-3\ntrain: {lr: 2e-3}\n", "bad.yaml:3:9: 'train.lr' is set twice: here and at bad.yaml:2:1"},
    {"scale: 1m\narch: hope_attn\nmodel: {hope.levels: 2, hope: {levels: 3}}\n",
     "bad.yaml:3:32: 'model.hope.levels' is set twice: here and at bad.yaml:3:9"},
    {"scale: 1m\neval.niah: {n: 3}\neval: {niah.n: 4}\n", "bad.yaml:3:8: 'eval.niah.n' is set twice: here and at"},
    {"scale: 1m\ntrain.lr: 1e-3\ntrain: 5\n", "bad.yaml:3:1: 'train' is set to a number at bad.yaml:3:1, and "
                                               "'train.lr' under it at bad.yaml:2:1 (keep one)"},
    {"{\"scale\": \"1m\", \"train\": {\"lr\": 1}, \"train.lr\": 2}\n", "bad.yaml:1:37: 'train.lr' is set twice: here and at bad.yaml:1:27"},
    {"scale: 440m\ntrain: {lr: 1e-3\n", "bad.yaml:3:1: invalid YAML/JSON"},
    {"- a\n- b\n", "bad.yaml:1:1: expected a mapping of keys, got a list"},
    {"", "bad.yaml: the file is empty"},
    {"scale: 440m\n---\nscale: 1m\n", "bad.yaml:2:1: more than one document"},
    {"base: &b {lr: 1}\ntrain: *b\n", "bad.yaml:2:8: YAML aliases (*b) are not supported"},
    {"scale: 440m\ntrain: {tokens: .nan}\n", "bad.yaml:2:17: train.tokens: expected an integer"},
    {"scale: 440m\nmodel: {tied: yes}\n", "bad.yaml:2:15: model.tied: expected true or false, got 'yes'"},
    {"scale: 440m\nseed: -1\n", "bad.yaml:2:7: seed: -1 is out of range (expected an integer from 0 to 2^32-1)"},
    /* out of range, however far: the range is named, never "expected an integer" */
    {"scale: 1m\nseed: 9223372036854775807\n",
     "bad.yaml:2:7: seed: 9223372036854775807 is out of range (expected an integer from 0 to 2^32-1)"},
    {"scale: 1m\nseed: 1e30\n", "bad.yaml:2:7: seed: 1e30 is out of range (expected an integer from 0 to 2^32-1)"},
    {"scale: 1m\nseed: 12345678901234567890123456\n",
     "bad.yaml:2:7: seed: 12345678901234567890123456 is out of range (expected an integer from 0 to 2^32-1)"},
    {"scale: 1m\ntrain: {seq_len: 99999999999}\n",
     "bad.yaml:2:18: train.seq_len: 99999999999 is out of range (expected an integer from 2 to 2^20)"},
    {"scale: 1m\ntrain: {tokens: 1e19}\n", "bad.yaml:2:17: train.tokens: 1e19 is out of range (expected an integer "
                                            "from 1 to 9e18)"},
    {"scale: 1m\nmodel: {layers: 0}\n", "bad.yaml:2:17: model.layers: 0 is out of range (expected an integer from 1 "
                                         "to 256)"},
    {"scale: 1m\ntrain: {lr: 1e400}\n", "bad.yaml:2:13: train.lr: 1e400 is out of range (expected a number above 0 "
                                         "and at most 10)"},
    {"scale: 1m\ntaper: {schedule: cosine, ratio: [1.5, 1e-400]}\n",
     "bad.yaml:2:40: taper.ratio: 1e-400 is out of range (expected a number from 0 to 100)"},
    /* a quoted number is a string, and the message says so */
    {"scale: 1m\nseed: \"0\"\n", "bad.yaml:2:7: seed: expected an integer, got the quoted string \"0\" (quotes make a "
                                 "string"},
    {"scale: 1m\ntrain: {lr: '1e-3'}\n", "bad.yaml:2:13: train.lr: expected a number, got the quoted string \"1e-3\""},
    {"scale: 1m\nmodel: {tied: \"true\"}\n", "bad.yaml:2:15: model.tied: expected true or false, got the quoted "
                                             "string \"true\""},
    {"scale: 1m\ntrain: {seq_len: 64.5e0}\n", "bad.yaml:2:18: train.seq_len: expected an integer, got '64.5e0'"},
    /* YAML tags: the core ones where they fit, nothing else */
    {"scale: !!python/object:os.system 1m\n", "bad.yaml:1:8: YAML tag '!!python/object:os.system' is not supported"},
    {"scale: 1m\ntrain: !custom {lr: 1e-3}\n", "bad.yaml:2:8: YAML tag '!custom' is not supported"},
    {"scale: 1m\neval: {suites: !!python/tuple [val]}\n", "bad.yaml:2:16: YAML tag '!!python/tuple' is not supported"},
    {"scale: 1m\ntrain: !!seq {lr: 1e-3}\n", "bad.yaml:2:8: YAML tag '!!seq' does not fit a mapping"},
    {"scale: 1m\nseed: !!str 5\n", "bad.yaml:2:7: seed: expected an integer, got the string \"5\" (tagged as a string"},
    {"scale: 1m\ntrain: !!str x\n", "bad.yaml:2:8: train: expected a mapping of keys, got a string (tagged !!str)"},
    {"scale: 1m\ntaper: {schedule: cosine, ratio: [1.99, 0.01]}\n", "not a multiple of taper.multiple 16"},
    {"tokenizer: mytok.json\nmodel: {d_model: 64, layers: 2, heads: 2, d_ff: 128}\ntrain: {tokens: 1e5}\n",
     "bad.yaml:1:12: model.vocab is required with tokenizer 'mytok.json'"},
    /* issue 26: a slip of a tokenizer name; a preset's warm-up past a small budget */
    {"scale: 1m\ntokenizer: byte\n", "bad.yaml:2:12: tokenizer: unknown name 'byte'; did you mean 'bytes'?"},
    {"scale: 1m\ntrain: {tokens: 20000}\n",
     "bad.yaml:2:17: train.tokens: 20000 is less than the warm-up of preset '1m' (1000000 tokens, its "
     "train.warmup_tokens); set train.warmup_tokens too (say 1000"},
    /* the trial's findings (issue 10): libyaml's errors at their place, in words */
    {"model:\n\td_model: 64\n", "bad.yaml:2:1: invalid YAML/JSON: a tab; tabs cannot indent YAML, use spaces"},
    {"scale: 1m\ndata: {train: \"caf\351\"}\n", "bad.yaml:2:20: invalid YAML/JSON: invalid trailing UTF-8 octet (the "
                                                 "file must be UTF-8)"},
    {"scale: 1m\ntrain.lrr: 1\n", "bad.yaml:2:1: unknown key 'train.lrr' in train; did you mean 'lr'?"},
    {"scale: 1m\nmodel:\n  titans.max_lrr: 1\n", "bad.yaml:3:3: unknown key 'titans.max_lrr' in model.titans; did "
                                                 "you mean 'max_lr'?"},
    {"scale: 1m\ntokenizer: bpe1\n", "bad.yaml:2:12: tokenizer: 'bpe1' is out of range: bpeN names a trained BPE of N "
                                     "ids, N from 257"},
    {"scale: 1m\nmodel.gate: headwise\n", "bad.yaml:2:13: model.gate: only used with arch gated_attn (arch is "
                                          "transformer)"},
    {"model: {d_model: 78}\nscale: 3m\n", "bad.yaml:1:18: model.heads: head size 13 must be even for RoPE (d_model 78 / "
                                          "6 heads, heads from scale 3m)"},
    {"scale: 3m\nmodel: {d_model: 77}\n", "bad.yaml:2:18: model.heads: 6 does not divide d_model 77 (heads from scale "
                                          "3m)"},
};

static void bad(void)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        eng_config c;
        tlm_err e = {0};
        int rc = parse("bad.yaml", BAD[i].text, &c, &e);
        int ok = rc == TLM_ECONFIG && strstr(e.msg, BAD[i].expect) != NULL;
        TAP_OK(ok, "bad config %zu: %s", i + 1, rc ? e.msg : "(accepted)");
        if (!ok)
            TAP_DIAG("expected: %s", BAD[i].expect);
    }
}

/* Bytes strlen cannot carry, keys YAML cannot hold, and sizes that must not
 * be slow: each refused at its line (issue 10's trial). */
static void bad_input(void)
{
    eng_config c;
    tlm_err e = {0};
    static const char nul[] = "scale: 1m\nseed: 1\0002\n";
    tlm_cfg_node *root = NULL;
    int rc = tlm_cfg_parse_buffer("nul.yaml", nul, sizeof nul - 1, &root, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "nul.yaml:2:8: invalid YAML/JSON: control characters are not allowed"),
           "a NUL on line 2 is reported on line 2: %s", rc ? e.msg : "(accepted)");
    tlm_cfg_free(root);

    size_t n = 4 << 20;
    char *buf = malloc(n + 32);
    if (!buf)
        return;
    int len = snprintf(buf, n, "scale: 1m\n");
    memset(buf + len, 'k', 100000);
    strcpy(buf + len + 100000, ": 1\n");
    rc = parse("long.yaml", buf, &c, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "long.yaml:2:1: invalid YAML/JSON: a key without ':' after it (a plain "
                                              "key ends with ':' on its line, within 1024 characters)"),
           "a 100,000-character key is reported where it starts: %.120s", rc ? e.msg : "(accepted)");

    /* 200,000 keys in one mapping, the last a duplicate of one far back:
     * found (it took minutes by a linear search per key, which the test's
     * time limit catches; no fixed bound here, the sanitizers take 5 s) */
    size_t at = (size_t)snprintf(buf, n, "scale: 1m\n");
    for (int i = 0; i < 200000 && at < n - 64; i++)
        at += (size_t)snprintf(buf + at, n - at, "k%d: 1\n", i);
    at += (size_t)snprintf(buf + at, n - at, "k12345: 2\n");
    double t0 = tlm_clock_mono();
    rc = tlm_cfg_parse_buffer("many.yaml", buf, at, &root, &e);
    double dt = tlm_clock_mono() - t0;
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "many.yaml:200002:1: duplicate key 'k12345' (first given at "
                                              "many.yaml:12347:1)"),
           "200,000 keys and a duplicate: found in %.2f s: %s", dt, rc ? e.msg : "(accepted)");
    tlm_cfg_free(root);
    root = NULL;
    buf[at - strlen("k12345: 2\n")] = '\0';
    t0 = tlm_clock_mono();
    rc = tlm_cfg_parse_buffer("many.yaml", buf, strlen(buf), &root, &e);
    int found = rc == 0 && tlm_cfg_map_get(root, "k199999") && tlm_cfg_map_get(root, "k0") && tlm_cfg_map_get(root, "scale") &&
                !tlm_cfg_map_get(root, "k200000");
    dt = tlm_clock_mono() - t0;
    TAP_OK(found, "200,000 distinct keys read and looked up in %.2f s", dt);
    tlm_cfg_free(root);
    free(buf);
}

/* A message holds a whole path; one too long for its buffer ends in "...". */
static void messages(void)
{
    char path[1300] = "/nonexistent";
    while (strlen(path) < 1200)
        strcat(path, "/abcdefghijklmnopqrstuvwxyz");
    eng_config c;
    tlm_err e = {0};
    int rc = eng_config_load(path, &c, &e);
    char want[1400];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    TAP_OK(rc == TLM_ECONFIG && !strcmp(e.msg, want), "a %zu-byte path is whole in its message (%zu bytes)",
           strlen(path), strlen(e.msg));
    static char big[3 * TLM_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    tlm_errf(&e, TLM_EIO, "%s", big);
    size_t n = strlen(e.msg);
    TAP_OK(n == TLM_MSG_MAX - 1 && !strcmp(e.msg + n - 3, "..."), "a message longer than its buffer ends in '...'");
    tlm_errf(&e, TLM_EIO, "tail");
    tlm_err_prefix(&e, "%s", big);
    n = strlen(e.msg);
    TAP_OK(n > 1000 && !strcmp(e.msg + n - 9, "...: tail"), "...also a prefix cut to make room for the message");
    /* a config path longer than its key holds: measured, never cut */
    char text[800];
    snprintf(text, sizeof text, "scale: 1m\ndata: {train: %.*s}\n", 600, path + 1);
    rc = parse("long.yaml", text, &c, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "long.yaml:2:15: data.train: 600 bytes, longer than the 511 this key allows"),
           "a 600-byte data.train: %.80s", e.msg);
    char small[8];
    TAP_OK(tlm_msg_copy(small, sizeof small, "12345678") == 1 && !strcmp(small, "1234..."), "a field too small: %s",
           small);
    TAP_OK(tlm_msg_copy(small, sizeof small, "1234567") == 0 && !strcmp(small, "1234567"), "...and one that fits");
}

static void files(void)
{
    const char *src = getenv("TLM_SRCDIR");
    char path[1024];
    eng_config c;
    tlm_err e = {0};
    snprintf(path, sizeof path, "%s/tests/data/config/tiny_cosine.yaml", src ? src : ".");
    int rc = eng_config_load(path, &c, &e);
    TAP_OK(rc == 0 && c.taper.schedule == ENG_TAPER_COSINE && c.model.vocab == 256, "%s loads: %s", path,
           rc ? e.msg : "ok");
    snprintf(path, sizeof path, "%s/tests/data/config/no-such-file.yaml", src ? src : ".");
    rc = eng_config_load(path, &c, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "cannot open"), "missing file: %s", e.msg);
    /* a folder where the file is expected: said so, not "read error" */
    snprintf(path, sizeof path, "%s/tests/data/config", src ? src : ".");
    rc = eng_config_load(path, &c, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "config: is a directory (expected a YAML or JSON file)"),
           "a folder: %s", e.msg);
}

/* Every preset takes every schedule and ratio of the paper and the three
 * block patterns, and keeps the uniform model's parameter count. */

/* 1 when the config `text` resolves and its parameter count is `total`
 * (else a diagnostic says why not) */
static int same_total(const char *text, int64_t total)
{
    eng_config c;
    tlm_err e = {0};
    eng_account acc;
    if (parse("preset.yaml", text, &c, &e) == 0 && eng_account_compute(&c, &acc, &e) == 0 && acc.total == total)
        return 1;
    TAP_DIAG("%s: %s", text, e.msg);
    return 0;
}

static void presets(void)
{
    static const double ratios[] = {1.25, 1.375, 1.5, 1.625, 1.75};
    static const char *const sched[] = {"linear", "cosine", "sigmoid"};
    static const char *const groups[] = {"[1.5, 1.0, 0.5]", "[0.75, 1.5, 0.75]", "[0.5, 1.0, 1.5]"};
    for (size_t i = 0; eng_preset_at(i); i++) {
        const eng_preset *p = eng_preset_at(i);
        char text[256];
        eng_config c;
        tlm_err e = {0};
        eng_account uni;
        snprintf(text, sizeof text, "scale: %s\n", p->name);
        int ok = parse("preset.yaml", text, &c, &e) == 0 && eng_account_compute(&c, &uni, &e) == 0;
        int n = 0, good_n = 0;
        for (int r = 0; r < 5; r++)
            for (int s = 0; s < 3; s++) {
                snprintf(text, sizeof text, "scale: %s\ntaper: {schedule: %s, ratio: [%g, %g]}\n", p->name, sched[s],
                         ratios[r], 2 - ratios[r]);
                n++;
                good_n += same_total(text, uni.total);
            }
        if (p->layers % 3 == 0)
            for (int g = 0; g < 3; g++) {
                snprintf(text, sizeof text, "scale: %s\ntaper: {schedule: blocks, groups: %s}\n", p->name, groups[g]);
                n++;
                good_n += same_total(text, uni.total);
            }
        TAP_OK(ok && good_n == n, "preset %s (%.2fM params): %d/%d tapered configs resolve with the uniform count",
               p->name, uni.total / 1e6, good_n, n);
    }
}


/* A resolved value in the form --config-keys writes defaults: 0.002, "",
 * [1.5, 0.5], [val]. */
static void value_text(const tlm_cfg_node *n, char *out, size_t cap)
{
    if (n->kind == TLM_CFG_SCALAR) {
        snprintf(out, cap, "%s", n->text[0] || !n->quoted ? n->text : "\"\"");
        return;
    }
    size_t len = (size_t)snprintf(out, cap, "[");
    for (size_t i = 0; i < n->n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", n->items[i]->text);
    if (len < cap)
        snprintf(out + len, cap - len, "]");
}

/* Every default --config-keys states is the one a config resolves to,
 * whatever the architecture: tried on each arch with a uniform and a
 * sigmoid taper and every suite listed (so that every key is written). */
static void keys_defaults(void)
{
    static const char *const archs[] = {"transformer", "gated_attn", "hope_attn", "titans"};
    static const char *const given[] = {"arch", "taper.schedule", "model.d_model", "model.layers", "model.heads",
                                        "model.d_ff", "train.tokens", "eval.suites"};
    size_t n_keys = 0;
    eng_config_key k;
    while (eng_config_key_at(n_keys, &k) == 0)
        n_keys++;
    int *checked = calloc(n_keys, sizeof *checked), bad = 0, n = 0;
    for (int a = 0; a < 4; a++)
        for (int sigmoid = 0; sigmoid < 2; sigmoid++) {
            char text[512];
            snprintf(text, sizeof text,
                     "arch: %s\ntaper: {schedule: %s}\nmodel: {d_model: 64, layers: 2, heads: 4, d_ff: 128}\n"
                     "train: {tokens: 100000}\neval: {suites: [val, wikitext, lambada, commonsense, niah, alignment]}\n",
                     archs[a], sigmoid ? "sigmoid" : "uniform");
            eng_config c;
            tlm_err e = {0};
            tlm_cfg_node *json = NULL;
            char *s = NULL;
            if (parse("keys.yaml", text, &c, &e) || !(s = eng_config_json(&c)) ||
                tlm_cfg_parse_buffer("keys.json", s, strlen(s), &json, &e)) {
                TAP_DIAG("%s: %s", text, e.msg);
                bad++;
                free(s);
                continue;
            }
            for (size_t i = 0; eng_config_key_at(i, &k) == 0; i++) {
                int skip = k.computed;
                for (size_t g = 0; g < sizeof given / sizeof given[0]; g++)
                    skip |= !strcmp(k.key, given[g]);
                const tlm_cfg_node *v = json;
                char part[64];
                for (const char *p = k.key; v && *p;) {
                    size_t len = strcspn(p, ".");
                    snprintf(part, sizeof part, "%.*s", (int)len, p);
                    v = tlm_cfg_map_get(v, part);
                    p += len + (p[len] == '.');
                }
                if (skip || !v) /* not written: the key does not apply to this config */
                    continue;
                const char *want = strncmp(k.def, "preset, else ", 13) ? k.def : k.def + 13; /* no preset here */
                char got[512];
                value_text(v, got, sizeof got);
                checked[i] = 1;
                n++;
                if (strcmp(got, want)) {
                    TAP_DIAG("%s (arch %s): --config-keys says %s, a config resolves to %s", k.key, archs[a], want, got);
                    bad++;
                }
            }
            tlm_cfg_free(json);
            free(s);
        }
    for (size_t i = 0; eng_config_key_at(i, &k) == 0; i++) {
        int skip = k.computed;
        for (size_t g = 0; g < sizeof given / sizeof given[0]; g++)
            skip |= !strcmp(k.key, given[g]);
        if (!skip && !checked[i]) {
            TAP_DIAG("%s: its default was never written", k.key);
            bad++;
        }
    }
    free(checked);
    TAP_OK(n > 0 && !bad, "every stated default is the resolved one (%d comparisons)", n);
}

/* docs/config.md's key table says what the field table says: every key
 * once, with its type and default. */
static void keys_docs(void)
{
    const char *src = getenv("TLM_SRCDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/config.md", src ? src : ".");
    FILE *f = fopen(path, "r");
    TAP_OK(f != NULL, "%s opens", path);
    if (!f)
        return;
    size_t n_keys = 0;
    eng_config_key k;
    while (eng_config_key_at(n_keys, &k) == 0)
        n_keys++;
    int *seen = calloc(n_keys, sizeof *seen), rows = 0, bad = 0, in_keys = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3))
            in_keys = !strcmp(line, "## Keys\n");
        if (!in_keys || strncmp(line, "| ", 2) || !strncmp(line, "| key |", 7))
            continue;
        /* cells between unescaped '|', "\|" standing for a '|' */
        char cell[4][1024];
        int nc = 0;
        size_t len = 0;
        for (const char *p = line + 1; *p && *p != '\n' && nc < 4; p++) {
            if (*p == '|') {
                while (len && cell[nc][len - 1] == ' ')
                    len--;
                cell[nc++][len] = '\0';
                len = 0;
            } else if (len + 1 < sizeof cell[0] && (len || *p != ' ')) {
                if (*p == '\\' && p[1] == '|')
                    p++;
                cell[nc][len++] = *p;
            }
        }
        if (nc < 4) {
            TAP_DIAG("docs/config.md: a row of the key table without four cells: %s", line);
            bad++;
            continue;
        }
        rows++;
        size_t i = 0;
        while (eng_config_key_at(i, &k) == 0 && strcmp(k.key, cell[0]))
            i++;
        if (i == n_keys) {
            TAP_DIAG("docs/config.md names '%s', which is not a key", cell[0]);
            bad++;
        } else if (seen[i]++) {
            TAP_DIAG("docs/config.md names '%s' twice", cell[0]);
            bad++;
        } else if (strcmp(cell[1], k.type) || strcmp(cell[2], k.def)) {
            TAP_DIAG("docs/config.md: %s is '%s', default '%s'; the program says '%s', default '%s'", k.key, cell[1],
                     cell[2], k.type, k.def);
            bad++;
        }
    }
    fclose(f);
    for (size_t i = 0; i < n_keys; i++)
        if (!seen[i] && eng_config_key_at(i, &k) == 0) {
            TAP_DIAG("docs/config.md does not name %s", k.key);
            bad++;
        }
    free(seen);
    TAP_OK(rows > 0 && !bad, "docs/config.md names all %zu keys once, with the type and default of --config-keys",
           n_keys);
}

int main(void)
{
    presets();
    good();
    bad();
    bad_input();
    files();
    messages();
    keys_defaults();
    keys_docs();
    return tap_done();
}
