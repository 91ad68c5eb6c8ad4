/* test_tlmd_events.c: what tlmd trusts from a worker.  Real event lines
 * (tests/fuzz/corpus/event/, taken from tlm-worker) parse into the right
 * fields; "nan"/"inf" strings become non-finite numbers; a catalogue of
 * broken lines is refused with its reason; the line framer splits lines
 * across reads and drops over-long ones without growing; exit statuses are
 * classified per docs/protocol.md. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/classify.h"
#include "orchestrator/event.h"
#include "orchestrator/linebuf.h"
#include "tests/lib/tap.h"

static orc_event_parser P;

static int parse(const char *line, orc_event *ev, char *why)
{
    return orc_event_parse(&P, line, strlen(line), ev, why, 256);
}

static char *slurp_line(const char *path)
{
    static char buf[70000];
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    return buf;
}

static void test_real_lines(const char *src)
{
    static const char *const files[] = {"start", "step", "eval", "layer", "ckpt", "done", "error", "stopped",
                                        "heartbeat"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024], why[256] = "";
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/event/%s.json", src, files[i]);
        char *line = slurp_line(path);
        orc_event ev;
        int rc = line ? parse(line, &ev, why) : -1;
        TAP_OK(rc == 0 && !strcmp(orc_ev_name(ev.kind), files[i]), "%s event parses (%s)", files[i], why);
        if (rc)
            continue;
        switch (ev.kind) {
        case ORC_EV_START:
            TAP_OK(strlen(ev.config_id) == 64 && ev.resumed_from_step == -1 && ev.total_tokens == 49152 &&
                       ev.threads == 1 && ev.argv && ev.argv[0] == '[' && !strcmp(ev.blas, "OpenBLAS 0.3.21"),
                   "start: config_id, null resume, totals, BLAS, argv as JSON");
            break;
        case ORC_EV_STEP:
            TAP_OK(ev.step == 1 && ev.tokens == 1024 && fabs(ev.loss - 5.496421885211021) < 1e-15,
                   "step: step, tokens, loss exact");
            break;
        case ORC_EV_EVAL:
            TAP_OK(!strcmp(ev.suite, "val") && !strcmp(ev.metric, "loss") && ev.n == 2048 && ev.stderr_ > 0,
                   "eval: suite, metric, n, stderr");
            break;
        case ORC_EV_LAYER:
            TAP_OK(ev.layer == 0 && !strcmp(ev.name, "d_ff") && ev.value == 192, "layer: d_ff of layer 0");
            break;
        case ORC_EV_STOPPED:
            TAP_OK(ev.signal == SIGTERM && ev.path && ev.step == 53, "stopped: signal by name, checkpoint");
            break;
        case ORC_EV_ERROR:
            TAP_OK(!strcmp(ev.error_kind, "diverged") && strstr(ev.message, "nan"), "error: kind and message");
            break;
        default:
            break;
        }
    }
    orc_event ev;
    char why[256] = "";
    int rc = parse("{\"ev\":\"step\",\"v\":1,\"t\":1.5,\"step\":3,\"tokens\":30,\"loss\":\"nan\",\"lr\":\"inf\","
                   "\"grad_norm\":\"-inf\",\"tokens_per_s\":1e5,\"step_ms\":2.5}",
                   &ev, why);
    TAP_OK(rc == 0 && isnan(ev.loss) && ev.lr == INFINITY && ev.grad_norm == -INFINITY,
           "non-finite numbers as strings (%s)", why);
    rc = parse("{\"ev\":\"eval\",\"v\":1,\"t\":1,\"step\":1,\"tokens\":1,\"suite\":\"val\",\"task\":\"t\\u00e9\\ud83d\\ude00\","
               "\"metric\":\"acc\",\"value\":0.5,\"n\":null,\"stderr\":null}",
               &ev, why);
    TAP_OK(rc == 0 && !strcmp(ev.task, "t\xc3\xa9\xf0\x9f\x98\x80") && ev.n == -1 && isnan(ev.stderr_),
           "escapes and surrogate pairs decode to UTF-8; nulls are unknowns (%s)", why);
    rc = parse("  {\"ev\":\"heartbeat\",\"v\":1,\"t\":2,\"step\":0,\"tokens\":0,\"phase\":\"train\",\"extra\":[1,{\"a\":[]}]}\r",
               &ev, why);
    TAP_OK(rc == 0, "unknown fields (even nested) are ignored; \\r and spaces tolerated (%s)", why);
    TAP_OK(rc == 0 && ev.progress == -1, "a heartbeat without 'progress' (an older worker) parses; progress unknown");
    rc = parse("{\"ev\":\"heartbeat\",\"v\":1,\"t\":2,\"step\":0,\"tokens\":0,\"phase\":\"setup\",\"progress\":17}", &ev,
               why);
    TAP_OK(rc == 0 && !strcmp(ev.phase, "setup") && ev.progress == 17, "a set-up heartbeat with its progress counter (%s)",
           why);
}

static void test_refused(void)
{
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"", "expected a JSON object"},
        {"not json", "expected a JSON object"},
        {"[1,2]", "expected a JSON object"},
        {"{\"ev\":\"step\"", "unterminated object"},
        {"{\"ev\":\"step\",\"v\":1} x", "trailing bytes"},
        {"{\"v\":1,\"t\":1}", "missing 'ev'"},
        {"{\"ev\":\"launch\",\"v\":1,\"t\":1}", "unknown event 'launch'"},
        {"{\"ev\":\"heartbeat\",\"t\":1,\"step\":1,\"tokens\":1,\"phase\":\"train\"}", "missing protocol version"},
        {"{\"ev\":\"heartbeat\",\"v\":2,\"t\":1,\"step\":1,\"tokens\":1,\"phase\":\"train\"}", "protocol version must be 1"},
        {"{\"ev\":\"heartbeat\",\"v\":1,\"step\":1,\"tokens\":1,\"phase\":\"train\"}", "missing 't'"},
        {"{\"ev\":\"heartbeat\",\"v\":1,\"t\":\"nan\",\"step\":1,\"tokens\":1,\"phase\":\"train\"}", "'t' must be a finite"},
        {"{\"ev\":\"heartbeat\",\"v\":1,\"t\":1,\"step\":1,\"tokens\":1,\"phase\":\"nap\"}", "unknown value 'nap'"},
        {"{\"ev\":\"heartbeat\",\"v\":1,\"t\":1,\"step\":1,\"tokens\":1,\"phase\":\"train\",\"progress\":-2}",
         "'progress' must be a non-negative integer"},
        {"{\"ev\":\"step\",\"v\":1,\"t\":1,\"step\":1,\"tokens\":1,\"loss\":1,\"lr\":1,\"grad_norm\":1,\"tokens_per_s\":1}",
         "missing 'step_ms'"},
        {"{\"ev\":\"step\",\"v\":1,\"t\":1,\"step\":-1,\"tokens\":1}", "'step' must be a non-negative integer"},
        {"{\"ev\":\"step\",\"v\":1,\"t\":1,\"step\":1.5,\"tokens\":1}", "'step' must be a non-negative integer"},
        {"{\"ev\":\"step\",\"v\":1,\"t\":1,\"step\":1,\"tokens\":1,\"loss\":\"NaN?\",\"lr\":1,\"grad_norm\":1,"
         "\"tokens_per_s\":1,\"step_ms\":1}",
         "'loss' must be a number"},
        {"{\"ev\":\"step\",\"v\":1,\"t\":1,\"step\":1,\"step\":2}", "duplicate key 'step'"},
        {"{\"ev\":\"start\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"config_id\":\"abc\"}", "64 lowercase hex"},
        {"{\"ev\":\"error\",\"v\":1,\"t\":1,\"kind\":\"bored\",\"message\":\"x\"}", "unknown value 'bored'"},
        {"{\"ev\":\"layer\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"layer\":0,\"name\":\"\",\"value\":1}", "empty 'name'"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":5}", "'path' must be a string"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":\"a\\u0000b\"}", "\\u0000"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":\"\\ud800\"}", "lone high surrogate"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":\"\xff\"}", "invalid UTF-8"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":\"\xc0\xaf\"}", "invalid UTF-8"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":1,\"step\":0,\"tokens\":0,\"path\":\"a\tb\"}", "control character"},
        {"{\"ev\":\"ckpt\",\"v\":1,\"t\":01,\"step\":0}", "expected ',' or '}'"},
        {"{\"ev\":\"x\",\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", "nested deeper"},
        {"{\"ev\":\"x\",\"a\":tru}", "unexpected character"},
        {"{'ev':1}", "expected a key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orc_event ev;
        char why[256] = "";
        int rc = parse(bad[i].line, &ev, why);
        TAP_OK(rc != 0 && strstr(why, bad[i].why), "refused: %.50s -> %s", bad[i].line, why);
    }
    /* a line over 64 KiB is refused without being parsed */
    size_t big = ORC_EVENT_MAX + 10;
    char *line = malloc(big + 1);
    memset(line, ' ', big);
    line[0] = '{';
    line[big - 1] = '}';
    line[big] = '\0';
    orc_event ev;
    char why[256];
    TAP_OK(orc_event_parse(&P, line, big, &ev, why, sizeof why) != 0 && strstr(why, "longer than"),
           "over-long line refused: %s", why);
    free(line);
}

typedef struct {
    char lines[8][64];
    int n, too_long;
} sink_state;

static void on_line(void *ctx, const char *s, size_t n)
{
    sink_state *st = ctx;
    if (st->n < 8)
        snprintf(st->lines[st->n], 64, "%.*s", (int)(n < 63 ? n : 63), s);
    st->n++;
}

static void on_long(void *ctx) { ((sink_state *)ctx)->too_long++; }

static void test_linebuf(void)
{
    sink_state st = {0};
    orc_line_sink sink = {on_line, on_long, &st};
    orc_linebuf lb = {0};
    const char *chunks[] = {"ab", "c\nde", "f\n\nxyz", "\n", "tail"};
    for (size_t i = 0; i < 5; i++)
        orc_linebuf_feed(&lb, chunks[i], strlen(chunks[i]), &sink);
    TAP_OK(st.n == 4 && !strcmp(st.lines[0], "abc") && !strcmp(st.lines[1], "def") && !strcmp(st.lines[2], "") &&
               !strcmp(st.lines[3], "xyz"),
           "lines split across reads are joined (%d lines)", st.n);
    TAP_OK(orc_linebuf_finish(&lb) == 1, "an unterminated last line is reported");

    /* an over-long line fed in pieces: reported once, skipped, and the next line is intact */
    memset(&st, 0, sizeof st);
    char *piece = malloc(10000);
    memset(piece, 'x', 10000);
    for (int i = 0; i < 10; i++)
        orc_linebuf_feed(&lb, piece, 10000, &sink);
    orc_linebuf_feed(&lb, "\nok\n", 4, &sink);
    TAP_OK(st.too_long == 1 && st.n == 1 && !strcmp(st.lines[0], "ok"),
           "a 100 KB line is dropped once, the next line survives");
    /* the same in one read */
    memset(&st, 0, sizeof st);
    char *one = malloc(ORC_EVENT_MAX + 5);
    memset(one, 'y', ORC_EVENT_MAX + 3);
    one[ORC_EVENT_MAX + 3] = '\n';
    one[ORC_EVENT_MAX + 4] = 'z';
    orc_linebuf_feed(&lb, one, ORC_EVENT_MAX + 5, &sink);
    orc_linebuf_feed(&lb, "\n", 1, &sink);
    TAP_OK(st.too_long == 1 && st.n == 1 && !strcmp(st.lines[0], "z"), "over-long line within one read");
    /* exactly the limit is accepted */
    memset(&st, 0, sizeof st);
    memset(one, 'w', ORC_EVENT_MAX);
    one[ORC_EVENT_MAX] = '\n';
    orc_linebuf_feed(&lb, one, 10, &sink);
    orc_linebuf_feed(&lb, one + 10, ORC_EVENT_MAX + 1 - 10, &sink);
    TAP_OK(st.too_long == 0 && st.n == 1, "a line of exactly 64 KiB passes");
    free(one);
    free(piece);
    orc_linebuf_free(&lb);
}

static void test_classify(void)
{
    static const struct {
        orc_exit x;
        const char *reason;
        int next;
    } cases[] = {
        {{1, 0, 0, ORC_KILL_NONE, 1, NULL}, "done", ORC_NEXT_DONE},
        {{1, 0, 0, ORC_KILL_NONE, 0, NULL}, "protocol", ORC_NEXT_RETRY},
        {{1, 1, 0, ORC_KILL_NONE, 0, "internal"}, "internal", ORC_NEXT_RETRY},
        {{1, 2, 0, ORC_KILL_NONE, 0, "config"}, "config", ORC_NEXT_FAIL},
        {{1, 3, 0, ORC_KILL_NONE, 0, "data"}, "data", ORC_NEXT_FAIL},
        {{1, 4, 0, ORC_KILL_NONE, 0, "diverged"}, "diverged", ORC_NEXT_FAIL},
        {{1, 5, 0, ORC_KILL_NONE, 0, "oom"}, "oom", ORC_NEXT_RETRY},
        {{1, 6, 0, ORC_KILL_NONE, 0, "io"}, "io", ORC_NEXT_RETRY},
        {{1, 75, 0, ORC_KILL_SHUTDOWN, 0, NULL}, "interrupted", ORC_NEXT_INTERRUPTED},
        {{1, 75, 0, ORC_KILL_NONE, 0, NULL}, "interrupted", ORC_NEXT_RETRY},
        {{1, 75, 0, ORC_KILL_TIMEOUT, 0, NULL}, "timeout", ORC_NEXT_RETRY},
        {{0, 0, SIGKILL, ORC_KILL_TIMEOUT, 0, NULL}, "timeout", ORC_NEXT_RETRY},
        {{0, 0, SIGSEGV, ORC_KILL_NONE, 0, NULL}, "crash", ORC_NEXT_RETRY},
        {{0, 0, SIGKILL, ORC_KILL_SHUTDOWN, 0, NULL}, "interrupted", ORC_NEXT_INTERRUPTED},
        {{1, 0, 0, ORC_KILL_PROTOCOL, 1, NULL}, "protocol", ORC_NEXT_FAIL},
        {{1, 42, 0, ORC_KILL_NONE, 0, NULL}, "internal", ORC_NEXT_RETRY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orc_outcome o;
        orc_classify(&cases[i].x, &o);
        TAP_OK(!strcmp(o.reason, cases[i].reason) && o.next == cases[i].next,
               "exit %d signal %d kill %d -> %s (%s)", cases[i].x.status, cases[i].x.signal, cases[i].x.kill_reason,
               o.reason, o.message);
    }
}

int main(void)
{
    const char *src = getenv("TLM_SRCDIR") ? getenv("TLM_SRCDIR") : "..";
    test_real_lines(src);
    test_refused();
    test_linebuf();
    test_classify();
    return tap_done();
}
