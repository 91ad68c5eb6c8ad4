/* plot_text.c: how wide a figure's text is, from DejaVu Sans' advance
 * widths (font_widths.c): the layout reserves exactly the room its labels
 * take, and shortens (with an ellipsis) what would not fit.  A viewer that
 * substitutes another font draws text a few percent wider or narrower; the
 * layout leaves that much slack.
 * Must not: allocate outside the arena it is given. */
#include <string.h>

#include "common/utf8.h"
#include "reports/plot_internal.h"

/* A character's advance in 1/1000 em; an average one for code points the
 * table lacks. */
static int advance(unsigned cp)
{
    int lo = 0, hi = rpt__n_font_widths - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (rpt__font_widths[mid].cp == cp)
            return rpt__font_widths[mid].w;
        if (rpt__font_widths[mid].cp < cp)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 640;
}

double rpt__text_width(const char *s, double px)
{
    double w = 0, scale = 1;
    size_t n = s ? strlen(s) : 0;
    for (size_t at = 0; at < n;) {
        uint32_t cp;
        size_t k = tlm_utf8_next(s + at, n - at, &cp);
        at += k;
        if (cp == 1 || cp == 2) { /* RPT_SUB */
            scale = cp == 1 ? RPT__SUB_SCALE : 1;
            continue;
        }
        if (cp < 0x20)
            continue;
        w += advance(cp) * scale;
    }
    return w * px / 1000.0;
}

const char *rpt__text_fit(rpt_arena *a, const char *s, double px, double w)
{
    if (!s || rpt__text_width(s, px) <= w)
        return s;
    static const char ELLIPSIS[] = "\xe2\x80\xa6";
    double room = w - rpt__text_width(ELLIPSIS, px);
    size_t n = strlen(s), keep = 0;
    double used = 0;
    int sub = 0;
    for (size_t at = 0; at < n;) {
        uint32_t cp;
        size_t k = tlm_utf8_next(s + at, n - at, &cp);
        if (cp == 1 || cp == 2)
            sub = cp == 1;
        else if (cp >= 0x20)
            used += advance(cp) * (sub ? RPT__SUB_SCALE : 1) * px / 1000.0;
        if (used > room)
            break;
        at += k;
        keep = at;
    }
    /* trailing spaces before the ellipsis read badly */
    while (keep > 0 && s[keep - 1] == ' ')
        keep--;
    return rpt_printf(a, "%.*s%s%s", (int)keep, s, sub ? "\x02" : "", ELLIPSIS);
}
