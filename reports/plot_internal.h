/* plot_internal.h: what the plotting files share (plot.c lays out,
 * plot_axis.c fits ranges and ticks, plot_text.c measures text,
 * plot_svg.c writes SVG, plot_convert.c makes PNG and PDF of it).
 * Not for the figure builders: they see plot.h only. */
#ifndef TLM_REPORTS_PLOT_INTERNAL_H
#define TLM_REPORTS_PLOT_INTERNAL_H

#include <stddef.h>

#include "reports/plot.h"

/* ------------------------------------------------------------ text */
typedef struct {
    unsigned cp;
    unsigned short w; /* advance, 1/1000 em */
} rpt__glyph_width;
extern const rpt__glyph_width rpt__font_widths[];
extern const int rpt__n_font_widths;

/* The font every figure names first (its widths are font_widths.c's). */
#define RPT__FONT "DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif"
/* Subscripts are this much of the size, and sit this much of it lower. */
#define RPT__SUB_SCALE 0.72
#define RPT__SUB_DROP 0.25

/* Width in px of UTF-8 text s at font size px (RPT_SUB markup measured at
 * its smaller size). */
double rpt__text_width(const char *s, double px);
/* The longest prefix of s (whole UTF-8 characters) that with an ellipsis
 * fits in w px: the prefix + "…", arena-owned; s itself when it fits. */
const char *rpt__text_fit(rpt_arena *a, const char *s, double px, double w);

/* ------------------------------------------------------------ scales */
/* One axis fitted to its data: the visible range [lo, hi] (in log10 units
 * when log), and its ticks with their labels. */
#define RPT__MAX_TICKS 24
typedef struct {
    double lo, hi; /* in axis units (log10 of the value when log) */
    int log;
    int inverted; /* categories top down */
    int n_ticks;
    double tick[RPT__MAX_TICKS]; /* axis units */
    char label[RPT__MAX_TICKS][24];
    const char **cats; /* categories: the tick labels (label[] unused) */
} rpt__scale;

/* Fits a scale to data in [dmin, dmax] (values, not logs; NaN when none)
 * over len px: a margin of 5% each side, nice ticks about every min_gap
 * px.  hint (NaN: none) is a value the range must reach; when hint is 0
 * and all data are positive the range starts at 0 exactly. */
void rpt__scale_fit(rpt__scale *s, double dmin, double dmax, int log, double hint, double len, double min_gap,
                    int integer);
/* Categories 1..n: range [0.5, n + 0.5], a tick on each. */
void rpt__scale_cats(rpt__scale *s, int n, const char **names, int inverted);
/* A value's position in [0, 1] along the scale (NaN when a log scale
 * gets v <= 0); rpt__scale_upos for a position in axis units (a tick). */
double rpt__scale_pos(const rpt__scale *s, double v);
double rpt__scale_upos(const rpt__scale *s, double u);

/* ------------------------------------------------------------ SVG */
typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} rpt__svg;

void rpt__svg_printf(rpt__svg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text content escaped for XML: markup as tspans, control characters and
 * invalid UTF-8 dropped. */
void rpt__svg_text(rpt__svg *g, const char *s, double px);
void rpt__svg_free(rpt__svg *g);

/* ------------------------------------------------------------ conversion */
/* Converts the SVG file svg_path into out_path as PNG (at 2x) or PDF. */
int rpt__convert(const char *svg_path, const char *out_path, int kind, tlm_err *e);
/* The converter's path (PATH search), NULL when not installed. */
const char *rpt__converter(char *buf, size_t cap);

#endif
