/* main.c: tlmd's command line (its contract: docs/tlmd.md).
 * Parses options, then runs the daemon, a dry run, or `tlmd status`;
 * the only place that decides tlmd's exit status.  Also the entry of the
 * exec shim (shim.h) when tlmd re-executes itself to start a worker. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "common/fileio.h"
#include "orchestrator/daemon.h"
#include "orchestrator/plan.h"
#include "orchestrator/rundir.h"
#include "orchestrator/shim.h"
#include "orchestrator/slurm_job.h"
#include "orchestrator/status.h"

/* Every option's default: what main() starts from and --help says. */
static const orc_opts DEFAULTS = {
    .db_path = DB_DEFAULT_PATH, .runs_dir = "runs", .devices = "auto", .max_attempts = 3,
    .max_machine_faults = 10, .retry_delay = 10, .retry_delay_max = 300,
    .heartbeat_timeout = 120, .stall_timeout = 1800, .kill_grace = 10, .progress = -1,
    .executor = "local", .slurm_poll = 15, .slurm_max_jobs = 100, .slurm_signal = 300,
};

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
    const orc_opts *d = &DEFAULTS;
    fprintf(f,
            "usage: tlmd --sweeps FILE|DIR [--sweeps ...] [--db %s] [--runs %s/]\n"
            "            [--devices auto|cpu|0,1,...] [--workers N] [--threads-per-worker N]\n"
            "            [--max-attempts %d] [--max-machine-faults %d] [--retry-delay %g]\n"
            "            [--retry-delay-max %g] [--heartbeat-timeout %g] [--stall-timeout %g]\n"
            "            [--kill-grace %g] [--worker PATH] [--dry-run] [--rerun] [--retry-failed]\n"
            "            [--adopt-runs] [--progress|--no-progress]\n"
            "            [--executor local|slurm] [--gpus N] [--cpus-per-job N] [--time T]\n"
            "            [--partition P] [--account A] [--qos Q] [--sbatch-arg ARG]\n"
            "            [--slurm-poll S] [--slurm-max-jobs N] [--slurm-signal-before S]\n"
            "       tlmd status [--db %s] [--sweep NAME] [--summary]\n"
            "\n"
            "Trains every job of the sweeps (docs/sweeps.md) with tlm-worker, records\n"
            "everything in %s, and exits 0 once every job is done.\n"
            "\n"
            "  --sweeps FILE|DIR        a sweep file, or a folder of *.yaml sweeps; repeatable\n"
            "  --db FILE                the results database (default %s)\n"
            "  --runs DIR               run folders, %s/<job id> (default %s)\n",
            d->db_path, d->runs_dir, d->max_attempts, d->max_machine_faults, d->retry_delay, d->retry_delay_max,
            d->heartbeat_timeout, d->stall_timeout, d->kill_grace, d->db_path, d->db_path, d->db_path, d->runs_dir,
            d->runs_dir);
    fprintf(f,
            "  --devices auto|cpu|IDS   GPUs to use, one worker each (auto: every GPU when built\n"
            "                           with CUDA, else the CPU)\n"
            "  --workers N              CPU workers at a time (default: cores / threads-per-worker, or 1)\n"
            "  --threads-per-worker N   compute threads per worker (default: cores / workers)\n"
            "  --max-attempts N         failed attempts before a job fails for good (default %d)\n"
            "  --max-machine-faults N   attempts in a row that the machine fails (I/O, disk full, permissions,\n"
            "                           the worker cannot start) before a job fails; not counted in\n"
            "                           --max-attempts (default %d)\n"
            "  --retry-delay S          wait before retrying a failed attempt, doubled at each failure in a\n"
            "                           row (default %g)\n"
            "  --retry-delay-max S      the longest wait (default %g)\n"
            "  --heartbeat-timeout S    a worker silent this long is stopped and retried (default %g)\n"
            "  --stall-timeout S        a worker whose heartbeats show no progress this long is stuck: stopped\n"
            "                           and retried (default %g; 0: off)\n"
            "  --kill-grace S           SIGTERM to SIGKILL delay for a stopped worker (default %g)\n"
            "  --worker PATH            the tlm-worker to run (default: beside tlmd, or $TLM_WORKER)\n"
            "  --dry-run                list the jobs (id, axes, d_ff, params, FLOPs, new/done/...) and exit\n"
            "  --rerun                  train again jobs that are done or failed (their checkpoints are set aside)\n"
            "  --retry-failed           try again jobs that failed for good (",
            d->max_attempts, d->max_machine_faults, d->retry_delay, d->retry_delay_max, d->heartbeat_timeout,
            d->stall_timeout, d->kill_grace);
    final_kinds(f);
    fprintf(f, "), after a fix\n"
               "  --adopt-runs             let --db take over a --runs folder that belongs to another database\n"
               "  --progress, --no-progress  live view (default: when stdout is a terminal)\n"
               "  --executor local|slurm   how attempts run: worker processes here, or one sbatch each\n"
               "                           (default %s)\n"
               "  --gpus N, --cpus-per-job N, --time T, --partition P, --account A, --qos Q,\n"
               "  --sbatch-arg ARG         slurm: what each job asks for, unless its sweep's resources:\n"
               "                           block says otherwise (--sbatch-arg is repeatable)\n"
               "  --slurm-poll S           slurm: one squeue for the whole sweep this often (default %g)\n"
               "  --slurm-max-jobs N       slurm: jobs queued or running at a time (default %d)\n"
               "  --slurm-signal-before S  slurm: the checkpoint signal this long before a job's time\n"
               "                           limit (default %g)\n"
               "\n"
               "  status                   print the state of every sweep and job in the database\n"
               "    --sweep NAME           only this sweep;  --summary: sweeps only, no jobs\n"
               "\n"
               "Exit status: 0 every job done; 1 some job failed; 2 bad usage or sweep file;\n"
               "3 database or internal error; 75 stopped by a signal (run it again to resume).\n",
               d->executor, d->slurm_poll, d->slurm_max_jobs, d->slurm_signal);
}

static int num_arg(const char *opt, const char *s, double lo, double hi, double *out)
{
    tlm_err e;
    if (tlm_cfg_arg_number(opt, s, lo, hi, out, &e)) {
        fprintf(stderr, "tlmd: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int int_arg(const char *opt, const char *s, int64_t lo, int64_t hi, int *out)
{
    tlm_err e;
    int64_t v;
    if (tlm_cfg_arg_int(opt, s, lo, hi, &v, &e)) {
        fprintf(stderr, "tlmd: %s\n", e.msg);
        return -1;
    }
    *out = (int)v;
    return 0;
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

/* main's way out of the option loop: the sweep list is its only allocation */
static int done(const char **sweeps, int status)
{
    free(sweeps);
    return status;
}

static int status_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},   {"sweep", required_argument, 0, 's'},
        {"summary", no_argument, 0, 'S'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *db_path = DEFAULTS.db_path, *sweep = NULL;
    int jobs = 1;
    unsigned char given[sizeof opts / sizeof opts[0]] = {0};
    optind = 1;
    for (int ch, li = -1; (ch = getopt_long(argc, argv, "h", opts, &li)) != -1; li = -1) {
        if (li >= 0 && given[li]++ && opts[li].has_arg) {
            fprintf(stderr, "tlmd status: --%s is given twice; give it once\n", opts[li].name);
            return 2;
        }
        switch (ch) {
        case 'd': db_path = optarg; break;
        case 's': sweep = optarg; break;
        case 'S': jobs = 0; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlmd status: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (check_db_path("tlmd status", db_path))
        return 2;
    tlm_err e = {0};
    if (orc_status(db_path, sweep, jobs, stdout, &e)) {
        fprintf(stderr, "tlmd status: %s\n", e.msg);
        return orc_exit_error(e.code);
    }
    return 0;
}

static const struct option OPTS[] = {
    {"sweeps", required_argument, 0, 's'},
    {"db", required_argument, 0, 'd'},
    {"runs", required_argument, 0, 'r'},
    {"devices", required_argument, 0, 'D'},
    {"workers", required_argument, 0, 'w'},
    {"threads-per-worker", required_argument, 0, 't'},
    {"max-attempts", required_argument, 0, 'm'},
    {"heartbeat-timeout", required_argument, 0, 'H'},
    {"kill-grace", required_argument, 0, 'k'},
    {"max-machine-faults", required_argument, 0, 'M'},
    {"retry-delay", required_argument, 0, 'y'},
    {"retry-delay-max", required_argument, 0, 'Y'},
    {"stall-timeout", required_argument, 0, 'S'},
    {"retry-failed", no_argument, 0, 'F'},
    {"adopt-runs", no_argument, 0, 'A'},
    {"worker", required_argument, 0, 'W'},
    {"dry-run", no_argument, 0, 'n'},
    {"rerun", no_argument, 0, 'R'},
    {"progress", no_argument, 0, 'p'},
    {"no-progress", no_argument, 0, 'P'},
    {"executor", required_argument, 0, 'X'},
    {"gpus", required_argument, 0, 'G'},
    {"cpus-per-job", required_argument, 0, 'C'},
    {"time", required_argument, 0, 'T'},
    {"partition", required_argument, 0, 'Q'},
    {"account", required_argument, 0, 'a'},
    {"qos", required_argument, 0, 'q'},
    {"sbatch-arg", required_argument, 0, 'B'},
    {"slurm-poll", required_argument, 0, 'L'},
    {"slurm-max-jobs", required_argument, 0, 'J'},
    {"slurm-signal-before", required_argument, 0, 'g'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* --time, --partition, --account, --qos and --sbatch-arg: the slurm
 * executor's defaults, each value checked before it can reach sbatch.
 * 0, or -1 when refused (said on stderr). */
static int resource_arg(orc_opts *o, int ch, const char *val)
{
    tlm_err ae;
    switch (ch) {
    case 'T':
    case 'Q':
    case 'a':
    case 'q': {
        const char *what = ch == 'T' ? "--time" : ch == 'Q' ? "--partition" : ch == 'a' ? "--account" : "--qos";
        char *dst = ch == 'T' ? o->res.time : ch == 'Q' ? o->res.partition : ch == 'a' ? o->res.account : o->res.qos;
        size_t cap = ch == 'T' ? sizeof o->res.time : sizeof o->res.partition;
        if ((ch == 'T' ? orc_res_check_time(what, val, &ae) : orc_res_check_name(what, val, &ae))) {
            fprintf(stderr, "tlmd: %s\n", ae.msg);
            return -1;
        }
        snprintf(dst, cap, "%s", val);
        return 0;
    }
    case 'B':
        if (orc_res_check_extra("--sbatch-arg", val, &ae)) {
            fprintf(stderr, "tlmd: %s\n", ae.msg);
            return -1;
        }
        if (o->res.n_extra < 0)
            o->res.n_extra = 0;
        if (o->res.n_extra == ORC_RES_EXTRA_MAX) {
            fprintf(stderr, "tlmd: --sbatch-arg: more than %d\n", ORC_RES_EXTRA_MAX);
            return -1;
        }
        snprintf(o->res.extra[o->res.n_extra++], ORC_RES_ARG_MAX, "%s", val);
        break;
    }
    return 0;
}

/* The options into o (sweeps: room for argc names): -1 to go on, else the
 * exit status (--help: 0, usage errors: 2, said on stderr). */
static int parse_args(int argc, char **argv, orc_opts *o, const char **sweeps, unsigned char *given)
{
    double v;
    for (int ch, li = -1; (ch = getopt_long(argc, argv, "hn", OPTS, &li)) != -1; li = -1) {
        /* a second value would silently replace the first (--sweeps adds up) */
        if (li >= 0 && given[li]++ && OPTS[li].has_arg && ch != 's' && ch != 'B') {
            fprintf(stderr, "tlmd: --%s is given twice; give it once\n", OPTS[li].name);
            return 2;
        }
        switch (ch) {
        case 's': sweeps[o->n_sweeps++] = optarg; break;
        case 'd': o->db_path = optarg; break;
        case 'r': o->runs_dir = optarg; break;
        case 'D': o->devices = optarg; break;
        case 'w':
            if (int_arg("--workers", optarg, 1, 256, &o->workers))
                return 2;
            break;
        case 't':
            if (int_arg("--threads-per-worker", optarg, 1, 4096, &o->threads_per_worker))
                return 2;
            break;
        case 'm':
            if (int_arg("--max-attempts", optarg, 1, 1000, &o->max_attempts))
                return 2;
            break;
        case 'H':
            if (num_arg("--heartbeat-timeout", optarg, 1, 1e6, &v))
                return 2;
            o->heartbeat_timeout = v;
            break;
        case 'k':
            if (num_arg("--kill-grace", optarg, 0, 1e6, &v))
                return 2;
            o->kill_grace = v;
            break;
        case 'M':
            if (int_arg("--max-machine-faults", optarg, 1, 1000, &o->max_machine_faults))
                return 2;
            break;
        case 'y':
            if (num_arg("--retry-delay", optarg, 0, 86400, &v))
                return 2;
            o->retry_delay = v;
            break;
        case 'Y':
            if (num_arg("--retry-delay-max", optarg, 0, 86400, &v))
                return 2;
            o->retry_delay_max = v;
            break;
        case 'S':
            if (num_arg("--stall-timeout", optarg, 0, 1e7, &v))
                return 2;
            o->stall_timeout = v;
            break;
        case 'F': o->retry_failed = 1; break;
        case 'A': o->adopt_runs = 1; break;
        case 'W': o->worker = optarg; break;
        case 'n': o->dry_run = 1; break;
        case 'R': o->rerun = 1; break;
        case 'p': o->progress = 1; break;
        case 'P': o->progress = 0; break;
        case 'X':
            if (strcmp(optarg, "local") && strcmp(optarg, "slurm")) {
                fprintf(stderr, "tlmd: --executor %s: expected local or slurm\n", optarg);
                return 2;
            }
            o->executor = optarg;
            break;
        case 'G':
            if (int_arg("--gpus", optarg, 0, 64, &o->res.gpus))
                return 2;
            break;
        case 'C':
            if (int_arg("--cpus-per-job", optarg, 1, 4096, &o->res.cpus))
                return 2;
            break;
        case 'T':
        case 'Q':
        case 'a':
        case 'q':
        case 'B':
            if (resource_arg(o, ch, optarg))
                return 2;
            break;
        case 'L':
            if (num_arg("--slurm-poll", optarg, 0.1, 3600, &v))
                return 2;
            o->slurm_poll = v;
            break;
        case 'J':
            if (int_arg("--slurm-max-jobs", optarg, 1, ORC_MAX_SLOTS, &o->slurm_max_jobs))
                return 2;
            break;
        case 'g':
            if (num_arg("--slurm-signal-before", optarg, 0, 65535, &v))
                return 2;
            o->slurm_signal = v;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlmd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return -1;
}

static int given_val(const unsigned char *given, int val)
{
    for (int k = 0; OPTS[k].name; k++)
        if (OPTS[k].val == val)
            return given[k];
    return 0;
}

/* What the options say together, and every path measured before it is
 * used: -1 to go on, else 2 (said on stderr). */
static int check_usage(const orc_opts *o, const unsigned char *given)
{
    if (!o->n_sweeps) {
        fprintf(stderr, "tlmd: --sweeps FILE|DIR is required\n");
        usage(stderr);
        return 2;
    }
    if (given_val(given, 'p') && given_val(given, 'P')) {
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
    if (o->dry_run) {
        /* a dry run of the very command line that will train is the natural use: say what it ignores */
        static const int run_only[] = {'r', 'D', 'w', 't', 'm', 'H', 'k', 'W', 'p', 'P', 0};
        for (int i = 0; run_only[i]; i++)
            for (int k = 0; OPTS[k].name; k++)
                if (OPTS[k].val == run_only[i] && given[k])
                    fprintf(stderr, "tlmd: --%s does nothing with --dry-run (it only lists the jobs); ignored\n",
                            OPTS[k].name);
    }
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

    orc_opts o = DEFAULTS;
    orc_resources_init(&o.res);
    const char **sweeps = calloc((size_t)argc, sizeof *sweeps);
    if (!sweeps)
        return 3;
    o.sweeps = sweeps;
    unsigned char given[N_OPTS] = {0};
    int status = parse_args(argc, argv, &o, sweeps, given);
    if (status < 0)
        status = check_usage(&o, given);
    if (status >= 0)
        return done(sweeps, status);
    tlm_err e = {0};
    if (o.dry_run) {
        int rc = orc_plan_dry_run(&o, stdout, &e);
        status = orc_exit_of(rc);
    } else {
        status = orc_daemon_run(&o, &e);
    }
    if (status >= 2 && status != 75 && e.msg[0])
        fprintf(stderr, "tlmd: %s\n", e.msg);
    return done(sweeps, status);
}
