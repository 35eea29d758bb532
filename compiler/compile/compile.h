// The engine's entry point: what a client asks maskd to compile (the spec),
// how (the options), and CompileGrammar, which picks the front end for the
// spec and hands its grammar IR to the automata stage. The spec and options
// mirror the Compile request of proto/maskd/v1 without depending on protobuf:
// the service translates one into the other.
#ifndef MASKD_COMPILER_COMPILE_COMPILE_H_
#define MASKD_COMPILER_COMPILE_COMPILE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/matcher/matcher.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

enum class SpecKind {
  kJsonSchema,     // `text` is a JSON Schema document
  kRegex,          // `text` is an ECMA-262 pattern, matched whole (anchored)
  kEbnf,           // `text` is a grammar in `dialect`
  kChoices,        // `choices` lists the allowed outputs literally
  kBuiltinJson,    // any JSON value
  kStructuralTag,  // `text` is an XGrammar structural tag (structural_tag/structural_tag.h)
};

// kW3cEbnf: the EBNF that XGrammar reads (GBNF notation; see
// compiler/grammar_text/gbnf_front_end.h).
enum class EbnfDialect { kGbnf, kLark, kW3cEbnf };

// Whitespace the JSON front ends allow between JSON tokens.
enum class WhitespaceMode {
  kCompact,   // none: `{"a":1,"b":[2,3]}`
  kFlexible,  // any JSON whitespace (space, \t, \n, \r), any amount
  kBounded,   // any JSON whitespace, runs of at most `max_whitespace_run` bytes
};

enum class PropertyOrder { kSchemaOrder, kAnyOrder };

// JSON Schema formats without an exact language in this engine.
enum class UnknownFormats {
  kRefuse,  // Unimplemented, naming the format and its pointer.
  kIgnore,  // Plain strings; listed in CompileStats::ignored_keywords.
};

// The most CompileOptions::max_recursion_depth may be: inputs this deep
// compile within an 8 MiB thread stack (tests/matcher/deep_and_flat_specs_test
// checks it, under ASan too).
inline constexpr uint32_t kMaxRecursionDepthLimit = 1000;

// A JSON Schema document that a schema's `$ref`s may name by `uri`
// (absolute; a fragment is ignored), as retrieving `uri` would give it.
struct SchemaResource {
  std::string uri;
  std::string text;
};

struct CompileOptions {
  // Bounded by default: as flexible as JSON allows, but a model cannot loop on
  // blanks forever.
  WhitespaceMode whitespace = WhitespaceMode::kBounded;
  // Longest run of consecutive whitespace bytes between two JSON tokens (kBounded).
  uint32_t max_whitespace_run = 32;
  // Strict: unknown JSON Schema keywords are errors. Permissive: ignored and
  // listed in CompileStats::ignored_keywords.
  bool strict = true;
  // JSON Schema's default lets unlisted properties through; this makes
  // `additionalProperties: false` the default instead.
  bool additional_properties_default_false = false;
  PropertyOrder property_order = PropertyOrder::kSchemaOrder;
  UnknownFormats unknown_formats = UnknownFormats::kRefuse;
  // JSON Schema: the `$schema` URI (e.g. "http://json-schema.org/draft-07/schema#")
  // a schema without its own `$schema` is read as, exactly as if it declared
  // it. Empty: 2020-12, keeping the older drafts' meanings that only narrow
  // the language (parse_schema.h).
  std::string default_dialect;
  // JSON Schema: documents besides the schema that its `$ref`s may name by
  // URI (nothing is fetched). The metaschemas of drafts 4, 6, 7, 2019-09 and
  // 2020-12 are built in; these come first. A `$ref` to any other document is
  // Unimplemented, naming it.
  std::vector<SchemaResource> schema_resources;
  // Deepest nesting a spec may have: JSON nesting of a schema document, group
  // nesting of a regex (a regex spec or a schema's patterns). A deeper spec is
  // InvalidArgument naming this limit and the byte or code point offset. The
  // front ends recurse once per level, so this is what keeps a spec from
  // overflowing a compile thread's stack: at most kMaxRecursionDepthLimit.
  uint32_t max_recursion_depth = 128;
  // Reasoning first: any bytes up to and including the first occurrence of
  // this marker, then the spec's language. Empty: none. A marker holding
  // special tokens (gpt-oss `<|channel|>final<|message|>`) is matched as those
  // tokens, and the reasoning may hold any special token but EOS
  // (token_reasoning.h).
  std::string reasoning_end_marker;
  // Token healing (token_healing.h): the output starts with these bytes (the
  // prompt tail the worker dropped), then follows the spec (after any
  // reasoning). Empty: none.
  std::string required_prefix;
  // Limits that turn a pathological spec into an error instead of a hang or an
  // unbounded allocation.
  uint64_t time_limit_ms = 10'000;
  uint64_t memory_limit_bytes = uint64_t{1} << 30;
  // Budget for precomputed per-lexer-state masks (see mask_cache.h); past it
  // masks are computed by walking the whole token trie (0: always).
  uint64_t mask_cache_bytes = uint64_t{64} << 20;
  // Masks are cached by parse state (state_mask_cache.h) at lexer positions
  // whose walks visited at least this many trie nodes (tuning; tests use 0:
  // every position). The cache has mask_cache_bytes' size too. 64: a JSON
  // Schema mask whose boundary walks visit that many nodes costs more than
  // naming its state and copying the mask (MaskBench TBM p50 5.9 -> 2.8 us
  // against 2048; lower thresholds pay for names that save little).
  uint64_t state_mask_hot_nodes = 64;
  // Character-level grammars (every lexeme one code point) precompute, per
  // grammar position, the tokens it decides alone (matcher/item_masks.h), so
  // a parse state met for the first time walks only the rest of the trie.
  // False: always the whole walk (tests compare the two).
  bool item_masks = true;
  // When set and true, Compile stops at its next deadline check with
  // Cancelled (the service raises it once no caller waits for the compile).
  // Not part of what is compiled: never hashed into a handle.
  const std::atomic<bool>* cancelled = nullptr;
};

struct GrammarSpec {
  SpecKind kind = SpecKind::kBuiltinJson;
  EbnfDialect dialect = EbnfDialect::kGbnf;
  std::string text;
  // kEbnf: the rule to start from; empty: the dialect's default ("root" for
  // GBNF and EBNF, "start" for Lark).
  std::string start_rule;
  std::vector<std::string> choices;
};

// Compiles `spec` for `tokenizer`. Errors, each naming the offending part (a
// JSON pointer into a schema, an offset into a regex, line:column into a
// grammar):
//   InvalidArgument     the spec is malformed (bad JSON, bad regex syntax, a
//                       keyword with a value of the wrong type);
//   Unimplemented       the spec is well formed but uses a feature the engine
//                       refuses rather than approximates (a JSON Schema keyword,
//                       a regex look-around, an EBNF dialect);
//   DeadlineExceeded    past CompileOptions::time_limit_ms;
//   ResourceExhausted   past CompileOptions::memory_limit_bytes or another size
//                       limit of the front ends.
absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileGrammar(
    const GrammarSpec& spec, const CompileOptions& options,
    std::shared_ptr<const Tokenizer> tokenizer);

}  // namespace maskd

#endif  // MASKD_COMPILER_COMPILE_COMPILE_H_
