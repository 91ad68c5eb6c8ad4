/* ranks.c: a global batch shared among ranks (ranks.h). */
#include "engine/config/ranks.h"

#include <inttypes.h>
#include <stdio.h>

int eng_rank_split_of(const eng_train_cfg *t, int ranks, eng_rank_split *out, tlm_err *e)
{
    const int64_t S = t->seq_len > 0 ? t->batch_tokens / t->seq_len : 0;
    if (ranks < 1 || S < 1)
        return tlm_errf(e, TLM_ECONFIG, "%d ranks for a batch of %" PRId64 " sequences", ranks, S);
    if (S % ranks) {
        /* the nearest batch sizes that do divide, as advice */
        int64_t lo = S / ranks * ranks, hi = lo + ranks;
        char near[96];
        if (lo)
            snprintf(near, sizeof near, "%" PRId64 " or %" PRId64, lo * t->seq_len, hi * t->seq_len);
        else
            snprintf(near, sizeof near, "%" PRId64, hi * t->seq_len);
        return tlm_errf(e, TLM_ECONFIG,
                        "train.batch_tokens %" PRId64 " is %" PRId64 " sequences of %d tokens, which do not divide "
                        "among %d ranks: make it a multiple of %d sequences (batch_tokens %s), or run on a number "
                        "of ranks that divides %" PRId64,
                        t->batch_tokens, S, t->seq_len, ranks, ranks, near, S);
    }
    const int share = (int)(S / ranks);
    int micro = 1;
    for (int d = 1; d <= share && d <= t->micro_batch; d++)
        if (share % d == 0)
            micro = d;
    *out = (eng_rank_split){ranks, (int)S, share, micro, share / micro};
    return 0;
}
