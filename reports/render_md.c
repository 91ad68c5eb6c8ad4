/* render_md.c: Markdown (GitHub tables): one section per panel, the best
 * value per column in bold, empty cells in italics saying why, seeds as
 * "mean ± std (n=k)", paired differences as "+1.10 [+0.80, +1.40] (n=3) †"
 * (the dagger: the 95% interval excludes 0).
 * Must not: change the table. */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

/* Cell text may hold '|' (a failure message): escape it. */
static void put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void put_cell(FILE *f, const rpt_col *col, const rpt_cell *c, int role)
{
    char a[64], b[64], d[256];
    switch (c->kind) {
    case RPT_CELL_DELTA:
        rpt_fmt_delta(d, sizeof d, c, col->decimals);
        put_text(f, d);
        if (c->sig == RPT_SIG_YES)
            fputs(" †", f);
        break;
    case RPT_CELL_NONE: fputs("-", f); break;
    case RPT_CELL_TEXT: put_text(f, c->text); break;
    case RPT_CELL_MISSING:
        fputc('_', f);
        put_text(f, c->text);
        fputc('_', f);
        break;
    case RPT_CELL_NUM:
        rpt_fmt_num(a, sizeof a, c->v, col->decimals, col->sign || role == RPT_DIFF); /* differences signed */
        fprintf(f, c->best ? "**%s**" : "%s", a);
        break;
    case RPT_CELL_STAT:
        rpt_fmt_num(a, sizeof a, c->v, col->decimals, col->sign || role == RPT_DIFF);
        fprintf(f, c->best ? "**%s**" : "%s", a);
        if (c->n >= 2) {
            rpt_fmt_num(b, sizeof b, c->std, col->decimals, 0);
            fprintf(f, " ± %s (n=%d", b, c->n);
        } else if (c->text) {
            fprintf(f, " (n=%d", c->n);
        }
        if (c->text) {
            fputs("; ", f);
            put_text(f, c->text);
        }
        if (c->n >= 2 || c->text)
            fputc(')', f);
        break;
    }
}

/* A panel's or the table's notes: a list, then a blank line (none: nothing) */
static void put_notes(FILE *f, const char *const *notes, int n)
{
    for (int i = 0; i < n; i++) {
        fputs("- ", f);
        put_text(f, notes[i]);
        fputc('\n', f);
    }
    if (n)
        fputc('\n', f);
}

int rpt_render_md(const rpt_table *t, FILE *f)
{
    fprintf(f, "## %s\n\n", t->title);
    if (t->n_panels == 0)
        fputs("_Nothing in results.db for this table yet._\n\n", f);
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        if (p->title && p->title[0])
            fprintf(f, "### %s\n\n", p->title);
        fputc('|', f);
        for (int c = 0; c < p->n_cols; c++) {
            fputc(' ', f);
            put_text(f, p->cols[c].title);
            fputs(" |", f);
        }
        fputs("\n|", f);
        for (int c = 0; c < p->n_cols; c++)
            fputs(p->cols[c].kind == RPT_COL_TEXT ? "---|" : "---:|", f);
        fputc('\n', f);
        for (int r = 0; r < p->n_rows; r++) {
            fputc('|', f);
            const char *label = rpt_role_label(p->rows[r].role);
            for (int c = 0; c < p->n_cols; c++) {
                fputc(' ', f);
                if (c == 0 && label && p->cols[0].kind == RPT_COL_TEXT)
                    fprintf(f, "_%s_", label);
                else
                    put_cell(f, &p->cols[c], &p->rows[r].cells[c], p->rows[r].role);
                fputs(" |", f);
            }
            fputc('\n', f);
        }
        fputc('\n', f);
        put_notes(f, p->notes, p->n_notes);
    }
    put_notes(f, t->notes, t->n_notes);
    return 0;
}
