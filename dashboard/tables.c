/* tables.c: the paper's tables and figures on the dashboard (/api/tables,
 * /api/table, /api/figure), built and rendered by reports/, the same code
 * as `tlm-report --table` and `--plot`.
 *
 * A table is built once per version of the database and kept (the runs
 * table of 100,000 jobs takes seconds to build, a page of it microseconds
 * to render), then answered a page at a time: at most DASH_TABLE_MAX_ROWS
 * rows, optionally sorted by a column, through a shallow copy of the table
 * whose panels hold only the page's rows, so that reports/ renders exactly
 * what it would print, less the rows off the page.  A table that fits in
 * one page is rendered untouched: byte for byte tlm-report's output.
 *
 * Must not: compute a number of a table (reports/ does; here rows are only
 * chosen and ordered), keep a read transaction open (the context that
 * built a table is closed at once: the table owns its strings), or draw
 * two figures at once (PLplot is not thread-safe). */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "dashboard/dash.h"
#include "reports/plot.h"
#include "reports/rpt.h"

/* ------------------------------------------------------------ the list */
/* One entry of the list, {"name", "what"[, "paper"]}: paper < 0 for a
 * figure, which has no paper column. */
static void list_entry(FILE *f, int first, const char *name, const char *what, int paper)
{
    fputs(first ? "{\"name\":" : ",{\"name\":", f);
    rpt_json_str(f, name);
    fputs(",\"what\":", f);
    rpt_json_str(f, what);
    if (paper >= 0)
        fprintf(f, ",\"paper\":%s", paper ? "true" : "false");
    fputc('}', f);
}

int dash_api_tables(FILE *f, tlm_err *e)
{
    (void)e;
    fputs("{\"tables\":[", f);
    for (int i = 0; i < rpt_n_table_defs; i++)
        list_entry(f, i == 0, rpt_table_defs[i].name, rpt_table_defs[i].what,
                   (rpt_table_defs[i].uses & RPT_USES_PAPER) != 0);
    fputs("],\"figures\":[", f);
    for (int i = 0; i < rpt_n_figure_defs; i++)
        list_entry(f, i == 0, rpt_figure_defs[i].name, rpt_figure_defs[i].what, -1);
    fputs("]}\n", f);
    return 0;
}

/* ------------------------------------------------------------ the last table built */
static struct {
    pthread_mutex_t mu;
    char *sig; /* version, name, paper, sweep; NULL: nothing kept */
    rpt_table t;
} kept = {PTHREAD_MUTEX_INITIALIZER, NULL, {0}};

void dash_tables_clear(void)
{
    pthread_mutex_lock(&kept.mu);
    free(kept.sig);
    kept.sig = NULL;
    rpt_table_clear(&kept.t);
    pthread_mutex_unlock(&kept.mu);
}

/* kept.t is the table for this request (built now unless it was kept); under kept.mu. */
static int table_for(const char *db_path, const char *version, const rpt_table_def *def, const dash_query *q,
                     tlm_err *e)
{
    int paper = q->paper && (def->uses & RPT_USES_PAPER);
    size_t n = strlen(version) + strlen(def->name) + (q->sweep ? strlen(q->sweep) : 0) + 8;
    char *sig = malloc(n);
    if (!sig)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    /* '\x1f' between the parts: a unit separator no request value holds unescaped */
    snprintf(sig, n, "%s\x1f%s\x1f%d\x1f%s", version, def->name, paper, q->sweep ? q->sweep : "");
    if (kept.sig && !strcmp(kept.sig, sig)) {
        free(sig);
        return 0;
    }
    free(kept.sig);
    kept.sig = NULL;
    rpt_table_clear(&kept.t);
    rpt_opts o;
    memset(&o, 0, sizeof o);
    o.sweep = q->sweep;
    o.paper = paper;
    rpt_ctx c;
    int rc = rpt_ctx_open(&c, db_path, &o, e);
    if (!rc) {
        rc = rpt_table_build(&c, def, &kept.t, e);
        rpt_ctx_close(&c);
        /* the context of 100,000 jobs is a few hundred MB, freed into this thread's malloc arena: give it
         * back to the system rather than keep it for the next build */
        malloc_trim(0);
    }
    if (rc) {
        rpt_table_clear(&kept.t);
        free(sig);
        return rc;
    }
    kept.sig = sig;
    return 0;
}

/* ------------------------------------------------------------ a page of it */
/* A cell as a sort key: numbers by value, text by number when both are
 * numbers ("9" before "10"), else as text; empty cells last either way. */
static int cell_cmp(const rpt_cell *a, const rpt_cell *b)
{
    int ea = a->kind == RPT_CELL_NONE || a->kind == RPT_CELL_MISSING || (a->kind != RPT_CELL_TEXT && isnan(a->v));
    int eb = b->kind == RPT_CELL_NONE || b->kind == RPT_CELL_MISSING || (b->kind != RPT_CELL_TEXT && isnan(b->v));
    if (ea || eb)
        return ea - eb;
    if (a->kind == RPT_CELL_TEXT && b->kind == RPT_CELL_TEXT) {
        char *ea_end, *eb_end;
        double x = strtod(a->text, &ea_end), y = strtod(b->text, &eb_end);
        if (*a->text && *b->text && !*ea_end && !*eb_end)
            return (x > y) - (x < y);
        return strcmp(a->text, b->text);
    }
    if (a->kind == RPT_CELL_TEXT || b->kind == RPT_CELL_TEXT)
        return a->kind == RPT_CELL_TEXT ? 1 : -1;
    return (a->v > b->v) - (a->v < b->v);
}

typedef struct sort_row {
    const rpt_row *r;
    int at; /* its place in the table: ties keep it */
} sort_row;
static _Thread_local int sort_col, sort_desc;

static int row_cmp(const void *pa, const void *pb)
{
    const sort_row *a = pa, *b = pb;
    const rpt_cell *ca = &a->r->cells[sort_col], *cb = &b->r->cells[sort_col];
    int empty_a = ca->kind == RPT_CELL_NONE || ca->kind == RPT_CELL_MISSING;
    int empty_b = cb->kind == RPT_CELL_NONE || cb->kind == RPT_CELL_MISSING;
    int c = cell_cmp(ca, cb);
    if (c && !(empty_a || empty_b) && sort_desc)
        c = -c;
    return c ? c : a->at - b->at;
}

/* v: t's rows [offset, offset + limit) (all panels in turn), sorted by the
 * column named q->sort within each panel; panels without a row on the page
 * are left out.  v shares t's strings; its panels and rows are malloc'd in
 * *mem (freed by the caller). */
static int table_page(const rpt_table *t, const dash_query *q, rpt_table *v, void **mem, int64_t *total, tlm_err *e)
{
    *mem = NULL;
    *v = *t;
    int64_t n = 0;
    for (int pi = 0; pi < t->n_panels; pi++)
        n += t->panels[pi].n_rows;
    *total = n;
    if (q->sort) {
        for (int pi = 0; pi < t->n_panels; pi++)
            for (int r = 0; r < t->panels[pi].n_rows; r++)
                if (t->panels[pi].rows[r].role != RPT_OURS)
                    return tlm_errf(e, TLM_ECONFIG, "sort: the rows of table %s come in groups (the paper's beside "
                                    "ours): it keeps its own order", t->name);
    } else if (q->offset == 0 && n <= q->limit) {
        return 0; /* all of it, as tlm-report prints it */
    }
    size_t need = sizeof(rpt_panel) * (size_t)(t->n_panels ? t->n_panels : 1) + sizeof(rpt_row) * (size_t)(n ? n : 1) +
                  sizeof(sort_row) * (size_t)(n ? n : 1);
    char *m = malloc(need);
    if (!m)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    *mem = m;
    rpt_panel *panels = (rpt_panel *)m;
    rpt_row *rows = (rpt_row *)(m + sizeof(rpt_panel) * (size_t)(t->n_panels ? t->n_panels : 1));
    sort_row *sr = (sort_row *)((char *)rows + sizeof(rpt_row) * (size_t)(n ? n : 1));
    int found = !q->sort;
    int64_t at = 0;
    v->panels = panels;
    v->n_panels = 0;
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        int col = -1;
        for (int c = 0; q->sort && c < p->n_cols; c++)
            if (!strcmp(p->cols[c].key, q->sort))
                col = c;
        found |= col >= 0;
        for (int r = 0; r < p->n_rows; r++)
            sr[r] = (sort_row){&p->rows[r], r};
        if (col >= 0) {
            sort_col = col;
            sort_desc = q->desc;
            qsort(sr, (size_t)p->n_rows, sizeof *sr, row_cmp);
        }
        int64_t lo = q->offset - at, hi = q->offset + q->limit - at;
        if (lo < 0)
            lo = 0;
        if (hi > p->n_rows)
            hi = p->n_rows;
        at += p->n_rows;
        if (lo >= hi)
            continue;
        rpt_panel *np = &panels[v->n_panels++];
        *np = *p;
        np->rows = rows;
        np->n_rows = (int)(hi - lo);
        for (int64_t r = lo; r < hi; r++)
            *rows++ = *sr[r].r;
    }
    if (!found)
        return tlm_errf(e, TLM_ECONFIG, "sort: table %s has no column '%.40s'", t->name, q->sort);
    return 0;
}

/* What the Tables page draws, from one build of the table: its JSON (the
 * structure: panels, columns, rows and their sources, the best cells) and
 * its Markdown (every cell's text as tlm-report prints it: the Δ with its
 * interval and mark, a paper row's label), so that no number is formatted
 * twice, nor in JavaScript; and the page's place in the rows. */
static int put_table_page(const rpt_table *t, const dash_query *q, int64_t total, FILE *f, tlm_err *e)
{
    char *md = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&md, &n);
    if (!m)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int rc = rpt_render(t, RPT_FMT_MD, m, e);
    if (fclose(m) && !rc)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (!rc) {
        fputs("{\"table\":", f);
        rc = rpt_render(t, RPT_FMT_JSON, f, e);
        fputs(",\"md\":", f);
        rpt_json_str(f, md);
        int sortable = 1;
        for (int pi = 0; pi < t->n_panels; pi++)
            for (int r = 0; r < t->panels[pi].n_rows; r++)
                sortable &= t->panels[pi].rows[r].role == RPT_OURS;
        fprintf(f, ",\"rows\":%lld,\"offset\":%lld,\"limit\":%d,\"sortable\":%s,\"sort\":", (long long)total,
                (long long)q->offset, q->limit, sortable ? "true" : "false");
        rpt_json_str(f, q->sort);
        fprintf(f, ",\"dir\":\"%s\"}\n", q->desc ? "desc" : "asc");
    }
    free(md);
    return rc;
}

int dash_api_table(const char *db_path, const char *version, const dash_query *q, FILE *f, tlm_err *e)
{
    const rpt_table_def *def = q->name ? rpt_table_find(q->name) : NULL;
    if (!def)
        return tlm_errf(e, TLM_EDATA, "no table named '%s'", q->name ? q->name : "");
    pthread_mutex_lock(&kept.mu);
    int rc = table_for(db_path, version, def, q, e);
    rpt_table v;
    void *mem = NULL;
    int64_t total = 0;
    if (!rc)
        rc = table_page(&kept.t, q, &v, &mem, &total, e);
    if (!rc) {
        v.sweep = q->sweep; /* the request's (the kept table's pointed into an earlier request) */
        v.db_path = db_path;
        rc = q->page ? put_table_page(&v, q, total, f, e) : rpt_render(&v, q->format, f, e);
    }
    free(mem);
    pthread_mutex_unlock(&kept.mu);
    return rc;
}

/* ------------------------------------------------------------ figures */
static pthread_mutex_t plot_mu = PTHREAD_MUTEX_INITIALIZER;

int dash_api_figure(const char *db_path, const char *tmpdir, const dash_query *q, FILE *f, char **svg, size_t *len,
                    tlm_err *e)
{
    *svg = NULL;
    const rpt_figure_def *def = q->name ? rpt_figure_find(q->name) : NULL;
    if (!def)
        return tlm_errf(e, TLM_EDATA, "no figure named '%s'", q->name ? q->name : "");
    rpt_opts o;
    memset(&o, 0, sizeof o);
    o.sweep = q->sweep;
    o.paper = q->paper && (def->uses & RPT_USES_PAPER);
    char path[TLM_PATH_CAP];
    int rc = tlm_path_join(path, sizeof path, tmpdir, "figure.svg", e);
    if (rc)
        return rc;
    pthread_mutex_lock(&plot_mu);
    rpt_ctx c;
    if ((rc = rpt_ctx_open(&c, db_path, &o, e)))
        goto unlock;
    rpt_figure fig;
    rpt_figure_init(&fig);
    rc = def->build(&c, &fig, e);
    int empty = !rc && rpt_figure_points(&fig) == 0;
    if (empty) {
        /* not an error: a figure of jobs that have not got that far (or measured it) */
        char why[TLM_MSG_MAX];
        snprintf(why, sizeof why, "nothing to draw yet%s%s", fig.note ? ": " : "", fig.note ? fig.note : "");
        fputs("{\"figure\":", f);
        rpt_json_str(f, def->name);
        fputs(",\"why\":", f);
        rpt_json_str(f, why);
        fputs("}\n", f);
    }
    if (!rc && !empty)
        rc = rpt_plot_write(&fig, path, e);
    rpt_figure_clear(&fig);
    rpt_ctx_close(&c);
    if (!rc && !empty)
        rc = tlm_read_file(path, 64u << 20, svg, len, e);
    unlink(path);
unlock:
    pthread_mutex_unlock(&plot_mu);
    return rc;
}
