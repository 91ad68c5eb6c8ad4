/* plot_svg.c: the SVG text a figure becomes: a growable buffer written
 * with printf, and text content escaped for XML, with the subscript markup
 * of plot.h as tspans.  Text stays text (a <text> element with the font
 * named), so a figure is searchable, editable and a few kilobytes.
 * Must not: write invalid XML, whatever results.db holds (control
 * characters and invalid UTF-8 are dropped). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "reports/plot_internal.h"

static int grow(rpt__svg *g, size_t more)
{
    if (g->oom)
        return -1;
    if (g->len + more + 1 <= g->cap)
        return 0;
    size_t cap = g->cap ? g->cap : 16384;
    while (cap < g->len + more + 1)
        cap *= 2;
    char *b = realloc(g->buf, cap);
    if (!b) {
        g->oom = 1;
        return -1;
    }
    g->buf = b;
    g->cap = cap;
    return 0;
}

void rpt__svg_printf(rpt__svg *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || grow(g, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(g->buf + g->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    g->len += (size_t)n;
}

static void put(rpt__svg *g, const char *s, size_t n)
{
    if (grow(g, n))
        return;
    memcpy(g->buf + g->len, s, n);
    g->len += n;
    g->buf[g->len] = '\0';
}

void rpt__svg_text(rpt__svg *g, const char *s, double px)
{
    size_t n = s ? strlen(s) : 0;
    double drop = RPT__SUB_DROP * px;
    int sub = 0, open = 0;
    for (size_t at = 0; at < n;) {
        size_t bad, k = tlm_utf8_seq((const uint8_t *)s + at, n - at, &bad);
        if (!k) {
            at += bad;
            continue;
        }
        unsigned char ch = (unsigned char)s[at];
        if (ch == 1 && !sub) {
            if (open)
                put(g, "</tspan>", 8);
            rpt__svg_printf(g, "<tspan dy=\"%.2f\" font-size=\"%.2f\">", drop, px * RPT__SUB_SCALE);
            sub = open = 1;
        } else if (ch == 2 && sub) {
            put(g, "</tspan>", 8);
            rpt__svg_printf(g, "<tspan dy=\"%.2f\">", -drop);
            sub = 0;
        } else if (k == 1 && ch < 0x20) {
            /* control characters: none in XML 1.0 text */
        } else if (ch == '&') {
            put(g, "&amp;", 5);
        } else if (ch == '<') {
            put(g, "&lt;", 4);
        } else if (ch == '>') {
            put(g, "&gt;", 4);
        } else {
            put(g, s + at, k);
        }
        at += k;
    }
    if (open)
        put(g, "</tspan>", 8);
}

void rpt__svg_free(rpt__svg *g)
{
    free(g->buf);
    memset(g, 0, sizeof *g);
}
