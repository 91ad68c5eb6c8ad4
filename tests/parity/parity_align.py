#!/usr/bin/env python3
"""parity_align.py: the alignment analysis (rho_MLP, rho_block per layer)
against PyTorch, on two models:

  1. a random GPT-2-shaped checkpoint written here in Hugging Face layout
     (config.json + model.safetensors, Conv1D weights (in, out), biases,
     learned positions; random LayerNorm gains and biases), read by TLM's
     forward-only GPT-2 (engine/eval/gpt2.c) and by a GPT-2 written here in
     PyTorch, float64;
  2. a random TLM model (eval_run --model-out), recomputed with the model of
     tests/parity/parity_torch.py (its RMSNorm inputs are the residual streams h_l
     and z_l).

Both take 150 token ids from a file (eval.alignment.ids) in windows of the
model's context (64 and 48), each window starting at position 0; rho(l) is
the mean over tokens of the per-token cosine.  Checked: every rho within
2e-5 (absolute; cosines are in [-1, 1]) and the Pearson r with depth
within 1e-4.  Exit 0 pass, 1 fail (77: skip)."""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_torch as pt  # noqa: E402

TOL_RHO, TOL_R = 2e-5, 1e-4
N_TOK = 150


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make_gpt2(d, gen):
    c = {"model_type": "gpt2", "n_embd": 32, "n_layer": 4, "n_head": 4, "n_positions": 64, "vocab_size": 300,
         "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    E, V, P = c["n_embd"], c["vocab_size"], c["n_positions"]

    def r(*shape, s=0.2):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * s
    W = {"wte.weight": r(V, E, s=0.5), "wpe.weight": r(P, E, s=0.3),
         "ln_f.weight": 1 + r(E, s=0.1), "ln_f.bias": r(E, s=0.1)}
    for l in range(c["n_layer"]):
        p = "h.%d." % l
        W.update({p + "ln_1.weight": 1 + r(E, s=0.1), p + "ln_1.bias": r(E, s=0.1),
                  p + "attn.c_attn.weight": r(E, 3 * E), p + "attn.c_attn.bias": r(3 * E, s=0.05),
                  p + "attn.c_proj.weight": r(E, E), p + "attn.c_proj.bias": r(E, s=0.05),
                  p + "ln_2.weight": 1 + r(E, s=0.1), p + "ln_2.bias": r(E, s=0.1),
                  p + "mlp.c_fc.weight": r(E, 4 * E), p + "mlp.c_fc.bias": r(4 * E, s=0.05),
                  p + "mlp.c_proj.weight": r(4 * E, E), p + "mlp.c_proj.bias": r(E, s=0.05)})
    # round to fp32 so both sides start from the same numbers
    W = {k: v.float().double() for k, v in W.items()}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f)
    save_safetensors(os.path.join(d, "model.safetensors"), W)
    return c, W


def gpt2_states(c, W, ids):
    """[(h_l, z_l, f_l)] for one window, float64."""
    E, H = c["n_embd"], c["n_head"]
    T = len(ids)
    x = W["wte.weight"][torch.tensor(ids)] + W["wpe.weight"][:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    out = []
    for l in range(c["n_layer"]):
        p = "h.%d." % l
        a = torch.nn.functional.layer_norm(x, (E,), W[p + "ln_1.weight"], W[p + "ln_1.bias"], c["layer_norm_epsilon"])
        q, k, v = (a @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]).split(E, dim=-1)
        q, k, v = (t.view(T, H, E // H).transpose(0, 1) for t in (q, k, v))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(E // H)
        y = (torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ v).transpose(0, 1).reshape(T, E)
        z = x + y @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        m = torch.nn.functional.layer_norm(z, (E,), W[p + "ln_2.weight"], W[p + "ln_2.bias"], c["layer_norm_epsilon"])
        hmid = m @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]
        hmid = 0.5 * hmid * (1 + torch.tanh(math.sqrt(2 / math.pi) * (hmid + 0.044715 * hmid ** 3)))
        f = hmid @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        out.append((x, z, f))
        x = z + f
    return out


def tlm_states(P, cfg, ids):
    """[(h_l, z_l, f_l)] of the parity_torch model: its RMSNorm inputs are
    h_l (input_layernorm), z_l (post_attention_layernorm) and h_L (model.norm)."""
    seen = []
    orig = pt.rmsnorm

    def spy(x, w, eps):
        seen.append(x.detach()[0])
        return orig(x, w, eps)
    pt.rmsnorm = spy
    try:
        tok = torch.tensor([ids], dtype=torch.int32)
        with torch.no_grad():
            pt.forward(P, cfg, tok, torch.full_like(tok, -1))
    finally:
        pt.rmsnorm = orig
    L = cfg["layers"]
    assert len(seen) == 2 * L + 1
    return [(seen[2 * l], seen[2 * l + 1], seen[2 * l + 2] - seen[2 * l + 1]) for l in range(L)]


def rhos(states_of, ids, window):
    mlp, block = None, None
    for at in range(0, len(ids), window):
        st = states_of(ids[at:at + window])
        if mlp is None:
            mlp, block = [0.0] * len(st), [0.0] * len(st)
        for l, (h, z, f) in enumerate(st):
            cos = torch.nn.functional.cosine_similarity
            mlp[l] += cos(f, h, dim=-1, eps=0).sum().item()
            block[l] += cos(z + f - h, h, dim=-1, eps=0).sum().item()
    return [v / len(ids) for v in mlp], [v / len(ids) for v in block]


def pearson(y):
    x = list(range(len(y)))
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def compare(chk, name, lines, mlp, block):
    got = {(x["layer"], x["name"]): x["value"] for x in lines if x["ev"] == "layer"}
    res = {x["metric"]: x for x in lines if x["ev"] == "eval"}
    worst = 0.0
    for l in range(len(mlp)):
        for key, want in (("rho_mlp", mlp[l]), ("rho_block", block[l])):
            v = got.get((l, key))
            err = abs(v - want) if v is not None else float("inf")
            worst = max(worst, err)
            print("# %s layer %d %s: engine %.8f reference %.8f" % (name, l, key, v if v is not None else float("nan"),
                                                                     want))
    chk.report("%s: %d layers x (rho_mlp, rho_block) match" % (name, len(mlp)), worst <= TOL_RHO,
               "worst |error| %.2e, tol %.0e" % (worst, TOL_RHO))
    for metric, ys in (("pearson_rho_mlp", mlp), ("pearson_rho_block", block)):
        r = res.get(metric)
        want = pearson(ys)
        err = abs(r["value"] - want) if r else float("inf")
        chk.report("%s: %s = %.6f (reference %.6f), n = %s" % (name, metric, r["value"] if r else float("nan"), want,
                                                               r["n"] if r else None),
                   err <= TOL_R and r["n"] == N_TOK, "error %.2e, tol %.0e" % (err, TOL_R))


def run(exe, args):
    r = subprocess.run([exe] + args, stdout=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        return None
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def main():
    exe = pt.program("eval_run")
    if not exe:
        return 77
    chk = pt.Check()
    gen = torch.Generator().manual_seed(7)
    with tempfile.TemporaryDirectory(prefix="tlm-parity-align-") as d:
        ids = torch.randint(0, 256, (N_TOK,), generator=gen).tolist()
        with open(os.path.join(d, "ids.txt"), "w") as f:
            f.write(" ".join(map(str, ids[:70])) + "\n" + " ".join(map(str, ids[70:])) + "\n")
        with open(os.path.join(d, "cfg.yaml"), "w") as f:
            f.write("tokenizer: bytes\nseed: 5\n"
                    "model: {d_model: 48, layers: 5, heads: 4, d_ff: 96, init_std: 0.2}\n"
                    "taper: {schedule: cosine, ratio: [1.5, 0.5]}\n"
                    "train: {seq_len: 48, tokens: 100000}\n"
                    "eval: {suites: [alignment], alignment: {ids: %s/ids.txt, tokens: %d}}\n" % (d, N_TOK))
        # 1. GPT-2
        g2 = os.path.join(d, "gpt2")
        os.mkdir(g2)
        c, W = make_gpt2(g2, gen)
        lines = run(exe, ["--config", os.path.join(d, "cfg.yaml"), "--checkpoint", g2])
        if lines is None:
            chk.report("eval_run on the GPT-2 checkpoint", False)
        else:
            mlp, block = rhos(lambda w: gpt2_states(c, W, w), ids, c["n_positions"])
            compare(chk, "gpt2", lines, mlp, block)
        # 2. TLM
        model = os.path.join(d, "tlm.safetensors")
        lines = run(exe, ["--config", os.path.join(d, "cfg.yaml"), "--model-out", model])
        if lines is None:
            chk.report("eval_run on a TLM model", False)
        else:
            Wt, meta = pt.load_safetensors(model)
            cfg = json.loads(meta["tlm_parity"])
            P = {k: v.double() for k, v in Wt.items()}
            mlp, block = rhos(lambda w: tlm_states(P, cfg, w), ids, cfg["seq_len"])
            compare(chk, "tlm", lines, mlp, block)
    print("1..%d" % chk.n)
    return 0 if chk.ok else 1


if __name__ == "__main__":
    sys.exit(main())
