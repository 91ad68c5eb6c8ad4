/* ctx.c: opens results.db read-only and loads the jobs a report looks at
 * (one sweep's, or every job), grouped by their axis columns: seeds of the
 * same (arch, scale, tokens, schedule, ratios, groups) form a group, groups
 * of the same (arch, scale, tokens) a panel.  One query, whatever the size.
 * Must not: write to the database, or read job configs (the axis columns
 * hold what reports need). */
#include "reports/rpt.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/vec.h"

/* What a job is apart from its seed (cfg) and apart from its seed and its
 * taper (setting), from the canonical config JSON tlmd stores (keys sorted,
 * numbers normalised: equal settings are equal strings).  Seeds of one
 * config form a group; configs of one setting form a panel, so a taper is
 * compared with the uniform model that differs from it by the taper alone
 * (a sweep whose grid also varies train.lr gets a panel per lr).  A config
 * that is not JSON (a hand-made row) is grouped by its axis columns only. */
#define JOB_COLS(j)                                                                                             \
    j "key, " j "sweep, " j "label, " j "arch, " j "scale, " j "schedule, " j "ratio_start, " j "ratio_end, " j   \
    "groups, " j "seed, " j "status, " j "attempts, " j "reason, " j "message, " j "tokens_total, " j            \
    "tokens_done, " j "final_loss, " j "widths, "                                                               \
    "CASE WHEN json_valid(" j "config) THEN json_remove(" j "config, '$.seed') END, "                           \
    "CASE WHEN json_valid(" j "config) THEN json_remove(" j "config, '$.seed', '$.taper') END"
/* The default scope: the latest definition of every sweep, i.e. jobs some
 * sweep still lists (sweep_jobs.active = 1).  A job that no sweep lists any
 * more (a sweep file corrected after a failed first run: its jobs got new
 * keys) is left out and counted (SQL_LEFT_OUT); a job without any
 * sweep_jobs row (written by hand) cannot be placed and stays in. */
#define IN_SCOPE(j)                                                                                             \
    "(EXISTS (SELECT 1 FROM sweep_jobs a WHERE a.job = " j "key AND a.active = 1)"                              \
    " OR NOT EXISTS (SELECT 1 FROM sweep_jobs a WHERE a.job = " j "key))"
static const char SQL_ALL[] = "SELECT " JOB_COLS("j.") " FROM jobs j"
                              " WHERE (?1 IS NULL OR j.arch = ?1) AND (?2 IS NULL OR j.scale = ?2) AND " IN_SCOPE("j.")
                              " ORDER BY j.created_at, j.key";
static const char SQL_SWEEP[] =
    "SELECT " JOB_COLS("j.") " FROM sweep_jobs s JOIN jobs j ON j.key = s.job"
    " WHERE s.sweep = ?3 AND s.active = 1 AND (?1 IS NULL OR j.arch = ?1) AND (?2 IS NULL OR j.scale = ?2)"
    " ORDER BY s.ord";
/* Jobs the scope leaves out: listed by an earlier definition of the sweep
 * (of any sweep, without --sweep) and by no current one. */
static const char SQL_LEFT_OUT[] =
    "SELECT count(*) FROM jobs j WHERE (?1 IS NULL OR j.arch = ?1) AND (?2 IS NULL OR j.scale = ?2) AND"
    " CASE WHEN ?3 IS NULL THEN NOT " IN_SCOPE("j.") " ELSE"
    " EXISTS (SELECT 1 FROM sweep_jobs a WHERE a.job = j.key AND a.sweep = ?3 AND a.active = 0) END";

/* NULL or a name the schema does not know: pending */
static int status_of(const char *s)
{
    int st = db_job_status_find(s);
    return st < 0 ? RPT_PENDING : st;
}

static double col_num(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static const char *col_str(rpt_arena *a, sqlite3_stmt *s, int i, int *oom)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    if (!t)
        return NULL;
    char *p = rpt_strdup(a, (const char *)t);
    if (!p)
        *oom = 1;
    return p;
}

/* A text column as 64 bits of its SHA-256 (0 when NULL): configs are
 * compared by identity, and a kilobyte of JSON per job need not be kept. */
static uint64_t text_id(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    if (!t)
        return 0;
    tlm_sha256 h;
    uint8_t d[32];
    tlm_sha256_init(&h);
    tlm_sha256_update(&h, t, (size_t)sqlite3_column_bytes(s, i));
    tlm_sha256_final(&h, d);
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v = v << 8 | d[k];
    return v | 1; /* never 0, which means "no config" */
}

/* "440m" -> 4.4e8, "1.3b" -> 1.3e9; names that are not sizes sort after. */
static double scale_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return INFINITY;
    switch (tolower((unsigned char)*end)) {
    case 'k': return v * 1e3;
    case 'm': return v * 1e6;
    case 'b':
    case 'g': return v * 1e9;
    case '\0': return v;
    default: return INFINITY;
    }
}

/* The paper's architectures first, in its order; any other after them. */
static int arch_rank(const char *a)
{
    int i = 0;
    for (; rpt_paper_arch((size_t)i); i++)
        if (!strcmp(a, rpt_paper_arch((size_t)i)))
            return i;
    return i;
}

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_num(double a, double b)
{
    if (isnan(a) || isnan(b))
        return !isnan(a) - !isnan(b);
    return (a > b) - (a < b);
}

static int cmp_panel(const rpt_job *a, const rpt_job *b)
{
    int r = arch_rank(a->arch) - arch_rank(b->arch);
    if (!r)
        r = strcmp(a->arch, b->arch);
    if (!r)
        r = cmp_num(scale_size(a->scale), scale_size(b->scale));
    if (!r)
        r = strcmp(a->scale, b->scale);
    if (!r)
        r = (a->tokens_total > b->tokens_total) - (a->tokens_total < b->tokens_total);
    if (!r)
        r = (a->setting_id > b->setting_id) - (a->setting_id < b->setting_id);
    return r;
}

static int cmp_group(const rpt_job *a, const rpt_job *b)
{
    int r = cmp_panel(a, b);
    if (!r)
        r = strcmp(a->schedule, b->schedule);
    if (!r)
        r = cmp_num(a->ratio_start, b->ratio_start);
    if (!r)
        r = cmp_num(a->ratio_end, b->ratio_end);
    if (!r)
        r = cmp_str(a->groups, b->groups);
    if (!r)
        r = (a->config_id > b->config_id) - (a->config_id < b->config_id);
    return r;
}

static int cmp_index(const void *pa, const void *pb, void *jobs)
{
    const rpt_job *a = (const rpt_job *)jobs + *(const int *)pa, *b = (const rpt_job *)jobs + *(const int *)pb;
    int r = cmp_group(a, b);
    if (!r)
        r = (a->seed > b->seed) - (a->seed < b->seed);
    if (!r)
        r = strcmp(a->key, b->key);
    return r;
}

static int group_jobs(rpt_ctx *c, tlm_err *e)
{
    if (c->n_jobs == 0)
        return 0;
    int *order = rpt_alloc(&c->a, sizeof *order * (size_t)c->n_jobs);
    c->groups = rpt_alloc(&c->a, sizeof *c->groups * (size_t)c->n_jobs);
    c->panels = rpt_alloc(&c->a, sizeof *c->panels * (size_t)c->n_jobs);
    int *gidx = rpt_alloc(&c->a, sizeof *gidx * (size_t)c->n_jobs);
    if (!order || !c->groups || !c->panels || !gidx)
        return tlm_errf(e, TLM_ENOMEM, "out of memory grouping %d jobs", c->n_jobs);
    for (int i = 0; i < c->n_jobs; i++)
        order[i] = i;
    qsort_r(order, (size_t)c->n_jobs, sizeof *order, cmp_index, c->jobs);
    for (int i = 0; i < c->n_jobs;) {
        int k = i + 1;
        while (k < c->n_jobs && !cmp_group(&c->jobs[order[i]], &c->jobs[order[k]]))
            k++;
        rpt_group *g = &c->groups[c->n_groups];
        const rpt_job *j = &c->jobs[order[i]];
        g->arch = j->arch;
        g->scale = j->scale;
        g->schedule = j->schedule;
        g->groups = j->groups;
        g->label = j->label;
        g->ratio_start = j->ratio_start;
        g->ratio_end = j->ratio_end;
        g->tokens_total = j->tokens_total;
        g->variant = "";
        g->jobs = order + i;
        g->n_jobs = k - i;
        for (int m = i; m < k; m++)
            c->jobs[order[m]].group = c->n_groups;
        if (c->n_groups == 0 || cmp_panel(&c->jobs[c->groups[c->n_groups - 1].jobs[0]], j) != 0) {
            rpt_pgroup *p = &c->panels[c->n_panels++];
            p->arch = j->arch;
            p->scale = j->scale;
            p->tokens_total = j->tokens_total;
            p->variant = "";
            p->groups = gidx + c->n_groups;
        }
        rpt_pgroup *p = &c->panels[c->n_panels - 1];
        p->n_groups++;
        gidx[c->n_groups] = c->n_groups;
        g->panel = c->n_panels - 1;
        c->n_groups++;
        i = k;
    }
    return 0;
}

/* The leaves of one panel's setting (its first job's config without seed
 * and taper), "path=value" in document order (canonical: sorted keys). */
typedef struct {
    const char **leaf;
    int n;
} leaves;

static int read_leaves(rpt_ctx *c, sqlite3_stmt *s, const char *key, leaves *out, tlm_err *e)
{
    sqlite3_reset(s);
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int rc, cap = 0;
    out->leaf = NULL;
    out->n = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(s, 0), *v = (const char *)sqlite3_column_text(s, 1);
        if (out->n == cap) {
            cap = cap ? 2 * cap : 64;
            const char **nl = rpt_alloc(&c->a, sizeof *nl * (size_t)cap);
            if (!nl)
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            if (out->n)
                memcpy(nl, out->leaf, sizeof *nl * (size_t)out->n);
            out->leaf = nl;
        }
        /* "$.train.lr" -> "train.lr=0.003" */
        const char *leaf = rpt_printf(&c->a, "%s=%s", path && path[0] == '$' && path[1] == '.' ? path + 2 : path,
                                      v ? v : "null");
        if (!leaf)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        out->leaf[out->n++] = leaf;
    }
    if (rc != SQLITE_DONE)
        return tlm_errf(e, TLM_EIO, "%s: reading a job's config: %s", c->db_path, sqlite3_errmsg(c->h));
    return 0;
}

static int has_leaf(const leaves *l, const char *leaf)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->leaf[i], leaf))
            return 1;
    return 0;
}

/* Panels of the same architecture, scale and token budget whose settings
 * differ (a sweep that varies train.lr, two sweeps on different data) are
 * named by what differs: each panel's variant lists its leaves that some
 * other panel of the run lacks.  Costs a config read only where panels
 * share their axes. */
static int name_variants(rpt_ctx *c, tlm_err *e)
{
    sqlite3_stmt *s = NULL;
    int rc = 0;
    for (int a = 0; a < c->n_panels && !rc;) {
        int b = a + 1;
        while (b < c->n_panels && !strcmp(c->panels[b].arch, c->panels[a].arch) &&
               !strcmp(c->panels[b].scale, c->panels[a].scale) &&
               c->panels[b].tokens_total == c->panels[a].tokens_total)
            b++;
        if (b - a > 1) {
            if (!s && sqlite3_prepare_v2(c->h,
                                         "SELECT t.fullkey, t.atom FROM jobs j, json_tree(json_remove(j.config,"
                                         " '$.seed', '$.taper')) t WHERE j.key = ?1 AND json_valid(j.config) AND"
                                         " t.type NOT IN ('object', 'array')",
                                         -1, &s, NULL) != SQLITE_OK)
                return rpt_db_err(c, "configs", e);
            leaves *l = rpt_alloc(&c->a, sizeof *l * (size_t)(b - a));
            if (!l)
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            for (int p = a; p < b && !rc; p++)
                rc = read_leaves(c, s, c->jobs[c->groups[c->panels[p].groups[0]].jobs[0]].key, &l[p - a], e);
            for (int p = a; p < b && !rc; p++) {
                const char *v = "";
                int shown = 0;
                for (int i = 0; i < l[p - a].n && v; i++) {
                    int everywhere = 1;
                    for (int q = a; q < b && everywhere; q++)
                        everywhere = has_leaf(&l[q - a], l[p - a].leaf[i]);
                    if (everywhere)
                        continue;
                    if (++shown <= 3)
                        v = rpt_printf(&c->a, "%s%s%s", v, *v ? ", " : "", l[p - a].leaf[i]);
                    else if (shown == 4)
                        v = rpt_printf(&c->a, "%s, ...", v);
                }
                if (!v)
                    rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                else if (!*v) /* not JSON, or only what no leaf shows */
                    v = rpt_printf(&c->a, "setting %d", p - a + 1);
                c->panels[p].variant = v;
                for (int g = 0; g < c->panels[p].n_groups; g++)
                    c->groups[c->panels[p].groups[g]].variant = v;
            }
        }
        a = b;
    }
    sqlite3_finalize(s);
    return rc;
}

int rpt_db_err(const rpt_ctx *c, const char *table, tlm_err *e)
{
    return tlm_errf(e, TLM_EIO, "%s: reading %s: %s", c->db_path, table, sqlite3_errmsg(c->h));
}

int rpt_prepare(rpt_ctx *c, const char *sql, sqlite3_stmt **s, const char *table, tlm_err *e)
{
    return sqlite3_prepare_v2(c->h, sql, -1, s, NULL) == SQLITE_OK ? 0 : rpt_db_err(c, table, e);
}

/* ?1 --arch, ?2 --scale, ?3 --sweep of the job queries (NULL when not given). */
static int prepare_scoped(rpt_ctx *c, const char *sql, sqlite3_stmt **s, tlm_err *e)
{
    int rc = rpt_prepare(c, sql, s, "jobs", e);
    if (rc)
        return rc;
    if (c->o.arch)
        sqlite3_bind_text(*s, 1, c->o.arch, -1, SQLITE_STATIC);
    if (c->o.scale)
        sqlite3_bind_text(*s, 2, c->o.scale, -1, SQLITE_STATIC);
    if (c->o.sweep)
        sqlite3_bind_text(*s, 3, c->o.sweep, -1, SQLITE_STATIC);
    return 0;
}

/* How many jobs the scope leaves out (SQL_LEFT_OUT). */
static int count_left_out(rpt_ctx *c, tlm_err *e)
{
    sqlite3_stmt *s;
    if (prepare_scoped(c, SQL_LEFT_OUT, &s, e))
        return TLM_EIO;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        c->n_left_out = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return rpt_db_err(c, "jobs", e);
    return 0;
}

/* Is the job one of the --job selectors?  hits[i] counts the jobs selector i matched. */
static int selected(const rpt_opts *o, const char *key, const char *label, int *hits)
{
    if (o->n_jobs == 0)
        return 1;
    int any = 0;
    for (int i = 0; i < o->n_jobs; i++) {
        const char *s = o->jobs[i];
        size_t n = strlen(s);
        if ((n >= 6 && !strncmp(key, s, n)) || (label && !strcmp(label, s))) {
            hits[i]++;
            any = 1;
        }
    }
    return any;
}

/* The rows of a one-column query, for messages that name what exists:
 * "a, b, c" (the first 12, then "and N more"), "" when none; arena-owned.
 * ?1 is bound to `arg` when given. */
static int name_list(rpt_ctx *c, const char *sql, const char *arg, const char **out, int *count, tlm_err *e)
{
    sqlite3_stmt *s;
    *out = "";
    *count = 0;
    if (sqlite3_prepare_v2(c->h, sql, -1, &s, NULL) != SQLITE_OK)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    if (arg)
        sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
    const char *list = "";
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (++*count <= 12)
            list = rpt_printf(&c->a, "%s%s%s", list, *list ? ", " : "", v ? v : "(none)");
        if (!list) {
            sqlite3_finalize(s);
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    if (*count > 12 && !(list = rpt_printf(&c->a, "%s and %d more", list, *count - 12)))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    *out = list;
    return 0;
}

static int sweep_exists(rpt_ctx *c, const char *name, tlm_err *e)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->h, "SELECT 1 FROM sweeps WHERE name = ?1", -1, &s, NULL) != SQLITE_OK)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    /* say which sweeps there are */
    const char *known;
    int n;
    if ((rc = name_list(c, "SELECT name FROM sweeps ORDER BY name", NULL, &known, &n, e)))
        return rc;
    return tlm_errf(e, TLM_ECONFIG, "%s: no sweep named '%s' (sweeps: %s)", c->db_path, name, n ? known : "none yet");
}

/* 1 when the query (?1 the sweep when there is one, ?2 `value`) returns a row. */
static int has_row(rpt_ctx *c, const char *sql, const char *value, tlm_err *e)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->h, sql, -1, &s, NULL) != SQLITE_OK)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    if (c->o.sweep)
        sqlite3_bind_text(s, 1, c->o.sweep, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tlm_errf(e, TLM_EIO, "%s: %s", c->db_path, sqlite3_errmsg(c->h));
    return rc == SQLITE_ROW;
}

/* A filter that selects nothing is an error naming what there is, as an
 * unknown --sweep is: an empty table would look like results not yet in. */
static int check_filters(rpt_ctx *c, const int *hits, tlm_err *e)
{
    const rpt_opts *o = &c->o;
    const char *scope = o->sweep ? rpt_printf(&c->a, "sweep %s", o->sweep) : c->db_path;
    if (!scope)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    /* one query in both scopes: the jobs some sweep lists, or the sweep's (load_jobs' scope) */
#define SCOPED(cols, tail)                                                                                     \
    (o->sweep ? "SELECT DISTINCT " cols " FROM sweep_jobs s JOIN jobs j ON j.key = s.job"                    \
                " WHERE s.sweep = ?1 AND s.active = 1" tail                                                    \
              : "SELECT DISTINCT " cols " FROM jobs j WHERE ?1 IS NULL AND " IN_SCOPE("j.") tail)
    const char *have;
    int n, rc;
    /* --arch and --scale: the value given, whether a job has it, what the jobs have */
    const struct {
        const char *flag, *value, *has, *list, *theirs;
    } by[] = {
        {"arch", o->arch, SCOPED("1", " AND j.arch = ?2"), SCOPED("j.arch", " ORDER BY 1"), "its architectures: "},
        {"scale", o->scale, SCOPED("1", " AND j.scale = ?2"), SCOPED("j.scale", " ORDER BY 1"), "its scales: "},
    };
    for (size_t i = 0; i < sizeof by / sizeof by[0]; i++) {
        if (!by[i].value || (rc = has_row(c, by[i].has, by[i].value, e)) > 0)
            continue;
        if (rc < 0 || (rc = name_list(c, by[i].list, o->sweep, &have, &n, e)))
            return rc;
        return tlm_errf(e, TLM_ECONFIG, "--%s %s matches no job in %s (%s%s)", by[i].flag, by[i].value, scope,
                        n ? by[i].theirs : "it has no jobs yet", have);
    }
    const char *narrowed = o->arch && o->scale ? rpt_printf(&c->a, " with --arch %s --scale %s", o->arch, o->scale)
                           : o->arch           ? rpt_printf(&c->a, " with --arch %s", o->arch)
                           : o->scale          ? rpt_printf(&c->a, " with --scale %s", o->scale)
                                               : "";
    if (!narrowed)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int i = 0; i < o->n_jobs; i++) {
        if (hits[i])
            continue;
        if ((rc = name_list(c, SCOPED("substr(j.key, 1, 12) || ' ' || coalesce(j.label, j.schedule)", " ORDER BY 1"),
                            o->sweep, &have, &n, e)))
            return rc;
        return tlm_errf(e, TLM_ECONFIG, "--job %s matches no job in %s%s (%s%s%s)", o->jobs[i], scope, narrowed,
                        strlen(o->jobs[i]) < 6 ? "a key prefix needs 6 or more hex digits; " : "",
                        n ? "its jobs: " : "it has no jobs yet", have);
    }
    if (c->n_jobs == 0 && o->arch && o->scale) {
        if ((rc = name_list(c, SCOPED("j.arch || ' ' || j.scale", " ORDER BY 1"), o->sweep, &have, &n, e)))
            return rc;
        return tlm_errf(e, TLM_ECONFIG, "--arch %s --scale %s together match no job in %s (its architecture and scale "
                        "pairs: %s)", o->arch, o->scale, scope, have);
    }
#undef SCOPED
    return 0;
}

int rpt_taper_parse(const char *spec, char sched[16], double *start, double *end, tlm_err *e)
{
    double a, b;
    int used = 0;
    if (sscanf(spec, "%15[a-z]:%lf:%lf%n", sched, &a, &b, &used) != 3 || spec[used] != '\0' ||
        !rpt_is_ratio_schedule(sched) || !(a > 0) || !(b > 0))
        return tlm_errf(e, TLM_ECONFIG,
                        "--taper '%s': expected SCHEDULE:START:END with SCHEDULE linear, cosine or sigmoid "
                        "(e.g. cosine:1.5:0.5)",
                        spec);
    *start = a;
    *end = b;
    return 0;
}

static int parse_taper(rpt_ctx *c, const char *spec, tlm_err *e)
{
    char sched[16];
    if (rpt_taper_parse(spec, sched, &c->taper_start, &c->taper_end, e))
        return TLM_ECONFIG;
    snprintf(c->taper_schedule, sizeof c->taper_schedule, "%s", sched);
    return 0;
}

static int load_jobs(rpt_ctx *c, int *hits, tlm_err *e)
{
    sqlite3_stmt *s;
    if (prepare_scoped(c, c->o.sweep ? SQL_SWEEP : SQL_ALL, &s, e))
        return TLM_EIO;
    size_t cap = 0;
    int rc, oom = 0;
    rpt_job *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(s, 0);
        const char *label = (const char *)sqlite3_column_text(s, 2);
        if (!key || !selected(&c->o, key, label, hits))
            continue;
        if (TLM_GROW(v, cap, (size_t)c->n_jobs + 1, 256)) {
            oom = 1;
            break;
        }
        rpt_job *j = &v[c->n_jobs++];
        memset(j, 0, sizeof *j);
        j->key = col_str(&c->a, s, 0, &oom);
        j->sweep = col_str(&c->a, s, 1, &oom);
        j->label = col_str(&c->a, s, 2, &oom);
        j->arch = col_str(&c->a, s, 3, &oom);
        j->scale = col_str(&c->a, s, 4, &oom);
        j->schedule = col_str(&c->a, s, 5, &oom);
        j->ratio_start = col_num(s, 6);
        j->ratio_end = col_num(s, 7);
        j->groups = col_str(&c->a, s, 8, &oom);
        j->seed = sqlite3_column_int64(s, 9);
        j->status = status_of((const char *)sqlite3_column_text(s, 10));
        j->attempts = sqlite3_column_int(s, 11);
        j->reason = col_str(&c->a, s, 12, &oom);
        j->message = col_str(&c->a, s, 13, &oom);
        j->tokens_total = sqlite3_column_int64(s, 14);
        j->tokens_done = sqlite3_column_int64(s, 15);
        j->final_loss = col_num(s, 16);
        j->widths = col_str(&c->a, s, 17, &oom);
        j->config_id = text_id(s, 18);
        j->setting_id = text_id(s, 19);
        if (!j->label)
            j->label = j->schedule;
        if (oom || !j->arch || !j->scale || !j->schedule)
            break;
    }
    if (oom) {
        sqlite3_finalize(s);
        free(v);
        return tlm_errf(e, TLM_ENOMEM, "out of memory reading jobs");
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rpt_db_err(c, "jobs", e);
        sqlite3_finalize(s);
        free(v);
        return TLM_EIO;
    }
    sqlite3_finalize(s);
    /* the array moves into the arena so that one free releases everything */
    if (c->n_jobs) {
        c->jobs = rpt_alloc(&c->a, sizeof *c->jobs * (size_t)c->n_jobs);
        if (!c->jobs) {
            free(v);
            return tlm_errf(e, TLM_ENOMEM, "out of memory reading jobs");
        }
        memcpy(c->jobs, v, sizeof *c->jobs * (size_t)c->n_jobs);
    }
    free(v);
    return 0;
}

static unsigned hash_key(const char *k)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    return h;
}

/* Bulk queries return rows by job key: a hash finds the job in O(1). */
static int index_keys(rpt_ctx *c, tlm_err *e)
{
    int n = 16;
    while (n < 2 * c->n_jobs)
        n *= 2;
    c->key_slots = rpt_alloc(&c->a, sizeof *c->key_slots * (size_t)n);
    if (!c->key_slots)
        return tlm_errf(e, TLM_ENOMEM, "out of memory indexing %d jobs", c->n_jobs);
    c->n_slots = n;
    for (int i = 0; i < n; i++)
        c->key_slots[i] = -1;
    for (int i = 0; i < c->n_jobs; i++) {
        unsigned h = hash_key(c->jobs[i].key) & (unsigned)(n - 1);
        while (c->key_slots[h] >= 0)
            h = (h + 1) & (unsigned)(n - 1);
        c->key_slots[h] = i;
    }
    return 0;
}

int rpt_job_find(const rpt_ctx *c, const char *key)
{
    if (!c->n_slots || !key)
        return -1;
    unsigned h = hash_key(key) & (unsigned)(c->n_slots - 1);
    for (int i; (i = c->key_slots[h]) >= 0; h = (h + 1) & (unsigned)(c->n_slots - 1))
        if (!strcmp(c->jobs[i].key, key))
            return i;
    return -1;
}

int rpt_ctx_open(rpt_ctx *c, const char *db_path, const rpt_opts *o, tlm_err *e)
{
    memset(c, 0, sizeof *c);
    c->db_path = db_path;
    c->o = *o;
    if (c->o.max_series <= 0)
        c->o.max_series = 12;
    int rc = parse_taper(c, o->taper ? o->taper : "cosine:1.5:0.5", e);
    if (rc)
        return rc;
    /* SQLite would report "unable to open database file": say what to do instead */
    if (access(db_path, F_OK) != 0)
        return tlm_errf(e, TLM_ECONFIG, "%s: no such file (tlmd writes it: run tlmd first, or pass --db PATH)",
                        db_path);
    if ((rc = db_open(db_path, DB_READONLY, &c->d, e)))
        return rc;
    c->h = db_handle(c->d);
    /* reports read much of a large file once: map it instead of copying
     * pages through read(2), and keep what was read (both per connection) */
    sqlite3_exec(c->h, "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -65536", NULL, NULL, NULL);
    /* one snapshot for the whole report (WAL: the daemon keeps writing
     * meanwhile), so a job that finishes mid-report is seen one way only */
    if (sqlite3_exec(c->h, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        rc = tlm_errf(e, TLM_EIO, "%s: %s", db_path, sqlite3_errmsg(c->h));
        goto fail;
    }
    if (o->sweep && (rc = sweep_exists(c, o->sweep, e)))
        goto fail;
    int *hits = o->n_jobs ? rpt_alloc(&c->a, sizeof *hits * (size_t)o->n_jobs) : NULL;
    if (o->n_jobs && !hits) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = load_jobs(c, hits, e)) || (rc = check_filters(c, hits, e)) || (rc = group_jobs(c, e)) ||
        (rc = name_variants(c, e)) || (rc = count_left_out(c, e)) || (rc = index_keys(c, e)))
        goto fail;
    return 0;
fail:
    rpt_ctx_close(c);
    return rc;
}

void rpt_ctx_close(rpt_ctx *c)
{
    rpt_metric_cache_free(c->cache);
    c->cache = NULL;
    if (c->h && !sqlite3_get_autocommit(c->h))
        sqlite3_exec(c->h, "COMMIT", NULL, NULL, NULL); /* ends the read snapshot */
    db_close(c->d);
    c->d = NULL;
    rpt_arena_clear(&c->a);
}
