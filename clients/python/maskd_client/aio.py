"""The asyncio flavour (grpc.aio): AsyncMaskClient and AsyncSession, same API as the sync ones."""
import asyncio
import time
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Union

import grpc
import grpc.aio

from ._proto import maskd_pb2_grpc, tokenizer_pb2
from .client import (DEFAULT_MAX_MESSAGE_BYTES, channel_options, compiled_or_raise,
                     read_tokenizer_dir, register_request)
from .errors import MaskdError, ProtocolError, from_rpc_error
from .failover import (WENT_AWAY, FailoverEvent, FailoverOptions, SequenceLedger, close_request,
                       gave_up, merge_resent, note_restore_results, resend_request)
from .results import StepResult
from .security import channel_security, token_metadata, with_metadata
from .server_types import CompiledGrammar, TokenizerInfo
from .session import (DEFAULT_MASK_DICTIONARY_SLOTS, Advance, AdvanceArg, DictionaryState,
                      GrammarRef, Open, RequestBuilder, parse_response)
from .specs import CompileOptions, Spec, compile_request


class AsyncSession:
    """One Session stream on an asyncio loop; see session.Session for the semantics.

    Steps are serialized by a lock (one request in flight at a time), so
    several tasks may share a session; `submit` returns a Task so the round trip
    overlaps the caller's own work.

    Failover works as the sync Session's (failover.py, on unless
    FailoverOptions(enabled=False)): when the stream ends with UNAVAILABLE (or a
    draining replica's CANCELLED), a new stream on the same channel rebuilds
    every open sequence and the step is resent; `failovers` counts them. The
    backoff between new streams is an asyncio sleep: other tasks go on.
    """

    def __init__(self, stub, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                 timeout: Optional[float] = None, metadata=None,
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
        self._lock = asyncio.Lock()
        self._failure: Optional[MaskdError] = None
        self._ended = False
        self._start_stream()

    def _start_stream(self) -> None:
        timeout = None if self._deadline is None else max(self._deadline - time.monotonic(), 0)
        self._dictionary = DictionaryState(self._slots)
        self._call = self._stub.Session(timeout=timeout, metadata=self._metadata)

    def new_seq_id(self) -> int:
        return self._builder.new_seq_id()

    @property
    def mask_dictionary_slots(self) -> int:
        """Slots the server granted (0 before the first step, or when off)."""
        d = self._dictionary.dictionary
        return len(d) if d is not None else 0

    async def _exchange(self, request, record: bool = True) -> Dict[int, StepResult]:
        """One round trip on the current stream; MaskdError when the stream fails.

        record: keep the ledger up to date (not for the restore requests).
        """
        first = self._dictionary.prepare(request)
        try:
            await self._call.write(request)
            response = await self._call.read()
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        except asyncio.InvalidStateError:
            # The call had already ended when the request was written.
            code = await self._call.code()
            if code == grpc.StatusCode.OK:
                code = grpc.StatusCode.UNAVAILABLE
            raise MaskdError(code, await self._call.details() or "the Session stream ended") \
                from None
        if response is grpc.aio.EOF:
            raise MaskdError(grpc.StatusCode.UNAVAILABLE, "the Session stream ended")
        if first:
            self._dictionary.granted(response)
        results = parse_response(request, response, self._dictionary.dictionary)
        if record and self._ledger is not None:
            self._ledger.apply(request, response)
        return results

    async def _round_trip(self, request) -> Dict[int, StepResult]:
        async with self._lock:
            if self._failure is not None:
                raise self._failure
            try:
                return await self._exchange(request)
            except ProtocolError as e:
                self._failure = e
                raise
            except MaskdError as e:
                if self._ledger is None or e.code not in WENT_AWAY:
                    self._failure = e
                    raise
                return await self._fail_over(request, e)

    async def _restore(self) -> Dict[int, MaskdError]:
        """A new stream with every sequence of the ledger rebuilt; returns those that cannot be."""
        self._call.cancel()
        self._start_stream()
        requests, lost = self._ledger.restore_requests(self._failover.max_ops_per_request,
                                                       self._failover.max_tokens_per_op)
        opened_then_lost: List[int] = []
        for request in requests:
            request.request_id = self._builder.next_request_id()
            note_restore_results(request, await self._exchange(request, record=False), lost,
                                 opened_then_lost)
        if opened_then_lost:  # open on the new replica: close so the caller may reuse the id
            closing = close_request(opened_then_lost)
            closing.request_id = self._builder.next_request_id()
            await self._exchange(closing, record=False)
        return lost

    async def _fail_over(self, request, cause: MaskdError) -> Dict[int, StepResult]:
        options = self._failover
        started = time.monotonic()
        last = cause
        attempt = 0
        for attempt in range(1, options.max_attempts + 1):
            await asyncio.sleep(options.backoff_s(attempt))
            sequences = len(self._ledger.entries)
            try:
                lost = await self._restore()
                results = merge_resent(
                    request, await self._exchange(resend_request(request, lost)), lost)
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

    async def step(self, advances: Optional[Mapping[int, AdvanceArg]] = None, *,
                   open: Optional[Mapping[int, Union[Open, GrammarRef]]] = None,
                   close: Iterable[int] = ()) -> Dict[int, StepResult]:
        if self._ended:
            raise MaskdError(grpc.StatusCode.FAILED_PRECONDITION, "the session has ended")
        return await self._round_trip(self._builder.build(advances, open, close))

    def submit(self, advances: Optional[Mapping[int, AdvanceArg]] = None, *,
               open: Optional[Mapping[int, Union[Open, GrammarRef]]] = None,
               close: Iterable[int] = ()) -> "asyncio.Task[Dict[int, StepResult]]":
        """Builds the request now (argument errors raise here) and sends it in a Task."""
        if self._ended:
            raise MaskdError(grpc.StatusCode.FAILED_PRECONDITION, "the session has ended")
        request = self._builder.build(advances, open, close)
        return asyncio.ensure_future(self._round_trip(request))

    async def open(self, seq_id: int, grammar: GrammarRef, **kwargs) -> StepResult:
        return (await self.step(open={seq_id: Open(grammar, **kwargs)}))[seq_id].raise_for_error()

    async def advance(self, seq_id: int, tokens: Sequence[int] = (), **kwargs) -> StepResult:
        return (await self.step({seq_id: Advance(tokens, **kwargs)}))[seq_id].raise_for_error()

    async def rollback(self, seq_id: int, n: int, tokens: Sequence[int] = ()) -> StepResult:
        return await self.advance(seq_id, tokens, rollback=n)

    async def close(self, *seq_ids: int) -> None:
        for result in (await self.step(close=seq_ids)).values():
            result.raise_for_error()

    async def end(self) -> None:
        if self._ended:
            return
        self._ended = True
        async with self._lock:
            try:
                await self._call.done_writing()
                while await self._call.read() is not grpc.aio.EOF:
                    pass
            except (grpc.RpcError, asyncio.InvalidStateError):
                pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.end()


class AsyncMaskClient:
    """MaskClient for asyncio code; create and use it inside the running loop."""

    def __init__(self, target: str, *, credentials: Optional[grpc.ChannelCredentials] = None,
                 timeout: Optional[float] = 30.0,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, tls_ca: Optional[str] = None,
                 tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None, token: Optional[str] = None,
                 load_balancing_policy: Optional[str] = None):
        """The TLS, token and load_balancing_policy arguments are MaskClient's."""
        credentials, security_options = channel_security(credentials, tls_ca, tls_cert, tls_key,
                                                         tls_server_name)
        options = channel_options(max_message_bytes) + security_options
        if load_balancing_policy:
            options.append(("grpc.lb_policy_name", load_balancing_policy))
        self._auth = token_metadata(token)
        self._channel = (grpc.aio.secure_channel(target, credentials, options)
                         if credentials else grpc.aio.insecure_channel(target, options))
        self._stub = maskd_pb2_grpc.MaskdStub(self._channel)
        self._timeout = timeout
        # {handle: CompileRequest} of what compile() returned (see MaskClient).
        self._spec_book = {}

    async def _call(self, method, request, timeout):
        try:
            return await method(request, timeout=self._timeout if timeout is None else timeout,
                                metadata=with_metadata(self._auth, None))
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def register_tokenizer(self, *, preloaded_name: Optional[str] = None,
                                 tokenizer_json: Optional[bytes] = None,
                                 tokenizer_config_json: Optional[bytes] = None, name: str = "",
                                 eos_token_ids: Sequence[int] = (),
                                 timeout: Optional[float] = None) -> TokenizerInfo:
        request = register_request(preloaded_name, tokenizer_json, tokenizer_config_json, name,
                                   eos_token_ids)
        response = await self._call(self._stub.RegisterTokenizer, request, timeout)
        return TokenizerInfo.from_proto(response.tokenizer, response.already_registered)

    async def unregister_tokenizer(self, tokenizer_id: str, *,
                             timeout: Optional[float] = None) -> bool:
        """Drops this caller's (tenant's) registration of a tokenizer and the names it
        gave it; True when the tokenizer left the server (no tenant holds it any more)."""
        response = await self._call(self._stub.UnregisterTokenizer,
                                tokenizer_pb2.UnregisterTokenizerRequest(tokenizer_id=tokenizer_id),
                                timeout)
        return response.removed

    async def register_tokenizer_dir(self, directory: str, *, name: str = "",
                                     eos_token_ids: Sequence[int] = (),
                                     timeout: Optional[float] = None) -> TokenizerInfo:
        tokenizer_json, config = read_tokenizer_dir(directory)
        return await self.register_tokenizer(tokenizer_json=tokenizer_json,
                                             tokenizer_config_json=config, name=name,
                                             eos_token_ids=eos_token_ids, timeout=timeout)

    async def list_tokenizers(self, timeout: Optional[float] = None) -> List[TokenizerInfo]:
        response = await self._call(self._stub.ListTokenizers,
                                    tokenizer_pb2.ListTokenizersRequest(), timeout)
        return [TokenizerInfo.from_proto(t) for t in response.tokenizers]

    async def compile(self, tokenizer_id: str, spec: Spec,
                      options: Optional[CompileOptions] = None, *,
                      timeout: Optional[float] = None) -> CompiledGrammar:
        request = compile_request(tokenizer_id, spec, options)
        compiled = compiled_or_raise(await self._call(self._stub.Compile, request, timeout))
        self._spec_book.setdefault(compiled.handle, request)
        return compiled

    def session(self, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                timeout: Optional[float] = None, metadata=None,
                mask_dictionary_slots: int = DEFAULT_MASK_DICTIONARY_SLOTS,
                failover: Optional[FailoverOptions] = None) -> AsyncSession:
        """MaskClient.session's arguments, failover included."""
        return AsyncSession(self._stub, tokenizer_id=tokenizer_id, mask_encoding=mask_encoding,
                            timeout=timeout, metadata=with_metadata(self._auth, metadata),
                            mask_dictionary_slots=mask_dictionary_slots, failover=failover,
                            spec_book=self._spec_book)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
