"""Session results: masks decoded to one packed layout whatever the wire encoding.

A stream with a mask dictionary (session.proto, SessionOptions) sends a mask it
sent before as a reference to a dictionary slot; MaskDictionary resolves those
into the same Mask objects.
"""
import enum
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ._proto import session_pb2
from .errors import ProtocolError, SequenceError, location_from_proto, status_code


class StopStatus(enum.Enum):
    UNSPECIFIED = session_pb2.STOP_STATUS_UNSPECIFIED
    CONTINUE = session_pb2.STOP_STATUS_CONTINUE  # EOS not allowed
    MAY_STOP = session_pb2.STOP_STATUS_MAY_STOP  # EOS allowed, as are other tokens
    MUST_STOP = session_pb2.STOP_STATUS_MUST_STOP  # only EOS allowed


def words_for(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def _ids_array(token_ids, vocab_size: int, what: str) -> np.ndarray:
    ids = np.asarray(token_ids, dtype=np.int64)
    if ids.size:
        if ids[-1] >= vocab_size or ids[0] < 0:
            raise ProtocolError(f"mask {what} holds id {int(ids.max())} >= vocab_size {vocab_size}")
        if ids.size > 1 and not np.all(ids[1:] > ids[:-1]):
            raise ProtocolError(f"mask {what} is not strictly ascending")
    return ids


def _pack(allowed: np.ndarray) -> np.ndarray:
    """Bool vector (a multiple of 32 long) -> packed uint32 words, bit i%32 of word i/32."""
    return np.packbits(allowed, bitorder="little").view("<u4").astype(np.uint32, copy=False)


class Mask:
    """The allowed next tokens of one sequence.

    `bits` is a read-only numpy uint32 vector of ceil(vocab_size / 32) words:
    bit (i % 32) of bits[i // 32] is set iff token i is allowed (the layout
    inference engines apply directly), whatever encoding the server chose.
    """
    __slots__ = ("vocab_size", "allowed_count", "encoding", "bits")

    def __init__(self, bits: np.ndarray, vocab_size: int, allowed_count: int, encoding: str):
        self.bits = bits
        self.bits.flags.writeable = False
        self.vocab_size = vocab_size
        self.allowed_count = allowed_count
        # "bitmask", "allow_list", "deny_list" or "dictionary_ref": what came on the wire
        self.encoding = encoding

    @classmethod
    def from_proto(cls, mask: session_pb2.Mask) -> "Mask":
        vocab_size = mask.vocab_size
        n_words = words_for(vocab_size)
        which = mask.WhichOneof("encoding")
        if which == "dictionary_ref":
            raise ProtocolError(f"mask is a dictionary_ref to slot {mask.dictionary_ref}: only "
                                "the session holding the stream's dictionary can resolve it")
        if which == "bitmask":
            bits = np.array(mask.bitmask.words, dtype=np.uint32)
            if bits.size != n_words:
                raise ProtocolError(f"bitmask has {bits.size} words, vocab_size {vocab_size} "
                                    f"needs {n_words}")
            if vocab_size % 32 and bits[-1] >> np.uint32(vocab_size % 32):
                raise ProtocolError(f"bitmask sets bits at or above vocab_size {vocab_size}")
            return cls(bits, vocab_size, mask.allowed_count, which)
        if which == "allow_list":
            ids = _ids_array(mask.allow_list.token_ids, vocab_size, which)
            allowed = np.zeros(n_words * 32, dtype=bool)
            allowed[ids] = True
            count = ids.size
        elif which == "deny_list":
            ids = _ids_array(mask.deny_list.token_ids, vocab_size, which)
            allowed = np.zeros(n_words * 32, dtype=bool)
            allowed[:vocab_size] = True
            allowed[ids] = False
            count = vocab_size - ids.size
        else:
            raise ProtocolError("mask has no encoding set")
        if count != mask.allowed_count:
            raise ProtocolError(f"mask {which} allows {count} ids but allowed_count says "
                                f"{mask.allowed_count}")
        return cls(_pack(allowed), vocab_size, count, which)

    def allowed(self, token: int) -> bool:
        if not 0 <= token < self.vocab_size:
            return False
        return bool((int(self.bits[token >> 5]) >> (token & 31)) & 1)

    __contains__ = allowed

    def to_bool(self, width: Optional[int] = None) -> np.ndarray:
        """Allowed flags for ids 0..width-1 (default vocab_size); ids >= vocab_size: False."""
        width = self.vocab_size if width is None else width
        flags = np.unpackbits(self.bits.astype("<u4").view(np.uint8), bitorder="little").view(bool)
        if width <= flags.size:
            return flags[:width].copy()
        out = np.zeros(width, dtype=bool)
        out[:flags.size] = flags
        return out

    def allowed_ids(self) -> np.ndarray:
        return np.flatnonzero(self.to_bool())

    def __repr__(self):
        return (f"Mask(vocab_size={self.vocab_size}, allowed_count={self.allowed_count}, "
                f"encoding={self.encoding!r})")


class MaskDictionary:
    """The client's side of a stream's mask dictionary: an array of slots.

    The server picks the slots: a mask with `dictionary_store` = k goes to slot k
    (replacing what was there), one with `dictionary_ref` = k is the mask of slot
    k. Results must be resolved in response order.
    """
    __slots__ = ("_slots",)

    def __init__(self, slots: int):
        self._slots = [None] * slots

    def __len__(self) -> int:
        return len(self._slots)

    def slot(self, k: int) -> Optional[Mask]:
        """The mask held in slot k (None when empty)."""
        return self._slots[k]

    def resolve(self, mask: session_pb2.Mask) -> Mask:
        which = mask.WhichOneof("encoding")
        if which == "dictionary_ref":
            k = mask.dictionary_ref
            if mask.HasField("dictionary_store"):
                raise ProtocolError(f"mask dictionary slot {k}: a dictionary_ref with a store")
            if k >= len(self._slots):
                raise ProtocolError(f"mask dictionary slot {k} is out of range "
                                    f"({len(self._slots)} slots granted)")
            held = self._slots[k]
            if held is None:
                raise ProtocolError(f"mask dictionary slot {k} is empty")
            if held.vocab_size != mask.vocab_size or held.allowed_count != mask.allowed_count:
                raise ProtocolError(
                    f"mask dictionary slot {k} holds a mask of vocab_size {held.vocab_size} "
                    f"allowing {held.allowed_count} ids, the reference says {mask.vocab_size} "
                    f"and {mask.allowed_count}")
            # Shares the read-only bits: no copy.
            return Mask(held.bits, held.vocab_size, held.allowed_count, "dictionary_ref")
        decoded = Mask.from_proto(mask)
        if mask.HasField("dictionary_store"):
            k = mask.dictionary_store
            if k >= len(self._slots):
                raise ProtocolError(f"mask dictionary slot {k} is out of range "
                                    f"({len(self._slots)} slots granted)")
            self._slots[k] = decoded
        return decoded


@dataclass(frozen=True)
class StepResult:
    """What one op did to one sequence.

    On failure `error` is a SequenceError and `mask` is None; `allowed()` and
    `raise_for_error()` then raise it. `mask` is also None after close and
    with Advance(omit_mask=True).
    """
    seq_id: int
    mask: Optional[Mask]
    stop: StopStatus
    jump_forward_bytes: bytes
    jump_forward_tokens: Tuple[int, ...]
    tokens_accepted: int
    drafts_accepted: int
    error: Optional[SequenceError]
    # Token healing (an open with prompt_tail_tokens): tokens to drop from the prompt's end,
    # their bytes (the output starts with them) and the healed grammar's handle.
    prompt_tokens_to_drop: int = 0
    healed_bytes: bytes = b""
    healed_handle: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def may_stop(self) -> bool:
        """EOS is allowed (MAY_STOP or MUST_STOP)."""
        return self.stop in (StopStatus.MAY_STOP, StopStatus.MUST_STOP)

    @property
    def must_stop(self) -> bool:
        return self.stop == StopStatus.MUST_STOP

    def raise_for_error(self) -> "StepResult":
        if self.error is not None:
            raise self.error
        return self

    def allowed(self, token: int) -> bool:
        self.raise_for_error()
        if self.mask is None:
            raise ValueError(f"sequence {self.seq_id}: this result carries no mask")
        return self.mask.allowed(token)

    @classmethod
    def from_proto(cls, result: session_pb2.SequenceResult,
                   dictionary: Optional[MaskDictionary] = None) -> "StepResult":
        """`dictionary`: the stream's (None: no dictionary, so a reference is an error)."""
        error = None
        if result.HasField("error"):
            error = SequenceError(result.sequence_id, status_code(result.error.code),
                                  result.error.message, location_from_proto(result.error.location))
        mask = None
        if result.HasField("mask"):
            if dictionary is not None:
                mask = dictionary.resolve(result.mask)
            else:
                if result.mask.HasField("dictionary_store"):
                    raise ProtocolError(f"sequence {result.sequence_id}: a dictionary_store on a "
                                        "stream without a mask dictionary")
                mask = Mask.from_proto(result.mask)
        try:
            stop = StopStatus(result.stop)
        except ValueError:
            raise ProtocolError(f"sequence {result.sequence_id}: unknown stop status {result.stop}")
        return cls(seq_id=result.sequence_id, mask=mask, stop=stop,
                   jump_forward_bytes=result.jump_forward.bytes,
                   jump_forward_tokens=tuple(result.jump_forward.token_ids),
                   tokens_accepted=result.tokens_accepted, drafts_accepted=result.drafts_accepted,
                   error=error, prompt_tokens_to_drop=result.healing.prompt_tokens_to_drop,
                   healed_bytes=result.healing.removed_bytes,
                   healed_handle=result.healing.healed_handle)
