"""Exceptions carrying a gRPC status code, a message and, where known, the place in the spec."""
from dataclasses import dataclass
from typing import Optional

import grpc

_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_code(number: int) -> grpc.StatusCode:
    """The grpc.StatusCode for a google.rpc.Code number (UNKNOWN for numbers gRPC lacks)."""
    return _CODES.get(number, grpc.StatusCode.UNKNOWN)


@dataclass(frozen=True)
class SourceLocation:
    """A place in a spec: a JSON pointer (schemas) or a 1-based line:column (text specs)."""
    json_pointer: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    byte_offset: Optional[int] = None

    def __str__(self):
        if self.json_pointer is not None:
            return self.json_pointer or "/"  # "" is the whole document
        return f"{self.line}:{self.column}"


class MaskdError(Exception):
    """A failed call or item: `code` (grpc.StatusCode), `message`, optional `location`."""

    def __init__(self, code: grpc.StatusCode, message: str,
                 location: Optional[SourceLocation] = None):
        where = f" (at {location})" if location is not None else ""
        super().__init__(f"{code.name}: {message}{where}")
        self.code = code
        self.message = message
        self.location = location


class CompileError(MaskdError):
    """The server refused a spec (malformed, unsupported, too costly); the RPC itself worked."""


class SequenceError(MaskdError):
    """One sequence's op failed; the stream and the other sequences are unaffected."""

    def __init__(self, seq_id: int, code: grpc.StatusCode, message: str,
                 location: Optional[SourceLocation] = None):
        super().__init__(code, f"sequence {seq_id}: {message}", location)
        self.seq_id = seq_id


class ProtocolError(MaskdError):
    """The server's answer breaks the maskd.v1 contract (a client or server bug)."""

    def __init__(self, message: str):
        super().__init__(grpc.StatusCode.INTERNAL, message)


def location_from_proto(location) -> Optional[SourceLocation]:
    which = location.WhichOneof("where")
    if which == "json_pointer":
        return SourceLocation(json_pointer=location.json_pointer)
    if which == "text":
        return SourceLocation(line=location.text.line, column=location.text.column,
                              byte_offset=location.text.byte_offset)
    return None


def from_rpc_error(error: grpc.RpcError) -> MaskdError:
    """Wraps a failed RPC (grpc.RpcError or grpc.aio.AioRpcError)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return MaskdError(code or grpc.StatusCode.UNKNOWN, details or "")
