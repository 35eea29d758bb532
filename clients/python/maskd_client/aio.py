"""The asyncio flavour (grpc.aio): AsyncMaskClient and AsyncSession, same API as the sync ones."""
import asyncio
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Union

import grpc
import grpc.aio

from ._proto import maskd_pb2_grpc, tokenizer_pb2
from .client import (DEFAULT_MAX_MESSAGE_BYTES, channel_options, compiled_or_raise,
                     read_tokenizer_dir, register_request)
from .errors import MaskdError, ProtocolError, from_rpc_error
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
    """

    def __init__(self, stub, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                 timeout: Optional[float] = None, metadata=None,
                 mask_dictionary_slots: int = DEFAULT_MASK_DICTIONARY_SLOTS):
        self._builder = RequestBuilder(tokenizer_id, mask_encoding)
        self._dictionary = DictionaryState(mask_dictionary_slots)
        self._call = stub.Session(timeout=timeout, metadata=metadata)
        self._lock = asyncio.Lock()
        self._failure: Optional[MaskdError] = None
        self._ended = False

    def new_seq_id(self) -> int:
        return self._builder.new_seq_id()

    @property
    def mask_dictionary_slots(self) -> int:
        """Slots the server granted (0 before the first step, or when off)."""
        d = self._dictionary.dictionary
        return len(d) if d is not None else 0

    async def _round_trip(self, request) -> Dict[int, StepResult]:
        async with self._lock:
            if self._failure is not None:
                raise self._failure
            first = self._dictionary.prepare(request)
            try:
                await self._call.write(request)
                response = await self._call.read()
            except grpc.RpcError as e:
                self._failure = from_rpc_error(e)
                raise self._failure from None
            if response is grpc.aio.EOF:
                self._failure = MaskdError(grpc.StatusCode.UNAVAILABLE, "the Session stream ended")
                raise self._failure
            try:
                if first:
                    self._dictionary.granted(response)
                return parse_response(request, response, self._dictionary.dictionary)
            except ProtocolError as e:
                self._failure = e
                raise

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
            except grpc.RpcError:
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
                 tls_server_name: Optional[str] = None, token: Optional[str] = None):
        """The TLS and token arguments are MaskClient's."""
        credentials, security_options = channel_security(credentials, tls_ca, tls_cert, tls_key,
                                                         tls_server_name)
        options = channel_options(max_message_bytes) + security_options
        self._auth = token_metadata(token)
        self._channel = (grpc.aio.secure_channel(target, credentials, options)
                         if credentials else grpc.aio.insecure_channel(target, options))
        self._stub = maskd_pb2_grpc.MaskdStub(self._channel)
        self._timeout = timeout

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
        return compiled_or_raise(await self._call(self._stub.Compile, request, timeout))

    def session(self, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                timeout: Optional[float] = None, metadata=None,
                mask_dictionary_slots: int = DEFAULT_MASK_DICTIONARY_SLOTS) -> AsyncSession:
        return AsyncSession(self._stub, tokenizer_id=tokenizer_id, mask_encoding=mask_encoding,
                            timeout=timeout, metadata=with_metadata(self._auth, metadata),
                            mask_dictionary_slots=mask_dictionary_slots)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
