/* linebuf.h: splits a byte stream (a worker's events pipe) into lines of at
 * most ORC_EVENT_MAX bytes.  Lines that arrive whole inside one read are
 * handed over in place; only a line split across reads is copied.  A line
 * longer than the limit is reported once and skipped up to its newline.
 * Must not: grow past ORC_EVENT_MAX + 1 bytes, whatever the input. */
#ifndef TLM_ORC_LINEBUF_H
#define TLM_ORC_LINEBUF_H

#include <stddef.h>

typedef struct orc_linebuf {
    char *buf;      /* ORC_EVENT_MAX + 1 bytes, allocated on first need */
    size_t len;     /* bytes of a partial line held */
    int skipping;   /* inside an over-long line */
} orc_linebuf;

typedef struct orc_line_sink {
    void (*line)(void *ctx, const char *s, size_t n);  /* without the newline */
    void (*too_long)(void *ctx);                      /* once per over-long line */
    void *ctx;
} orc_line_sink;

/* Returns 0, or -1 if out of memory. */
int orc_linebuf_feed(orc_linebuf *lb, const char *data, size_t n, const orc_line_sink *sink);
/* End of stream: 1 if an unterminated partial line was dropped, else 0. */
int orc_linebuf_finish(orc_linebuf *lb);
void orc_linebuf_clear(orc_linebuf *lb);

#endif
