#!/usr/bin/env python3
"""bench_cuda_torch.py: the same model as bench/bench_cuda in PyTorch on the
same GPU, for scripts/device-check.sh: a Llama-style transformer (RMSNorm,
RoPE, SwiGLU, tied or untied head, per-layer MLP widths) with the shapes
`tlm-worker --describe` gives for a config, trained with bf16 autocast, SDPA
(flash) attention and fused AdamW, eager or torch.compile.

    bench_cuda_torch.py --describe DESC.json [--micro-batch B] [--steps N] [--compile]

Prints one line of key=value pairs as bench_cuda does: tokens/s from the
median step (after warm-up steps, which include compilation), TFLOP/s from
the describe file's training FLOPs per token, MFU against 989 TFLOP/s, peak
memory, first and last losses.  Exit 77 when there is no GPU or no torch.
"""
import argparse
import json
import math
import sys
import time

PEAK_TFLOPS = 989.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--describe", required=True, help="tlm-worker --describe output (JSON)")
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as ex:
        print("bench_cuda_torch: no torch: %s" % ex, file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("bench_cuda_torch: no GPU", file=sys.stderr)
        return 77
    with open(a.describe) as f:
        desc = json.load(f)
    cfg = desc["config"]
    m = cfg["model"]
    d, L, H, Hkv, V = m["d_model"], m["layers"], m["heads"], m["kv_heads"], m["vocab"]
    widths = desc["widths"]["d_ff"]
    T = cfg["train"]["seq_len"]
    B = a.micro_batch
    hd = d // H
    eps = m["norm_eps"]
    theta = m["rope_theta"]
    dev = torch.device("cuda")

    class Block(nn.Module):
        def __init__(self, dff):
            super().__init__()
            self.n1 = nn.RMSNorm(d, eps=eps)
            self.n2 = nn.RMSNorm(d, eps=eps)
            self.qkv = nn.Linear(d, (H + 2 * Hkv) * hd, bias=False)
            self.o = nn.Linear(H * hd, d, bias=False)
            self.gu = nn.Linear(d, 2 * dff, bias=False)
            self.down = nn.Linear(dff, d, bias=False)

        def forward(self, x, cos, sin):
            h = self.n1(x)
            q, k, v = self.qkv(h).split([H * hd, Hkv * hd, Hkv * hd], dim=-1)
            q = q.view(B, T, H, hd).transpose(1, 2)
            k = k.view(B, T, Hkv, hd).transpose(1, 2)
            v = v.view(B, T, Hkv, hd).transpose(1, 2)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=Hkv != H)
            x = x + self.o(y.transpose(1, 2).reshape(B, T, H * hd))
            g, u = self.gu(self.n2(x)).chunk(2, dim=-1)
            return x + self.down(F.silu(g) * u)

    def rope(x, cos, sin):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, d)
            self.blocks = nn.ModuleList([Block(w) for w in widths])
            self.norm = nn.RMSNorm(d, eps=eps)
            self.head = None if m["tied"] else nn.Linear(d, V, bias=False)
            pos = torch.arange(T, dtype=torch.float32)
            inv = theta ** (-torch.arange(0, hd // 2, dtype=torch.float32) * 2 / hd)
            ang = pos[:, None] * inv[None, :]
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)

        def forward(self, tok, tgt):
            x = self.emb(tok)
            for b in self.blocks:
                x = b(x, self.cos, self.sin)
            x = self.norm(x)
            logits = x @ (self.emb.weight if self.head is None else self.head.weight).t()
            return F.cross_entropy(logits.float().view(-1, V), tgt.view(-1))

    torch.manual_seed(1)
    model = Model().to(dev)
    for p in model.parameters():
        if p.dim() == 2:
            nn.init.normal_(p, std=m["init_std"])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, fused=True)

    def step(tok, tgt):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tok, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    fn = torch.compile(step) if a.compile else step
    g = torch.Generator(device=dev).manual_seed(42)
    times, losses = [], []
    torch.cuda.reset_peak_memory_stats()
    t_first = None
    for i in range(a.warmup + a.steps):
        tok = torch.randint(0, V, (B, T), device=dev, generator=g)
        tgt = torch.randint(0, V, (B, T), device=dev, generator=g)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = fn(tok, tgt)
        lv = loss.item()  # synchronises
        dt = time.perf_counter() - t0
        if t_first is None:
            t_first = dt
        losses.append(lv)
        if i >= a.warmup:
            times.append(dt)
    times.sort()
    med = times[len(times) // 2]
    tps = B * T / med
    tflops = desc["flops_per_token"]["train"] * tps * 1e-12
    print(
        "engine=torch-%s-bf16 preset=%s arch=%s seq=%d micro_batch=%d params=%d steps=%d step_ms=%.1f "
        "tokens_per_s=%.1f tflops=%.2f mfu=%.4f peak_mib=%.0f first_step_s=%.1f loss_first=%.4f loss_last=%.4f "
        'torch="%s" gpu="%s"'
        % ("compile" if a.compile else "eager", cfg.get("scale", "?"), cfg["arch"], T, B,
           sum(p.numel() for p in model.parameters()), a.steps, med * 1e3, tps, tflops, tflops / PEAK_TFLOPS,
           torch.cuda.max_memory_allocated() / 1048576.0, t_first, losses[0], losses[-1], torch.__version__,
           torch.cuda.get_device_name(0))
    )
    return 0 if all(math.isfinite(x) for x in losses) else 1


if __name__ == "__main__":
    sys.exit(main())
