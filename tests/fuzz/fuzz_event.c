/* fuzz_event.c: libFuzzer target for what tlmd reads from a worker: the
 * bytes of an events pipe, cut into reads of fuzzer-chosen sizes, framed
 * into lines (linebuf.c) and checked (event.c, jsonline.c).  Any crash,
 * sanitizer report or over-read is a bug; refusals are the expected
 * outcome for most inputs.  Built by tests/fuzz/run.sh (clang
 * -fsanitize=fuzzer,address,undefined); replay.c runs the corpus in
 * `make check`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "orchestrator/event.h"
#include "orchestrator/linebuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static orc_event_parser parser;

static void on_line(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    orc_event ev;
    char why[256];
    if (orc_event_parse(&parser, s, n, &ev, why, sizeof why) == 0) {
        /* touch what the daemon would use */
        volatile size_t sink = strlen(orc_ev_name(ev.kind));
        if (ev.job)
            sink += strlen(ev.job);
        if (ev.kind == ORC_EV_START)
            sink += strlen(ev.config_id) + (ev.argv ? strlen(ev.argv) : 0);
        (void)sink;
    } else {
        volatile size_t sink = strlen(why);
        (void)sink;
    }
}

static void on_long(void *ctx) { (void)ctx; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the whole input as one line, as the parser is called on in-place lines */
    on_line(NULL, (const char *)data, size);
    /* and as a stream read in chunks whose sizes come from the input itself */
    orc_linebuf lb = {0};
    orc_line_sink sink = {on_line, on_long, NULL};
    size_t at = 0, k = 0;
    while (at < size) {
        size_t chunk = 1 + (size_t)data[k++ % size] * 7;
        if (chunk > size - at)
            chunk = size - at;
        orc_linebuf_feed(&lb, (const char *)data + at, chunk, &sink);
        at += chunk;
    }
    orc_linebuf_finish(&lb);
    orc_linebuf_clear(&lb);
    return 0;
}
