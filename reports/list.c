/* list.c: --list: which tables the database can fill and how many of
 * their cells hold a value, and which figures it can draw.
 * Must not: render tables (it builds and counts them). */
#include "reports/all.h"

#include <string.h>

#include "reports/plot.h"

int rpt_list(rpt_ctx *c, FILE *f, tlm_err *e)
{
    int n[5] = {0};
    for (int i = 0; i < c->n_jobs; i++)
        n[c->jobs[i].status]++;
    fprintf(f, "%s%s%s: %d jobs (%d done, %d running, %d pending, %d interrupted, %d failed)\n\n", c->db_path,
            c->o.sweep ? ", sweep " : "", c->o.sweep ? c->o.sweep : "", c->n_jobs, n[RPT_DONE], n[RPT_RUNNING],
            n[RPT_PENDING], n[RPT_INTERRUPTED], n[RPT_FAILED]);
    if (c->n_left_out) {
        rpt_arena a = {0};
        const char *why = rpt_left_out_text(c, &a);
        fprintf(f, "%s\n\n", why ? why : "some jobs left out");
        rpt_arena_clear(&a);
    }
    fprintf(f, "%-20s %7s %13s  %s\n", "table", "panels", "cells filled", "what");
    for (int i = 0; i < rpt_n_table_defs; i++) {
        rpt_table t;
        int rc = rpt_table_build(c, &rpt_table_defs[i], &t, e);
        if (rc) {
            rpt_table_clear(&t);
            return rc;
        }
        int filled, total;
        rpt_table_count(&t, &filled, &total);
        char cells[32];
        if (!strcmp(rpt_table_defs[i].name, "runs"))
            snprintf(cells, sizeof cells, "%d rows", t.n_panels ? t.panels[0].n_rows : 0);
        else
            snprintf(cells, sizeof cells, "%d of %d", filled, total);
        fprintf(f, "%-20s %7d %13s  %s\n", rpt_table_defs[i].name, t.n_panels, t.n_panels ? cells : "-",
                rpt_table_defs[i].what);
        rpt_table_clear(&t);
    }
    fprintf(f, "\n%-20s %7s %13s  %s\n", "figure", "series", "points", "what");
    for (int i = 0; i < rpt_n_figure_defs; i++) {
        rpt_figure fig;
        rpt_figure_init(&fig);
        int rc = rpt_figure_defs[i].build(c, &fig, e);
        if (rc) {
            rpt_figure_clear(&fig);
            return rc;
        }
        fprintf(f, "%-20s %7d %13d  %s\n", rpt_figure_defs[i].name, fig.n, rpt_figure_points(&fig),
                rpt_figure_defs[i].what);
        rpt_figure_clear(&fig);
    }
    return ferror(f) ? tlm_errf(e, TLM_EIO, "writing the list") : 0;
}
