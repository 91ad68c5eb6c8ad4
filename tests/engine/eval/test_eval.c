/* test_eval.c: the evaluation suites' readers, NIAH generation and scoring,
 * through scripted language models (no trained model needed):
 *   - malformed and missing benchmark files are errors that name the file
 *     and the line, found by the evaluator's set-up check (before any
 *     training) as well as by the suites; FIFOs and folders are refused;
 *   - S-NIAH items are a pure function of (seed, task, length, index), fit
 *     their length, and hold the needle;
 *   - the exact-match rule, and the whole suite with an oracle model that
 *     reads the needle back (exact_match 1) and a model that gets the last
 *     character wrong (exact_match 0);
 *   - a GPT-2 is evaluated in host memory: a backend that is not on the
 *     host is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "engine/cpu/backend.h"
#include "engine/eval/gpt2.h"
#include "engine/eval/internal.h"
#include "tests/lib/tap.h"

static eng_backend *BE; /* the CPU backend the evaluators are made on */

/* ------------------------------------------------------------ scripted models */
#define V 256
#define MAX_T 4096

typedef struct mock {
    float *logits; /* (MAX_T, V): only the last position of the last row is filled */
    int wrong;     /* oracle answers with its last value character changed */
    int calls;
} mock;

/* The oracle: the needle is the only "is: " in the prompt; after the final
 * "provided text is" it spells " " + value + ".\n". */
static int mock_logits(void *impl, const int32_t *tok, int B, int T, const float **out, tlm_err *e)
{
    mock *m = impl;
    m->calls++;
    const int32_t *row = tok + (size_t)(B - 1) * T;
    char *s = malloc((size_t)T + 1);
    for (int t = 0; t < T; t++)
        s[t] = (char)row[t];
    s[T] = '\0';
    char answer[128] = " ?";
    const char *is = strstr(s, "is: ");
    if (is) {
        const char *v = is + 4, *dot = strchr(v, '.');
        int n = dot ? (int)(dot - v) : 0;
        char val[96];
        snprintf(val, sizeof val, "%.*s", n, v);
        if (m->wrong && n)
            val[n - 1] = val[n - 1] == '0' ? '1' : '0';
        snprintf(answer, sizeof answer, " %s.\n", val);
    }
    const char *end = NULL;
    for (const char *p = s; (p = strstr(p, "provided text is")); p++)
        end = p + strlen("provided text is");
    int k = end ? (int)(s + T - end) : 0;
    int next = k < (int)strlen(answer) ? (unsigned char)answer[k] : ' ';
    /* only the last position of the last row is read by generation */
    float *last = m->logits + ((size_t)(B - 1) * T + (T - 1)) * V;
    memset(last, 0, (size_t)V * sizeof(float));
    last[next] = 10.0f;
    free(s);
    *out = m->logits;
    return 0;
}

/* ------------------------------------------------------------ sink */
typedef struct got {
    char task[64][96];
    char metric[64][32];
    double value[64];
    int64_t n[64];
    int count;
} got;

static void on_result(void *ud, const eng_eval_result *r)
{
    got *g = ud;
    if (g->count < 64) {
        snprintf(g->task[g->count], 96, "%s", r->task);
        snprintf(g->metric[g->count], 32, "%s", r->metric);
        g->value[g->count] = r->value;
        g->n[g->count++] = r->n;
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static char dir[256];

static const char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Run a suite on a zero-logits model and expect an error holding `want`. */
static float zero_logits[8 * 64 * V];
static int zeros(void *impl, const int32_t *tok, int B, int T, const float **out, tlm_err *e)
{
    (void)impl, (void)tok;
    if ((size_t)B * T * V > sizeof zero_logits / sizeof zero_logits[0])
        return tlm_errf(e, TLM_EINTERNAL, "mock too small");
    *out = zero_logits;
    return 0;
}

static void expect_error(const char *what, const char *suite, eng_tok *tok, const eng_eval_cfg *cfg,
                         const char *want)
{
    eng_eval_lm lm = {NULL, 8, 64, 64, V, zeros, NULL};
    tlm_err e = {0};
    int rc = eng_eval_suite(suite, &lm, tok, cfg, NULL, &e);
    TAP_OK(rc != 0 && strstr(e.msg, want), "%s: %s", what, rc ? e.msg : "(no error)");
    if (rc == 0 || !strstr(e.msg, want))
        TAP_DIAG("expected a message containing: %s", want);
}

/* ---- the evaluator's set-up check: every input read in full before training */
/* Create an evaluator for one suite and check it: 0, or the error in e. */
static int check_suite(const char *suite, const eng_eval_cfg *ev, tlm_err *e)
{
    eng_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.tokenizer, "bytes");
    c.model.vocab = V;
    c.train.seq_len = 32;
    c.train.micro_batch = 2;
    c.eval = *ev;
    c.eval.n_suites = 1;
    snprintf(c.eval.suites[0], ENG_NAME_MAX, "%s", suite);
    eng_evaluator *x;
    int rc = eng_evaluator_create(&x, &c, BE, e);
    if (rc)
        return rc;
    rc = eng_evaluator_check(x, e);
    eng_evaluator_free(x);
    return rc;
}

/* check_suite(suite) fails with TLM_EDATA, its message naming file (in the
 * test folder) followed by `after` (":2: ..."): the TAP check `what` */
static void expect_check_error(const char *suite, const eng_eval_cfg *v, const char *file, const char *after,
                               const char *what)
{
    tlm_err e = {0};
    char want[600];
    snprintf(want, sizeof want, "%s%s", at(file), after);
    int rc = check_suite(suite, v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, want), "%s (%s)", what, e.msg);
}

static void check_cases(void)
{
    eng_eval_cfg v;
    tlm_err e = {0};
    char want[700];
    memset(&v, 0, sizeof v);
    snprintf(v.lambada, sizeof v.lambada, "%s", at("lam.jsonl"));
    write_file(at("lam.jsonl"), "{\"text\": \"one two three\"}\n{\"text\": \"four five\"}\n");
    int rc = check_suite("lambada", &v, &e); /* eng_evaluator_check takes no sink: it scores nothing */
    TAP_OK(rc == 0, "check: a good LAMBADA file passes%s%s", rc ? ": " : "", rc ? e.msg : "");
    write_file(at("lam.jsonl"), "{\"text\": \"one two three\"}\n{\"text\": \"four five\"}\n{\"text\": 7}\n");
    rc = check_suite("lambada", &v, &e);
    snprintf(want, sizeof want, "%s:3: field \"text\" must be a string", at("lam.jsonl"));
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, want), "check: a bad line 3 of LAMBADA is found (%s)", e.msg);
    write_file(at("lam.jsonl"), "{\"text\": \"one xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n");
    rc = check_suite("lambada", &v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "longer than the context length 32"),
           "check: a last word longer than train.seq_len is found (%s)", e.msg);

    memset(&v, 0, sizeof v);
    snprintf(v.commonsense, sizeof v.commonsense, "%s", at("cs"));
    v.n_commonsense_tasks = 1;
    snprintf(v.commonsense_tasks[0], ENG_NAME_MAX, "boolq");
    write_file(at("cs/boolq.jsonl"), "{\"passage\": \"p\", \"question\": \"q\", \"answer\": true}\n"
                                     "{\"passage\": \"p\", \"question\": \"q\", \"answer\": 3}\n");
    expect_check_error("commonsense", &v, "cs/boolq.jsonl", ":2: field \"answer\" must be true or false",
                       "check: a bad commonsense item is found");

    memset(&v, 0, sizeof v);
    snprintf(v.wikitext, sizeof v.wikitext, "%s", at("w.raw"));
    write_file(at("w.raw"), " \n \n\t\n");
    rc = check_suite("wikitext", &v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "no WikiText document"), "check: a WikiText file without pages (%s)",
           e.msg);
    write_file(at("w.raw"), " = T = \n text of the page .\n");
    rc = check_suite("wikitext", &v, &e);
    TAP_OK(rc == 0, "check: a good WikiText file passes%s%s", rc ? ": " : "", rc ? e.msg : "");

    memset(&v, 0, sizeof v);
    snprintf(v.alignment_ids, sizeof v.alignment_ids, "%s", at("al.ids"));
    write_file(at("al.ids"), "1 2 3\n4 300 5\n");
    expect_check_error("alignment", &v, "al.ids", ":2: expected token ids below 256",
                       "check: an alignment id outside model.vocab");

    memset(&v, 0, sizeof v);
    snprintf(v.niah_haystack, sizeof v.niah_haystack, "%s", at("hay2.txt"));
    write_file(at("hay2.txt"), " \n\t\n");
    v.n_niah_tasks = 1;
    strcpy(v.niah_tasks[0], "s_niah_2");
    v.n_niah_lengths = 1;
    v.niah_lengths[0] = 32;
    v.niah_n = 3;
    rc = check_suite("niah", &v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "holds no words"), "check: a haystack without words (%s)", e.msg);
    write_file(at("hay2.txt"), "Some words. And more words here.\n");
    rc = check_suite("niah", &v, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "too short"), "check: a NIAH length too short for its prompt (%s)",
           e.msg);

    /* not a regular file: refused when the evaluator is made, without blocking */
    memset(&v, 0, sizeof v);
    snprintf(v.lambada, sizeof v.lambada, "%s", at("fifo.jsonl"));
    alarm(20);
    rc = mkfifo(at("fifo.jsonl"), 0600) ? -1 : check_suite("lambada", &v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "eval.lambada") && strstr(e.msg, "is not a regular file (a FIFO)"),
           "a FIFO as the LAMBADA file (%s)", e.msg);
    snprintf(v.lambada, sizeof v.lambada, "%s", at("cs"));
    rc = check_suite("lambada", &v, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "a folder as the LAMBADA file (%s)", e.msg);
    alarm(0);
    unlink(at("fifo.jsonl"));
}

int main(void)
{
    char csdir[300];
    if (!tap_tmpdir(dir, sizeof dir, "tlm-test-eval") || snprintf(csdir, sizeof csdir, "%s/cs", dir) >= (int)sizeof csdir ||
        mkdir(csdir, 0700))
        return 1;
    tlm_err e = {0};
    if (eng_backend_cpu_create(&BE, 1, &e)) {
        printf("Bail out! %s\n", e.msg);
        return 1;
    }
    eng_tok *tok;
    if (eng_tok_open(&tok, "bytes", NULL, &e)) {
        printf("not ok 1 - bytes tokenizer: %s\n", e.msg);
        return 1;
    }
    eng_eval_cfg cfg;

    /* ---- readers: file and line in every message */
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.lambada, sizeof cfg.lambada, "%s", at("lambada.jsonl"));
    /* a broken lambada.jsonl, and the message (after its path) that says where and why */
    static const struct {
        const char *what, *text, *want;
    } broken[] = {
        {"broken JSON", "{\"text\": \"a b c\"}\n\n{\"text\": \"a b\" \n", ":3: not valid JSON"},
        {"missing field", "{\"text\": \"a b c\"}\n{\"txt\": \"a b\"}\n", ":2: missing field \"text\""},
        {"wrong type", "{\"text\": 5}\n", ":1: field \"text\" must be a string"},
        {"not an object", "[1, 2]\n", ":1: expected a JSON object"},
        {"empty file", "\n\n", ": no items"},
    };
    char want[600], title[64];
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        write_file(at("lambada.jsonl"), broken[i].text);
        snprintf(want, sizeof want, "%s%s", at("lambada.jsonl"), broken[i].want);
        snprintf(title, sizeof title, "lambada: %s", broken[i].what);
        expect_error(title, "lambada", tok, &cfg, want);
    }
    snprintf(cfg.lambada, sizeof cfg.lambada, "%s", at("nope.jsonl"));
    snprintf(want, sizeof want, "%s: cannot open", at("nope.jsonl"));
    expect_error("lambada: missing file", "lambada", tok, &cfg, want);
    {
        char *big = malloc(EV_LINE_MAX + 64);
        memset(big, 'x', EV_LINE_MAX + 10);
        memcpy(big, "{\"text\": \"", 10);
        strcpy(big + EV_LINE_MAX + 10, "\"}\n");
        write_file(at("lambada.jsonl"), big);
        free(big);
        snprintf(cfg.lambada, sizeof cfg.lambada, "%s", at("lambada.jsonl"));
        snprintf(want, sizeof want, "%s:1: line longer than", at("lambada.jsonl"));
        expect_error("lambada: line over the length cap", "lambada", tok, &cfg, want);
    }

    snprintf(cfg.commonsense, sizeof cfg.commonsense, "%s", at("cs"));
    cfg.n_commonsense_tasks = 1;
    struct {
        const char *task, *file, *labels, *line;
        const char *want;
    } cs[] = {
        {"piqa", "{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\"}\n", NULL, "1",
         "missing field \"label\" (and no piqa-labels.lst"},
        {"piqa", "{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\"}\n{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\"}\n",
         "0\n", "2", "no field \"label\" and piqa-labels.lst has only 1 labels"},
        {"piqa", "{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\"}\n", "0\nx\n", NULL, "piqa-labels.lst:2: expected an integer"},
        {"hellaswag", "{\"activity_label\": \"a\", \"ctx_a\": \"b\", \"ctx_b\": \"c\", \"endings\": [\"x\", \"y\"], \"label\": 2}\n",
         NULL, "1", "label 2 is not one of the 2 choices"},
        {"hellaswag", "{\"activity_label\": \"a\", \"ctx_a\": \"b\", \"ctx_b\": \"c\", \"endings\": \"xy\", \"label\": 0}\n",
         NULL, "1", "field \"endings\" must be a list"},
        {"winogrande", "{\"sentence\": \"no blank\", \"option1\": \"a\", \"option2\": \"b\", \"answer\": \"1\"}\n", NULL, "1",
         "field \"sentence\" has no blank"},
        {"winogrande", "{\"sentence\": \"a _ b\", \"option1\": \"a\", \"option2\": \"b\", \"answer\": \"3\"}\n", NULL, "1",
         "field \"answer\" must be \"1\" or \"2\""},
        {"arc_easy", "{\"question\": {\"stem\": \"q\", \"choices\": [{\"text\": \"a\", \"label\": \"A\"}, {\"text\": \"b\", "
                     "\"label\": \"B\"}]}, \"answerKey\": \"C\"}\n", NULL, "1", "answerKey \"C\" is not one of"},
        {"siqa", "{\"context\": \"c\", \"question\": \"q\", \"answerA\": \"a\", \"answerB\": \"b\", \"answerC\": \"c\", "
                 "\"label\": \"4\"}\n", NULL, "1", "label 4 is not 1, 2 or 3"},
        {"boolq", "{\"question\": \"q\", \"passage\": \"p\", \"answer\": \"yes\"}\n", NULL, "1",
         "field \"answer\" must be true or false"},
        {"openbookqa", "{\"question_stem\": \"q\", \"choices\": {\"text\": [\"a\"], \"label\": [\"A\", \"B\"]}, "
                       "\"answerKey\": \"A\"}\n", NULL, "1",
         "fields \"choices.text\" and \"choices.label\" must be lists of one length"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char name[64], lab[80];
        snprintf(name, sizeof name, "cs/%s.jsonl", cs[i].task);
        snprintf(lab, sizeof lab, "cs/%s-labels.lst", cs[i].task);
        write_file(at(name), cs[i].file);
        unlink(at(lab));
        if (cs[i].labels)
            write_file(at(lab), cs[i].labels);
        snprintf(cfg.commonsense_tasks[0], ENG_NAME_MAX, "%s", cs[i].task);
        if (cs[i].line)
            snprintf(want, sizeof want, "%s:%s: %s", at(name), cs[i].line, cs[i].want);
        else
            snprintf(want, sizeof want, "%s", cs[i].want);
        char what[96];
        snprintf(what, sizeof what, "%s: malformed item %zu", cs[i].task, i);
        expect_error(what, "commonsense", tok, &cfg, want);
        unlink(at(lab));
    }
    snprintf(cfg.commonsense_tasks[0], ENG_NAME_MAX, "boolq");
    unlink(at("cs/boolq.jsonl"));
    snprintf(want, sizeof want, "%s: cannot open", at("cs/boolq.jsonl"));
    expect_error("commonsense: missing task file", "commonsense", tok, &cfg, want);

    snprintf(cfg.wikitext, sizeof cfg.wikitext, "%s", at("wiki.raw"));
    write_file(at("wiki.raw"), " \n \n\t\n");
    snprintf(want, sizeof want, "%s: no WikiText document", at("wiki.raw"));
    expect_error("wikitext: no document", "wikitext", tok, &cfg, want);
    snprintf(cfg.wikitext, sizeof cfg.wikitext, "%s", at("none.raw"));
    snprintf(want, sizeof want, "%s: cannot open", at("none.raw"));
    expect_error("wikitext: missing file", "wikitext", tok, &cfg, want);

    snprintf(cfg.alignment_ids, sizeof cfg.alignment_ids, "%s", at("ids.txt"));
    write_file(at("ids.txt"), "1 2 3\n4 x 5\n");
    cfg.alignment_tokens = 10;
    {
        eng_eval_lm lm = {NULL, 8, 64, 64, V, zeros, NULL};
        lm.probe = NULL;
        tlm_err e2 = {0};
        int rc = eng_eval_alignment(&lm, tok, &cfg, NULL, &e2);
        TAP_OK(rc != 0 && strstr(e2.msg, "exposes no per-layer"), "alignment: a model without a probe is refused");
    }

    /* ---- NIAH: determinism */
    const char *hay = "It was the best of times, it was the worst of times. It was the age of wisdom! "
                      "It was the age of foolishness? It was the epoch of belief, it was the epoch of incredulity. "
                      "We had everything before us, we had nothing before us.\n";
    write_file(at("hay.txt"), hay);
    for (int task = 0; task < 3; task++) {
        ev_buf p1 = {0}, p2 = {0}, p3 = {0};
        char v1[64], v2[64], v3[64];
        int32_t *i1 = NULL, *i2 = NULL, *i3 = NULL;
        size_t n1 = 0, n2 = 0, n3 = 0;
        int g1 = 0, g2 = 0, g3 = 0;
        int rc = ev_niah_prompt(tok, at("hay.txt"), task, 42, 900, 3, &p1, v1, &i1, &n1, &g1, &e) ||
                 ev_niah_prompt(tok, at("hay.txt"), task, 42, 900, 3, &p2, v2, &i2, &n2, &g2, &e) ||
                 ev_niah_prompt(tok, at("hay.txt"), task, 43, 900, 3, &p3, v3, &i3, &n3, &g3, &e);
        TAP_OK(!rc, "s_niah_%d: items generated%s%s", task + 1, rc ? ": " : "", rc ? e.msg : "");
        if (rc)
            continue;
        TAP_OK(p1.n == p2.n && !memcmp(p1.p, p2.p, p1.n) && !strcmp(v1, v2) && n1 == n2,
               "s_niah_%d: same seed, same prompt and value", task + 1);
        TAP_OK(strcmp(v1, v3) || p1.n != p3.n || memcmp(p1.p, p3.p, p1.n), "s_niah_%d: another seed, another item",
               task + 1);
        TAP_OK((int64_t)n1 + g1 <= 900 && (int64_t)n1 + g1 > 900 - 120,
               "s_niah_%d: prompt %zu tokens + generation %d fills the length 900", task + 1, n1, g1);
        char needle[160];
        snprintf(needle, sizeof needle, " for ");
        TAP_OK(strstr(p1.p, "is: ") && strstr(p1.p, v1) && strstr(p1.p, needle) &&
                   !strncmp(p1.p + p1.n - strlen("mentioned in the provided text is"), "mentioned in the provided text is",
                            strlen("mentioned in the provided text is")),
               "s_niah_%d: the prompt holds the needle and ends with the answer prefix", task + 1);
        if (task == 2)
            TAP_OK(strlen(v1) == 36 && v1[8] == '-' && v1[13] == '-' && v1[14] == '4' && v1[18] == '-' && v1[23] == '-',
                   "s_niah_3: value %s is a version-4 UUID", v1);
        else
            TAP_OK(strlen(v1) == 7 && v1[0] >= '1', "s_niah_%d: value %s has 7 digits", task + 1, v1);
        TAP_DIAG("s_niah_%d value %s, %zu prompt tokens", task + 1, v1, n1);
        ev_buf_clear(&p1), ev_buf_clear(&p2), ev_buf_clear(&p3);
        free(i1), free(i2), free(i3);
    }

    /* ---- NIAH: the exact-match rule */
    TAP_OK(ev_niah_score_text("1234567", " 1234567.") && ev_niah_score_text("1234567", "1234567") &&
               ev_niah_score_text("ab-cd", "\n AB-CD and more"),
           "exact match: the value, then a non-word character or the end");
    TAP_OK(!ev_niah_score_text("1234567", " 12345678") && !ev_niah_score_text("1234567", "123456") &&
               !ev_niah_score_text("1234567", "x 1234567") && !ev_niah_score_text("1234567", "") &&
               !ev_niah_score_text("ab-cd", "ab-cd-ef"),
           "exact match: longer, shorter, later or empty answers do not count");

    /* ---- NIAH: the whole suite with scripted models */
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.niah_haystack, sizeof cfg.niah_haystack, "%s", at("hay.txt"));
    cfg.n_niah_tasks = 3;
    strcpy(cfg.niah_tasks[0], "s_niah_1");
    strcpy(cfg.niah_tasks[1], "s_niah_2");
    strcpy(cfg.niah_tasks[2], "s_niah_3");
    cfg.n_niah_lengths = 2;
    cfg.niah_lengths[0] = 700;
    cfg.niah_lengths[1] = 1200;
    cfg.niah_n = 4;
    cfg.niah_seed = 9;
    for (int wrong = 0; wrong < 2; wrong++) {
        mock m = {calloc((size_t)MAX_T * V, sizeof(float)), wrong, 0};
        eng_eval_lm lm = {&m, 1, MAX_T, MAX_T, V, mock_logits, NULL};
        got g = {0};
        eng_eval_sink s = {&g, on_result, NULL, NULL, NULL, NULL};
        int rc = eng_eval_niah(&lm, tok, &cfg, &s, &e);
        TAP_OK(!rc && g.count == 6, "niah with a %s model: %d results%s%s", wrong ? "wrong" : "oracle", g.count,
               rc ? ": " : "", rc ? e.msg : "");
        int all = g.count == 6;
        for (int i = 0; i < g.count; i++) {
            all = all && !strcmp(g.metric[i], "exact_match") && g.n[i] == 4 && g.value[i] == (wrong ? 0.0 : 1.0);
            TAP_DIAG("%s %s = %g (n %lld)", g.task[i], g.metric[i], g.value[i], (long long)g.n[i]);
        }
        TAP_OK(all, "niah: exact_match %s for every task and length (s_niah_1@700 ... s_niah_3@1200)",
               wrong ? "0" : "1");
        TAP_OK(!rc && !strcmp(g.task[0], "s_niah_1@700") && !strcmp(g.task[5], "s_niah_3@1200"),
               "niah task names are task@length");
        TAP_DIAG("%d forward passes", m.calls);
        free(m.logits);
    }
    cfg.niah_lengths[0] = 100;
    {
        mock m = {calloc((size_t)MAX_T * V, sizeof(float)), 0, 0};
        eng_eval_lm lm = {&m, 1, MAX_T, MAX_T, V, mock_logits, NULL};
        int rc = eng_eval_niah(&lm, tok, &cfg, NULL, &e);
        TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "too short"), "niah: a length shorter than the prompt is refused: %s",
               e.msg);
        free(m.logits);
    }

    check_cases();

    /* the GPT-2 keeps its weights in host memory */
    eng_ops device = *BE->ops;
    device.name = "device";
    device.is_host = 0;
    eng_backend dev = {&device, BE->ctx};
    eng_gpt2 *g = NULL;
    int grc = eng_gpt2_load(&g, dir, &dev, 1, &e);
    TAP_OK(grc == TLM_ECONFIG && !g && strstr(e.msg, "host memory") && strstr(e.msg, "device"),
           "gpt2: a backend not on host memory is refused: %s", e.msg);

    eng_backend_free(BE);
    eng_tok_free(tok);
    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    return tap_done();
}
