/* test_events.c: what tlmd trusts from a worker.  Real event lines
 * (tests/fuzz/corpus/event/, taken from tlm-worker) parse into the right
 * fields; "nan"/"inf" strings become non-finite numbers; a catalogue of
 * broken lines is refused with its reason; the line framer splits lines
 * across reads and drops over-long ones without growing; exit statuses are
 * classified per docs/protocol.md; the failure table (common/failure.h)
 * holds the mapping it replaced, and the docs' tables agree with it. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/classify.h"
#include "orchestrator/event.h"
#include "orchestrator/linebuf.h"
#include "orchestrator/exits.h"
#include "orchestrator/plan.h"
#include "tests/lib/db_util.h"
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
    /* one real line of every event of the protocol (common/protocol.h) */
    for (int i = 0; i < TLM_EV_COUNT; i++) {
        const char *name = tlm_event_name(i);
        char path[1024], why[256] = "";
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/event/%s.json", src, name);
        char *line = slurp_line(path);
        orc_event ev;
        int rc = line ? parse(line, &ev, why) : -1;
        TAP_OK(rc == 0 && !strcmp(orc_ev_name(ev.kind), name), "%s event parses (%s)", name, why);
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
    orc_linebuf_clear(&lb);
}


/* ------------------------------------------------------------ failure table */
/* The mapping as it was before common/failure.h held it (common/err.c
 * tlm_status_kind, worker/run.c wrk_exit_status, orchestrator/classify.c,
 * orchestrator/plan.c orc_reason_is_final, orchestrator/event.c's error
 * kinds), written out once more so that the table cannot drift from it. */
static const struct {
    int code;
    const char *kind;
    int exit;
    int next;      /* orc_next when tlmd did not stop it */
    int machine;   /* a fault of the machine */
    int final;     /* --retry-failed needed */
    int in_error;  /* an `error` event may carry it */
    const char *message;
} OLD_MAP[] = {
    {TLM_ECONFIG, "config", 2, ORC_NEXT_FAIL, 0, 1, 1, "configuration or usage error (exit 2)"},
    {TLM_EDATA, "data", 3, ORC_NEXT_FAIL, 0, 1, 1, "data error (exit 3)"},
    {TLM_EIO, "io", 6, ORC_NEXT_RETRY, 1, 0, 1, "I/O error (exit 6)"},
    {TLM_ENOMEM, "oom", 5, ORC_NEXT_RETRY, 0, 0, 1, "out of memory (exit 5)"},
    {TLM_EDIVERGED, "diverged", 4, ORC_NEXT_FAIL, 0, 1, 1, "loss or gradients not finite (exit 4)"},
    {TLM_EINTERNAL, "internal", 1, ORC_NEXT_RETRY, 0, 0, 1, "internal error (exit 1)"},
    {TLM_EINTERRUPTED, "interrupted", 75, ORC_NEXT_RETRY, 0, 0, 0, "stopped by a signal from outside tlmd (exit 75)"},
};
#define N_OLD (sizeof OLD_MAP / sizeof OLD_MAP[0])

static void test_failure_table(void)
{
    TAP_OK(TLM_ECONFIG == -1 && TLM_EDATA == -2 && TLM_EIO == -3 && TLM_ENOMEM == -4 && TLM_EDIVERGED == -5 &&
               TLM_EINTERNAL == -6 && TLM_EINTERRUPTED == -7,
           "the tlm_status values are as before");
    size_t rows = 0;
    for (const tlm_failure *f; (f = tlm_failure_at(rows)); rows++) {
        size_t i = 0;
        while (i < N_OLD && OLD_MAP[i].code != f->code)
            i++;
        if (i == N_OLD) {
            TAP_OK(0, "table row %s (code %d) is not in the old mapping", f->kind, f->code);
            continue;
        }
        orc_exit x = {.exited = 1, .status = f->exit, .kill_reason = ORC_KILL_NONE};
        orc_outcome o;
        orc_classify(&x, &o);
        char line[256], why[256] = "";
        snprintf(line, sizeof line, "{\"ev\":\"error\",\"v\":1,\"t\":1,\"kind\":\"%s\",\"message\":\"m\"}", f->kind);
        orc_event ev;
        int accepted = parse(line, &ev, why) == 0;
        TAP_OK(!strcmp(f->kind, OLD_MAP[i].kind) && !strcmp(tlm_status_kind(f->code), OLD_MAP[i].kind) &&
                   f->exit == OLD_MAP[i].exit && tlm_exit_status(f->code) == OLD_MAP[i].exit &&
                   tlm_failure_of_exit(f->exit) == f && tlm_failure_of_kind(f->kind) == f &&
                   !strcmp(o.reason, OLD_MAP[i].kind) && o.next == OLD_MAP[i].next &&
                   o.machine == OLD_MAP[i].machine && !strcmp(o.message, OLD_MAP[i].message) &&
                   orc_reason_is_final(f->kind) == OLD_MAP[i].final && accepted == OLD_MAP[i].in_error,
               "%s: code %d, exit %d, tlmd %s%s (%s), %s, %s in error events", f->kind, f->code, f->exit, o.reason,
               o.machine ? " machine" : "", o.message, orc_reason_is_final(f->kind) ? "final" : "not final",
               accepted ? "allowed" : "refused");
    }
    TAP_OK(rows == N_OLD, "%zu kinds in the table, %zu in the old mapping", rows, N_OLD);
    orc_exit x = {.exited = 1, .status = 75, .kill_reason = ORC_KILL_SHUTDOWN};
    orc_outcome o;
    orc_classify(&x, &o);
    TAP_OK(!strcmp(o.reason, "interrupted") && o.next == ORC_NEXT_INTERRUPTED && !o.machine &&
               !strcmp(o.message, "stopped by tlmd after a checkpoint"),
           "exit 75 after tlmd asked: interrupted, resumes (%s)", o.message);
    x = (orc_exit){.exited = 1, .status = 127};
    orc_classify(&x, &o);
    TAP_OK(!strcmp(o.reason, "internal") && o.next == ORC_NEXT_RETRY && o.machine &&
               !strcmp(o.message, "the worker could not be started (exit 127)"),
           "exit 127: internal, a machine fault (%s)", o.message);
    TAP_OK(!strcmp(tlm_status_kind(TLM_OK), "ok") && tlm_exit_status(TLM_OK) == 0 &&
               !strcmp(tlm_status_kind(-99), "internal") && tlm_exit_status(-99) == 1 &&
               !tlm_failure_of_exit(0) && !tlm_failure_of_exit(127) && !tlm_failure_of_kind("protocol") &&
               !orc_reason_is_final("protocol") && !orc_reason_is_final(NULL),
           "ok is 0, an unknown code is internal (1), tlmd's own reasons are not kinds");
}

/* Every reason tlmd records is one attempts.reason allows (db/schema.sql):
 * each kind of the failure table, and whatever orc_classify gives for any
 * exit status or signal, whatever tlmd did to the worker. */
static void test_failure_schema(void)
{
    char path[1024], word[64];
    static char text[1 << 17];
    src_text("db/schema.sql", text, sizeof text, path, sizeof path);
    const char *check = strstr(text, "CHECK (reason IN (");
    const char *end = check ? strchr(check, ')') : NULL;
    end = end ? strchr(end + 1, ')') : NULL; /* the IN list's, then the CHECK's */
    int bad = 0, tried = 0;
    for (size_t i = 0; check && end && tlm_failure_at(i); i++) {
        snprintf(word, sizeof word, "'%s'", tlm_failure_at(i)->kind);
        const char *at = strstr(check, word);
        if (!at || at > end) {
            TAP_DIAG("db/schema.sql does not allow the reason %s", word);
            bad++;
        }
    }
    for (int status = 0; check && end && status < 256 + 32; status++)
        for (int kill = ORC_KILL_NONE; kill <= ORC_KILL_PROTOCOL; kill++)
            for (int done = 0; done < 2; done++) {
                orc_exit x = {.exited = status < 256, .status = status < 256 ? status : 0,
                              .signal = status < 256 ? 0 : status - 256, .kill_reason = kill, .saw_done = done};
                orc_outcome o;
                orc_classify(&x, &o);
                snprintf(word, sizeof word, "'%s'", o.reason);
                const char *at = strstr(check, word);
                tried++;
                if (!at || at > end) {
                    TAP_DIAG("exit %d signal %d kill %d: reason %s, which db/schema.sql does not allow", x.status,
                             x.signal, kill, word);
                    bad++;
                }
            }
    TAP_OK(check && end && !bad, "db/schema.sql allows every kind and every reason of %d classified endings", tried);
}

/* The cells of a markdown table row, "\|" standing for '|'; returns how many. */
static int md_cells(const char *line, char cell[][256], int max)
{
    if (line[0] != '|')
        return 0;
    int n = 0;
    size_t len = 0;
    for (const char *p = line + 1; *p && *p != '\n' && n < max; p++) {
        if (*p == '|') {
            while (len && cell[n][len - 1] == ' ')
                len--;
            cell[n++][len] = '\0';
            len = 0;
        } else if (len + 1 < 256 && (len || *p != ' ')) {
            if (*p == '\\' && p[1] == '|')
                p++;
            cell[n][len++] = *p;
        }
    }
    return n;
}

/* What docs/tlmd.md says of an ending, as an orc_outcome says it. */
static const char *next_words(const orc_outcome *o)
{
    switch (o->next) {
    case ORC_NEXT_DONE: return "job done";
    case ORC_NEXT_FAIL: return "failed, not retried";
    case ORC_NEXT_INTERRUPTED: return "resumes on the next start";
    default: return o->machine ? "retried, a machine fault" : "retried";
    }
}

/* What docs/protocol.md's "retried" column says of an exit status. */
static const char *retried_words(int status)
{
    const tlm_failure *k = tlm_failure_of_exit(status);
    if (!k)
        return status == TLM_EXIT_OK ? "-" : "?";
    return k->policy == TLM_POLICY_FINAL ? "no" : k->policy == TLM_POLICY_RESUME ? "resumed" : "yes";
}

/* docs/tlmd.md's "Exit status" says every status of tlmd's table
 * (orchestrator/exits.h), in the table's words. */
static void test_exit_docs(void)
{
    char path[1024], want[512];
    static char text[1 << 17];
    size_t n = src_text("docs/tlmd.md", text, sizeof text, path, sizeof path);
    for (char *p = text; *p; p++)
        if (*p == '\n')
            *p = ' ';
    int bad = 0, rows = 0;
#define XX(id, status, when)                                                                                     \
    snprintf(want, sizeof want, "**%d** %s", status, when);                                                     \
    rows++;                                                                                                      \
    if (!strstr(text, want)) {                                                                                   \
        TAP_DIAG("%s does not say \"%s\"", path, want);                                                          \
        bad++;                                                                                                   \
    }
    ORC_EXIT_MAP(XX)
#undef XX
    TAP_OK(n > 0 && rows > 0 && !bad && orc_exit_of(TLM_ECONFIG) == ORC_EXIT_USAGE &&
               orc_exit_of(TLM_EIO) == ORC_EXIT_ERROR && orc_exit_of(0) == ORC_EXIT_OK,
           "%s: tlmd's %d exit statuses in exits.h's words; a usage error exits 2, others 3", path, rows);
}

/* docs/protocol.md "Exit statuses" and docs/tlmd.md's table of how an
 * attempt ended say what orc_classify does with each exit status, and
 * name every kind of the table; the `error` event lists its kinds. */
static void test_failure_docs(const char *src)
{
    static const char *const docs[] = {"docs/protocol.md", "docs/tlmd.md"};
    for (int d = 0; d < 2; d++) {
        char path[1024], line[4096], cell[8][256];
        snprintf(path, sizeof path, "%.900s/%s", src, docs[d]);
        FILE *f = fopen(path, "r");
        TAP_OK(f != NULL, "%s opens", path);
        if (!f)
            continue;
        int seen[16] = {0}, rows = 0, bad = 0, in_exit = 0;
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "## ", 3))
                in_exit = !strcmp(line, "## Exit statuses\n");
            int nc = md_cells(line, cell, 8), tlmd_md = d == 1;
            /* protocol.md: | status | meaning | tlmd reason | retried |; tlmd.md: | how it ended | reason | next | */
            if (d == 1 ? !(nc == 3 && !strncmp(cell[0], "exit ", 5)) : !(in_exit && nc == 4 && cell[0][0] >= '0' && cell[0][0] <= '9'))
                continue;
            const char *reason = cell[d == 1 ? 1 : 2], *next = cell[d == 1 ? 2 : 3];
            /* "exit 2 / 3 / 4" with "config / data / diverged" */
            char statuses[256], reasons[256];
            memcpy(statuses, cell[0] + (d == 1 ? 5 : 0), sizeof statuses - 5);
            statuses[sizeof statuses - 5] = '\0';
            memcpy(reasons, reason, sizeof reasons);
            char *ss = NULL, *rs = NULL;
            char *st = strtok_r(statuses, "/", &ss), *rn = strtok_r(reasons, "/", &rs);
            for (; st && rn; st = strtok_r(NULL, "/", &ss), rn = strtok_r(NULL, "/", &rs)) {
                while (*rn == ' ')
                    rn++;
                rn[strcspn(rn, " ")] = '\0';
                int status = atoi(st);
                orc_exit x = {.exited = 1, .status = status, .saw_done = !strstr(cell[0], "without"),
                              .kill_reason = strstr(cell[0], "after tlmd asked") ? ORC_KILL_SHUTDOWN : ORC_KILL_NONE};
                orc_outcome o;
                orc_classify(&x, &o);
                char want[256];
                snprintf(want, sizeof want, "%s", next);
                if (!strcmp(want, "retried (counted)"))
                    want[7] = '\0'; /* a stop nobody asked for: retried, as any */
                const char *does = tlmd_md ? next_words(&o) : retried_words(status);
                rows++;
                if (strcmp(o.reason, rn) || strcmp(does, want)) {
                    TAP_DIAG("%s: exit %d says %s, %s; tlmd: %s, %s", docs[d], status, rn, want, o.reason, does);
                    bad++;
                }
                const tlm_failure *k = tlm_failure_of_exit(status);
                for (size_t i = 0; k && tlm_failure_at(i); i++)
                    if (tlm_failure_at(i) == k)
                        seen[i] = 1;
            }
        }
        fclose(f);
        for (size_t i = 0; tlm_failure_at(i); i++)
            if (!seen[i]) {
                TAP_DIAG("%s: no row for exit %d (%s)", docs[d], tlm_failure_at(i)->exit, tlm_failure_at(i)->kind);
                bad++;
            }
        TAP_OK(rows > 0 && !bad, "%s: its %d exit statuses are classified as it says, every kind has one", docs[d],
               rows);
    }

    /* | `error` | `kind` (`config`, `data`, ...), ... | */
    char path[1024], line[4096], kinds[512] = "", want[512] = "";
    snprintf(path, sizeof path, "%s/docs/protocol.md", src);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "| `error` | `kind` (", 20)) {
            const char *p = line + 20, *end = strchr(p, ')');
            snprintf(kinds, sizeof kinds, "%.*s", end ? (int)(end - p) : 0, p);
        }
    if (f)
        fclose(f);
    for (size_t i = 0; tlm_failure_at(i); i++) {
        const tlm_failure *k = tlm_failure_at(i);
        char ev[256], why[256];
        snprintf(ev, sizeof ev, "{\"ev\":\"error\",\"v\":1,\"t\":1,\"kind\":\"%s\",\"message\":\"m\"}", k->kind);
        orc_event e;
        if (parse(ev, &e, why) == 0) {
            size_t n = strlen(want);
            snprintf(want + n, sizeof want - n, "%s`%s`", n ? ", " : "", k->kind);
        }
    }
    /* the doc's order is its own: compare as sets */
    int same = kinds[0] != '\0';
    for (char *save = NULL, *t = strtok_r(kinds, ", ", &save); t && same; t = strtok_r(NULL, ", ", &save))
        same = strstr(want, t) != NULL;
    TAP_OK(same && strlen(kinds) > 0, "docs/protocol.md's error kinds are those tlmd accepts (%s)", want);
}

static void test_classify(void)
{
    static const struct {
        orc_exit x;
        const char *reason;
        int next;
    } cases[] = {
        {{1, 0, 0, ORC_KILL_NONE, 1, NULL, 0}, "done", ORC_NEXT_DONE},
        {{1, 0, 0, ORC_KILL_NONE, 0, NULL, 0}, "protocol", ORC_NEXT_RETRY},
        {{1, 1, 0, ORC_KILL_NONE, 0, "internal", 0}, "internal", ORC_NEXT_RETRY},
        {{1, 2, 0, ORC_KILL_NONE, 0, "config", 0}, "config", ORC_NEXT_FAIL},
        {{1, 3, 0, ORC_KILL_NONE, 0, "data", 0}, "data", ORC_NEXT_FAIL},
        {{1, 4, 0, ORC_KILL_NONE, 0, "diverged", 0}, "diverged", ORC_NEXT_FAIL},
        {{1, 5, 0, ORC_KILL_NONE, 0, "oom", 0}, "oom", ORC_NEXT_RETRY},
        {{1, 6, 0, ORC_KILL_NONE, 0, "io", 0}, "io", ORC_NEXT_RETRY},
        {{1, 75, 0, ORC_KILL_SHUTDOWN, 0, NULL, 0}, "interrupted", ORC_NEXT_INTERRUPTED},
        {{1, 75, 0, ORC_KILL_NONE, 0, NULL, 0}, "interrupted", ORC_NEXT_RETRY},
        {{1, 75, 0, ORC_KILL_TIMEOUT, 0, NULL, 0}, "timeout", ORC_NEXT_RETRY},
        {{0, 0, SIGKILL, ORC_KILL_TIMEOUT, 0, NULL, 0}, "timeout", ORC_NEXT_RETRY},
        {{0, 0, SIGSEGV, ORC_KILL_NONE, 0, NULL, 0}, "crash", ORC_NEXT_RETRY},
        {{0, 0, SIGKILL, ORC_KILL_SHUTDOWN, 0, NULL, 0}, "interrupted", ORC_NEXT_INTERRUPTED},
        {{1, 0, 0, ORC_KILL_PROTOCOL, 1, NULL, 0}, "protocol", ORC_NEXT_FAIL},
        {{1, 42, 0, ORC_KILL_NONE, 0, NULL, 0}, "internal", ORC_NEXT_RETRY},
        /* a done whose final loss is NaN or inf is no success, whatever the exit status */
        {{1, 0, 0, ORC_KILL_NONE, 1, NULL, 1}, "diverged", ORC_NEXT_FAIL},
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
    test_failure_table();
    test_failure_docs(src);
    test_failure_schema();
    test_exit_docs();
    return tap_done();
}
