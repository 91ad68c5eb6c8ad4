/* render_csv.c: one CSV (RFC 4180) for the whole table: the panel's keys
 * first (arch, scale, tokens...), then every column; a numeric column X
 * spreads over X (the value, full precision), X_std and X_n (seed
 * aggregates) and X_note (why it is empty, or what it leaves out); a
 * column of paired differences over X, X_lo, X_hi (the 95% interval), X_n
 * (pairs), X_sig (1: the interval excludes 0, 0: it does not, empty: no
 * interval) and X_note.
 * Panels may have different columns (alignment): the header is their union.
 * Must not: round (the human formats do). */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"

typedef struct {
    const rpt_col *col;
} ucol;

static void put_field(FILE *f, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_num(FILE *f, double v)
{
    char b[40];
    if (isnan(v))
        return;
    if (isinf(v)) {
        fputs(v < 0 ? "-inf" : "inf", f);
        return;
    }
    tlm_fmt_exact(b, sizeof b, v);
    fputs(b, f);
}

/* The fields a column spreads over after X (and before X_note). */
static int spread(const rpt_col *col, const char *const **sfx)
{
    static const char *const stat_sfx[] = {"_std", "_n"}, *const delta_sfx[] = {"_lo", "_hi", "_n", "_sig"},
                             *const both_sfx[] = {"_std", "_n", "_lo", "_hi", "_sig"};
    if (col->kind == RPT_COL_DELTA) {
        *sfx = delta_sfx;
        return 4;
    }
    if (col->kind == RPT_COL_STAT) {
        *sfx = col->deltas ? both_sfx : stat_sfx;
        return col->deltas ? 5 : 2;
    }
    return 0;
}

/* One of a cell's spread fields, empty where the cell has none. */
static void put_part(FILE *f, const rpt_cell *x, int kind, const char *sfx)
{
    if (!strcmp(sfx, "_std")) {
        if (kind == RPT_CELL_STAT)
            put_num(f, x->std);
    } else if (!strcmp(sfx, "_n")) {
        if (kind == RPT_CELL_STAT || kind == RPT_CELL_DELTA)
            fprintf(f, "%d", x->n);
    } else if (kind == RPT_CELL_DELTA) {
        if (!strcmp(sfx, "_lo"))
            put_num(f, x->lo);
        else if (!strcmp(sfx, "_hi"))
            put_num(f, x->hi);
        else if (x->sig != RPT_SIG_NONE)
            fputc(x->sig == RPT_SIG_YES ? '1' : '0', f);
    }
}

/* Index of the panel column with this key, -1 if the panel lacks it. */
static int find_col(const rpt_panel *p, const char *key)
{
    for (int c = 0; c < p->n_cols; c++)
        if (!strcmp(p->cols[c].key, key))
            return c;
    return -1;
}

/* One cell's fields: X, its spread (X_std, X_lo, ...) and X_note; x NULL
 * when the panel lacks the column. */
static void put_cell(FILE *f, const rpt_col *col, const rpt_cell *x)
{
    int kind = x ? x->kind : RPT_CELL_NONE;
    if (kind == RPT_CELL_TEXT)
        put_field(f, x->text);
    else if (kind == RPT_CELL_NUM || kind == RPT_CELL_STAT || kind == RPT_CELL_DELTA)
        put_num(f, x->v);
    const char *const *sfx = NULL;
    int n_sfx = spread(col, &sfx);
    for (int k = 0; k < n_sfx; k++) {
        fputc(',', f);
        put_part(f, x, kind, sfx[k]);
    }
    if (col->kind != RPT_COL_TEXT) {
        fputc(',', f);
        if (kind == RPT_CELL_MISSING || kind == RPT_CELL_STAT || kind == RPT_CELL_DELTA)
            put_field(f, x->text);
    }
}

/* The header: the first panel's keys, source (when a row is not ours),
 * then each column with its spread and note. */
static void put_header(FILE *f, const rpt_panel *p0, int n_keys, int roles, const ucol *u, int n)
{
    for (int k = 0; k < n_keys; k++) {
        if (k)
            fputc(',', f);
        put_field(f, p0->key_names[k]);
    }
    if (roles)
        fputs(n_keys ? ",source" : "source", f);
    for (int i = 0; i < n; i++) {
        const rpt_col *col = u[i].col;
        if (i || n_keys || roles)
            fputc(',', f);
        put_field(f, col->key);
        const char *const *sfx = NULL;
        int n_sfx = spread(col, &sfx);
        for (int k = 0; k < n_sfx; k++) {
            fputc(',', f);
            put_field(f, col->key);
            fputs(sfx[k], f);
        }
        if (col->kind != RPT_COL_TEXT) {
            fputc(',', f);
            put_field(f, col->key);
            fputs("_note", f);
        }
    }
    fputs("\r\n", f);
}

int rpt_render_csv(const rpt_table *t, FILE *f)
{
    /* the union of columns and keys, in order of first appearance */
    int cap = 0, n = 0, roles = 0;
    for (int pi = 0; pi < t->n_panels; pi++) {
        cap += t->panels[pi].n_cols;
        for (int r = 0; r < t->panels[pi].n_rows; r++)
            roles |= t->panels[pi].rows[r].role != RPT_OURS;
    }
    ucol *u = calloc(cap ? (size_t)cap : 1, sizeof *u);
    int *map = calloc(cap ? (size_t)cap : 1, sizeof *map); /* union column -> the panel's, -1 absent */
    if (!u || !map) {
        free(u);
        free(map);
        return -1;
    }
    for (int pi = 0; pi < t->n_panels; pi++)
        for (int c = 0; c < t->panels[pi].n_cols; c++) {
            const rpt_col *col = &t->panels[pi].cols[c];
            int seen = 0;
            for (int i = 0; i < n && !seen; i++)
                seen = !strcmp(u[i].col->key, col->key);
            if (!seen)
                u[n++].col = col;
        }
    const rpt_panel *p0 = t->n_panels ? &t->panels[0] : NULL;
    int n_keys = p0 ? p0->n_keys : 0;
    put_header(f, p0, n_keys, roles, u, n);
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        for (int i = 0; i < n; i++)
            map[i] = find_col(p, u[i].col->key);
        for (int r = 0; r < p->n_rows; r++) {
            for (int k = 0; k < n_keys; k++) {
                if (k)
                    fputc(',', f);
                put_field(f, k < p->n_keys ? p->key_vals[k] : "");
            }
            if (roles)
                fprintf(f, "%s%s", n_keys ? "," : "", rpt_role_name(p->rows[r].role));
            for (int i = 0; i < n; i++) {
                if (i || n_keys || roles)
                    fputc(',', f);
                put_cell(f, u[i].col, map[i] >= 0 ? &p->rows[r].cells[map[i]] : NULL);
            }
            fputs("\r\n", f);
        }
    }
    free(map);
    free(u);
    return 0;
}
