/* cli.c: the command-line table's parser, defaults and --help (cli.h), on
 * top of getopt_long, so that every program keeps GNU's conventions
 * (operands between options, --name=value, unambiguous prefixes).
 * Must not: print, exit, or keep state between calls (getopt's own is
 * reset at each parse). */
#include "common/cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"

/* ------------------------------------------------------------ numbers */
/* "--workers 1.5: not an integer (expected an integer from 1 to 256)";
 * rc is how the text read (TLM_CFG_NUM_*; OK: out of the range) */
static int arg_refused(const char *flag, const char *s, int rc, double lo, double hi, int integer, tlm_err *e)
{
    char r[128];
    tlm_cfg_range_text(lo, hi, 0, integer, r, sizeof r);
    const char *why = rc == TLM_CFG_NUM_OK || rc == TLM_CFG_NUM_RANGE ? "out of range"
                      : integer                                       ? "not an integer"
                                                                      : "not a number";
    return tlm_errf(e, TLM_ECONFIG, "%s %s: %s (expected %s)", flag, s, why, r);
}

int tlm_cli_arg_int(const char *flag, const char *s, int64_t lo, int64_t hi, int64_t *out, tlm_err *e)
{
    int64_t v = 0;
    int rc = tlm_cfg_parse_int_text(s, &v);
    if (rc != TLM_CFG_NUM_OK || v < lo || v > hi)
        return arg_refused(flag, s, rc, (double)lo, (double)hi, 1, e);
    *out = v;
    return 0;
}

int tlm_cli_arg_number(const char *flag, const char *s, double lo, double hi, double *out, tlm_err *e)
{
    double v = 0;
    int rc = tlm_cfg_parse_number_text(s, &v);
    if (rc != TLM_CFG_NUM_OK || v < lo || v > hi)
        return arg_refused(flag, s, rc, lo, hi, 0, e);
    *out = v;
    return 0;
}

int tlm_cli_choice(const char *const *choices, const char *name)
{
    for (int i = 0; choices && choices[i]; i++)
        if (!strcmp(choices[i], name))
            return i;
    return -1;
}

/* ------------------------------------------------------------ values */
static int takes_value(const tlm_opt *o) { return o->type > TLM_OPT_OFF; }

/* "a, b or c" */
static void choice_list(const char *const *choices, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; choices[i] && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i == 0 ? "" : choices[i + 1] ? ", " : " or ", choices[i]);
}

/* val into the row's field; argc sizes a LIST's array */
static int store(const tlm_opt *o, const char *val, void *opts, int argc, tlm_err *e)
{
    void *p = (char *)opts + o->off;
    char flag[80];
    snprintf(flag, sizeof flag, "--%s", o->name);
    int64_t i = 0;
    switch (o->type) {
    case TLM_OPT_HELP: return 0;
    case TLM_OPT_FLAG:
    case TLM_OPT_OFF: /* a default only: the option itself stores no value */
        if (val && tlm_cli_arg_int(flag, val, INT_MIN, INT_MAX, &i, e))
            return TLM_ECONFIG;
        *(int *)p = val ? (int)i : o->type == TLM_OPT_FLAG;
        return 0;
    case TLM_OPT_STR: *(const char **)p = val; return 0;
    case TLM_OPT_LIST: {
        const char ***list = p;
        size_t *n = (size_t *)((char *)opts + o->count);
        if (!*list && !(*list = calloc((size_t)argc + 1, sizeof **list)))
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        (*list)[(*n)++] = val;
        return 0;
    }
    case TLM_OPT_INT:
        if (tlm_cli_arg_int(flag, val, (int64_t)o->lo, (int64_t)o->hi, &i, e))
            return TLM_ECONFIG;
        *(int *)p = (int)i;
        return 0;
    case TLM_OPT_NUM: return tlm_cli_arg_number(flag, val, o->lo, o->hi, (double *)p, e) ? TLM_ECONFIG : 0;
    case TLM_OPT_CHOICE: {
        int k = tlm_cli_choice(o->choices, val);
        if (k < 0) {
            char list[256];
            choice_list(o->choices, list, sizeof list);
            return tlm_errf(e, TLM_ECONFIG, "%s %s: expected %s", flag, val, list);
        }
        *(const char **)p = o->choices[k];
        return 0;
    }
    case TLM_OPT_FUNC: return o->parse(o, val, opts, e);
    }
    return tlm_errf(e, TLM_EINTERNAL, "%s: a row of unknown type %d", flag, (int)o->type);
}

static int set_defaults(const tlm_cli *c, void *opts, tlm_err *e)
{
    for (const tlm_opt *o = c->opts; o->name; o++) {
        if (!o->def)
            continue;
        if (o->type == TLM_OPT_LIST || o->type == TLM_OPT_HELP || store(o, o->def, opts, 0, e))
            return tlm_errf(e, TLM_EINTERNAL, "%s: the default '%s' of --%s is not one of its values", c->cmd,
                            o->def, o->name);
    }
    return 0;
}

/* ------------------------------------------------------------ parsing */
/* getopt's '?' or ':' as a message; text is the option as written */
static const tlm_opt *row_of(const tlm_cli *c, int val)
{
    size_t k = 0;
    if (val >= 256)
        return &c->opts[val - 256];
    while (c->opts[k].letter != val)
        k++;
    return &c->opts[k];
}

static int bad_option(const tlm_cli *c, int ch, const char *text, tlm_err *e)
{
    if (ch == ':')
        return tlm_errf(e, TLM_ECONFIG, "option '--%s' requires an argument (try %s --help)", row_of(c, optopt)->name,
                        c->cmd);
    if (optopt >= 256)
        return tlm_errf(e, TLM_ECONFIG, "option '--%s' doesn't allow an argument (try %s --help)",
                        c->opts[optopt - 256].name, c->cmd);
    if (optopt) /* a letter no row has, as getopt says it: "-config" is -c -o -n ... */
        return tlm_errf(e, TLM_ECONFIG, "invalid option -- '%c' (try %s --help)", optopt, c->cmd);
    /* a long option no row has, or a prefix of several */
    const char *name = text + strspn(text, "-");
    size_t len = strcspn(name, "="), n = 0;
    char list[512] = "";
    for (const tlm_opt *o = c->opts; o->name && len; o++)
        if (!strncmp(o->name, name, len) && strlen(list) + strlen(o->name) + 8 < sizeof list)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", n++ ? ", " : "", o->name);
    if (n > 1)
        return tlm_errf(e, TLM_ECONFIG, "option '%.*s' is ambiguous: %s (try %s --help)", (int)(name - text + len),
                        text, list, c->cmd);
    return tlm_errf(e, TLM_ECONFIG, "unrecognized option '%s' (try %s --help)", text, c->cmd);
}

int tlm_cli_parse(tlm_cli *c, int argc, char **argv, void *opts, tlm_err *e)
{
    struct option lo[TLM_CLI_MAX + 1];
    char letters[3 * TLM_CLI_MAX + 2] = ":"; /* ':' first: a missing value is told from an unknown option */
    size_t n = 0, nl = 1;
    memset(c->given, 0, sizeof c->given);
    c->next = argc;
    for (; c->opts[n].name; n++) {
        const tlm_opt *o = &c->opts[n];
        if (n == TLM_CLI_MAX)
            return tlm_errf(e, TLM_EINTERNAL, "%s: more than %d options", c->cmd, TLM_CLI_MAX);
        lo[n] = (struct option){o->name, takes_value(o) ? required_argument : no_argument, NULL, 256 + (int)n};
        if (o->letter) {
            letters[nl++] = o->letter;
            if (takes_value(o))
                letters[nl++] = ':';
        }
    }
    lo[n] = (struct option){0, 0, 0, 0};
    letters[nl] = '\0';
    int rc = set_defaults(c, opts, e);
    if (rc)
        return rc;
    optind = 0; /* glibc: 0 starts afresh (a second parse in one process, the tests) */
    opterr = 0;
    for (int ch; (ch = getopt_long(argc, argv, letters, lo, NULL)) != -1;) {
        if (ch == '?' || ch == ':')
            return bad_option(c, ch, optind > 0 && optind <= argc ? argv[optind - 1] : "?", e);
        const tlm_opt *o = row_of(c, ch);
        size_t k = (size_t)(o - c->opts);
        if (c->given[k] < 255)
            c->given[k]++;
        if (o->type == TLM_OPT_HELP)
            return TLM_CLI_HELP;
        /* a second value would silently replace the first */
        if (c->given[k] > 1 && takes_value(o) && !(o->flags & TLM_OPT_REPEAT))
            return tlm_errf(e, TLM_ECONFIG, "--%s is given twice; give it once", o->name);
        if ((rc = store(o, optarg, opts, argc, e)))
            return rc;
    }
    c->next = optind;
    if (!c->operands && c->next < argc)
        return tlm_errf(e, TLM_ECONFIG, "unexpected argument '%s' (try %s --help)", argv[c->next], c->cmd);
    return 0;
}

int tlm_cli_given(const tlm_cli *c, const char *name)
{
    for (size_t i = 0; c->opts[i].name; i++)
        if (!strcmp(c->opts[i].name, name))
            return c->given[i];
    return 0;
}

/* ------------------------------------------------------------ --help */
#define WIDTH 79

/* Words onto lines of at most WIDTH columns, later lines from column indent. */
typedef struct wrap {
    FILE *f;
    int col, indent;
    int fresh; /* at the start of a line's text: no space before the next word */
} wrap;

static void wrap_break(wrap *w)
{
    fprintf(w->f, "\n%*s", w->indent, "");
    w->col = w->indent;
    w->fresh = 1;
}

static void wrap_word(wrap *w, const char *s, size_t n)
{
    if (!w->fresh && w->col + 1 + (int)n > WIDTH)
        wrap_break(w);
    w->col += fprintf(w->f, "%s%.*s", w->fresh ? "" : " ", (int)n, s);
    w->fresh = 0;
}

/* text's words ("\n" forces a new line) */
static void wrap_text(wrap *w, const char *text)
{
    for (const char *p = text; *p;) {
        if (*p == '\n') {
            wrap_break(w);
            p++;
            continue;
        }
        size_t n = strcspn(p, " \n");
        if (n)
            wrap_word(w, p, n);
        p += n + (p[n] == ' ');
    }
}

static const char *arg_name(const tlm_opt *o, char *buf, size_t cap)
{
    if (o->arg || o->type != TLM_OPT_CHOICE)
        return o->arg ? o->arg : "VALUE";
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; o->choices[i] && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? "|" : "", o->choices[i]);
    return buf;
}

void tlm_cli_help_usage(FILE *f, const tlm_cli *c, const void *arg)
{
    (void)c;
    ((const tlm_cli_usage *)arg)->fn(f);
}

int tlm_cli_main(tlm_cli *c, const char *prog, int argc, char **argv, void *opts, tlm_cli_help *help,
                 const void *arg, int usage_status, int fail_status)
{
    tlm_err e = {0};
    int rc = tlm_cli_parse(c, argc, argv, opts, &e);
    if (rc == TLM_CLI_HELP) {
        if (help)
            help(stdout, c, arg);
        else {
            tlm_cli_synopsis(stdout, c, "usage: ");
            tlm_cli_options(stdout, c);
        }
        return 0;
    }
    if (rc) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return rc == TLM_ECONFIG ? usage_status : fail_status;
    }
    return -1;
}

void tlm_cli_synopsis(FILE *f, const tlm_cli *c, const char *lead)
{
    wrap w = {f, 0, 0, 0};
    w.col = fprintf(f, "%s%s", lead, c->cmd);
    w.indent = w.col + 1;
    for (const tlm_opt *o = c->opts; o->name; o++) {
        if (!o->help || (o->flags & c->hide) || o->type == TLM_OPT_HELP)
            continue;
        char item[256], an[128];
        const char *arg = takes_value(o) ? arg_name(o, an, sizeof an) : NULL;
        if (o->flags & TLM_OPT_REQUIRED)
            snprintf(item, sizeof item, "--%s%s%s", o->name, arg ? " " : "", arg ? arg : "");
        else
            snprintf(item, sizeof item, "[--%s%s%s]", o->name, arg ? " " : "", !arg ? "" : o->def ? o->def : arg);
        wrap_word(&w, item, strlen(item));
        if ((o->flags & TLM_OPT_REQUIRED) && (o->flags & TLM_OPT_REPEAT)) {
            snprintf(item, sizeof item, "[--%s ...]", o->name);
            wrap_word(&w, item, strlen(item));
        }
    }
    if (c->operands)
        wrap_word(&w, c->operands, strlen(c->operands));
    fputc('\n', f);
}

void tlm_cli_options(FILE *f, const tlm_cli *c)
{
    for (const tlm_opt *o = c->opts; o->name; o++) {
        if (!o->help || (o->flags & c->hide))
            continue;
        char an[128], lead[16] = "";
        if (o->letter)
            snprintf(lead, sizeof lead, "-%c, ", o->letter);
        wrap w = {f, 0, c->col, 1};
        w.col = fprintf(f, "  %s--%s", lead, o->name);
        if (takes_value(o))
            w.col += fprintf(f, " %s", arg_name(o, an, sizeof an));
        if (w.col + 2 > c->col)
            wrap_break(&w); /* a long name: its help on the next line */
        else
            w.col += fprintf(f, "%*s", c->col - w.col, "");
        wrap_text(&w, o->help);
        if (o->def && takes_value(o)) {
            char d[256];
            snprintf(d, sizeof d, "(default %s)", o->def);
            wrap_text(&w, d);
        }
        fputc('\n', f);
    }
}
