/* cli.h: a program's command line as a table, one row per option, the way
 * the job config's keys are (engine/config/config.c's FIELDS; Redis's
 * standardConfig is the model): the row is the option's name, its field,
 * type, bounds, default and help, and the parser, the defaults and the
 * --help text are all made from the rows.  Every program (tlmd,
 * tlm-worker, tlm-report, tlm-dash, tlm-data) declares its options so.
 *
 *     #define O(m) offsetof(my_opts, m)
 *     static const tlm_opt OPTS[] = {
 *         {"workers", "N", TLM_OPT_INT, O(workers), .lo = 1, .hi = 256, .def = "1",
 *          .help = "workers at a time"},
 *         {"dry-run", NULL, TLM_OPT_FLAG, O(dry_run), .help = "list the jobs and exit"},
 *         {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
 *         {0},
 *     };
 *     tlm_cli cli = {.cmd = "prog", .opts = OPTS, .col = 20};
 *     int rc = tlm_cli_parse(&cli, argc, argv, &opts, &e);
 *
 * What a row cannot say (options that contradict each other, the options a
 * mode ignores, paths measured against the system's limits) the program
 * checks after parsing, with cli.given and the rows' own marks.
 * Must not: print (the program words and prints every message), exit. */
#ifndef TLM_COMMON_CLI_H
#define TLM_COMMON_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

typedef enum tlm_opt_type {
    TLM_OPT_HELP,   /* --help: tlm_cli_parse stops and returns TLM_CLI_HELP */
    TLM_OPT_FLAG,   /* no value: the int field becomes 1 */
    TLM_OPT_OFF,    /* no value: the int field becomes 0 (--no-progress) */
    TLM_OPT_STR,    /* const char *: the value as given */
    TLM_OPT_LIST,   /* const char **: every value given, in order, in an array the parser allocates (room
                     * for all of argv, NULL-terminated; the program frees it); size_t count at .count */
    TLM_OPT_INT,    /* int: an integer in [lo, hi], any decimal spelling (2, 2.0, 2e0) */
    TLM_OPT_NUM,    /* double: a finite decimal in [lo, hi] (no nan, inf or hex) */
    TLM_OPT_CHOICE, /* const char *: the one of .choices given (the array's own string) */
    TLM_OPT_FUNC,   /* .parse reads the value into the options */
} tlm_opt_type;

/* Marks of a row (tlm_opt.flags). */
#define TLM_OPT_REPEAT 1u   /* may be given again, each value adding (else "--x is given twice") */
#define TLM_OPT_REQUIRED 2u /* shown without brackets in the synopsis; the program checks that it was given,
                             * in its own words (what is required can depend on the mode) */
/* The program's own marks, from bit 8: the modes an option goes with,
 * tlmd's "does nothing with --dry-run"... */
#define TLM_OPT_MARK(k) (1u << (8 + (k)))

typedef struct tlm_opt tlm_opt;
struct tlm_opt {
    const char *name;  /* "workers" is --workers; NULL ends the table */
    const char *arg;   /* the value's name in --help ("N", "FILE|DIR"); NULL for HELP, FLAG, OFF */
    tlm_opt_type type;
    size_t off;        /* the field: offsetof(the program's options struct, field) */
    double lo, hi;     /* INT, NUM: the range, both ends included */
    const char *def;   /* the default, as a user would write the value: set before parsing, and said
                        * by --help as "(default DEF)" (FLAG, OFF: the int it starts from, not said);
                        * NULL: none (the field keeps what the program put there) */
    const char *help;  /* what it does, for --help (wrapped there; "\n" breaks a line); NULL: not in
                        * --help (an option for tests and scripts) */
    const char *const *choices; /* CHOICE: the values accepted, NULL-terminated */
    size_t count;      /* LIST: offsetof the size_t count of values */
    /* FUNC: reads val into opts (the row says which option it is), or says why not (TLM_ECONFIG,
     * the message naming the option) */
    int (*parse)(const tlm_opt *row, const char *val, void *opts, tlm_err *e);
    unsigned flags;    /* TLM_OPT_REPEAT, TLM_OPT_REQUIRED, TLM_OPT_MARK(k) */
    char letter;       /* a one-letter spelling too ('h': -h); 0: none */
};

/* Rows a table may have: tlm_cli.given has one entry each. */
#define TLM_CLI_MAX 64

/* One command's line: its table, and what tlm_cli_parse found. */
typedef struct tlm_cli {
    const char *cmd;       /* the command as people type it, for the synopsis and hints: "tlmd",
                            * "tlmd status", "tlm-data build" */
    const tlm_opt *opts;   /* the rows, ended by one whose name is NULL */
    int col;               /* --help: the column each option's help starts at */
    const char *operands;  /* what the command takes after its options, for the synopsis ("INPUT...");
                            * NULL: nothing (an operand is refused) */
    unsigned hide;         /* rows with any of these marks are read but left out of --help (an option
                            * this command refuses by name, one of a sibling command's) */
    unsigned char given[TLM_CLI_MAX]; /* filled by tlm_cli_parse: per row, the times given (at most 255) */
    int next;              /* filled by tlm_cli_parse: argv's index of the first operand */
} tlm_cli;

enum { TLM_CLI_HELP = 1 };

/* Sets every row's default in opts, then reads argv[1..argc) into it:
 * 0; TLM_CLI_HELP when --help was given (the rest is not read); or
 * TLM_ECONFIG with the reason in e, worded for "PROG: " in front:
 *
 *     unrecognized option '--bogus' (try tlmd --help)
 *     invalid option -- 'c' (try tlmd --help)            (-config: one dash)
 *     option '--db' requires an argument (try tlmd --help)
 *     option '--dry-run' doesn't allow an argument (try tlmd --help)
 *     option '--s' is ambiguous: --sweeps, --stall-timeout, ... (try tlmd --help)
 *     --db is given twice; give it once
 *     --workers 1.5: not an integer (expected an integer from 1 to 256)
 *     --kill-grace 0x10: not a number (expected a number from 0 to 1e6)
 *     --executor x: expected local or slurm
 *     unexpected argument 'extra' (try tlmd --help)     (c->operands NULL)
 *
 * Operands may come between options (GNU getopt's order); they are moved
 * to argv[c->next, argc).  Options may be shortened to any unambiguous
 * prefix, and written --name=value.  TLM_EINTERNAL for a broken table (a
 * default out of its own range, more than TLM_CLI_MAX rows); TLM_ENOMEM. */
int tlm_cli_parse(tlm_cli *c, int argc, char **argv, void *opts, tlm_err *e);

/* How many times the option called name was given (0 when the table has
 * no such row). */
int tlm_cli_given(const tlm_cli *c, const char *name);

/* The synopsis, wrapped before column 80: lead, the command, then each
 * option with help: "--name ARG" when it is required, "[--name DEF]" with
 * its default, "[--name ARG]" without, "[--name]" for a flag; then the
 * operands.
 *     tlm_cli_synopsis(f, &run, "usage: ");   usage: tlmd --sweeps FILE|DIR [--sweeps ...] [--db results.db] ...
 *     tlm_cli_synopsis(f, &status, "       "); (the next line) */
void tlm_cli_synopsis(FILE *f, const tlm_cli *c, const char *lead);

/* A program's --help text on f (arg: what the program passes through). */
typedef void tlm_cli_help(FILE *f, const tlm_cli *c, const void *arg);
/* The tlm_cli_help of a program whose --help is its plain usage(FILE *):
 * arg is a tlm_cli_usage that holds it. */
typedef struct tlm_cli_usage {
    void (*fn)(FILE *f);
} tlm_cli_usage;
void tlm_cli_help_usage(FILE *f, const tlm_cli *c, const void *arg);
/* tlm_cli_parse, and what every program does with its outcome, in one
 * place: -1 to go on; --help: help(stdout, c, arg) (help NULL: the synopsis
 * and the options), then 0; an error:
 * "PROG: why" on stderr, then usage_status for TLM_ECONFIG (a usage
 * error), else fail_status. */
int tlm_cli_main(tlm_cli *c, const char *prog, int argc, char **argv, void *opts, tlm_cli_help *help,
                 const void *arg, int usage_status, int fail_status);

/* One line (or more, wrapped before column 80) per option with help:
 * "  -h, --name ARG", its help from column c->col, and "(default DEF)". */
void tlm_cli_options(FILE *f, const tlm_cli *c);

/* The index of name in choices (NULL-terminated), or -1. */
int tlm_cli_choice(const char *const *choices, const char *name);

/* A value given on a command line, by the config's rules (cfgtree.h): an
 * integer or a finite decimal in [lo, hi], or TLM_ECONFIG naming flag:
 * "--workers 1.5: not an integer (expected an integer from 1 to 256)". */
int tlm_cli_arg_int(const char *flag, const char *s, int64_t lo, int64_t hi, int64_t *out, tlm_err *e);
int tlm_cli_arg_number(const char *flag, const char *s, double lo, double hi, double *out, tlm_err *e);

#endif
