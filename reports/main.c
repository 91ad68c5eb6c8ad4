/* main.c: tlm-report, the paper's tables and figures from results.db.
 * Parses the command line, opens the database read-only and hands over to
 * a table (--table), a figure (--plot), the overview (--list) or the whole
 * report (--all).  The only place that prints errors and exits:
 * 0 done, 1 failed, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "common/fileio.h"
#include "reports/all.h"
#include "reports/plot.h"
#include "reports/rpt.h"

static void usage(FILE *f)
{
    fputs("usage: tlm-report [--db results.db] --table NAME [--format md|csv|latex|json] [--paper] [--out FILE]\n"
          "       tlm-report [--db results.db] --list\n"
          "       tlm-report [--db results.db] --plot NAME --out FILE.svg|FILE.png [--paper] [--max-series N]\n"
          "       tlm-report [--db results.db] --all --out DIR [--paper] [--max-series N]\n"
          "  each with the filters [--sweep NAME] [--arch A] [--scale S] [--job KEY|LABEL]... [--taper S:START:END]\n"
          "\n"
          "Turns results.db (written by tlmd) into the paper's tables and figures.\n"
          "\n"
          "  --db PATH         the results database (default " DB_DEFAULT_PATH ")\n"
          "  --table NAME      print one table (see below)\n"
          "  --format F        with --table: md (default), csv, latex or json\n"
          "  --paper           put the paper's figures beside ours, with the difference\n"
          "  --list            the tables and figures this database can fill, with their cells\n"
          "  --plot NAME       draw one figure into --out (.svg or .png)\n"
          "  --all             every table and figure into the folder --out (report.md, tables/, figures/)\n"
          "  --out PATH        output file (tables: default stdout) or folder (--all)\n"
          "  --sweep NAME      only the jobs of this sweep (default: every job in the database)\n"
          "  --arch A, --scale S   only jobs of this architecture / scale\n"
          "  --job KEY|LABEL   only these jobs (key prefix of 6+ characters, or label); repeatable\n"
          "                    (a filter that matches no job is an error naming what there is)\n"
          "  --taper S:START:END   what \"tapered\" means in main, niah, alignment and the dff and rho\n"
          "                    figures (default cosine:1.5:0.5)\n"
          "  --max-series N    lines per figure at most (default 12; --plot and --all)\n"
          "  --help            this text\n"
          "\n"
          "Tables:\n",
          f);
    for (int i = 0; i < rpt_n_table_defs; i++)
        fprintf(f, "  %-20s %s\n", rpt_table_defs[i].name, rpt_table_defs[i].what);
    fputs("\nFigures:\n", f);
    for (int i = 0; i < rpt_n_figure_defs; i++)
        fprintf(f, "  %-20s %s\n", rpt_figure_defs[i].name, rpt_figure_defs[i].what);
    fputs("\nSeeds aggregate as mean ± sample std (n); an empty cell says why (pending, running, failed,\n"
          "not in sweep).  docs/report.md explains every table.\n",
          f);
}

static void append(char *msg, size_t cap, const char *a, const char *b)
{
    size_t at = strlen(msg);
    tlm_msg_printf(msg + at, cap - at, "%s%s", a, b);
}

/* An option the chosen mode would ignore: NULL, or the message (in msg).
 * One the chosen table or figure ignores is warned about on stderr. */
static const char *unused_option(const unsigned char *given, const struct option *opts, unsigned uses,
                                 const char *table, const char *plot, int list, char *msg, size_t cap)
{
    static const struct {
        const char *name;
        unsigned needs;       /* RPT_USES_* the table or figure must have */
        int table, plot, list, all; /* the modes it goes with */
    } rules[] = {
        {"format", 0, 1, 0, 0, 0},
        {"out", 0, 1, 1, 0, 1},
        {"paper", RPT_USES_PAPER, 1, 1, 1, 1},
        {"taper", RPT_USES_TAPER, 1, 1, 1, 1},
        {"max-series", RPT_USES_SERIES, 0, 1, 0, 1},
    };
    const char *mode = table ? "--table" : plot ? "--plot" : list ? "--list" : "--all";
    const char *name = table ? table : plot ? plot : "";
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        int k = 0;
        while (opts[k].name && strcmp(opts[k].name, rules[r].name))
            k++;
        if (!opts[k].name || !given[k])
            continue;
        int mode_ok = table ? rules[r].table : plot ? rules[r].plot : list ? rules[r].list : rules[r].all;
        if (!mode_ok) {
            tlm_msg_printf(msg, cap, "--%s does nothing with %s; leave it out", rules[r].name, mode);
            return msg;
        }
        /* only a warning: one command line looped over every table (--paper on each) is a fair use */
        if ((table || plot) && rules[r].needs && !(uses & rules[r].needs))
            fprintf(stderr, "tlm-report: warning: --%s does nothing with %s %s; ignored\n", rules[r].name, mode, name);
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

enum { O_DB = 256, O_TABLE, O_SWEEP, O_FORMAT, O_PAPER, O_LIST, O_PLOT, O_OUT, O_ALL, O_ARCH, O_SCALE, O_JOB,
       O_TAPER, O_MAXS, O_HELP };
static const struct option OPTS[] = {
    {"db", required_argument, NULL, O_DB},         {"table", required_argument, NULL, O_TABLE},
    {"sweep", required_argument, NULL, O_SWEEP},   {"format", required_argument, NULL, O_FORMAT},
    {"paper", no_argument, NULL, O_PAPER},         {"list", no_argument, NULL, O_LIST},
    {"plot", required_argument, NULL, O_PLOT},     {"out", required_argument, NULL, O_OUT},
    {"all", no_argument, NULL, O_ALL},             {"arch", required_argument, NULL, O_ARCH},
    {"scale", required_argument, NULL, O_SCALE},   {"job", required_argument, NULL, O_JOB},
    {"taper", required_argument, NULL, O_TAPER},   {"max-series", required_argument, NULL, O_MAXS},
    {"help", no_argument, NULL, O_HELP},           {NULL, 0, NULL, 0},
};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* What the command line asks for. */
typedef struct {
    const char *dbpath, *table, *plot, *out, *format;
    int list, all, fmt;
    const rpt_table_def *tdef;
    const rpt_figure_def *fdef;
    unsigned char given[N_OPTS]; /* per option: how often it was given */
    const char **jobv;           /* --job's values (o.jobs is its read-only view) */
    rpt_opts o;
} cli;

/* The options into c: -1 to go on, else the exit status (--help: 0,
 * usage errors: 2, said on stderr). */
static int parse_args(int argc, char **argv, cli *c)
{
    int ch, li = -1;
    opterr = 0;
    for (; (ch = getopt_long(argc, argv, "", OPTS, &li)) != -1; li = -1) {
        /* a second value would silently replace the first (--job adds up) */
        if (li >= 0 && c->given[li]++ && OPTS[li].has_arg && ch != O_JOB) {
            fprintf(stderr, "tlm-report: --%s is given twice; give it once\n", OPTS[li].name);
            return 2;
        }
        switch (ch) {
        case O_DB: c->dbpath = optarg; break;
        case O_TABLE: c->table = optarg; break;
        case O_SWEEP: c->o.sweep = optarg; break;
        case O_FORMAT: c->format = optarg; break;
        case O_PAPER: c->o.paper = 1; break;
        case O_LIST: c->list = 1; break;
        case O_PLOT: c->plot = optarg; break;
        case O_OUT: c->out = optarg; break;
        case O_ALL: c->all = 1; break;
        case O_ARCH: c->o.arch = optarg; break;
        case O_SCALE: c->o.scale = optarg; break;
        case O_JOB: c->jobv[c->o.n_jobs++] = optarg; break;
        case O_TAPER: c->o.taper = optarg; break;
        case O_MAXS: {
            int64_t v;
            tlm_err e;
            if (tlm_cfg_arg_int("--max-series", optarg, 1, 1000, &v, &e)) {
                fprintf(stderr, "tlm-report: %s\n", e.msg);
                return 2;
            }
            c->o.max_series = (int)v;
            break;
        }
        case O_HELP:
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "tlm-report: %s: %s\n", argv[optind - 1],
                    optopt ? "needs a value" : "unknown option");
            fputs("try: tlm-report --help\n", stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlm-report: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    return -1;
}

/* The combination asked for, checked before the database is opened:
 * NULL, or what is wrong (in msg). */
static const char *check_usage(cli *c, char *msg, size_t cap)
{
    int modes = !!c->table + !!c->plot + c->list + c->all;
    if (modes != 1)
        return modes ? "choose one of --table, --plot, --list, --all"
                     : "nothing to do: give --table NAME, --plot NAME, --list or --all (try --help)";
    c->fmt = rpt_format_parse(c->format);
    c->tdef = c->table ? rpt_table_find(c->table) : NULL;
    c->fdef = c->plot ? rpt_figure_find(c->plot) : NULL;
    tlm_err pe;
    char taper_sched[16];
    double taper_a, taper_b;
    if (c->fmt < 0) {
        tlm_msg_printf(msg, cap, "--format '%s': expected md, csv, latex or json", c->format);
        return msg;
    }
    if (c->table && !c->tdef) {
        tlm_msg_printf(msg, cap, "unknown table '%s' (tables:", c->table);
        for (int i = 0; i < rpt_n_table_defs; i++)
            append(msg, cap, " ", rpt_table_defs[i].name);
        append(msg, cap, ")", "");
        return msg;
    }
    if (c->plot && !c->fdef) {
        tlm_msg_printf(msg, cap, "unknown figure '%s' (figures:", c->plot);
        for (int i = 0; i < rpt_n_figure_defs; i++)
            append(msg, cap, " ", rpt_figure_defs[i].name);
        append(msg, cap, ")", "");
        return msg;
    }
    if (c->plot && !c->out)
        return "--plot needs --out FILE.svg or FILE.png";
    if (c->plot && rpt_image_kind(c->out) < 0) {
        tlm_msg_printf(msg, cap, "--out '%s': a figure is written as .svg or .png", c->out);
        return msg;
    }
    if (c->all && !c->out)
        return "--all needs --out DIR";
    const char *out = c->out;
    if (tlm_path_check_len("--db", c->dbpath, TLM_PATH_CAP - 1 - 16, &pe) ||
        tlm_path_not_dir("--db", c->dbpath, "an SQLite database file, such as results.db", &pe) ||
        (out && tlm_path_check_len("--out", out, TLM_PATH_CAP - 1 - 64, &pe)) ||
        (out && !c->all && tlm_path_not_dir("--out", out, "a file (only --all writes a folder)", &pe)) ||
        (out && c->all && tlm_path_not_file("--out", out, "the folder --all writes into", &pe)) ||
        (c->o.taper && rpt_taper_parse(c->o.taper, taper_sched, &taper_a, &taper_b, &pe))) {
        /* --out leaves room for the temporary name beside it, and for tables/NAME.EXT under --all's folder */
        tlm_msg_copy(msg, cap, pe.msg);
        return msg;
    }
    return unused_option(c->given, OPTS, c->table ? c->tdef->uses : c->plot ? c->fdef->uses : ~0u, c->table,
                         c->plot, c->list, msg, cap);
}

static int run_table(rpt_ctx *ctx, const cli *c, tlm_err *e)
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

static int run_plot(rpt_ctx *ctx, const cli *c, tlm_err *e)
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
static int run(rpt_ctx *ctx, const cli *c, tlm_err *e)
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
    cli c;
    memset(&c, 0, sizeof c);
    c.dbpath = DB_DEFAULT_PATH;
    c.format = "md";
    const char **jobs = calloc((size_t)argc + 1, sizeof *jobs);
    if (!jobs) {
        fputs("tlm-report: out of memory\n", stderr);
        return 1;
    }
    c.jobv = jobs;
    c.o.jobs = jobs;
    int rc = parse_args(argc, argv, &c);
    char msg[TLM_MSG_MAX];
    const char *usage_err = rc < 0 ? check_usage(&c, msg, sizeof msg) : NULL;
    if (usage_err) {
        fprintf(stderr, "tlm-report: %s\n", usage_err);
        rc = 2;
    }
    if (rc >= 0) {
        free(jobs);
        return rc;
    }
    tlm_err e = {0};
    rpt_ctx ctx;
    if ((c.plot && rpt_plot_device_check(rpt_image_kind(c.out), &e)) || rpt_ctx_open(&ctx, c.dbpath, &c.o, &e)) {
        free(jobs);
        return fail(&e);
    }
    rc = run(&ctx, &c, &e);
    rpt_ctx_close(&ctx);
    free(jobs);
    return rc ? fail(&e) : 0;
}
