"""MaskClient: the synchronous client (tokenizers, Compile, Session streams)."""
import os
from typing import List, Optional, Sequence, Tuple

import grpc

from ._proto import maskd_pb2_grpc, tokenizer_pb2
from .errors import (CompileError, ProtocolError, from_rpc_error, location_from_proto,
                     status_code)
from .security import channel_security, token_metadata, with_metadata
from .server_types import CompiledGrammar, TokenizerInfo
from .failover import FailoverOptions
from .session import DEFAULT_MASK_DICTIONARY_SLOTS, Session
from .specs import CompileOptions, Spec, compile_request

# Tokenizer uploads are ~10 MiB; the server's default limit is 64 MiB.
DEFAULT_MAX_MESSAGE_BYTES = 64 << 20


def channel_options(max_message_bytes: int) -> List[Tuple[str, int]]:
    return [("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes)]


def register_request(preloaded_name, tokenizer_json, tokenizer_config_json, name, eos_token_ids):
    if (preloaded_name is None) == (tokenizer_json is None):
        raise ValueError("give exactly one of preloaded_name and tokenizer_json")
    request = tokenizer_pb2.RegisterTokenizerRequest(name=name, eos_token_ids=list(eos_token_ids))
    if preloaded_name is not None:
        request.preloaded_name = preloaded_name
    else:
        request.files.tokenizer_json = tokenizer_json
        if tokenizer_config_json is not None:
            request.files.tokenizer_config_json = tokenizer_config_json
    return request


def read_tokenizer_dir(directory: str) -> Tuple[bytes, Optional[bytes]]:
    """tokenizer.json (required) and tokenizer_config.json (optional) of a HuggingFace folder."""
    with open(os.path.join(directory, "tokenizer.json"), "rb") as f:
        tokenizer_json = f.read()
    config_path = os.path.join(directory, "tokenizer_config.json")
    config = None
    if os.path.exists(config_path):
        with open(config_path, "rb") as f:
            config = f.read()
    return tokenizer_json, config


def compiled_or_raise(response) -> CompiledGrammar:
    which = response.WhichOneof("result")
    if which == "grammar":
        return CompiledGrammar.from_proto(response.grammar)
    if which == "error":
        raise CompileError(status_code(response.error.code), response.error.message,
                           location_from_proto(response.error.location))
    raise ProtocolError("CompileResponse has neither grammar nor error")


class MaskClient:
    """A connection to one maskd address (or a load-balanced name).

    Every call raises MaskdError (code, message) when the RPC fails, and
    compile() raises CompileError when the server refuses the spec.
    """

    def __init__(self, target: str, *, credentials: Optional[grpc.ChannelCredentials] = None,
                 timeout: Optional[float] = 30.0, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 channel: Optional[grpc.Channel] = None, tls_ca: Optional[str] = None,
                 tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None, token: Optional[str] = None,
                 load_balancing_policy: Optional[str] = None):
        """timeout: default deadline in seconds of the unary calls (None: none).

        tls_ca: PEM file of the CA that signed the server's certificate (TLS); with
        tls_cert and tls_key, this client's certificate (mutual TLS). tls_server_name:
        the name to check the certificate against (default: the target's host).
        token: bearer token sent with every call (servers with --auth_token_file).
        load_balancing_policy: e.g. "round_robin" to spread streams over every
        address of an `ipv4:a,b,c` list or a headless DNS name (and go on with
        the others when one dies); None: gRPC's default (pick_first).
        """
        if channel is None:
            credentials, security_options = channel_security(credentials, tls_ca, tls_cert,
                                                             tls_key, tls_server_name)
            options = channel_options(max_message_bytes) + security_options
            if load_balancing_policy:
                options.append(("grpc.lb_policy_name", load_balancing_policy))
            channel = (grpc.secure_channel(target, credentials, options) if credentials else
                       grpc.insecure_channel(target, options))
        self._auth = token_metadata(token)
        self._channel = channel
        self._stub = maskd_pb2_grpc.MaskdStub(channel)
        self._timeout = timeout
        # {handle: CompileRequest} of what compile() returned, so a session can
        # reopen a sequence opened by handle on a replica that lacks the grammar.
        self._spec_book = {}

    def _call(self, method, request, timeout):
        try:
            return method(request, timeout=self._timeout if timeout is None else timeout,
                          metadata=with_metadata(self._auth, None))
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def register_tokenizer(self, *, preloaded_name: Optional[str] = None,
                           tokenizer_json: Optional[bytes] = None,
                           tokenizer_config_json: Optional[bytes] = None, name: str = "",
                           eos_token_ids: Sequence[int] = (),
                           timeout: Optional[float] = None) -> TokenizerInfo:
        """Looks up a preloaded tokenizer by name, or uploads tokenizer.json bytes."""
        request = register_request(preloaded_name, tokenizer_json, tokenizer_config_json, name,
                                   eos_token_ids)
        response = self._call(self._stub.RegisterTokenizer, request, timeout)
        return TokenizerInfo.from_proto(response.tokenizer, response.already_registered)

    def unregister_tokenizer(self, tokenizer_id: str, *,
                             timeout: Optional[float] = None) -> bool:
        """Drops this caller's (tenant's) registration of a tokenizer and the names it
        gave it; True when the tokenizer left the server (no tenant holds it any more)."""
        response = self._call(self._stub.UnregisterTokenizer,
                                tokenizer_pb2.UnregisterTokenizerRequest(tokenizer_id=tokenizer_id),
                                timeout)
        return response.removed

    def register_tokenizer_dir(self, directory: str, *, name: str = "",
                               eos_token_ids: Sequence[int] = (),
                               timeout: Optional[float] = None) -> TokenizerInfo:
        """Uploads a HuggingFace tokenizer folder (tokenizer.json [+ tokenizer_config.json])."""
        tokenizer_json, config = read_tokenizer_dir(directory)
        return self.register_tokenizer(tokenizer_json=tokenizer_json, tokenizer_config_json=config,
                                       name=name, eos_token_ids=eos_token_ids, timeout=timeout)

    def list_tokenizers(self, timeout: Optional[float] = None) -> List[TokenizerInfo]:
        response = self._call(self._stub.ListTokenizers, tokenizer_pb2.ListTokenizersRequest(),
                              timeout)
        return [TokenizerInfo.from_proto(t) for t in response.tokenizers]

    def compile(self, tokenizer_id: str, spec: Spec, options: Optional[CompileOptions] = None, *,
                timeout: Optional[float] = None) -> CompiledGrammar:
        """Compiles (or finds cached) a spec; raises CompileError if the server refuses it."""
        request = compile_request(tokenizer_id, spec, options)
        compiled = compiled_or_raise(self._call(self._stub.Compile, request, timeout))
        self._spec_book.setdefault(compiled.handle, request)
        return compiled

    def session(self, *, tokenizer_id: Optional[str] = None, mask_encoding: str = "auto",
                timeout: Optional[float] = None, metadata=None,
                mask_dictionary_slots: int = DEFAULT_MASK_DICTIONARY_SLOTS,
                failover: Optional[FailoverOptions] = None) -> Session:
        """Opens a Session stream. tokenizer_id: default for inline-compiled opens.

        mask_dictionary_slots: masks the client keeps so repeats come as a few bytes
        (session.proto, SessionOptions); 0 turns the dictionary off.
        failover: None is FailoverOptions() (on); FailoverOptions(enabled=False) turns
        it off. Sequences opened inline, or by a handle this client compiled, survive it.
        """
        try:
            return Session(self._stub, tokenizer_id=tokenizer_id, mask_encoding=mask_encoding,
                           timeout=timeout, metadata=with_metadata(self._auth, metadata),
                           mask_dictionary_slots=mask_dictionary_slots, failover=failover,
                           spec_book=self._spec_book)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

