/* render_latex.c: one table environment per panel, plain tabular with
 * \hline (no packages needed), best values in \textbf, empty cells in
 * \textit saying why, paired differences with their interval and a
 * dagger where it excludes 0.  Text is escaped; the few non-ASCII symbols the
 * tables use (Δ, ±, ρ, →, −) become math.
 * Must not: emit anything that needs a LaTeX package. */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

static void put_text(FILE *f, const char *s)
{
    static const struct {
        const char *utf8, *tex;
    } sym[] = {
        {"\xce\x94", "$\\Delta$"},  /* Δ */
        {"\xc2\xb1", "$\\pm$"},     /* ± */
        {"\xcf\x81", "$\\rho$"},    /* ρ */
        {"\xe2\x86\x92", "$\\to$"}, /* → */
        {"\xe2\x88\x92", "$-$"},    /* − */
    };
    while (*s) {
        int done = 0;
        for (size_t i = 0; (unsigned char)*s >= 0x80 && i < sizeof sym / sizeof sym[0] && !done; i++) {
            size_t n = strlen(sym[i].utf8);
            if (!strncmp(s, sym[i].utf8, n)) {
                fputs(sym[i].tex, f);
                s += n;
                done = 1;
            }
        }
        if (done)
            continue;
        if (s[0] == '-' && s[1] == '>') {
            fputs("$\\to$", f);
            s += 2;
            continue;
        }
        switch (*s) {
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            fprintf(f, "\\%c", *s);
            break;
        case '~': fputs("\\textasciitilde{}", f); break;
        case '^': fputs("\\textasciicircum{}", f); break;
        case '\\': fputs("\\textbackslash{}", f); break;
        case '<': fputs("\\textless{}", f); break;
        case '>': fputs("\\textgreater{}", f); break;
        case '\n': case '\r': fputc(' ', f); break;
        default: fputc(*s, f);
        }
        s++;
    }
}

static void put_cell(FILE *f, const rpt_col *col, const rpt_cell *c, int role)
{
    char a[64], b[64], d[256];
    switch (c->kind) {
    case RPT_CELL_NONE: fputs("--", f); break;
    case RPT_CELL_DELTA:
        rpt_fmt_delta(d, sizeof d, c, col->decimals);
        put_text(f, d);
        if (c->sig == RPT_SIG_YES)
            fputs("$^{\\dagger}$", f);
        break;
    case RPT_CELL_TEXT: put_text(f, c->text); break;
    case RPT_CELL_MISSING:
        fputs("\\textit{", f);
        put_text(f, c->text);
        fputc('}', f);
        break;
    case RPT_CELL_NUM:
    case RPT_CELL_STAT:
        rpt_fmt_num(a, sizeof a, c->v, col->decimals, col->sign || role == RPT_DIFF); /* differences signed */
        fprintf(f, c->best ? "\\textbf{%s}" : "%s", a);
        if (c->kind == RPT_CELL_STAT && c->n >= 2) {
            rpt_fmt_num(b, sizeof b, c->std, col->decimals, 0);
            fprintf(f, " $\\pm$ %s (n=%d)", b, c->n);
        } else if (c->kind == RPT_CELL_STAT && c->text) {
            fprintf(f, " (n=%d)", c->n);
        }
        if (c->kind == RPT_CELL_STAT && c->text) {
            fputs("\\textsuperscript{*}", f);
        }
        break;
    }
}

int rpt_render_latex(const rpt_table *t, FILE *f)
{
    fprintf(f, "%% tlm-report --table %s", t->name);
    if (t->sweep)
        fprintf(f, " --sweep %s", t->sweep);
    fputs(" (generated; plain LaTeX, no packages)\n", f);
    if (t->n_panels == 0) {
        fputs("% nothing in results.db for this table yet\n", f);
    }
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        fputs("\\begin{table}[htbp]\n\\centering\n\\caption{", f);
        put_text(f, t->title);
        if (p->title && p->title[0]) {
            fputs(": ", f);
            put_text(f, p->title);
        }
        fprintf(f, "}\n\\label{tab:tlm-%s-%d}\n\\begin{tabular}{", t->name, pi + 1);
        int starred = 0, daggered = 0;
        for (int c = 0; c < p->n_cols; c++)
            fputc(p->cols[c].kind == RPT_COL_TEXT ? 'l' : 'r', f);
        fputs("}\n\\hline\n", f);
        for (int c = 0; c < p->n_cols; c++) {
            if (c)
                fputs(" & ", f);
            put_text(f, p->cols[c].title);
        }
        fputs(" \\\\\n\\hline\n", f);
        for (int r = 0; r < p->n_rows; r++) {
            const char *label = rpt_role_label(p->rows[r].role);
            for (int c = 0; c < p->n_cols; c++) {
                const rpt_cell *x = &p->rows[r].cells[c];
                if (c)
                    fputs(" & ", f);
                if (c == 0 && label && p->cols[0].kind == RPT_COL_TEXT) {
                    fputs("\\quad\\textit{", f);
                    put_text(f, label);
                    fputc('}', f);
                    continue;
                }
                put_cell(f, &p->cols[c], x, p->rows[r].role);
                starred |= x->kind == RPT_CELL_STAT && x->text;
                daggered |= x->kind == RPT_CELL_DELTA && x->sig == RPT_SIG_YES;
            }
            fputs(" \\\\\n", f);
        }
        fputs("\\hline\n\\end{tabular}\n", f);
        if (starred || daggered || p->n_notes)
            fputs("\\par\\smallskip\n", f);
        if (starred)
            fputs("{\\footnotesize * fewer seeds than jobs: some are pending, failed or not finite.}\\par\n", f);
        if (daggered)
            fputs("{\\footnotesize $^{\\dagger}$ the 95\\% interval of the paired difference excludes 0.}\\par\n", f);
        for (int i = 0; i < p->n_notes; i++) {
            fputs("{\\footnotesize ", f);
            put_text(f, p->notes[i]);
            fputs("}\\par\n", f);
        }
        fputs("\\end{table}\n\n", f);
    }
    for (int i = 0; i < t->n_notes; i++) {
        fputs("% ", f);
        for (const char *s = t->notes[i]; *s; s++)
            fputc(*s == '\n' ? ' ' : *s, f);
        fputc('\n', f);
    }
    return 0;
}
