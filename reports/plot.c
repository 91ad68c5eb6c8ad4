/* plot.c: draws an rpt_figure with PLplot (cairo drivers): white page,
 * labelled axes, one colour per series from a fixed palette that reads in
 * print, dashed lines for a second quantity, error bars, a legend to the
 * right.  PLplot writes a temporary file; the bytes then go to the target
 * atomically (common/fileio.h).
 * PLplot calls exit() on a fatal error (plexit); everything that could
 * trigger one (no device, an unwritable file, a degenerate range) is
 * checked here first.
 * Must not: draw NaN or infinite points (lines break at them). */
#include "reports/plot.h"

#include <math.h>
#include <plplot.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"

#define PAGE_W 1000
#define PAGE_H 640
#define MAX_FIG_BYTES (64u << 20)

/* Palette (cmap0): 0 background, 1 axes, 2.. the series (Okabe-Ito, then greys). */
static const PLINT PAL_R[] = {255, 0, 0, 230, 86, 0, 213, 204, 240, 0, 120, 160, 60};
static const PLINT PAL_G[] = {255, 0, 114, 159, 180, 158, 94, 121, 228, 0, 120, 60, 160};
static const PLINT PAL_B[] = {255, 0, 178, 0, 233, 115, 0, 167, 66, 0, 120, 160, 60};
#define N_PAL ((int)(sizeof PAL_R / sizeof PAL_R[0]))
#define N_SERIES_COLORS (N_PAL - 2)

void rpt_figure_init(rpt_figure *f)
{
    memset(f, 0, sizeof *f);
    f->ylo_hint = NAN;
}

void rpt_figure_clear(rpt_figure *f)
{
    rpt_arena_clear(&f->a);
    memset(f, 0, sizeof *f);
}

rpt_series *rpt_figure_series(rpt_figure *f, const char *label, int n, int with_err)
{
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 8;
        rpt_series *s = rpt_alloc(&f->a, sizeof *s * (size_t)cap);
        if (!s)
            return NULL;
        if (f->s)
            memcpy(s, f->s, sizeof *s * (size_t)f->n);
        f->s = s;
        f->cap = cap;
    }
    rpt_series *s = &f->s[f->n];
    memset(s, 0, sizeof *s);
    s->label = rpt_strdup(&f->a, label);
    s->x = rpt_alloc(&f->a, sizeof(double) * (size_t)(n ? n : 1));
    s->y = rpt_alloc(&f->a, sizeof(double) * (size_t)(n ? n : 1));
    s->err = with_err ? rpt_alloc(&f->a, sizeof(double) * (size_t)(n ? n : 1)) : NULL;
    if (!s->label || !s->x || !s->y || (with_err && !s->err))
        return NULL;
    s->n = n;
    s->color = f->n;
    f->n++;
    return s;
}

int rpt_figure_points(const rpt_figure *f)
{
    int n = 0;
    for (int i = 0; i < f->n; i++)
        for (int k = 0; k < f->s[i].n; k++)
            n += isfinite(f->s[i].x[k]) && isfinite(f->s[i].y[k]);
    return n;
}

int rpt_image_kind(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".svg"))
        return RPT_IMG_SVG;
    if (dot && !strcasecmp(dot, ".png"))
        return RPT_IMG_PNG;
    return -1;
}

static const char *device_of(int kind)
{
    return kind == RPT_IMG_PNG ? "pngcairo" : "svgcairo";
}

int rpt_plot_device_check(int kind, tlm_err *e)
{
    const char **menu, **names;
    int n = 64;
    menu = malloc(sizeof *menu * (size_t)n);
    names = malloc(sizeof *names * (size_t)n);
    if (!menu || !names) {
        free(menu);
        free(names);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    plgDevs(&menu, &names, &n);
    int found = 0;
    for (int i = 0; i < n && !found; i++)
        found = names[i] && !strcmp(names[i], device_of(kind));
    free(menu);
    free(names);
    if (!found)
        return tlm_errf(e, TLM_ECONFIG,
                        "PLplot has no %s device: install the Debian package plplot-driver-cairo "
                        "(or run scripts/setup.sh)",
                        device_of(kind));
    return 0;
}

void rpt_pl_escape(char *out, size_t cap, const char *s)
{
    size_t at = 0;
    for (; s && *s && at + 3 < cap; s++) {
        if (*s == '#')
            out[at++] = '#';
        out[at++] = *s;
    }
    out[at] = '\0';
}

/* The data range, padded; yclip skips the first part of x for the y range. */
static void ranges(const rpt_figure *f, double *x0, double *x1, double *y0, double *y1)
{
    double xa = INFINITY, xb = -INFINITY, ya = INFINITY, yb = -INFINITY;
    for (int i = 0; i < f->n; i++)
        for (int k = 0; k < f->s[i].n; k++) {
            double x = f->s[i].x[k];
            if (isfinite(x) && isfinite(f->s[i].y[k])) {
                xa = fmin(xa, x);
                xb = fmax(xb, x);
            }
        }
    double xcut = f->yclip > 0 ? xa + f->yclip * (xb - xa) : -INFINITY;
    for (int pass = 0; pass < 2 && !isfinite(ya); pass++)
        for (int i = 0; i < f->n; i++)
            for (int k = 0; k < f->s[i].n; k++) {
                double x = f->s[i].x[k], y = f->s[i].y[k], d = f->s[i].err ? f->s[i].err[k] : 0;
                if (!isfinite(x) || !isfinite(y) || (pass == 0 && x < xcut))
                    continue;
                if (!isfinite(d))
                    d = 0;
                ya = fmin(ya, y - d);
                yb = fmax(yb, y + d);
            }
    if (!isnan(f->ylo_hint))
        ya = fmin(ya, f->ylo_hint);
    if (!(xb > xa)) {
        double d = isfinite(xa) && xa != 0 ? fabs(xa) * 0.1 : 1;
        xa = isfinite(xa) ? xa - d : 0;
        xb = isfinite(xb) ? xb + d : 1;
    }
    if (!(yb > ya)) {
        double d = isfinite(ya) && ya != 0 ? fabs(ya) * 0.05 : 1;
        ya = isfinite(ya) ? ya - d : 0;
        yb = isfinite(yb) ? yb + d : 1;
    }
    double px = (xb - xa) * 0.03, py = (yb - ya) * 0.06;
    *x0 = xa - px;
    *x1 = xb + px;
    *y0 = ya - py;
    *y1 = yb + py;
    if (!isnan(f->ylo_hint) && f->ylo_hint == 0 && ya >= 0 && *y0 < 0)
        *y0 = 0;
}

/* Lines between finite points; a NaN breaks the line. */
static void draw_series(const rpt_series *s, double ytrans(double))
{
    PLFLT *x = malloc(sizeof *x * (size_t)(s->n ? s->n : 1)), *y = malloc(sizeof *y * (size_t)(s->n ? s->n : 1));
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    int m = 0;
    for (int k = 0; k <= s->n; k++) {
        int ok = k < s->n && isfinite(s->x[k]) && isfinite(s->y[k]);
        if (ok) {
            x[m] = s->x[k];
            y[m] = ytrans(s->y[k]);
            m++;
            continue;
        }
        if (m >= 2 && !s->no_line)
            plline(m, x, y);
        if (m >= 1 && (s->points || m == 1)) {
            plschr(0, 0.55); /* plstring draws at the character height */
            plstring(m, x, y, "#(840)"); /* open circle */
            plschr(0, 1.0);
        }
        m = 0;
    }
    if (s->err) {
        for (int k = 0; k < s->n; k++) {
            if (!isfinite(s->x[k]) || !isfinite(s->y[k]) || !isfinite(s->err[k]) || s->err[k] <= 0)
                continue;
            PLFLT xx = s->x[k], lo = ytrans(s->y[k] - s->err[k]), hi = ytrans(s->y[k] + s->err[k]);
            if (isfinite(lo) && isfinite(hi))
                plerry(1, &xx, &lo, &hi);
        }
    }
    free(x);
    free(y);
}

static double ident(double v)
{
    return v;
}

static double log10_or_nan(double v)
{
    return v > 0 ? log10(v) : NAN;
}

/* The legend: one entry per series, in the top right corner of the page,
 * beside the plot. */
static void draw_legend(const rpt_figure *f)
{
    int n = f->n;
    PLINT *opt = calloc((size_t)n, sizeof *opt), *tcol = calloc((size_t)n, sizeof *tcol),
          *lcol = calloc((size_t)n, sizeof *lcol), *lsty = calloc((size_t)n, sizeof *lsty),
          *scol = calloc((size_t)n, sizeof *scol), *snum = calloc((size_t)n, sizeof *snum);
    PLFLT *lw = calloc((size_t)n, sizeof *lw), *ss = calloc((size_t)n, sizeof *ss);
    const char **text = calloc((size_t)n, sizeof *text), **sym = calloc((size_t)n, sizeof *sym);
    char (*labels)[48] = calloc((size_t)n, sizeof *labels);
    if (opt && tcol && lcol && lsty && scol && snum && lw && ss && text && sym && labels) {
        for (int i = 0; i < n; i++) {
            const rpt_series *s = &f->s[i];
            opt[i] = (s->no_line ? 0 : PL_LEGEND_LINE) | (s->points || s->no_line ? PL_LEGEND_SYMBOL : 0);
            tcol[i] = 1;
            lcol[i] = scol[i] = 2 + s->color % N_SERIES_COLORS;
            lsty[i] = s->dashed ? 3 : 1;
            lw[i] = 2.0;
            ss[i] = 0.6;
            snum[i] = 1;
            sym[i] = "#(840)";
            rpt_pl_escape(labels[i], sizeof labels[i], s->label);
            text[i] = labels[i];
        }
        /* in the top right corner of the page, beside the plot */
        PLFLT w, h;
        pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_SUBPAGE | PL_POSITION_INSIDE | PL_POSITION_RIGHT | PL_POSITION_TOP, 0.01, 0.10, 0.05,
                 0, 1, 1, 0, 0, n, opt, 0.6, 0.65, 1.9, 0.0, tcol, text, NULL, NULL, NULL, NULL, lcol, lsty, lw,
                 scol, ss, snum, sym);
    }
    free(opt);
    free(tcol);
    free(lcol);
    free(lsty);
    free(scol);
    free(snum);
    free(lw);
    free(ss);
    free(text);
    free(sym);
    free(labels);
}

static int draw(const rpt_figure *f, int kind, const char *file)
{
    plsdev(device_of(kind));
    plsfnam(file);
    plspage(0, 0, PAGE_W, PAGE_H, 0, 0);
    plscmap0(PAL_R, PAL_G, PAL_B, N_PAL);
    plinit();
    pladv(0);
    plschr(0, 1.0);
    int legend = f->n > 0;
    /* category names run up from under the axis: room for them below */
    plvpor(0.09, legend ? 0.60 : 0.95, f->n_xticks ? 0.30 : 0.13, 0.90);
    double x0, x1, y0, y1;
    ranges(f, &x0, &x1, &y0, &y1);
    double (*yt)(double) = ident;
    if (f->logy && y0 > 0) {
        yt = log10_or_nan;
        y0 = log10(y0);
        y1 = log10(y1);
    }
    plwind(x0, x1, y0, y1);
    plcol0(10);
    plwidth(0.5);
    pllsty(2);
    plbox("g", 0, 0, "g", 0, 0); /* light grid under the data */
    pllsty(1);
    plcol0(1);
    plwidth(1);
    plbox(f->n_xticks ? "abc" : "abcnst", 0, 0, yt == ident ? "bcnstv" : "bcnstvl", 0, 0); /* a: y = 0 when in range */
    for (int i = 0; i < f->n_xticks; i++) {
        char name[128];
        double at = (i + 1 - x0) / (x1 - x0);
        if (at < 0 || at > 1)
            continue;
        rpt_pl_escape(name, sizeof name, f->xticks[i]);
        plschr(0, 0.8);
        plmtex("bv", 0.8, at, 1.0, name);
        plschr(0, 1.0);
    }
    /* axis labels and titles may carry PLplot escapes on purpose (Greek); the
     * figure builders escape what comes from the database (rpt_pl_escape) */
    /* with category names under the axis, the x label would sit on them */
    pllab(f->xlabel && !f->n_xticks ? f->xlabel : "", f->ylabel ? f->ylabel : "", "");
    for (int i = 0; i < f->n; i++) {
        const rpt_series *s = &f->s[i];
        plcol0(2 + s->color % N_SERIES_COLORS);
        pllsty(s->dashed ? 3 : 1);
        plwidth(2.0);
        plssym(0, 0.6);
        draw_series(s, yt);
    }
    pllsty(1);
    plwidth(1);
    if (legend)
        draw_legend(f);
    /* the title centred on the page, not on the narrower plot */
    plvpor(0.02, 0.98, 0.13, 0.90);
    plwind(0, 1, 0, 1);
    plcol0(1);
    plschr(0, 1.1);
    plmtex("t", 2.0, 0.5, 0.5, f->title ? f->title : "");
    plend();
    return 0;
}

int rpt_plot_write(const rpt_figure *f, const char *path, tlm_err *e)
{
    int kind = rpt_image_kind(path);
    if (kind < 0)
        return tlm_errf(e, TLM_ECONFIG, "%s: a figure is written as .svg or .png", path);
    int rc = rpt_plot_device_check(kind, e);
    if (rc)
        return rc;
    const char *dir = getenv("TMPDIR");
    char tmp[TLM_PATH_CAP];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/tlm-report-plot-XXXXXX", dir && *dir ? dir : "/tmp") >= sizeof tmp)
        return tlm_errf(e, TLM_EIO, "TMPDIR %s: longer than the %d bytes this system allows for a path", dir,
                        TLM_PATH_CAP - 1);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tlm_errf(e, TLM_EIO, "%s: cannot create a temporary file for PLplot", tmp);
    close(fd);
    draw(f, kind, tmp);
    char *data = NULL;
    size_t len = 0;
    rc = tlm_read_file(tmp, MAX_FIG_BYTES, &data, &len, e);
    unlink(tmp);
    if (rc)
        return tlm_err_prefix(e, "reading PLplot's output");
    if (len < 64) {
        free(data);
        return tlm_errf(e, TLM_EINTERNAL, "PLplot wrote %zu bytes for %s: no drawing", len, path);
    }
    rc = tlm_write_file_atomic(path, data, len, e);
    free(data);
    return rc;
}
