"""Masking logits: numpy and torch give identical results, padding columns are disallowed."""
import unittest

import numpy as np
import torch

from maskd_client import Mask, apply_mask_numpy, apply_mask_torch, stack_masks
from maskd_client._proto import session_pb2


def random_mask(rng, vocab, density):
    ids = np.flatnonzero(rng.random(vocab) < density)
    return Mask.from_proto(
        session_pb2.Mask(vocab_size=vocab, allowed_count=ids.size,
                         allow_list=session_pb2.TokenIdList(token_ids=ids.tolist())))


def reference(logits, masks):
    """Straightforward per-token loop: the semantics both helpers must have."""
    out = logits.copy()
    for row, mask in enumerate(masks):
        if mask is None:
            continue
        for t in range(out.shape[1]):
            if not mask.allowed(t):
                out[row, t] = -np.inf
    return out


class ApplyMaskTest(unittest.TestCase):

    def test_matches_reference_with_padding_and_unconstrained_rows(self):
        rng = np.random.default_rng(7)
        vocab, width = 77, 96  # model output padded past the tokenizer's vocabulary
        masks = [random_mask(rng, vocab, d) for d in (0.0, 0.02, 0.5, 0.98, 1.0)] + [None]
        logits = rng.standard_normal((len(masks), width)).astype(np.float32)
        expected = reference(logits, masks)
        got = apply_mask_numpy(logits.copy(), masks)
        np.testing.assert_array_equal(got, expected)
        self.assertTrue(np.isneginf(got[:-1, vocab:]).all(), "padding must be disallowed")
        self.assertTrue(np.isfinite(got[-1]).all(), "a row without a mask stays untouched")
        self.assertTrue(np.isneginf(got[0]).all())
        np.testing.assert_array_equal(got[4, :vocab], logits[4, :vocab])

    def test_in_place(self):
        rng = np.random.default_rng(1)
        masks = [random_mask(rng, 40, 0.5)]
        logits = rng.standard_normal((1, 40)).astype(np.float32)
        self.assertIs(apply_mask_numpy(logits, masks), logits)
        tensor = torch.from_numpy(rng.standard_normal((1, 40)).astype(np.float32))
        self.assertIs(apply_mask_torch(tensor, masks), tensor)
        self.assertTrue(torch.isneginf(tensor).any())

    def test_torch_and_numpy_identical(self):
        rng = np.random.default_rng(2024)
        for trial in range(20):
            vocab = int(rng.integers(1, 300))
            width = vocab + int(rng.integers(0, 70))
            batch = int(rng.integers(1, 9))
            masks = [
                None if rng.random() < 0.15 else random_mask(rng, vocab, rng.random())
                for _ in range(batch)
            ]
            for dtype in (np.float32, np.float16, np.float64):
                logits = rng.standard_normal((batch, width)).astype(dtype)
                by_numpy = apply_mask_numpy(logits.copy(), masks)
                by_torch = apply_mask_torch(torch.from_numpy(logits.copy()), masks).numpy()
                with self.subTest(trial=trial, dtype=dtype):
                    np.testing.assert_array_equal(by_numpy, by_torch)
                    np.testing.assert_array_equal(by_numpy, reference(logits, masks))

    def test_packed_array_input_and_narrow_logits(self):
        rng = np.random.default_rng(5)
        masks = [random_mask(rng, 100, 0.5) for _ in range(3)]
        words, constrained = stack_masks(masks)
        self.assertEqual(words.shape, (3, 4))
        self.assertTrue(constrained.all())
        logits = rng.standard_normal((3, 64)).astype(np.float32)  # narrower than the vocab
        np.testing.assert_array_equal(apply_mask_numpy(logits.copy(), words),
                                      reference(logits, masks))
        np.testing.assert_array_equal(
            apply_mask_torch(torch.from_numpy(logits.copy()), words).numpy(),
            reference(logits, masks))

    def test_bad_shapes_and_types(self):
        mask = random_mask(np.random.default_rng(0), 10, 0.5)
        with self.assertRaisesRegex(ValueError, "2 masks for a batch of 1"):
            apply_mask_numpy(np.zeros((1, 10), np.float32), [mask, mask])
        with self.assertRaisesRegex(ValueError, "batch, vocab"):
            apply_mask_numpy(np.zeros(10, np.float32), [mask])
        with self.assertRaisesRegex(TypeError, "floating"):
            apply_mask_numpy(np.zeros((1, 10), np.int32), [mask])
        with self.assertRaisesRegex(TypeError, "floating"):
            apply_mask_torch(torch.zeros((1, 10), dtype=torch.int64), [mask])
        with self.assertRaisesRegex(TypeError, "uint32"):
            apply_mask_numpy(np.zeros((1, 10), np.float32), [np.zeros(1, np.int64)])


if __name__ == "__main__":
    unittest.main()
