#!/usr/bin/env python3
"""A constrained decoding loop against maskd: the one the README quotes.

`generate()` decodes a batch of sequences under one JSON Schema. Each step's masks
are applied to the model's logits, a token is sampled per sequence, and the tokens
go to maskd while the model computes the next logits (`overlapped_step`). A
sequence ends when it samples EOS (maskd allows EOS only where the output is a
complete JSON value) or reaches `max_tokens`; it is then closed on the server.

Run it against a server with a stand-in model (random logits), which shows that
every output is valid whatever the model says:

    python3 clients/python/examples/decode_loop.py --target 127.0.0.1:50051

tests/python/test_decode_loop.py runs `generate()` against a real maskd.
"""
import argparse
import json

import numpy as np

from maskd_client import JsonSchema, MaskClient, apply_mask_numpy, overlapped_step


def generate(client, model, schema, num_sequences, max_tokens=256):
    """Decodes `num_sequences` outputs; returns {sequence id: token ids, EOS excluded}.

    `model.forward(seq_ids)` returns logits, one row per id of `seq_ids` in that
    order (width at least the vocabulary; padding columns are masked out).
    """
    tok = client.register_tokenizer(preloaded_name="llama3")  # or register_tokenizer_dir(path)
    grammar = client.compile(tok.tokenizer_id, JsonSchema(schema))  # CompileError names the part
    eos = set(tok.eos_token_ids)
    outputs = {seq: [] for seq in range(num_sequences)}  # keyed by sequence id, not batch row
    with client.session() as session:
        masks = session.step(open={seq: grammar for seq in outputs})  # first mask of each
        live = sorted(outputs)  # the sequences still decoding; logits row i is live[i]
        logits = model.forward(live)
        while live:
            # -inf off each sequence's mask (a per-sequence error raises here).
            masked = apply_mask_numpy(logits, [masks[seq] for seq in live])
            sampled = dict(zip(live, masked.argmax(axis=1).tolist()))  # greedy; sample as you like
            done = []
            for seq in live:
                if sampled[seq] in eos:
                    done.append(seq)
                else:
                    outputs[seq].append(sampled[seq])
                    if len(outputs[seq]) >= max_tokens:
                        done.append(seq)
            if done:
                session.close(*done)
                live = [seq for seq in live if seq not in done]
            if not live:
                break
            # Step t's tokens go to maskd while the model computes step t+1's logits.
            logits, masks = overlapped_step(session, {seq: [sampled[seq]] for seq in live},
                                            lambda: model.forward(live))
    return outputs


class RandomModel:
    """A stand-in for a language model: random logits, padded past the vocabulary."""

    def __init__(self, vocab_size, seed=0, padding=128):
        self.width = vocab_size + padding
        self.rng = np.random.default_rng(seed)

    def forward(self, seq_ids):
        return self.rng.standard_normal((len(seq_ids), self.width)).astype(np.float32)


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "ok"],
    "additionalProperties": False,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="maskd's host:port")
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=512)
    args = parser.parse_args()
    with MaskClient(args.target) as client:
        vocab_size = client.register_tokenizer(preloaded_name="llama3").vocab_size
        outputs = generate(client, RandomModel(vocab_size), SCHEMA, args.sequences,
                           args.max_tokens)
    for seq, tokens in outputs.items():
        print(json.dumps({"sequence": seq, "tokens": tokens}))


if __name__ == "__main__":
    main()
