/* test_cli.c: common/cli.c, the command-line table every program declares
 * its options in: defaults, each type of row, the messages of bad
 * options (the programs print them as they are, and scripts/trial.sh
 * checks them), GNU's conventions (operands between options, --x=v,
 * prefixes), and --help made from the rows. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "tests/lib/tap.h"

typedef struct opts {
    const char **files;
    size_t n_files;
    const char *db, *mode;
    int workers, dry, progress, level;
    double grace;
    const char *seen_by; /* the FUNC row that stored */
} opts;

static int level_arg(const tlm_opt *row, const char *val, void *o, tlm_err *e)
{
    if (strcmp(val, "low") && strcmp(val, "high"))
        return tlm_errf(e, TLM_ECONFIG, "--%s %s: low or high, please", row->name, val);
    ((opts *)o)->level = val[0] == 'h';
    ((opts *)o)->seen_by = row->name;
    return 0;
}

static const char *const MODES[] = {"local", "slurm", "cloud", NULL};
#define HIDDEN TLM_OPT_MARK(0)
#define O(m) offsetof(opts, m)
static const tlm_opt ROWS[] = {
    {"files", "FILE|DIR", TLM_OPT_LIST, O(files), .count = O(n_files), .flags = TLM_OPT_REQUIRED | TLM_OPT_REPEAT,
     .help = "a file or a folder; repeatable"},
    {"db", "FILE", TLM_OPT_STR, O(db), .def = "results.db", .help = "the database"},
    {"workers", "N", TLM_OPT_INT, O(workers), .lo = 1, .hi = 256, .def = "4",
     .help = "workers at a time, a help text long enough to be wrapped onto a second line and then a third one "
             "as well"},
    {"grace", "S", TLM_OPT_NUM, O(grace), .lo = 0, .hi = 1e6, .def = "10", .flags = HIDDEN, .help = "seconds"},
    {"mode", NULL, TLM_OPT_CHOICE, O(mode), .choices = MODES, .def = "local", .help = "where"},
    {"level", "L", TLM_OPT_FUNC, O(level), .parse = level_arg, .help = "low or high"},
    {"dry-run", NULL, TLM_OPT_FLAG, O(dry), .letter = 'n', .help = "list and exit"},
    {"progress", NULL, TLM_OPT_FLAG, O(progress), .def = "-1", .help = "live view"},
    {"no-progress", NULL, TLM_OPT_OFF, O(progress), .help = "no live view"},
    {"grade", "G", TLM_OPT_STR, O(mode), .help = NULL}, /* no help: not in --help (a test's option) */
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};

static char *argv[32];

/* Parses the NULL-terminated words into argv (argv[0] is "prog"): rc, and
 * the message in msg. */
static int run(tlm_cli *c, opts *o, char *msg, const char *const *words)
{
    int argc = 0;
    argv[argc++] = (char *)"prog";
    for (; *words; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    free(o->files);
    memset(o, 0, sizeof *o);
    memset(c, 0, sizeof *c);
    c->cmd = "prog";
    c->opts = ROWS;
    c->col = 16;
    c->operands = "IN...";
    tlm_err e = {0};
    int rc = tlm_cli_parse(c, argc, argv, o, &e);
    strcpy(msg, rc < 0 ? e.msg : "");
    return rc;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int says(int rc, const char *msg, const char *want)
{
    if (rc != TLM_ECONFIG || strcmp(msg, want))
        TAP_DIAG("rc %d, got '%s', want '%s'", rc, msg, want);
    return rc == TLM_ECONFIG && !strcmp(msg, want);
}

static void test_values(void)
{
    tlm_cli c;
    opts o = {0};
    char m[TLM_MSG_MAX];
    int rc = run(&c, &o, m, ARGS("--files", "a.yaml"));
    TAP_OK(rc == 0 && !strcmp(o.db, "results.db") && o.workers == 4 && o.grace == 10 && !strcmp(o.mode, "local") &&
               o.progress == -1 && o.dry == 0,
           "every row's default is set before parsing");
    rc = run(&c, &o, m,
             ARGS("in1", "--files", "a.yaml", "--db=x.db", "--workers", "2e1", "--grace", "0.5", "--mode", "slurm",
                  "--level", "high", "-n", "--no-progress", "--files", "b", "in2"));
    TAP_OK(rc == 0 && o.n_files == 2 && !strcmp(o.files[0], "a.yaml") && !strcmp(o.files[1], "b") && !o.files[2] &&
               !strcmp(o.db, "x.db") && o.workers == 20 && o.grace == 0.5 && !strcmp(o.mode, "slurm") &&
               o.mode == MODES[1] && o.level == 1 && !strcmp(o.seen_by, "level") && o.dry == 1 && o.progress == 0,
           "each type stores its value; a list adds up; --x=v; a letter; 2e1 is the integer 20");
    TAP_OK(c.next == 16 && !strcmp(argv[16], "in1") && !strcmp(argv[17], "in2"),
           "operands are moved after the options, in order: next = %d", c.next);
    TAP_OK(tlm_cli_given(&c, "files") == 2 && tlm_cli_given(&c, "workers") == 1 && tlm_cli_given(&c, "help") == 0 &&
               tlm_cli_given(&c, "nonesuch") == 0,
           "given counts each option");
    rc = run(&c, &o, m, ARGS("--work", "3", "--dry", "--dry-run", "--files", "x", "--files", "x"));
    TAP_OK(rc == 0 && o.workers == 3 && o.dry == 1 && o.n_files == 2,
           "an unambiguous prefix; a flag twice; a repeatable option twice");
    rc = run(&c, &o, m, ARGS("--files", "a", "--", "--db"));
    TAP_OK(rc == 0 && !strcmp(o.db, "results.db") && c.next == 4, "-- ends the options");
    rc = run(&c, &o, m, ARGS("--workers", "2", "-h", "--bogus"));
    TAP_OK(rc == TLM_CLI_HELP, "-h: TLM_CLI_HELP, the rest unread");
    rc = run(&c, &o, m, ARGS("--help"));
    TAP_OK(rc == TLM_CLI_HELP, "--help");
    free(o.files);
}

static void test_messages(void)
{
    tlm_cli c;
    opts o = {0};
    char m[TLM_MSG_MAX];
    TAP_OK(says(run(&c, &o, m, ARGS("--bogus")), m, "unrecognized option '--bogus' (try prog --help)"), "unknown");
    TAP_OK(says(run(&c, &o, m, ARGS("--bogus=1")), m, "unrecognized option '--bogus=1' (try prog --help)"),
           "unknown, with a value");
    TAP_OK(says(run(&c, &o, m, ARGS("-xyz")), m, "invalid option -- 'x' (try prog --help)"),
           "an unknown letter, as getopt says it");
    TAP_OK(says(run(&c, &o, m, ARGS("--files", "a", "--db")), m, "option '--db' requires an argument (try prog --help)"),
           "a missing value");
    TAP_OK(says(run(&c, &o, m, ARGS("--dry-run=yes")), m,
                "option '--dry-run' doesn't allow an argument (try prog --help)"),
           "a value for a flag");
    TAP_OK(says(run(&c, &o, m, ARGS("--gr", "1")), m, "option '--gr' is ambiguous: --grace, --grade (try prog --help)"),
           "an ambiguous prefix names the options it could be");
    TAP_OK(says(run(&c, &o, m, ARGS("--db", "a", "--db", "b")), m, "--db is given twice; give it once"), "twice");
    TAP_OK(says(run(&c, &o, m, ARGS("--workers", "1.5")), m,
                "--workers 1.5: not an integer (expected an integer from 1 to 256)"),
           "not an integer");
    TAP_OK(says(run(&c, &o, m, ARGS("--workers", "9223372036854775807")), m,
                "--workers 9223372036854775807: out of range (expected an integer from 1 to 256)"),
           "out of range");
    TAP_OK(says(run(&c, &o, m, ARGS("--workers", "12345678901234567890123456")), m,
                "--workers 12345678901234567890123456: out of range (expected an integer from 1 to 256)"),
           "26 digits: out of range");
    TAP_OK(says(run(&c, &o, m, ARGS("--grace", "0x10")), m, "--grace 0x10: not a number (expected a number from 0 to 1e6)"),
           "hex is not a number");
    TAP_OK(says(run(&c, &o, m, ARGS("--grace", "nan")), m, "--grace nan: not a number (expected a number from 0 to 1e6)") &&
               says(run(&c, &o, m, ARGS("--grace", "inf")), m,
                    "--grace inf: not a number (expected a number from 0 to 1e6)") &&
               says(run(&c, &o, m, ARGS("--grace", "1,5")), m,
                    "--grace 1,5: not a number (expected a number from 0 to 1e6)"),
           "nan, inf and a decimal comma are not numbers");
    TAP_OK(says(run(&c, &o, m, ARGS("--grace", "-1")), m, "--grace -1: out of range (expected a number from 0 to 1e6)"),
           "a number out of range");
    TAP_OK(says(run(&c, &o, m, ARGS("--mode", "grid")), m, "--mode grid: expected local, slurm or cloud"),
           "a choice lists the values");
    char *av[] = {(char *)"prog", (char *)"--db", (char *)"x", (char *)"extra", NULL};
    tlm_cli none = {.cmd = "prog", .opts = ROWS};
    tlm_err e = {0};
    TAP_OK(tlm_cli_parse(&none, 4, av, &o, &e) == TLM_ECONFIG &&
               !strcmp(e.msg, "unexpected argument 'extra' (try prog --help)"),
           "a command without operands refuses one: %s", e.msg);
    TAP_OK(says(run(&c, &o, m, ARGS("--level", "mid")), m, "--level mid: low or high, please"),
           "a FUNC row's own message");
}

static void test_helpers(void)
{
    int64_t v = 0;
    double d = 0;
    tlm_err e = {0};
    TAP_OK(tlm_cli_arg_int("--vocab", "300.5", 257, 1 << 20, &v, &e) == TLM_ECONFIG &&
               !strcmp(e.msg, "--vocab 300.5: not an integer (expected an integer from 257 to 2^20)"),
           "%s", e.msg);
    TAP_OK(tlm_cli_arg_int("--n", "9007199254740993", 0, INT64_MAX, &v, &e) == 0 && v == 9007199254740993LL,
           "integers are read exactly");
    TAP_OK(tlm_cli_arg_int("--n", "1e30", 0, 1000, &v, &e) == TLM_ECONFIG && strstr(e.msg, "out of range"), "%s", e.msg);
    TAP_OK(tlm_cli_arg_number("--s", "1e400", 0, 1e6, &d, &e) == TLM_ECONFIG && strstr(e.msg, "out of range"), "%s",
           e.msg);
    TAP_OK(tlm_cli_arg_number("--s", "2.5e2", 0, 1e6, &d, &e) == 0 && d == 250, "2.5e2 is 250");
    TAP_OK(tlm_cli_choice(MODES, "cloud") == 2 && tlm_cli_choice(MODES, "Cloud") == -1, "tlm_cli_choice");
}

static void test_broken_table(void)
{
    static const tlm_opt BAD[] = {{"n", "N", TLM_OPT_INT, 0, .lo = 1, .hi = 9, .def = "10"}, {0}};
    int x = 0;
    char *av[] = {(char *)"prog", NULL};
    tlm_cli c = {.cmd = "prog", .opts = BAD};
    tlm_err e = {0};
    TAP_OK(tlm_cli_parse(&c, 1, av, &x, &e) == TLM_EINTERNAL && strstr(e.msg, "--n"),
           "a default out of its own range is the program's bug: %s", e.msg);
}

static char *help_text(void (*fn)(FILE *, const tlm_cli *, const char *), const char *lead, unsigned hide)
{
    static char buf[8192];
    tlm_cli c = {.cmd = "prog", .opts = ROWS, .col = 16, .operands = "INPUT...", .hide = hide};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (fn)
        fn(f, &c, lead);
    else
        tlm_cli_options(f, &c);
    fclose(f);
    return buf;
}

static int lines_fit(const char *s)
{
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > 79)
            return 0;
        p += n + (p[n] == '\n');
    }
    return 1;
}

static void test_help(void)
{
    char *syn = help_text(tlm_cli_synopsis, "usage: ", 0);
    TAP_DIAG("%s", syn);
    TAP_OK(!strncmp(syn, "usage: prog --files FILE|DIR [--files ...] [--db results.db] [--workers 4]", 72) &&
               strstr(syn, "[--mode local]") && strstr(syn, "[--level L]") && strstr(syn, "[--dry-run]") &&
               !strstr(syn, "grade") && !strstr(syn, "--help") && strstr(syn, "[--no-progress] INPUT...\n") &&
               lines_fit(syn),
           "the synopsis: required, defaults, placeholders and flags, no hidden option, the operands, within 79 "
           "columns");
    TAP_OK(strstr(syn, "\n            [--") != NULL, "the synopsis goes on under the first option");
    char *opt = help_text(NULL, NULL, 0);
    TAP_DIAG("%s", opt);
    TAP_OK(strstr(opt, "  --db FILE     the database (default results.db)\n") &&
               strstr(opt, "  --mode local|slurm|cloud\n                where (default local)\n") &&
               strstr(opt, "  -n, --dry-run\n                list and exit\n") &&
               strstr(opt, "  -h, --help    this text\n") && strstr(opt, "  --progress    live view\n") &&
               !strstr(opt, "grade") && lines_fit(opt),
           "an option a line: its help from the column, its default, long names on a line of their own");
    TAP_OK(strstr(opt, "  --workers N   workers at a time, a help text long enough to be wrapped onto a\n"
                       "                second line and then a third one as well (default 4)\n"),
           "long help goes on from the help column, wrapped at a space");
    syn = help_text(tlm_cli_synopsis, "usage: ", HIDDEN);
    TAP_OK(!strstr(syn, "[--grace") && strstr(syn, "[--mode local]"), "a hidden mark: not in the synopsis");
    opt = help_text(NULL, NULL, HIDDEN);
    TAP_OK(!strstr(opt, "--grace") && strstr(opt, "--mode"), "nor in the options");
}

int main(void)
{
    test_values();
    test_messages();
    test_helpers();
    test_broken_table();
    test_help();
    return tap_done();
}
