/* wikitext.c: the `wikitext` suite, lm-evaluation-harness's
 * "wikitext" task (v2) computed from a raw WikiText file
 * (wikitext-2-raw-v1's wiki.test.raw):
 *
 *   documents   the file is cut into pages at top-level headings the way the
 *               harness's dataset (EleutherAI/wikitext_document_level)
 *               does: a line is a heading when, after "= = =" -> "===" and
 *               "= =" -> "==" and stripping, it starts with "= " and ends
 *               with " ="; a page is its heading line and every line up to
 *               the next heading, joined with "\n"; blank pages are dropped.
 *   scored text the page after the harness's wikitext_detokenizer;
 *   windows     rolling, non-overlapping predictions of max_length tokens
 *               (get_rolling_token_windows with context_len 1 and the
 *               prefix token in front, then make_disjoint_window);
 *   metrics     token_perplexity  exp(-sum ll / sum tokens)
 *               word_perplexity   exp(-sum ll / sum words), words counted on
 *                                 the page before detokenising as
 *                                 len(re.split(r"\s+", page))
 *               byte_perplexity   exp(-sum ll / sum bytes) (UTF-8 bytes of
 *                                 the page before detokenising)
 *               bits_per_byte     -sum ll / sum bytes / ln 2
 *               n = documents; no standard error (the harness gives none).
 * Must not: tokenise anything but the detokenised page. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "engine/eval/internal.h"

#define SUITE (eng_suite_names[ENG_SUITE_WIKITEXT])

/* ------------------------------------------------------------ text edits */
/* out = s with every `from` replaced by `to` (Python's str.replace). */
static int replace_all(ev_buf *out, const char *s, size_t n, const char *from, const char *to, tlm_err *e)
{
    const size_t fl = strlen(from), tl = strlen(to);
    out->n = 0;
    size_t i = 0;
    int rc = 0;
    while (i < n && !rc) {
        const char *hit = fl <= n - i ? memmem(s + i, n - i, from, fl) : NULL;
        if (!hit) {
            rc = ev_put(out, s + i, n - i, e);
            break;
        }
        size_t k = (size_t)(hit - (s + i));
        if (!(rc = ev_put(out, s + i, k, e)))
            rc = ev_put(out, to, tl, e);
        i += k + fl;
    }
    if (!rc && !out->p)
        rc = ev_put(out, "", 0, e);
    return rc;
}

/* Python's re.sub(r"O\s*([^C]*?)\s*C", r"O\1C", s): every O...C pair (the
 * first C after an O) loses the whitespace just inside it. */
static int strip_pairs(ev_buf *out, const char *s, size_t n, char open, char close, tlm_err *e)
{
    out->n = 0;
    size_t i = 0;
    int rc = 0;
    while (i < n && !rc) {
        const char *o = memchr(s + i, open, n - i);
        const char *c = o ? memchr(o + 1, close, (size_t)(s + n - (o + 1))) : NULL;
        if (!c) {
            rc = ev_put(out, s + i, n - i, e);
            break;
        }
        size_t a = (size_t)(o + 1 - s), b = (size_t)(c - s); /* inner = s[a, b) */
        /* leading whitespace */
        uint32_t cp;
        while (a < b) {
            size_t k = tlm_utf8_next(s + a, b - a, &cp);
            if (!ev_py_space(cp))
                break;
            a += k;
        }
        /* trailing whitespace: the end of the last non-space code point */
        size_t end = a;
        for (size_t j = a; j < b;) {
            size_t k = tlm_utf8_next(s + j, b - j, &cp);
            j += k;
            if (!ev_py_space(cp))
                end = j;
        }
        if (!(rc = ev_put(out, s + i, (size_t)(o - (s + i)) + 1, e)) && !(rc = ev_put(out, s + a, end - a, e)))
            rc = ev_put(out, &close, 1, e);
        i = b + 1;
    }
    if (!rc && !out->p)
        rc = ev_put(out, "", 0, e);
    return rc;
}

/* re.sub(r"/' [0-9]/", r"/'[0-9]/", s): the harness's pattern, literally
 * (its replacement is the text "/'[0-9]/"). */
static int odd_quote_digit(ev_buf *out, const char *s, size_t n, tlm_err *e)
{
    out->n = 0;
    size_t i = 0;
    int rc = 0;
    while (i < n && !rc) {
        if (i + 5 <= n && s[i] == '/' && s[i + 1] == '\'' && s[i + 2] == ' ' && s[i + 3] >= '0' && s[i + 3] <= '9' &&
            s[i + 4] == '/') {
            rc = ev_puts(out, "/'[0-9]/", e);
            i += 5;
        } else {
            rc = ev_put(out, s + i, 1, e);
            i++;
        }
    }
    if (!rc && !out->p)
        rc = ev_put(out, "", 0, e);
    return rc;
}

/* The harness's wikitext_detokenizer, step by step, on UTF-8 bytes (every
 * pattern is ASCII or whole characters, so byte matching equals matching
 * the decoded string). */
static int detokenize(const char *page, size_t n, ev_buf *res, tlm_err *e)
{
    static const char *const R1[][2] = {{"s '", "s'"}};
    static const char *const R2[][2] = {{" @-@ ", "-"}, {" @,@ ", ","}, {" @.@ ", "."}, {" : ", ": "},
                                        {" ; ", "; "},  {" . ", ". "},  {" ! ", "! "},  {" ? ", "? "},
                                        {" , ", ", "}};
    static const char PAIRS[][2] = {{'(', ')'}, {'[', ']'}, {'{', '}'}, {'"', '"'}, {'\'', '\''}};
    static const char *const R3[][2] = {{"= = = =", "===="}, {"= = =", "==="}, {"= =", "=="},
                                        {" \xC2\xB0 ", "\xC2\xB0"}, {" \n", "\n"}, {"\n ", "\n"},
                                        {" N ", " 1 "}, {" 's", "'s"}};
    ev_buf a = {0}, b = {0};
    int rc = ev_put(&a, page, n, e);
#define STEP(call)                                                                                             \
    do {                                                                                                       \
        if (!rc && !(rc = (call))) {                                                                           \
            ev_buf t = a;                                                                                      \
            a = b;                                                                                             \
            b = t;                                                                                             \
        }                                                                                                      \
    } while (0)
    STEP(replace_all(&b, a.p, a.n, R1[0][0], R1[0][1], e));
    STEP(odd_quote_digit(&b, a.p, a.n, e));
    for (size_t i = 0; i < sizeof R2 / sizeof R2[0]; i++)
        STEP(replace_all(&b, a.p, a.n, R2[i][0], R2[i][1], e));
    for (size_t i = 0; i < sizeof PAIRS / sizeof PAIRS[0]; i++)
        STEP(strip_pairs(&b, a.p, a.n, PAIRS[i][0], PAIRS[i][1], e));
    for (size_t i = 0; i < sizeof R3 / sizeof R3[0]; i++)
        STEP(replace_all(&b, a.p, a.n, R3[i][0], R3[i][1], e));
#undef STEP
    ev_buf_clear(&b);
    if (rc) {
        ev_buf_clear(&a);
        return rc;
    }
    *res = a;
    return 0;
}

/* ------------------------------------------------------------ documents */
static int is_blank(const char *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        i += tlm_utf8_next(s + i, n - i, &cp);
        if (!ev_py_space(cp))
            return 0;
    }
    return 1;
}

/* The dataset's heading test on one line (without its "\n"). */
static int is_heading(const char *line, size_t n, tlm_err *e, int *out)
{
    ev_buf a = {0}, b = {0};
    int rc = replace_all(&a, line, n, "= = =", "===", e);
    if (!rc)
        rc = replace_all(&b, a.p, a.n, "= =", "==", e);
    *out = 0;
    if (!rc) {
        /* strip */
        size_t s = 0, end = 0;
        uint32_t cp;
        int seen = 0;
        for (size_t i = 0; i < b.n;) {
            size_t k = tlm_utf8_next(b.p + i, b.n - i, &cp);
            if (!ev_py_space(cp)) {
                if (!seen)
                    s = i;
                seen = 1;
                end = i + k;
            }
            i += k;
        }
        size_t len = seen ? end - s : 0;
        const char *t = b.p + s;
        *out = len >= 2 && t[0] == '=' && t[1] == ' ' && t[len - 2] == ' ' && t[len - 1] == '=';
    }
    ev_buf_clear(&a);
    ev_buf_clear(&b);
    return rc;
}

typedef struct doc {
    size_t begin, end; /* byte range of the page in the file */
} doc;

static int push_doc(doc **d, size_t *nd, size_t *cap, size_t begin, size_t end, tlm_err *e)
{
    if (TLM_GROW(*d, *cap, *nd + 1, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    (*d)[(*nd)++] = (doc){begin, end};
    return 0;
}

/* The lines are text.split("\n"); the lines gathered since the last
 * heading, joined with "\n", are the bytes from the first one's start to
 * the newline before the next heading. */
static int split_documents(const char *text, size_t n, doc **docs, size_t *n_docs, tlm_err *e)
{
    doc *d = NULL;
    size_t nd = 0, cap = 0, start = 0;
    int have_lines = 0, rc = 0;
    for (size_t i = 0;;) {
        const char *nl = memchr(text + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - text) : n; /* line = text[i, end) */
        int head;
        if ((rc = is_heading(text + i, end - i, e, &head)))
            break;
        if (head) {
            if (have_lines && !is_blank(text + start, i - 1 - start) &&
                (rc = push_doc(&d, &nd, &cap, start, i - 1, e)))
                break;
            start = i;
        }
        have_lines = 1;
        if (!nl)
            break;
        i = end + 1;
    }
    /* the last page runs to the end of the file */
    if (!rc && !is_blank(text + start, n - start))
        rc = push_doc(&d, &nd, &cap, start, n, e);
    if (rc) {
        free(d);
        return rc;
    }
    *docs = d;
    *n_docs = nd;
    return 0;
}

/* len(re.split(r"\s+", page)) */
static int64_t count_words(const char *s, size_t n)
{
    int64_t runs = 0;
    int in = 0;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        i += tlm_utf8_next(s + i, n - i, &cp);
        int sp = ev_py_space(cp);
        if (sp && !in)
            runs++;
        in = sp;
    }
    return runs + 1;
}

/* The token in front of a document (the harness's prefix_token_id): the
 * tokenizer's end-of-text token, else the token of "\n" (bytes: 10). */
static int32_t ev_prefix_token(eng_tok *tok)
{
    int32_t eot = eng_tok_eot(tok);
    if (eot >= 0)
        return eot;
    eng_tokvec v = {0};
    tlm_err e;
    int32_t id = 0;
    if (!eng_tok_encode(tok, "\n", 1, 0, &v, &e) && v.n == 1)
        id = (int32_t)v.ids[0];
    eng_tokvec_clear(&v);
    return id;
}

/* arr = [prefix] + the tokens of the detokenized page (n of them): every
 * window is a slice of it */
static int doc_tokens(eng_tok *tok, const char *page, size_t len, int32_t prefix, int32_t **arr, size_t *n,
                      tlm_err *e)
{
    ev_buf det = {0};
    int rc = detokenize(page, len, &det, e);
    if (rc)
        return rc;
    int32_t *ids = NULL;
    rc = ev_encode(tok, det.p, det.n, &ids, n, e);
    ev_buf_clear(&det);
    if (rc)
        return rc;
    *arr = malloc((*n + 1) * sizeof **arr);
    if (!*arr) {
        free(ids);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    (*arr)[0] = prefix;
    memcpy(*arr + 1, ids, *n * sizeof *ids);
    free(ids);
    return 0;
}

/* The rolling windows of at most L predicted tokens over arr (n tokens
 * after the prefix), appended to reqs: the first predicts from the
 * prefix, each next one from the L tokens before what it predicts. */
static int push_windows(ev_req **reqs, size_t *nreq, size_t *capreq, int32_t *arr, size_t n, int L,
                        tlm_err *e)
{
    size_t predicted = 0;
    while (predicted < n) {
        if (TLM_GROW(*reqs, *capreq, *nreq + 1, 256))
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        ev_req *r = &(*reqs)[(*nreq)++];
        memset(r, 0, sizeof *r);
        if (predicted == 0) {
            size_t first = n < (size_t)L ? n : (size_t)L;
            r->full = arr;
            r->n_ctx = 1;
            r->n_cont = first;
            predicted = first;
        } else {
            size_t wp = n - predicted < (size_t)L ? n - predicted : (size_t)L;
            size_t wend = predicted + wp; /* in token_list indices; arr index = +1 */
            r->full = arr + (wend - (size_t)L);
            r->n_ctx = (size_t)L + 1 - wp;
            r->n_cont = wp;
            predicted = wend;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the suite */
int eng_eval_wikitext(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                      tlm_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc = ev_read_text(cfg->wikitext, "eval.wikitext", &text, &len, e);
    if (rc)
        return rc;
    doc *docs = NULL;
    size_t nd = 0;
    if ((rc = split_documents(text, len, &docs, &nd, e)))
        goto out0;
    if (nd == 0) {
        rc = tlm_errf(e, TLM_EDATA, "%s: no WikiText document (no \" = Title = \" heading line)", cfg->wikitext);
        goto out0;
    }
    const int L = lm->max_length;
    const int32_t prefix = ev_prefix_token(tok);
    int32_t **arr = calloc(nd, sizeof *arr);
    size_t *ntok = calloc(nd, sizeof *ntok), *first_req = calloc(nd + 1, sizeof *first_req);
    ev_req *reqs = NULL;
    size_t nreq = 0, capreq = 0;
    if (!arr || !ntok || !first_req) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto out1;
    }
    for (size_t d = 0; d < nd && !rc; d++) {
        first_req[d] = nreq;
        if (!(rc = doc_tokens(tok, text + docs[d].begin, docs[d].end - docs[d].begin, prefix, &arr[d], &ntok[d], e)))
            rc = push_windows(&reqs, &nreq, &capreq, arr[d], ntok[d], L, e);
    }
    first_req[nd] = nreq;
    if (rc || ev_checking(lm))
        goto out1;
    ev_log(s, "wikitext: %zu documents, %zu windows of at most %d tokens", nd, nreq, L);
    if ((rc = ev_score(lm, L, reqs, nreq, s, e)))
        goto out1;
    double sum_ll = 0;
    int64_t tokens = 0, words = 0, bytes = 0;
    for (size_t d = 0; d < nd; d++) {
        double ll = 0;
        for (size_t q = first_req[d]; q < first_req[d + 1]; q++)
            ll += reqs[q].loglik;
        sum_ll += ll;
        tokens += (int64_t)ntok[d];
        words += count_words(text + docs[d].begin, docs[d].end - docs[d].begin);
        bytes += (int64_t)(docs[d].end - docs[d].begin);
        if (s && s->item) {
            eng_eval_item it = {SUITE, SUITE, (int64_t)d, 0, ll, 0, (int64_t)ntok[d]};
            s->item(s->ud, &it);
        }
    }
    const int64_t n = (int64_t)nd;
    ev_result(s, SUITE, SUITE, "token_perplexity", exp(-sum_ll / (double)(tokens ? tokens : 1)), n, NAN);
    ev_result(s, SUITE, SUITE, "word_perplexity", exp(-sum_ll / (double)words), n, NAN);
    ev_result(s, SUITE, SUITE, "byte_perplexity", exp(-sum_ll / (double)bytes), n, NAN);
    ev_result(s, SUITE, SUITE, "bits_per_byte", -sum_ll / (double)bytes / log(2.0), n, NAN);
    ev_log(s, "wikitext: %zu documents, %lld tokens, %lld words, %lld bytes", nd, (long long)tokens,
           (long long)words, (long long)bytes);
out1:
    if (arr)
        for (size_t d = 0; d < nd; d++)
            free(arr[d]);
    free(arr);
    free(ntok);
    free(first_req);
    free(reqs);
out0:
    free(docs);
    free(text);
    return rc;
}
