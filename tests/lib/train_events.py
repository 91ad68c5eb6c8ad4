#!/usr/bin/env python3
"""train_events.py: test helper (not a test): checks a tlm-worker event
stream against docs/protocol.md and prints a JSON summary of it.

    python3 train_events.py EVENTS.jsonl [--job KEY] [--end done|stopped|error] [--mode train|eval]

Checks: every line is one JSON object (NaN/Infinity literals refused), with
"ev", "v" == 1, "t", "job" when --job was given, and each event's fields
with their types (non-finite numbers only as "nan"/"inf"/"-inf" strings);
`start` first (unless the run failed before it; `--mode eval`, the stream
of `tlm-worker --eval`, has no start), `layer` d_ff events right after it, steps increasing, exactly one terminal event (done, stopped or
error) and it is the last line.  Exits 1 with the reason on the first
violation.  The summary maps step -> loss (exact floats) and lists evals,
checkpoints and the terminal event."""
import json
import sys

NONFINITE = ("nan", "inf", "-inf")


def fail(msg):
    print("events: " + msg, file=sys.stderr)
    sys.exit(1)


def refuse_constant(c):
    raise ValueError("non-JSON literal " + c)


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def is_num(x):
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) or x in NONFINITE


def num(x):
    return float(x) if is_num(x) else None


T_INT, T_NUM, T_STR, T_INT_NULL, T_NUM_NULL, T_STR_NULL, T_LIST = range(7)
FIELDS = {
    "start": {"pid": T_INT, "config_id": T_STR, "step": T_INT, "tokens": T_INT, "resumed_from_step": T_INT_NULL,
              "total_steps": T_INT, "total_tokens": T_INT, "params": T_INT, "flops_per_token": T_NUM,
              "device": T_STR, "threads": T_INT, "blas": T_STR, "blas_kernel": T_STR, "compiler": T_STR,
              "tlm_version": T_STR, "git_commit": T_STR, "host": T_STR, "os": T_STR, "argv": T_LIST},
    "step": {"step": T_INT, "tokens": T_INT, "loss": T_NUM, "lr": T_NUM, "grad_norm": T_NUM,
             "tokens_per_s": T_NUM, "step_ms": T_NUM},
    "eval": {"step": T_INT, "tokens": T_INT, "suite": T_STR, "task": T_STR, "metric": T_STR, "value": T_NUM,
             "n": T_INT, "stderr": T_NUM_NULL},
    "layer": {"step": T_INT, "tokens": T_INT, "layer": T_INT, "name": T_STR, "value": T_NUM},
    "ckpt": {"path": T_STR, "step": T_INT, "tokens": T_INT},
    "heartbeat": {"step": T_INT, "tokens": T_INT, "phase": T_STR, "progress": T_INT},
    "stopped": {"step": T_INT, "tokens": T_INT, "signal": T_STR, "ckpt": T_STR_NULL},
    "done": {"step": T_INT, "tokens": T_INT, "loss": T_NUM_NULL, "val_loss": T_NUM_NULL, "elapsed_s": T_NUM},
    "error": {"kind": T_STR, "message": T_STR, "step": T_INT, "tokens": T_INT},
}
CHECK = {
    T_INT: is_int, T_NUM: is_num, T_STR: lambda x: isinstance(x, str),
    T_INT_NULL: lambda x: x is None or is_int(x), T_NUM_NULL: lambda x: x is None or is_num(x),
    T_STR_NULL: lambda x: x is None or isinstance(x, str), T_LIST: lambda x: isinstance(x, list),
}
TERMINAL = ("done", "stopped", "error")


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: train_events.py EVENTS [--job KEY] [--end KIND]")
    path, job, end, mode = args[0], None, None, "train"
    for i in range(1, len(args) - 1, 2):
        if args[i] == "--job":
            job = args[i + 1]
        elif args[i] == "--end":
            end = args[i + 1]
        elif args[i] == "--mode":
            mode = args[i + 1]
    raw = open(path, "rb").read()
    if raw and not raw.endswith(b"\n"):
        fail("the stream does not end with a newline (torn last line)")
    events = []
    for n, line in enumerate(raw.split(b"\n")[:-1], 1):
        if len(line) + 1 > 65536:
            fail("line %d: longer than 64 KiB" % n)
        try:
            e = json.loads(line.decode("utf-8"), parse_constant=refuse_constant)
        except ValueError as x:
            fail("line %d: not JSON (%s): %r" % (n, x, line[:200]))
        if not isinstance(e, dict):
            fail("line %d: not an object" % n)
        ev = e.get("ev")
        if ev not in FIELDS:
            fail("line %d: unknown event %r" % (n, ev))
        if e.get("v") != 1 or not isinstance(e.get("t"), (int, float)) or e["t"] < 1.5e9:
            fail("line %d: bad \"v\" or \"t\": %r" % (n, e))
        if job is not None and e.get("job") != job:
            fail("line %d: \"job\" is %r, expected %r" % (n, e.get("job"), job))
        for k, t in FIELDS[ev].items():
            if k not in e:
                fail("line %d: %s event without %r: %r" % (n, ev, k, e))
            if not CHECK[t](e[k]):
                fail("line %d: %s.%s has the wrong type: %r" % (n, ev, k, e[k]))
        for k, x in e.items():
            if isinstance(x, float) and x != x:
                fail("line %d: NaN as a number" % n)
        events.append(e)
    if not events:
        fail("no events")
    kinds = [e["ev"] for e in events]
    terms = [k for k in kinds if k in TERMINAL]
    if len(terms) != 1 or kinds[-1] not in TERMINAL:
        fail("expected exactly one terminal event, last; got %r" % terms)
    if end and kinds[-1] != end:
        fail("the run ended with %r, expected %r (%r)" % (kinds[-1], end, events[-1]))
    main_kinds = [k for k in kinds if k != "heartbeat"]  # heartbeats may come during set-up
    if mode == "eval":
        if not set(kinds) <= {"eval", "layer", "heartbeat", "done", "error"}:
            fail("--eval streams hold eval, layer, heartbeat and one done/error: %r" % sorted(set(kinds)))
    elif main_kinds[0] != "start" and main_kinds != ["error"]:
        fail("the first event is %r, not start (only a lone error may come without start)" % main_kinds[0])
    widths = []
    if "start" in kinds and mode == "train":
        s = kinds.index("start")
        i = s + 1
        while i < len(kinds) and kinds[i] == "layer" and events[i]["name"] == "d_ff":
            widths.append(events[i]["value"])
            i += 1
        if [events[k]["layer"] for k in range(s + 1, i)] != list(range(len(widths))) or not widths:
            fail("layer d_ff events do not follow start for layers 0..L-1")
    last = -1
    losses = {}
    for e in events:
        if e["ev"] == "step":
            if e["step"] <= last:
                fail("step %d after step %d" % (e["step"], last))
            last = e["step"]
            losses[str(e["step"])] = num(e["loss"])
    if mode == "train" and "start" in kinds and events[-1]["ev"] == "done" and events[-1]["loss"] is None:
        fail("done.loss is null in a training run")
    start = events[kinds.index("start")] if "start" in kinds else None
    summary = {
        "start": start,
        "widths": widths,
        "losses": losses,
        "evals": [e for e in events if e["ev"] == "eval"],
        "ckpts": [e for e in events if e["ev"] == "ckpt"],
        "heartbeats": [e for e in events if e["ev"] == "heartbeat"],
        "end": events[-1],
        "counts": {k: kinds.count(k) for k in set(kinds)},
    }
    # floats stay exact through JSON (repr round-trips); non-finite as strings
    json.dump(summary, sys.stdout, default=str, allow_nan=True)
    print()


if __name__ == "__main__":
    main()
