/* render_json.c: the table as one JSON document (format "tlm_report": 1):
 * panels with their keys, columns (key, title, kind, better, source, and
 * the decimals and sign the human formats print) and
 * rows whose cells are keyed by column: strings for text, objects for
 * numbers ({"value", "std", "n", "note", "best"}, or {"value": null,
 * "missing": why}), paired differences ({"value", "lo", "hi", "n",
 * "paired", "significant", "note", "best"}), null for not applicable.  Non-finite numbers are null.
 * Must not: round. */
#include "reports/rpt.h"

#include <math.h>
#include <string.h>

#include "common/fmt.h"
#include "common/json.h"

static void file_sink(void *f, const char *s, size_t n) { fwrite(s, 1, n, f); }

void rpt_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    /* runs of plain characters in one fwrite: the dashboard's jobs answer
     * is mostly strings, and a call per character was a tenth of its time */
    tlm_json_escape(s, TLM_JSON_QUOTE | TLM_JSON_NL, file_sink, f);
}

void rpt_json_num(FILE *f, double v)
{
    char b[40];
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    tlm_fmt_exact(b, sizeof b, v);
    fputs(b, f);
}

/* lead (what comes before the value: punctuation, a key, as written),
 * then the value */
static void put_str(FILE *f, const char *lead, const char *s)
{
    fputs(lead, f);
    rpt_json_str(f, s);
}

static void put_num(FILE *f, const char *lead, double v)
{
    fputs(lead, f);
    rpt_json_num(f, v);
}

static void put_notes(FILE *f, const char *const *notes, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        rpt_json_str(f, notes[i]);
    }
    fputc(']', f);
}

static void put_cell(FILE *f, const rpt_cell *c)
{
    switch (c->kind) {
    case RPT_CELL_TEXT: rpt_json_str(f, c->text); break;
    case RPT_CELL_MISSING:
        put_str(f, "{\"value\": null, \"missing\": ", c->text);
        fputc('}', f);
        break;
    case RPT_CELL_NUM:
    case RPT_CELL_STAT:
    case RPT_CELL_DELTA:
        /* one envelope for the numbers: value first, best last (a delta is never the best) */
        put_num(f, "{\"value\": ", c->v);
        if (c->kind == RPT_CELL_STAT) {
            put_num(f, ", \"std\": ", c->std);
            fprintf(f, ", \"n\": %d, \"note\": ", c->n);
            rpt_json_str(f, c->text);
        } else if (c->kind == RPT_CELL_DELTA) {
            put_num(f, ", \"lo\": ", c->lo);
            put_num(f, ", \"hi\": ", c->hi);
            fprintf(f, ", \"n\": %d, \"paired\": %s, \"significant\": %s, \"note\": ", c->n,
                    c->paired ? "true" : "false",
                    c->sig == RPT_SIG_YES ? "true" : c->sig == RPT_SIG_NO ? "false" : "null");
            rpt_json_str(f, c->text);
        }
        fprintf(f, ", \"best\": %s}", c->kind != RPT_CELL_DELTA && c->best ? "true" : "false");
        break;
    default: fputs("null", f);
    }
}

int rpt_render_json(const rpt_table *t, FILE *f)
{
    static const char *const kinds[] = {"text", "stat", "number", "delta"};
    put_str(f, "{\"tlm_report\": 1, \"table\": ", t->name);
    put_str(f, ", \"title\": ", t->title);
    put_str(f, ", \"db\": ", t->db_path);
    put_str(f, ", \"sweep\": ", t->sweep);
    fputs(", \"notes\": ", f);
    put_notes(f, t->notes, t->n_notes);
    fputs(",\n \"panels\": [", f);
    for (int pi = 0; pi < t->n_panels; pi++) {
        const rpt_panel *p = &t->panels[pi];
        put_str(f, pi ? ",\n  {\"title\": " : "\n  {\"title\": ", p->title);
        fputs(", \"keys\": {", f);
        for (int k = 0; k < p->n_keys; k++) {
            if (k)
                fputs(", ", f);
            rpt_json_str(f, p->key_names[k]);
            put_str(f, ": ", p->key_vals[k]);
        }
        fputs("}, \"notes\": ", f);
        put_notes(f, p->notes, p->n_notes);
        fputs(",\n   \"columns\": [", f);
        for (int c = 0; c < p->n_cols; c++) {
            const rpt_col *col = &p->cols[c];
            put_str(f, c ? ", {\"key\": " : "{\"key\": ", col->key);
            put_str(f, ", \"title\": ", col->title);
            fprintf(f, ", \"kind\": \"%s\", \"better\": %s, \"source\": \"%s\", \"decimals\": %d, \"signed\": %s}",
                    kinds[col->kind], col->better < 0 ? "\"lower\"" : col->better > 0 ? "\"higher\"" : "null",
                    rpt_role_name(col->role), col->decimals, col->sign ? "true" : "false");
        }
        fputs("],\n   \"rows\": [", f);
        for (int r = 0; r < p->n_rows; r++) {
            fprintf(f, "%s\n    {\"source\": \"%s\", \"cells\": {", r ? "," : "", rpt_role_name(p->rows[r].role));
            for (int c = 0; c < p->n_cols; c++) {
                if (c)
                    fputs(", ", f);
                rpt_json_str(f, p->cols[c].key);
                fputs(": ", f);
                put_cell(f, &p->rows[r].cells[c]);
            }
            fputs("}}", f);
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
    return 0;
}
