/* dp_codec.c: the small sub-commands: `encode` (stdin text -> ids on one
 * line), `decode` (ids -> text) and `train-bpe` (text -> a BPE rank file).
 * Scripts rely on the encode/decode formats: ids in decimal, separated by
 * single spaces, one line ending in a newline. */
#include <errno.h>
#include <getopt.h>
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

static const char encode_help[] =
    "usage: tlm-data encode --tokenizer NAME|FILE [--data DIR] [--special] [--raw-bytes]\n"
    "\n"
    "Reads text on stdin and prints its token ids on stdout: decimal, separated\n"
    "by single spaces, on one line.\n"
    "\n"
    "  --tokenizer T  bytes, llama3, llama2, bpeN (found as T.tiktoken, llama2 as\n"
    "                 llama2.model or llama2.vocab, in --data DIR, its parent, or\n"
    "                 the folders in $TLM_TOKENIZERS), or a tokenizer file path\n"
    "  --data DIR     a dataset folder (or split folder) to find the tokenizer in\n"
    "  --special      text such as <|end_of_text|> becomes its special id\n"
    "                 (by default it is encoded as ordinary text)\n"
    "  --raw-bytes    keep invalid UTF-8 bytes as byte tokens (lossless) instead\n"
    "                 of replacing them with U+FFFD as reference tokenizers do\n";

static const char decode_help[] =
    "usage: tlm-data decode --tokenizer NAME|FILE [--data DIR]\n"
    "\n"
    "Reads token ids (decimal, separated by any white space) on stdin and\n"
    "writes the bytes they stand for on stdout.  Special tokens decode to\n"
    "their text (<|end_of_text|>).\n";

enum { OPT_TOK = 1000, OPT_DATA, OPT_SPECIAL, OPT_RAW, OPT_HELP, OPT_VOCAB, OPT_OUT, OPT_FORMAT, OPT_FIELD };

static int parse_common(int argc, char **argv, const char *help, const char **tok, const char **data, int *flags)
{
    static const struct option opts[] = {{"tokenizer", required_argument, 0, OPT_TOK},
                                         {"data", required_argument, 0, OPT_DATA},
                                         {"special", no_argument, 0, OPT_SPECIAL},
                                         {"raw-bytes", no_argument, 0, OPT_RAW},
                                         {"help", no_argument, 0, OPT_HELP},
                                         {0, 0, 0, 0}};
    int c, li = -1, special = 0, raw = 0;
    unsigned char given[sizeof opts / sizeof opts[0]] = {0};
    optind = 1;
    opterr = 0;
    for (; (c = getopt_long(argc, argv, "h", opts, &li)) != -1; li = -1) {
        if (li >= 0 && given[li]++ && opts[li].has_arg) {
            fprintf(stderr, "tlm-data: --%s is given twice; give it once\n", opts[li].name);
            return DP_EXIT_USAGE;
        }
        special |= c == OPT_SPECIAL;
        raw |= c == OPT_RAW;
        switch (c) {
        case OPT_TOK: *tok = optarg; break;
        case OPT_DATA: *data = optarg; break;
        case OPT_SPECIAL: *flags |= ENG_TOK_ALLOW_SPECIAL; break;
        case OPT_RAW: *flags |= ENG_TOK_RAW_BYTES; break;
        case 'h':
        case OPT_HELP: fputs(help, stdout); return -1;
        default:
            fprintf(stderr, "tlm-data: unknown or incomplete option '%s'\n%s", argv[optind - 1], help);
            return DP_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlm-data: unexpected argument '%s' (text comes on stdin)\n%s", argv[optind], help);
        return DP_EXIT_USAGE;
    }
    if (!*tok) {
        fprintf(stderr, "tlm-data: --tokenizer is required\n%s", help);
        return DP_EXIT_USAGE;
    }
    /* decoding has no text to read special tokens or invalid bytes from */
    if (help == decode_help && (special || raw)) {
        fprintf(stderr, "tlm-data: decode: --%s does nothing when decoding (it applies to encode); leave it out\n",
                special ? "special" : "raw-bytes");
        return DP_EXIT_USAGE;
    }
    if (dp_check_tokenizer_arg(*tok))
        return DP_EXIT_USAGE;
    tlm_err e;
    if (*data && (tlm_path_check_len("--data", *data, DP_TOK_PATH_MAX, &e) ||
                  tlm_path_not_file("--data", *data, "a dataset folder", &e))) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return DP_EXIT_USAGE;
    }
    return 0;
}

int dp_cmd_encode(int argc, char **argv)
{
    const char *tokname = NULL, *data = NULL;
    int flags = 0;
    int rc = parse_common(argc, argv, encode_help, &tokname, &data, &flags);
    if (rc)
        return rc < 0 ? DP_EXIT_OK : rc;
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
    const char *tokname = NULL, *data = NULL;
    int flags = 0;
    int rc = parse_common(argc, argv, decode_help, &tokname, &data, &flags);
    if (rc)
        return rc < 0 ? DP_EXIT_OK : rc;
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
        while (i < len && text[i] >= '0' && text[i] <= '9' && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(text[i++] - '0');
        if (i == s || (i < len && !(text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) ||
            v > UINT32_MAX) {
            size_t w = s;
            while (w < len && w - s < 20 && !(text[w] == ' ' || text[w] == '\n'))
                w++;
            rc = tlm_errf(&e, TLM_EDATA, "stdin: item %zu ('%.*s') is not a token id (a whole number)", ids.n + 1,
                          (int)(w - s), (const char *)text + s);
            break;
        }
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
static const char train_help[] =
    "usage: tlm-data train-bpe --vocab N [--out FILE] [--format auto|text|jsonl] [--field NAME] INPUT...\n"
    "\n"
    "Learns a byte-level BPE of N ids (ids 0..255 are the bytes, N-1 is\n"
    "<|endoftext|>) from text files, folders of them, or JSONL, and writes its\n"
    "N-1 ranks as a tiktoken rank file (default: bpeN.tiktoken).  A job with\n"
    "`tokenizer: bpeN` finds that file in its dataset folder: `tlm-data build\n"
    "--tokenizer bpeN --train-bpe` trains it on the training split and puts it\n"
    "there (docs/tokenizers.md).  Deterministic: the same inputs give the same file.\n"
    "\n"
    "  --vocab N      ids in all (257 .. 1048576), e.g. 4096\n"
    "  --out FILE     where to write the rank file\n"
    "  --format F     auto (default: *.jsonl is JSONL), text or jsonl\n"
    "  --field NAME   the JSONL field holding the text (default: text)\n";

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
    static const struct option opts[] = {{"vocab", required_argument, 0, OPT_VOCAB},
                                         {"out", required_argument, 0, OPT_OUT},
                                         {"format", required_argument, 0, OPT_FORMAT},
                                         {"field", required_argument, 0, OPT_FIELD},
                                         {"help", no_argument, 0, OPT_HELP},
                                         {0, 0, 0, 0}};
    long vocab = 0;
    const char *out = NULL, *field = "text";
    dp_format fmt = DP_AUTO;
    int c, li = -1, field_given = 0;
    unsigned char given[sizeof opts / sizeof opts[0]] = {0};
    tlm_err e = {0};
    optind = 1;
    opterr = 0;
    for (; (c = getopt_long(argc, argv, "h", opts, &li)) != -1; li = -1) {
        if (li >= 0 && given[li]++ && opts[li].has_arg) {
            fprintf(stderr, "tlm-data: --%s is given twice; give it once\n", opts[li].name);
            return DP_EXIT_USAGE;
        }
        field_given |= c == OPT_FIELD;
        switch (c) {
        case OPT_VOCAB: {
            int64_t v;
            if (tlm_cfg_arg_int("--vocab", optarg, 257, 1 << 20, &v, &e)) {
                fprintf(stderr, "tlm-data: %s\n", e.msg);
                return DP_EXIT_USAGE;
            }
            vocab = (long)v;
            break;
        }
        case OPT_OUT: out = optarg; break;
        case OPT_FIELD: field = optarg; break;
        case OPT_FORMAT:
            if (!strcmp(optarg, "auto"))
                fmt = DP_AUTO;
            else if (!strcmp(optarg, "text"))
                fmt = DP_TEXT;
            else if (!strcmp(optarg, "jsonl"))
                fmt = DP_JSONL;
            else {
                fprintf(stderr, "tlm-data: --format must be auto, text or jsonl\n");
                return DP_EXIT_USAGE;
            }
            break;
        case 'h':
        case OPT_HELP: fputs(train_help, stdout); return DP_EXIT_OK;
        default:
            fprintf(stderr, "tlm-data: unknown or incomplete option '%s'\n%s", argv[optind - 1], train_help);
            return DP_EXIT_USAGE;
        }
    }
    if (!vocab) {
        fprintf(stderr, "tlm-data: --vocab is required\n%s", train_help);
        return DP_EXIT_USAGE;
    }
    if (field_given && fmt == DP_TEXT) {
        fprintf(stderr, "tlm-data: --field does nothing with --format text (it names the JSONL field); leave it out\n");
        return DP_EXIT_USAGE;
    }
    if (optind >= argc) { /* a usage error, as for build (docs/data.md: exit 2) */
        fprintf(stderr, "tlm-data: no input files or folders given (text files, folders or JSONL files to learn "
                        "the merges from)\n%s", train_help);
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
    int rc = dp_sources_collect(&src, argv + optind, argc - optind, fmt, &e);
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
static const char vocab_help[] =
    "usage: tlm-data vocab --tokenizer FILE.model --out FILE.vocab\n"
    "\n"
    "Writes a SentencePiece model (a tokenizer.model, such as Llama 2's) as a\n"
    "plain vocabulary file: one piece per line with its type and score\n"
    "(docs/data.md, \"SentencePiece vocabulary files\").  Both encode alike\n"
    "and have the same definition hash; `tokenizer: llama2` finds either as\n"
    "llama2.model or llama2.vocab in the dataset folder.\n";

int dp_cmd_vocab(int argc, char **argv)
{
    static const struct option opts[] = {{"tokenizer", required_argument, 0, 't'},
                                         {"out", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *in = NULL, *out = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
        case 'o':
            if (c == 't' ? in != NULL : out != NULL) {
                fprintf(stderr, "tlm-data: --%s is given twice; give it once\n", c == 't' ? "tokenizer" : "out");
                return DP_EXIT_USAGE;
            }
            *(c == 't' ? &in : &out) = optarg;
            break;
        case 'h': fputs(vocab_help, stdout); return DP_EXIT_OK;
        default:
            fprintf(stderr, "tlm-data: unknown or incomplete option '%s'\n%s", argv[optind - 1], vocab_help);
            return DP_EXIT_USAGE;
        }
    }
    if (!in || !out || optind < argc) {
        fprintf(stderr, "tlm-data: vocab needs --tokenizer and --out, and nothing else\n%s", vocab_help);
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
    int rc = eng_tok_open_file(&t, in, NULL, &e);
    if (!rc)
        rc = eng_tok_write_vocab(t, out, &e);
    if (!rc)
        fprintf(stderr, "tlm-data: wrote %s: %u pieces\n", out, eng_tok_vocab(t));
    eng_tok_free(t);
    return rc ? dp_fail(&e) : DP_EXIT_OK;
}
