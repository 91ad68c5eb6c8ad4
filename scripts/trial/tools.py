#!/usr/bin/env python3
"""tools.py: the trial's editors of binary and JSON files (scripts/trial.sh),
to make corrupt inputs that are corrupt in exactly one way.

  tools.py shard FILE FIELD=VALUE... [--rehash]
      set shard header fields (engine/shard.h): magic, version, header_bytes,
      token_bytes, vocab, n_tokens (integers, or text for magic), name (text),
      tok_sha, payload_sha (64 hex digits or 'zero'), reserved (a byte value
      for the 32 reserved bytes); token:I=V sets token I (2-byte tokens);
      --rehash recomputes the payload SHA-256 afterwards
  tools.py st FILE OP...
      edit a safetensors header, keeping the data: shape:NAME=[a,b],
      dtype:NAME=F16, offsets:NAME=[a,b], drop:NAME, hdrlen=N (the 8-byte
      length field alone), junk (invalid JSON of the same length)
  tools.py manifest STEPDIR
      recompute a checkpoint's MANIFEST.json (sizes and SHA-256 of the files
      it lists), so that an edit is seen by the readers, not by the hash
  tools.py dataset-manifest DSDIR SPLIT KEY=VALUE...
      edit manifest.json of a dataset: shards.0.tokens=N, shards.0.sha256=HEX,
      shards.0.file=PATH, tokens=N, add-shard=FILE, tokenizer.name=NAME
"""
import hashlib
import json
import struct
import sys


def shard(path, args):
    b = bytearray(open(path, "rb").read())
    rehash = "--rehash" in args
    for a in args:
        if a == "--rehash":
            continue
        k, v = a.split("=", 1)
        if k == "magic":
            b[0:8] = v.encode().ljust(8, b"\0")[:8]
        elif k in ("version", "header_bytes", "token_bytes", "vocab"):
            off = {"version": 8, "header_bytes": 12, "token_bytes": 16, "vocab": 20}[k]
            b[off:off + 4] = struct.pack("<I", int(v) & 0xFFFFFFFF)
        elif k == "n_tokens":
            b[24:32] = struct.pack("<Q", int(v) & 0xFFFFFFFFFFFFFFFF)
        elif k == "name":
            b[32:96] = v.encode("utf-8", "surrogateescape").ljust(64, b"\0")[:64]
        elif k in ("tok_sha", "payload_sha"):
            off = 96 if k == "tok_sha" else 128
            b[off:off + 32] = bytes(32) if v == "zero" else bytes.fromhex(v)
        elif k == "reserved":
            b[160:192] = bytes([int(v)]) * 32
        elif k.startswith("token:"):
            i = int(k[6:])
            b[192 + 2 * i:194 + 2 * i] = struct.pack("<H", int(v))
        else:
            sys.exit("tools.py shard: unknown field " + k)
    if rehash:
        b[128:160] = hashlib.sha256(bytes(b[192:])).digest()
    open(path, "wb").write(bytes(b))


def st(path, ops):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    data = b[8 + n:]
    raw_len = None
    junk = False
    for op in ops:
        if op == "junk":
            junk = True
            continue
        k, _, v = op.partition("=")
        if k == "hdrlen":
            raw_len = int(v)
            continue
        what, _, name = k.partition(":")
        if what == "drop":
            del h[name]
        elif what == "shape":
            h[name]["shape"] = json.loads(v)
        elif what == "dtype":
            h[name]["dtype"] = v
        elif what == "offsets":
            h[name]["data_offsets"] = json.loads(v)
        else:
            sys.exit("tools.py st: unknown op " + op)
    text = json.dumps(h, separators=(",", ":")).encode()
    if junk:
        text = b"{" + b"x" * (len(text) - 1)
    text = text.ljust((len(text) + 7) // 8 * 8, b" ")
    length = len(text) if raw_len is None else raw_len
    open(path, "wb").write(struct.pack("<Q", length & 0xFFFFFFFFFFFFFFFF) + text + data)


def manifest(stepdir):
    p = stepdir + "/MANIFEST.json"
    m = json.load(open(p))
    for f in m["files"]:
        raw = open(stepdir + "/" + f, "rb").read()
        m["files"][f] = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    open(p, "w").write(json.dumps(m, indent=2, sort_keys=True) + "\n")


def dataset_manifest(ds, split, edits):
    p = ds + "/manifest.json"
    m = json.load(open(p))
    sp = m["splits"][split]
    for e in edits:
        k, v = e.split("=", 1)
        if k == "add-shard":
            sp["shards"].append({"file": v, "tokens": 0, "sha256": "ab" * 32})
        elif k == "tokenizer.name":
            m["tokenizer"]["name"] = v
        elif k == "tokens":
            sp["tokens"] = int(v)
        elif k.startswith("shards.0."):
            f = k[len("shards.0."):]
            sp["shards"][0][f] = int(v) if f == "tokens" else v
        else:
            sys.exit("tools.py dataset-manifest: unknown edit " + k)
    open(p, "w").write(json.dumps(m, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "shard":
        shard(path, rest)
    elif cmd == "st":
        st(path, rest)
    elif cmd == "manifest":
        manifest(path)
    elif cmd == "dataset-manifest":
        dataset_manifest(path, rest[0], rest[1:])
    else:
        sys.exit(__doc__)
