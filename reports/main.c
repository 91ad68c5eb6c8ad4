/* main.c: tlm-report, the paper's tables and figures from results.db.
 * Parses the command line, opens the database read-only and hands over to
 * a table (--table), a figure (--plot), the overview (--list) or the whole
 * report (--all).  The only place that prints errors and exits:
 * 0 done, 1 failed, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/fileio.h"
#include "reports/all.h"
#include "reports/plot.h"
#include "reports/rpt.h"

/* What the command line asks for. */
typedef struct cmdline {
    const char *dbpath, *table, *plot, *out;
    int list, all, fmt;
    const rpt_table_def *tdef;
    const rpt_figure_def *fdef;
    const char **jobv; /* --job's values (o.jobs is its read-only view) */
    size_t n_jobv;
    rpt_opts o;
} cmdline;

static int format_arg(const tlm_opt *row, const char *val, void *c, tlm_err *e)
{
    (void)row;
    if ((((cmdline *)c)->fmt = rpt_format_parse(val)) < 0)
        return tlm_errf(e, TLM_ECONFIG, "--format '%s': expected md, csv, latex or json", val);
    return 0;
}

static int taper_arg(const tlm_opt *row, const char *val, void *c, tlm_err *e)
{
    char sched[16];
    double a, b;
    (void)row;
    ((cmdline *)c)->o.taper = val;
    return rpt_taper_parse(val, sched, &a, &b, e);
}

/* The modes an option goes with (given with another, it is refused), and
 * what a table or figure must use for the option to matter (RPT_USES_*:
 * else a warning). */
#define TABLE TLM_OPT_MARK(0)
#define PLOT TLM_OPT_MARK(1)
#define LIST TLM_OPT_MARK(2)
#define ALL TLM_OPT_MARK(3)
#define ANY (TABLE | PLOT | LIST | ALL)
#define NEEDS_SHIFT 12
#define NEEDS(u) ((unsigned)(u) << NEEDS_SHIFT)

#define O(m) offsetof(cmdline, m)
static const tlm_opt OPTS[] = {
    {"db", "PATH", TLM_OPT_STR, O(dbpath), .def = DB_DEFAULT_PATH, .flags = ANY, .help = "the results database"},
    {"table", "NAME", TLM_OPT_STR, O(table), .flags = ANY, .help = "print one table (see below)"},
    {"format", "F", TLM_OPT_FUNC, O(fmt), .parse = format_arg, .def = "md", .flags = TABLE,
     .help = "with --table: md, csv, latex or json"},
    {"paper", NULL, TLM_OPT_FLAG, O(o.paper), .flags = ANY | NEEDS(RPT_USES_PAPER),
     .help = "put the paper's figures beside ours, with the difference"},
    {"list", NULL, TLM_OPT_FLAG, O(list), .flags = ANY,
     .help = "the tables and figures this database can fill, with their cells"},
    {"plot", "NAME", TLM_OPT_STR, O(plot), .flags = ANY, .help = "draw one figure into --out (.svg, .png or .pdf)"},
    {"all", NULL, TLM_OPT_FLAG, O(all), .flags = ANY,
     .help = "every table and figure into the folder --out (report.md, tables/, figures/ as SVG, PNG and PDF)"},
    {"out", "PATH", TLM_OPT_STR, O(out), .flags = TABLE | PLOT | ALL,
     .help = "output file (tables: default stdout) or folder (--all)"},
    {"sweep", "NAME", TLM_OPT_STR, O(o.sweep), .flags = ANY,
     .help = "only the jobs of this sweep (default: the latest definition of every sweep)"},
    {"arch", "A", TLM_OPT_STR, O(o.arch), .flags = ANY, .help = "only jobs of this architecture"},
    {"scale", "S", TLM_OPT_STR, O(o.scale), .flags = ANY, .help = "only jobs of this scale"},
    {"job", "KEY|LABEL", TLM_OPT_LIST, O(jobv), .count = O(n_jobv), .flags = ANY | TLM_OPT_REPEAT,
     .help = "only these jobs (key prefix of 6+ characters, or label); repeatable (a filter that matches no job "
             "is an error naming what there is)"},
    {"taper", "S:START:END", TLM_OPT_FUNC, O(o.taper), .parse = taper_arg, .flags = ANY | NEEDS(RPT_USES_TAPER),
     .help = "what \"tapered\" means in main, niah, alignment and the dff and rho figures (default "
             "cosine:1.5:0.5)"},
    {"max-series", "N", TLM_OPT_INT, O(o.max_series), .lo = 1, .hi = 1000, .def = "12",
     .flags = PLOT | ALL | NEEDS(RPT_USES_SERIES), .help = "lines per figure at most (--plot and --all)"},
    {"help", NULL, TLM_OPT_HELP, .help = "this text"},
    {0},
};
#undef O

static void usage(FILE *f)
{
    /* the modes, by hand: which options go with which is the point here */
    fputs("usage: tlm-report [--db results.db] --table NAME [--format md|csv|latex|json]\n"
          "                  [--paper] [--out FILE]\n"
          "       tlm-report [--db results.db] --list\n"
          "       tlm-report [--db results.db] --plot NAME --out FILE.svg|FILE.png|FILE.pdf\n"
          "                  [--max-series N]\n"
          "       tlm-report [--db results.db] --all --out DIR [--paper] [--max-series N]\n"
          "  each with the filters [--sweep NAME] [--arch A] [--scale S]\n"
          "  [--job KEY|LABEL]... [--taper S:START:END]\n"
          "\n"
          "Turns results.db (written by tlmd) into the paper's tables and figures.\n"
          "\n",
          f);
    tlm_cli cli = {.cmd = "tlm-report", .opts = OPTS, .col = 20};
    tlm_cli_options(f, &cli);
    fputs("\nTables:\n", f);
    for (int i = 0; i < rpt_n_table_defs; i++)
        fprintf(f, "  %-20s %s\n", rpt_table_defs[i].name, rpt_table_defs[i].what);
    fputs("\nFigures:\n", f);
    for (int i = 0; i < rpt_n_figure_defs; i++)
        fprintf(f, "  %-20s %s\n", rpt_figure_defs[i].name, rpt_figure_defs[i].what);
    fputs("\nSeeds aggregate as mean ± sample std (n); an empty cell says why (pending, running, failed,\n"
          "not in sweep).  The tables read the latest definition of each sweep (--sweep: one sweep's);\n"
          "jobs only an earlier definition listed are left out and counted in a note.  Figures are SVG;\n"
          "PNG and PDF need rsvg-convert (librsvg2-bin).  docs/report.md explains every table and figure.\n",
          f);
}

static void append(char *msg, size_t cap, const char *a, const char *b)
{
    size_t at = strlen(msg);
    tlm_msg_printf(msg + at, cap - at, "%s%s", a, b);
}

/* An option the chosen mode would ignore: NULL, or the message (in msg).
 * One the chosen table or figure ignores is warned about on stderr. */
static const char *unused_option(const tlm_cli *cli, const cmdline *c, unsigned uses, char *msg, size_t cap)
{
    unsigned mode = c->table ? TABLE : c->plot ? PLOT : c->list ? LIST : ALL;
    const char *mode_name = c->table ? "--table" : c->plot ? "--plot" : c->list ? "--list" : "--all";
    const char *name = c->table ? c->table : c->plot ? c->plot : "";
    for (size_t k = 0; OPTS[k].name; k++) {
        unsigned needs = OPTS[k].flags >> NEEDS_SHIFT;
        if (!cli->given[k] || OPTS[k].type == TLM_OPT_HELP)
            continue;
        if (!(OPTS[k].flags & mode)) {
            tlm_msg_printf(msg, cap, "--%s does nothing with %s; leave it out", OPTS[k].name, mode_name);
            return msg;
        }
        /* only a warning: one command line looped over every table (--paper on each) is a fair use */
        if ((c->table || c->plot) && needs && !(uses & needs))
            fprintf(stderr, "tlm-report: warning: --%s does nothing with %s %s; ignored\n", OPTS[k].name, mode_name,
                    name);
    }
    return NULL;
}

static int render_table(void *p, FILE *f, tlm_err *e)
{
    const void **a = p;
    return rpt_render(a[0], *(const int *)a[1], f, e);
}

static int fail(const tlm_err *e)
{
    fprintf(stderr, "tlm-report: %s\n", e->msg);
    return 1;
}

/* The options into c: -1 to go on, else the exit status (--help: 0,
 * usage errors: 2, said on stderr). */
static const tlm_cli_usage USAGE = {usage};

static int parse_args(int argc, char **argv, tlm_cli *cli, cmdline *c)
{
    int rc = tlm_cli_main(cli, "tlm-report", argc, argv, c, tlm_cli_help_usage, &USAGE, 2, 1);
    c->o.jobs = c->jobv;
    c->o.n_jobs = (int)c->n_jobv;
    return rc;
}

static const char *table_name(int i) { return rpt_table_defs[i].name; }
static const char *figure_name(int i) { return rpt_figure_defs[i].name; }

/* "unknown table 'x' (tables: a b c)": a name that is none of the n that
 * name_at gives, in msg */
static const char *unknown(char *msg, size_t cap, const char *kind, const char *name, int n,
                           const char *(*name_at)(int i))
{
    tlm_msg_printf(msg, cap, "unknown %s '%s' (%ss:", kind, name, kind);
    for (int i = 0; i < n; i++)
        append(msg, cap, " ", name_at(i));
    append(msg, cap, ")", "");
    return msg;
}

/* The combination asked for, checked before the database is opened:
 * NULL, or what is wrong (in msg). */
static const char *check_usage(const tlm_cli *cli, cmdline *c, char *msg, size_t cap)
{
    int modes = !!c->table + !!c->plot + c->list + c->all;
    if (modes != 1)
        return modes ? "choose one of --table, --plot, --list, --all"
                     : "nothing to do: give --table NAME, --plot NAME, --list or --all (try --help)";
    c->tdef = c->table ? rpt_table_find(c->table) : NULL;
    c->fdef = c->plot ? rpt_figure_find(c->plot) : NULL;
    tlm_err pe;
    if (c->table && !c->tdef)
        return unknown(msg, cap, "table", c->table, rpt_n_table_defs, table_name);
    if (c->plot && !c->fdef)
        return unknown(msg, cap, "figure", c->plot, rpt_n_figure_defs, figure_name);
    if (c->plot && !c->out)
        return "--plot needs --out FILE.svg, FILE.png or FILE.pdf";
    if (c->plot && rpt_image_kind(c->out) < 0) {
        tlm_msg_printf(msg, cap, "--out '%s': a figure is written as .svg, .png or .pdf", c->out);
        return msg;
    }
    if (c->all && !c->out)
        return "--all needs --out DIR";
    const char *out = c->out;
    if (tlm_path_check_len("--db", c->dbpath, TLM_PATH_CAP - 1 - 16, &pe) ||
        tlm_path_not_dir("--db", c->dbpath, "an SQLite database file, such as results.db", &pe) ||
        (out && tlm_path_check_len("--out", out, TLM_PATH_CAP - 1 - 64, &pe)) ||
        (out && !c->all && tlm_path_not_dir("--out", out, "a file (only --all writes a folder)", &pe)) ||
        (out && c->all && tlm_path_not_file("--out", out, "the folder --all writes into", &pe))) {
        /* --out leaves room for the temporary name beside it, and for tables/NAME.EXT under --all's folder */
        tlm_msg_copy(msg, cap, pe.msg);
        return msg;
    }
    return unused_option(cli, c, c->table ? c->tdef->uses : c->plot ? c->fdef->uses : ~0u, msg, cap);
}

static int run_table(rpt_ctx *ctx, const cmdline *c, tlm_err *e)
{
    rpt_table t;
    int rc = rpt_table_build(ctx, c->tdef, &t, e);
    if (!rc) {
        const void *arg[2] = {&t, &c->fmt};
        rc = rpt_write_output(c->out, render_table, arg, e);
    }
    if (!rc && t.n_panels == 0)
        fprintf(stderr, "tlm-report: %s: nothing in %s for this table yet (%s)\n", c->table, c->dbpath,
                c->tdef->what);
    rpt_table_clear(&t);
    return rc;
}

static int run_plot(rpt_ctx *ctx, const cmdline *c, tlm_err *e)
{
    rpt_figure fig;
    rpt_figure_init(&fig);
    int rc = c->fdef->build(ctx, &fig, e);
    if (!rc && fig.note)
        fprintf(stderr, "tlm-report: %s\n", fig.note);
    if (!rc && rpt_figure_points(&fig) == 0)
        rc = tlm_errf(e, TLM_EDATA, "%s: nothing to draw from %s%s%s", c->plot, c->dbpath,
                      c->o.sweep ? " for sweep " : "", c->o.sweep ? c->o.sweep : "");
    if (!rc)
        rc = rpt_plot_write(&fig, c->out, e);
    rpt_figure_clear(&fig);
    return rc;
}

/* The chosen mode on the open database. */
static int run(rpt_ctx *ctx, const cmdline *c, tlm_err *e)
{
    if (c->table)
        return run_table(ctx, c, e);
    if (c->plot)
        return run_plot(ctx, c, e);
    if (c->list)
        return rpt_list(ctx, stdout, e);
    int rc = rpt_write_all(ctx, c->out, e);
    if (!rc)
        printf("tlm-report: wrote %s/report.md\n", c->out);
    return rc;
}

int main(int argc, char **argv)
{
    cmdline c;
    memset(&c, 0, sizeof c);
    tlm_cli cli = {.cmd = "tlm-report", .opts = OPTS};
    int rc = parse_args(argc, argv, &cli, &c);
    char msg[TLM_MSG_MAX];
    const char *usage_err = rc < 0 ? check_usage(&cli, &c, msg, sizeof msg) : NULL;
    if (usage_err) {
        fprintf(stderr, "tlm-report: %s\n", usage_err);
        rc = 2;
    }
    if (rc >= 0) {
        free(c.jobv);
        return rc;
    }
    tlm_err e = {0};
    rpt_ctx ctx;
    if ((c.plot && rpt_plot_device_check(rpt_image_kind(c.out), &e)) || rpt_ctx_open(&ctx, c.dbpath, &c.o, &e)) {
        free(c.jobv);
        return fail(&e);
    }
    rc = run(&ctx, &c, &e);
    rpt_ctx_close(&ctx);
    free(c.jobv);
    return rc ? fail(&e) : 0;
}
