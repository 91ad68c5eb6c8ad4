/* main.c: tlmd's command line (its contract: docs/tlmd.md).
 * Parses options, then runs the daemon, a dry run, `tlmd status`, `tlmd
 * migrate` or `tlmd backup`;
 * the only place that decides tlmd's exit status.  Also the entry of the
 * exec shim (shim.h) when tlmd re-executes itself to start a worker.
 * Every option is one row of OPTS (or STATUS_OPTS): its field in orc_opts,
 * type, range, default and help; the parser, the defaults and --help are
 * made from the rows (common/cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/fileio.h"
#include "orchestrator/daemon.h"
#include "orchestrator/lock.h"
#include "orchestrator/plan.h"
#include "orchestrator/rundir.h"
#include "orchestrator/shim.h"
#include "orchestrator/slurm_job.h"
#include "orchestrator/status.h"

/* --time, --partition, --account, --qos: the slurm executor's defaults,
 * each value checked before it can reach sbatch */
static int res_value(const tlm_opt *row, const char *val, void *opts, tlm_err *e)
{
    orc_opts *o = opts;
    char what[64], *dst = (char *)opts + row->off;
    snprintf(what, sizeof what, "--%s", row->name);
    int is_time = dst == o->res.time;
    if (is_time ? orc_res_check_time(what, val, e) : orc_res_check_name(what, val, e))
        return TLM_ECONFIG;
    snprintf(dst, is_time ? sizeof o->res.time : sizeof o->res.partition, "%s", val);
    return 0;
}

static int sbatch_arg(const tlm_opt *row, const char *val, void *opts, tlm_err *e)
{
    orc_resources *r = &((orc_opts *)opts)->res;
    (void)row;
    if (orc_res_check_extra("--sbatch-arg", val, e))
        return TLM_ECONFIG;
    if (r->n_extra < 0)
        r->n_extra = 0;
    if (r->n_extra == ORC_RES_EXTRA_MAX)
        return tlm_errf(e, TLM_ECONFIG, "--sbatch-arg: more than %d", ORC_RES_EXTRA_MAX);
    snprintf(r->extra[r->n_extra++], ORC_RES_ARG_MAX, "%s", val);
    return 0;
}

/* An option a dry run does not read: given with --dry-run, it is named as
 * ignored (a dry run of the very command line that will train is the
 * natural use). */
#define RUN_ONLY TLM_OPT_MARK(0)

static const char *const EXECUTORS[] = {"local", "slurm", NULL};

#define O(m) offsetof(orc_opts, m)
static const tlm_opt OPTS[] = {
    {"sweeps", "FILE|DIR", TLM_OPT_LIST, O(sweeps), .count = O(n_sweeps), .flags = TLM_OPT_REQUIRED | TLM_OPT_REPEAT,
     .help = "a sweep file, or a folder of *.yaml sweeps; repeatable"},
    {"db", "FILE", TLM_OPT_STR, O(db_path), .def = DB_DEFAULT_PATH, .help = "the results database"},
    {"runs", "DIR", TLM_OPT_STR, O(runs_dir), .def = "runs", .flags = RUN_ONLY, .help = "run folders, DIR/<job id>"},
    {"devices", "auto|cpu|IDS", TLM_OPT_STR, O(devices), .def = "auto", .flags = RUN_ONLY,
     .help = "GPUs to use, one worker each (auto: every GPU when built with CUDA, else the CPU)"},
    {"workers", "N", TLM_OPT_INT, O(workers), .lo = 1, .hi = 256, .flags = RUN_ONLY,
     .help = "CPU workers at a time (default: cores / threads-per-worker, or 1)"},
    {"threads-per-worker", "N", TLM_OPT_INT, O(threads_per_worker), .lo = 1, .hi = 4096, .flags = RUN_ONLY,
     .help = "compute threads per worker (default: cores / workers)"},
    {"max-attempts", "N", TLM_OPT_INT, O(max_attempts), .lo = 1, .hi = 1000, .def = "3", .flags = RUN_ONLY,
     .help = "failed attempts before a job fails for good"},
    {"max-machine-faults", "N", TLM_OPT_INT, O(max_machine_faults), .lo = 1, .hi = 1000, .def = "10",
     .flags = RUN_ONLY,
     .help = "attempts in a row that the machine fails (I/O, disk full, permissions, the worker cannot start) "
             "before a job fails; not counted in --max-attempts"},
    {"retry-delay", "S", TLM_OPT_NUM, O(retry_delay), .lo = 0, .hi = 86400, .def = "10", .flags = RUN_ONLY,
     .help = "wait before retrying a failed attempt, doubled at each failure in a row"},
    {"retry-delay-max", "S", TLM_OPT_NUM, O(retry_delay_max), .lo = 0, .hi = 86400, .def = "300", .flags = RUN_ONLY,
     .help = "the longest wait"},
    {"heartbeat-timeout", "S", TLM_OPT_NUM, O(heartbeat_timeout), .lo = 1, .hi = 1e6, .def = "120",
     .flags = RUN_ONLY, .help = "a worker silent this long is stopped and retried"},
    {"stall-timeout", "S", TLM_OPT_NUM, O(stall_timeout), .lo = 0, .hi = 1e7, .def = "1800", .flags = RUN_ONLY,
     .help = "a worker whose heartbeats show no progress this long is stuck: stopped and retried; 0: off"},
    {"kill-grace", "S", TLM_OPT_NUM, O(kill_grace), .lo = 0, .hi = 1e6, .def = "10", .flags = RUN_ONLY,
     .help = "SIGTERM to SIGKILL delay for a stopped worker"},
    {"worker", "PATH", TLM_OPT_STR, O(worker), .flags = RUN_ONLY,
     .help = "the tlm-worker to run (default: beside tlmd, or $TLM_WORKER)"},
    {"dry-run", NULL, TLM_OPT_FLAG, O(dry_run), .letter = 'n',
     .help = "list the jobs (id, axes, d_ff, params, FLOPs, new/done/...) and exit"},
    {"rerun", NULL, TLM_OPT_FLAG, O(rerun),
     .help = "train again jobs that are done or failed (their checkpoints are set aside)"},
    {"retry-failed", NULL, TLM_OPT_FLAG, O(retry_failed),
     .help = "try again jobs that failed for good (a failure no retry cures, listed below), after a fix"},
    {"adopt-runs", NULL, TLM_OPT_FLAG, O(adopt_runs), .flags = RUN_ONLY,
     .help = "let --db take over a --runs folder that belongs to another database"},
    {"progress", NULL, TLM_OPT_FLAG, O(progress), .def = "-1", .flags = RUN_ONLY,
     .help = "live view (default: when stdout is a terminal)"},
    {"no-progress", NULL, TLM_OPT_OFF, O(progress), .flags = RUN_ONLY, .help = "log lines, no live view"},
    {"executor", "local|slurm", TLM_OPT_CHOICE, O(executor), .choices = EXECUTORS, .def = "local", .flags = RUN_ONLY,
     .help = "how attempts run: worker processes here, or one sbatch each"},
    {"gpus", "N", TLM_OPT_INT, O(res.gpus), .lo = 0, .hi = 64, .flags = RUN_ONLY,
     .help = "slurm: GPUs per job, unless its sweep's resources: block says otherwise (the same for the next six)"},
    {"cpus-per-job", "N", TLM_OPT_INT, O(res.cpus), .lo = 1, .hi = 4096, .flags = RUN_ONLY,
     .help = "slurm: CPUs per job, and the worker's threads"},
    {"time", "T", TLM_OPT_FUNC, O(res.time), .parse = res_value, .flags = RUN_ONLY,
     .help = "slurm: a job's time limit (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])"},
    {"partition", "P", TLM_OPT_FUNC, O(res.partition), .parse = res_value, .flags = RUN_ONLY,
     .help = "slurm: the partition"},
    {"account", "A", TLM_OPT_FUNC, O(res.account), .parse = res_value, .flags = RUN_ONLY,
     .help = "slurm: the account"},
    {"qos", "Q", TLM_OPT_FUNC, O(res.qos), .parse = res_value, .flags = RUN_ONLY, .help = "slurm: the QOS"},
    {"sbatch-arg", "ARG", TLM_OPT_FUNC, O(res.extra), .parse = sbatch_arg, .flags = TLM_OPT_REPEAT | RUN_ONLY,
     .help = "slurm: one more sbatch option (--mem=64G); repeatable"},
    {"slurm-poll", "S", TLM_OPT_NUM, O(slurm_poll), .lo = 0.1, .hi = 3600, .def = "15", .flags = RUN_ONLY,
     .help = "slurm: one squeue for the whole sweep this often"},
    {"slurm-max-jobs", "N", TLM_OPT_INT, O(slurm_max_jobs), .lo = 1, .hi = ORC_MAX_SLOTS, .def = "100",
     .flags = RUN_ONLY, .help = "slurm: jobs queued or running at a time"},
    {"slurm-signal-before", "S", TLM_OPT_NUM, O(slurm_signal), .lo = 0, .hi = 65535, .def = "300",
     .flags = RUN_ONLY, .help = "slurm: the checkpoint signal this long before a job's time limit"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

/* `tlmd status`'s options */
typedef struct status_opts {
    const char *db_path, *sweep;
    int summary;
} status_opts;

#define O(m) offsetof(status_opts, m)
static const tlm_opt STATUS_OPTS[] = {
    {"db", "FILE", TLM_OPT_STR, O(db_path), .def = DB_DEFAULT_PATH, .help = "the results database"},
    {"sweep", "NAME", TLM_OPT_STR, O(sweep), .help = "only this sweep"},
    {"summary", NULL, TLM_OPT_FLAG, O(summary), .help = "sweeps only, no jobs"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

/* `tlmd migrate`'s and `tlmd backup`'s options */
typedef struct db_cmd_opts {
    const char *db_path, *out;
} db_cmd_opts;

#define O(m) offsetof(db_cmd_opts, m)
static const tlm_opt MIGRATE_OPTS[] = {
    {"db", "FILE", TLM_OPT_STR, O(db_path), .flags = TLM_OPT_REQUIRED, .help = "the database to upgrade"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
static const tlm_opt BACKUP_OPTS[] = {
    {"db", "FILE", TLM_OPT_STR, O(db_path), .flags = TLM_OPT_REQUIRED, .help = "the database to copy"},
    {"out", "FILE", TLM_OPT_STR, O(out), .flags = TLM_OPT_REQUIRED, .help = "the backup, a new file"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

#define HELP_COL 27

/* "config, data, diverged": the failures that no retry can cure (common/failure.h) */
static void final_kinds(FILE *f)
{
    int n = 0;
    for (size_t i = 0; tlm_failure_at(i); i++)
        if (tlm_failure_at(i)->policy == TLM_POLICY_FINAL)
            fprintf(f, "%s%s", n++ ? ", " : "", tlm_failure_at(i)->kind);
}

static void usage(FILE *f)
{
    tlm_cli run = {.cmd = "tlmd", .opts = OPTS, .col = HELP_COL};
    tlm_cli status = {.cmd = "tlmd status", .opts = STATUS_OPTS, .col = HELP_COL};
    tlm_cli migrate = {.cmd = "tlmd migrate", .opts = MIGRATE_OPTS, .col = HELP_COL};
    tlm_cli backup = {.cmd = "tlmd backup", .opts = BACKUP_OPTS, .col = HELP_COL};
    tlm_cli_synopsis(f, &run, "usage: ");
    tlm_cli_synopsis(f, &status, "       ");
    tlm_cli_synopsis(f, &migrate, "       ");
    tlm_cli_synopsis(f, &backup, "       ");
    fputs("\n"
          "Trains every job of the sweeps (docs/sweeps.md) with tlm-worker, records\n"
          "everything in the database, and exits 0 once every job is done.\n"
          "\n",
          f);
    tlm_cli_options(f, &run);
    fputs("\n`tlmd status` prints the state of every sweep and job in the database:\n", f);
    tlm_cli_options(f, &status);
    fputs("\n`tlmd migrate` upgrades a database of an older schema: a backup of it first\n"
          "(FILE.vN.bak), then the migration in one transaction:\n",
          f);
    tlm_cli_options(f, &migrate);
    fputs("\n`tlmd backup` copies a database with SQLite's online backup, safe while tlmd\n"
          "runs on it; the copy is written aside and renamed into place:\n",
          f);
    tlm_cli_options(f, &backup);
    fputs("\nFailures that no retry cures (--retry-failed tries them again):\n  ", f);
    final_kinds(f);
    fputs(".\n"
          "Exit status: 0 every job done; 1 some job failed; 2 bad usage or sweep file;\n"
          "3 database or internal error; 75 stopped by a signal (run it again to resume).\n",
          f);
}

/* The command line of cli into opts: -1 to go on, else the exit status
 * (--help: 0; usage errors: 2, said on stderr as cli->cmd's). */
static const tlm_cli_usage USAGE = {usage};

static int parse_args(tlm_cli *cli, int argc, char **argv, void *opts)
{
    return tlm_cli_main(cli, cli->cmd, argc, argv, opts, tlm_cli_help_usage, &USAGE, ORC_EXIT_USAGE, ORC_EXIT_ERROR);
}

/* The same for a sub-command: its name (prog) is written once, for its
 * --help, its messages and its parser. */
static int parse_sub(const char *prog, const tlm_opt *rows, int argc, char **argv, void *opts)
{
    tlm_cli cli = {.cmd = prog, .opts = rows};
    return parse_args(&cli, argc, argv, opts);
}

/* A database path: SQLite puts -journal, -wal and -shm files beside it,
 * tlmd a .lock file; a folder there is not a database. */
#define DB_PATH_MAX (TLM_PATH_CAP - 1 - 16)
static int check_db_path(const char *prog, const char *path)
{
    tlm_err e;
    if (tlm_path_check_len("--db", path, DB_PATH_MAX, &e) ||
        tlm_path_not_dir("--db", path, "an SQLite database file, such as results.db", &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return -1;
    }
    return 0;
}

/* main's way out: the sweep list (the parser's) is its only allocation */
static int done(const char **sweeps, int status)
{
    free(sweeps);
    return status;
}

static int status_main(int argc, char **argv)
{
    status_opts so = {0};
    int rc = parse_sub("tlmd status", STATUS_OPTS, argc, argv, &so);
    if (rc >= 0)
        return rc;
    const char *db_path = so.db_path, *sweep = so.sweep;
    int jobs = !so.summary;
    if (check_db_path("tlmd status", db_path))
        return 2;
    tlm_err e = {0};
    if (orc_status(db_path, sweep, jobs, stdout, &e)) {
        fprintf(stderr, "tlmd status: %s\n", e.msg);
        return orc_exit_error(e.code);
    }
    return 0;
}

/* `tlmd migrate --db FILE`: under tlmd's lock (no daemon may write
 * meanwhile), a backup, then the one-transaction migration. */
static int migrate_main(int argc, char **argv)
{
    db_cmd_opts mo = {0};
    int rc = parse_sub("tlmd migrate", MIGRATE_OPTS, argc, argv, &mo);
    if (rc >= 0)
        return rc;
    if (!mo.db_path) {
        fprintf(stderr, "tlmd migrate: --db FILE is required (the database to upgrade)\n");
        return ORC_EXIT_USAGE;
    }
    if (check_db_path("tlmd migrate", mo.db_path))
        return ORC_EXIT_USAGE;
    tlm_err e = {0};
    if (access(mo.db_path, F_OK) != 0) {
        fprintf(stderr, "tlmd migrate: %s does not exist\n", mo.db_path);
        return ORC_EXIT_USAGE;
    }
    int lock = orc_lock_acquire(mo.db_path, &e);
    int from = 0;
    char backup[TLM_PATH_CAP + 32];
    rc = lock < 0 ? lock : db_upgrade(mo.db_path, &from, backup, sizeof backup, &e);
    if (lock >= 0)
        close(lock);
    if (rc) {
        fprintf(stderr, "tlmd migrate: %s\n", e.msg);
        return orc_exit_error(rc);
    }
    if (!backup[0])
        printf("tlmd migrate: %s is at schema version %d already; nothing to do\n", mo.db_path, from);
    else
        printf("tlmd migrate: %s migrated from schema version %d to %d; the old file is kept as %s\n", mo.db_path,
               from, DB_SCHEMA_VERSION, backup);
    return ORC_EXIT_OK;
}

/* `tlmd backup --db FILE --out FILE` */
static int backup_main(int argc, char **argv)
{
    db_cmd_opts bo = {0};
    int rc = parse_sub("tlmd backup", BACKUP_OPTS, argc, argv, &bo);
    if (rc >= 0)
        return rc;
    if (!bo.db_path || !bo.out) {
        fprintf(stderr, "tlmd backup: --db FILE and --out FILE are required (the database, and its copy: a new file)\n");
        return ORC_EXIT_USAGE;
    }
    tlm_err e = {0};
    if (check_db_path("tlmd backup", bo.db_path))
        return ORC_EXIT_USAGE;
    if (tlm_path_check_len("--out", bo.out, DB_PATH_MAX, &e)) {
        fprintf(stderr, "tlmd backup: %s\n", e.msg);
        return ORC_EXIT_USAGE;
    }
    if ((rc = db_backup(bo.db_path, bo.out, &e))) {
        fprintf(stderr, "tlmd backup: %s\n", e.msg);
        return orc_exit_error(rc);
    }
    printf("tlmd backup: %s copied to %s\n", bo.db_path, bo.out);
    return ORC_EXIT_OK;
}

/* What the options say together, and every path measured before it is
 * used: -1 to go on, else 2 (said on stderr). */
static int check_usage(const orc_opts *o, const tlm_cli *cli)
{
    if (!o->n_sweeps) {
        fprintf(stderr, "tlmd: --sweeps FILE|DIR is required\n");
        usage(stderr);
        return 2;
    }
    if (tlm_cli_given(cli, "progress") && tlm_cli_given(cli, "no-progress")) {
        fprintf(stderr, "tlmd: --progress and --no-progress contradict each other; give one\n");
        return 2;
    }
    if (check_db_path("tlmd", o->db_path))
        return 2;
    tlm_err pe;
    /* runs/<12 hex digits> must leave room for everything the worker writes under it */
    int bad = tlm_path_check_len("--runs", o->runs_dir, TLM_RUN_DIR_MAX - ORC_RUNDIR_NAME, &pe) ||
              tlm_path_not_file("--runs", o->runs_dir, "the folder that holds the run folders", &pe) ||
              (o->worker && (tlm_path_check_len("--worker", o->worker, TLM_PATH_CAP - 1, &pe) ||
                             tlm_path_not_dir("--worker", o->worker, "the tlm-worker program", &pe)));
    for (size_t i = 0; !bad && i < o->n_sweeps; i++)
        bad = tlm_path_check_len("--sweeps", o->sweeps[i], TLM_PATH_CAP - 1, &pe);
    if (bad) {
        fprintf(stderr, "tlmd: %s\n", pe.msg);
        return 2;
    }
    for (size_t i = 0; o->dry_run && OPTS[i].name; i++)
        if (cli->given[i] && (OPTS[i].flags & RUN_ONLY))
            fprintf(stderr, "tlmd: --%s does nothing with --dry-run (it only lists the jobs); ignored\n", OPTS[i].name);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], ORC_SHIM_ARG))
        return orc_shim_main(argc, argv);
    if (argc > 1 && !strcmp(argv[1], ORC_SLURM_JOB_ARG))
        return orc_slurm_job_main(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "status"))
        return status_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "migrate"))
        return migrate_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "backup"))
        return backup_main(argc - 1, argv + 1);

    orc_opts o = {0};
    orc_resources_init(&o.res);
    tlm_cli cli = {.cmd = "tlmd", .opts = OPTS};
    int status = parse_args(&cli, argc, argv, &o);
    if (status < 0)
        status = check_usage(&o, &cli);
    if (status >= 0)
        return done(o.sweeps, status);
    tlm_err e = {0};
    if (o.dry_run) {
        int rc = orc_plan_dry_run(&o, stdout, &e);
        status = orc_exit_of(rc);
    } else {
        status = orc_daemon_run(&o, &e);
    }
    if (status >= 2 && status != 75 && e.msg[0])
        fprintf(stderr, "tlmd: %s\n", e.msg);
    return done(o.sweeps, status);
}
