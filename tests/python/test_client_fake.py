"""The client's plumbing against an in-process fake server (fake_maskd.py): sync and asyncio
sessions, per-sequence errors, compile errors, the logits processors and the overlap helper."""
import asyncio
import time
import unittest

import grpc
import numpy as np
import torch

import fake_maskd
from maskd_client import (Advance, AsyncMaskClient, CompileError, JsonSchema, MaskClient,
                          MaskdError, MaskdLogitsProcessor, MaskdRequestLogitsProcessor, Open,
                          Regex, SequenceError, StopStatus, overlapped_step, overlapped_step_async)

FIRST = fake_maskd.allowed_ids(0)


class FakeServerCase(unittest.TestCase):
    step_delay_s = 0.0

    def setUp(self):
        self.server, self.address, self.servicer = fake_maskd.start(self.step_delay_s)
        self.client = MaskClient(self.address, timeout=10)

    def tearDown(self):
        self.client.close()
        self.server.stop(None)


class UnaryCallsTest(FakeServerCase):

    def test_tokenizers(self):
        info = self.client.register_tokenizer(preloaded_name="fake")
        self.assertEqual(info.tokenizer_id, fake_maskd.TOKENIZER_ID)
        self.assertEqual((info.vocab_size, info.eos_token_ids, info.kind),
                         (100, (99,), "byte_level_bpe"))
        self.assertTrue(info.already_registered)
        self.assertEqual([t.name for t in self.client.list_tokenizers()], ["fake"])
        with self.assertRaises(MaskdError) as ctx:
            self.client.register_tokenizer(preloaded_name="nope")
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("nope", ctx.exception.message)
        with self.assertRaises(ValueError):
            self.client.register_tokenizer()

    def test_compile(self):
        grammar = self.client.compile(fake_maskd.TOKENIZER_ID, JsonSchema({"type": "object"}))
        self.assertEqual(grammar.handle, "fake")
        self.assertAlmostEqual(grammar.stats.compile_time_s, 0.003)
        self.assertEqual(grammar.stats.ignored_keywords, ("/properties/a/foo",))

    def test_compile_errors_carry_code_and_location(self):
        with self.assertRaises(CompileError) as ctx:
            self.client.compile(fake_maskd.TOKENIZER_ID, JsonSchema({"uniqueItems": True}))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.UNIMPLEMENTED)
        self.assertEqual(ctx.exception.location.json_pointer, "/uniqueItems")
        with self.assertRaises(CompileError) as ctx:
            self.client.compile(fake_maskd.TOKENIZER_ID, Regex("bad("))
        self.assertEqual((ctx.exception.location.line, ctx.exception.location.column), (1, 4))
        with self.assertRaises(MaskdError) as ctx:  # call-level: a status, not a CompileError
            self.client.compile("0" * 32, Regex("a"))
        self.assertNotIsInstance(ctx.exception, CompileError)
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)


class SessionTest(FakeServerCase):

    def test_open_step_close(self):
        with self.client.session() as session:
            first = session.open(1, "fake")
            np.testing.assert_array_equal(first.mask.allowed_ids(), FIRST)
            self.assertEqual(first.stop, StopStatus.CONTINUE)
            results = session.step({1: [4]}, open={2: "fake"})
            self.assertEqual(set(results), {1, 2})
            self.assertEqual(results[1].tokens_accepted, 1)
            self.assertEqual(results[1].jump_forward_bytes, b"ab")
            self.assertEqual(results[1].jump_forward_tokens, (7, 8))
            np.testing.assert_array_equal(results[2].mask.allowed_ids(), FIRST)
            after = session.advance(1, [3, 8, 5])
            self.assertTrue(after.must_stop)
            self.assertEqual(after.mask.allowed_ids().tolist(), [99])
            session.close(1, 2)
        ops = [op.WhichOneof("op") for op in self.servicer.requests_seen[1].ops]
        self.assertEqual(ops, ["open", "advance"])

    def test_every_encoding_gives_the_same_masks(self):
        seen = {}
        for encoding in ("auto", "bitmask", "allow_list", "deny_list"):
            with self.client.session(mask_encoding=encoding) as session:
                masks = [session.open(1, "fake").mask]
                for token in (0, 3, 4, 99):
                    masks.append(session.advance(1, [token]).mask)
                seen[encoding] = masks
        for encoding, masks in seen.items():
            for a, b in zip(masks, seen["bitmask"]):
                with self.subTest(encoding=encoding):
                    np.testing.assert_array_equal(a.bits, b.bits)
        self.assertEqual({m.encoding for m in seen["deny_list"]}, {"deny_list"})

    def test_per_sequence_errors_are_fields_and_spare_the_others(self):
        with self.client.session(tokenizer_id=fake_maskd.TOKENIZER_ID) as session:
            results = session.step(open={1: "fake", 2: "missing", 3: Regex("bad(")})
            self.assertTrue(results[1].ok)
            self.assertEqual(results[2].error.code, grpc.StatusCode.NOT_FOUND)
            self.assertEqual(results[3].error.location.column, 4)
            results = session.step({1: [0, 5, 4], 7: [1]})
            self.assertEqual(results[1].error.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertEqual(results[1].tokens_accepted, 1)
            self.assertEqual(results[7].error.code, grpc.StatusCode.NOT_FOUND)
            with self.assertRaises(SequenceError) as ctx:
                session.advance(1, [5])
            self.assertEqual(ctx.exception.seq_id, 1)
            # The sequence kept its one token; the stream still works.
            self.assertEqual(session.advance(1, [3]).tokens_accepted, 1)

    def test_rollback_and_drafts(self):
        with self.client.session() as session:
            session.open(1, "fake", max_rollback_tokens=4)
            result = session.advance(1, [0], drafts=[3, 4, 7])
            self.assertEqual((result.tokens_accepted, result.drafts_accepted), (1, 2))
            self.assertTrue(result.must_stop is False and result.may_stop)
            after = session.rollback(1, 2, tokens=[9])
            self.assertEqual(after.tokens_accepted, 1)
            with self.assertRaises(SequenceError):
                session.rollback(1, 5)
            omitted = session.step({1: Advance(tokens=[4], omit_mask=True)})[1]
            self.assertIsNone(omitted.mask)

    def test_bad_arguments_raise_before_sending(self):
        with self.client.session() as session:
            with self.assertRaisesRegex(ValueError, "appears twice"):
                session.step({1: [0]}, close=[1])
            with self.assertRaisesRegex(ValueError, "not a token id"):
                session.step({1: [-1]})
            with self.assertRaisesRegex(ValueError, "tokenizer_id"):
                session.step(open={1: JsonSchema({})})
            with self.assertRaisesRegex(ValueError, "mask_encoding"):
                session.step(open={1: Open("fake", mask_encoding="rle")})
        self.assertEqual(self.servicer.requests_seen, [])

    def test_many_threads_share_a_session(self):
        import concurrent.futures
        with self.client.session() as session:

            def one(seq_id):
                session.open(seq_id, "fake")
                return session.advance(seq_id, [0, 3]).stop

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                stops = list(pool.map(one, range(40)))
        self.assertEqual(stops, [StopStatus.MAY_STOP] * 40)

    def test_stream_failure_is_raised_and_sticky(self):
        session = self.client.session()
        session.open(1, "fake")
        self.server.stop(None)
        with self.assertRaises(MaskdError) as ctx:
            session.advance(1, [0])
        self.assertIn(ctx.exception.code, (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED))
        with self.assertRaises(MaskdError):
            session.advance(1, [0])
        session.end()


class AsyncSessionTest(FakeServerCase):

    def test_async_flavour(self):

        async def run():
            async with AsyncMaskClient(self.address) as client:
                info = await client.register_tokenizer(preloaded_name="fake")
                grammar = await client.compile(info.tokenizer_id, JsonSchema({}))
                with self.assertRaises(CompileError):
                    await client.compile(info.tokenizer_id, Regex("bad("))
                async with client.session() as session:
                    first = await session.open(1, grammar)
                    pending = session.submit({1: [2]}, open={2: "fake"})
                    results = await pending
                    results2 = await session.step({2: [0]}, close=[1])
                    with self.assertRaises(SequenceError):
                        await session.advance(1, [0])
                    return first, results, results2

        first, results, results2 = asyncio.run(run())
        np.testing.assert_array_equal(first.mask.allowed_ids(), FIRST)
        self.assertEqual(results[1].jump_forward_tokens, (7, 8))
        self.assertTrue(results2[1].ok and results2[1].mask is None)
        np.testing.assert_array_equal(results2[2].mask.allowed_ids(), fake_maskd.allowed_ids(1))


class ProcessorTest(FakeServerCase):

    def test_transformers_style(self):
        with self.client.session() as session:
            processor = MaskdLogitsProcessor(session, "fake", eos_token_ids=[99])
            prompt = torch.tensor([[5, 6], [7, 8]])
            scores = processor(prompt, torch.zeros(2, 128))
            self.assertTrue(torch.isneginf(scores[:, 100:]).all())
            self.assertEqual(torch.isfinite(scores[0]).nonzero().flatten().tolist(), FIRST)
            # Two steps' tokens at once: row 0 samples 0 then 3, row 1 samples 2 then EOS.
            ids = torch.cat([prompt, torch.tensor([[0, 3], [2, 99]])], dim=1)
            scores = processor(ids, torch.zeros(2, 128))
            # Row 0 accepted 0 then 3: n == 2. Row 1 sampled EOS: closed, unmasked.
            self.assertEqual(torch.isfinite(scores[0]).nonzero().flatten().tolist(),
                             fake_maskd.allowed_ids(2))
            self.assertTrue(torch.isfinite(scores[1]).all())
            processor.close()

    def test_vllm_style(self):
        with self.client.session() as session:
            processor = MaskdRequestLogitsProcessor(session, "fake")
            row = processor([], np.zeros(100, np.float32))
            self.assertEqual(np.flatnonzero(np.isfinite(row)).tolist(), FIRST)
            row = processor([4], torch.zeros(104))
            self.assertEqual(torch.isfinite(row).nonzero().flatten().tolist(),
                             fake_maskd.allowed_ids(1))
            same = processor([4], torch.zeros(104))  # no new token: the same mask
            self.assertTrue(torch.equal(torch.isfinite(row), torch.isfinite(same)))
            with self.assertRaises(SequenceError):
                processor([4, 1], torch.zeros(104))
            processor.close()


class OverlapTest(FakeServerCase):
    step_delay_s = 0.05

    def test_round_trip_hides_behind_forward(self):
        with self.client.session() as session:
            session.open(1, "fake")
            start = time.perf_counter()
            out, results = overlapped_step(session, {1: [0]}, lambda: time.sleep(0.05) or "done")
            elapsed = time.perf_counter() - start
        self.assertEqual(out, "done")
        self.assertEqual(results[1].tokens_accepted, 1)
        self.assertLess(elapsed, 0.095, "forward and round trip should run together")

    def test_async(self):

        async def run():
            async with AsyncMaskClient(self.address) as client:
                async with client.session() as session:
                    await session.open(1, "fake")

                    async def forward():
                        await asyncio.sleep(0.05)
                        return 42

                    start = time.perf_counter()
                    out, results = await overlapped_step_async(session, {1: [0]}, forward)
                    return out, results, time.perf_counter() - start

        out, results, elapsed = asyncio.run(run())
        self.assertEqual((out, results[1].tokens_accepted), (42, 1))
        self.assertLess(elapsed, 0.095)


if __name__ == "__main__":
    unittest.main()
