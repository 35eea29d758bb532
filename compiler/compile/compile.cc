// CompileGrammar: the one place that knows every front end. It turns a spec
// into grammar IR with the right front end, then hands the IR to the automata
// stage (CompiledGrammarImpl::FromIr).
#include "compiler/compile/compile.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/compile/choices_grammar.h"
#include "compiler/compile/token_reasoning.h"
#include "compiler/grammar_text/grammar_text.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/structural_tag/structural_tag.h"

namespace maskd {
namespace {

using Clock = std::chrono::steady_clock;

// DeadlineExceeded once `deadline` has passed, naming the stage just done.
absl::Status CheckDeadline(Clock::time_point deadline, const CompileOptions& options,
                           std::string_view stage) {
  if (options.cancelled != nullptr && options.cancelled->load(std::memory_order_relaxed)) {
    return absl::CancelledError(absl::StrCat("compile cancelled during ", std::string(stage),
                                             ": no caller waits for it any more"));
  }
  if (Clock::now() < deadline) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat("compile exceeded its time limit of ",
                                                  options.time_limit_ms, " ms during ",
                                                  std::string(stage)));
}

json_schema::Whitespace JsonWhitespace(WhitespaceMode mode) {
  switch (mode) {
    case WhitespaceMode::kCompact:
      return json_schema::Whitespace::kCompact;
    case WhitespaceMode::kFlexible:
      return json_schema::Whitespace::kFlexible;
    case WhitespaceMode::kBounded:
      break;
  }
  return json_schema::Whitespace::kBounded;
}

json_schema::ParseOptions SchemaParseOptions(const CompileOptions& options) {
  json_schema::ParseOptions parse;
  parse.strict_keywords = options.strict;
  parse.closed_objects = options.additional_properties_default_false;
  parse.max_depth = static_cast<int>(options.max_recursion_depth);
  parse.default_dialect = options.default_dialect;
  for (const SchemaResource& r : options.schema_resources)
    parse.resources.push_back({r.uri, r.text});
  return parse;
}

json_schema::LowerOptions SchemaLowerOptions(const CompileOptions& options,
                                             Clock::time_point deadline) {
  json_schema::LowerOptions lower;
  lower.deadline = deadline;
  lower.cancelled = options.cancelled;
  lower.whitespace = JsonWhitespace(options.whitespace);
  lower.max_whitespace_run = options.max_whitespace_run;
  lower.any_order_properties = options.property_order == PropertyOrder::kAnyOrder;
  lower.ignore_unknown_formats = options.unknown_formats == UnknownFormats::kIgnore;
  lower.max_regex_nesting = static_cast<int>(options.max_recursion_depth);
  return lower;
}

absl::StatusOr<GrammarIr> JsonSchemaIr(std::string_view text, const CompileOptions& options,
                                       Clock::time_point deadline) {
  absl::StatusOr<json_schema::Schema> schema =
      json_schema::ParseSchema(text, SchemaParseOptions(options));
  if (!schema.ok()) return schema.status();
  if (absl::Status s = CheckDeadline(deadline, options, "JSON Schema parsing"); !s.ok()) return s;
  absl::StatusOr<GrammarIr> ir =
      json_schema::LowerSchema(*schema, SchemaLowerOptions(options, deadline));
  if (!ir.ok()) return ir.status();
  for (const json_schema::IgnoredKeyword& k : schema->ignored_keywords) {
    ir->ignored_keywords.push_back(k.keyword + " at " + (k.pointer.empty() ? "/" : k.pointer));
  }
  return ir;
}

absl::StatusOr<GrammarIr> BuildIr(const GrammarSpec& spec, const CompileOptions& options,
                                  Clock::time_point deadline, const Tokenizer& tokenizer) {
  switch (spec.kind) {
    case SpecKind::kChoices:
      return BuildChoicesGrammar(spec.choices);
    case SpecKind::kRegex: {
      // A regex spec constrains the whole output: anchored at both ends.
      GrammarIr ir;
      absl::StatusOr<regex::ExprId> re =
          regex::ParseEcmaRegex(spec.text, ir.pool.get(), regex::MatchMode::kFullMatch,
                                static_cast<int>(options.max_recursion_depth));
      if (!re.ok()) return re.status();
      if (absl::Status s = BuildSingleRegexGrammar(ir, *re, "regex"); !s.ok()) return s;
      return ir;
    }
    case SpecKind::kJsonSchema:
      return JsonSchemaIr(spec.text, options, deadline);
    case SpecKind::kBuiltinJson:
      return JsonSchemaIr("true", options, deadline);
    case SpecKind::kStructuralTag: {
      StructuralTagOptions tag_options;
      tag_options.parse = SchemaParseOptions(options);
      tag_options.lower = SchemaLowerOptions(options, deadline);
      tag_options.tokenizer = &tokenizer;
      return BuildStructuralTagGrammar(spec.text, tag_options);
    }
    case SpecKind::kEbnf: {
      grammar_text::GrammarTextOptions text_options;
      text_options.start_rule = spec.start_rule;
      text_options.tokenizer = &tokenizer;
      text_options.max_nesting = static_cast<int>(options.max_recursion_depth);
      text_options.json.parse = SchemaParseOptions(options);
      text_options.json.lower = SchemaLowerOptions(options, deadline);
      const grammar_text::Dialect dialect =
          spec.dialect == EbnfDialect::kGbnf   ? grammar_text::Dialect::kGbnf
          : spec.dialect == EbnfDialect::kLark ? grammar_text::Dialect::kLark
                                               : grammar_text::Dialect::kXGrammarEbnf;
      return grammar_text::BuildGrammarTextIr(spec.text, dialect, text_options);
    }
  }
  return absl::InvalidArgumentError("unknown spec kind");
}

// start' ::= (any bytes up to and including the first `marker`) start. The
// reasoning is one lexeme, so its masks are cached lexer-only masks.
void PrependReasoning(GrammarIr& ir, const std::string& marker) {
  regex::ExprSet& pool = *ir.pool;
  const regex::ExprId any = regex::ExprSet::kAnyByteString;
  const regex::ExprId end = pool.Literal(marker);
  const regex::ExprId first_marker = pool.And(
      pool.Concat(any, end),
      pool.Not(pool.Concat(std::vector<regex::ExprId>{any, end, regex::ExprSet::kAnyByte, any})));
  const NonterminalId start = ir.builder.FreshNonterminal("reasoning_then_start");
  ir.builder.AddRule(start, {Symbol::Lexeme(ir.builder.AddLexeme("reasoning", first_marker)),
                             Symbol::Nonterminal(ir.builder.start())});
  ir.builder.SetStart(start);
}

// start' ::= "prefix" start. A literal lexeme cannot go on past its last
// byte, so the lexer ends it exactly there: the language is prefix . L.
void PrependLiteral(GrammarIr& ir, const std::string& prefix) {
  LexemeFlags flags;
  flags.literal = true;
  const NonterminalId start = ir.builder.FreshNonterminal("healed_prefix_then_start");
  ir.builder.AddRule(
      start,
      {Symbol::Lexeme(ir.builder.AddLexeme("healed prefix", ir.pool->Literal(prefix), flags)),
       Symbol::Nonterminal(ir.builder.start())});
  ir.builder.SetStart(start);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileGrammar(
    const GrammarSpec& spec, const CompileOptions& options,
    std::shared_ptr<const Tokenizer> tokenizer) {
  const auto started = Clock::now();
  // Saturating: a huge time_limit_ms means no limit, not an overflow.
  const uint64_t max_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - started)
          .count();
  const Clock::time_point deadline =
      started + std::chrono::milliseconds(std::min(options.time_limit_ms, max_ms));
  if (options.max_recursion_depth == 0 || options.max_recursion_depth > kMaxRecursionDepthLimit) {
    return absl::InvalidArgumentError(absl::StrCat("max_recursion_depth must be 1 to ",
                                                   kMaxRecursionDepthLimit, ", got ",
                                                   options.max_recursion_depth));
  }
  absl::StatusOr<GrammarIr> ir = BuildIr(spec, options, deadline, *tokenizer);
  if (!ir.ok()) return ir.status();
  // The lexemes these add were not part of the front end's proof.
  if (!options.reasoning_end_marker.empty() || !options.required_prefix.empty()) {
    ir->context_free_lexing = false;
  }
  if (!options.reasoning_end_marker.empty()) {
    if (MarkerHasSpecialTokens(options.reasoning_end_marker, *tokenizer)) {
      if (absl::Status s = PrependTokenReasoning(*ir, options.reasoning_end_marker, *tokenizer);
          !s.ok()) {
        return s;
      }
    } else {
      PrependReasoning(*ir, options.reasoning_end_marker);
    }
  }
  if (!options.required_prefix.empty()) PrependLiteral(*ir, options.required_prefix);
  if (absl::Status s = CheckDeadline(deadline, options, "the front end"); !s.ok()) return s;
  AutomataLimits limits;
  limits.memory_limit_bytes = options.memory_limit_bytes;
  limits.mask_cache_bytes = options.mask_cache_bytes;
  limits.state_mask_hot_nodes = options.state_mask_hot_nodes;
  limits.item_masks = options.item_masks;
  limits.cancelled = options.cancelled;
  limits.deadline = deadline;
  absl::StatusOr<std::shared_ptr<const CompiledGrammarImpl>> compiled =
      CompiledGrammarImpl::FromIr(*std::move(ir), std::move(tokenizer), limits, started);
  if (!compiled.ok()) return compiled.status();
  if (absl::Status s = CheckDeadline(deadline, options, "automata construction"); !s.ok()) {
    return s;
  }
  return std::shared_ptr<const CompiledGrammar>(*std::move(compiled));
}

}  // namespace maskd
