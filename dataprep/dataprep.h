/* dataprep.h: the inside of tlm-data (one header for its few files): the
 * sub-commands, reading sources (text files, folders, JSONL), the progress
 * display.  Library code lives in the engine (tokenizer.h, shard.h); this
 * program only glues it to files and a terminal.  Functions return 0 or a
 * negative tlm_status with an tlm_err; only main() prints and exits. */
#ifndef TLM_DATAPREP_H
#define TLM_DATAPREP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/cli.h"
#include "common/err.h"

#define DP_VERSION "1"

int dp_cmd_build(int argc, char **argv);
int dp_cmd_encode(int argc, char **argv);
int dp_cmd_decode(int argc, char **argv);
int dp_cmd_train_bpe(int argc, char **argv);
int dp_cmd_vocab(int argc, char **argv);

/* Exit statuses of the program. */
enum { DP_EXIT_OK = 0, DP_EXIT_FAIL = 1, DP_EXIT_USAGE = 2 };

/* Print "tlm-data: <kind> error: msg" on stderr; returns DP_EXIT_FAIL. */
int dp_fail(const tlm_err *e);
/* A sub-command's options (common/cli.h) into opts: -1 to go on, else the
 * exit status: --help prints the usage (the synopsis, about, the options,
 * then tail) and is DP_EXIT_OK; a usage error is said and DP_EXIT_USAGE. */
int dp_cli_parse(tlm_cli *cli, int argc, char **argv, void *opts, const char *about, const char *tail);
/* The usage of a sub-command, as dp_cli_parse prints it. */
void dp_cli_usage(FILE *f, const tlm_cli *cli, const char *about, const char *tail);
/* --format's values, in dp_format's order (a CHOICE row's choices). */
extern const char *const dp_format_names[];
/* Longest --tokenizer or --data path: the tokenizer lookup (eng_tok_find)
 * builds its candidates in 1,024-byte buffers. */
#define DP_TOK_PATH_MAX 1000
/* The --tokenizer argument of every command: a name, or a rank file
 * path (with a '/' or a '.'), which must then not be a folder.  Prints
 * the reason and returns -1 when it is refused. */
int dp_check_tokenizer_arg(const char *tok);

/* ------------------------------------------------------------ sources */
typedef enum dp_format { DP_AUTO = 0, DP_TEXT, DP_JSONL } dp_format;

typedef struct dp_source {
    char *path;
    uint64_t bytes;
    dp_format format;       /* resolved: DP_TEXT or DP_JSONL */
    uint8_t sha256[32];     /* filled when read */
    uint64_t documents;     /* filled when read */
} dp_source;

typedef struct dp_sources {
    dp_source *v;
    size_t n;
    uint64_t total_bytes;
} dp_sources;

/* Expand files and folders (recursively, name order, skipping hidden
 * entries) into a list; `format` DP_AUTO picks JSONL for *.jsonl. */
int dp_sources_collect(dp_sources *s, char **inputs, int n_inputs, dp_format format, tlm_err *e);
void dp_sources_clear(dp_sources *s);

/* Called once per document: its bytes, the source and the 1-based line
 * (JSONL) or 0 (a whole text file).  A non-zero return stops the walk. */
typedef int (*dp_doc_fn)(void *arg, const dp_source *src, uint64_t line, const uint8_t *doc, size_t len,
                         tlm_err *e);

struct dp_progress;
/* Read every source in order, calling fn per document; fills each source's
 * sha256 and documents.  JSONL: one object per non-blank line, its string
 * field `field`; errors name file:line.  max_line bounds one JSONL line.
 * prog (may be NULL) is advanced by bytes read. */
int dp_sources_walk(dp_sources *s, const char *field, size_t max_line, struct dp_progress *prog, dp_doc_fn fn,
                    void *arg, tlm_err *e);

/* ------------------------------------------------------------ progress */
typedef struct dp_progress {
    int tty;                /* draw a bar (stderr is a terminal) */
    const char *what;       /* "encoding", "counting", ... */
    uint64_t total, done;
    double t0, last_draw;
    int last_pct;           /* plain mode: last 10% step printed */
} dp_progress;

void dp_progress_start(dp_progress *p, const char *what, uint64_t total);
void dp_progress_update(dp_progress *p, uint64_t done, const char *label);
void dp_progress_end(dp_progress *p, const char *summary);

/* Parse a byte size "65536", "64k", "16M", "1G". */
int dp_parse_size(const char *s, uint64_t *out);

#endif
