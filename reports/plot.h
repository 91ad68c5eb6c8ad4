/* plot.h: tlm-report's figures.  A figure is one or more axes (facets)
 * holding series (lines, shaded bands, markers with error bars) and a
 * caption that says what the marks mean; a fig_*.c file builds it from
 * results.db, plot.c lays it out in one style for the whole report and
 * writes it as SVG with real text (plot_svg.c), then as PNG or PDF through
 * rsvg-convert (plot_convert.c).
 * The style: axes fitted to the data with a margin (points never on the
 * frame), a legend beside the plots at most a fifth of the width, the
 * Okabe-Ito colour-blind-safe palette with one colour per configuration
 * (rpt_config_colors), seeds as a mean with a band or bar whose meaning
 * the caption states.
 * Must not: print, or run anything but the converter (argv, never a shell). */
#ifndef TLM_REPORTS_PLOT_H
#define TLM_REPORTS_PLOT_H

#include "reports/rpt.h"

/* Subscript markup for axis labels and facet titles: "d" RPT_SUB("ff").
 * Text from results.db never holds these bytes (plot_svg.c drops control
 * characters from it). */
#define RPT_SUB(s) "\x01" s "\x02"

enum { RPT_MARK_NONE = 0, RPT_MARK_CIRCLE, RPT_MARK_SQUARE, RPT_MARK_DIAMOND, RPT_MARK_TRIANGLE };
enum { RPT_BAR_NONE = 0, RPT_BAR_Y, RPT_BAR_X }; /* error bars: vertical (lo/hi in y) or horizontal (in x) */

typedef struct rpt_series {
    const char *label; /* legend entry (series of one label share it); NULL: none */
    double *x, *y;     /* n points; a NaN breaks the line */
    double *lo, *hi;   /* NULL, or per point the ends of the band or error bar (NaN: none there) */
    int n;
    int axes;  /* index into rpt_figure.ax */
    int color; /* palette index (rpt_palette): 0 black, the reference; 1.. the colours */
    int line;  /* points joined */
    int dashed;
    int marker; /* RPT_MARK_* */
    int hollow; /* marker drawn open */
    int band;   /* lo/hi shaded between (else error bars along `bars`) */
    int bars;   /* RPT_BAR_*: lo/hi as error bars */
} rpt_series;

#define RPT_MAX_AXES 8
typedef struct rpt_axes {
    const char *title;           /* above the plot */
    const char *xlabel, *ylabel; /* may hold RPT_SUB */
    int logx, logy;
    double xlo_hint, ylo_hint;   /* NaN, or a value the range must reach (0 for widths) */
    double xref, yref;           /* NaN, or a grey reference line (0 for differences) */
    const char **xcats, **ycats; /* NULL, or category names at x = 1..n (left to right) / y = 1..n (top down) */
    int n_xcats, n_ycats;
    int xint; /* x ticks on integers only (layers) */
} rpt_axes;

typedef struct rpt_figure {
    const char *title;
    const char *caption; /* what lines, bands, bars and markers mean: under the plots, and in report.md */
    rpt_axes ax[RPT_MAX_AXES];
    int n_axes;
    int cols; /* axes per row; 0: up to 2 (3 for three) */
    int sharex; /* every axes spans the x range of all: panels of one quantity read against each other */
    rpt_series *s;
    int n, cap;
    const char *note; /* why it is empty, or what it leaves out (stderr) */
    rpt_arena a;
} rpt_figure;

void rpt_figure_init(rpt_figure *f);
void rpt_figure_clear(rpt_figure *f);
/* New axes (NaN hints and references); NULL past RPT_MAX_AXES. */
rpt_axes *rpt_figure_axes(rpt_figure *f, const char *title);
/* A series of axes `axes` with room for n points (arena-owned; lo/hi when
 * with_range), or, for n 0, a legend entry alone; NULL when out of memory. */
rpt_series *rpt_figure_series(rpt_figure *f, const char *label, int axes, int n, int with_range);
/* Points drawn (finite ones) over every series. */
int rpt_figure_points(const rpt_figure *f);

/* The palette: "#rrggbb" of index i (0 black, then the seven Okabe-Ito
 * colours; past them the colours again, dashed: rpt_palette_dashed). */
const char *rpt_palette(int i);
int rpt_palette_dashed(int i);
/* A colour per configuration (schedule, ratios, groups), the same in every
 * figure of one context: uniform 0, then the taper, the blocks, the rest.
 * *colors[g] for every group g (malloc'd, caller frees). */
int rpt_config_colors(const rpt_ctx *c, int **colors, tlm_err *e);
/* A panel's groups in the order of their colours (uniform, the taper, the
 * blocks early to late, the rest): the order of every legend.  out holds
 * pg->n_groups group indices. */
void rpt_figure_order(const rpt_pgroup *pg, const int *colors, int *out);

enum { RPT_IMG_SVG = 0, RPT_IMG_PNG = 1, RPT_IMG_PDF = 2 };
/* ".svg" | ".png" | ".pdf" from the file name; -1 otherwise. */
int rpt_image_kind(const char *path);
/* Whether a kind can be written here: SVG always, PNG and PDF with
 * rsvg-convert; fills e (what to install) when not. */
int rpt_plot_device_check(int kind, tlm_err *e);
/* Lays f out and writes it into path (SVG, PNG or PDF by its extension),
 * atomically. */
int rpt_plot_write(const rpt_figure *f, const char *path, tlm_err *e);
/* The SVG text of f (malloc'd, caller frees). */
int rpt_plot_svg(const rpt_figure *f, char **svg, size_t *len, tlm_err *e);

typedef struct rpt_figure_def {
    const char *name;
    const char *what;
    int (*build)(rpt_ctx *c, rpt_figure *f, tlm_err *e);
    unsigned uses; /* RPT_USES_* (rpt.h) */
} rpt_figure_def;

extern const rpt_figure_def rpt_figure_defs[];
extern const int rpt_n_figure_defs;
const rpt_figure_def *rpt_figure_find(const char *name);

/* A figure's start: its title, then the panels with the most groups that
 * counts accepts, in panel order, at most max: their indices into out,
 * their number returned.  0: none, and the figure stays empty with the
 * note `none` saying why. */
int rpt_figure_begin(rpt_figure *f, const char *title, const char *none, const rpt_ctx *c,
                     int (*counts)(const rpt_ctx *c, const rpt_group *g), int max, int *out);
/* Whether a group has a finished job (a value to draw, likely). */
int rpt_group_done(const rpt_ctx *c, const rpt_group *g);
/* "what: Arch, scale, N tokens[, variant]" of a panel (arena-owned by f). */
const char *rpt_figure_panel_title(rpt_figure *f, const char *what, const rpt_pgroup *pg);
/* A configuration's label for a figure: "cosine 1.5->0.5" as "cosine 1.5→0.5" (arena-owned by f). */
const char *rpt_figure_label(rpt_figure *f, const char *label);

int rpt_fig_loss(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_dff(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_rho(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_wider(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_ppl_ratio(rpt_ctx *c, rpt_figure *f, tlm_err *e);
int rpt_fig_delta(rpt_ctx *c, rpt_figure *f, tlm_err *e);

#endif
