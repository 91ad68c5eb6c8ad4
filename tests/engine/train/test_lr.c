/* test_lr.c: the learning-rate schedule (warm-up, then cosine to
 * min_lr_ratio x lr) and the step arithmetic that the trainer, the `start`
 * event and checkpoints share. */
#include <math.h>

#include "engine/train/lr.h"
#include "tests/lib/tap.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b) + 1e-18; }

int main(void)
{
    eng_train_cfg t = {0};
    t.tokens = 10000 + 50; /* a partial last batch is not trained */
    t.batch_tokens = 100;
    t.seq_len = 25;
    t.micro_batch = 2;
    t.lr = 1e-3;
    t.min_lr_ratio = 0.1;
    t.warmup_tokens = 1000;

    TAP_OK(eng_train_total_steps(&t) == 100, "total steps = floor(tokens / batch_tokens) = 100 (%lld)",
           (long long)eng_train_total_steps(&t));
    TAP_OK(eng_train_seqs_per_step(&t) == 4 && eng_train_accum_steps(&t) == 2,
           "100 tokens of 25 = 4 sequences = 2 micro-batches of 2");

    TAP_OK(close_to(eng_lr_at(&t, 1), 1e-4), "step 1 of the warm-up: lr x B / W = 1e-4 (%g)", eng_lr_at(&t, 1));
    TAP_OK(close_to(eng_lr_at(&t, 5), 5e-4), "step 5: 5e-4 (%g)", eng_lr_at(&t, 5));
    TAP_OK(close_to(eng_lr_at(&t, 10), 1e-3), "step 10 ends the warm-up at the peak (%g)", eng_lr_at(&t, 10));
    TAP_OK(close_to(eng_lr_at(&t, 11), 1e-3), "step 11 starts the cosine at the peak (%g)", eng_lr_at(&t, 11));
    /* p = 0.5 where done - W = (N - W) / 2: done = 5500, step 56 */
    TAP_OK(close_to(eng_lr_at(&t, 56), 1e-3 * (0.1 + 0.9 * 0.5)), "halfway through the cosine: lr x (r + (1-r)/2) (%g)",
           eng_lr_at(&t, 56));
    /* p = 0.25: done = 3250 is not a step; check the curve's shape instead */
    int mono = 1, above = 1;
    for (int s = 12; s <= 100; s++) {
        mono &= eng_lr_at(&t, s) <= eng_lr_at(&t, s - 1);
        above &= eng_lr_at(&t, s) >= 1e-4 * (1 - 1e-12);
    }
    TAP_OK(mono && above, "after the warm-up the rate never rises and never drops below min_lr_ratio x lr");
    double p_last = (9900.0 - 1000) / 9000;
    TAP_OK(close_to(eng_lr_at(&t, 100), 1e-3 * (0.1 + 0.9 * 0.5 * (1 + cos(M_PI * p_last)))),
           "the last step (p = 89/90) is just above the floor (%g)", eng_lr_at(&t, 100));
    TAP_OK(close_to(eng_lr_at(&t, 101), 1e-4) && close_to(eng_lr_at(&t, 500), 1e-4),
           "past the end the floor holds (p clamped)");

    t.warmup_tokens = 0;
    TAP_OK(close_to(eng_lr_at(&t, 1), 1e-3), "no warm-up: step 1 at the peak (%g)", eng_lr_at(&t, 1));
    t.warmup_tokens = 10000;
    TAP_OK(close_to(eng_lr_at(&t, 100), 1e-3) && close_to(eng_lr_at(&t, 50), 5e-4),
           "warm-up over the whole run: linear to the peak at the last step");

    /* periods: an event ends in the step whose tokens cross a multiple */
    int hits = 0, at[8], n = 0;
    for (int s = 1; s <= 100; s++)
        if (eng_period_ends(2500, 100, s)) {
            hits++;
            if (n < 8)
                at[n++] = s;
        }
    TAP_OK(hits == 4 && at[0] == 25 && at[1] == 50 && at[3] == 100, "every 2500 tokens: steps 25, 50, 75, 100");
    hits = 0;
    for (int s = 1; s <= 100; s++)
        hits += eng_period_ends(250, 100, s);
    TAP_OK(hits == 40, "a period that is not a multiple of the batch: once per crossing (40)");
    TAP_OK(!eng_period_ends(0, 100, 10), "period 0: never");
    return tap_done();
}
