/* bench_cuda.c: training throughput of the CUDA backend on a preset (a
 * benchmark program, not a test; scripts/device-check.sh runs it beside
 * bench/bench_cuda_torch.py on the GPU machine).
 *
 *   bench_cuda [--preset 440m] [--arch transformer] [--seq T] [--micro-batch B] [--steps N] [--device K]
 *              [--precision bf16|fp32] [--attention flash|cudnn] [--graph on|off] [--fast-matmul]
 *
 * Trains the preset's model with AdamW on random tokens the trainer's way
 * (the fused classifier, the losses kept on the device and read with the
 * gradient norm once a step, so each step is complete when it ends), one
 * warm-up step (two with --graph on), then N timed steps, with
 * activations and the weight copy in --precision (bf16, the default a GPU
 * job trains in, or fp32), bf16 attention on --attention (flash.cu, the
 * default, or cuDNN's SDPA), each step's forward and backward as one CUDA
 * graph with --graph on (train.cuda_graph: the first warm-up step runs op
 * by op, the second captures, the timed ones replay; off, the default, op
 * by op; on with cudnn is refused), and prints one line of key=value pairs: tokens/s from the
 * median step, TFLOP/s from eng_account's training FLOPs per token, MFU
 * against 989 TFLOP/s (the H100/H200 dense bf16 peak the issue uses, so the
 * figure is comparable with PyTorch's whatever this backend's precision),
 * the backend's peak of allocations (peak_mib), what the run holds on the
 * GPU by its free memory before and after (device_used_mib: the CUDA
 * context's own excluded, cuBLASLt's and cuDNN's included), and the first
 * and last losses.  --fast-matmul (with --precision fp32): the matmuls as
 * bf16 tensor-core products on fp32 storage
 * (eng_backend_cuda_set_fast_matmul).  Exit 2 on bad usage, 77 when there
 * is no GPU, 1 when the run fails (an `oom` says so). */
#include <config.h> /* autoconf */

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "common/clock.h"
#include "engine/config/account.h"
#include "engine/cuda/backend.h"
#include "engine/model/model.h"

#define PEAK_TFLOPS 989.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_cuda [--preset NAME] [--arch A] [--seq T] [--micro-batch B] [--steps N] "
                    "[--device K] [--precision bf16|fp32] [--attention flash|cudnn] [--graph on|off] "
                    "[--fast-matmul]\n");
    return 2;
}

int main(int argc, char **argv)
{
#ifndef TLM_HAVE_CUDA
    (void)argc, (void)argv;
    fprintf(stderr, "bench_cuda: built without CUDA\n");
    return 77;
#else
    const char *preset = "440m", *arch = "transformer";
    int T = 0, B = 1, steps = 5, dev = 0, fast = 0, bf16 = 1, cudnn = 0, graph = 0;
    static const struct option longopts[] = {{"preset", required_argument, 0, 'p'},
                                             {"arch", required_argument, 0, 'a'},
                                             {"seq", required_argument, 0, 't'},
                                             {"micro-batch", required_argument, 0, 'b'},
                                             {"steps", required_argument, 0, 's'},
                                             {"device", required_argument, 0, 'd'},
                                             {"fast-matmul", no_argument, 0, 'f'},
                                             {"precision", required_argument, 0, 'r'},
                                             {"attention", required_argument, 0, 'n'},
                                             {"graph", required_argument, 0, 'g'},
                                             {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p': preset = optarg; break;
        case 'a': arch = optarg; break;
        case 't': T = atoi(optarg); break;
        case 'b': B = atoi(optarg); break;
        case 's': steps = atoi(optarg); break;
        case 'd': dev = atoi(optarg); break;
        case 'f': fast = 1; break;
        case 'r':
            if (strcmp(optarg, "bf16") && strcmp(optarg, "fp32"))
                return usage();
            bf16 = !strcmp(optarg, "bf16");
            break;
        case 'n':
            if (strcmp(optarg, "flash") && strcmp(optarg, "cudnn"))
                return usage();
            cudnn = !strcmp(optarg, "cudnn");
            break;
        case 'g':
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return usage();
            graph = !strcmp(optarg, "on");
            break;
        default: return usage();
        }
    }
    if (optind < argc || B < 1 || steps < 1 || steps > 1000 || T < 0 || T > 65536)
        return usage();
    char y[512], seq[48] = "";
    if (T)
        snprintf(seq, sizeof seq, "seq_len: %d, ", T);
    snprintf(y, sizeof y, "scale: %s\narch: %s\ntrain: {%smicro_batch: %d, attention: %s, cuda_graph: %s}\n", preset,
             arch, seq, B, cudnn ? "cudnn" : "flash", graph ? "on" : "off");
    tlm_err e = {0};
    tlm_cfg_node *root;
    eng_config c;
    eng_account a;
    if (tlm_cfg_parse_buffer("bench_cuda", y, strlen(y), &root, &e)) {
        fprintf(stderr, "bench_cuda: %s\n", e.msg);
        return 2;
    }
    int rc = eng_config_from_tree(root, &c, &e), on;
    tlm_cfg_free(root);
    if (rc || eng_account_compute(&c, &a, &e) || eng_cuda_graph_resolve(&c, 1, &on, &e)) {
        fprintf(stderr, "bench_cuda: %s\n", e.msg);
        return 2;
    }
    T = c.train.seq_len;
    /* the device's free memory before the backend and model (the CUDA
     * context is made by this first call), against after the steps: what
     * the run holds on the GPU, libraries' own memory included, to set
     * beside tlm-worker --describe's gpu_memory */
    eng_cuda_device_info info;
    if (eng_cuda_device_info_get(dev, &info, &e)) {
        fprintf(stderr, "bench_cuda: %s\n", e.msg);
        return e.code == TLM_ECONFIG ? 77 : 1;
    }
    const size_t free0 = info.free_bytes;
    eng_backend *be;
    if (eng_backend_cuda_create(&be, dev, &e)) {
        fprintf(stderr, "bench_cuda: %s\n", e.msg);
        return e.code == TLM_ECONFIG ? 77 : 1;
    }
    eng_backend_cuda_set_fast_matmul(be, fast);
    eng_backend_cuda_set_attention_cudnn(be, cudnn);
    if (eng_backend_cuda_set_dtype(be, bf16 ? ENG_BF16 : ENG_F32, &e)) {
        fprintf(stderr, "bench_cuda: %s\n", e.msg);
        eng_backend_free(be);
        return 1;
    }
    eng_model *m;
    if (eng_model_create(&m, &c, be, B, T, &e)) {
        fprintf(stderr, "bench_cuda: %s: %s\n", tlm_status_kind(e.code), e.msg);
        eng_backend_free(be);
        return 1;
    }
    eng_model_init_weights(m, 1);
    const int N = B * T, V = c.model.vocab;
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)N), *tgt = malloc(sizeof(int32_t) * (size_t)N);
    const int warm = graph ? 2 : 1; /* untimed steps: the model captures a graph at a shape's second */
    double *t_step = calloc((size_t)(warm + steps), sizeof(double)), first = NAN, last = NAN;
    if (!tok || !tgt || !t_step) {
        fprintf(stderr, "bench_cuda: out of memory\n");
        return 1;
    }
    uint64_t s = 42;
    rc = 0;
    for (int st = 0; st < warm + steps && !rc; st++) {
        for (int i = 0; i < N; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            tok[i] = (int32_t)((s >> 33) % (uint64_t)V);
            tgt[i] = (int32_t)((s >> 13) % (uint64_t)V);
        }
        double loss = NAN, gn = NAN, t0 = tlm_clock_mono();
        eng_model_zero_grads(m);
        rc = eng_model_forward_train(m, tok, tgt, B, T, &e) || eng_model_backward(m, 1.0f, &e) ||
             eng_model_step_report(m, &loss, &gn);
        eng_adamw opt = {3e-4, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, &e) || eng_backend_cuda_status(be, &e);
        /* step_report waited for the device, so the previous step's
         * update is in this one's time: steady steps time whole */
        t_step[st] = tlm_clock_mono() - t0;
        if (st == 0)
            first = loss;
        last = loss;
    }
    if (rc) {
        tlm_err ce = {0};
        if (eng_backend_cuda_status(be, &ce))
            e = ce;
        fprintf(stderr, "bench_cuda: %s: %s\n", tlm_status_kind(e.code), e.msg);
    } else {
        qsort(t_step + warm, (size_t)steps, sizeof(double), cmp_double);
        const double med = t_step[warm + steps / 2], tps = N / med, tflops = a.flops_train * tps * 1e-12;
        size_t now, peak;
        eng_backend_cuda_memory(be, &now, &peak);
        eng_cuda_device_info after;
        const double used = eng_cuda_device_info_get(dev, &after, &e) || after.free_bytes > free0
                                ? NAN
                                : (double)(free0 - after.free_bytes) / 1048576.0;
        printf("engine=tlm-cuda-%s attention=%s graph=%s preset=%s arch=%s seq=%d micro_batch=%d params=%zu steps=%d "
               "step_ms=%.1f tokens_per_s=%.1f tflops=%.2f mfu=%.4f peak_mib=%.0f device_used_mib=%.0f "
               "flops_per_token=%.6g loss_first=%.4f loss_last=%.4f gpu=\"%s\"\n",
               bf16 ? "bf16" : fast ? "fp32-bf16mm" : "fp32", cudnn ? "cudnn" : "flash", graph ? "on" : "off", preset,
               arch, T, B, eng_model_param_count(m), steps, med * 1e3, tps, tflops, tflops / PEAK_TFLOPS,
               peak / 1048576.0, used, a.flops_train, first, last, info.name);
    }
    eng_model_free(m);
    eng_backend_free(be);
    free(tok);
    free(tgt);
    free(t_step);
    return rc ? 1 : 0;
#endif
}
