"""The batched Session stream (synchronous flavour) and the request building both flavours share.

One StepRequest carries ops for many sequences; the server answers each request
with one StepResponse, in order. A Session sends one request at a time from a
single worker thread, so it may be used from several threads and `submit`
returns a future that overlaps the round trip with the caller's own work.
"""
import concurrent.futures
import itertools
import queue
import threading
import time
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import grpc
import numpy as np

from ._proto import session_pb2
from .errors import MaskdError, ProtocolError, from_rpc_error
from .failover import (WENT_AWAY, FailoverEvent, FailoverOptions, SequenceLedger, close_request,
                       gave_up, merge_resent, note_restore_results, resend_request)
from .results import MaskDictionary, StepResult
from .server_types import CompiledGrammar
from .specs import CompileOptions, Spec, compile_request

_ENCODINGS = {
    "auto": session_pb2.MASK_ENCODING_AUTO,
    "bitmask": session_pb2.MASK_ENCODING_BITMASK,
    "allow_list": session_pb2.MASK_ENCODING_ALLOW_LIST,
    "deny_list": session_pb2.MASK_ENCODING_DENY_LIST,
}

GrammarRef = Union[str, CompiledGrammar, Spec]

# Mask dictionary slots a session asks for by default (16 KiB each for a 128k
# vocabulary; the server may grant fewer).
DEFAULT_MASK_DICTIONARY_SLOTS = 256


@dataclass(frozen=True)
class Open:
    """Opens a sequence on a handle, a CompiledGrammar, or a spec compiled inline.

    An inline spec needs a tokenizer id (here or the session's default).
    prompt_tail_tokens: token healing, the prompt's last tokens (a few suffice); the result's
    prompt_tokens_to_drop says how many the worker drops from its prompt before generating.
    max_reasoning_tokens: a reasoning token budget (the grammar needs a reasoning_end_marker);
    once spent, the marker is forced. None: no budget.
    """
    grammar: GrammarRef
    tokenizer_id: Optional[str] = None
    options: Optional[CompileOptions] = None
    mask_encoding: Optional[str] = None  # None: the session's default
    max_rollback_tokens: int = 0
    prompt_tail_tokens: Sequence[int] = ()
    max_reasoning_tokens: Optional[int] = None


@dataclass(frozen=True)
class Advance:
    """Rollback first, then the committed tokens, then the drafts to verify."""
    tokens: Sequence[int] = ()
    rollback: int = 0
    drafts: Sequence[int] = ()
    omit_mask: bool = False


AdvanceArg = Union[Advance, Sequence[int], np.ndarray]


def _token_list(tokens, what: str, seq_id: int) -> List[int]:
    out = [int(t) for t in tokens]
    for t in out:
        if not 0 <= t < 2**32:
            raise ValueError(f"sequence {seq_id}: {what} holds {t}, not a token id")
    return out


class RequestBuilder:
    """Turns open/advance/close arguments into StepRequests (shared by sync and asyncio)."""

    def __init__(self, tokenizer_id: Optional[str], mask_encoding: str):
        if mask_encoding not in _ENCODINGS:
            raise ValueError(f"mask_encoding {mask_encoding!r}: expected one of "
                             f"{', '.join(sorted(_ENCODINGS))}")
        self.tokenizer_id = tokenizer_id
        self.mask_encoding = mask_encoding
        self._request_ids = itertools.count(1)
        self._seq_ids = itertools.count(1 << 62)  # away from small ids callers pick themselves
        self._lock = threading.Lock()

    def new_seq_id(self) -> int:
        with self._lock:
            return next(self._seq_ids)

    def _open_op(self, seq_id: int, spec: Union[Open, GrammarRef]) -> session_pb2.SequenceOp:
        if not isinstance(spec, Open):
            spec = Open(spec)
        encoding = spec.mask_encoding or self.mask_encoding
        if encoding not in _ENCODINGS:
            raise ValueError(f"sequence {seq_id}: mask_encoding {encoding!r}: expected one of "
                             f"{', '.join(sorted(_ENCODINGS))}")
        op = session_pb2.OpenSequence(
            mask_encoding=_ENCODINGS[encoding], max_rollback_tokens=spec.max_rollback_tokens,
            prompt_tail_tokens=_token_list(spec.prompt_tail_tokens, "prompt_tail_tokens", seq_id))
        if spec.max_reasoning_tokens is not None:
            if not 0 <= spec.max_reasoning_tokens < 2**32:
                raise ValueError(f"sequence {seq_id}: max_reasoning_tokens "
                                 f"{spec.max_reasoning_tokens} is not a token count")
            op.max_reasoning_tokens = spec.max_reasoning_tokens
        grammar = spec.grammar
        if isinstance(grammar, CompiledGrammar):
            grammar = grammar.handle
        if isinstance(grammar, str):
            if not grammar:
                raise ValueError(f"sequence {seq_id}: empty grammar handle")
            op.handle = grammar
        else:
            tokenizer_id = spec.tokenizer_id or self.tokenizer_id
            if not tokenizer_id:
                raise ValueError(f"sequence {seq_id}: an inline spec needs a tokenizer_id "
                                 "(on Open or on the session)")
            op.compile.CopyFrom(compile_request(tokenizer_id, grammar, spec.options))
        return session_pb2.SequenceOp(sequence_id=seq_id, open=op)

    @staticmethod
    def _advance_op(seq_id: int, advance: AdvanceArg) -> session_pb2.SequenceOp:
        if not isinstance(advance, Advance):
            advance = Advance(tokens=advance)
        if advance.rollback < 0:
            raise ValueError(f"sequence {seq_id}: rollback {advance.rollback} < 0")
        op = session_pb2.AdvanceSequence(
            rollback_tokens=advance.rollback, tokens=_token_list(advance.tokens, "tokens", seq_id),
            draft_tokens=_token_list(advance.drafts, "drafts", seq_id), omit_mask=advance.omit_mask)
        return session_pb2.SequenceOp(sequence_id=seq_id, advance=op)

    def build(self, advances: Optional[Mapping[int, AdvanceArg]],
              opens: Optional[Mapping[int, Union[Open, GrammarRef]]],
              closes: Iterable[int]) -> session_pb2.StepRequest:
        """Opens first, then advances, then closes; each sequence at most once."""
        ops = []
        seen = set()

        def claim(seq_id):
            if not 0 <= seq_id < 2**64:
                raise ValueError(f"sequence id {seq_id} is not a uint64")
            if seq_id in seen:
                raise ValueError(f"sequence {seq_id} appears twice in one step")
            seen.add(seq_id)

        for seq_id, spec in (opens or {}).items():
            claim(seq_id)
            ops.append(self._open_op(seq_id, spec))
        for seq_id, advance in (advances or {}).items():
            claim(seq_id)
            ops.append(self._advance_op(seq_id, advance))
        for seq_id in closes:
            claim(seq_id)
            ops.append(session_pb2.SequenceOp(sequence_id=seq_id,
                                              close=session_pb2.CloseSequence()))
        return session_pb2.StepRequest(request_id=self.next_request_id(), ops=ops)

    def next_request_id(self) -> int:
        with self._lock:
            return next(self._request_ids)


class DictionaryState:
    """A stream's mask dictionary settings: asked on the first request, granted in its response.

    Used by one round trip at a time (the sessions serialize them).
    """

    def __init__(self, slots: int):
        if not 0 <= slots < 2**32:
            raise ValueError(f"mask_dictionary_slots {slots}: expected 0 <= slots < 2**32")
        self.wanted = slots
        self.dictionary: Optional[MaskDictionary] = None
        self._first = True

    def prepare(self, request: session_pb2.StepRequest) -> bool:
        """Sets the stream options on the stream's first request; True when it is that one."""
        first = self._first
        self._first = False
        if first and self.wanted:
            request.session_options.mask_dictionary_slots = self.wanted
        return first

    def granted(self, response: session_pb2.StepResponse) -> None:
        slots = response.session_grant.mask_dictionary_slots
        if slots > self.wanted:
            raise ProtocolError(f"the server granted {slots} mask dictionary slots; "
                                f"{self.wanted} were asked for")
        self.dictionary = MaskDictionary(slots) if slots else None


def parse_response(request: session_pb2.StepRequest, response: session_pb2.StepResponse,
                   dictionary: Optional[MaskDictionary] = None) -> Dict[int, StepResult]:
    if response.request_id != request.request_id:
        raise ProtocolError(f"response to request {response.request_id} while waiting for "
                            f"{request.request_id}")
    if len(response.results) != len(request.ops):
        raise ProtocolError(f"request {request.request_id} had {len(request.ops)} ops but the "
                            f"response has {len(response.results)} results")
    out = {}
    for op, result in zip(request.ops, response.results):
        if op.sequence_id != result.sequence_id:
            raise ProtocolError(f"result for sequence {result.sequence_id} where sequence "
                                f"{op.sequence_id} was expected")
        out[op.sequence_id] = StepResult.from_proto(result, dictionary)
    return out


class _Closed:
    pass


_END = _Closed()


class Session:
    """One Session stream. Use as a context manager, or call end() when done.

    step() returns {seq_id: StepResult} and never raises per-sequence errors
    (see StepResult.error); it raises MaskdError when the stream itself fails
    (and failover is off or could not mend it), after which the session is
    unusable. open/advance/rollback/close are one-sequence shortcuts that raise
    the sequence's error.

    Failover (failover.py, on unless FailoverOptions(enabled=False)): when the
    stream ends with UNAVAILABLE, a new stream on the same channel rebuilds
    every open sequence and the step is resent; `failovers` counts them.
    """

    def __init__(self, stub, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                 timeout: Optional[float] = None,
                 metadata: Optional[Sequence[Tuple[str, str]]] = None,
                 mask_dictionary_slots: int = DEFAULT_MASK_DICTIONARY_SLOTS,
                 failover: Optional[FailoverOptions] = None, spec_book=None):
        self._builder = RequestBuilder(tokenizer_id, mask_encoding)
        self._stub = stub
        self._metadata = metadata
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._slots = mask_dictionary_slots
        self._failover = failover if failover is not None else FailoverOptions()
        self._ledger = SequenceLedger(spec_book) if self._failover.enabled else None
        self.failovers = 0  # completed failovers
        self._start_stream()
        self._worker = concurrent.futures.ThreadPoolExecutor(1,
                                                             thread_name_prefix="maskd-session")
        self._failure: Optional[MaskdError] = None
        self._ended = False

    def _start_stream(self) -> None:
        timeout = None if self._deadline is None else max(self._deadline - time.monotonic(), 0)
        self._dictionary = DictionaryState(self._slots)
        self._requests: "queue.SimpleQueue" = queue.SimpleQueue()
        self._responses = self._stub.Session(iter(self._requests.get, _END), timeout=timeout,
                                             metadata=self._metadata)

    def _drop_stream(self) -> None:
        self._requests.put(_END)
        self._responses.cancel()

    def new_seq_id(self) -> int:
        """A fresh id, distinct from other new_seq_id() results of this session."""
        return self._builder.new_seq_id()

    @property
    def mask_dictionary_slots(self) -> int:
        """Slots the server granted on the current stream (0 before the first step, or when off)."""
        d = self._dictionary.dictionary
        return len(d) if d is not None else 0

    def _exchange(self, request, record: bool = True) -> Dict[int, StepResult]:
        """One round trip on the current stream; MaskdError when the stream fails.

        record: keep the ledger up to date (not for the restore requests, which
        only repeat what it holds).
        """
        first = self._dictionary.prepare(request)
        self._requests.put(request)
        try:
            response = next(self._responses)
        except StopIteration:
            raise MaskdError(grpc.StatusCode.UNAVAILABLE, "the Session stream ended") from None
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        if first:
            self._dictionary.granted(response)
        results = parse_response(request, response, self._dictionary.dictionary)
        if record and self._ledger is not None:
            self._ledger.apply(request, response)
        return results

    def _round_trip(self, request) -> Dict[int, StepResult]:
        if self._failure is not None:
            raise self._failure
        try:
            return self._exchange(request)
        except ProtocolError as e:
            self._failure = e
            raise
        except MaskdError as e:
            if self._ledger is None or e.code not in WENT_AWAY:
                self._failure = e
                raise
            return self._fail_over(request, e)

    def _restore(self) -> Dict[int, MaskdError]:
        """A new stream with every sequence of the ledger rebuilt; returns those that could not be."""
        self._drop_stream()
        self._start_stream()
        requests, lost = self._ledger.restore_requests(self._failover.max_ops_per_request,
                                                       self._failover.max_tokens_per_op)
        opened_then_lost: List[int] = []
        for request in requests:
            request.request_id = self._builder.next_request_id()
            note_restore_results(request, self._exchange(request, record=False), lost,
                                 opened_then_lost)
        if opened_then_lost:  # open on the new replica: close so the caller may reuse the id
            closing = close_request(opened_then_lost)
            closing.request_id = self._builder.next_request_id()
            self._exchange(closing, record=False)
        return lost

    def _resend(self, request, lost: Dict[int, MaskdError]) -> Dict[int, StepResult]:
        """The failed step again, without the ops of lost sequences (they get their error)."""
        return merge_resent(request, self._exchange(resend_request(request, lost)), lost)

    def _fail_over(self, request, cause: MaskdError) -> Dict[int, StepResult]:
        options = self._failover
        started = time.monotonic()
        last = cause
        attempt = 0
        for attempt in range(1, options.max_attempts + 1):
            time.sleep(options.backoff_s(attempt))
            sequences = len(self._ledger.entries)
            try:
                lost = self._restore()
                results = self._resend(request, lost)
            except ProtocolError as e:
                self._failure = e
                raise
            except MaskdError as e:
                last = e
                if e.code not in WENT_AWAY:
                    break
                continue
            for seq in lost:
                self._ledger.forget(seq)
            self.failovers += 1
            if options.on_failover is not None:
                options.on_failover(FailoverEvent(cause, attempt, sequences - len(lost), lost,
                                                  time.monotonic() - started))
            return results
        self._failure = gave_up(attempt, cause, last)
        raise self._failure

    def submit(self, advances: Optional[Mapping[int, AdvanceArg]] = None, *,
               open: Optional[Mapping[int, Union[Open, GrammarRef]]] = None,
               close: Iterable[int] = ()) -> "concurrent.futures.Future[Dict[int, StepResult]]":
        """Sends one step now; the future resolves to step()'s result."""
        if self._ended:
            raise MaskdError(grpc.StatusCode.FAILED_PRECONDITION, "the session has ended")
        request = self._builder.build(advances, open, close)
        return self._worker.submit(self._round_trip, request)
    def step(self, advances: Optional[Mapping[int, AdvanceArg]] = None, *,
             open: Optional[Mapping[int, Union[Open, GrammarRef]]] = None,
             close: Iterable[int] = ()) -> Dict[int, StepResult]:
        """One batched step: opens, then {seq_id: tokens or Advance}, then closes."""
        return self.submit(advances, open=open, close=close).result()

    def open(self, seq_id: int, grammar: GrammarRef, **kwargs) -> StepResult:
        """Opens one sequence (kwargs as Open's) and returns its first mask."""
        return self.step(open={seq_id: Open(grammar, **kwargs)})[seq_id].raise_for_error()

    def advance(self, seq_id: int, tokens: Sequence[int] = (), **kwargs) -> StepResult:
        """Advances one sequence (kwargs as Advance's)."""
        return self.step({seq_id: Advance(tokens, **kwargs)})[seq_id].raise_for_error()

    def rollback(self, seq_id: int, n: int, tokens: Sequence[int] = ()) -> StepResult:
        """Undoes the last n tokens, then accepts `tokens`."""
        return self.advance(seq_id, tokens, rollback=n)

    def close(self, *seq_ids: int) -> None:
        """Closes sequences; raises the first sequence's error (e.g. NOT_FOUND)."""
        for result in self.step(close=seq_ids).values():
            result.raise_for_error()

    def end(self) -> None:
        """Half-closes the stream (the server closes what is still open) and waits for it."""
        if self._ended:
            return
        self._ended = True
        self._worker.shutdown(wait=True)
        self._requests.put(_END)
        try:
            for _ in self._responses:
                pass
        except grpc.RpcError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()
