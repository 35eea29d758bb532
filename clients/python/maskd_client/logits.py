"""Applying masks to logits in place: -inf on every disallowed token.

Logits are (batch, width) with one row per sequence. `width` may exceed the
tokenizer's vocabulary (models pad their output layer): the padding columns are
disallowed. A row whose mask is None is left untouched (an unconstrained
sequence in a mixed batch). numpy and torch give identical results.
"""
from typing import Optional, Sequence, Union

import numpy as np

from .results import Mask, StepResult

MaskLike = Union[Mask, StepResult, np.ndarray, None]


def _words(mask: MaskLike) -> Optional[np.ndarray]:
    if mask is None:
        return None
    if isinstance(mask, StepResult):
        mask.raise_for_error()
        if mask.mask is None:
            raise ValueError(f"sequence {mask.seq_id}: this result carries no mask")
        mask = mask.mask
    if isinstance(mask, Mask):
        return mask.bits
    words = np.asarray(mask)
    if words.dtype != np.uint32 or words.ndim != 1:
        raise TypeError(f"a packed mask must be a 1-D uint32 array, got {words.dtype} "
                        f"with shape {words.shape}")
    return words


def stack_masks(masks: Union[np.ndarray, Sequence[MaskLike]]):
    """(batch, words) uint32 array and a (batch,) bool vector of the rows that have a mask.

    `masks`: a 2-D uint32 array, or one Mask / StepResult / 1-D uint32 array /
    None per row. Rows without a mask get zero words and False.
    """
    if isinstance(masks, np.ndarray) and masks.ndim == 2:
        if masks.dtype != np.uint32:
            raise TypeError(f"packed masks must be uint32, got {masks.dtype}")
        return masks, np.ones(masks.shape[0], dtype=bool)
    rows = [_words(m) for m in masks]
    n_words = max((r.size for r in rows if r is not None), default=0)
    stacked = np.zeros((len(rows), n_words), dtype=np.uint32)
    constrained = np.zeros(len(rows), dtype=bool)
    for i, row in enumerate(rows):
        if row is not None:
            stacked[i, :row.size] = row
            constrained[i] = True
    return stacked, constrained


def _check_shapes(logits_shape, words: np.ndarray):
    if len(logits_shape) != 2:
        raise ValueError(f"logits must be (batch, vocab), got shape {tuple(logits_shape)}")
    if logits_shape[0] != words.shape[0]:
        raise ValueError(f"{words.shape[0]} masks for a batch of {logits_shape[0]} rows")


def allowed_numpy(words: np.ndarray, constrained: np.ndarray, width: int) -> np.ndarray:
    """(batch, width) bool: the masks' bits, False past them, True on unconstrained rows."""
    batch, n_words = words.shape
    little = np.ascontiguousarray(words, dtype="<u4")
    bits = np.unpackbits(little.view(np.uint8).reshape(batch, n_words * 4),
                         axis=1, bitorder="little").view(bool)
    if bits.shape[1] >= width:
        allowed = bits[:, :width]
    else:
        allowed = np.zeros((batch, width), dtype=bool)
        allowed[:, :bits.shape[1]] = bits
    allowed[~constrained] = True
    return allowed


def apply_mask_numpy(logits: np.ndarray, masks) -> np.ndarray:
    """Sets disallowed logits to -inf in place; returns `logits` (float array, batch x width)."""
    words, constrained = stack_masks(masks)
    _check_shapes(logits.shape, words)
    if not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"logits must be floating point, got {logits.dtype}")
    np.putmask(logits, ~allowed_numpy(words, constrained, logits.shape[1]), -np.inf)
    return logits


def allowed_torch(words: np.ndarray, constrained: np.ndarray, width: int, device):
    """allowed_numpy's result as a torch bool tensor, with the unpacking done on `device`."""
    import torch  # optional dependency

    batch, n_words = words.shape
    # torch has no uint32: reinterpret as int32; `>> k & 1` still reads bit k.
    packed = torch.from_numpy(words.view(np.int32)).to(device, non_blocking=True)
    shifts = torch.arange(32, dtype=torch.int32, device=device)
    bits = ((packed.unsqueeze(-1) >> shifts) & 1).bool().reshape(batch, n_words * 32)
    if bits.shape[1] >= width:
        allowed = bits[:, :width]
    else:
        allowed = torch.zeros((batch, width), dtype=torch.bool, device=device)
        allowed[:, :bits.shape[1]] = bits
    allowed[torch.from_numpy(~constrained).to(device)] = True
    return allowed


def apply_mask_torch(logits, masks):
    """Sets disallowed logits to -inf in place (torch tensor, batch x width, any device)."""
    words, constrained = stack_masks(masks)
    _check_shapes(tuple(logits.shape), words)
    if not logits.is_floating_point():
        raise TypeError(f"logits must be floating point, got {logits.dtype}")
    allowed = allowed_torch(np.ascontiguousarray(words), constrained, logits.shape[1],
                            logits.device)
    logits.masked_fill_(~allowed, float("-inf"))
    return logits
