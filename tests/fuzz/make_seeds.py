#!/usr/bin/env python3
"""make_seeds.py: writes the seed corpora of the file-reader fuzz targets
(tests/fuzz/corpus/{config,shard,manifest,safetensors,state,tiktoken,spm}/):
small valid files in each format (docs/protocol.md, docs/data.md,
engine/format/shard.h, engine/format/safetensors.h) and a few near-misses (truncated,
wrong sizes, zero hashes), so libFuzzer starts inside the formats instead
of at random bytes.  Deterministic: the same files every run.  Beside the
seeds, the corpora hold inputs a long libFuzzer run grew (named by their
SHA-1), merged in with `fuzz_NAME -merge=1 tests/fuzz/corpus/NAME GROWN/`
so that only inputs adding coverage are kept; crashers a run finds are
added the same way (named crash-*), so that replay.c keeps them fixed in
`make check`.

    python3 tests/fuzz/make_seeds.py [CORPUS_DIR]   (default: tests/fuzz/corpus)
"""
import base64
import hashlib
import json
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(kind, name, data):
    d = os.path.join(OUT, kind)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def sha(b):
    return hashlib.sha256(b).digest()


# ---------------------------------------------------------------- shards
def shard(tokens, vocab, width=None, name=b"bytes", tok_sha=b"\x11" * 32, payload_sha=None, n=None, reserved=b""):
    width = width or (2 if vocab <= 65536 else 4)
    fmt = "<H" if width == 2 else "<I"
    payload = b"".join(struct.pack(fmt, t) for t in tokens)
    h = bytearray(192)
    h[0:8] = b"TLMSHARD"
    struct.pack_into("<IIIIQ", h, 8, 1, 192, width, vocab, len(tokens) if n is None else n)
    h[32:32 + len(name)] = name
    h[96:128] = tok_sha
    h[128:160] = sha(payload) if payload_sha is None else payload_sha
    h[160:160 + len(reserved)] = reserved
    return bytes(h) + payload


def manifest(shards_train, shards_val, name="bytes", vocab=256, tok_sha=b"\x11" * 32):
    def split(tag, lst):
        return {"tokens": sum(n for _, n, _ in lst), "bytes": 0, "segments": 1, "documents_ended": 1,
                "bytes_per_token": 1.0,
                "shards": [{"file": "%s/%s" % (tag, f), "tokens": n, "sha256": h.hex()} for f, n, h in lst]}
    return json.dumps({"format": "tlm-dataset", "version": 1,
                       "tokenizer": {"name": name, "kind": "bytes", "vocab": vocab, "sha256": tok_sha.hex(),
                                     "file": None, "eot": None},
                       "document_separator": "none",
                       "split": {"rule": "...", "val_fraction": 0.01, "val_ppm": 10000, "segment_bytes": 65536,
                                 "segments": 2},
                       "sources": [{"path": "in.txt", "format": "text", "bytes": 10, "sha256": "00" * 32,
                                    "documents": 1}],
                       "splits": {"train": split("train", shards_train), "val": split("val", shards_val)}},
                      indent=2) + "\n"


toks = [(i * 37) % 256 for i in range(300)]
s_ok = shard(toks, 256)
payload_sha = s_ok[128:160]
m_ok = manifest([("000000.tlmtok", len(toks), payload_sha)], [("000000.tlmtok", 3, b"\x22" * 32)])
m_ok_b = m_ok.encode()


def shard_input(m, s):
    """fuzz_shard's input: u16 manifest length, manifest, shard."""
    m = m.encode() if isinstance(m, str) else m
    return struct.pack("<H", len(m)) + m + s


put("shard", "ok_bytes", shard_input(m_ok, s_ok))
put("shard", "ok_no_manifest", shard_input(b"", s_ok))
put("shard", "ok_wide", shard_input(b"", shard([128000 + i for i in range(40)], 128256, name=b"llama3")))
put("shard", "ok_empty_payload", shard_input(b"", shard([], 256)))
put("shard", "bad_payload", shard_input(m_ok, s_ok[:300] + bytes([s_ok[300] ^ 1]) + s_ok[301:]))
put("shard", "bad_zero_hash", shard_input(b"", shard(toks[:20], 256, payload_sha=b"\0" * 32)))
put("shard", "bad_count_wraps", shard_input(b"", shard([], 256, n=1 << 63)))
put("shard", "bad_truncated", shard_input(b"", s_ok[:-3]))
put("shard", "bad_token_over_vocab", shard_input(b"", shard([1, 2, 300], 256)))
put("shard", "bad_reserved", shard_input(b"", shard(toks[:10], 256, reserved=b"\x01")))
put("shard", "bad_manifest_count", shard_input(m_ok.replace('"tokens": 300', '"tokens": 301', 1), s_ok))

# ---------------------------------------------------------------- manifests
put("manifest", "ok", m_ok)
put("manifest", "ok_two_shards", manifest([("000000.tlmtok", 5, b"\x01" * 32), ("000001.tlmtok", 7, b"\x02" * 32)],
                                          [], name="bpe300", vocab=300))
put("manifest", "bad_sum", m_ok.replace('"tokens": 300,\n      "bytes"', '"tokens": 299,\n      "bytes"', 1))
put("manifest", "bad_escape", m_ok.replace('"train/000000.tlmtok"', '"train/../../etc/x.tlmtok"'))
put("manifest", "bad_zero_sha", m_ok.replace(payload_sha.hex(), "00" * 32))
put("manifest", "bad_negative", m_ok.replace('"tokens": 3', '"tokens": -3'))
put("manifest", "foreign", json.dumps({"format": "something", "version": 1}))
put("manifest", "bad_dup", '{"format": "tlm-dataset", "format": "tlm-dataset"}')

# ---------------------------------------------------------------- safetensors
def st(tensors, meta=None, pad=True):
    hdr = {}
    if meta:
        hdr["__metadata__"] = meta
    data = b""
    for name, dtype, shape, blob in tensors:
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = json.dumps(hdr, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


f32 = lambda xs: b"".join(struct.pack("<f", x) for x in xs)
put("safetensors", "ok", st([("model.a.weight", "F32", [2, 3], f32(range(6))), ("model.b", "F32", [3], f32([1, 2, 3]))],
                            {"format": "pt", "tlm_step": "42"}))
put("safetensors", "ok_dtypes", st([("a", "BF16", [4], b"\0" * 8), ("b", "I64", [1], b"\0" * 8),
                                    ("c", "U8", [0], b""), ("d", "BOOL", [2, 1], b"\x01\x00")]))
put("safetensors", "bad_wrap", st([("t", "F32", [1 << 40, 1 << 40], b"")]))
put("safetensors", "ok_single", st([("a", "U8", [4], b"abcd")]))
hdr = b'{"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},"b":{"dtype":"U8","shape":[0],"data_offsets":[4,4]},' \
      b'"c":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}}'
put("safetensors", "bad_overlap_empty", struct.pack("<Q", len(hdr)) + hdr + b"\0" * 16)
put("safetensors", "bad_header_len", struct.pack("<Q", 1 << 40) + b"{}")
put("safetensors", "bad_truncated", st([("a", "F32", [4], f32([1, 2, 3, 4]))])[:-5])

# ---------------------------------------------------------------- trainer.json
state = {"version": 1, "step": 120, "tokens": 1966080, "config_id": "ab" * 32, "seed": 3,
         "data": {"cursor": 960, "train_windows": 5000, "data_id": "cd" * 32, "order": "window-permutation/1"},
         "rng": {"kind": "splitmix64-feistel", "seed": 3, "epoch": 0, "position": 960},
         "lr": 0.0003, "loss": 3.5, "val_loss": None, "elapsed_s": 12.5}
put("state", "ok", json.dumps(state, indent=2, sort_keys=True))
put("state", "bad_negative", json.dumps(dict(state, step=-1)))
put("state", "bad_float_step", json.dumps(dict(state, step=1.5)))
put("state", "bad_hex", json.dumps(dict(state, config_id="zz" * 32)))
put("state", "bad_version", json.dumps(dict(state, version=2)))
put("state", "bad_huge", json.dumps(state).replace("1966080", "99999999999999999999"))

# ---------------------------------------------------------------- tiktoken
def ranks(merges):
    """A byte-level rank file: the 256 bytes, then merged pieces."""
    pieces = [bytes([b]) for b in range(256)] + merges
    return "".join("%s %d\n" % (base64.b64encode(p).decode(), i) for i, p in enumerate(pieces))


merges = [b"th", b"he", b"the", b" t", b" the", b"in", b"an", b"er", b"  ", b"    ", b"qu", b"ick"]
# first byte: the name (0 none, 1 "fuzz", 2 bpe300, 3 bpe1000, 4 llama3)
put("tiktoken", "ok_plain", b"\x01" + ranks(merges).encode())
put("tiktoken", "ok_bpe300", b"\x02" + ranks(merges + [bytes([0x61 + i % 26, 0x61 + i // 26]) for i in range(31)]).encode())
put("tiktoken", "bad_gap", b"\x01" + ranks(merges).replace(" 260\n", " 9999\n").encode())
put("tiktoken", "bad_dup", b"\x01" + (ranks(merges) + base64.b64encode(b"th").decode() + " 268\n").encode())
put("tiktoken", "bad_base64", b"\x01" + ranks(merges).replace("dGg=", "d!g=").encode())
put("tiktoken", "bad_missing_byte", b"\x01" + "".join("%s %d\n" % (base64.b64encode(bytes([b])).decode(), b)
                                                      for b in range(255)).encode())

# ---------------------------------------------------------------- spm (SentencePiece, llama2)
def pb_varint(v):
    out = b""
    while True:
        c = v & 0x7f
        v >>= 7
        out += bytes([c | (0x80 if v else 0)])
        if not v:
            return out


def pb_len(field, body):
    return pb_varint(field * 8 + 2) + pb_varint(len(body)) + body


def spm_pieces():
    """<unk> <s> </s>, the byte pieces, a few joins (type, score, text)."""
    p = [(2, 0.0, "<unk>"), (3, 0.0, "<s>"), (3, 0.0, "</s>")] + [(6, 0.0, "<0x%02X>" % b) for b in range(256)]
    for k, t in enumerate(["\u2581", "a", "b", "c", "ab", "bc", "\u2581a", "aa", "\u2581\u2581", "\t", "the", "th"]):
        p.append((1, -float(k + 1), t))
    return p


def spm_model(pieces, trainer=pb_varint(3 << 3) + pb_varint(2) + pb_varint(35 << 3) + pb_varint(1),
              normalizer=pb_varint(3 << 3) + b"\x01" + pb_varint(4 << 3) + b"\x00"):
    out = b""
    for typ, score, text in pieces:
        body = pb_len(1, text.encode()) + pb_varint(2 << 3 | 5) + struct.pack("<f", score)
        if typ != 1:
            body += pb_varint(3 << 3) + pb_varint(typ)
        out += pb_len(1, body)
    return out + pb_len(2, trainer) + pb_len(3, normalizer)


def spm_vocab(pieces):
    names = {1: "normal", 2: "unknown", 3: "control", 6: "byte"}
    lines = ["tlm-sentencepiece 1", "pieces %d" % len(pieces), "add_dummy_prefix 1", "byte_fallback 1"]
    lines += ["%s\t%g\t%s" % (names[t], s, x.replace("\t", "\\t")) for t, s, x in pieces]
    return ("\n".join(lines) + "\n").encode()


# first byte: even = a tokenizer.model, odd = a vocabulary file
put("spm", "ok_model", b"\x00" + spm_model(spm_pieces()))
put("spm", "ok_vocab", b"\x01" + spm_vocab(spm_pieces()))
put("spm", "bad_model_truncated", b"\x00" + spm_model(spm_pieces())[:-9])
put("spm", "bad_model_unigram", b"\x00" + spm_model(spm_pieces(), trainer=pb_varint(3 << 3) + pb_varint(1)))
put("spm", "bad_model_no_bytes", b"\x00" + spm_model(spm_pieces()[:100]))
put("spm", "bad_vocab_count", b"\x01" + spm_vocab(spm_pieces()).replace(b"pieces 271", b"pieces 27"))
put("spm", "bad_vocab_escape", b"\x01" + spm_vocab(spm_pieces()).replace(b"\\t", b"\\q"))

# ---------------------------------------------------------------- job configs
put("config", "tiny_cosine.yaml", "scale: 1m\narch: transformer\ntaper:\n  schedule: cosine\n  ratio: [1.5, 0.5]\n"
                                  "train:\n  tokens: 2e6\n")
put("config", "small_job.yaml", "model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}\ntokenizer: bytes\n"
                                "taper: {schedule: linear, ratio: [1.5, 0.5]}\nseed: 3\ndata: {train: t.tlmtok}\n"
                                "eval: {every_tokens: 16384, val_tokens: 2048}\n"
                                "train: {tokens: 49152, seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: 3e-3, "
                                "warmup_tokens: 4096, ckpt_every_tokens: 8192}\n")
put("config", "gated.yaml", "scale: 3m\narch: gated_attn\ntaper: {schedule: step, ratio: [2, 0.5]}\n"
                            "eval: {suites: [val, lambada], lambada: l.jsonl}\n")
put("config", "hope.yaml", "scale: 1m\narch: hope_attn\ntrain: {tokens: 1e6}\n")
put("config", "titans.yaml", "scale: 1m\narch: titans\ntrain: {tokens: 1e6, schedule: cosine}\n")
put("config", "bad_key.yaml", "scale: 1m\ntrain: {lrr: 1}\n")
put("config", "bad_int.yaml", "scale: 1m\nseed: 9223372036854775807\ntrain: {tokens: 1e30}\n")
put("config", "bad_dup.yaml", "model: {d_model: 32}\nmodel.d_model: 64\n")
print("make_seeds.py: wrote seeds under %s" % OUT)
