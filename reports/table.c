/* table.c: the format-neutral table every builder fills and every
 * renderer prints: panels (one per arch/scale/tokens), typed columns, rows
 * that are our results, the paper's figures or their difference, cells that
 * hold a value, a seed aggregate, words, or why they are empty.
 * Out of memory is sticky (t->oom) so that builders stay linear; the
 * builder's last call, rpt_table_status, reports it.
 * Must not: print (renderers do). */
#include "reports/rpt.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void rpt_table_init(rpt_table *t, const char *name, const char *title)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->title = title;
}

void rpt_table_clear(rpt_table *t)
{
    rpt_arena_clear(&t->a);
    memset(t, 0, sizeof *t);
}

/* Grows an arena-held array (old blocks stay in the arena until the end). */
static void *grow(rpt_table *t, void *v, int n, int *cap, size_t size)
{
    if (n < *cap)
        return v;
    int ncap = *cap ? *cap * 2 : 8;
    void *nv = rpt_alloc(&t->a, size * (size_t)ncap);
    if (!nv) {
        t->oom = 1;
        return NULL;
    }
    if (v)
        memcpy(nv, v, size * (size_t)n);
    *cap = ncap;
    return nv;
}

rpt_panel *rpt_panel_add(rpt_table *t, const char *title, const rpt_col *cols, int n_cols)
{
    rpt_panel *np = grow(t, t->panels, t->n_panels, &t->cap_panels, sizeof *np);
    rpt_col *nc = rpt_alloc(&t->a, sizeof *nc * (size_t)(n_cols ? n_cols : 1));
    if (!np || !nc) {
        t->oom = 1;
        return NULL;
    }
    t->panels = np;
    rpt_panel *p = &t->panels[t->n_panels++];
    memset(p, 0, sizeof *p);
    p->title = rpt_strdup(&t->a, title);
    for (int i = 0; i < n_cols; i++) {
        nc[i] = cols[i];
        nc[i].key = rpt_strdup(&t->a, cols[i].key);
        nc[i].title = rpt_strdup(&t->a, cols[i].title);
        if (!nc[i].key || !nc[i].title)
            t->oom = 1;
    }
    p->cols = nc;
    p->n_cols = n_cols;
    return p;
}

rpt_panel *rpt_panel_add_setting(rpt_table *t, const char *arch, const char *scale, int64_t tokens, int in_db,
                                 const rpt_col *cols, int n_cols)
{
    const char *title = rpt_panel_title(&t->a, arch, scale, tokens);
    rpt_panel *p = rpt_panel_add(t, in_db ? title : rpt_printf(&t->a, "%s (not in results.db)", title), cols, n_cols);
    char tok[32];
    rpt_fmt_tokens(tok, sizeof tok, tokens);
    if (arch)
        rpt_panel_key(t, p, "arch", arch);
    rpt_panel_key(t, p, "scale", scale);
    rpt_panel_key(t, p, "tokens", tok);
    return p;
}

void rpt_panel_key(rpt_table *t, rpt_panel *p, const char *name, const char *value)
{
    if (!p || p->n_keys == RPT_MAX_KEYS)
        return;
    p->key_names[p->n_keys] = rpt_strdup(&t->a, name);
    p->key_vals[p->n_keys] = rpt_strdup(&t->a, value ? value : "");
    p->n_keys++;
}

int rpt_row_add(rpt_table *t, rpt_panel *p, int role)
{
    if (!p)
        return -1;
    rpt_row *nr = grow(t, p->rows, p->n_rows, &p->cap_rows, sizeof *nr);
    rpt_cell *cells = rpt_alloc(&t->a, sizeof *cells * (size_t)(p->n_cols ? p->n_cols : 1));
    if (!nr || !cells) {
        t->oom = 1;
        return -1;
    }
    p->rows = nr;
    for (int i = 0; i < p->n_cols; i++) {
        cells[i].v = cells[i].std = cells[i].lo = cells[i].hi = NAN;
        cells[i].sig = RPT_SIG_NONE;
    }
    p->rows[p->n_rows].role = role;
    p->rows[p->n_rows].cells = cells;
    return p->n_rows++;
}

static rpt_cell *cell(rpt_panel *p, int row, int col)
{
    if (!p || row < 0 || row >= p->n_rows || col < 0 || col >= p->n_cols)
        return NULL;
    return &p->rows[row].cells[col];
}

void rpt_set_text(rpt_table *t, rpt_panel *p, int row, int col, const char *fmt, ...)
{
    rpt_cell *x = cell(p, row, col);
    if (!x)
        return;
    va_list ap;
    va_start(ap, fmt);
    x->text = rpt_vprintf(&t->a, fmt, ap);
    va_end(ap);
    x->kind = RPT_CELL_TEXT;
    if (!x->text)
        t->oom = 1;
}

void rpt_set_num(rpt_panel *p, int row, int col, double v)
{
    rpt_cell *x = cell(p, row, col);
    if (!x || isnan(v))
        return;
    x->kind = RPT_CELL_NUM;
    x->v = v;
}

void rpt_set_missing(rpt_table *t, rpt_panel *p, int row, int col, const char *why)
{
    rpt_cell *x = cell(p, row, col);
    if (!x)
        return;
    x->kind = RPT_CELL_MISSING;
    if (!(x->text = rpt_strdup(&t->a, why)))
        t->oom = 1;
}

void rpt_set_stat(rpt_table *t, rpt_panel *p, int row, int col, const rpt_stat *s)
{
    rpt_cell *x = cell(p, row, col);
    if (!x)
        return;
    char buf[256];
    if (s->n == 0) {
        rpt_stat_why(s, buf, sizeof buf);
        rpt_set_missing(t, p, row, col, buf);
        return;
    }
    x->kind = RPT_CELL_STAT;
    x->v = s->mean;
    x->std = s->std;
    x->n = s->n;
    rpt_stat_note(s, buf, sizeof buf);
    x->text = NULL;
    if (buf[0] && !(x->text = rpt_strdup(&t->a, buf)))
        t->oom = 1;
}

void rpt_set_delta(rpt_table *t, rpt_panel *p, int row, int col, const rpt_paired *d, const rpt_stat *a,
                   const rpt_stat *b, const char *b_name)
{
    char why[160];
    if (d->paired < 0) {
        if (!a->n) {
            rpt_stat_why(a, why, sizeof why);
            rpt_set_missing(t, p, row, col, why);
        } else {
            char bw[128];
            rpt_stat_why(b, bw, sizeof bw);
            snprintf(why, sizeof why, "%s %s", b_name, bw);
            rpt_set_missing(t, p, row, col, why);
        }
        return;
    }
    rpt_cell *x = cell(p, row, col);
    if (!x)
        return;
    x->kind = RPT_CELL_DELTA;
    x->v = d->mean;
    x->lo = d->lo;
    x->hi = d->hi;
    x->n = d->n;
    x->sig = d->sig;
    x->paired = d->paired;
    x->text = NULL;
    if (d->note[0] && !(x->text = rpt_strdup(&t->a, d->note)))
        t->oom = 1;
}

void rpt_finding_add(rpt_table *t, const rpt_panel *p, int row, int col, const char *what, const char *against,
                     const char *unit, int better, const rpt_paired *d, double paper)
{
    const rpt_cell *x = cell((rpt_panel *)p, row, col);
    if (!x)
        return;
    const char *why = x->kind == RPT_CELL_MISSING ? x->text : NULL;
    int decimals = p->cols[col].decimals;
    rpt_finding *nf = grow(t, t->findings, t->n_findings, &t->cap_findings, sizeof *nf);
    if (!nf)
        return;
    t->findings = nf;
    rpt_finding *f = &nf[t->n_findings++];
    *f = (rpt_finding){rpt_strdup(&t->a, p->title), rpt_strdup(&t->a, what), rpt_strdup(&t->a, against),
                       rpt_strdup(&t->a, unit), better, decimals, *d, why ? rpt_strdup(&t->a, why) : NULL, paper};
    if (!f->panel || !f->what || !f->against || !f->unit || (why && !f->why))
        t->oom = 1;
}

void rpt_note(rpt_table *t, rpt_panel *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = rpt_vprintf(&t->a, fmt, ap);
    va_end(ap);
    const char ***notes = p ? &p->notes : &t->notes;
    int *n = p ? &p->n_notes : &t->n_notes, *cap = p ? &p->cap_notes : &t->cap_notes;
    const char **nv = grow(t, (void *)*notes, *n, cap, sizeof *nv);
    if (!nv || !s) {
        t->oom = 1;
        return;
    }
    *notes = nv;
    nv[(*n)++] = s;
}

/* The cell's number (NUM: v, STAT: mean); NaN otherwise. */
static double rpt_cell_value(const rpt_cell *c)
{
    return c->kind == RPT_CELL_NUM || c->kind == RPT_CELL_STAT ? c->v : NAN;
}

void rpt_mark_best(rpt_table *t)
{
    for (int pi = 0; pi < t->n_panels; pi++) {
        rpt_panel *p = &t->panels[pi];
        for (int c = 0; c < p->n_cols; c++) {
            const rpt_col *col = &p->cols[c];
            if (!col->better || col->role != RPT_OURS)
                continue;
            double best = NAN;
            int with = 0;
            for (int r = 0; r < p->n_rows; r++) {
                double v = p->rows[r].role == RPT_OURS ? rpt_cell_value(&p->rows[r].cells[c]) : NAN;
                if (!isfinite(v))
                    continue;
                with++;
                if (isnan(best) || (col->better < 0 ? v < best : v > best))
                    best = v;
            }
            if (with < 2)
                continue; /* a lone value is not "best" of anything */
            for (int r = 0; r < p->n_rows; r++)
                if (p->rows[r].role == RPT_OURS && rpt_cell_value(&p->rows[r].cells[c]) == best)
                    p->rows[r].cells[c].best = 1;
        }
    }
}

void rpt_table_count(const rpt_table *t, int *filled, int *total)
{
    *filled = *total = 0;
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        for (int r = 0; r < p->n_rows; r++) {
            if (p->rows[r].role != RPT_OURS)
                continue;
            for (int c = 0; c < p->n_cols; c++) {
                if (p->cols[c].kind != RPT_COL_STAT || p->cols[c].role != RPT_OURS)
                    continue;
                int k = p->rows[r].cells[c].kind;
                *filled += k == RPT_CELL_STAT;
                *total += k == RPT_CELL_STAT || k == RPT_CELL_MISSING;
            }
        }
    }
}

int rpt_table_status(const rpt_table *t, tlm_err *e)
{
    return t->oom ? tlm_errf(e, TLM_ENOMEM, "out of memory building table %s", t->name) : 0;
}
