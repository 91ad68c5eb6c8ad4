#!/usr/bin/env python3
"""bench_engine_torch.py: the PyTorch side of bench_engine: the same
Transformer++ (RMSNorm pre-norm, RoPE, causal softmax attention, SwiGLU,
untied head) trained with torch.optim.AdamW in fp32 on random tokens, timed
like the engine (one warm-up step, then the median of `--steps` steps).  Prints
"tokens_per_s X"."""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


class Block(nn.Module):
    def __init__(self, d, H, dff):
        super().__init__()
        self.H = H
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gu = nn.Linear(d, 2 * dff, bias=False)
        self.down = nn.Linear(dff, d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, T, 3, self.H, d // self.H).permute(2, 0, 3, 1, 4)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.H)
        a = torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(B, T, d))
        g, u = self.gu(self.n2(x)).chunk(2, -1)
        return x + self.down(F.silu(g) * u)


def main():
    ap = argparse.ArgumentParser()
    for k in ("d", "layers", "heads", "dff", "vocab", "seq", "batch", "steps", "threads"):
        ap.add_argument("--" + k, type=int, required=True)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    emb = nn.Embedding(a.vocab, a.d)
    blocks = nn.ModuleList([Block(a.d, a.heads, a.dff) for _ in range(a.layers)])
    norm, head = RMSNorm(a.d), nn.Linear(a.d, a.vocab, bias=False)
    params = list(emb.parameters()) + list(blocks.parameters()) + list(norm.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    hd = a.d // a.heads
    inv = 10000.0 ** (-torch.arange(0, hd // 2, dtype=torch.float64) * 2 / hd)
    ang = torch.arange(a.seq, dtype=torch.float64)[:, None] * inv[None]
    cos, sin = ang.cos().float(), ang.sin().float()
    mask = torch.triu(torch.ones(a.seq, a.seq, dtype=torch.bool), 1)
    times = []
    for step in range(a.steps + 1):
        t0 = time.perf_counter()
        tok = torch.randint(0, a.vocab, (a.batch, a.seq))
        tgt = torch.randint(0, a.vocab, (a.batch, a.seq))
        x = emb(tok)
        for b in blocks:
            x = b(x, cos, sin, mask)
        loss = F.cross_entropy(head(norm(x)).view(-1, a.vocab), tgt.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step > 0:
            times.append(time.perf_counter() - t0)
    med = sorted(times)[len(times) // 2]
    print("tokens_per_s %.1f" % (a.batch * a.seq / med), flush=True)


if __name__ == "__main__":
    main()
