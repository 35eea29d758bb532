"""The README's decoding loop (clients/python/examples/decode_loop.py) against the real maskd.

A stand-in model with random logits decodes a batch under the example's schema:
every sequence must end with EOS before the token limit, be closed on the
server, and decode to JSON that python3-jsonschema accepts.

    test_decode_loop.py --maskd M --oracle O
"""
import inspect
import json
import os
import sys
import unittest

import jsonschema

from maskd_server import MaskdServer, binary_from_argv
from oracle import oracle_from_argv, vocabulary
from maskd_client import MaskClient

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python",
                                "examples"))
import decode_loop  # noqa: E402

MASKD = binary_from_argv(sys.argv)
ORACLE = oracle_from_argv(sys.argv)
SEQUENCES = 6
MAX_TOKENS = 512


class DecodeLoopTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.token_bytes, cls.eos = vocabulary(ORACLE)
        cls.server = MaskdServer(MASKD)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_every_output_ends_valid(self):
        with MaskClient(self.server.address) as client:
            model = decode_loop.RandomModel(len(self.token_bytes), seed=7)
            outputs = decode_loop.generate(client, model, decode_loop.SCHEMA, SEQUENCES,
                                           MAX_TOKENS)
        self.assertEqual(sorted(outputs), list(range(SEQUENCES)))
        for seq, tokens in outputs.items():
            self.assertLess(len(tokens), MAX_TOKENS, f"sequence {seq} never sampled EOS")
            self.assertFalse(self.eos & set(tokens), f"sequence {seq} kept an EOS token")
            text = b"".join(self.token_bytes[t] for t in tokens).decode("utf-8")
            jsonschema.validate(json.loads(text), decode_loop.SCHEMA)

    def test_the_readme_quotes_this_loop(self):
        root = os.path.join(os.path.dirname(__file__), "..", "..")
        with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        source = inspect.getsource(decode_loop.generate)
        self.assertIn(source.rstrip(), readme, "README.md no longer quotes decode_loop.generate")

    def test_each_sequence_is_closed_once_when_it_ends(self):
        closed = []

        class RecordingSession:
            """The client's session, recording the ids generate() closes."""

            def __init__(self, session):
                self._session = session

            def __getattr__(self, name):
                return getattr(self._session, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self._session.__exit__(*exc)

            def close(self, *seq_ids):
                closed.extend(seq_ids)
                return self._session.close(*seq_ids)

        class RecordingClient(MaskClient):

            def session(self, **kwargs):
                return RecordingSession(super().session(**kwargs))

        with RecordingClient(self.server.address) as client:
            model = decode_loop.RandomModel(len(self.token_bytes), seed=11)
            outputs = decode_loop.generate(client, model, decode_loop.SCHEMA, SEQUENCES,
                                           MAX_TOKENS)
        self.assertEqual(sorted(closed), sorted(outputs))


if __name__ == "__main__":
    unittest.main()
