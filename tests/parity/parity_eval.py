#!/usr/bin/env python3
"""parity_eval.py: TLM's benchmark scoring against an independent PyTorch
computation of lm-evaluation-harness's definitions.

Writes small task files in every supported format (WikiText raw, LAMBADA
JSONL, and PIQA, HellaSwag, WinoGrande, ARC-e/-c, SIQA, BoolQ, OpenBookQA:
published layouts, Hugging Face layouts and labels files), runs
$TLM_BUILDDIR/tests/parity/eval_run on a seeded random model (bytes tokenizer,
seq_len 48 so documents need several windows and long prompts are cut from
the left), then recomputes here, in float64 with the model of
tests/parity/parity_torch.py:

  every request's log-likelihood    |d| <= 1e-4 * max(1, |ll|)
  every request's greedy flag       equal
  acc, acc_norm (and their stderr)  equal (a disagreement is accepted only
                                    where the reference's two best scores are
                                    within 1e-6, i.e. a numerical tie)
  LAMBADA perplexity, acc           |d| <= 1e-4 relative
  WikiText token/word/byte ppl, bpb |d| <= 1e-4 relative

The reference follows the harness's definitions as its task files and model
class state them (templates, target delimiter " ", context/continuation
encoding, truncation, rolling windows, HellaSwag preprocessing, WinoGrande
partial scoring, acc_norm by character length, WikiText's document split,
detokeniser and word count); it shares no code with the engine.
Exit 0 pass, 1 fail (77: skip)."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_torch as pt  # noqa: E402  (the model engineer's PyTorch model)

TOL_LL, TOL_METRIC, TIE = 1e-4, 1e-4, 1e-6
SEQ = 48

# ------------------------------------------------------------ task files
WIKI = (" \n = Valkyria Chronicles III = \n \n"
        " Senjō no Valkyria 3 : Unrecorded Chronicles ( Japanese : 戦場のヴァルキュリア3 , lit . Valkyria of the"
        " Battlefield 3 ) , commonly referred to as Valkyria Chronicles III outside Japan , is a tactical role @-@"
        " playing video game developed by Sega and Media.Vision for the PlayStation Portable . \n"
        " \n = = Gameplay = = \n \n"
        " As with previous Valkyira Chronicles games , it is a \" tactical \" game : the player 's units move"
        " 1 @,@ 000 metres at 25 ° N in the year N . The rates ( about 3 @.@ 5 % ) were [ 3 ] ; { fine } ! "
        " ' quoted ' words ? Yes . \n \n"
        " = Tropical Storm = \n \n"
        " The storm formed in the Gulf of Mexico on July 7 and moved ashore near Texas . \n"
        " \n = = = Impact = = = \n \n The storms ' damage was small .\u00a0Two people died . \n")

LAMBADA = [
    "the cat sat on the mat and then the dog sat on the mat",
    "when she opened the old wooden door she finally saw her long lost brother",
    "he said that  the answer was always",
]

PIQA = [  # published layout: labels in piqa-labels.lst
    ({"goal": "How do I boil water?", "sol1": "Heat it in a pot.", "sol2": "Put it in the freezer."}, 0),
    ({"goal": "To open a jar", "sol1": "twist the lid.", "sol2": "twist the jar café."}, 0),
    ({"goal": "Dry wet hair", "sol1": "use a towel", "sol2": "use a fork"}, 1),
]
HELLASWAG = [
    {"ind": 4, "activity_label": "Removing ice from car", "ctx_a": "Then, the man writes over the snow covering"
     " the window of a car, and a woman wearing winter clothes smiles.", "ctx_b": "THEN, the MAN",
     "endings": [", the man adds wax and cuts it.", ", a person boards a ski lift [x] quickly.",
                 ", the man puts on a coat.", ", the man continues removing snow."], "label": 3},
    {"ind": 7, "activity_label": "Home and Garden", "ctx_a": "[header] How to grow tomatoes [title] Pick a  sunny"
     " spot.", "ctx_b": "[step] water them", "endings": ["  every [step] day.", "[title] never.", "with oil.",
                                                         "  sometimes   [x] ."], "label": "0"},
]
WINOGRANDE = [
    {"sentence": "Sarah was a much better surgeon than Maria so _ always got the harder cases.",
     "option1": "Sarah", "option2": "Maria", "answer": "1"},
    {"sentence": "The trophy doesn't fit into the brown suitcase because the _ is too large.",
     "option1": "trophy", "option2": "suitcase", "answer": "1"},
    {"sentence": "I poured water from the bottle into the cup until _ was full.",
     "option1": "the bottle", "option2": "the cup", "answer": "2"},
]
ARC_AI2 = [
    {"id": "a1", "question": {"stem": "Which is a source of light?", "choices": [
        {"text": "the Sun", "label": "A"}, {"text": "a rock", "label": "B"}, {"text": "water", "label": "C"},
        {"text": "a shadow", "label": "D"}]}, "answerKey": "A"},
    {"id": "a2", "question": {"stem": "What do plants need to make food?", "choices": [
        {"text": "sunlight", "label": "A"}, {"text": "darkness", "label": "B"}, {"text": "sand", "label": "C"}]},
     "answerKey": "A"},
]
ARC_HF = [
    {"id": "c1", "question": "Which gas do plants take in?", "choices": {
        "text": ["oxygen", "carbon dioxide", "helium", "neon"], "label": ["1", "2", "3", "4"]}, "answerKey": "2"},
    {"id": "c2", "question": "Why does ice float?", "choices": {
        "text": ["it is less dense than water", "it is heavy", "it is cold", "it is white"],
        "label": ["A", "B", "C", "D"]}, "answerKey": "A"},
]
SIQA = [
    {"context": "Tracy didn't go home that evening and resisted Riley's attacks.",
     "question": "What does Tracy need to do before this?", "answerA": "make a new plan",
     "answerB": "Go home and see Riley", "answerC": "Find somewhere to go", "label": "3"},
    {"context": "Sydney walked past a homeless woman asking for change.", "question": "How would you describe"
     " Sydney?", "answerA": "sympathetic", "answerB": "like a person who was unable to help",
     "answerC": "incredulous", "label": 1},
]
BOOLQ = [
    {"question": "is the sky blue", "title": "Sky", "passage": "The sky appears blue to the human eye because"
     " molecules in the air scatter blue light from the sun more than they scatter red light.", "answer": True},
    {"question": "do fish live in trees", "title": "Fish", "passage": "Fish live in water.", "answer": False},
    {"question": "is water wet", "passage": "Water is a liquid.", "label": 1},
]
OBQA_AI2 = [
    {"id": "o1", "question": {"stem": "The sun is responsible for ", "choices": [
        {"text": "puppies learning new tricks", "label": "A"}, {"text": "plants sprouting", "label": "B"},
        {"text": "the moon", "label": "C"}, {"text": "rocks", "label": "D"}]}, "answerKey": "B"},
    {"id": "o2", "question": {"stem": "A magnet attracts", "choices": [
        {"text": "iron", "label": "A"}, {"text": "wood", "label": "B"}, {"text": "glass", "label": "C"},
        {"text": "paper", "label": "D"}]}, "answerKey": " A"},
]


def write_files(d):
    with open(os.path.join(d, "wiki.raw"), "w", encoding="utf-8") as f:
        f.write(WIKI)
    with open(os.path.join(d, "lambada.jsonl"), "w", encoding="utf-8") as f:
        for t in LAMBADA:
            f.write(json.dumps({"text": t}) + "\n")
    cs = os.path.join(d, "cs")
    os.mkdir(cs)

    def jl(name, items):
        with open(os.path.join(cs, name + ".jsonl"), "w", encoding="utf-8") as f:
            for it in items:
                f.write(json.dumps(it, ensure_ascii=False) + "\n")
    jl("piqa", [it for it, _ in PIQA])
    with open(os.path.join(cs, "piqa-labels.lst"), "w") as f:
        f.write("".join("%d\n" % lab for _, lab in PIQA))
    jl("hellaswag", HELLASWAG)
    jl("winogrande", WINOGRANDE)
    jl("arc_easy", ARC_AI2)
    jl("arc_challenge", ARC_HF)
    jl("siqa", SIQA)
    jl("boolq", BOOLQ)
    jl("openbookqa", OBQA_AI2)
    with open(os.path.join(d, "cfg.yaml"), "w") as f:
        f.write("tokenizer: bytes\nseed: 11\n"
                "model: {d_model: 32, layers: 3, heads: 4, kv_heads: 2, d_ff: 64, init_std: 0.25}\n"
                "taper: {schedule: cosine, ratio: [1.5, 0.5]}\n"
                "train: {seq_len: %d, tokens: 100000}\n"
                "eval:\n  suites: [wikitext, lambada, commonsense]\n  batch: 3\n"
                "  wikitext: %s/wiki.raw\n  lambada: %s/lambada.jsonl\n  commonsense: %s\n" % (SEQ, d, d, cs))


# ------------------------------------------------------------ the reference
def enc(s):
    return list(s.encode("utf-8"))  # the bytes tokenizer


class Ref:
    def __init__(self, P, cfg):
        self.P, self.cfg = P, cfg

    def logprobs(self, ids):
        tok = torch.tensor([ids], dtype=torch.int32)
        with torch.no_grad():
            _, logits = pt.forward(self.P, self.cfg, tok, torch.full_like(tok, -1))
        return torch.log_softmax(logits[0], dim=-1)

    def score_tokens(self, ctx_enc, cont_enc):
        inp = (ctx_enc + cont_enc)[-(SEQ + 1):][:-1]
        lp = self.logprobs(inp)[len(inp) - len(cont_enc):]
        tgt = torch.tensor(cont_enc)
        return lp.gather(1, tgt[:, None]).sum().item(), bool((lp.argmax(-1) == tgt).all())

    def loglikelihood(self, context, continuation):
        n = len(context) - len(context.rstrip())
        if n:
            continuation, context = context[-n:] + continuation, context[:-n]
        whole, ce = enc(context + continuation), enc(context)
        return self.score_tokens(ce, whole[len(ce):])


def wiki_pages(text):
    pages, lines = [], []
    for line in text.split("\n"):
        h = line.replace("= = =", "===").replace("= =", "==").strip()
        if h.startswith("= ") and h.endswith(" ="):
            if "\n".join(lines).strip():
                pages.append("\n".join(lines))
            lines = []
        lines.append(line)
    if "\n".join(lines).strip():
        pages.append("\n".join(lines))
    return pages


def wiki_detok(s):
    s = s.replace("s '", "s'")
    s = re.sub(r"/' [0-9]/", r"/'[0-9]/", s)
    for a, b in ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."), (" : ", ": "), (" ; ", "; "), (" . ", ". "),
                 (" ! ", "! "), (" ? ", "? "), (" , ", ", ")):
        s = s.replace(a, b)
    for o, c in ("()", "[]", "{}", '""', "''"):
        s = re.sub(re.escape(o) + r"\s*([^" + re.escape(c) + r"]*?)\s*" + re.escape(c), o + r"\1" + c, s)
    for a, b in (("= = = =", "===="), ("= = =", "==="), ("= =", "=="), (" \u00b0 ", "\u00b0"), (" \n", "\n"),
                 ("\n ", "\n"), (" N ", " 1 "), (" 's", "'s")):
        s = s.replace(a, b)
    return s


def rolling(ref, tokens, prefix):
    ll, pred = 0.0, 0
    first = min(SEQ, len(tokens))
    if first:
        ll += ref.score_tokens([prefix], tokens[:first])[0]
        pred = first
    while pred < len(tokens):
        k = min(len(tokens) - pred, SEQ)
        end = pred + k
        ll += ref.score_tokens(tokens[end - SEQ - 1:end - k], tokens[end - k:end])[0]
        pred = end
    return ll


def hs_pre(t):
    t = t.strip().replace(" [title]", ". ")
    t = re.sub("\\[.*?\\]", "", t)
    return t.replace("  ", " ")


def mc_docs():
    """(task, [(context, continuation)], gold, choice strings for acc_norm)"""
    out = []
    for it, lab in PIQA:
        ch = [it["sol1"], it["sol2"]]
        out.append(("piqa", [("Question: %s\nAnswer:" % it["goal"], " " + c) for c in ch], lab, ch))
    for it in HELLASWAG:
        q = hs_pre(it["activity_label"] + ": " + it["ctx_a"] + " " + it["ctx_b"].capitalize())
        ch = [hs_pre(x) for x in it["endings"]]
        out.append(("hellaswag", [(q, " " + c) for c in ch], int(it["label"]), ch))
    for it in WINOGRANDE:
        i = it["sentence"].index("_")
        ctxs = [it["sentence"][:i] + o for o in (it["option1"], it["option2"])]
        cont = " " + it["sentence"][i + 1:].strip()
        out.append(("winogrande", [(c, cont) for c in ctxs], {"1": 0, "2": 1}[it["answer"]], ctxs))
    for it in ARC_AI2:
        ch = [c["text"] for c in it["question"]["choices"]]
        labs = [c["label"] for c in it["question"]["choices"]]
        out.append(("arc_easy", [("Question: %s\nAnswer:" % it["question"]["stem"], " " + c) for c in ch],
                    labs.index(it["answerKey"]), ch))
    for it in ARC_HF:
        ch = it["choices"]["text"]
        out.append(("arc_challenge", [("Question: %s\nAnswer:" % it["question"], " " + c) for c in ch],
                    it["choices"]["label"].index(it["answerKey"]), ch))
    for it in SIQA:
        ch = [it["answerA"], it["answerB"], it["answerC"]]
        out.append(("siqa", [("Q: %s %s\nA:" % (it["context"], it["question"]), " " + c) for c in ch],
                    int(it["label"]) - 1, ch))
    for it in BOOLQ:
        gold = int(it["answer"]) if "answer" in it else it["label"]
        out.append(("boolq", [("%s\nQuestion: %s?\nAnswer:" % (it["passage"], it["question"]), " " + c)
                              for c in ("no", "yes")], gold, ["no", "yes"]))
    for it in OBQA_AI2:
        ch = [c["text"] for c in it["question"]["choices"]]
        labs = [c["label"] for c in it["question"]["choices"]]
        out.append(("openbookqa", [(it["question"]["stem"], " " + c) for c in ch],
                    labs.index(it["answerKey"].lstrip()), ch))
    return out


HAS_NORM = {"piqa", "hellaswag", "arc_easy", "arc_challenge", "openbookqa"}


def mean_stderr(x):
    n = len(x)
    m = sum(x) / n
    if n < 2:
        return m, float("nan")
    var = sum((v - m) ** 2 for v in x) / (n - 1)
    return m, math.sqrt(var) / math.sqrt(n)


# ------------------------------------------------------------ comparison
def rel(a, b):
    return abs(a - b) / max(1.0, abs(b)) if math.isfinite(b) else (0.0 if a == b else float("inf"))


def main():
    exe = pt.program("eval_run")
    if not exe:
        return 77
    chk = pt.Check()
    with tempfile.TemporaryDirectory(prefix="tlm-parity-eval-") as d:
        write_files(d)
        model = os.path.join(d, "model.safetensors")
        r = subprocess.run([exe, "--config", os.path.join(d, "cfg.yaml"), "--model-out", model,
                            "--ckpt-out", os.path.join(d, "ckpt")], stdout=subprocess.PIPE, universal_newlines=True)
        if r.returncode != 0:
            print("not ok 1 - eval_run exited %d" % r.returncode)
            return 1
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        # the same model as a training checkpoint, through what tlm-worker --eval runs
        ck = [x["path"] for x in lines if x["ev"] == "ckpt"]
        r2 = subprocess.run([exe, "--checkpoint", ck[0] if ck else d], stdout=subprocess.PIPE,
                            universal_newlines=True)
        again = [json.loads(x) for x in r2.stdout.splitlines() if x.strip()] if r2.returncode == 0 else []
        first = [x for x in lines if x["ev"] in ("eval", "item")]
        chk.report("the checkpoint evaluated again (eng_eval_checkpoint) gives the same %d results" % len(first),
                   r2.returncode == 0 and again == first,
                   "exit %d, %d lines" % (r2.returncode, len(again)))
        W, meta = pt.load_safetensors(model)
        cfg = json.loads(meta["tlm_parity"])
        ref = Ref({k: v.double() for k, v in W.items()}, cfg)
    items = {(x["suite"], x["task"], x["item"], x["choice"]): x for x in lines if x["ev"] == "item"}
    results = {(x["suite"], x["task"], x["metric"]): x for x in lines if x["ev"] == "eval"}

    def item(key):
        if key not in items:
            chk.report("engine reported %s" % (key,), False)
            return None
        return items[key]

    def metric(suite, task, name, want, n, se=None, tol=TOL_METRIC, exact=False, tie=False):
        got = results.get((suite, task, name))
        if got is None:
            chk.report("%s %s %s reported" % (suite, task, name), False)
            return
        v = got["value"] if got["value"] is not None else float("nan")
        err = abs(v - want) if exact else rel(v, want)
        good = (err <= tol or tie) and got["n"] == n
        if se is not None and math.isfinite(se):
            good = good and got["stderr"] is not None and (tie or abs(got["stderr"] - se) <= 1e-9)
        chk.report("%s %s %s = %.6g (reference %.6g, n %d)" % (suite, task, name, v, want, got["n"]), good,
                   "error %.2e, tol %.0e%s" % (err, tol, ", numerical tie" if tie and err > tol else ""))

    # ---- per-request log-likelihoods (every request of every suite)
    worst = {}
    bad = []

    def cmp_ll(key, ll, greedy, ntok):
        it = item(key)
        if it is None:
            return
        err = abs(it["loglik"] - ll) / max(1.0, abs(ll))
        task = key[1]
        worst[task] = max(worst.get(task, 0.0), err)
        if err > TOL_LL or (greedy is not None and it["greedy"] != int(greedy)) or it["n_tokens"] != ntok:
            bad.append((key, it["loglik"], ll, it["greedy"], greedy, it["n_tokens"], ntok))

    # LAMBADA
    lls, accs = [], []
    for i, t in enumerate(LAMBADA):
        ctx, tgt = " ".join(t.split(" ")[:-1]), " " + t.split(" ")[-1]
        ll, g = ref.loglikelihood(ctx, tgt)
        n = len(enc(ctx + tgt)) - len(enc(ctx.rstrip()))
        cmp_ll(("lambada", "lambada", i, 0), ll, g, n)
        lls.append(ll)
        accs.append(float(g))
    m, _ = mean_stderr(lls)
    metric("lambada", "lambada", "perplexity", math.exp(-m), len(LAMBADA))
    a, se = mean_stderr(accs)
    metric("lambada", "lambada", "acc", a, len(LAMBADA), se, exact=True, tol=0)

    # WikiText
    pages = wiki_pages(WIKI)
    tot_ll = tot_tok = tot_words = tot_bytes = 0
    for i, page in enumerate(pages):
        toks = enc(wiki_detok(page))
        ll = rolling(ref, toks, 10)  # bytes tokenizer: prefix is "\n"
        cmp_ll(("wikitext", "wikitext", i, 0), ll, None, len(toks))
        tot_ll += ll
        tot_tok += len(toks)
        tot_words += len(re.split(r"\s+", page))
        tot_bytes += len(page.encode("utf-8"))
    metric("wikitext", "wikitext", "token_perplexity", math.exp(-tot_ll / tot_tok), len(pages))
    metric("wikitext", "wikitext", "word_perplexity", math.exp(-tot_ll / tot_words), len(pages))
    metric("wikitext", "wikitext", "byte_perplexity", math.exp(-tot_ll / tot_bytes), len(pages))
    metric("wikitext", "wikitext", "bits_per_byte", -tot_ll / tot_bytes / math.log(2), len(pages))

    # Commonsense
    per_task = {}
    counters = {}
    for task, reqs, gold, choices in mc_docs():
        k = counters.get(task, 0)
        counters[task] = k + 1
        lls = []
        for j, (c, x) in enumerate(reqs):
            ll, g = ref.loglikelihood(c, x)
            n = len(enc(c + x)) - len(enc(c.rstrip()))
            cmp_ll(("commonsense", task, k, j), ll, g, n)
            lls.append(ll)
        norm = [ll / len(ch) for ll, ch in zip(lls, choices)]
        pred = max(range(len(lls)), key=lambda j: (lls[j], -j))
        pred_n = max(range(len(norm)), key=lambda j: (norm[j], -j))

        def margin(v):
            s = sorted(v, reverse=True)
            return s[0] - s[1]
        per_task.setdefault(task, []).append((float(pred == gold), float(pred_n == gold),
                                              margin(lls) < TIE, margin(norm) < TIE))
    for task, rows in per_task.items():
        acc, se = mean_stderr([r[0] for r in rows])
        metric("commonsense", task, "acc", acc, len(rows), se, exact=True, tol=0, tie=any(r[2] for r in rows))
        if task in HAS_NORM:
            acc, se = mean_stderr([r[1] for r in rows])
            metric("commonsense", task, "acc_norm", acc, len(rows), se, exact=True, tol=0,
                   tie=any(r[3] for r in rows))
        elif ("commonsense", task, "acc_norm") in results:
            chk.report("commonsense %s reports no acc_norm (the harness has none)" % task, False)

    for key, got, want, gg, gw, nt, nw in bad:
        print("# mismatch %s: engine ll %.8f greedy %s tokens %d, reference ll %.8f greedy %s tokens %d"
              % (key, got, gg, nt, want, gw, nw))
    chk.report("%d requests: log-likelihood, greedy flag and token count agree" % len(items), not bad,
               "worst relative error per task: " + ", ".join("%s %.1e" % kv for kv in sorted(worst.items())))
    expected = len(LAMBADA) + len(pages) + sum(len(r) for _, r, _, _ in mc_docs())
    chk.report("engine scored %d requests, the reference %d" % (len(items), expected), len(items) == expected)
    print("1..%d" % chk.n)
    return 0 if chk.ok else 1


if __name__ == "__main__":
    sys.exit(main())
