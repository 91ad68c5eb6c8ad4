/* commonsense.c: the `commonsense` suite: eight multiple-choice tasks
 * scored by log-likelihood as lm-evaluation-harness does (zero-shot, its
 * prompt templates, target delimiter " "):
 *
 *   task           context                                         choices (continuation " " + choice)   metrics
 *   piqa           "Question: {goal}\nAnswer:"                      sol1, sol2                            acc, acc_norm
 *   hellaswag      preprocess(activity_label + ": " + ctx_a + " "   preprocess(ending) x 4                acc, acc_norm
 *                    + capitalize(ctx_b))
 *   winogrande     sentence[:blank] + option (one context per       " " + sentence[blank+1:].strip()      acc
 *                    option: partial scoring)
 *   arc_easy/_challenge "Question: {question}\nAnswer:"             choices.text                          acc, acc_norm
 *   siqa           "Q: {context} {question}\nA:"                    answerA, answerB, answerC             acc
 *   boolq          "{passage}\nQuestion: {question}?\nAnswer:"      "no", "yes"                           acc
 *   openbookqa     question_stem                                    choices.text                          acc, acc_norm
 *
 * acc: argmax of the summed log-likelihoods is the gold choice; acc_norm:
 * argmax of log-likelihood / len(choice) (characters of the choice text,
 * as the harness's completion_len; bytes for ASCII).  Ties go to the first
 * choice (numpy.argmax).  stderr: sample standard error of the mean.
 * Readers accept each task's published JSONL (and the Hugging Face
 * field layout where it differs); docs/evaluation.md lists every field.
 * Must not: skip an item: a malformed line is an error naming file:line. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/eval/internal.h"
#include "common/fileio.h"
#include "common/vec.h"

#define SUITE (eng_suite_names[ENG_SUITE_COMMONSENSE])


/* One item: n requests (context_i, " " + choice_i), gold index, and the
 * choice strings' lengths for acc_norm. */
typedef struct mc_item {
    ev_buf ctx[EV_CHOICES_MAX];
    ev_buf cont[EV_CHOICES_MAX];
    double norm_len[EV_CHOICES_MAX];
    int n, gold;
    int64_t line;
} mc_item;

static void item_clear(mc_item *it)
{
    for (int i = 0; i < EV_CHOICES_MAX; i++) {
        ev_buf_clear(&it->ctx[i]);
        ev_buf_clear(&it->cont[i]);
    }
}

/* Same context for every choice; continuation " " + choice. */
static int add_choice(mc_item *it, const char *ctx, const char *choice, tlm_err *e)
{
    if (it->n >= EV_CHOICES_MAX)
        return tlm_errf(e, TLM_EDATA, "more than %d choices", EV_CHOICES_MAX);
    int i = it->n++;
    int rc = ev_puts(&it->ctx[i], ctx, e);
    if (!rc)
        rc = ev_puts(&it->cont[i], " ", e);
    if (!rc)
        rc = ev_puts(&it->cont[i], choice, e);
    it->norm_len[i] = (double)ev_utf8_len(choice, strlen(choice));
    return rc;
}

/* ------------------------------------------------------------ text helpers */
/* Python's str.strip() */
static void py_strip(const char *s, size_t n, size_t *a, size_t *b)
{
    size_t i = 0, end = 0, start = n;
    uint32_t cp;
    while (i < n) {
        size_t k = tlm_utf8_next(s + i, n - i, &cp);
        if (!ev_py_space(cp)) {
            if (start == n)
                start = i;
            end = i + k;
        }
        i += k;
    }
    if (start == n)
        start = end = 0;
    *a = start;
    *b = end;
}

/* HellaSwag's preprocess: strip; " [title]" -> ". "; drop every "[...]"
 * (shortest, not across a newline); "  " -> " " once, left to right. */
static int hs_preprocess(const char *in, ev_buf *out, tlm_err *e)
{
    size_t a, b;
    py_strip(in, strlen(in), &a, &b);
    ev_buf t1 = {0}, t2 = {0};
    int rc = ev_put(&t1, "", 0, e);
    for (size_t i = a; i < b && !rc;) {
        if (b - i >= 8 && !memcmp(in + i, " [title]", 8)) {
            rc = ev_puts(&t1, ". ", e);
            i += 8;
        } else {
            rc = ev_put(&t1, in + i, 1, e);
            i++;
        }
    }
    if (!rc)
        rc = ev_put(&t2, "", 0, e);
    for (size_t i = 0; i < t1.n && !rc;) {
        if (t1.p[i] == '[') {
            size_t j = i + 1;
            while (j < t1.n && t1.p[j] != ']' && t1.p[j] != '\n')
                j++;
            if (j < t1.n && t1.p[j] == ']') {
                i = j + 1;
                continue;
            }
        }
        rc = ev_put(&t2, t1.p + i, 1, e);
        i++;
    }
    out->n = 0;
    if (!rc)
        rc = ev_put(out, "", 0, e);
    for (size_t i = 0; i < t2.n && !rc;) {
        if (i + 1 < t2.n && t2.p[i] == ' ' && t2.p[i + 1] == ' ') {
            rc = ev_put(out, " ", 1, e);
            i += 2;
        } else {
            rc = ev_put(out, t2.p + i, 1, e);
            i++;
        }
    }
    ev_buf_clear(&t1);
    ev_buf_clear(&t2);
    return rc;
}

/* Python's str.capitalize() for ASCII letters (first upper, the rest
 * lower); other characters are kept as they are. */
static int capitalize(const char *s, ev_buf *out, tlm_err *e)
{
    int rc = ev_put(out, "", 0, e);
    for (size_t i = 0; s[i] && !rc; i++) {
        char c = s[i];
        if ((unsigned char)c < 0x80)
            c = (char)(i == 0 ? toupper((unsigned char)c) : tolower((unsigned char)c));
        rc = ev_put(out, &c, 1, e);
    }
    return rc;
}

/* ------------------------------------------------------------ labels files */
/* PIQA and SIQA publish labels beside the items: X.jsonl -> X-labels.lst,
 * one integer per line. */
static int read_labels(const char *jsonl, int64_t **out, int64_t *n_out, int *found, tlm_err *e)
{
    char path[ENG_PATH_MAX + 128];
    size_t len = strlen(jsonl);
    if (len > 6 && !strcmp(jsonl + len - 6, ".jsonl"))
        snprintf(path, sizeof path, "%.*s-labels.lst", (int)(len - 6), jsonl);
    else
        snprintf(path, sizeof path, "%s-labels.lst", jsonl);
    *found = 0;
    *n_out = 0;
    struct stat st;
    if (stat(path, &st) && errno == ENOENT)
        return 0; /* optional: the items may carry their labels */
    FILE *f;
    int rc = tlm_fopen_input(path, TLM_EDATA, &f, e);
    if (rc)
        return rc;
    *found = 1;
    int64_t *v = NULL, n = 0, cap = 0, line = 0;
    char buf[64];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        size_t l = strlen(buf);
        if (l == sizeof buf - 1 && buf[l - 1] != '\n') {
            rc = tlm_errf(e, TLM_EDATA, "%s:%lld: line too long for a label", path, (long long)line);
            break;
        }
        char *end;
        errno = 0;
        long long x = strtoll(buf, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end == buf || *end || errno) {
            rc = tlm_errf(e, TLM_EDATA, "%s:%lld: expected an integer label", path, (long long)line);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            if (cap > EV_ITEMS_MAX) {
                rc = tlm_errf(e, TLM_EDATA, "%s: more than %d labels", path, EV_ITEMS_MAX);
                break;
            }
            int64_t *q = realloc(v, (size_t)cap * sizeof *q);
            if (!q) {
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            v = q;
        }
        v[n++] = x;
    }
    fclose(f);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}

/* ------------------------------------------------------------ readers */
typedef struct reader_ctx {
    const ev_jsonl *r;
    const int64_t *labels; /* from a -labels.lst file, or NULL */
    int64_t n_labels;
    const char *labels_what;
} reader_ctx;

/* The gold label of item k: the item's own field, else the labels file. */
static int label_of(const reader_ctx *c, json_t *o, const char *field, int64_t k, int64_t *out, tlm_err *e)
{
    if (json_object_get(o, field))
        return ev_get_int(c->r, o, field, out, e);
    if (c->labels) {
        if (k >= c->n_labels)
            return ev_item_err(c->r, e, "no field \"%s\" and %s has only %lld labels", field, c->labels_what,
                               (long long)c->n_labels);
        *out = c->labels[k];
        return 0;
    }
    return ev_item_err(c->r, e, "missing field \"%s\" (and no %s beside the file)", field, c->labels_what);
}

static int gold_in_range(const reader_ctx *c, mc_item *it, int64_t g, const char *what, tlm_err *e)
{
    if (g < 0 || g >= it->n)
        return ev_item_err(c->r, e, "%s %lld is not one of the %d choices", what, (long long)g, it->n);
    it->gold = (int)g;
    return 0;
}

static int rd_piqa(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e)
{
    const char *goal, *s1, *s2;
    int64_t g;
    int rc;
    if ((rc = ev_get_str(c->r, o, "goal", &goal, e)) || (rc = ev_get_str(c->r, o, "sol1", &s1, e)) ||
        (rc = ev_get_str(c->r, o, "sol2", &s2, e)) || (rc = label_of(c, o, "label", k, &g, e)))
        return rc;
    ev_buf ctx = {0};
    if (!(rc = ev_puts(&ctx, "Question: ", e)) && !(rc = ev_puts(&ctx, goal, e)) &&
        !(rc = ev_puts(&ctx, "\nAnswer:", e)) && !(rc = add_choice(it, ctx.p, s1, e)))
        rc = add_choice(it, ctx.p, s2, e);
    ev_buf_clear(&ctx);
    return rc ? rc : gold_in_range(c, it, g, "label", e);
}

static int rd_hellaswag(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e)
{
    const char *act, *ca, *cb;
    int64_t g;
    int rc;
    if ((rc = ev_get_str(c->r, o, "activity_label", &act, e)) || (rc = ev_get_str(c->r, o, "ctx_a", &ca, e)) ||
        (rc = ev_get_str(c->r, o, "ctx_b", &cb, e)) || (rc = ev_get_int(c->r, o, "label", &g, e)))
        return rc;
    json_t *ends = json_object_get(o, "endings");
    if (!json_is_array(ends) || json_array_size(ends) < 2 || json_array_size(ends) > EV_CHOICES_MAX)
        return ev_item_err(c->r, e, "field \"endings\" must be a list of 2 to %d strings", EV_CHOICES_MAX);
    ev_buf raw = {0}, cap = {0}, q = {0}, end = {0};
    if (!(rc = capitalize(cb, &cap, e)) && !(rc = ev_puts(&raw, act, e)) && !(rc = ev_puts(&raw, ": ", e)) &&
        !(rc = ev_puts(&raw, ca, e)) && !(rc = ev_puts(&raw, " ", e)) && !(rc = ev_puts(&raw, cap.p, e)))
        rc = hs_preprocess(raw.p, &q, e);
    for (size_t i = 0; i < json_array_size(ends) && !rc; i++) {
        json_t *x = json_array_get(ends, i);
        if (!json_is_string(x)) {
            rc = ev_item_err(c->r, e, "field \"endings\" must hold strings");
            break;
        }
        if (!(rc = hs_preprocess(json_string_value(x), &end, e)))
            rc = add_choice(it, q.p, end.p, e);
    }
    ev_buf_clear(&raw);
    ev_buf_clear(&cap);
    ev_buf_clear(&q);
    ev_buf_clear(&end);
    return rc ? rc : gold_in_range(c, it, g, "label", e);
}

static int rd_winogrande(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e)
{
    const char *sent, *o1, *o2;
    int64_t ans;
    int rc;
    if ((rc = ev_get_str(c->r, o, "sentence", &sent, e)) || (rc = ev_get_str(c->r, o, "option1", &o1, e)) ||
        (rc = ev_get_str(c->r, o, "option2", &o2, e)) || (rc = ev_get_int(c->r, o, "answer", &ans, e)))
        return rc;
    const char *blank = strchr(sent, '_');
    if (!blank)
        return ev_item_err(c->r, e, "field \"sentence\" has no blank \"_\"");
    if (ans != 1 && ans != 2)
        return ev_item_err(c->r, e, "field \"answer\" must be \"1\" or \"2\"");
    size_t a, b;
    const char *rest = blank + 1;
    py_strip(rest, strlen(rest), &a, &b);
    const char *opts[2] = {o1, o2};
    for (int i = 0; i < 2 && !rc; i++) {
        int j = it->n++;
        if (!(rc = ev_put(&it->ctx[j], sent, (size_t)(blank - sent), e)) && !(rc = ev_puts(&it->ctx[j], opts[i], e)) &&
            !(rc = ev_puts(&it->cont[j], " ", e)))
            rc = ev_put(&it->cont[j], rest + a, b - a, e);
        it->norm_len[j] = (double)ev_utf8_len(it->ctx[j].p, it->ctx[j].n);
    }
    it->gold = (int)ans - 1;
    return rc;
}

/* ARC and OpenBookQA: {"question": {"stem", "choices": [{"text", "label"}]}, "answerKey"}
 * as published, or the Hugging Face layout {"question" | "question_stem",
 * "choices": {"text": [...], "label": [...]}, "answerKey"}. */
static int rd_qa(const reader_ctx *c, json_t *o, mc_item *it, int arc, tlm_err *e)
{
    const char *stem = NULL, *key;
    int rc;
    json_t *q = json_object_get(o, "question"), *choices = json_object_get(o, "choices");
    json_t *texts = NULL, *labels = NULL, *list = NULL;
    if (json_is_object(q)) {
        json_t *st = json_object_get(q, "stem");
        list = json_object_get(q, "choices");
        if (!json_is_string(st))
            return ev_item_err(c->r, e, "field \"question.stem\" must be a string");
        if (!json_is_array(list))
            return ev_item_err(c->r, e, "field \"question.choices\" must be a list");
        stem = json_string_value(st);
    } else {
        if ((rc = ev_get_str(c->r, o, arc ? "question" : "question_stem", &stem, e)))
            return rc;
        if (!json_is_object(choices))
            return ev_item_err(c->r, e, "field \"choices\" must be {\"text\": [...], \"label\": [...]}");
        texts = json_object_get(choices, "text");
        labels = json_object_get(choices, "label");
        if (!json_is_array(texts) || !json_is_array(labels) || json_array_size(texts) != json_array_size(labels))
            return ev_item_err(c->r, e, "fields \"choices.text\" and \"choices.label\" must be lists of one length");
    }
    if ((rc = ev_get_str(c->r, o, "answerKey", &key, e)))
        return rc;
    while (*key == ' ' || *key == '\t' || *key == '\n')
        key++; /* answerKey.lstrip() (OpenBookQA) */
    size_t n = list ? json_array_size(list) : json_array_size(texts);
    if (n < 2 || n > EV_CHOICES_MAX)
        return ev_item_err(c->r, e, "expected 2 to %d choices, got %zu", EV_CHOICES_MAX, n);
    ev_buf ctx = {0};
    if (arc)
        rc = ev_puts(&ctx, "Question: ", e);
    if (!rc)
        rc = ev_puts(&ctx, stem, e);
    if (!rc && arc)
        rc = ev_puts(&ctx, "\nAnswer:", e);
    int gold = -1;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *t, *l;
        if (list) {
            json_t *ch = json_array_get(list, i);
            t = json_object_get(ch, "text");
            l = json_object_get(ch, "label");
        } else {
            t = json_array_get(texts, i);
            l = json_array_get(labels, i);
        }
        if (!json_is_string(t) || !json_is_string(l)) {
            rc = ev_item_err(c->r, e, "choice %zu needs a string \"text\" and \"label\"", i);
            break;
        }
        if (gold < 0 && !strcmp(json_string_value(l), key))
            gold = (int)i; /* choices.label.index(answerKey) */
        rc = add_choice(it, ctx.p, json_string_value(t), e);
    }
    ev_buf_clear(&ctx);
    if (!rc && gold < 0)
        rc = ev_item_err(c->r, e, "answerKey \"%s\" is not one of the choices' labels", key);
    it->gold = gold;
    return rc;
}

static int rd_arc(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e) { return rd_qa(c, o, it, 1, e); }
static int rd_obqa(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e) { return rd_qa(c, o, it, 0, e); }

static int rd_siqa(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e)
{
    const char *cx, *q, *a, *b, *cc;
    int64_t g;
    int rc;
    if ((rc = ev_get_str(c->r, o, "context", &cx, e)) || (rc = ev_get_str(c->r, o, "question", &q, e)) ||
        (rc = ev_get_str(c->r, o, "answerA", &a, e)) || (rc = ev_get_str(c->r, o, "answerB", &b, e)) ||
        (rc = ev_get_str(c->r, o, "answerC", &cc, e)) || (rc = label_of(c, o, "label", k, &g, e)))
        return rc;
    ev_buf ctx = {0};
    if (!(rc = ev_puts(&ctx, "Q: ", e)) && !(rc = ev_puts(&ctx, cx, e)) && !(rc = ev_puts(&ctx, " ", e)) &&
        !(rc = ev_puts(&ctx, q, e)) && !(rc = ev_puts(&ctx, "\nA:", e)) && !(rc = add_choice(it, ctx.p, a, e)) &&
        !(rc = add_choice(it, ctx.p, b, e)))
        rc = add_choice(it, ctx.p, cc, e);
    ev_buf_clear(&ctx);
    if (!rc && (g < 1 || g > 3))
        rc = ev_item_err(c->r, e, "label %lld is not 1, 2 or 3", (long long)g);
    return rc ? rc : gold_in_range(c, it, g - 1, "label - 1", e);
}

static int rd_boolq(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e)
{
    const char *p, *q;
    int rc;
    if ((rc = ev_get_str(c->r, o, "passage", &p, e)) || (rc = ev_get_str(c->r, o, "question", &q, e)))
        return rc;
    int64_t g;
    json_t *ans = json_object_get(o, "answer");
    if (ans) {
        if (!json_is_boolean(ans))
            return ev_item_err(c->r, e, "field \"answer\" must be true or false");
        g = json_is_true(ans); /* "yes" is choice 1 */
    } else if (json_object_get(o, "label")) {
        if ((rc = ev_get_int(c->r, o, "label", &g, e)))
            return rc;
    } else {
        return ev_item_err(c->r, e, "missing field \"answer\" (true/false) or \"label\" (0/1)");
    }
    ev_buf ctx = {0};
    if (!(rc = ev_puts(&ctx, p, e)) && !(rc = ev_puts(&ctx, "\nQuestion: ", e)) && !(rc = ev_puts(&ctx, q, e)) &&
        !(rc = ev_puts(&ctx, "?\nAnswer:", e)) && !(rc = add_choice(it, ctx.p, "no", e)))
        rc = add_choice(it, ctx.p, "yes", e);
    ev_buf_clear(&ctx);
    return rc ? rc : gold_in_range(c, it, g, "label", e);
}

typedef int (*reader_fn)(const reader_ctx *c, json_t *o, int64_t k, mc_item *it, tlm_err *e);

/* One row per task of ENG_COMMONSENSE_MAP (engine/config/suites.h, the
 * tasks' names and order): how its items are read, whether the harness
 * reports acc_norm for it, whether its labels may come in a file beside
 * the items. */
static const struct task {
    reader_fn read;
    int has_norm;
    int labels_file;
} TASK[ENG_CS_COUNT] = {
    [ENG_CS_PIQA] = {rd_piqa, 1, 1},           [ENG_CS_HELLASWAG] = {rd_hellaswag, 1, 0},
    [ENG_CS_WINOGRANDE] = {rd_winogrande, 0, 0}, [ENG_CS_ARC_EASY] = {rd_arc, 1, 0},
    [ENG_CS_ARC_CHALLENGE] = {rd_arc, 1, 0},   [ENG_CS_SIQA] = {rd_siqa, 0, 1},
    [ENG_CS_BOOLQ] = {rd_boolq, 0, 0},         [ENG_CS_OPENBOOKQA] = {rd_obqa, 1, 0},
};

/* ------------------------------------------------------------ one task */
static int run_task(const eng_eval_lm *lm, eng_tok *tok, int t, const char *path, const eng_eval_sink *s,
                    tlm_err *e)
{
    const char *task = eng_commonsense_names[t];
    int64_t *labels = NULL, n_labels = 0;
    int has_labels = 0;
    int rc = 0;
    if (!TASK[t].read) /* a task of the registry without its row above */
        return tlm_errf(e, TLM_EINTERNAL, "commonsense %s: no reader", task);
    if (TASK[t].labels_file && (rc = read_labels(path, &labels, &n_labels, &has_labels, e)))
        return rc;
    ev_jsonl r;
    if ((rc = ev_jsonl_open(&r, path, e))) {
        free(labels);
        return tlm_err_prefix(e, "commonsense %s", task);
    }
    char labels_what[ENG_NAME_MAX + 16];
    snprintf(labels_what, sizeof labels_what, "%s-labels.lst", task);
    reader_ctx c = {&r, has_labels ? labels : NULL, n_labels, labels_what};
    mc_item *items = NULL;
    size_t n = 0, cap = 0;
    json_t *o;
    while ((rc = ev_jsonl_next(&r, &o, e)) == 1) {
        if (TLM_GROW(items, cap, n + 1, 256)) {
            json_decref(o);
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        mc_item *it = &items[n++];
        memset(it, 0, sizeof *it);
        it->line = r.line;
        rc = TASK[t].read(&c, o, (int64_t)n - 1, it, e);
        json_decref(o);
        if (rc)
            break;
    }
    if (!rc && has_labels && n_labels != (int64_t)n)
        rc = tlm_errf(e, TLM_EDATA, "%s: %lld labels for %zu items in %s", c.labels_what, (long long)n_labels, n,
                      path);
    ev_jsonl_close(&r);
    free(labels);
    if (!rc && n == 0)
        rc = tlm_errf(e, TLM_EDATA, "%s: no items", path);

    /* every choice of every item is one request */
    size_t nreq = 0;
    for (size_t i = 0; i < n; i++)
        nreq += (size_t)items[i].n;
    ev_req *reqs = rc ? NULL : calloc(nreq, sizeof *reqs);
    if (!rc && !reqs)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (size_t i = 0, q = 0; i < n && !rc; i++)
        for (int j = 0; j < items[i].n && !rc; j++, q++)
            if ((rc = ev_encode_pair(tok, items[i].ctx[j].p, items[i].ctx[j].n, items[i].cont[j].p,
                                     items[i].cont[j].n, &reqs[q], e)))
                tlm_err_prefix(e, "%s:%lld", path, (long long)items[i].line);
            else if (reqs[q].n_cont > (size_t)lm->max_length)
                rc = tlm_errf(e, TLM_EDATA, "%s:%lld: choice %d is %zu tokens, longer than the context length %d",
                              path, (long long)items[i].line, j, reqs[q].n_cont, lm->max_length);
    if (!rc && !ev_checking(lm)) {
        ev_log(s, "commonsense %s: %zu items, %zu requests", task, n, nreq);
        rc = ev_score(lm, lm->max_length, reqs, nreq, s, e);
    }
    if (!rc && !ev_checking(lm)) {
        double *acc = malloc(n * sizeof *acc), *accn = malloc(n * sizeof *accn);
        if (!acc || !accn)
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        for (size_t i = 0, q = 0; i < n && !rc; i++) {
            const mc_item *it = &items[i];
            int pred = 0, pred_n = 0;
            for (int j = 0; j < it->n; j++, q++) {
                double ll = reqs[q].loglik;
                if (ll > reqs[q - (size_t)j + (size_t)pred].loglik)
                    pred = j;
                if (ll / it->norm_len[j] > reqs[q - (size_t)j + (size_t)pred_n].loglik / it->norm_len[pred_n])
                    pred_n = j;
                if (s && s->item) {
                    eng_eval_item ei = {SUITE, task, (int64_t)i, j, ll, reqs[q].greedy, (int64_t)reqs[q].n_cont};
                    s->item(s->ud, &ei);
                }
            }
            acc[i] = pred == it->gold;
            accn[i] = pred_n == it->gold;
        }
        if (!rc) {
            ev_result(s, SUITE, task, "acc", ev_mean(acc, n), (int64_t)n, ev_stderr(acc, n));
            if (TASK[t].has_norm)
                ev_result(s, SUITE, task, "acc_norm", ev_mean(accn, n), (int64_t)n, ev_stderr(accn, n));
        }
        free(acc);
        free(accn);
    }
    for (size_t q = 0; reqs && q < nreq; q++)
        ev_req_clear(&reqs[q]);
    free(reqs);
    for (size_t i = 0; i < n; i++)
        item_clear(&items[i]);
    free(items);
    return rc;
}

int eng_eval_commonsense(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                         tlm_err *e)
{
    if (!cfg->commonsense[0])
        return tlm_errf(e, TLM_ECONFIG, "eval.commonsense: the commonsense suite needs the folder of its task files");
    for (int i = 0; i < cfg->n_commonsense_tasks; i++) {
        int t = eng_name_find(eng_commonsense_names, ENG_CS_COUNT, cfg->commonsense_tasks[i]);
        if (t < 0)
            return tlm_errf(e, TLM_ECONFIG, "eval.commonsense_tasks: unknown task '%s'", cfg->commonsense_tasks[i]);
        char path[ENG_PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s.jsonl", cfg->commonsense, eng_commonsense_names[t]);
        int rc = run_task(lm, tok, t, path, s, e);
        if (rc)
            return rc;
    }
    return 0;
}
