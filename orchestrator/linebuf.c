/* linebuf.c: bounded line framing for event streams (see linebuf.h). */
#include "orchestrator/linebuf.h"

#include <stdlib.h>
#include <string.h>

#include "orchestrator/event.h"

int orc_linebuf_feed(orc_linebuf *lb, const char *data, size_t n, const orc_line_sink *sink)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t chunk = nl ? (size_t)(nl - data) : n;
        if (lb->skipping) {
            /* inside an over-long line: drop until its end */
        } else if (lb->len == 0 && nl && chunk <= ORC_EVENT_MAX) {
            sink->line(sink->ctx, data, chunk); /* whole line in this read */
        } else if (lb->len + chunk > ORC_EVENT_MAX) {
            lb->len = 0;
            lb->skipping = 1;
            sink->too_long(sink->ctx);
        } else {
            if (!lb->buf && !(lb->buf = malloc(ORC_EVENT_MAX + 1)))
                return -1;
            memcpy(lb->buf + lb->len, data, chunk);
            lb->len += chunk;
            if (nl) {
                sink->line(sink->ctx, lb->buf, lb->len);
                lb->len = 0;
            }
        }
        if (!nl)
            break;
        lb->skipping = 0;
        data = nl + 1;
        n -= chunk + 1;
    }
    return 0;
}

int orc_linebuf_finish(orc_linebuf *lb)
{
    int partial = lb->len > 0; /* an over-long line was reported already */
    lb->len = 0;
    lb->skipping = 0;
    return partial;
}

void orc_linebuf_clear(orc_linebuf *lb)
{
    free(lb->buf);
    lb->buf = NULL;
    lb->len = 0;
}
