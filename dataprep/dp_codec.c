/* dp_codec.c: the small sub-commands: `encode` (stdin text -> ids on one
 * line), `decode` (ids -> text) and `train-bpe` (text -> a BPE rank file).
 * Scripts rely on the encode/decode formats: ids in decimal, separated by
 * single spaces, one line ending in a newline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataprep/dataprep.h"
#include "common/cfgtree.h"
#include "common/fileio.h"
#include "engine/tok/tokenizer.h"

#define STDIN_MAX (1ull << 32)

static int read_stdin(uint8_t **out, size_t *len, uint64_t max, tlm_err *e)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (;;) {
        if (n == cap) {
            if (cap >= max) {
                free(buf);
                return tlm_errf(e, TLM_EDATA, "stdin: more than %llu bytes (the limit)", (unsigned long long)max);
            }
            cap *= 2;
            uint8_t *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                return tlm_errf(e, TLM_ENOMEM, "out of memory reading stdin");
            }
            buf = g;
        }
        ssize_t r = read(0, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return tlm_errf(e, TLM_EIO, "stdin: %s", strerror(errno));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *len = n;
    return 0;
}

static const char encode_about[] =
    "Reads text on stdin and prints its token ids on stdout: decimal, separated\n"
    "by single spaces, on one line.\n";

static const char decode_about[] =
    "Reads token ids (decimal, separated by any white space) on stdin and\n"
    "writes the bytes they stand for on stdout.  Special tokens decode to\n"
    "their text (<|end_of_text|>).\n";

typedef struct codec_opts {
    const char *tok, *data;
    int special, raw;
} codec_opts;

/* Options of encode only: decode refuses them by name (decoding has no
 * text to read special tokens or invalid bytes from). */
#define ENCODE_ONLY TLM_OPT_MARK(0)

#define O(m) offsetof(codec_opts, m)
static const tlm_opt CODEC_OPTS[] = {
    {"tokenizer", "T", TLM_OPT_STR, O(tok), .flags = TLM_OPT_REQUIRED,
     .help = "bytes, llama3, llama2, bpeN (found as T.tiktoken, llama2 as llama2.model or llama2.vocab, in "
             "--data DIR, its parent, or the folders in $TLM_TOKENIZERS), or a tokenizer file path"},
    {"data", "DIR", TLM_OPT_STR, O(data), .help = "a dataset folder (or split folder) to find the tokenizer in"},
    {"special", NULL, TLM_OPT_FLAG, O(special), .flags = ENCODE_ONLY,
     .help = "text such as <|end_of_text|> becomes its special id (by default it is encoded as ordinary text)"},
    {"raw-bytes", NULL, TLM_OPT_FLAG, O(raw), .flags = ENCODE_ONLY,
     .help = "keep invalid UTF-8 bytes as byte tokens (lossless) instead of replacing them with U+FFFD as "
             "reference tokenizers do"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

/* encode's and decode's options: -1 when --help was printed, 0 to go on,
 * else the exit status */
static int parse_common(int argc, char **argv, int decode, codec_opts *o)
{
    tlm_cli cli = {.cmd = decode ? "tlm-data decode" : "tlm-data encode", .opts = CODEC_OPTS, .col = 17,
                   .hide = decode ? ENCODE_ONLY : 0};
    const char *about = decode ? decode_about : encode_about;
    int rc = dp_cli_parse(&cli, argc, argv, o, about, NULL);
    if (rc >= 0)
        return rc == DP_EXIT_OK ? -1 : rc;
    if (!o->tok) {
        fprintf(stderr, "tlm-data: --tokenizer is required\n");
        dp_cli_usage(stderr, &cli, about, NULL);
        return DP_EXIT_USAGE;
    }
    if (decode && (o->special || o->raw)) {
        fprintf(stderr, "tlm-data: decode: --%s does nothing when decoding (it applies to encode); leave it out\n",
                o->special ? "special" : "raw-bytes");
        return DP_EXIT_USAGE;
    }
    if (dp_check_tokenizer_arg(o->tok))
        return DP_EXIT_USAGE;
    tlm_err e;
    if (o->data && (tlm_path_check_len("--data", o->data, DP_TOK_PATH_MAX, &e) ||
                    tlm_path_not_file("--data", o->data, "a dataset folder", &e))) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return DP_EXIT_USAGE;
    }
    return 0;
}

int dp_cmd_encode(int argc, char **argv)
{
    codec_opts co = {0};
    int rc = parse_common(argc, argv, 0, &co);
    if (rc)
        return rc < 0 ? DP_EXIT_OK : rc;
    const char *tokname = co.tok, *data = co.data;
    int flags = (co.special ? ENG_TOK_ALLOW_SPECIAL : 0) | (co.raw ? ENG_TOK_RAW_BYTES : 0);
    tlm_err e = {0};
    eng_tok *t = NULL;
    uint8_t *text = NULL;
    size_t len = 0;
    eng_tokvec ids = {0};
    if ((rc = eng_tok_open(&t, tokname, data ? data : ".", &e)) || (rc = read_stdin(&text, &len, STDIN_MAX, &e)) ||
        (rc = eng_tok_encode(t, text, len, flags, &ids, &e))) {
        free(text);
        eng_tok_free(t);
        eng_tokvec_clear(&ids);
        return dp_fail(&e);
    }
    /* one buffered line */
    char *out = malloc(ids.n * 11 + 2);
    size_t o = 0;
    if (!out) {
        fprintf(stderr, "tlm-data: out of memory\n");
        return DP_EXIT_FAIL;
    }
    for (size_t i = 0; i < ids.n; i++)
        o += (size_t)sprintf(out + o, i ? " %u" : "%u", ids.ids[i]);
    out[o++] = '\n';
    int bad = fwrite(out, 1, o, stdout) != o || fflush(stdout);
    free(out);
    free(text);
    eng_tok_free(t);
    eng_tokvec_clear(&ids);
    if (bad) {
        fprintf(stderr, "tlm-data: writing stdout: %s\n", strerror(errno));
        return DP_EXIT_FAIL;
    }
    return DP_EXIT_OK;
}

int dp_cmd_decode(int argc, char **argv)
{
    codec_opts co = {0};
    int rc = parse_common(argc, argv, 1, &co);
    if (rc)
        return rc < 0 ? DP_EXIT_OK : rc;
    const char *tokname = co.tok, *data = co.data;
    tlm_err e = {0};
    eng_tok *t = NULL;
    uint8_t *text = NULL, *out = NULL;
    size_t len = 0, olen = 0, ocap = 0;
    eng_tokvec ids = {0};
    if ((rc = eng_tok_open(&t, tokname, data ? data : ".", &e)) || (rc = read_stdin(&text, &len, STDIN_MAX, &e)))
        goto done;
    for (size_t i = 0; i < len && !rc;) {
        while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
            i++;
        if (i == len)
            break;
        size_t s = i;
        uint64_t v = 0;
        int neg = text[i] == '-';
        i += (size_t)neg;
        while (i < len && text[i] >= '0' && text[i] <= '9') {
            v = v <= UINT32_MAX ? v * 10 + (uint64_t)(text[i] - '0') : v; /* past UINT32_MAX: out of range */
            i++;
        }
        int digits = i > s + (size_t)neg, ends = i == len || text[i] == ' ' || text[i] == '\n' || text[i] == '\t' ||
                                                   text[i] == '\r';
        size_t w = s;
        while (w < len && w - s < 24 && !(text[w] == ' ' || text[w] == '\n' || text[w] == '\t' || text[w] == '\r'))
            w++;
        /* a whole number is told from a token id the tokenizer has: a
         * number out of its range is not "not a whole number" */
        uint32_t vocab = eng_tok_vocab(t);
        if (!digits || !ends)
            rc = tlm_errf(&e, TLM_EDATA, "stdin: item %zu ('%.*s') is not a token id (a whole number from 0 to %u)",
                          ids.n + 1, (int)(w - s), (const char *)text + s, vocab - 1);
        else if (neg || v >= vocab)
            rc = tlm_errf(&e, TLM_EDATA,
                          "stdin: item %zu (%.*s) is out of range: tokenizer %s has ids 0 to %u", ids.n + 1,
                          (int)(w - s), (const char *)text + s, tokname, vocab - 1);
        if (rc)
            break;
        rc = eng_tokvec_push(&ids, (uint32_t)v, &e);
    }
    if (!rc)
        rc = eng_tok_decode(t, ids.ids, ids.n, &out, &olen, &ocap, &e);
    if (!rc && ((olen && fwrite(out, 1, olen, stdout) != olen) || fflush(stdout)))
        rc = tlm_errf(&e, TLM_EIO, "writing stdout: %s", strerror(errno));
done:
    free(text);
    free(out);
    eng_tok_free(t);
    eng_tokvec_clear(&ids);
    return rc ? dp_fail(&e) : DP_EXIT_OK;
}

/* ------------------------------------------------------------ train-bpe */
static const char train_about[] =
    "Learns a byte-level BPE of N ids (ids 0..255 are the bytes, N-1 is\n"
    "<|endoftext|>) from text files, folders of them, or JSONL, and writes its\n"
    "N-1 ranks as a tiktoken rank file (default: bpeN.tiktoken).  A job with\n"
    "`tokenizer: bpeN` finds that file in its dataset folder: `tlm-data build\n"
    "--tokenizer bpeN --train-bpe` trains it on the training split and puts it\n"
    "there (docs/tokenizers.md).  Deterministic: the same inputs give the same file.\n";

typedef struct train_opts {
    int vocab;
    const char *out, *field, *format;
} train_opts;

#define O(m) offsetof(train_opts, m)
static const tlm_opt TRAIN_OPTS[] = {
    {"vocab", "N", TLM_OPT_INT, O(vocab), .lo = 257, .hi = 1 << 20, .flags = TLM_OPT_REQUIRED,
     .help = "ids in all, e.g. 4096"},
    {"out", "FILE", TLM_OPT_STR, O(out), .help = "where to write the rank file (default: bpeN.tiktoken)"},
    {"format", NULL, TLM_OPT_CHOICE, O(format), .choices = dp_format_names, .def = "auto",
     .help = "auto: *.jsonl is JSONL, else text"},
    {"field", "NAME", TLM_OPT_STR, O(field), .def = "text", .help = "the JSONL field holding the text"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

typedef struct train_ctx {
    eng_bpe_trainer *tr;
} train_ctx;

static int feed_doc(void *arg, const dp_source *src, uint64_t line, const uint8_t *doc, size_t len, tlm_err *e)
{
    (void)src;
    (void)line;
    return eng_bpe_trainer_feed(((train_ctx *)arg)->tr, doc, len, e);
}

static void merge_progress(void *arg, uint64_t done, uint64_t total)
{
    dp_progress_update(arg, done, NULL);
    (void)total;
}

int dp_cmd_train_bpe(int argc, char **argv)
{
    train_opts to = {0};
    tlm_cli cli = {.cmd = "tlm-data train-bpe", .opts = TRAIN_OPTS, .col = 17, .operands = "INPUT..."};
    int rc = dp_cli_parse(&cli, argc, argv, &to, train_about, NULL);
    if (rc >= 0)
        return rc;
    long vocab = to.vocab;
    const char *out = to.out, *field = to.field;
    dp_format fmt = (dp_format)tlm_cli_choice(dp_format_names, to.format);
    tlm_err e = {0};
    if (!vocab) {
        fprintf(stderr, "tlm-data: --vocab is required\n");
        dp_cli_usage(stderr, &cli, train_about, NULL);
        return DP_EXIT_USAGE;
    }
    if (tlm_cli_given(&cli, "field") && fmt == DP_TEXT) {
        fprintf(stderr, "tlm-data: --field does nothing with --format text (it names the JSONL field); leave it out\n");
        return DP_EXIT_USAGE;
    }
    if (cli.next >= argc) { /* a usage error, as for build (docs/data.md: exit 2) */
        fprintf(stderr, "tlm-data: no input files or folders given (text files, folders or JSONL files to learn "
                        "the merges from)\n");
        dp_cli_usage(stderr, &cli, train_about, NULL);
        return DP_EXIT_USAGE;
    }
    char def[64];
    snprintf(def, sizeof def, "bpe%ld.tiktoken", vocab);
    if (!out)
        out = def;
    /* the rank file is written as OUT.tmp.PID, then renamed */
    if (tlm_path_check_len("--out", out, TLM_PATH_CAP - 1 - 32, &e) ||
        tlm_path_not_dir("--out", out, "the rank file to write, such as bpe4096.tiktoken", &e)) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return DP_EXIT_USAGE;
    }
    dp_sources src;
    eng_bpe_trainer *tr = NULL;
    rc = dp_sources_collect(&src, argv + cli.next, argc - cli.next, fmt, &e);
    if (!rc)
        rc = eng_bpe_trainer_new(&tr, &e);
    dp_progress pg;
    if (!rc) {
        train_ctx ctx = {tr};
        dp_progress_start(&pg, "counting", src.total_bytes);
        rc = dp_sources_walk(&src, field, 1u << 28, &pg, feed_doc, &ctx, &e);
        dp_progress_end(&pg, NULL);
    }
    if (!rc) {
        dp_progress_start(&pg, "merging", (uint64_t)vocab - 257);
        rc = eng_bpe_trainer_finish(tr, (uint32_t)vocab, out, merge_progress, &pg, &e);
        char msg[TLM_MSG_MAX];
        tlm_msg_printf(msg, sizeof msg, "wrote %s: %ld ids from %zu files, %.1f MB", out, vocab, src.n,
                       (double)src.total_bytes / 1e6);
        dp_progress_end(&pg, rc ? NULL : msg);
    }
    eng_bpe_trainer_free(tr);
    dp_sources_clear(&src);
    return rc ? dp_fail(&e) : DP_EXIT_OK;
}

/* ------------------------------------------------------------ vocab */
static const char vocab_about[] =
    "Writes a SentencePiece model (a tokenizer.model, such as Llama 2's) as a\n"
    "plain vocabulary file: one piece per line with its type and score\n"
    "(docs/data.md, \"SentencePiece vocabulary files\").  Both encode alike\n"
    "and have the same definition hash; `tokenizer: llama2` finds either as\n"
    "llama2.model or llama2.vocab in the dataset folder.\n";

typedef struct vocab_opts {
    const char *in, *out;
} vocab_opts;

#define O(m) offsetof(vocab_opts, m)
static const tlm_opt VOCAB_OPTS[] = {
    {"tokenizer", "FILE.model", TLM_OPT_STR, O(in), .flags = TLM_OPT_REQUIRED,
     .help = "the SentencePiece model to read"},
    {"out", "FILE.vocab", TLM_OPT_STR, O(out), .flags = TLM_OPT_REQUIRED, .help = "the vocabulary file to write"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

int dp_cmd_vocab(int argc, char **argv)
{
    vocab_opts vo = {0};
    tlm_cli cli = {.cmd = "tlm-data vocab", .opts = VOCAB_OPTS, .col = 23};
    int rc = dp_cli_parse(&cli, argc, argv, &vo, vocab_about, NULL);
    if (rc >= 0)
        return rc;
    const char *in = vo.in, *out = vo.out;
    if (!in || !out) {
        fprintf(stderr, "tlm-data: vocab needs --tokenizer and --out, and nothing else\n");
        dp_cli_usage(stderr, &cli, vocab_about, NULL);
        return DP_EXIT_USAGE;
    }
    tlm_err e = {0};
    if (tlm_path_check_len("--out", out, TLM_PATH_CAP - 1 - 32, &e) ||
        tlm_path_not_dir("--out", out, "the vocabulary file to write, such as llama2.vocab", &e) ||
        tlm_path_not_dir("--tokenizer", in, "a SentencePiece tokenizer.model", &e)) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return DP_EXIT_USAGE;
    }
    eng_tok *t = NULL;
    rc = eng_tok_open_file(&t, in, NULL, &e);
    if (!rc)
        rc = eng_tok_write_vocab(t, out, &e);
    if (!rc)
        fprintf(stderr, "tlm-data: wrote %s: %u pieces\n", out, eng_tok_vocab(t));
    eng_tok_free(t);
    return rc ? dp_fail(&e) : DP_EXIT_OK;
}
