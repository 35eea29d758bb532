"""(b) Constrained random generation: every finished output validates against its schema.

For a deterministic sample of MaskBench dev schemas and several seeds, random
logits are masked by the service and sampled (argmax of noise, i.e. random
choice among the allowed tokens) plus fixed biases so that outputs end within
the token limit: tokens that start with '"', then '}' or ']', then ',' get
decreasing bonuses, whitespace-only tokens a malus (the default whitespace mode
allows runs of 32 bytes). Where the
service offers jump-forward tokens, half the time they are taken instead of
sampling. Every output that ends with EOS must decode as UTF-8 JSON and
validate against its schema with python3-jsonschema, an independent
validator: zero invalid outputs. Outputs that reach the token limit are
counted and reported, not judged.

    test_random_generation.py --maskd M --oracle O [--schemas 20] [--seeds 1] [--max-tokens 384]
"""
import json
import sys
import time
import unittest
import zlib

import jsonschema
import numpy as np

from maskd_server import MaskdServer, binary_from_argv
from oracle import int_from_argv, oracle_from_argv, sample_lines, vocabulary
from maskd_client import CompileError, JsonSchema, MaskClient, apply_mask_numpy

MASKD = binary_from_argv(sys.argv)
ORACLE = oracle_from_argv(sys.argv)
SCHEMAS = int_from_argv(sys.argv, "--schemas", 20)
SEEDS = int_from_argv(sys.argv, "--seeds", 1)
MAX_TOKENS = int_from_argv(sys.argv, "--max-tokens", 384)
BATCH = 48


def validate(schema, text):
    """None if `text` is JSON valid against `schema`, else why not."""
    try:
        value = json.loads(text)
    except ValueError as e:
        return f"not JSON: {e}"
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else f"{error.message} at {list(error.absolute_path)}"


class Sequence:

    def __init__(self, name, schema, seed):
        self.name, self.schema = name, schema
        self.rng = np.random.default_rng(seed)
        self.tokens = []
        self.result = None


class RandomGenerationTest(unittest.TestCase):

    def test_finished_outputs_validate(self):
        token_bytes, eos = vocabulary(ORACLE)
        width = len(token_bytes) + 64  # a padded output layer, like a model's
        bonus = np.zeros(width, dtype=np.float32)
        for t, b in enumerate(token_bytes):
            if not b:
                continue
            opens_more = any(c in b for c in (b",", b"{", b"["))
            if b[:1] == b'"' and not opens_more:
                bonus[t] = 10  # ends a string (or starts a key)
            elif b[:1] in (b"}", b"]") and not opens_more:
                bonus[t] = 7  # ends a container (inside a string: just text, hence < 10)
            elif b[:1] == b",":
                bonus[t] = 4  # ends a number or value where more must follow
            elif not b.strip():
                bonus[t] = -8
        bonus[sorted(eos)] = 10

        server = MaskdServer(MASKD)
        stats = {"schemas": 0, "refused": 0, "finished": 0, "valid": 0, "token_limit": 0,
                 "jump_forward_tokens": 0}
        invalid = []
        start = time.monotonic()
        try:
            with MaskClient(server.address, timeout=120) as client:
                tokenizer = client.register_tokenizer(preloaded_name="llama3")
                pending = []
                for case in map(json.loads, sample_lines(SCHEMAS)):
                    stats["schemas"] += 1
                    try:
                        grammar = client.compile(tokenizer.tokenizer_id,
                                                 JsonSchema(case["schema"]))
                    except CompileError:
                        stats["refused"] += 1
                        continue
                    for seed in range(SEEDS):
                        rng_seed = zlib.crc32(case["name"].encode()) + (seed << 32)
                        pending.append((grammar.handle,
                                        Sequence(case["name"], case["schema"], rng_seed)))
                with client.session() as session:
                    for chunk in range(0, len(pending), BATCH):
                        self._generate(session, pending[chunk:chunk + BATCH], token_bytes, eos,
                                       width, bonus, stats, invalid)
        finally:
            server.stop()
        stats["seconds"] = round(time.monotonic() - start, 1)
        print(f"\n{json.dumps(stats)}", file=sys.stderr)
        for line in invalid:
            print("INVALID " + line, file=sys.stderr)
        self.assertGreater(stats["finished"], 0)
        self.assertEqual(invalid, [])

    def _generate(self, session, chunk, token_bytes, eos, width, bonus, stats, invalid):
        seqs = {i: s for i, (_, s) in enumerate(chunk)}
        results = session.step(open={i: handle for i, (handle, _) in enumerate(chunk)})
        for i, result in results.items():
            seqs[i].result = result.raise_for_error()
        while seqs:
            ids = list(seqs)
            logits = np.stack([seqs[i].rng.standard_normal(width, dtype=np.float32)
                               for i in ids]) + bonus
            apply_mask_numpy(logits, [seqs[i].result for i in ids])
            advances, done = {}, []
            for row, i in enumerate(ids):
                seq = seqs[i]
                jump = seq.result.jump_forward_tokens
                if jump and seq.rng.random() < 0.5:
                    advances[i] = list(jump)
                    stats["jump_forward_tokens"] += len(jump)
                    continue
                token = int(logits[row].argmax())
                if not np.isfinite(logits[row, token]):
                    invalid.append(f"{seq.name}: empty mask after {len(seq.tokens)} tokens")
                    done.append(i)
                elif token in eos:
                    self._judge(seq, token_bytes, stats, invalid)
                    done.append(i)
                elif len(seq.tokens) >= MAX_TOKENS:
                    stats["token_limit"] += 1
                    text = b"".join(token_bytes[t] for t in seq.tokens[-12:])
                    print(f"token limit: {seq.name}: ...{text!r}", file=sys.stderr)
                    done.append(i)
                else:
                    advances[i] = [token]
            results = session.step(advances, close=done)
            for i in done:
                results[i].raise_for_error()
                del seqs[i]
            for i, tokens in advances.items():
                seqs[i].result = results[i].raise_for_error()
                if results[i].tokens_accepted != len(tokens):
                    raise AssertionError(f"{seqs[i].name}: sampled tokens refused")
                seqs[i].tokens.extend(tokens)

    @staticmethod
    def _judge(seq, token_bytes, stats, invalid):
        stats["finished"] += 1
        data = b"".join(token_bytes[t] for t in seq.tokens)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            invalid.append(f"{seq.name}: not UTF-8 ({e}): {data[:200]!r}")
            return
        why = validate(seq.schema, text)
        if why is None:
            stats["valid"] += 1
        else:
            invalid.append(f"{seq.name}: {why}: {text[:300]}")


if __name__ == "__main__":
    unittest.main()
