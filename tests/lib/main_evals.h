/* main_evals.h: the ten evaluations the paper's main table reads, as
 * results.db stores them (suite, task, metric), for the programs that
 * write made-up results for tlm-report: the fixture databases
 * (tests/report/report_mkdb.c, mkdb_profiles.c) and bench_report_gen.
 * The table itself is reports/t_main.c; this is the rows a job must have
 * for it.  Header-only; not a test. */
#ifndef TLM_TESTS_MAIN_EVALS_H
#define TLM_TESTS_MAIN_EVALS_H

/* the first MAIN_EVALS_PPL are perplexities (lower is better), the rest accuracies */
#define MAIN_EVALS_N 10
#define MAIN_EVALS_PPL 2
static const char *const MAIN_EVALS[MAIN_EVALS_N][3] = {
    {"wikitext", "wikitext", "word_perplexity"},
    {"lambada", "lambada", "perplexity"},
    {"lambada", "lambada", "acc"},
    {"commonsense", "piqa", "acc"},
    {"commonsense", "hellaswag", "acc_norm"},
    {"commonsense", "winogrande", "acc"},
    {"commonsense", "arc_easy", "acc"},
    {"commonsense", "arc_challenge", "acc_norm"},
    {"commonsense", "siqa", "acc"},
    {"commonsense", "boolq", "acc"},
};

#endif
