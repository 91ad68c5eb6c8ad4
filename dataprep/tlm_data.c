/* tlm_data.c: main() of tlm-data, the data-preparation program: dispatches
 * to the sub-commands (build, encode, decode, train-bpe, vocab) and owns the
 * program's exit statuses and error printing. */
#include <stdio.h>
#include <string.h>

#include "dataprep/dataprep.h"
#include "common/fileio.h"

static const char usage[] =
    "usage: tlm-data COMMAND [OPTIONS]\n"
    "\n"
    "Turns text into the token shards that TLM trains on, and converts\n"
    "between text and token ids.\n"
    "\n"
    "commands:\n"
    "  build      text files, folders or JSONL -> DIR/{train,val}/*.tlmtok + DIR/manifest.json\n"
    "  encode     text on stdin -> token ids on stdout (space-separated, one line)\n"
    "  decode     token ids on stdin -> text on stdout\n"
    "  train-bpe  learn a byte-level BPE of N ids from text (a tiktoken rank file)\n"
    "  vocab      a SentencePiece tokenizer.model (Llama 2's) -> a plain vocabulary file\n"
    "\n"
    "`tlm-data COMMAND --help` describes each; docs/data.md and docs/tokenizers.md\n"
    "describe the files.\n";

int dp_fail(const tlm_err *e)
{
    fprintf(stderr, "tlm-data: %s error: %s\n", tlm_status_kind(e->code), e->msg);
    return DP_EXIT_FAIL;
}

const char *const dp_format_names[] = {"auto", "text", "jsonl", NULL};

void dp_cli_usage(FILE *f, const tlm_cli *cli, const char *about, const char *tail)
{
    tlm_cli_synopsis(f, cli, "usage: ");
    fprintf(f, "\n%s\n", about);
    tlm_cli_options(f, cli);
    if (tail)
        fprintf(f, "\n%s", tail);
}

typedef struct {
    const char *about, *tail;
} help_text;

static void help(FILE *f, const tlm_cli *cli, const void *arg)
{
    const help_text *h = arg;
    dp_cli_usage(f, cli, h->about, h->tail);
}

int dp_cli_parse(tlm_cli *cli, int argc, char **argv, void *opts, const char *about, const char *tail)
{
    help_text h = {about, tail};
    return tlm_cli_main(cli, "tlm-data", argc, argv, opts, help, &h, DP_EXIT_USAGE, DP_EXIT_FAIL);
}

int dp_check_tokenizer_arg(const char *tok)
{
    tlm_err e;
    int path_like = strchr(tok, '/') || strchr(tok, '.'); /* the rule of eng_tok_find */
    if (tlm_path_check_len("--tokenizer", tok, DP_TOK_PATH_MAX, &e) ||
        (path_like && tlm_path_not_dir("--tokenizer", tok, "a tokenizer name or a tiktoken rank file", &e))) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return DP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return DP_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("tlm-data (TLM) dataset format %s\n", DP_VERSION);
        return DP_EXIT_OK;
    }
    if (!strcmp(cmd, "build"))
        return dp_cmd_build(argc - 1, argv + 1);
    if (!strcmp(cmd, "encode"))
        return dp_cmd_encode(argc - 1, argv + 1);
    if (!strcmp(cmd, "decode"))
        return dp_cmd_decode(argc - 1, argv + 1);
    if (!strcmp(cmd, "train-bpe"))
        return dp_cmd_train_bpe(argc - 1, argv + 1);
    if (!strcmp(cmd, "vocab"))
        return dp_cmd_vocab(argc - 1, argv + 1);
    fprintf(stderr, "tlm-data: unknown command '%s' (try tlm-data --help)\n", cmd);
    return DP_EXIT_USAGE;
}
