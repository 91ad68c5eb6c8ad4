/* plot.c: lays out and draws an rpt_figure in the report's one style, as
 * SVG (plot_svg.c), then PNG or PDF of that SVG (plot_convert.c).
 *
 * The page: the title on top; the axes in a grid; the legend to the right
 * of the grid, outside every plot, at most a fifth of the width (labels
 * that would not fit are shortened with an ellipsis); the caption under
 * everything, wrapped.  Every margin is measured from the text it holds
 * (plot_text.c), so no label is clipped.  Each axes: its range fitted to
 * its data with 5% to spare (plot_axis.c: no point on the frame), light
 * grid lines at the ticks, grey reference lines, then bands, lines, error
 * bars and markers, clipped to the plot area, and the frame.
 *
 * The SVG carries what a test needs to check the layout without a
 * renderer: class names (frame, data, legend-box, title, tick...), and the
 * measured width of every text in data-w.
 * Must not: draw a non-finite coordinate (a NaN breaks a line, it never
 * becomes a point). */
#include "reports/plot_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"

#define MAX_FIG_BYTES (64u << 20)

#define F_TITLE 15.0
#define F_AXTITLE 12.5
#define F_LABEL 12.5
#define F_TICK 11.0
#define F_LEGEND 11.5
#define F_CAPTION 11.0
#define LINE(px) ((px)*1.25)
#define EDGE 10.0   /* nothing closer to the canvas' edge */
#define TICK 4.0    /* tick length, outwards */
#define SWATCH 26.0 /* legend sample */
#define LEGEND_PAD 7.0
#define LEGEND_GAP 14.0 /* between the plots and the legend */
#define GRID "#e3e3e3"
#define INK "#262626"
#define SOFT "#555555"
/* black shades darker than a colour at the same opacity */
#define BAND_OPACITY(color) ((color) == 0 ? 0.10 : 0.20)

/* ------------------------------------------------------------ the figure model */
void rpt_figure_init(rpt_figure *f)
{
    memset(f, 0, sizeof *f);
}

void rpt_figure_clear(rpt_figure *f)
{
    rpt_arena_clear(&f->a);
    memset(f, 0, sizeof *f);
}

rpt_axes *rpt_figure_axes(rpt_figure *f, const char *title)
{
    if (f->n_axes == RPT_MAX_AXES)
        return NULL;
    rpt_axes *x = &f->ax[f->n_axes++];
    memset(x, 0, sizeof *x);
    x->title = title ? rpt_strdup(&f->a, title) : NULL;
    x->xlo_hint = x->ylo_hint = x->xref = x->yref = NAN;
    return x;
}

rpt_series *rpt_figure_series(rpt_figure *f, const char *label, int axes, int n, int with_range)
{
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 16;
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
    s->label = label ? rpt_strdup(&f->a, label) : NULL;
    size_t m = (size_t)(n > 0 ? n : 1);
    s->x = rpt_alloc(&f->a, sizeof(double) * m);
    s->y = rpt_alloc(&f->a, sizeof(double) * m);
    if (with_range) {
        s->lo = rpt_alloc(&f->a, sizeof(double) * m);
        s->hi = rpt_alloc(&f->a, sizeof(double) * m);
    }
    if ((label && !s->label) || !s->x || !s->y || (with_range && (!s->lo || !s->hi)))
        return NULL;
    for (size_t i = 0; i < m; i++) {
        s->x[i] = s->y[i] = NAN;
        if (with_range)
            s->lo[i] = s->hi[i] = NAN;
    }
    s->n = n;
    s->axes = axes;
    s->line = 1;
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

/* Black first (the reference: uniform), then Okabe & Ito's seven colours,
 * then four dark ones of Paul Tol's colour-blind-safe "muted" scheme that
 * none of the seven resembles: eleven configurations before a colour
 * repeats (dashed). */
static const char *const PALETTE[] = {"#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                      "#56B4E9", "#F0E442", "#882255", "#332288", "#999933", "#44AA99"};
#define N_COLORS 11 /* after black */

const char *rpt_palette(int i)
{
    return i <= 0 ? PALETTE[0] : PALETTE[1 + (i - 1) % N_COLORS];
}

int rpt_palette_dashed(int i)
{
    return i > 0 && ((i - 1) / N_COLORS) % 2 == 1;
}

int rpt_image_kind(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".svg"))
        return RPT_IMG_SVG;
    if (dot && !strcasecmp(dot, ".png"))
        return RPT_IMG_PNG;
    if (dot && !strcasecmp(dot, ".pdf"))
        return RPT_IMG_PDF;
    return -1;
}

int rpt_plot_device_check(int kind, tlm_err *e)
{
    char buf[4096];
    if (kind == RPT_IMG_SVG || rpt__converter(buf, sizeof buf))
        return 0;
    return tlm_errf(e, TLM_ECONFIG,
                    "%s figures are drawn from the SVG by rsvg-convert, which is not installed: install the Debian "
                    "package librsvg2-bin (or run scripts/setup.sh), or write .svg",
                    kind == RPT_IMG_PNG ? "PNG" : "PDF");
}

/* ------------------------------------------------------------ layout */
typedef struct {
    const rpt_series *s; /* the series that shows how the entry looks */
    const char *text;    /* fitted */
} entry;

typedef struct {
    double bx, by, bw, bh; /* the cell of the grid */
    double px, py, pw, ph; /* the plot area */
    rpt__scale x, y;
    double ylab_x; /* where the rotated y label sits */
} frame;

typedef struct {
    const rpt_figure *f;
    rpt_arena a;
    rpt__svg g;
    double W, H;
    entry *legend;
    int n_legend, legend_more;
    double lx, ly, lw, lh, row_h; /* the legend box */
    const char **cap_lines;
    int n_cap;
    frame fr[RPT_MAX_AXES];
} page;

/* The data extent of axes k along x (dim 0) or y (1), bands and bars
 * included, with the axes' reference and hint. */
static void extent(const rpt_figure *f, int k, int dim, int log, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    const rpt_axes *ax = &f->ax[k];
    for (int i = 0; i < f->n; i++) {
        const rpt_series *s = &f->s[i];
        if (s->axes != k)
            continue;
        for (int j = 0; j < s->n; j++) {
            double x = s->x[j], y = s->y[j];
            if (!isfinite(x) || !isfinite(y))
                continue;
            double v = dim ? y : x;
            double vals[3] = {v, NAN, NAN};
            int along = (dim == 1 && (s->band || s->bars == RPT_BAR_Y)) || (dim == 0 && s->bars == RPT_BAR_X);
            if (s->lo && along) {
                vals[1] = s->lo[j];
                vals[2] = s->hi[j];
            }
            for (int m = 0; m < 3; m++)
                if (isfinite(vals[m]) && (!log || vals[m] > 0)) {
                    a = fmin(a, vals[m]);
                    b = fmax(b, vals[m]);
                }
        }
    }
    double ref = dim ? ax->yref : ax->xref;
    if (isfinite(ref) && (!log || ref > 0) && isfinite(a)) {
        a = fmin(a, ref);
        b = fmax(b, ref);
    }
    *lo = isfinite(a) ? a : NAN;
    *hi = isfinite(b) ? b : NAN;
}

static double max_tick_width(const rpt__scale *s, double px, rpt_arena *a, double cap, const char **fitted)
{
    double w = 0;
    for (int i = 0; i < s->n_ticks; i++) {
        const char *t = s->cats ? s->cats[i] : s->label[i];
        if (s->cats && cap > 0) {
            t = rpt__text_fit(a, t, px, cap);
            if (fitted)
                fitted[i] = t;
        }
        double tw = rpt__text_width(t, px);
        if (tw > w)
            w = tw;
    }
    return w;
}

/* Lays out axes k inside its cell. */
static void layout_axes(page *pg, int k)
{
    const rpt_figure *f = pg->f;
    const rpt_axes *ax = &f->ax[k];
    frame *fr = &pg->fr[k];
    double top = (ax->title ? LINE(F_AXTITLE) + 6 : 8);
    double bottom = TICK + 3 + LINE(F_TICK) + (ax->xlabel ? 4 + LINE(F_LABEL) : 0) + 4;
    fr->py = fr->by + top;
    fr->ph = fr->bh - top - bottom;
    double lo, hi;
    if (ax->n_ycats) {
        rpt__scale_cats(&fr->y, ax->n_ycats, ax->ycats, 1);
    } else {
        extent(f, k, 1, ax->logy, &lo, &hi);
        rpt__scale_fit(&fr->y, lo, hi, ax->logy, ax->ylo_hint, fr->ph, 40, 0);
    }
    double ylab = ax->ylabel ? LINE(F_LABEL) + 2 : 0;
    double ytw = max_tick_width(&fr->y, F_TICK, &pg->a, 0.4 * fr->bw, NULL);
    double left = ylab + ytw + TICK + 5;
    double right = 10;
    fr->ylab_x = fr->bx + LINE(F_LABEL) * 0.8;
    for (int pass = 0; pass < 3; pass++) {
        fr->px = fr->bx + left;
        fr->pw = fr->bw - left - right;
        if (ax->n_xcats) {
            rpt__scale_cats(&fr->x, ax->n_xcats, ax->xcats, 0);
        } else {
            extent(f, k, 0, ax->logx, &lo, &hi);
            for (int j = 0; f->sharex && j < f->n_axes; j++) {
                double l, h;
                if (j == k || f->ax[j].n_xcats || f->ax[j].logx != ax->logx)
                    continue;
                extent(f, j, 0, ax->logx, &l, &h);
                lo = isnan(lo) || l < lo ? l : lo; /* NaN (no data there) never wins a comparison */
                hi = isnan(hi) || h > hi ? h : hi;
            }
            /* ticks spaced for their labels: the widest plus room */
            double gap = 45;
            for (int t = 0; t < 3; t++) {
                rpt__scale_fit(&fr->x, lo, hi, ax->logx, ax->xlo_hint, fr->pw, gap, ax->xint);
                double w = max_tick_width(&fr->x, F_TICK, &pg->a, 0, NULL);
                if (fr->x.n_ticks < 2 || fr->pw / fr->x.n_ticks > w + 14)
                    break;
                gap = w + 24;
            }
        }
        /* the last tick label's half that passes the plot's right edge */
        double need = 10;
        for (int i = 0; i < fr->x.n_ticks && !fr->x.cats; i++) {
            double at = rpt__scale_upos(&fr->x, fr->x.tick[i]) * fr->pw;
            double over = rpt__text_width(fr->x.label[i], F_TICK) / 2 - (fr->pw - at);
            if (over + 3 > need)
                need = over + 3;
        }
        if (need <= right + 0.5)
            break;
        right = need;
    }
}

/* Words of the caption into lines of width w. */
static void wrap_caption(page *pg, const char *text, double w)
{
    pg->n_cap = 0;
    if (!text || !*text)
        return;
    size_t n = strlen(text);
    pg->cap_lines = rpt_alloc(&pg->a, sizeof *pg->cap_lines * (n / 2 + 2));
    if (!pg->cap_lines)
        return;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        /* the longest run of whole words that fits */
        const char *end = p, *best = NULL;
        while (1) {
            const char *q = end;
            while (*q && *q != ' ')
                q++;
            char *cand = rpt_printf(&pg->a, "%.*s", (int)(q - p), p);
            if (!cand)
                return;
            if (best && rpt__text_width(cand, F_CAPTION) > w)
                break;
            best = q;
            end = q;
            if (!*q)
                break;
            end = q + 1;
        }
        pg->cap_lines[pg->n_cap++] = rpt_printf(&pg->a, "%.*s", (int)(best - p), p);
        p = best;
    }
}

static int layout(page *pg)
{
    const rpt_figure *f = pg->f;
    int n_axes = f->n_axes ? f->n_axes : 1;
    int cols = f->cols > 0 ? f->cols : n_axes <= 3 ? n_axes : n_axes == 4 ? 2 : 3;
    int rows = (n_axes + cols - 1) / cols;
    pg->W = cols == 1 ? 760 : cols == 2 ? 1000 : 1180;
    /* the legend: one entry per label, in the order of the series */
    pg->legend = rpt_alloc(&pg->a, sizeof *pg->legend * (size_t)(f->n + 1));
    if (!pg->legend)
        return -1;
    double text_w = 0, room = pg->W / 5 - 1 - 2 * LEGEND_PAD - SWATCH - 6;
    for (int i = 0; i < f->n; i++) {
        const rpt_series *s = &f->s[i];
        if (!s->label || !*s->label)
            continue;
        int seen = 0;
        for (int k = 0; k < pg->n_legend && !seen; k++)
            seen = !strcmp(pg->legend[k].s->label, s->label);
        if (seen)
            continue;
        entry *en = &pg->legend[pg->n_legend++];
        en->s = s;
        en->text = rpt__text_fit(&pg->a, s->label, F_LEGEND, room);
        double w = rpt__text_width(en->text, F_LEGEND);
        if (w > text_w)
            text_w = w;
    }
    pg->lw = pg->n_legend ? 2 * LEGEND_PAD + SWATCH + 6 + text_w : 0;
    wrap_caption(pg, f->caption, pg->W - 2 * EDGE);
    double title_h = f->title ? EDGE + LINE(F_TITLE) + 6 : EDGE;
    double cap_h = pg->n_cap ? pg->n_cap * LINE(F_CAPTION) + 8 : 0;
    double cell_h = rows == 1 ? 370 : 300;
    pg->H = ceil(title_h + rows * cell_h + cap_h + EDGE);
    double gx0 = EDGE, gx1 = pg->W - EDGE - (pg->n_legend ? pg->lw + LEGEND_GAP : 0);
    double cw = (gx1 - gx0) / cols;
    for (int k = 0; k < n_axes && k < f->n_axes; k++) {
        frame *fr = &pg->fr[k];
        fr->bx = gx0 + (k % cols) * cw;
        fr->by = title_h + (double)(k / cols) * cell_h;
        fr->bw = cw;
        fr->bh = cell_h;
        layout_axes(pg, k);
    }
    if (pg->n_legend) {
        pg->lx = pg->W - EDGE - pg->lw;
        pg->ly = f->n_axes ? pg->fr[0].py : title_h;
        pg->row_h = 18;
        double avail = pg->H - cap_h - EDGE - pg->ly;
        if (2 * LEGEND_PAD + pg->n_legend * pg->row_h > avail)
            pg->row_h = LINE(F_LEGEND);
        int fit = (int)((avail - 2 * LEGEND_PAD) / pg->row_h);
        if (fit < pg->n_legend) {
            /* the last row says how many more: the legend never runs off the page */
            pg->legend_more = pg->n_legend - (fit - 1);
            pg->n_legend = fit - 1;
        }
        pg->lh = 2 * LEGEND_PAD + (pg->n_legend + (pg->legend_more > 0)) * pg->row_h;
    }
    return 0;
}

/* ------------------------------------------------------------ drawing */
static void text(page *pg, const char *cls, double x, double y, double px, const char *anchor, const char *fill,
                 const char *s, int rotate)
{
    double w = rpt__text_width(s, px);
    rpt__svg_printf(&pg->g,
                    "<text class=\"%s\" x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\"%s%s%s fill=\"%s\" "
                    "data-w=\"%.2f\"",
                    cls, x, y, px, anchor ? " text-anchor=\"" : "", anchor ? anchor : "", anchor ? "\"" : "", fill, w);
    if (rotate)
        rpt__svg_printf(&pg->g, " transform=\"rotate(-90 %.2f %.2f)\"", x, y);
    rpt__svg_printf(&pg->g, ">");
    rpt__svg_text(&pg->g, s, px);
    rpt__svg_printf(&pg->g, "</text>\n");
}

static double X(const frame *fr, double v)
{
    return fr->px + rpt__scale_pos(&fr->x, v) * fr->pw;
}

static double Y(const frame *fr, double v)
{
    return fr->py + (1 - rpt__scale_pos(&fr->y, v)) * fr->ph;
}

static void stroke_attrs(page *pg, const rpt_series *s, double width)
{
    int dashed = s->dashed || rpt_palette_dashed(s->color);
    rpt__svg_printf(&pg->g, " fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s", rpt_palette(s->color), width,
                    dashed ? " stroke-dasharray=\"6 3\"" : "");
}

static void marker(page *pg, const rpt_series *s, double x, double y)
{
    const char *c = rpt_palette(s->color), *fill = s->hollow ? "#ffffff" : c;
    switch (s->marker) {
    case RPT_MARK_CIRCLE:
        rpt__svg_printf(&pg->g,
                        "<circle class=\"mark\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.8\" fill=\"%s\" stroke=\"%s\" "
                        "stroke-width=\"1.4\"/>\n",
                        x, y, fill, c);
        break;
    case RPT_MARK_SQUARE:
        rpt__svg_printf(&pg->g,
                        "<rect class=\"mark\" x=\"%.2f\" y=\"%.2f\" width=\"7\" height=\"7\" fill=\"%s\" stroke=\"%s\" "
                        "stroke-width=\"1.4\"/>\n",
                        x - 3.5, y - 3.5, fill, c);
        break;
    case RPT_MARK_DIAMOND:
        rpt__svg_printf(
            &pg->g,
            "<path class=\"mark\" d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"%s\" stroke=\"%s\" "
            "stroke-width=\"1.4\"/>\n",
            x, y - 5, x + 5, y, x, y + 5, x - 5, y, fill, c);
        break;
    case RPT_MARK_TRIANGLE:
        rpt__svg_printf(&pg->g,
                        "<path class=\"mark\" d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"%s\" stroke=\"%s\" "
                        "stroke-width=\"1.4\"/>\n",
                        x, y - 4.5, x + 4.5, y + 3.5, x - 4.5, y + 3.5, fill, c);
        break;
    default: break;
    }
}

/* A series' band, line, bars and markers in its axes. */
static void draw_series(page *pg, const frame *fr, const rpt_series *s)
{
    rpt__svg *g = &pg->g;
    if (s->band && s->lo) {
        for (int j = 0; j < s->n;) {
            int k = j;
            while (k < s->n && isfinite(s->x[k]) && isfinite(s->lo[k]) && isfinite(s->hi[k]) &&
                   isfinite(X(fr, s->x[k])) && isfinite(Y(fr, s->lo[k])) && isfinite(Y(fr, s->hi[k])))
                k++;
            if (k - j >= 2) {
                rpt__svg_printf(g, "<path class=\"band\" d=\"");
                for (int m = j; m < k; m++)
                    rpt__svg_printf(g, "%c%.1f %.1f", m == j ? 'M' : 'L', X(fr, s->x[m]), Y(fr, s->hi[m]));
                for (int m = k - 1; m >= j; m--)
                    rpt__svg_printf(g, "L%.1f %.1f", X(fr, s->x[m]), Y(fr, s->lo[m]));
                rpt__svg_printf(g, "Z\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\"/>\n", rpt_palette(s->color),
                                BAND_OPACITY(s->color));
            }
            j = k > j ? k : j + 1;
        }
    }
    if (s->line) {
        int open = 0;
        for (int j = 0; j <= s->n; j++) {
            double x = j < s->n ? X(fr, s->x[j]) : NAN, y = j < s->n ? Y(fr, s->y[j]) : NAN;
            int ok = isfinite(x) && isfinite(y);
            /* a lone point between gaps is drawn by its marker, or not at all */
            if (ok && !open) {
                int next = j + 1 < s->n && isfinite(X(fr, s->x[j + 1])) && isfinite(Y(fr, s->y[j + 1]));
                if (!next)
                    continue;
                rpt__svg_printf(g, "<path class=\"line\" d=\"M%.1f %.1f", x, y);
                open = 1;
            } else if (ok) {
                rpt__svg_printf(g, "L%.1f %.1f", x, y);
            } else if (open) {
                rpt__svg_printf(g, "\"");
                stroke_attrs(pg, s, 1.8);
                rpt__svg_printf(g, " stroke-linejoin=\"round\"/>\n");
                open = 0;
            }
        }
    }
    if (s->bars && s->lo) {
        const char *c = rpt_palette(s->color);
        for (int j = 0; j < s->n; j++) {
            double x = X(fr, s->x[j]), y = Y(fr, s->y[j]);
            if (!isfinite(x) || !isfinite(y) || !isfinite(s->lo[j]) || !isfinite(s->hi[j]))
                continue;
            if (s->bars == RPT_BAR_Y) {
                double a = Y(fr, s->lo[j]), b = Y(fr, s->hi[j]);
                if (isfinite(a) && isfinite(b))
                    rpt__svg_printf(
                        g,
                        "<path class=\"bar\" d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" "
                        "stroke=\"%s\" stroke-width=\"1.3\" fill=\"none\"/>\n",
                        x, a, x, b, x - 3.5, a, x + 3.5, a, x - 3.5, b, x + 3.5, b, c);
            } else {
                double a = X(fr, s->lo[j]), b = X(fr, s->hi[j]);
                if (isfinite(a) && isfinite(b))
                    rpt__svg_printf(
                        g,
                        "<path class=\"bar\" d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" "
                        "stroke=\"%s\" stroke-width=\"1.3\" fill=\"none\"/>\n",
                        a, y, b, y, a, y - 3.5, a, y + 3.5, b, y - 3.5, b, y + 3.5, c);
            }
        }
    }
    if (s->marker)
        for (int j = 0; j < s->n; j++) {
            double x = X(fr, s->x[j]), y = Y(fr, s->y[j]);
            if (isfinite(x) && isfinite(y))
                marker(pg, s, x, y);
        }
}

static void draw_axes(page *pg, int k)
{
    const rpt_figure *f = pg->f;
    const rpt_axes *ax = &f->ax[k];
    frame *fr = &pg->fr[k];
    rpt__svg *g = &pg->g;
    /* grid lines at the ticks, under the data */
    rpt__svg_printf(g, "<g class=\"grid\" stroke=\"%s\" stroke-width=\"1\">\n", GRID);
    for (int i = 0; i < fr->y.n_ticks; i++) {
        double y = fr->py + (1 - rpt__scale_upos(&fr->y, fr->y.tick[i])) * fr->ph;
        rpt__svg_printf(g, "<path d=\"M%.2f %.2fH%.2f\"/>\n", fr->px, y, fr->px + fr->pw);
    }
    for (int i = 0; i < fr->x.n_ticks && !fr->x.cats; i++) {
        double x = fr->px + rpt__scale_upos(&fr->x, fr->x.tick[i]) * fr->pw;
        rpt__svg_printf(g, "<path d=\"M%.2f %.2fV%.2f\"/>\n", x, fr->py, fr->py + fr->ph);
    }
    rpt__svg_printf(g, "</g>\n");
    rpt__svg_printf(g,
                    "<clipPath id=\"clip%d\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/></clipPath>\n",
                    k, fr->px, fr->py, fr->pw, fr->ph);
    rpt__svg_printf(g, "<g class=\"data\" data-axes=\"%d\" clip-path=\"url(#clip%d)\">\n", k, k);
    if (isfinite(ax->yref) && isfinite(Y(fr, ax->yref)))
        rpt__svg_printf(g, "<path class=\"ref\" d=\"M%.2f %.2fH%.2f\" stroke=\"#8c8c8c\" stroke-width=\"1\"/>\n",
                        fr->px, Y(fr, ax->yref), fr->px + fr->pw);
    if (isfinite(ax->xref) && isfinite(X(fr, ax->xref)))
        rpt__svg_printf(g, "<path class=\"ref\" d=\"M%.2f %.2fV%.2f\" stroke=\"#8c8c8c\" stroke-width=\"1\"/>\n",
                        X(fr, ax->xref), fr->py, fr->py + fr->ph);
    /* bands first, under every line; then the rest in series order */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < f->n; i++) {
            const rpt_series *s = &f->s[i];
            if (s->axes != k || s->n == 0)
                continue;
            rpt_series t = *s;
            if (pass == 0) {
                if (!s->band)
                    continue;
                t.line = t.marker = t.bars = 0;
            } else {
                t.band = 0;
            }
            draw_series(pg, fr, &t);
        }
    rpt__svg_printf(g, "</g>\n");
    /* the frame, with the ranges it shows for a checker */
    rpt__svg_printf(g,
                    "<rect class=\"frame\" data-axes=\"%d\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"none\" stroke=\"%s\" stroke-width=\"1\"/>\n",
                    k, fr->px, fr->py, fr->pw, fr->ph, INK);
    /* ticks and their labels */
    rpt__svg_printf(g, "<g class=\"ticks\" stroke=\"%s\" stroke-width=\"1\">\n", INK);
    for (int i = 0; i < fr->y.n_ticks; i++) {
        double y = fr->py + (1 - rpt__scale_upos(&fr->y, fr->y.tick[i])) * fr->ph;
        rpt__svg_printf(g, "<path d=\"M%.2f %.2fH%.2f\"/>\n", fr->px - TICK, y, fr->px);
    }
    for (int i = 0; i < fr->x.n_ticks; i++) {
        double x = fr->px + rpt__scale_upos(&fr->x, fr->x.tick[i]) * fr->pw;
        rpt__svg_printf(g, "<path d=\"M%.2f %.2fV%.2f\"/>\n", x, fr->py + fr->ph, fr->py + fr->ph + TICK);
    }
    rpt__svg_printf(g, "</g>\n");
    for (int i = 0; i < fr->y.n_ticks; i++) {
        double y = fr->py + (1 - rpt__scale_upos(&fr->y, fr->y.tick[i])) * fr->ph;
        const char *t = fr->y.cats ? rpt__text_fit(&pg->a, fr->y.cats[i], F_TICK, 0.4 * fr->bw) : fr->y.label[i];
        text(pg, "tick", fr->px - TICK - 3, y + 0.35 * F_TICK, F_TICK, "end", INK, t, 0);
    }
    double slot = fr->x.n_ticks ? fr->pw / fr->x.n_ticks - 6 : fr->pw;
    for (int i = 0; i < fr->x.n_ticks; i++) {
        double x = fr->px + rpt__scale_upos(&fr->x, fr->x.tick[i]) * fr->pw;
        const char *t = fr->x.cats ? rpt__text_fit(&pg->a, fr->x.cats[i], F_TICK, slot) : fr->x.label[i];
        text(pg, "tick", x, fr->py + fr->ph + TICK + 2 + F_TICK, F_TICK, "middle", INK, t, 0);
    }
    if (ax->xlabel)
        text(pg, "xlabel", fr->px + fr->pw / 2, fr->py + fr->ph + TICK + 3 + LINE(F_TICK) + 3 + F_LABEL, F_LABEL,
             "middle", INK, rpt__text_fit(&pg->a, ax->xlabel, F_LABEL, fr->pw), 0);
    if (ax->ylabel)
        text(pg, "ylabel", fr->ylab_x, fr->py + fr->ph / 2, F_LABEL, "middle", INK,
             rpt__text_fit(&pg->a, ax->ylabel, F_LABEL, fr->ph), 1);
    if (ax->title)
        text(pg, "axes-title", fr->px + fr->pw / 2, fr->py - 7, F_AXTITLE, "middle", INK,
             rpt__text_fit(&pg->a, ax->title, F_AXTITLE, fr->bw - 4), 0);
}

/* A legend row's sample: what its series draws, in little. */
static void swatch(page *pg, const rpt_series *s, double x, double y)
{
    rpt__svg *g = &pg->g;
    double cx = x + SWATCH / 2;
    if (s->band)
        rpt__svg_printf(
            g, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.1f\" height=\"10\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n", x,
            y - 5, SWATCH, rpt_palette(s->color), BAND_OPACITY(s->color));
    if (s->line) {
        rpt__svg_printf(g, "<path d=\"M%.2f %.2fH%.2f\"", x, y, x + SWATCH);
        stroke_attrs(pg, s, 1.8);
        rpt__svg_printf(g, "/>\n");
    }
    if (s->bars == RPT_BAR_Y)
        rpt__svg_printf(g,
                        "<path d=\"M%.2f %.2fV%.2fM%.2f %.2fH%.2fM%.2f %.2fH%.2f\" stroke=\"%s\" stroke-width=\"1.3\" "
                        "fill=\"none\"/>\n",
                        cx, y - 6, y + 6, cx - 3.5, y - 6, cx + 3.5, cx - 3.5, y + 6, cx + 3.5, rpt_palette(s->color));
    else if (s->bars == RPT_BAR_X)
        rpt__svg_printf(g,
                        "<path d=\"M%.2f %.2fH%.2fM%.2f %.2fV%.2fM%.2f %.2fV%.2f\" stroke=\"%s\" stroke-width=\"1.3\" "
                        "fill=\"none\"/>\n",
                        x + 2, y, x + SWATCH - 2, x + 2, y - 3.5, y + 3.5, x + SWATCH - 2, y - 3.5, y + 3.5,
                        rpt_palette(s->color));
    if (s->marker)
        marker(pg, s, cx, y);
}

static void draw_legend(page *pg)
{
    rpt__svg *g = &pg->g;
    rpt__svg_printf(g,
                    "<g class=\"legend\">\n<rect class=\"legend-box\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                    "height=\"%.2f\" fill=\"#ffffff\" stroke=\"#cccccc\" stroke-width=\"1\" rx=\"3\"/>\n",
                    pg->lx, pg->ly, pg->lw, pg->lh);
    for (int i = 0; i < pg->n_legend; i++) {
        double y = pg->ly + LEGEND_PAD + (i + 0.5) * pg->row_h;
        swatch(pg, pg->legend[i].s, pg->lx + LEGEND_PAD, y);
        text(pg, "legend", pg->lx + LEGEND_PAD + SWATCH + 6, y + 0.35 * F_LEGEND, F_LEGEND, NULL, INK,
             pg->legend[i].text, 0);
    }
    if (pg->legend_more) {
        double y = pg->ly + LEGEND_PAD + (pg->n_legend + 0.5) * pg->row_h;
        char more[48];
        snprintf(more, sizeof more, "%d more", pg->legend_more);
        text(pg, "legend", pg->lx + LEGEND_PAD + SWATCH + 6, y + 0.35 * F_LEGEND, F_LEGEND, NULL, SOFT, more, 0);
    }
    rpt__svg_printf(g, "</g>\n");
}

int rpt_plot_svg(const rpt_figure *f, char **svg, size_t *len, tlm_err *e)
{
    page pg;
    memset(&pg, 0, sizeof pg);
    pg.f = f;
    *svg = NULL;
    *len = 0;
    if (layout(&pg)) {
        rpt_arena_clear(&pg.a);
        return tlm_errf(e, TLM_ENOMEM, "out of memory laying out a figure");
    }
    rpt__svg *g = &pg.g;
    rpt__svg_printf(
        g,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
        "font-family=\"%s\" xml:space=\"preserve\" data-tlm-figure=\"1\">\n",
        pg.W, pg.H, pg.W, pg.H, RPT__FONT);
    if (f->title) {
        rpt__svg_printf(g, "<title>");
        rpt__svg_text(g, f->title, F_TITLE);
        rpt__svg_printf(g, "</title>\n");
    }
    rpt__svg_printf(g, "<rect class=\"background\" width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    if (f->title)
        text(&pg, "title", pg.W / 2, EDGE + F_TITLE, F_TITLE, "middle", INK,
             rpt__text_fit(&pg.a, f->title, F_TITLE, pg.W - 2 * EDGE), 0);
    for (int k = 0; k < f->n_axes; k++)
        draw_axes(&pg, k);
    if (pg.n_legend)
        draw_legend(&pg);
    for (int i = 0; i < pg.n_cap; i++)
        text(&pg, "caption", EDGE, pg.H - EDGE - (pg.n_cap - 1 - i) * LINE(F_CAPTION) - 3, F_CAPTION, NULL, SOFT,
             pg.cap_lines[i], 0);
    rpt__svg_printf(g, "</svg>\n");
    int oom = g->oom;
    rpt_arena_clear(&pg.a);
    if (oom) {
        rpt__svg_free(g);
        return tlm_errf(e, TLM_ENOMEM, "out of memory writing a figure");
    }
    *svg = g->buf;
    *len = g->len;
    return 0;
}

int rpt_plot_write(const rpt_figure *f, const char *path, tlm_err *e)
{
    int kind = rpt_image_kind(path);
    if (kind < 0)
        return tlm_errf(e, TLM_ECONFIG, "%s: a figure is written as .svg, .png or .pdf", path);
    int rc = rpt_plot_device_check(kind, e);
    if (rc)
        return rc;
    char *svg;
    size_t len;
    if ((rc = rpt_plot_svg(f, &svg, &len, e)))
        return rc;
    if (kind == RPT_IMG_SVG) {
        rc = tlm_write_file_atomic(path, svg, len, e);
        free(svg);
        return rc;
    }
    /* the converter reads the SVG from a file and writes beside it; the
     * target is then written atomically from what it made */
    const char *dir = getenv("TMPDIR");
    char tmp[TLM_PATH_CAP], out[TLM_PATH_CAP + 8];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/tlm-report-fig-XXXXXX", dir && *dir ? dir : "/tmp") >= sizeof tmp) {
        free(svg);
        return tlm_errf(e, TLM_EIO, "TMPDIR %s: longer than the %d bytes this system allows for a path", dir,
                        TLM_PATH_CAP - 1);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(svg);
        return tlm_errf(e, TLM_EIO, "%s: cannot create a temporary file for the figure", tmp);
    }
    close(fd);
    snprintf(out, sizeof out, "%s.out", tmp);
    rc = tlm_write_file_atomic(tmp, svg, len, e);
    free(svg);
    if (!rc)
        rc = rpt__convert(tmp, out, kind, e);
    unlink(tmp);
    char *data = NULL;
    size_t n = 0;
    if (!rc && !(rc = tlm_read_file(out, MAX_FIG_BYTES, &data, &n, e)) && n < 64)
        rc = tlm_errf(e, TLM_EINTERNAL, "rsvg-convert wrote %zu bytes for %s: no drawing", n, path);
    unlink(out);
    if (!rc)
        rc = tlm_write_file_atomic(path, data, n, e);
    free(data);
    return rc;
}
