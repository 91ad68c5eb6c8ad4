/* manifest.c: reading the dataset manifest and checking shards against it
 * (manifest.h).  Must not: trust a count, a name or a hash it has not
 * checked. */
#include "engine/format/manifest.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/checked.h"
#include "common/fileio.h"
#include "common/sha256.h"

static const char *const SPLITS[2] = {"train", "val"};

void eng_manifest_clear(eng_manifest *m)
{
    for (int k = 0; k < 2; k++)
        free(m->splits[k].shards);
    memset(m, 0, sizeof *m);
}

static int unhex(const char *s, uint8_t out[32])
{
    if (strlen(s) != 64)
        return -1;
    for (int i = 0; i < 32; i++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char c = s[2 * i + j];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* A non-negative integer field; TLM_EDATA otherwise. */
static int get_count(const eng_manifest *m, json_t *o, const char *where, const char *key, uint64_t max,
                     uint64_t *out, tlm_err *e)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return tlm_errf(e, TLM_EDATA, "%s: \"%s%s\" must be an integer from 0 to %llu", m->path, where, key,
                        (unsigned long long)max);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_sha(const eng_manifest *m, json_t *o, const char *where, uint8_t out[32], tlm_err *e)
{
    json_t *v = json_object_get(o, "sha256");
    if (!json_is_string(v) || unhex(json_string_value(v), out))
        return tlm_errf(e, TLM_EDATA, "%s: \"%ssha256\" must be 64 lower-case hex digits", m->path, where);
    static const uint8_t zero[32];
    if (!memcmp(out, zero, 32))
        return tlm_errf(e, TLM_EDATA, "%s: \"%ssha256\" is all zeros (no checksum)", m->path, where);
    return 0;
}

/* "S/NNNN.tlmtok": one plain name under the split's folder, nothing that
 * could leave the dataset. */
static int good_file(const char *f, const char *split)
{
    size_t sl = strlen(split);
    if (strncmp(f, split, sl) || f[sl] != '/' || !eng_shard_is_name(f + sl + 1))
        return 0;
    const char *base = f + sl + 1;
    if (base[0] == '.' || strchr(base, '/'))
        return 0;
    for (const char *p = base; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

static int parse_split(eng_manifest *m, json_t *splits, int k, tlm_err *e)
{
    eng_manifest_split *sp = &m->splits[k];
    snprintf(sp->name, sizeof sp->name, "%s", SPLITS[k]);
    char where[64];
    snprintf(where, sizeof where, "splits.%s.", SPLITS[k]);
    json_t *o = json_object_get(splits, SPLITS[k]);
    if (!json_is_object(o))
        return tlm_errf(e, TLM_EDATA, "%s: \"splits.%s\" must be an object", m->path, SPLITS[k]);
    int rc = get_count(m, o, where, "tokens", INT64_MAX, &sp->tokens, e);
    if (rc)
        return rc;
    json_t *list = json_object_get(o, "shards");
    if (!json_is_array(list))
        return tlm_errf(e, TLM_EDATA, "%s: \"splits.%s.shards\" must be a list", m->path, SPLITS[k]);
    size_t n = json_array_size(list);
    sp->shards = calloc(n ? n : 1, sizeof *sp->shards);
    if (!sp->shards)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(list, i);
        eng_manifest_shard *s = &sp->shards[i];
        snprintf(where, sizeof where, "splits.%s.shards[%zu].", SPLITS[k], i);
        if (!json_is_object(x))
            return tlm_errf(e, TLM_EDATA, "%s: \"splits.%s.shards[%zu]\" must be an object", m->path, SPLITS[k], i);
        json_t *f = json_object_get(x, "file");
        if (!json_is_string(f) || json_string_length(f) >= sizeof s->file ||
            strlen(json_string_value(f)) != json_string_length(f) || !good_file(json_string_value(f), SPLITS[k]))
            return tlm_errf(e, TLM_EDATA, "%s: \"%sfile\" must be \"%s/<name>.tlmtok\" (a shard in the split's "
                            "folder)", m->path, where, SPLITS[k]);
        memcpy(s->file, json_string_value(f), json_string_length(f) + 1);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sp->shards[j].file, s->file))
                return tlm_errf(e, TLM_EDATA, "%s: %s is listed twice", m->path, s->file);
        if ((rc = get_count(m, x, where, "tokens", INT64_MAX, &s->tokens, e)) || (rc = get_sha(m, x, where, s->sha256, e)))
            return rc;
        if (tlm_add_u64(sum, s->tokens, &sum))
            return tlm_errf(e, TLM_EDATA, "%s: the token counts of \"splits.%s.shards\" overflow", m->path,
                            SPLITS[k]);
        sp->n = i + 1;
    }
    if (sum != sp->tokens)
        return tlm_errf(e, TLM_EDATA, "%s: \"splits.%s.tokens\" is %llu but its shards hold %llu", m->path,
                        SPLITS[k], (unsigned long long)sp->tokens, (unsigned long long)sum);
    return 0;
}

int eng_manifest_parse(const char *name, const char *text, size_t len, eng_manifest *m, tlm_err *e)
{
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", name);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tlm_errf(e, TLM_EDATA, "%s:%d:%d: not valid JSON: %s", m->path, je.line, je.column, je.text);
    int rc = 0;
    json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "version");
    json_t *tok = json_object_get(root, "tokenizer"), *splits = json_object_get(root, "splits");
    if (!json_is_object(root)) {
        rc = tlm_errf(e, TLM_EDATA, "%s: not a JSON object", m->path);
    } else if (!json_is_string(fmt) || strcmp(json_string_value(fmt), ENG_MANIFEST_FORMAT)) {
        m->foreign = 1;
        rc = tlm_errf(e, TLM_EDATA, "%s: \"format\" is not \"%s\" (not a tlm-data manifest)", m->path,
                      ENG_MANIFEST_FORMAT);
    } else if (!json_is_integer(ver) || json_integer_value(ver) != ENG_MANIFEST_VERSION) {
        rc = tlm_errf(e, TLM_EDATA, "%s: manifest version %s, this build reads version %d", m->path,
                      json_is_integer(ver) ? "other" : "missing", ENG_MANIFEST_VERSION);
    } else if (!json_is_object(tok)) {
        rc = tlm_errf(e, TLM_EDATA, "%s: \"tokenizer\" must be an object", m->path);
    } else if (!json_is_object(splits)) {
        rc = tlm_errf(e, TLM_EDATA, "%s: \"splits\" must be an object", m->path);
    }
    if (!rc) {
        json_t *tn = json_object_get(tok, "name");
        uint64_t vocab = 0;
        if (!json_is_string(tn) || json_string_length(tn) == 0 || json_string_length(tn) > ENG_SHARD_TOKNAME ||
            strlen(json_string_value(tn)) != json_string_length(tn))
            rc = tlm_errf(e, TLM_EDATA, "%s: \"tokenizer.name\" must be a name of 1 to %d bytes", m->path,
                          ENG_SHARD_TOKNAME);
        else if (!(rc = get_count(m, tok, "tokenizer.", "vocab", UINT32_MAX, &vocab, e)) && vocab == 0)
            rc = tlm_errf(e, TLM_EDATA, "%s: \"tokenizer.vocab\" is 0", m->path);
        if (!rc) {
            snprintf(m->tokenizer, sizeof m->tokenizer, "%s", json_string_value(tn));
            m->vocab = (uint32_t)vocab;
            rc = get_sha(m, tok, "tokenizer.", m->tokenizer_sha256, e);
        }
    }
    for (int k = 0; k < 2 && !rc; k++)
        rc = parse_split(m, splits, k, e);
    json_decref(root);
    if (rc) {
        int foreign = m->foreign;
        eng_manifest_clear(m);
        m->foreign = foreign;
    }
    return rc;
}

static int parse_text(const char *name, const char *text, size_t len, void *out, tlm_err *e)
{
    return eng_manifest_parse(name, text, len, out, e);
}

int eng_manifest_load(const char *path, eng_manifest *m, tlm_err *e)
{
    memset(m, 0, sizeof *m);
    return tlm_parse_input(path, ENG_MANIFEST_MAX, TLM_EDATA, NULL, parse_text, m, e);
}

const eng_manifest_split *eng_manifest_find(const eng_manifest *m, const char *split)
{
    for (int k = 0; k < 2; k++)
        if (m->splits[k].name[0] && !strcmp(m->splits[k].name, split))
            return &m->splits[k];
    return NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int eng_manifest_check(const eng_manifest *m, const char *split, const eng_shardset *set, int whole_folder,
                       tlm_err *e)
{
    const eng_manifest_split *sp = eng_manifest_find(m, split);
    if (!sp)
        return tlm_errf(e, TLM_EDATA, "%s: no split \"%s\" in the manifest (it lists train and val)", m->path,
                        split);
    for (int i = 0; i < set->n; i++) {
        const eng_shard *s = &set->shards[i];
        const eng_manifest_shard *ms = NULL;
        const char *b = base_name(s->path);
        for (size_t j = 0; j < sp->n && !ms; j++)
            if (!strcmp(base_name(sp->shards[j].file), b))
                ms = &sp->shards[j];
        if (!ms)
            return tlm_errf(e, TLM_EDATA, "%s: not listed in %s (a shard that tlm-data did not write: remove it or "
                            "rebuild the dataset)", s->path, m->path);
        if (strcmp(s->tokenizer, m->tokenizer) || s->vocab != m->vocab ||
            memcmp(s->tokenizer_sha256, m->tokenizer_sha256, 32))
            return tlm_errf(e, TLM_EDATA, "%s: header says tokenizer %s (vocab %u), %s says %s (vocab %u)%s",
                            s->path, s->tokenizer, s->vocab, m->path, m->tokenizer, m->vocab,
                            strcmp(s->tokenizer, m->tokenizer) || s->vocab != m->vocab
                                ? ""
                                : " with another definition hash");
        if (s->n_tokens != ms->tokens)
            return tlm_errf(e, TLM_EDATA, "%s: header says %llu tokens, %s says %llu", s->path,
                            (unsigned long long)s->n_tokens, m->path, (unsigned long long)ms->tokens);
        if (memcmp(s->payload_sha256, ms->sha256, 32)) {
            char a[65], b2[65];
            tlm_hex(s->payload_sha256, 32, a);
            tlm_hex(ms->sha256, 32, b2);
            return tlm_errf(e, TLM_EDATA, "%s: header's payload SHA-256 %.16s... differs from %s's %.16s...", s->path,
                            a, m->path, b2);
        }
    }
    if (whole_folder && (size_t)set->n != sp->n) {
        /* the folder lacks a listed shard: name the first one missing */
        for (size_t j = 0; j < sp->n; j++) {
            int found = 0;
            for (int i = 0; i < set->n && !found; i++)
                found = !strcmp(base_name(set->shards[i].path), base_name(sp->shards[j].file));
            if (!found)
                return tlm_errf(e, TLM_EDATA, "%s lists %s, which is missing (%d of %zu shards present)", m->path,
                                sp->shards[j].file, set->n, sp->n);
        }
    }
    return 0;
}

int eng_manifest_locate(const char *data_path, int is_folder, char *manifest, size_t cap, char split[16])
{
    char buf[4096];
    if ((size_t)snprintf(buf, sizeof buf, "%s", data_path) >= sizeof buf)
        return 0;
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    if (!is_folder) { /* DIR/S/x.tlmtok -> DIR/S */
        char *s = strrchr(buf, '/');
        if (!s)
            snprintf(buf, sizeof buf, ".");
        else
            *s = '\0';
    }
    /* the split folder DIR/S: split = S, manifest = DIR/manifest.json */
    char full[4096];
    const char *dir = buf;
    if (!strcmp(buf, ".") || !strchr(buf, '/')) {
        /* a relative name without a parent: its parent is ".." of it */
        if ((size_t)snprintf(full, sizeof full, "./%s", buf) >= sizeof full)
            return 0;
        dir = full;
    }
    const char *slash = strrchr(dir, '/');
    const char *sname = slash + 1;
    if (!*sname || !strcmp(sname, ".") || !strcmp(sname, "..") || strlen(sname) >= 16)
        return 0;
    int plen = (int)(slash - dir);
    if ((size_t)snprintf(manifest, cap, "%.*s/" ENG_MANIFEST_FILE, plen ? plen : 1, plen ? dir : "/") >= cap)
        return 0;
    struct stat st;
    if (stat(manifest, &st))
        return 0;
    snprintf(split, 16, "%s", sname);
    return 1;
}
