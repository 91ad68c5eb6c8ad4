/* inputs.c: the files a job reads, checked by --dry-run (see inputs.h). */
#include "orchestrator/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/vec.h"
#include "engine/config/suites.h"

typedef struct orc_input {
    char *path;
    int bad;
} orc_input;

void orc_inputs_init(orc_inputs *in)
{
    memset(in, 0, sizeof *in);
    if (!getcwd(in->cwd, sizeof in->cwd))
        snprintf(in->cwd, sizeof in->cwd, ".");
}

void orc_inputs_clear(orc_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->v[i].path);
    free(in->v);
    memset(in, 0, sizeof *in);
}

/* "" when path can be read as `dir` says (a folder: listed; a file: opened),
 * else why not. */
static const char *unreadable(const char *path, int dir_ok)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return strerror(errno);
    if (S_ISDIR(st.st_mode)) {
        if (!dir_ok)
            return "is a directory (expected a file)";
        DIR *d = opendir(path);
        if (!d)
            return strerror(errno);
        closedir(d);
        return "";
    }
    if (!S_ISREG(st.st_mode))
        return "is not a regular file";
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return strerror(errno);
    close(fd);
    return "";
}

static int check_one(orc_inputs *in, const char *key, const char *path, int dir_ok, const char *file, FILE *err,
                     tlm_err *e)
{
    if (!path[0])
        return 0;
    for (size_t i = 0; i < in->n; i++)
        if (!strcmp(in->v[i].path, path))
            return 0;
    if (TLM_GROW(in->v, in->cap, in->n + 1, 16))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    orc_input *x = &in->v[in->n];
    if (!(x->path = strdup(path)))
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    in->n++;
    const char *why = unreadable(path, dir_ok);
    x->bad = why[0] != '\0';
    if (!x->bad)
        return 0;
    in->bad++;
    if (path[0] == '/')
        fprintf(err, "tlmd: %s: %s %s: %s\n", file, key, path, why);
    else
        fprintf(err, "tlmd: %s: %s %s: %s (a relative path is read from %s, the folder tlmd runs in)\n", file, key,
                path, why, in->cwd);
    return 0;
}

static int runs_suite(const eng_config *cfg, int suite)
{
    for (int i = 0; i < cfg->eval.n_suites; i++)
        if (!strcmp(cfg->eval.suites[i], eng_suite_names[suite]))
            return 1;
    return 0;
}

int orc_inputs_check(orc_inputs *in, const eng_config *cfg, const char *file, FILE *err, tlm_err *e)
{
    /* a tokenizer is a file when its name implies no vocabulary (bytes,
     * llama3, llama2 and bpeN are names) */
    const struct {
        const char *key, *path;
        int dir_ok, when;
    } v[] = {
        {"data.train", cfg->data.train, 1, 1},
        {"data.val", cfg->data.val, 1, 1},
        {"tokenizer", cfg->tokenizer, 0, eng_tokenizer_vocab(cfg->tokenizer) == 0},
        {"eval.wikitext", cfg->eval.wikitext, 0, runs_suite(cfg, ENG_SUITE_WIKITEXT)},
        {"eval.lambada", cfg->eval.lambada, 0, runs_suite(cfg, ENG_SUITE_LAMBADA)},
        {"eval.commonsense", cfg->eval.commonsense, 1, runs_suite(cfg, ENG_SUITE_COMMONSENSE)},
        {"eval.niah.haystack", cfg->eval.niah_haystack, 0, runs_suite(cfg, ENG_SUITE_NIAH)},
        {"eval.alignment.text", cfg->eval.alignment_text, 0, runs_suite(cfg, ENG_SUITE_ALIGNMENT)},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i].when && check_one(in, v[i].key, v[i].path, v[i].dir_ok, file, err, e))
            return TLM_ENOMEM;
    return 0;
}
