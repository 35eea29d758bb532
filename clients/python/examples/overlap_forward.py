#!/usr/bin/env python3
"""Measures what overlapping maskd's round trip with the forward pass saves.

A batch of sequences is decoded twice with the same seed against a running
maskd: first sequentially (forward pass, then ask maskd for the masks), then
overlapped (send the sampled tokens to maskd, run the forward pass meanwhile,
then collect the masks). The forward pass is simulated by a sleep, as a GPU
forward leaves the CPU free. Each step applies the masks to random logits
(padded past the vocabulary like a model's output layer) and samples.

    python3 clients/python/examples/overlap_forward.py --target 127.0.0.1:50051
"""
import argparse
import time

import numpy as np

from maskd_client import CompileOptions, JsonSchema, MaskClient, apply_mask_numpy, overlapped_step

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}


def decode(session, grammar, args, eos, width, overlap):
    """Runs args.steps steps; returns (seconds per step, seconds per step spent in maskd)."""
    rng = np.random.default_rng(args.seed)
    pool = rng.standard_normal((4, args.batch, width)).astype(np.float32)
    seq_ids = list(range(args.batch))
    next_id = args.batch
    advances, opens, closes = {}, {s: grammar for s in seq_ids}, []  # the first step opens
    waited = 0.0
    start = time.perf_counter()
    for step in range(args.steps):

        def forward():
            time.sleep(args.forward_ms / 1000)
            return pool[step % 4].copy()

        t0 = time.perf_counter()
        if overlap:
            logits, results = overlapped_step(session, advances, forward, open=opens, close=closes)
            waited += time.perf_counter() - t0 - args.forward_ms / 1000
        else:
            logits = forward()
            t1 = time.perf_counter()
            results = session.step(advances, open=opens, close=closes)
            waited += time.perf_counter() - t1
        apply_mask_numpy(logits, [results[s] for s in seq_ids])
        sampled = logits.argmax(axis=1)
        advances, opens, closes = {}, {}, []
        for row, seq_id in enumerate(seq_ids):
            token = int(sampled[row])
            if token in eos:  # finished: a fresh sequence takes its row in the next step
                closes.append(seq_id)
                seq_ids[row] = next_id
                opens[next_id] = grammar
                next_id += 1
            else:
                advances[seq_id] = [token]
    elapsed = time.perf_counter() - start
    session.step(close=[s for s in seq_ids if s not in opens] + closes)
    return elapsed / args.steps, waited / args.steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--tokenizer", default="llama3", help="preloaded tokenizer name")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--forward-ms", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with MaskClient(args.target) as client:
        info = client.register_tokenizer(preloaded_name=args.tokenizer)
        grammar = client.compile(info.tokenizer_id, JsonSchema(SCHEMA),
                                 CompileOptions(whitespace="compact"))
        width = (info.vocab_size + 63) // 64 * 64
        eos = set(info.eos_token_ids)
        with client.session() as session:
            decode(session, grammar, args, eos, width, overlap=False)  # warm-up
            sequential, maskd_seq = decode(session, grammar, args, eos, width, overlap=False)
            overlapped, maskd_ovl = decode(session, grammar, args, eos, width, overlap=True)
    print(f"batch {args.batch}, {args.steps} steps, simulated forward {args.forward_ms:.1f} ms")
    print(f"sequential: {sequential * 1e3:7.2f} ms/step (maskd round trip {maskd_seq * 1e3:.2f} ms)")
    print(f"overlapped: {overlapped * 1e3:7.2f} ms/step (waiting after forward "
          f"{max(maskd_ovl, 0) * 1e3:.2f} ms)")
    saved = sequential - overlapped
    print(f"saved:      {saved * 1e3:7.2f} ms/step ({saved / sequential * 100:.1f}%)")


if __name__ == "__main__":
    main()
