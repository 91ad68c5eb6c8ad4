/* lambada.c: the `lambada` suite, lm-evaluation-harness's
 * "lambada_openai" task from its JSONL (one {"text": ...} per line, the
 * OpenAI release lambada_test.jsonl):
 *   context  = " ".join(text.split(" ")[:-1]), target = " " + last word
 *   acc      = mean of is_greedy (every target token is the argmax)
 *   perplexity = exp(-mean log p(target))
 * acc's stderr is the sample standard error of the mean; perplexity's
 * (bootstrapped by the harness) is the delta-method exp(m) * stderr(ll).
 * Must not: score a line it could not read (errors name file and line). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "engine/eval/internal.h"

#define SUITE (eng_suite_names[ENG_SUITE_LAMBADA])

int eng_eval_lambada(const eng_eval_lm *lm, eng_tok *tok, const eng_eval_cfg *cfg, const eng_eval_sink *s,
                     tlm_err *e)
{
    ev_jsonl r;
    int rc = ev_jsonl_open(&r, cfg->lambada, e);
    if (rc)
        return tlm_err_prefix(e, "eval.lambada");
    ev_req *reqs = NULL;
    size_t n = 0, cap = 0;
    json_t *o;
    while ((rc = ev_jsonl_next(&r, &o, e)) == 1) {
        const char *text;
        if ((rc = ev_get_str(&r, o, "text", &text, e))) {
            json_decref(o);
            break;
        }
        const char *sp = strrchr(text, ' ');
        if (!sp || sp == text) {
            json_decref(o);
            rc = ev_item_err(&r, e, "\"text\" has no context before its last word");
            break;
        }
        if (TLM_GROW(reqs, cap, n + 1, 1024)) {
            json_decref(o);
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        /* the target keeps its leading space: " " + word */
        rc = ev_encode_pair(tok, text, (size_t)(sp - text), sp, strlen(sp), &reqs[n], e);
        json_decref(o);
        if (rc) {
            rc = ev_item_err(&r, e, "%s", e->msg);
            break;
        }
        n++;
        if (reqs[n - 1].n_cont > (size_t)lm->max_length) {
            rc = ev_item_err(&r, e, "the last word is %zu tokens, longer than the context length %d",
                             reqs[n - 1].n_cont, lm->max_length);
            break;
        }
    }
    ev_jsonl_close(&r);
    if (!rc && n == 0)
        rc = tlm_errf(e, TLM_EDATA, "%s: no items", cfg->lambada);
    if (!rc && !ev_checking(lm))
        rc = ev_score(lm, lm->max_length, reqs, n, s, e);
    if (!rc && !ev_checking(lm)) {
        double *ll = malloc(n * sizeof *ll), *acc = malloc(n * sizeof *acc);
        if (!ll || !acc) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < n; i++) {
                ll[i] = reqs[i].loglik;
                acc[i] = reqs[i].greedy;
                if (s && s->item) {
                    eng_eval_item it = {SUITE, SUITE, (int64_t)i, 0, ll[i], reqs[i].greedy, (int64_t)reqs[i].n_cont};
                    s->item(s->ud, &it);
                }
            }
            double m = ev_mean(ll, n), ppl = exp(-m);
            ev_result(s, SUITE, SUITE, "perplexity", ppl, (int64_t)n, ppl * ev_stderr(ll, n));
            ev_result(s, SUITE, SUITE, "acc", ev_mean(acc, n), (int64_t)n, ev_stderr(acc, n));
        }
        free(ll);
        free(acc);
    }
    for (size_t i = 0; i < n; i++)
        ev_req_clear(&reqs[i]);
    free(reqs);
    return rc;
}
