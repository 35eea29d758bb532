"""Python client for maskd, constrained decoding as a gRPC service.

    client = MaskClient("localhost:50051")
    tok = client.register_tokenizer(preloaded_name="llama3")
    grammar = client.compile(tok.tokenizer_id, JsonSchema({"type": "object"}))
    with client.session() as session:
        first = session.open(1, grammar)
        results = session.step({1: [first_token]})

Per-sequence errors: Session.step() never raises them; each StepResult carries
them in `error` (a SequenceError), and using the mask of a failed result raises
it. The one-sequence helpers (open, advance, rollback, close) raise it.
"""
import pkgutil

# The generated stubs (maskd_client/_proto) may live in another sys.path entry,
# e.g. a build tree when running from the source tree.
__path__ = pkgutil.extend_path(__path__, __name__)

from .aio import AsyncMaskClient, AsyncSession  # noqa: E402
from .client import MaskClient  # noqa: E402
from .failover import FailoverEvent, FailoverOptions  # noqa: E402
from .errors import CompileError, MaskdError, ProtocolError, SequenceError, SourceLocation  # noqa: E402
from .logits import apply_mask_numpy, apply_mask_torch, stack_masks  # noqa: E402
from .overlap import overlapped_step, overlapped_step_async  # noqa: E402
from .processors import MaskdLogitsProcessor, MaskdRequestLogitsProcessor  # noqa: E402
from .results import Mask, StepResult, StopStatus  # noqa: E402
from .session import Advance, Open, Session  # noqa: E402
from .specs import (BuiltinJson, Choices, CompileOptions, Grammar, JsonSchema,  # noqa: E402
                    Regex, StructuralTag, ToolCalls)
from .server_types import CompiledGrammar, CompileStats, TokenizerInfo  # noqa: E402

__all__ = [
    "AsyncMaskClient", "AsyncSession", "MaskClient", "Session", "FailoverEvent",
    "FailoverOptions", "Advance", "Open", "CompileError",
    "MaskdError", "ProtocolError", "SequenceError", "SourceLocation", "apply_mask_numpy",
    "apply_mask_torch", "stack_masks", "overlapped_step", "overlapped_step_async",
    "MaskdLogitsProcessor", "MaskdRequestLogitsProcessor", "Mask", "StepResult", "StopStatus",
    "BuiltinJson", "Choices", "CompileOptions", "Grammar", "JsonSchema", "Regex", "StructuralTag",
    "ToolCalls", "CompiledGrammar",
    "CompileStats", "TokenizerInfo"
]
