/* render.c: what the four formats share: format names, number
 * formatting, and writing an output file atomically (or to stdout).
 * Must not: know any table. */
#include "reports/rpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

int rpt_format_parse(const char *s)
{
    if (!strcmp(s, "md") || !strcmp(s, "markdown"))
        return RPT_FMT_MD;
    if (!strcmp(s, "csv"))
        return RPT_FMT_CSV;
    if (!strcmp(s, "latex") || !strcmp(s, "tex"))
        return RPT_FMT_LATEX;
    if (!strcmp(s, "json"))
        return RPT_FMT_JSON;
    return -1;
}

const char *rpt_format_ext(int fmt)
{
    static const char *const ext[] = {"md", "csv", "tex", "json"};
    return fmt >= 0 && fmt < 4 ? ext[fmt] : "txt";
}

int rpt_render(const rpt_table *t, int fmt, FILE *f, tlm_err *e)
{
    int rc;
    switch (fmt) {
    case RPT_FMT_MD: rc = rpt_render_md(t, f); break;
    case RPT_FMT_CSV: rc = rpt_render_csv(t, f); break;
    case RPT_FMT_LATEX: rc = rpt_render_latex(t, f); break;
    case RPT_FMT_JSON: rc = rpt_render_json(t, f); break;
    default: return tlm_errf(e, TLM_EINTERNAL, "unknown format %d", fmt);
    }
    if (rc || ferror(f))
        return tlm_errf(e, TLM_EIO, "writing table %s: output error", t->name);
    return 0;
}

const char *rpt_role_label(int role)
{
    return role == RPT_PAPER ? "paper" : role == RPT_DIFF ? "ours − paper" : NULL;
}

const char *rpt_role_name(int role)
{
    static const char *const n[] = {"ours", "paper", "ours-paper", "derived"};
    return role >= 0 && role < 4 ? n[role] : "ours";
}

void rpt_fmt_num(char *out, size_t cap, double v, int decimals, int sign)
{
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, "%sinf", v < 0 ? "-" : sign ? "+" : "");
        return;
    }
    /* no "-0.00": a difference that rounds to zero reads as zero */
    double scale = pow(10, decimals);
    if (round(v * scale) == 0)
        v = 0;
    snprintf(out, cap, sign && v > 0 ? "%+.*f" : "%.*f", decimals, v);
}


int rpt_write_output(const char *path, int (*fn)(void *ctx, FILE *f, tlm_err *e), void *ctx, tlm_err *e)
{
    if (!path || !strcmp(path, "-")) {
        int rc = fn(ctx, stdout, e);
        if (!rc && fflush(stdout) != 0)
            rc = tlm_errf(e, TLM_EIO, "writing to stdout failed");
        return rc;
    }
    tlm_atomic a;
    int rc = tlm_atomic_open(&a, path, e);
    if (rc)
        return rc;
    if ((rc = fn(ctx, a.f, e))) {
        tlm_atomic_abort(&a);
        return rc;
    }
    return tlm_atomic_commit(&a, e);
}

void rpt_fmt_bound(char *out, size_t cap, double v, int decimals, int sign)
{
    /* Whether an interval excludes 0 is read off its ends: an end that is
     * not 0 but rounds to it gets the decimals that show its sign (at most
     * three more: below that it is 0 for any reader). */
    for (int d = decimals; d <= decimals + 3; d++)
        if (round(v * pow(10, d)) != 0) { /* NaN and inf too: printed at once */
            rpt_fmt_num(out, cap, v, d, sign);
            return;
        }
    rpt_fmt_num(out, cap, v, decimals, sign);
}

void rpt_fmt_delta(char *out, size_t cap, const rpt_cell *c, int decimals)
{
    char v[64], lo[64], hi[64];
    rpt_fmt_num(v, sizeof v, c->v, decimals, 1);
    size_t at = (size_t)snprintf(out, cap, "%s", v);
    if (at < cap && c->n >= 2 && isfinite(c->lo) && isfinite(c->hi)) {
        rpt_fmt_bound(lo, sizeof lo, c->lo, decimals, 1);
        rpt_fmt_bound(hi, sizeof hi, c->hi, decimals, 1);
        at += (size_t)snprintf(out + at, cap - at, " [%s, %s]", lo, hi);
    }
    if (at >= cap)
        return;
    if (c->paired)
        snprintf(out + at, cap - at, " (n=%d%s%s)", c->n, c->text ? "; " : "", c->text ? c->text : "");
    else if (c->text)
        snprintf(out + at, cap - at, " (%s)", c->text);
}
