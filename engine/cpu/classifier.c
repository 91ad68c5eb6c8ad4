/* classifier.c: the CPU's fused classifier (ops.h classifier_*): the LM
 * head's matmul and softmax cross-entropy.  Its one chunk is every row,
 * so the calls are the ones the model made before the fusion, in the same
 * order, and every number is the same bit for bit (the CPU tests and the
 * PyTorch parity tests hold unchanged); the backward reuses the logits
 * the forward left in the workspace (ops.h allows it) instead of a second
 * head matmul.  Must not: keep state beyond the workspace it is given. */
#include "engine/cpu/internal.h"

size_t eng__cpu_classifier_workspace(void *ctx, int N, int V, int C)
{
    (void)ctx;
    (void)C;
    return (size_t)N * (size_t)V;
}

void eng__cpu_classifier_fwd(void *ctx, float *losses, double *loss_acc, const eng_act *xa, const void *w_lp,
                             const int32_t *targets, int N, int V, int C, float *ws)
{
    /* the CPU stores fp32 only (ops.h): its weight copy is the master */
    const float *x = (const float *)xa, *w = (const float *)w_lp;
    eng__cpu_matmul(ctx, 0, 1, N, V, C, 1.0f, x, C, w, C, 0.0f, ws, V);
    eng__cpu_xent_fwd(ctx, losses, ws, targets, N, V);
    /* in row order in double, as the model summed the host copy */
    double sum = 0;
    int64_t cnt = 0;
    for (int n = 0; n < N; n++)
        if (targets[n] >= 0) {
            sum += losses[n];
            cnt++;
        }
    *loss_acc += cnt ? sum / (double)cnt : 0.0;
}

void eng__cpu_classifier_bwd(void *ctx, eng_act *dxa, float *dw, const eng_act *xa, const void *w_lp,
                             const int32_t *targets, int N, int V, int C, float dscale, float *ws)
{
    float *dx = (float *)dxa;
    const float *x = (const float *)xa, *w = (const float *)w_lp;
    eng__cpu_xent_bwd(ctx, ws, targets, N, V, dscale); /* ws holds the forward's logits */
    eng__cpu_matmul(ctx, 0, 0, N, C, V, 1.0f, ws, V, w, C, 0.0f, dx, C);
    eng__cpu_matmul(ctx, 1, 0, V, C, N, 1.0f, ws, V, x, C, 1.0f, dw, C);
}
