"""Logits processors in the two shapes inference engines call them.

MaskdLogitsProcessor: transformers-style, `processor(input_ids, scores)` once
per generation step for the whole batch. MaskdRequestLogitsProcessor:
vLLM-style, one per request, `processor(output_token_ids, logits)`.

Both feed the tokens the engine sampled since the last call to the session and
mask the logits with the answer. A sampled token the grammar does not allow is
an engine bug: the SequenceError is raised.
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from .logits import apply_mask_numpy, apply_mask_torch
from .session import GrammarRef, Open, Session


def _apply(logits, masks):
    if isinstance(logits, np.ndarray):
        return apply_mask_numpy(logits, masks)
    return apply_mask_torch(logits, masks)


class MaskdLogitsProcessor:
    """Constrains a batch of sequences, one grammar per row (or one for all).

    `input_ids` holds prompt + generated tokens; the first call opens the
    sequences, later calls advance each row by the columns added since. After a
    row samples one of `eos_token_ids` it is closed and left unmasked (the
    generator pads finished rows).
    """

    def __init__(self, session: Session, grammars, *, eos_token_ids: Sequence[int],
                 max_rollback_tokens: int = 0):
        self._session = session
        self._grammars = grammars
        self._eos = frozenset(int(t) for t in eos_token_ids)
        self._max_rollback = max_rollback_tokens
        self._seq_ids: List[int] = []
        self._consumed = 0
        self._finished: set = set()
        self.last_results: Dict[int, object] = {}

    def _grammar_for(self, row: int) -> GrammarRef:
        if isinstance(self._grammars, (list, tuple)):
            return self._grammars[row]
        return self._grammars

    def __call__(self, input_ids, scores):
        batch, length = int(input_ids.shape[0]), int(input_ids.shape[1])
        if not self._seq_ids:
            self._seq_ids = [self._session.new_seq_id() for _ in range(batch)]
            opens = {
                s: Open(self._grammar_for(i), max_rollback_tokens=self._max_rollback)
                for i, s in enumerate(self._seq_ids)
            }
            results = self._session.step(open=opens)
        else:
            if batch != len(self._seq_ids):
                raise ValueError(f"batch changed from {len(self._seq_ids)} to {batch} rows")
            new = input_ids[:, self._consumed:].tolist()
            advances, closes = {}, []
            for row, seq_id in enumerate(self._seq_ids):
                if row in self._finished:
                    continue
                tokens = new[row]
                if any(t in self._eos for t in tokens):
                    self._finished.add(row)
                    closes.append(seq_id)
                else:
                    advances[seq_id] = tokens
            results = self._session.step(advances, close=closes)
        self._consumed = length
        self.last_results = results
        masks = []
        for row, seq_id in enumerate(self._seq_ids):
            if row in self._finished:
                masks.append(None)
            else:
                masks.append(results[seq_id].raise_for_error())
        return _apply(scores, masks)

    def close(self) -> None:
        """Closes the rows still open (e.g. generation stopped at a length limit)."""
        open_ids = [s for row, s in enumerate(self._seq_ids) if row not in self._finished]
        if open_ids:
            self._session.step(close=open_ids)
        self._finished.update(range(len(self._seq_ids)))


class MaskdRequestLogitsProcessor:
    """One request: `(output_token_ids, logits) -> logits`, logits a 1-D row (torch or numpy)."""

    def __init__(self, session: Session, grammar: GrammarRef, *,
                 seq_id: Optional[int] = None):
        self._session = session
        self._grammar = grammar
        self.seq_id = session.new_seq_id() if seq_id is None else seq_id
        self._consumed: Optional[int] = None
        self.last_result = None

    def __call__(self, output_token_ids: Sequence[int], logits):
        if self._consumed is None:
            result = self._session.open(self.seq_id, self._grammar)
            self._consumed = 0
            if len(output_token_ids):
                result = self._session.advance(self.seq_id, list(output_token_ids))
        else:
            new = list(output_token_ids[self._consumed:])
            if len(output_token_ids) < self._consumed:
                raise ValueError(f"sequence {self.seq_id}: output shrank from {self._consumed} "
                                 f"to {len(output_token_ids)} tokens")
            result = self._session.advance(self.seq_id, new) if new else self.last_result
        self._consumed = len(output_token_ids)
        self.last_result = result
        _apply(logits[None], [result])  # a view: the caller's row is masked in place
        return logits

    def close(self) -> None:
        if self._consumed is not None:
            self._session.close(self.seq_id)
            self._consumed = None
