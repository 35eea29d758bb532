"""What to compile (one class per spec kind) and how (CompileOptions), as maskd.v1 messages."""
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

from ._proto import compile_pb2


@dataclass(frozen=True)
class JsonSchema:
    """A JSON Schema, as a dict (serialized with json.dumps) or as JSON text."""
    schema: Union[str, dict, bool]

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        text = self.schema if isinstance(self.schema, str) else json.dumps(self.schema)
        return compile_pb2.ConstraintSpec(json_schema=text)


@dataclass(frozen=True)
class Regex:
    """An ECMA-262 pattern the whole output must match."""
    pattern: str

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        return compile_pb2.ConstraintSpec(regex=self.pattern)


_DIALECTS = {
    "gbnf": compile_pb2.GRAMMAR_DIALECT_GBNF,
    "lark": compile_pb2.GRAMMAR_DIALECT_LARK,
    "ebnf": compile_pb2.GRAMMAR_DIALECT_EBNF,
}


@dataclass(frozen=True)
class Grammar:
    """A context-free grammar: dialect "gbnf" (llama.cpp), "lark" or "ebnf" (W3C)."""
    text: str
    dialect: str = "gbnf"
    start_rule: str = ""

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        if self.dialect not in _DIALECTS:
            raise ValueError(f"Grammar.dialect {self.dialect!r}: expected one of "
                             f"{', '.join(sorted(_DIALECTS))}")
        return compile_pb2.ConstraintSpec(grammar=compile_pb2.GrammarSpec(
            dialect=_DIALECTS[self.dialect], text=self.text, start_rule=self.start_rule))


@dataclass(frozen=True)
class Choices:
    """The output is exactly one of these strings."""
    choices: Sequence[str]

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        if isinstance(self.choices, str):
            raise TypeError("Choices.choices must be a sequence of strings, not one string")
        return compile_pb2.ConstraintSpec(choices=compile_pb2.ChoicesSpec(
            choices=list(self.choices)))


@dataclass(frozen=True)
class BuiltinJson:
    """Any JSON value."""

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        return compile_pb2.ConstraintSpec(builtin_json=compile_pb2.BuiltinJsonSpec())


@dataclass(frozen=True)
class StructuralTag:
    """An XGrammar structural tag, as a dict (serialized with json.dumps) or JSON text.

    Either ``{"format": {...}}`` (const_string, json_schema, regex, sequence, or, tag,
    triggered_tags, tags_with_separator, any_text) or the legacy
    ``{"structures": [{"begin", "schema", "end"}], "triggers": [...]}``.
    """
    tag: Union[str, dict]

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        text = self.tag if isinstance(self.tag, str) else json.dumps(self.tag)
        return compile_pb2.ConstraintSpec(structural_tag=text)


_TOOL_FORMATS = {
    "llama3_json": compile_pb2.TOOL_CALL_FORMAT_LLAMA3_JSON,
    "qwen3": compile_pb2.TOOL_CALL_FORMAT_QWEN3,
    "harmony": compile_pb2.TOOL_CALL_FORMAT_HARMONY,
    "llama3_python_tag": compile_pb2.TOOL_CALL_FORMAT_LLAMA3_PYTHON_TAG,
}


@dataclass(frozen=True)
class ToolCalls:
    """Tool calls in a model family's syntax; maskd builds the structural tag.

    ``tools`` holds dicts ``{"name", "parameters"}`` (a JSON Schema dict or text) or
    OpenAI-style ``{"type": "function", "function": {...}}``. ``format`` is
    "llama3_json", "llama3_python_tag", "qwen3" or "harmony" (gpt-oss: its
    special tokens are grammar terminals; the tokenizer must have them).
    """
    tools: Sequence[dict]
    format: str = "qwen3"
    require_call: bool = False
    single_call: bool = False

    def to_proto(self) -> compile_pb2.ConstraintSpec:
        if self.format not in _TOOL_FORMATS:
            raise ValueError(f"ToolCalls.format {self.format!r}: expected one of "
                             f"{', '.join(sorted(_TOOL_FORMATS))}")
        tools = []
        for i, tool in enumerate(self.tools):
            tool = tool.get("function", tool)
            if not isinstance(tool.get("name"), str):
                raise ValueError(f"ToolCalls.tools[{i}] has no string 'name'")
            params = tool.get("parameters", "")
            if not isinstance(params, str):
                params = json.dumps(params)
            tools.append(compile_pb2.Tool(name=tool["name"], parameters_json_schema=params))
        return compile_pb2.ConstraintSpec(tool_calls=compile_pb2.ToolCallsSpec(
            format=_TOOL_FORMATS[self.format], tools=tools, require_call=self.require_call,
            single_call=self.single_call))


Spec = Union[JsonSchema, Regex, Grammar, Choices, BuiltinJson, StructuralTag, ToolCalls]

_WHITESPACE = {
    "compact": compile_pb2.WHITESPACE_MODE_COMPACT,
    "flexible": compile_pb2.WHITESPACE_MODE_FLEXIBLE,
    "bounded": compile_pb2.WHITESPACE_MODE_BOUNDED,
}
_UNKNOWN_FORMATS = {
    "refuse": compile_pb2.UNKNOWN_FORMAT_POLICY_REFUSE,
    "ignore": compile_pb2.UNKNOWN_FORMAT_POLICY_IGNORE,
}
_PROPERTY_ORDER = {
    "schema": compile_pb2.PROPERTY_ORDER_SCHEMA_ORDER,
    "any": compile_pb2.PROPERTY_ORDER_ANY_ORDER,
}


@dataclass(frozen=True)
class CompileOptions:
    """How to read a spec. None / 0 leaves the server's default.

    whitespace: "compact", "flexible" or "bounded" (runs of at most
    max_whitespace_run bytes); strict: unknown JSON Schema keywords are errors
    (False: ignored and listed in CompileStats.ignored_keywords); property_order:
    "schema" or "any"; unknown_formats: "refuse" (formats without an exact
    language are errors) or "ignore" (plain strings, listed in
    CompileStats.ignored_keywords); time_limit_s: give up compiling after this long;
    reasoning_end_marker: reasoning first, the output is free until the first occurrence
    of this marker (e.g. "</think>" for Qwen3), then follows the spec;
    default_dialect: the `$schema` URI a JSON Schema without one is read as;
    schema_resources: {uri: document} that the schema's `$ref`s may name
    (each document JSON text or a JSON-serializable value; nothing is fetched,
    the draft metaschemas are built into the server).
    """
    whitespace: Optional[str] = None
    max_whitespace_run: int = 0
    strict: Optional[bool] = None
    property_order: Optional[str] = None
    max_recursion_depth: int = 0
    unknown_formats: Optional[str] = None
    time_limit_s: Optional[float] = None
    reasoning_end_marker: str = ""
    default_dialect: str = ""
    schema_resources: Optional[Mapping[str, Any]] = None

    def to_proto(self) -> compile_pb2.CompileOptions:
        out = compile_pb2.CompileOptions(max_whitespace_run=self.max_whitespace_run,
                                         max_recursion_depth=self.max_recursion_depth,
                                         reasoning_end_marker=self.reasoning_end_marker,
                                         default_dialect=self.default_dialect)
        for uri, document in (self.schema_resources or {}).items():
            if not uri:
                raise ValueError("CompileOptions.schema_resources: a resource has an empty uri")
            out.schema_resources.add(
                uri=uri, json=document if isinstance(document, str) else json.dumps(document))
        if self.whitespace is not None:
            if self.whitespace not in _WHITESPACE:
                raise ValueError(f"CompileOptions.whitespace {self.whitespace!r}: expected one of "
                                 f"{', '.join(sorted(_WHITESPACE))}")
            out.whitespace = _WHITESPACE[self.whitespace]
        if self.strict is not None:
            out.unknown_keywords = (compile_pb2.UNKNOWN_KEYWORD_POLICY_STRICT if self.strict else
                                    compile_pb2.UNKNOWN_KEYWORD_POLICY_PERMISSIVE)
        if self.property_order is not None:
            if self.property_order not in _PROPERTY_ORDER:
                raise ValueError(f"CompileOptions.property_order {self.property_order!r}: "
                                 f"expected one of {', '.join(sorted(_PROPERTY_ORDER))}")
            out.property_order = _PROPERTY_ORDER[self.property_order]
        if self.unknown_formats is not None:
            if self.unknown_formats not in _UNKNOWN_FORMATS:
                raise ValueError(f"CompileOptions.unknown_formats {self.unknown_formats!r}: "
                                 f"expected one of {', '.join(sorted(_UNKNOWN_FORMATS))}")
            out.unknown_formats = _UNKNOWN_FORMATS[self.unknown_formats]
        if self.time_limit_s is not None:
            if self.time_limit_s <= 0:
                raise ValueError(f"CompileOptions.time_limit_s must be > 0, got {self.time_limit_s}")
            out.compile_time_limit.FromNanoseconds(int(self.time_limit_s * 1e9))
        return out


def compile_request(tokenizer_id: str, spec: Spec,
                    options: Optional[CompileOptions] = None) -> compile_pb2.CompileRequest:
    if not hasattr(spec, "to_proto"):
        raise TypeError(f"spec must be JsonSchema, Regex, Grammar, Choices or BuiltinJson, "
                        f"not {type(spec).__name__}")
    if not tokenizer_id:
        raise ValueError("tokenizer_id is empty (use register_tokenizer or list_tokenizers)")
    request = compile_pb2.CompileRequest(tokenizer_id=tokenizer_id, spec=spec.to_proto())
    if options is not None:
        request.options.CopyFrom(options.to_proto())
    return request
