/* test_unit.c: the pieces of tlm-report that need no database:
 * seed statistics against hand-computed values, the words for missing
 * cells, the blocks-schedule classification, number formatting (no "-0.00",
 * exact round trips for CSV/JSON), best-value marking (our rows only,
 * ties all marked), the exact output of each renderer on a small table
 * (escaping in Markdown, CSV quoting, LaTeX specials), the Pearson
 * correlation, and the paper's embedded numbers (each Table 2 average is
 * the mean of its eight accuracies, as the paper defines it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/rpt.h"
#include "tests/lib/tap.h"

/* A context with jobs in given states, no database. */
static rpt_job JOBS[6];
static rpt_ctx CTX;

static void set_jobs(const int *status, int n)
{
    memset(JOBS, 0, sizeof JOBS);
    for (int i = 0; i < n; i++) {
        JOBS[i].status = status[i];
        JOBS[i].reason = status[i] == RPT_FAILED ? "oom" : NULL;
    }
    memset(&CTX, 0, sizeof CTX);
    CTX.jobs = JOBS;
    CTX.n_jobs = n;
}

static void test_stats(void)
{
    int st[] = {RPT_DONE, RPT_DONE, RPT_DONE, RPT_PENDING, RPT_DONE, RPT_FAILED};
    set_jobs(st, 6);
    int idx[] = {0, 1, 2, 3, 4, 5};
    double v[] = {10, 12, 14, 99, NAN, 77};
    unsigned char s[] = {RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_OK, RPT_V_NAN, RPT_V_OK};
    rpt_stat a;
    rpt_stat_jobs(&CTX, idx, 6, v, s, 1.0, &a);
    TAP_OK(a.n == 3 && a.mean == 12 && fabs(a.std - 2) < 1e-12,
           "mean 12, sample std 2 over the finished seeds (n=%d, mean %.17g, std %.17g)", a.n, a.mean, a.std);
    TAP_OK(a.pending == 1 && a.failed == 1 && a.nonfinite == 1, "pending, failed and NaN seeds are counted apart");
    char buf[128];
    rpt_stat_note(&a, buf, sizeof buf);
    TAP_OK(!strcmp(buf, "1 pending, 1 failed, 1 NaN/inf"), "note: '%s'", buf);
    rpt_stat_jobs(&CTX, idx, 3, v, s, 100, &a);
    TAP_OK(a.mean == 1200 && fabs(a.std - 200) < 1e-9, "scale (percent) applies to mean and std");
    rpt_stat_note(&a, buf, sizeof buf);
    TAP_OK(buf[0] == '\0', "no note when every seed counts");
    rpt_stat_jobs(&CTX, idx, 1, v, s, 1.0, &a);
    TAP_OK(a.n == 1 && isnan(a.std), "one seed: no std");

    struct {
        int status[3], n;
        unsigned char state[3];
        const char *why;
    } cases[] = {
        {{RPT_RUNNING, RPT_PENDING, RPT_FAILED}, 3, {0, 0, 0}, "running"},
        {{RPT_PENDING, RPT_FAILED, 0}, 2, {0, 0, 0}, "pending"},
        {{RPT_INTERRUPTED, RPT_PENDING, 0}, 2, {0, 0, 0}, "interrupted"},
        {{RPT_FAILED, RPT_FAILED, 0}, 2, {0, 0, 0}, "failed (oom)"},
        {{RPT_DONE, 0, 0}, 1, {RPT_V_NAN, 0, 0}, "not finite (NaN/inf)"},
        {{RPT_DONE, 0, 0}, 1, {RPT_V_ABSENT, 0, 0}, "no eval"},
        {{0, 0, 0}, 0, {0, 0, 0}, "not in sweep"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_jobs(cases[i].status, cases[i].n);
        double vv[3] = {1, 2, 3};
        rpt_stat_jobs(&CTX, idx, cases[i].n, vv, cases[i].state, 1.0, &a);
        rpt_stat_why(&a, buf, sizeof buf);
        TAP_OK(a.n == 0 && !strcmp(buf, cases[i].why), "why: '%s' (want '%s')", buf, cases[i].why);
    }
    /* a running job's intermediate evaluation is not its result */
    int run[] = {RPT_RUNNING};
    set_jobs(run, 1);
    unsigned char ok1[] = {RPT_V_OK};
    double one[] = {5};
    rpt_stat_jobs(&CTX, idx, 1, one, ok1, 1.0, &a);
    TAP_OK(a.n == 0 && a.running == 1, "a running job's last evaluation does not count");
}

static void test_axes(void)
{
    TAP_OK(!strcmp(rpt_blocks_kind("1.5,1,0.5"), "wider-early"), "1.5,1,0.5 is wider-early");
    TAP_OK(!strcmp(rpt_blocks_kind("0.75,1.5,0.75"), "wider-middle"), "0.75,1.5,0.75 is wider-middle");
    TAP_OK(!strcmp(rpt_blocks_kind("0.5, 1, 1.5"), "wider-late"), "0.5, 1, 1.5 is wider-late");
    TAP_OK(!strcmp(rpt_blocks_kind("2,0.5,0.5,1"), "wider-early"), "four groups, widest first: wider-early");
    TAP_OK(!strcmp(rpt_blocks_kind("0.5,0.5,2,1"), "wider-middle"), "four groups, widest third: wider-middle");
    TAP_OK(!strcmp(rpt_blocks_kind("1,1,1"), "flat"), "equal groups: flat");
    TAP_OK(rpt_blocks_kind("1.5;x") == NULL && rpt_blocks_kind(NULL) == NULL, "unparsable groups: NULL");
    char b[32];
    rpt_fmt_tokens(b, sizeof b, 30000000000LL);
    TAP_OK(!strcmp(b, "30B"), "30e9 tokens: %s", b);
    rpt_fmt_tokens(b, sizeof b, 2500000);
    TAP_OK(!strcmp(b, "2.5M"), "2.5e6 tokens: %s", b);
}

static void test_format(void)
{
    char b[64];
    rpt_fmt_num(b, sizeof b, -0.001, 2, 1);
    TAP_OK(!strcmp(b, "0.00"), "a difference rounding to zero prints 0.00, not -0.00 (%s)", b);
    rpt_fmt_num(b, sizeof b, 0.33, 2, 1);
    TAP_OK(!strcmp(b, "+0.33"), "signed: %s", b);
    rpt_fmt_num(b, sizeof b, 16.275, 1, 0);
    TAP_OK(!strcmp(b, "16.3"), "one decimal: %s", b);
    rpt_fmt_num(b, sizeof b, INFINITY, 2, 0);
    TAP_OK(!strcmp(b, "inf"), "inf: %s", b);
    /* the exact numbers of CSV and JSON (eng_fmt_exact): tests/common/test_fmt.c */
    TAP_OK(rpt_format_parse("latex") == RPT_FMT_LATEX && rpt_format_parse("tex") == RPT_FMT_LATEX &&
               rpt_format_parse("xls") < 0,
           "format names");
}

static void test_pearson(void)
{
    double up[] = {1, 2, 3, 4, 5}, down[] = {5, 4, 3, 2, 1}, gap[] = {0, NAN, 2, 3, 4}, few[] = {1, 2};
    TAP_OK(fabs(rpt_pearson_depth(up, 5) - 1) < 1e-12 && fabs(rpt_pearson_depth(down, 5) + 1) < 1e-12,
           "Pearson r of a line with depth: +-1");
    TAP_OK(fabs(rpt_pearson_depth(gap, 5) - 1) < 1e-12, "NaN layers are skipped");
    TAP_OK(isnan(rpt_pearson_depth(few, 2)), "fewer than three points: NaN");
}

/* Renders t in fmt into a malloc'd string. */
static char *render(const rpt_table *t, int fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    eng_err e;
    if (!f || rpt_render(t, fmt, f, &e)) {
        if (f)
            fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    return buf;
}

static void test_render(void)
{
    rpt_table t;
    rpt_table_init(&t, "demo", "Demo table");
    const rpt_col cols[] = {
        {"name", "name", RPT_COL_TEXT, 0, 0, 0, RPT_OURS},
        {"ppl", "val ppl", RPT_COL_STAT, -1, 2, 0, RPT_OURS},
        {"delta", "Δ", RPT_COL_NUM, 0, 2, 1, RPT_DERIVED},
    };
    rpt_panel *p = rpt_panel_add(&t, "A & B", cols, 3);
    rpt_panel_key(&t, p, "arch", "transformer");
    int r0 = rpt_row_add(&t, p, RPT_OURS), r1 = rpt_row_add(&t, p, RPT_OURS), r2 = rpt_row_add(&t, p, RPT_OURS),
        r3 = rpt_row_add(&t, p, RPT_PAPER);
    rpt_set_text(&t, p, r0, 0, "a|b, \"c\"");
    rpt_stat s = {.mean = 16.28, .std = 0.125, .n = 3, .jobs = 3};
    rpt_set_stat(&t, p, r0, 1, &s);
    rpt_set_text(&t, p, r1, 0, "x_y 50%%");
    rpt_stat s1 = {.mean = 15.5, .std = NAN, .n = 1, .jobs = 2, .pending = 1};
    rpt_set_stat(&t, p, r1, 1, &s1);
    rpt_set_num(p, r1, 2, -0.78);
    rpt_set_text(&t, p, r2, 0, "late");
    rpt_stat s2 = {.jobs = 1, .failed = 1, .fail_reason = "diverged"};
    rpt_set_stat(&t, p, r2, 1, &s2);
    rpt_set_text(&t, p, r3, 0, "x_y 50%%");
    rpt_set_num(p, r3, 1, 14.0); /* the paper's row: better, but not ours, so never "best" */
    rpt_mark_best(&t);
    TAP_OK(p->rows[r1].cells[1].best && !p->rows[r0].cells[1].best && !p->rows[r3].cells[1].best,
           "best: lowest of our rows, paper rows ignored");
    int filled, total;
    rpt_table_count(&t, &filled, &total);
    TAP_OK(filled == 2 && total == 3, "count: 2 of 3 cells filled");

    char *md = render(&t, RPT_FMT_MD);
    const char *want_md = "## Demo table\n\n### A & B\n\n| name | val ppl | Δ |\n|---|---:|---:|\n"
                          "| a\\|b, \"c\" | 16.28 ± 0.12 (n=3) | - |\n"
                          "| x_y 50% | **15.50** (n=1; 1 pending) | -0.78 |\n"
                          "| late | _failed (diverged)_ | - |\n"
                          "| _paper_ | 14.00 | - |\n\n";
    TAP_OK(md && !strcmp(md, want_md), "Markdown exactly");
    if (md && strcmp(md, want_md))
        printf("# got:\n%s\n", md);
    char *csv = render(&t, RPT_FMT_CSV);
    const char *want_csv = "arch,source,name,ppl,ppl_std,ppl_n,ppl_note,delta,delta_note\r\n"
                           "transformer,ours,\"a|b, \"\"c\"\"\",16.28,0.125,3,,,\r\n"
                           "transformer,ours,x_y 50%,15.5,,1,1 pending,-0.78,\r\n"
                           "transformer,ours,late,,,,failed (diverged),,\r\n"
                           "transformer,paper,x_y 50%,14,,,,,\r\n";
    TAP_OK(csv && !strcmp(csv, want_csv), "CSV exactly (quoting, full precision, notes)");
    if (csv && strcmp(csv, want_csv))
        printf("# got:\n%s\n", csv);
    char *tex = render(&t, RPT_FMT_LATEX);
    TAP_OK(tex && strstr(tex, "x\\_y 50\\% & \\textbf{15.50} (n=1)\\textsuperscript{*} & -0.78 \\\\") &&
               strstr(tex, "\\begin{tabular}{lrr}") && strstr(tex, "A \\& B") &&
               strstr(tex, "name & val ppl & $\\Delta$ \\\\") && strstr(tex, "\\textit{failed (diverged)}") &&
               strstr(tex, "16.28 $\\pm$ 0.12 (n=3)"),
           "LaTeX: specials escaped, bold best, $\\pm$, Δ as math");
    char *json = render(&t, RPT_FMT_JSON);
    TAP_OK(json && strstr(json, "\"name\": \"a|b, \\\"c\\\"\"") &&
               strstr(json, "{\"value\": 15.5, \"std\": null, \"n\": 1, \"note\": \"1 pending\", \"best\": true}") &&
               strstr(json, "{\"value\": null, \"missing\": \"failed (diverged)\"}"),
           "JSON: escaped strings, null std, missing with why");
    free(md);
    free(csv);
    free(tex);
    free(json);
    rpt_table_clear(&t);
}

static void test_paper(void)
{
    TAP_OK(rpt_paper_fig2("wider-early") == 15.96 && rpt_paper_fig2("uniform") == 16.28 &&
               isnan(rpt_paper_fig2("flat")),
           "Figure 2 values");
    TAP_OK(rpt_paper_table1("cosine", 1.5, 0.5) == 14.44 && rpt_paper_table1("sigmoid", 1.75, 0.25) == 17.12 &&
               isnan(rpt_paper_table1("cosine", 1.1, 0.9)),
           "Table 1 values");
    static const char *const acc[] = {"lambada_acc", "piqa", "hellaswag", "winogrande",
                                      "arc_easy",    "arc_challenge", "siqa", "boolq"};
    static const char *const arch[] = {"transformer", "gated_attn", "hope_attn", "titans"};
    int consistent = 1;
    for (int a = 0; a < 4; a++)
        for (int tp = 0; tp < 2; tp++) {
            double sum = 0;
            for (int m = 0; m < 8; m++)
                sum += rpt_paper_table2("760m", arch[a], tp, acc[m]);
            double avg = rpt_paper_table2("760m", arch[a], tp, "avg");
            if (fabs(sum / 8 - avg) > 0.006) {
                consistent = 0;
                printf("# %s tapered=%d: mean of eight %.4f, avg %.2f\n", arch[a], tp, sum / 8, avg);
            }
        }
    TAP_OK(consistent, "Table 2 (760M): every avg is the mean of its eight accuracies");
    TAP_OK(rpt_paper_table2("1.3b", "titans", 1, "wikitext_ppl") == 15.76 &&
               isnan(rpt_paper_table2("1.3b", "titans", 1, "piqa")),
           "Table 2 (1.3B): WikiText given, per-task columns absent");
    TAP_OK(rpt_paper_niah16k("transformer", 1) == 27.6 && isnan(rpt_paper_niah16k("gated_attn", 0)),
           "Table 3: the two quoted cells");
    TAP_OK(rpt_paper_round(16.28 - 15.18) == 1.1, "paper differences without binary noise");
}

int main(void)
{
    test_stats();
    test_axes();
    test_format();
    test_pearson();
    test_render();
    test_paper();
    return tap_done();
}
