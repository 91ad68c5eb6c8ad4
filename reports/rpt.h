/* rpt.h: tlm-report's internals, shared by its files (not a public API).
 *
 * The flow: rpt_ctx_open loads the jobs of results.db (optionally one
 * sweep's) once and groups them by their axis columns; a table builder
 * (t_*.c) asks for final metric values (cached per metric), aggregates seeds
 * into rpt_stat and fills an rpt_table, a format-neutral grid; a renderer
 * (render_*.c) prints it as Markdown, CSV, LaTeX or JSON.  Figures
 * (fig_*.c, plot.h) read the same context.
 *
 * Must not: write to results.db (it is opened read-only), exit, or print
 * outside a renderer's FILE.  Every function returns 0 or a negative
 * tlm_status with the message in `e`. */
#ifndef TLM_REPORTS_RPT_H
#define TLM_REPORTS_RPT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/db.h"
#include "common/err.h"

/* ------------------------------------------------------------ arena */
/* Strings and small arrays of one table or one job list: freed at once. */
typedef struct rpt_block rpt_block;
typedef struct rpt_arena {
    rpt_block *head;
} rpt_arena;

void *rpt_alloc(rpt_arena *a, size_t n); /* zeroed; NULL when out of memory */
char *rpt_strdup(rpt_arena *a, const char *s); /* NULL in, NULL out */
char *rpt_printf(rpt_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *rpt_vprintf(rpt_arena *a, const char *fmt, va_list ap);
void rpt_arena_clear(rpt_arena *a);

/* ------------------------------------------------------------ jobs */
/* A job's state: results.db's (db/db.h DB_JOB_STATUS_MAP). */
enum {
    RPT_PENDING = DB_JOB_PENDING,
    RPT_RUNNING = DB_JOB_RUNNING,
    RPT_DONE = DB_JOB_DONE,
    RPT_FAILED = DB_JOB_FAILED,
    RPT_INTERRUPTED = DB_JOB_INTERRUPTED
};

typedef struct rpt_job {
    const char *key, *sweep, *label, *arch, *scale, *schedule, *groups, *reason, *message, *widths;
    double ratio_start, ratio_end; /* NaN when not applicable (NULL) */
    int64_t seed, tokens_total, tokens_done;
    int attempts, status;
    double final_loss; /* NaN when NULL */
    int group;         /* index into rpt_ctx.groups */
    /* identities from the config JSON (0 when it is not JSON): the config
     * apart from its seed, and apart from its seed and taper */
    uint64_t config_id, setting_id;
} rpt_job;

/* Jobs that differ only by seed: one cell of a table. */
typedef struct rpt_group {
    const char *arch, *scale, *schedule, *groups, *label;
    const char *variant; /* the panel's (rpt_pgroup.variant) */
    double ratio_start, ratio_end;
    int64_t tokens_total;
    int *jobs; /* indices into rpt_ctx.jobs, seeds ascending */
    int n_jobs;
    int panel; /* index into rpt_ctx.panels */
} rpt_group;

/* Groups of one setting (everything but the taper and the seed: the
 * architecture, scale, token budget and any other key a sweep varies): one
 * panel of a table. */
typedef struct rpt_pgroup {
    const char *arch, *scale;
    /* "" when the panel is the only setting of its architecture, scale and
     * token budget; else what sets it apart: "train.lr=0.003" */
    const char *variant;
    int64_t tokens_total;
    int *groups; /* indices into rpt_ctx.groups */
    int n_groups;
} rpt_pgroup;

/* Final value of one evaluation metric per job (the largest step's). */
enum { RPT_V_ABSENT = 0, RPT_V_OK, RPT_V_NAN, RPT_V_INF };
typedef struct rpt_values {
    double *v;            /* per job */
    unsigned char *state; /* per job: RPT_V_* */
} rpt_values;

typedef struct rpt_opts {
    const char *sweep;        /* NULL: every job */
    const char *arch, *scale; /* NULL: any */
    const char *const *jobs;  /* --job selectors: key prefixes or labels */
    int n_jobs;
    int paper;                /* --paper */
    const char *taper;        /* "tapered" of main/niah: "cosine:1.5:0.5" */
    int max_series;           /* figures: at most this many lines (default 12) */
} rpt_opts;

typedef struct rpt_metric_cache rpt_metric_cache;

typedef struct rpt_ctx {
    db *d;
    sqlite3 *h;
    const char *db_path;
    rpt_opts o;
    char taper_schedule[16];
    double taper_start, taper_end;
    rpt_job *jobs;
    int n_jobs;
    rpt_group *groups;
    int n_groups;
    rpt_pgroup *panels;
    int n_panels;
    rpt_metric_cache *cache;
    int n_left_out; /* jobs no current sweep definition lists (or not --sweep's any more): left out */
    int *key_slots; /* open-addressing hash of job keys -> index (-1 empty) */
    int n_slots;    /* a power of two */
    rpt_arena a;
} rpt_ctx;

/* Loads the jobs in scope: --sweep's, or by default those of the latest
 * definition of every sweep (jobs that only an earlier definition listed
 * are left out and counted in n_left_out). */
int rpt_ctx_open(rpt_ctx *c, const char *db_path, const rpt_opts *o, tlm_err *e);
/* A failed read of the database's `table`: TLM_EIO, "DB: reading TABLE:
 * SQLite's message" (one wording for every query of the reports). */
int rpt_db_err(const rpt_ctx *c, const char *table, tlm_err *e);
/* sqlite3_prepare_v2 of sql on c's database, or rpt_db_err(c, table). */
int rpt_prepare(rpt_ctx *c, const char *sql, sqlite3_stmt **s, const char *table, tlm_err *e);
/* The note that says what the scope left out (arena a); for n_left_out > 0. */
const char *rpt_left_out_text(const rpt_ctx *c, rpt_arena *a);
/* --taper SCHEDULE:START:END; TLM_ECONFIG with the expected form.  main()
 * checks it with the other options (a usage error, status 2), before the
 * database is opened. */
int rpt_taper_parse(const char *spec, char sched[16], double *start, double *end, tlm_err *e);
void rpt_ctx_close(rpt_ctx *c);
void rpt_metric_cache_free(rpt_metric_cache *m);

/* The cached final values of (suite, task, metric) for every job; suite or
 * task may be NULL (any), not both.  Owned by c. */
int rpt_metric(rpt_ctx *c, const char *suite, const char *task, const char *metric, const rpt_values **out,
               tlm_err *e);
/* Distinct tasks of a suite that have `metric`, sorted (arena-owned by c). */
int rpt_suite_tasks(rpt_ctx *c, const char *suite, const char *metric, const char ***tasks, int *n, tlm_err *e);
/* Per-layer values of a layer statistic at the job's last step that has it:
 * *n layers (0 when none), out[l] (NaN for non-finite or absent).  out
 * is malloc'd (caller frees). */
int rpt_layer_stat(rpt_ctx *c, const char *job, const char *name, double **out, int *n, tlm_err *e);
/* A layer statistic averaged over the group's seeds, per layer (NaN where
 * no seed has it); *out malloc'd, *n = 0 when none. */
int rpt_group_layer_mean(rpt_ctx *c, const rpt_group *g, const char *name, double **out, int *n, tlm_err *e);
/* The job's last training loss: final_loss, else the last step's (NaN when
 * that was NaN).  Returns 1 when there is one, 0 when none. */
int rpt_last_loss(rpt_ctx *c, int job, double *loss, tlm_err *e);
/* Per-layer d_ff from jobs.widths; *n = 0 when absent. */
int rpt_job_widths(const rpt_job *j, double *out, int cap, int *n);

/* Index of the loaded job with this key, -1 when it is not loaded. */
int rpt_job_find(const rpt_ctx *c, const char *key);
/* "wider-early" | "wider-middle" | "wider-late" | "flat" for a groups list,
 * by where the widest group sits; NULL when unparsable. */
const char *rpt_blocks_kind(const char *groups);
/* Schedules with start/end ratios. */
int rpt_is_ratio_schedule(const char *schedule);
/* Where a group comes in the tables and figures that pick a few: 0 for
 * uniform, 1 for the taper (--taper), then 2 for blocks and 3 for any
 * other taper when blocks_apart, else 2 for both. */
int rpt_group_rank(const rpt_ctx *c, const rpt_group *g, int blocks_apart);
/* "440m" and 30e9 -> "440m, 30B tokens" (arena). */
const char *rpt_panel_title(rpt_arena *a, const char *arch, const char *scale, int64_t tokens);
/* Human token counts: 30000000000 -> "30B". */
void rpt_fmt_tokens(char *out, size_t cap, int64_t tokens);

/* ------------------------------------------------------------ statistics */
typedef struct rpt_stat {
    double mean, std; /* over n finite values; std is the sample one, NaN when n < 2 */
    int n;
    int jobs;          /* jobs in the group (0: not in the sweep) */
    int pending, running, failed, interrupted, nonfinite, absent; /* jobs without a value, by why */
    const char *fail_reason; /* of the first failed job */
} rpt_stat;

/* Aggregates v over a group's jobs (seeds); values are multiplied by scale. */
void rpt_stat_group(const rpt_ctx *c, const rpt_group *g, const rpt_values *v, double scale, rpt_stat *s);
/* Same, with v[i] and state[i] the values of job jobs[i] (i = 0..n_jobs-1). */
void rpt_stat_jobs(const rpt_ctx *c, const int *jobs, int n_jobs, const double *v, const unsigned char *state,
                   double scale, rpt_stat *s);
/* Why a stat has no value ("pending", "failed (diverged)", "not in sweep"...). */
void rpt_stat_why(const rpt_stat *s, char *out, size_t cap);
/* What a stat with a value leaves out ("1 pending, 1 NaN"), "" when nothing. */
void rpt_stat_note(const rpt_stat *s, char *out, size_t cap);
/* A paired difference a - b over seeds (same seed, same data order): the
 * mean of the per-seed differences with its 95% Student-t interval.  Seeds
 * with a value on one side only are left out and counted; with no seed in
 * common but values on both sides, the difference of the means is given
 * without an interval. */
enum { RPT_SIG_NONE = -1, RPT_SIG_NO = 0, RPT_SIG_YES = 1 };
typedef struct rpt_paired {
    double mean;    /* NaN when a or b has no value */
    double sd;      /* sample std of the differences; NaN when n < 2 */
    double lo, hi;  /* 95% interval; NaN when n < 2 */
    int n;          /* pairs: seeds with a value in both */
    int paired;     /* 1 mean over pairs, 0 difference of means (no seed in common), -1 no value */
    int sig;        /* RPT_SIG_*: whether [lo, hi] excludes 0 */
    int only_a, only_b; /* seeds with a value in a (b) alone */
    char note[96];  /* "seed 2 unpaired", "n=1: no interval", "no seed in common"; "" when none */
} rpt_paired;

/* The paired difference of v over two groups' jobs (values scaled). */
void rpt_paired_groups(const rpt_ctx *c, const rpt_group *a, const rpt_group *b, const rpt_values *v, double scale,
                       rpt_paired *p);
/* Same, with va[i]/sa[i] the values of job ja[i] and vb[i]/sb[i] of jb[i]. */
void rpt_paired_jobs(const rpt_ctx *c, const int *ja, int na, const double *va, const unsigned char *sa,
                     const int *jb, int nb, const double *vb, const unsigned char *sb, double scale, rpt_paired *p);
/* What every table with paired differences says under itself. */
#define RPT_DELTA_NOTE                                                                                             \
    "Δ: the mean over seeds of the per-seed difference (same seed, same data order), with its 95% Student-t "    \
    "interval [lo, hi] and the number of pairs n; † marks an interval that excludes 0 (the seeds support a "    \
    "difference); a seed run on one side only is left out and named."
/* The 0.975 quantile of Student's t with df degrees of freedom (df >= 1);
 * NaN for df < 1. */
double rpt_t975(int df);
/* Pearson correlation of y with x = 0..n-1 over finite y; NaN when < 3 points. */
double rpt_pearson_depth(const double *y, int n);

/* ------------------------------------------------------------ tables */
enum { RPT_OURS = 0, RPT_PAPER, RPT_DIFF, RPT_DERIVED };
/* A DELTA column holds paired differences (mean, 95% interval, pairs). */
enum { RPT_COL_TEXT = 0, RPT_COL_STAT, RPT_COL_NUM, RPT_COL_DELTA };
enum { RPT_CELL_NONE = 0, RPT_CELL_TEXT, RPT_CELL_STAT, RPT_CELL_NUM, RPT_CELL_MISSING, RPT_CELL_DELTA };

typedef struct rpt_col {
    const char *key;   /* machine name (CSV header, JSON key): "val_ppl" */
    const char *title; /* human header (Markdown, LaTeX): "val ppl" */
    int kind;          /* RPT_COL_* */
    int better;        /* -1 lower is better, +1 higher, 0 no best marked */
    int decimals;      /* Markdown/LaTeX rounding */
    int sign;          /* print '+' on positive values (differences) */
    int role;          /* RPT_OURS | RPT_PAPER | RPT_DIFF | RPT_DERIVED */
    int deltas;        /* a STAT column some rows of which are paired differences (main's Δ rows) */
} rpt_col;

typedef struct rpt_cell {
    int kind;         /* RPT_CELL_* */
    double v, std;    /* NUM: v; STAT: mean and std (NaN when n < 2); DELTA: mean difference */
    double lo, hi;    /* DELTA: the 95% interval (NaN when there is none) */
    int n;            /* STAT: values aggregated; DELTA: pairs */
    int sig;          /* DELTA: RPT_SIG_* */
    int paired;       /* DELTA: 1 over pairs, 0 difference of means (no seed in common) */
    const char *text; /* TEXT: content; MISSING: why; STAT, DELTA: note or NULL */
    int best;
} rpt_cell;

typedef struct rpt_row {
    int role; /* RPT_OURS, RPT_PAPER (the paper's figures), RPT_DIFF (ours - paper), RPT_DERIVED */
    rpt_cell *cells;
} rpt_row;

#define RPT_MAX_KEYS 4
typedef struct rpt_panel {
    const char *title;
    int n_keys; /* what identifies the panel: arch, scale, tokens... (CSV columns) */
    const char *key_names[RPT_MAX_KEYS], *key_vals[RPT_MAX_KEYS];
    rpt_col *cols;
    int n_cols;
    rpt_row *rows;
    int n_rows, cap_rows;
    const char **notes;
    int n_notes, cap_notes;
} rpt_panel;

/* One comparison a table makes (a Δ cell), kept with its words so that
 * report.md can say in sentences what the seeds support and the delta
 * figure can draw it beside the paper's Δ. */
typedef struct rpt_finding {
    const char *panel;          /* the panel's title */
    const char *what, *against; /* "wider-late", "uniform" */
    const char *unit;           /* "ppl", "accuracy points" */
    int better;                 /* -1 lower is better, +1 higher */
    int decimals;
    rpt_paired d;               /* d.paired < 0: no difference, why says why */
    const char *why;
    double paper;               /* the paper's Δ for the same comparison, NaN when it has none */
    int group;                  /* the compared group (rpt_ctx.groups), -1 when the table did not say */
} rpt_finding;

typedef struct rpt_table {
    const char *name, *title;
    const char *db_path, *sweep; /* for the header of each format */
    rpt_panel *panels;
    int n_panels, cap_panels;
    const char **notes; /* table-wide */
    int n_notes, cap_notes;
    rpt_finding *findings; /* in the order of the rows */
    int n_findings, cap_findings;
    int oom; /* an allocation failed: rpt_table_status reports it */
    rpt_arena a;
} rpt_table;

void rpt_table_init(rpt_table *t, const char *name, const char *title);
void rpt_table_clear(rpt_table *t);
/* A new panel with these columns (copied); NULL when out of memory. */
rpt_panel *rpt_panel_add(rpt_table *t, const char *title, const rpt_col *cols, int n_cols);
void rpt_panel_key(rpt_table *t, rpt_panel *p, const char *name, const char *value);
/* A panel of one setting: titled "Arch, scale, N tokens" (without arch
 * when it is NULL; then ", variant" when there is one; "... (not in
 * results.db)" unless in_db), with the keys arch, scale, tokens and, when
 * variant is not NULL, setting (rpt_variant gives it). */
rpt_panel *rpt_panel_add_setting(rpt_table *t, const char *arch, const char *scale, int64_t tokens,
                                 const char *variant, int in_db, const rpt_col *cols, int n_cols);
/* What a table passes as a panel's variant: NULL when no panel of the
 * context has one (the tables keep their three keys), else pg's ("" for
 * pg NULL or a panel that is the only setting of its axes). */
const char *rpt_variant(const rpt_ctx *c, const rpt_pgroup *pg);
/* A new row; returns its index, -1 when out of memory (setters ignore -1). */
int rpt_row_add(rpt_table *t, rpt_panel *p, int role);
void rpt_set_text(rpt_table *t, rpt_panel *p, int row, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rpt_set_num(rpt_panel *p, int row, int col, double v); /* NaN: left empty */
/* A stat: its value (with its note), or missing with its why. */
void rpt_set_stat(rpt_table *t, rpt_panel *p, int row, int col, const rpt_stat *s);
void rpt_set_missing(rpt_table *t, rpt_panel *p, int row, int col, const char *why);
/* A paired difference a - b; when one side has no value, missing with why
 * (b's why prefixed with b_name: "uniform pending"). */
void rpt_set_delta(rpt_table *t, rpt_panel *p, int row, int col, const rpt_paired *d, const rpt_stat *a,
                   const rpt_stat *b, const char *b_name);
/* Records the comparison that cell (row, col) of p shows, set by
 * rpt_set_delta from d (its why when it has no difference); strings copied. */
void rpt_finding_add(rpt_table *t, const rpt_panel *p, int row, int col, const char *what, const char *against,
                     const char *unit, int better, const rpt_paired *d, double paper);
/* The finding in words, from its numbers only: "wider-late is worse than
 * uniform by 1.10 [0.85, 1.35] ppl, 3 seeds", "wider-early is not
 * distinguishable from uniform (+0.03 [-0.25, +0.32] ppl, 3 seeds)". */
void rpt_finding_text(const rpt_finding *f, char *out, size_t cap);
/* Note under a panel (p) or the table (p NULL). */
void rpt_note(rpt_table *t, rpt_panel *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Marks the best value per column (columns with `better`, rows and
 * columns of our own results only; ties are all marked). */
void rpt_mark_best(rpt_table *t);
/* Cells of our results: *filled with a value, *total (value or missing). */
void rpt_table_count(const rpt_table *t, int *filled, int *total);
int rpt_table_status(const rpt_table *t, tlm_err *e);

/* ------------------------------------------------------------ table registry */
/* What a table or figure reads of the options, so that an option it
 * would ignore is refused (tlm-report --table runs --paper). */
enum { RPT_USES_PAPER = 1, RPT_USES_TAPER = 2, RPT_USES_SERIES = 4 };

typedef struct rpt_table_def {
    const char *name;
    const char *what;  /* one line for --help and --list */
    const char *title; /* the table's heading in every format */
    int (*build)(rpt_ctx *c, rpt_table *t, tlm_err *e);
    unsigned uses;    /* RPT_USES_* */
} rpt_table_def;

extern const rpt_table_def rpt_table_defs[];
extern const int rpt_n_table_defs;
const rpt_table_def *rpt_table_find(const char *name);
/* Builds a table (fills t, which the caller frees with rpt_table_clear). */
int rpt_table_build(rpt_ctx *c, const rpt_table_def *def, rpt_table *t, tlm_err *e);

/* One panel of a table for pg (NULL: the paper's own setting, which
 * results.db lacks) from the values v. */
typedef int (*rpt_panel_fn)(rpt_ctx *c, rpt_table *t, const rpt_pgroup *pg, const rpt_values *v, tlm_err *e);
/* build for every panel that holds a group want accepts; when none does
 * and --paper is given, once with pg NULL (the paper's numbers alone). */
int rpt_build_panels(rpt_ctx *c, rpt_table *t, int (*want)(const rpt_group *g), rpt_panel_fn build,
                     const rpt_values *v, tlm_err *e);
/* Whether a panel was trained as the paper's Figure 2 and Table 1 were:
 * the 440M Transformer++ on 30B tokens of a Llama tokenizer (unknown
 * counts as one).  Only then do the tables give ours − paper: a 1M
 * byte-level perplexity minus a 440M token-level one means nothing, and
 * the tables compare the two Δ instead.  pg NULL: no. */
int rpt_paper_setting(const rpt_ctx *c, const rpt_pgroup *pg);
/* Whether job's tokenizer (its config's; unknown counts) is the paper's. */
int rpt_paper_tokenizer(const rpt_ctx *c, int job);
/* With --paper, under a panel of another setting than the paper's: compare
 * Δ, not the perplexities. */
void rpt_note_paper_setting(const rpt_ctx *c, rpt_table *t, rpt_panel *p, const rpt_pgroup *pg);

int rpt_build_wider(rpt_ctx *c, rpt_table *t, tlm_err *e);
int rpt_build_ratio(rpt_ctx *c, rpt_table *t, tlm_err *e);
int rpt_build_main(rpt_ctx *c, rpt_table *t, tlm_err *e);
int rpt_build_alignment(rpt_ctx *c, rpt_table *t, tlm_err *e);
int rpt_build_niah(rpt_ctx *c, rpt_table *t, tlm_err *e);
int rpt_build_runs(rpt_ctx *c, rpt_table *t, tlm_err *e);

/* ------------------------------------------------------------ rendering */
enum { RPT_FMT_MD = 0, RPT_FMT_CSV, RPT_FMT_LATEX, RPT_FMT_JSON };
/* "md" | "markdown" | "csv" | "latex" | "tex" | "json" -> RPT_FMT_*, -1 when unknown. */
int rpt_format_parse(const char *s);
const char *rpt_format_ext(int fmt);
int rpt_render(const rpt_table *t, int fmt, FILE *f, tlm_err *e);
int rpt_render_md(const rpt_table *t, FILE *f);
int rpt_render_csv(const rpt_table *t, FILE *f);
int rpt_render_latex(const rpt_table *t, FILE *f);
int rpt_render_json(const rpt_table *t, FILE *f);
/* JSON pieces the JSON renderer and the dashboard (dashboard/) share: a
 * string with its escapes (NULL prints null), a number exactly (non-finite
 * prints null). */
void rpt_json_str(FILE *f, const char *s);
void rpt_json_num(FILE *f, double v);

/* What Markdown and LaTeX print in the first column of a paper or
 * difference row (the row above says which cell it belongs to); NULL for
 * rows of our results. */
const char *rpt_role_label(int role);
/* A row's or column's source as the machine formats (CSV, JSON) name it:
 * "ours", "paper", "ours-paper", "derived". */
const char *rpt_role_name(int role);
/* Shared number formatting for the human formats: fixed decimals, '+' on
 * positive values when sign, "nan"/"inf" spelled out. */
void rpt_fmt_num(char *out, size_t cap, double v, int decimals, int sign);
/* An end of a confidence interval: as rpt_fmt_num, but one that is not 0
 * and rounds to 0 at these decimals gets up to three more, so its sign
 * shows ("[-0.002, +0.10]", not "[0.00, +0.10]"). */
void rpt_fmt_bound(char *out, size_t cap, double v, int decimals, int sign);
/* A DELTA cell for the human formats: "+1.10 [+0.80, +1.40] (n=3)",
 * "+0.04 (n=1: no interval)", with the note after "; ".  The mark of an
 * interval that excludes 0 is the renderer's. */
void rpt_fmt_delta(char *out, size_t cap, const rpt_cell *c, int decimals);

/* ------------------------------------------------------------ the paper */
/* The paper's figures (paper.c; source: shared/paper.md).  NaN when the
 * paper has no such number. */
double rpt_paper_fig2(const char *allocation); /* "uniform", "wider-early", ... : val ppl */
double rpt_paper_table1(const char *schedule, double ratio_start, double ratio_end); /* val ppl */
double rpt_paper_table1_uniform(void);
/* Table 2: scale "760m" | "1.3b", arch, tapered 0/1, metric key as in t_main.c. */
double rpt_paper_table2(const char *scale, const char *arch, int tapered, const char *metric);
/* Table 3 (NIAH): the two 16K cells the sources quote; NaN otherwise. */
double rpt_paper_niah16k(const char *arch, int tapered);
/* The scale and token budget the paper's figure 2 / table 1 used. */
#define RPT_PAPER_440M_SCALE "440m"
#define RPT_PAPER_440M_ARCH "transformer"
#define RPT_PAPER_440M_TOKENS 30000000000LL
/* The token budget of the paper's Table 2 at a scale; 0 when not reported. */
int64_t rpt_paper_table2_tokens(const char *scale);
/* A difference of two of the paper's figures without binary noise
 * (16.28 - 15.18 = -1.1, not -1.1000000000000014). */
double rpt_paper_round(double v);
/* Names the paper uses for our arch keys ("transformer" -> "Transformer++"). */
const char *rpt_arch_title(const char *arch);
/* The paper's architectures in its order (our arch keys); NULL past the end. */
const char *rpt_paper_arch(size_t i);
/* Table 1's schedules (its columns, "cosine", "linear", "sigmoid") and its
 * ratio pairs (its rows) in the paper's order: 0, or -1 past the end. */
const char *rpt_paper_table1_schedule(size_t i); /* NULL past the end */
int rpt_paper_table1_ratio(size_t i, double *start, double *end);

/* ------------------------------------------------------------ output */
/* Writes through fn into path atomically (temp, fsync, rename), or to
 * stdout when path is NULL or "-". */
int rpt_write_output(const char *path, int (*fn)(void *ctx, FILE *f, tlm_err *e), void *ctx, tlm_err *e);

#endif
