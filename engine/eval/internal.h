/* internal.h: what the evaluation suites (the files of engine/eval/) share:
 * growable text, a bounded JSONL reader whose errors name file and line,
 * lm-evaluation-harness's request scoring (context/continuation encoding,
 * truncation, log-likelihood and greediness), greedy generation, and the
 * statistics every suite reports.  Names are ev_ (internal to the engine). */
#ifndef TLM_ENGINE_EVAL_INTERNAL_H
#define TLM_ENGINE_EVAL_INTERNAL_H

#include <jansson.h>
#include <stdio.h>

#include "engine/config/suites.h"
#include "common/utf8.h"
#include "engine/eval/eval.h"

/* Bounds on untrusted input. */
#define EV_LINE_MAX ((size_t)4 << 20)   /* one JSONL line */
#define EV_ITEMS_MAX 10000000           /* items per file */
#define EV_TEXT_MAX ((size_t)1 << 30)   /* a whole text file (WikiText, haystack) */
#define EV_CHOICES_MAX 16

/* A model without logits is the evaluator's check (eng_evaluator_check):
 * every suite reads, parses and encodes all its inputs and validates them
 * as it would for scoring, then stops before scoring anything. */
static inline int ev_checking(const eng_eval_lm *lm) { return lm->logits == NULL; }

/* ------------------------------------------------------------ text */
typedef struct ev_buf {
    char *p;        /* NUL-terminated */
    size_t n, cap;
} ev_buf;

int ev_put(ev_buf *b, const void *s, size_t n, tlm_err *e);
int ev_puts(ev_buf *b, const char *s, tlm_err *e);
void ev_buf_clear(ev_buf *b);

/* Python's str.isspace() (what re's \s matches in a str pattern). */
int ev_py_space(uint32_t cp);
/* Code points in s[0, n) (Python's len() of the decoded str). */
size_t ev_utf8_len(const char *s, size_t n);

/* ------------------------------------------------------------ JSONL */
typedef struct ev_jsonl {
    FILE *f;
    char path[ENG_PATH_MAX];
    int64_t line;       /* 1-based number of the line last read */
    int64_t items;      /* objects returned so far */
    char *buf;
    size_t cap;
} ev_jsonl;

int ev_jsonl_open(ev_jsonl *r, const char *path, tlm_err *e);
/* Next object (blank lines skipped): 1 with *obj (caller json_decref's), 0
 * at the end, or TLM_EDATA "path:line: ...". */
int ev_jsonl_next(ev_jsonl *r, json_t **obj, tlm_err *e);
void ev_jsonl_close(ev_jsonl *r);
/* Fields, with "path:line: field 'x' ..." errors. */
int ev_get_str(const ev_jsonl *r, json_t *o, const char *key, const char **out, tlm_err *e);
/* An integer, or a string holding one (datasets write labels both ways). */
int ev_get_int(const ev_jsonl *r, json_t *o, const char *key, int64_t *out, tlm_err *e);
/* "path:line: " + message, TLM_EDATA. */
int ev_item_err(const ev_jsonl *r, tlm_err *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Read a whole text file (at most EV_TEXT_MAX bytes). */
int ev_read_text(const char *path, const char *what, char **out, size_t *len, tlm_err *e);

/* ------------------------------------------------------------ requests */
/* One log-likelihood request: `full` = context tokens then continuation
 * tokens; scored as lm-evaluation-harness does: the input is
 * full[-(max_length+1):][:-1] and the last n_cont logits score the
 * continuation. */
typedef struct ev_req {
    int32_t *full;      /* (n_ctx + n_cont) */
    size_t n_ctx, n_cont;
    int own;            /* full is malloc'd by this request */
    double loglik;      /* out: sum log p(cont) */
    int greedy;         /* out */
} ev_req;

/* Encode (context, continuation) the harness's way: trailing spaces of the
 * context move to the continuation, the whole string is encoded, and the
 * continuation is what follows the context's own encoding. */
int ev_encode_pair(eng_tok *tok, const char *ctx, size_t ctx_len, const char *cont, size_t cont_len, ev_req *r,
                   tlm_err *e);
void ev_req_clear(ev_req *r);

/* Score n requests in batches of at most lm->max_B rows (longest first). */
int ev_score(const eng_eval_lm *lm, int max_length, ev_req *reqs, size_t n, const eng_eval_sink *s, tlm_err *e);

/* Greedy generation after prompt (n tokens): at most max_new tokens, each
 * the argmax of the last position; stop(ud, gen, k) != 0 ends it early.
 * out (max_new) receives the tokens, *n_out their number. */
int ev_generate(const eng_eval_lm *lm, const int32_t *prompt, size_t n, int max_new,
                int (*stop)(void *ud, const int32_t *gen, size_t k), void *ud, int32_t *out, size_t *n_out,
                tlm_err *e);


/* Encode text to a token vector of int32 (malloc'd). */
int ev_encode(eng_tok *tok, const char *s, size_t n, int32_t **out, size_t *n_out, tlm_err *e);

/* ------------------------------------------------------------ niah (tests) */
/* Item `index` of S-NIAH task (0, 1, 2 = s_niah_1/2/3) at `length`: its
 * prompt text and ids, the value to find, the generation budget. */
int ev_niah_prompt(eng_tok *tok, const char *haystack, int task, uint64_t seed, int64_t length, int64_t index,
                   ev_buf *prompt, char value[64], int32_t **ids, size_t *n_ids, int *max_new, tlm_err *e);
/* The exact-match rule on a generated text. */
int ev_niah_score_text(const char *value, const char *text);

/* ------------------------------------------------------------ statistics */
/* Sample standard error of the mean (n-1 in the variance), NaN for n < 2. */
double ev_stderr(const double *x, size_t n);
double ev_mean(const double *x, size_t n);
double ev_pearson(const double *x, const double *y, size_t n);

/* Report helpers. */
void ev_result(const eng_eval_sink *s, const char *suite, const char *task, const char *metric, double value,
               int64_t n, double se);
void ev_log(const eng_eval_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ev_tick(const eng_eval_sink *s, tlm_err *e);

#endif
