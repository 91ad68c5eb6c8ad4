/* lr.c: warm-up + cosine learning rate and step arithmetic (lr.h). */
#include "engine/train/lr.h"

#include <math.h>

int64_t eng_train_total_steps(const eng_train_cfg *t) { return t->tokens / t->batch_tokens; }

int eng_train_seqs_per_step(const eng_train_cfg *t) { return (int)(t->batch_tokens / t->seq_len); }

int eng_train_accum_steps(const eng_train_cfg *t) { return eng_train_seqs_per_step(t) / t->micro_batch; }

double eng_lr_at(const eng_train_cfg *t, int64_t step)
{
    const double B = (double)t->batch_tokens, W = (double)t->warmup_tokens;
    const double N = (double)eng_train_total_steps(t) * B;
    const double done = (double)(step - 1) * B;
    if (done < W) {
        double f = (done + B) / W;
        return t->lr * (f < 1 ? f : 1);
    }
    double p = N > W ? (done - W) / (N - W) : 1;
    p = p < 0 ? 0 : p > 1 ? 1 : p;
    const double r = t->min_lr_ratio;
    return t->lr * (r + (1 - r) * 0.5 * (1 + cos(M_PI * p)));
}

int eng_period_ends(int64_t every, int64_t batch_tokens, int64_t step)
{
    if (every <= 0 || step <= 0)
        return 0;
    return (step * batch_tokens) / every > ((step - 1) * batch_tokens) / every;
}
