/* all.c: --all --out DIR: every table and figure the database supports,
 * as DIR/report.md (the tables in Markdown, the figures shown with their
 * captions), the tables again in CSV, LaTeX and JSON under DIR/tables/,
 * the figures as SVG, PNG and PDF under DIR/figures/.  report.md opens
 * with a summary in words of every comparison against uniform the tables
 * make.  Tables and figures the database cannot fill are left out, named
 * (with the reason for a figure) in one line of the header.
 * Must not: leave a half-written report.md (every file is written atomically). */
#include "reports/all.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "reports/plot.h"

typedef struct {
    rpt_ctx *c;
    rpt_table *tables;
    int *built; /* 1 built with panels, 0 empty */
    const char **figs; /* figure name -> file base, NULL when not drawn */
    const char **fig_notes;
    const char **fig_captions;
    int converted; /* PNG and PDF written besides SVG */
} report;

static int put_table(void *p, FILE *f, tlm_err *e)
{
    const void **a = p;
    return rpt_render(a[0], *(const int *)a[1], f, e);
}

/* What the comparisons say, in words, one line per table and panel. */
static void write_summary(const report *r, FILE *f)
{
    fputs("## What the runs support\n\n", f);
    int any = 0;
    for (int i = 0; i < rpt_n_table_defs; i++) {
        const rpt_table *t = &r->tables[i];
        for (int k = 0; k < t->n_findings; k++) {
            const rpt_finding *x = &t->findings[k];
            int first = k == 0 || strcmp(t->findings[k - 1].panel, x->panel);
            char text[512];
            rpt_finding_text(x, text, sizeof text);
            if (first)
                fprintf(f, "%s- %s, %s: ", any ? ".\n" : "", t->name, x->panel);
            fprintf(f, "%s%s", first ? "" : "; ", text);
            any = 1;
        }
    }
    if (!any)
        fputs("_No comparison against uniform in this database yet._\n\n", f);
    else
        fputs(".\n\nEach configuration against uniform of the same panel, paired by seed (same seed, same data "
              "order), with the 95% Student-t interval of the mean difference; \"not distinguishable\" means the "
              "interval includes 0. Written from these numbers alone, not from the paper.\n\n",
              f);
}

static int write_md(void *p, FILE *f, tlm_err *e)
{
    report *r = p;
    rpt_ctx *c = r->c;
    int n[5] = {0};
    for (int i = 0; i < c->n_jobs; i++)
        n[c->jobs[i].status]++;
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# TLM report\n\n");
    fprintf(f, "- database: `%s`%s%s%s\n", c->db_path, c->o.sweep ? ", sweep `" : "", c->o.sweep ? c->o.sweep : "",
            c->o.sweep ? "`" : "");
    fprintf(f, "- jobs: %d (%d done, %d running, %d pending, %d interrupted, %d failed)\n", c->n_jobs, n[RPT_DONE],
            n[RPT_RUNNING], n[RPT_PENDING], n[RPT_INTERRUPTED], n[RPT_FAILED]);
    if (c->n_left_out) {
        rpt_arena a = {0};
        const char *why = rpt_left_out_text(c, &a);
        fprintf(f, "- %s\n", why ? why : "jobs left out");
        rpt_arena_clear(&a);
    }
    /* a table without data is left out: its name here says it was looked for */
    const char *sep = "- tables with nothing in this database, left out: ";
    for (int i = 0; i < rpt_n_table_defs; i++)
        if (!r->built[i]) {
            fprintf(f, "%s%s", sep, rpt_table_defs[i].name);
            sep = ", ";
        }
    if (sep[0] == ',')
        fputc('\n', f);
    sep = "- figures not drawn: ";
    for (int i = 0; i < rpt_n_figure_defs; i++)
        if (!r->figs[i]) {
            const char *why = r->fig_notes[i] ? r->fig_notes[i] : "no data";
            size_t len = strlen(rpt_figure_defs[i].name);
            if (!strncmp(why, rpt_figure_defs[i].name, len) && !strncmp(why + len, ": ", 2))
                why += len + 2; /* "rho: no job has..." under rho */
            fprintf(f, "%s%s (%s)", sep, rpt_figure_defs[i].name, why);
            sep = "; ";
        }
    if (sep[0] == ';')
        fputc('\n', f);
    if (!r->converted)
        fputs("- figures as SVG only: PNG and PDF need rsvg-convert (the Debian package librsvg2-bin)\n", f);
    fprintf(f, "- written %s by tlm-report%s; tables also as CSV, LaTeX and JSON in `tables/`\n\n", when,
            c->o.paper ? " --paper" : "");
    write_summary(r, f);
    for (int i = 0; i < rpt_n_table_defs; i++) {
        if (!r->built[i])
            continue;
        int rc = rpt_render_md(&r->tables[i], f);
        if (rc)
            return tlm_errf(e, TLM_EIO, "writing report.md");
    }
    int any = 0;
    for (int i = 0; i < rpt_n_figure_defs; i++) {
        const rpt_figure_def *d = &rpt_figure_defs[i];
        if (!r->figs[i])
            continue;
        if (!any++)
            fputs("## Figures\n\n", f);
        /* the caption as plain text: it holds names such as d_ff that emphasis would mangle */
        fprintf(f, "### %s\n\n![%s](figures/%s.svg)\n\n%s%s\n\n", d->name, d->name, r->figs[i],
                r->fig_captions[i] ? r->fig_captions[i] : d->what, r->fig_captions[i] ? "" : ".");
        if (r->converted)
            fprintf(f, "PNG: [figures/%s.png](figures/%s.png), PDF: [figures/%s.pdf](figures/%s.pdf)\n\n", r->figs[i],
                    r->figs[i], r->figs[i], r->figs[i]);
    }
    return 0;
}

int rpt_write_all(rpt_ctx *c, const char *dir, tlm_err *e)
{
    /* every name below fits: tlm-report leaves 64 bytes under --out for them */
    char path[TLM_PATH_CAP + 64];
    if (strlen(dir) > TLM_PATH_CAP - 1 - 64)
        return tlm_path_check_len("--out", dir, TLM_PATH_CAP - 1 - 64, e);
    int rc = tlm_mkdir_p(dir, e);
    if (rc)
        return rc;
    snprintf(path, sizeof path, "%s/tables", dir);
    if ((rc = tlm_mkdir_p(path, e)))
        return rc;
    snprintf(path, sizeof path, "%s/figures", dir);
    if ((rc = tlm_mkdir_p(path, e)))
        return rc;
    report r = {.c = c};
    tlm_err ce;
    r.converted = rpt_plot_device_check(RPT_IMG_PNG, &ce) == 0; /* PNG and PDF when rsvg-convert is here */
    r.tables = calloc((size_t)rpt_n_table_defs, sizeof *r.tables);
    r.built = calloc((size_t)rpt_n_table_defs, sizeof *r.built);
    r.figs = calloc((size_t)rpt_n_figure_defs, sizeof *r.figs);
    r.fig_notes = calloc((size_t)rpt_n_figure_defs, sizeof *r.fig_notes);
    r.fig_captions = calloc((size_t)rpt_n_figure_defs, sizeof *r.fig_captions);
    rpt_arena notes = {0};
    if (!r.tables || !r.built || !r.figs || !r.fig_notes || !r.fig_captions) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < rpt_n_table_defs && !rc; i++) {
        if ((rc = rpt_table_build(c, &rpt_table_defs[i], &r.tables[i], e)))
            break;
        r.built[i] = r.tables[i].n_panels > 0;
        for (int fmt = RPT_FMT_CSV; fmt <= RPT_FMT_JSON && r.built[i] && !rc; fmt++) {
            snprintf(path, sizeof path, "%s/tables/%s.%s", dir, rpt_table_defs[i].name, rpt_format_ext(fmt));
            const void *arg[2] = {&r.tables[i], &fmt};
            rc = rpt_write_output(path, put_table, arg, e);
        }
    }
    for (int i = 0; i < rpt_n_figure_defs && !rc; i++) {
        rpt_figure fig;
        rpt_figure_init(&fig);
        rc = rpt_figure_defs[i].build(c, &fig, e);
        if (!rc && rpt_figure_points(&fig) > 0) {
            static const char *const EXT[] = {"svg", "png", "pdf"};
            for (int kind = 0; kind < (r.converted ? 3 : 1) && !rc; kind++) {
                snprintf(path, sizeof path, "%s/figures/%s.%s", dir, rpt_figure_defs[i].name, EXT[kind]);
                rc = rpt_plot_write(&fig, path, e);
            }
            r.figs[i] = rpt_figure_defs[i].name;
            if (fig.caption)
                r.fig_captions[i] = rpt_strdup(&notes, fig.caption);
        } else if (!rc) {
            r.fig_notes[i] = rpt_strdup(&notes, fig.note ? fig.note : "no data");
        }
        rpt_figure_clear(&fig);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/report.md", dir);
        rc = rpt_write_output(path, write_md, &r, e);
    }
done:
    for (int i = 0; r.tables && i < rpt_n_table_defs; i++)
        rpt_table_clear(&r.tables[i]);
    free(r.tables);
    free(r.built);
    free(r.figs);
    free(r.fig_notes);
    free(r.fig_captions);
    rpt_arena_clear(&notes);
    return rc;
}
