/* test_ingest.c: what the daemon does with each line a worker sends,
 * without a worker: lines go straight into orc_ingest_line for one
 * attempt.  Valid events become rows; a refused line becomes a protocol
 * error in `logs` (at most 21 rows per attempt, every one counted) and
 * writes nothing else; events before `start`, a second `start`, events
 * naming another job and events after `done` are refused; a `start` whose
 * config_id is not the job's key marks the attempt to be stopped as a
 * protocol failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "orchestrator/daemon.h"
#include "tests/lib/db_util.h"
#include "tests/lib/tap.h"

static const char KEY[] = "44cdf1cc143347e134f1c6f6125967a13fa04d46a14cc4593f86ff425a45f2cd";
static const char OTHER[] = "0000000000000000000000000000000000000000000000000000000000000000";

static void feed(orc_run *r, const char *fmt, const char *arg)
{
    char line[2048];
    snprintf(line, sizeof line, fmt, arg, arg);
    orc_ingest_line(r, line, strlen(line));
}

int main(void)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/tlm-test-ingest-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/results.db", dir);

    static orc_daemon d;
    static orc_opts o = {.max_attempts = 3, .heartbeat_timeout = 120, .kill_grace = 10, .progress = 0};
    d.o = &o;
    orc_executor_local(&d.ex); /* stops go through the run's executor (no process here) */
    tlm_err e = {0};
    if (db_open(path, DB_READWRITE, &d.db, &e)) {
        printf("# %s\n", e.msg);
        return 1;
    }
    db_sweep_row sw = {.name = "s", .file = "s.yaml", .content_hash = "h", .source = "x"};
    db_job_row jr = {.key = KEY, .sweep = "s", .config = "{}", .arch = "transformer", .scale = "1m",
                     .schedule = "uniform", .ratio_start = NAN, .ratio_end = NAN, .label = "uniform",
                     .tokens_total = 100, .params = 1, .flops_per_token = 1};
    int n = 0;
    int64_t att = 0;
    db_attempt_row ar = {.job = KEY, .n = 1, .pid = 1, .host = "h", .device = "cpu:0", .started_at = 1};
    int ok = !db_sweep_put(d.db, &sw, NULL, &e) && !db_job_put(d.db, &jr, NULL, &e) &&
             !db_job_start_attempt(d.db, KEY, &n, &e) && !db_attempt_begin(d.db, &ar, &att, &e);
    TAP_OK(ok, "a job and its attempt (%s)", e.msg);
    size_t idx;
    int added;
    orc_jobs_add(&d.plan.jobs, KEY, &idx, &added);

    orc_run *r = calloc(1, sizeof *r);
    r->d = &d;
    r->job = idx;
    r->attempt = att;
    r->step = r->tokens = -1;
    r->parser = malloc(sizeof *r->parser);
    snprintf(r->label, sizeof r->label, "uniform");

    const char *start = "{\"ev\":\"start\",\"v\":1,\"t\":1,\"job\":\"%s\",\"config_id\":\"%s\",\"step\":0,\"tokens\":0,"
                        "\"resumed_from_step\":null,\"blas\":\"OpenBLAS\",\"argv\":[\"w\"]}";
    const char *step = "{\"ev\":\"step\",\"v\":1,\"t\":1,\"job\":\"%s\",\"step\":1,\"tokens\":10,\"loss\":\"nan\","
                       "\"lr\":1,\"grad_norm\":1,\"tokens_per_s\":1,\"step_ms\":1}";
    feed(r, step, KEY);
    TAP_OK(r->protocol_errors == 1 && !r->got_start, "a step before start is refused");
    /* set-up heartbeats may come before start (docs/protocol.md); each says
     * whether the worker moved (its progress counter) */
    char line[512];
    const char *hb = "{\"ev\":\"heartbeat\",\"v\":1,\"t\":1,\"job\":\"%s\",\"step\":0,\"tokens\":0,\"phase\":\"%s\"%s}";
    r->progress = -1;
    snprintf(line, sizeof line, hb, KEY, "setup", ",\"progress\":3");
    orc_ingest_line(r, line, strlen(line));
    TAP_OK(r->protocol_errors == 1 && r->progress == 3 && !strcmp(r->phase, "setup") && r->progress_at > 0 &&
               r->step == -1,
           "a set-up heartbeat before start is accepted (progress 3, step still unknown)");
    r->progress_at = 0;
    orc_ingest_line(r, line, strlen(line));
    TAP_OK(r->protocol_errors == 1 && r->progress_at == 0, "a heartbeat whose counter stands still is no progress");
    snprintf(line, sizeof line, hb, KEY, "setup", ",\"progress\":4");
    orc_ingest_line(r, line, strlen(line));
    TAP_OK(r->progress == 4 && r->progress_at > 0, "a counter that moved is progress");
    r->progress_at = 0;
    snprintf(line, sizeof line, hb, KEY, "setup", "");
    orc_ingest_line(r, line, strlen(line));
    TAP_OK(r->progress == -1 && r->progress_at > 0, "a heartbeat without the counter (an older worker) counts as progress");
    snprintf(line, sizeof line, hb, KEY, "train", ",\"progress\":5");
    orc_ingest_line(r, line, strlen(line));
    TAP_OK(r->protocol_errors == 2, "a heartbeat of another phase before start is refused");
    feed(r, start, OTHER);
    TAP_OK(r->protocol_errors == 3 && r->kill_reason == 0, "a start naming another job is refused (job field)");
    feed(r, "{\"ev\":\"start\",\"v\":1,\"t\":1,\"config_id\":\"%s\",\"step\":0,\"tokens\":0}", OTHER);
    TAP_OK(r->protocol_errors == 4 && r->kill_reason == ORC_KILL_PROTOCOL && !r->got_start,
           "a start with another config_id: refused, the worker to be stopped as a protocol failure");
    r->kill_reason = 0;
    feed(r, start, KEY);
    TAP_OK(r->got_start && r->tokens == 0, "the right start is accepted");
    feed(r, start, KEY);
    TAP_OK(r->protocol_errors == 5, "a second start is refused");
    feed(r, step, KEY);
    TAP_OK(r->step == 1 && r->has_loss, "a step is taken");
    for (int i = 0; i < 30; i++)
        feed(r, "garbage %s", KEY);
    TAP_OK(r->protocol_errors == 35, "every refused line is counted (%d)", r->protocol_errors);
    feed(r, "{\"ev\":\"done\",\"v\":1,\"t\":1,\"job\":\"%s\",\"step\":1,\"tokens\":10,\"loss\":2.5,\"val_loss\":null}",
         KEY);
    TAP_OK(r->terminal && r->saw_done && r->final_loss == 2.5, "done ends the run");
    feed(r, step, KEY);
    TAP_OK(r->protocol_errors == 36, "an event after done is refused");
    orc_commit(&d);
    TAP_OK(!d.fatal, "the batch commits");
    TAP_OK(q_int(d.db, "SELECT count(*) FROM steps") == 1 && q_int(d.db, "SELECT loss IS NULL FROM steps") == 1,
           "one step row, its NaN loss kept");
    TAP_OK(q_int(d.db, "SELECT count(*) FROM environment WHERE blas = 'OpenBLAS' AND cmdline = '[\"w\"]'") == 1,
           "the environment of the attempt");
    TAP_OK(q_int(d.db, "SELECT count(*) FROM logs WHERE level = 'error' AND message LIKE 'protocol: %'") == 21,
           "21 protocol errors logged (20 lines and a note), not 36");
    TAP_OK(q_int(d.db, "SELECT count(*) FROM logs WHERE message LIKE '%garbage%'") >= 1,
           "with a printable excerpt of the line");
    TAP_OK(d.bad_lines == 36 && d.events == 43, "daemon counts: %llu lines refused of %llu",
           (unsigned long long)d.bad_lines, (unsigned long long)d.events);

    orc_attempt_free(r);
    db_close(d.db);
    orc_jobs_clear(&d.plan.jobs);
    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    return tap_done();
}
