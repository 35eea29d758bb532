"""Failover with nothing lost: what a session remembers to rebuild its sequences elsewhere.

A Session (and an AsyncSession) keeps, for each open sequence, its spec (an inline CompileRequest)
and the tokens the server accepted. When its stream ends with UNAVAILABLE (the
replica was drained or died; or CANCELLED, which is how a replica shutting
down turns streams away), it starts a new stream on the same channel (any
replica), reopens every sequence with its spec inline, replays its tokens and
resends the step that failed, so the caller gets the same results as if
nothing had happened.
"""
import random
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import grpc

from ._proto import compile_pb2, session_pb2
from .errors import MaskdError
from .results import StepResult

# How a replica going away shows on a stream.
WENT_AWAY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


@dataclass(frozen=True)
class FailoverEvent:
    """One failover, as passed to FailoverOptions.on_failover."""
    cause: MaskdError  # the stream failure that started it
    attempts: int  # new streams tried (1 when the first one worked)
    sequences_restored: int
    # Sequences that could not be rebuilt ({seq_id: MaskdError}): their ops in
    # the failed step get that error as the result's error; they are forgotten.
    sequences_lost: Dict[int, MaskdError]
    duration_s: float  # from the failure to the resent step's answer


@dataclass(frozen=True)
class FailoverOptions:
    """Failover is on by default; FailoverOptions(enabled=False) turns it off.

    Before new stream k (k = 1, 2, ...) the session waits
    initial_backoff_s * multiplier**(k-1), at most max_backoff_s, less a random
    fraction of up to `jitter` of it (so the workers of a dead replica do not
    reconnect all at once); after max_attempts the step raises the last error.
    """
    enabled: bool = True
    max_attempts: int = 6
    initial_backoff_s: float = 0.02
    multiplier: float = 2.0
    max_backoff_s: float = 2.0
    jitter: float = 0.5
    max_ops_per_request: int = 1024  # the server's --max_ops_per_request
    max_tokens_per_op: int = 4096
    on_failover: Optional[Callable[[FailoverEvent], None]] = None
    _random: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def backoff_s(self, attempt: int) -> float:
        wait = min(self.initial_backoff_s * max(self.multiplier, 1.0)**(attempt - 1),
                   self.max_backoff_s)
        return wait * (1.0 - min(max(self.jitter, 0.0), 1.0) * self._random.random())


@dataclass
class LedgerEntry:
    compile: Optional[compile_pb2.CompileRequest]  # None: opened by a handle not compiled here
    handle: str
    mask_encoding: int
    max_rollback_tokens: int
    tokens: List[int] = field(default_factory=list)
    # Healing and budget as opened (a reopen heals the same way).
    prompt_tail_tokens: List[int] = field(default_factory=list)
    max_reasoning_tokens: Optional[int] = None


class SequenceLedger:
    """Each open sequence's spec and accepted tokens, kept up to date from requests and responses.

    spec_book: {handle: CompileRequest} of the handles the client compiled
    (sequences opened by other handles cannot be reopened elsewhere).
    """

    def __init__(self, spec_book: Optional[Dict[str, compile_pb2.CompileRequest]] = None):
        self._book = spec_book if spec_book is not None else {}
        self.entries: Dict[int, LedgerEntry] = {}

    def apply(self, request: session_pb2.StepRequest, response: session_pb2.StepResponse) -> None:
        for op, result in zip(request.ops, response.results):
            seq = op.sequence_id
            kind = op.WhichOneof("op")
            if kind == "open":
                if result.HasField("error"):
                    continue  # a failed open leaves the sequence as it was
                o = op.open
                if o.WhichOneof("grammar") == "compile":
                    spec, handle = o.compile, ""
                else:
                    spec, handle = self._book.get(o.handle), o.handle
                self.entries[seq] = LedgerEntry(
                    spec, handle, o.mask_encoding, o.max_rollback_tokens,
                    prompt_tail_tokens=list(o.prompt_tail_tokens),
                    max_reasoning_tokens=(o.max_reasoning_tokens
                                          if o.HasField("max_reasoning_tokens") else None))
            elif kind == "advance":
                entry = self.entries.get(seq)
                if entry is None:
                    continue
                a = op.advance
                n = a.rollback_tokens
                # A rollback the server refuses leaves the sequence unchanged.
                if n and (n > len(entry.tokens) or n > entry.max_rollback_tokens):
                    continue
                if n:
                    del entry.tokens[-n:]
                entry.tokens.extend(a.tokens[:result.tokens_accepted])
                entry.tokens.extend(a.draft_tokens[:result.drafts_accepted])
            elif kind == "close":
                self.entries.pop(seq, None)

    def forget(self, seq_id: int) -> None:
        self.entries.pop(seq_id, None)

    def restore_requests(self, max_ops: int, max_tokens: int
                         ) -> Tuple[List[session_pb2.StepRequest], Dict[int, MaskdError]]:
        """The requests rebuilding every sequence (opens, then token replays, masks omitted).

        Returns them (without request ids) and the sequences that cannot be reopened.
        """
        max_ops, max_tokens = max(max_ops, 1), max(max_tokens, 1)
        requests: List[session_pb2.StepRequest] = []
        lost: Dict[int, MaskdError] = {}

        def add(ops):
            for i in range(0, len(ops), max_ops):
                requests.append(session_pb2.StepRequest(ops=ops[i:i + max_ops]))

        restorable = []
        opens = []
        for seq, entry in sorted(self.entries.items()):
            if entry.compile is None:
                lost[seq] = MaskdError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"failover: sequence {seq} was opened by handle {entry.handle!r}, which this "
                    "client did not compile, so it cannot be reopened on another replica (open "
                    "with an inline spec, or compile through the same client)")
                continue
            restorable.append((seq, entry))
            reopen = session_pb2.OpenSequence(compile=entry.compile,
                                              mask_encoding=entry.mask_encoding,
                                              max_rollback_tokens=entry.max_rollback_tokens,
                                              prompt_tail_tokens=entry.prompt_tail_tokens)
            if entry.max_reasoning_tokens is not None:
                reopen.max_reasoning_tokens = entry.max_reasoning_tokens
            opens.append(session_pb2.SequenceOp(sequence_id=seq, open=reopen))
        add(opens)
        # One op per sequence per request: a long history takes several rounds.
        offset = 0
        while True:
            ops = [session_pb2.SequenceOp(sequence_id=seq, advance=session_pb2.AdvanceSequence(
                tokens=entry.tokens[offset:offset + max_tokens], omit_mask=True))
                   for seq, entry in restorable if offset < len(entry.tokens)]
            if not ops:
                break
            add(ops)
            offset += max_tokens
        return requests, lost


def note_restore_results(request: session_pb2.StepRequest, results: Dict[int, StepResult],
                         lost: Dict[int, MaskdError], opened_then_lost: List[int]) -> None:
    """Records the sequences a restore request failed to rebuild.

    Those that failed after their open (a replayed token refused) are open on the
    new replica: they go to opened_then_lost, to be closed (close_request).
    """
    for seq, result in results.items():
        if result.error is not None and seq not in lost:
            lost[seq] = MaskdError(
                result.error.code, f"failover: rebuilding sequence {seq} on another "
                f"replica failed: {result.error.message}")
            if request.ops[0].WhichOneof("op") != "open":
                opened_then_lost.append(seq)


def close_request(seq_ids: List[int]) -> session_pb2.StepRequest:
    """Closes `seq_ids` (no request id yet)."""
    return session_pb2.StepRequest(ops=[
        session_pb2.SequenceOp(sequence_id=seq, close=session_pb2.CloseSequence())
        for seq in seq_ids])


def resend_request(request: session_pb2.StepRequest,
                   lost: Dict[int, MaskdError]) -> session_pb2.StepRequest:
    """The failed step again, without the ops of lost sequences (opens always go)."""
    kept = [op for op in request.ops
            if op.WhichOneof("op") == "open" or op.sequence_id not in lost]
    return session_pb2.StepRequest(request_id=request.request_id, ops=kept)


def merge_resent(request: session_pb2.StepRequest, results: Dict[int, StepResult],
                 lost: Dict[int, MaskdError]) -> Dict[int, StepResult]:
    """The resent step's results, with each lost sequence's error in place of its result."""
    out = {}
    for op in request.ops:
        seq = op.sequence_id
        if seq in results:
            out[seq] = results[seq]
        else:
            error = lost[seq]
            out[seq] = StepResult.from_proto(session_pb2.SequenceResult(
                sequence_id=seq, error={"code": error.code.value[0], "message": error.message}))
    return out


def gave_up(attempts: int, cause: MaskdError, last: MaskdError) -> MaskdError:
    return MaskdError(
        last.code, f"failover gave up after {attempts} new streams (the stream had failed "
        f"with: {cause.message}): {last.message}")
