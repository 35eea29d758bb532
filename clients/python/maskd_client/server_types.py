"""Plain Python views of the server's answers about tokenizers and compiled grammars."""
from dataclasses import dataclass
from typing import Tuple

from ._proto import compile_pb2, tokenizer_pb2

_KINDS = {
    tokenizer_pb2.TOKENIZER_KIND_BYTE_LEVEL_BPE: "byte_level_bpe",
    tokenizer_pb2.TOKENIZER_KIND_SENTENCEPIECE_BPE: "sentencepiece_bpe",
}


@dataclass(frozen=True)
class TokenizerInfo:
    tokenizer_id: str
    name: str
    kind: str  # "byte_level_bpe", "sentencepiece_bpe" or "unspecified"
    vocab_size: int
    eos_token_ids: Tuple[int, ...]
    special_token_count: int
    preloaded: bool
    already_registered: bool = False  # RegisterTokenizer only: nothing new was loaded

    @classmethod
    def from_proto(cls, info: tokenizer_pb2.TokenizerInfo, already_registered: bool = False):
        return cls(tokenizer_id=info.tokenizer_id, name=info.name,
                   kind=_KINDS.get(info.kind, "unspecified"), vocab_size=info.vocab_size,
                   eos_token_ids=tuple(info.eos_token_ids),
                   special_token_count=info.special_token_count, preloaded=info.preloaded,
                   already_registered=already_registered)


@dataclass(frozen=True)
class CompileStats:
    compile_time_s: float
    cache_hit: bool
    lexer_states: int
    grammar_rules: int
    size_bytes: int
    ignored_keywords: Tuple[str, ...]
    # Grammars: accepted but flagged, e.g. a rule the start rule cannot reach.
    warnings: Tuple[str, ...] = ()

    @classmethod
    def from_proto(cls, stats: compile_pb2.CompileStats):
        return cls(compile_time_s=stats.compile_time.ToNanoseconds() / 1e9,
                   cache_hit=stats.cache_hit, lexer_states=stats.lexer_states,
                   grammar_rules=stats.grammar_rules, size_bytes=stats.size_bytes,
                   ignored_keywords=tuple(stats.ignored_keywords),
                   warnings=tuple(stats.warnings))


@dataclass(frozen=True)
class CompiledGrammar:
    """A compiled spec: pass it (or its handle) to Session.open on any replica."""
    handle: str
    tokenizer_id: str
    stats: CompileStats

    @classmethod
    def from_proto(cls, grammar: compile_pb2.CompiledGrammar):
        return cls(handle=grammar.handle, tokenizer_id=grammar.tokenizer_id,
                   stats=CompileStats.from_proto(grammar.stats))
