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
    eng_msg_printf(msg + at, cap - at, "%s%s", a, b);
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
            eng_msg_printf(msg, cap, "--%s does nothing with %s; leave it out", rules[r].name, mode);
            return msg;
        }
        /* only a warning: one command line looped over every table (--paper on each) is a fair use */
        if ((table || plot) && rules[r].needs && !(uses & rules[r].needs))
            fprintf(stderr, "tlm-report: warning: --%s does nothing with %s %s; ignored\n", rules[r].name, mode, name);
    }
    return NULL;
}

static int render_table(void *p, FILE *f, eng_err *e)
{
    const void **a = p;
    return rpt_render(a[0], *(const int *)a[1], f, e);
}

static int fail(const eng_err *e)
{
    fprintf(stderr, "tlm-report: %s\n", e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    enum { O_DB = 256, O_TABLE, O_SWEEP, O_FORMAT, O_PAPER, O_LIST, O_PLOT, O_OUT, O_ALL, O_ARCH, O_SCALE, O_JOB,
           O_TAPER, O_MAXS, O_HELP };
    static const struct option opts[] = {
        {"db", required_argument, NULL, O_DB},         {"table", required_argument, NULL, O_TABLE},
        {"sweep", required_argument, NULL, O_SWEEP},   {"format", required_argument, NULL, O_FORMAT},
        {"paper", no_argument, NULL, O_PAPER},         {"list", no_argument, NULL, O_LIST},
        {"plot", required_argument, NULL, O_PLOT},     {"out", required_argument, NULL, O_OUT},
        {"all", no_argument, NULL, O_ALL},             {"arch", required_argument, NULL, O_ARCH},
        {"scale", required_argument, NULL, O_SCALE},   {"job", required_argument, NULL, O_JOB},
        {"taper", required_argument, NULL, O_TAPER},   {"max-series", required_argument, NULL, O_MAXS},
        {"help", no_argument, NULL, O_HELP},           {NULL, 0, NULL, 0},
    };
    const char *dbpath = DB_DEFAULT_PATH, *table = NULL, *plot = NULL, *out = NULL, *format = "md";
    int list = 0, all = 0;
    rpt_opts o;
    memset(&o, 0, sizeof o);
    const char **jobs = calloc((size_t)argc + 1, sizeof *jobs);
    if (!jobs) {
        fputs("tlm-report: out of memory\n", stderr);
        return 1;
    }
    int c, li = -1;
    unsigned char given[sizeof opts / sizeof opts[0]] = {0};
    opterr = 0;
    for (; (c = getopt_long(argc, argv, "", opts, &li)) != -1; li = -1) {
        /* a second value would silently replace the first (--job adds up) */
        if (li >= 0 && given[li]++ && opts[li].has_arg && c != O_JOB) {
            fprintf(stderr, "tlm-report: --%s is given twice; give it once\n", opts[li].name);
            free(jobs);
            return 2;
        }
        switch (c) {
        case O_DB: dbpath = optarg; break;
        case O_TABLE: table = optarg; break;
        case O_SWEEP: o.sweep = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_PAPER: o.paper = 1; break;
        case O_LIST: list = 1; break;
        case O_PLOT: plot = optarg; break;
        case O_OUT: out = optarg; break;
        case O_ALL: all = 1; break;
        case O_ARCH: o.arch = optarg; break;
        case O_SCALE: o.scale = optarg; break;
        case O_JOB: jobs[o.n_jobs++] = optarg; break;
        case O_TAPER: o.taper = optarg; break;
        case O_MAXS: {
            int64_t v;
            eng_err e;
            if (cfg_arg_int("--max-series", optarg, 1, 1000, &v, &e)) {
                fprintf(stderr, "tlm-report: %s\n", e.msg);
                free(jobs);
                return 2;
            }
            o.max_series = (int)v;
            break;
        }
        case O_HELP:
            usage(stdout);
            free(jobs);
            return 0;
        default:
            fprintf(stderr, "tlm-report: %s: %s\n", argv[optind - 1],
                    optopt ? "needs a value" : "unknown option");
            fputs("try: tlm-report --help\n", stderr);
            free(jobs);
            return 2;
        }
    }
    o.jobs = jobs;
    if (optind < argc) {
        fprintf(stderr, "tlm-report: unexpected argument '%s' (try --help)\n", argv[optind]);
        free(jobs);
        return 2;
    }
    int modes = !!table + !!plot + list + all;
    if (modes != 1) {
        fputs(modes ? "tlm-report: choose one of --table, --plot, --list, --all\n"
                    : "tlm-report: nothing to do: give --table NAME, --plot NAME, --list or --all (try --help)\n",
              stderr);
        free(jobs);
        return 2;
    }
    int fmt = rpt_format_parse(format);
    const rpt_table_def *tdef = table ? rpt_table_find(table) : NULL;
    const rpt_figure_def *fdef = plot ? rpt_figure_find(plot) : NULL;
    const char *usage_err = NULL;
    char msg[ENG_MSG_MAX], taper_sched[16];
    double taper_a, taper_b;
    eng_err pe;
    if (fmt < 0) {
        eng_msg_printf(msg, sizeof msg, "--format '%s': expected md, csv, latex or json", format);
        usage_err = msg;
    } else if (table && !tdef) {
        eng_msg_printf(msg, sizeof msg, "unknown table '%s' (tables:", table);
        for (int i = 0; i < rpt_n_table_defs; i++)
            append(msg, sizeof msg, " ", rpt_table_defs[i].name);
        append(msg, sizeof msg, ")", "");
        usage_err = msg;
    } else if (plot && !fdef) {
        eng_msg_printf(msg, sizeof msg, "unknown figure '%s' (figures:", plot);
        for (int i = 0; i < rpt_n_figure_defs; i++)
            append(msg, sizeof msg, " ", rpt_figure_defs[i].name);
        append(msg, sizeof msg, ")", "");
        usage_err = msg;
    } else if (plot && !out) {
        usage_err = "--plot needs --out FILE.svg or FILE.png";
    } else if (plot && rpt_image_kind(out) < 0) {
        eng_msg_printf(msg, sizeof msg, "--out '%s': a figure is written as .svg or .png", out);
        usage_err = msg;
    } else if (all && !out) {
        usage_err = "--all needs --out DIR";
    } else if (eng_path_check_len("--db", dbpath, ENG_PATH_CAP - 1 - 16, &pe) ||
               eng_path_not_dir("--db", dbpath, "an SQLite database file, such as results.db", &pe) ||
               (out && eng_path_check_len("--out", out, ENG_PATH_CAP - 1 - 64, &pe)) ||
               (out && !all && eng_path_not_dir("--out", out, "a file (only --all writes a folder)", &pe)) ||
               (out && all && eng_path_not_file("--out", out, "the folder --all writes into", &pe)) ||
               (o.taper && rpt_taper_parse(o.taper, taper_sched, &taper_a, &taper_b, &pe))) {
        /* --out leaves room for the temporary name beside it, and for tables/NAME.EXT under --all's folder */
        eng_msg_copy(msg, sizeof msg, pe.msg);
        usage_err = msg;
    } else {
        usage_err = unused_option(given, opts, table ? tdef->uses : plot ? fdef->uses : ~0u, table, plot, list, msg,
                                  sizeof msg);
    }
    if (usage_err) {
        fprintf(stderr, "tlm-report: %s\n", usage_err);
        free(jobs);
        return 2;
    }

    eng_err e = {0};
    rpt_ctx ctx;
    if (plot && rpt_plot_device_check(rpt_image_kind(out), &e)) {
        free(jobs);
        return fail(&e);
    }
    if (rpt_ctx_open(&ctx, dbpath, &o, &e)) {
        free(jobs);
        return fail(&e);
    }
    int rc = 0;
    if (table) {
        rpt_table t;
        rc = rpt_table_build(&ctx, tdef, &t, &e);
        if (!rc) {
            const void *arg[2] = {&t, &fmt};
            rc = rpt_write_output(out, render_table, arg, &e);
        }
        if (!rc && t.n_panels == 0)
            fprintf(stderr, "tlm-report: %s: nothing in %s for this table yet (%s)\n", table, dbpath, tdef->what);
        rpt_table_free(&t);
    } else if (plot) {
        rpt_figure fig;
        rpt_figure_init(&fig);
        rc = fdef->build(&ctx, &fig, &e);
        if (!rc && fig.note)
            fprintf(stderr, "tlm-report: %s\n", fig.note);
        if (!rc && rpt_figure_points(&fig) == 0)
            rc = eng_errf(&e, ENG_EDATA, "%s: nothing to draw from %s%s%s", plot, dbpath,
                          o.sweep ? " for sweep " : "", o.sweep ? o.sweep : "");
        if (!rc)
            rc = rpt_plot_write(&fig, out, &e);
        rpt_figure_free(&fig);
    } else if (list) {
        rc = rpt_list(&ctx, stdout, &e);
    } else {
        rc = rpt_write_all(&ctx, out, &e);
        if (!rc)
            printf("tlm-report: wrote %s/report.md\n", out);
    }
    rpt_ctx_close(&ctx);
    free(jobs);
    return rc ? fail(&e) : 0;
}
