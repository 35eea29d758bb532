// CompiledGrammar::Compile: the one place that knows every front end. It turns
// a spec into grammar IR with the right front end, then hands the IR to the
// automata stage (CompiledGrammarImpl::FromIr).
#include <chrono>

#include "absl/strings/str_cat.h"
#include "compiler/compile/choices_grammar.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "compiler/regex/ecma_regex.h"

namespace maskd {
namespace {

absl::StatusOr<GrammarIr> JsonSchemaIr(std::string_view text, const CompileOptions& options) {
  json_schema::ParseOptions parse;
  parse.strict_keywords = options.strict;
  parse.closed_objects = options.additional_properties_default_false;
  absl::StatusOr<json_schema::Schema> schema = json_schema::ParseSchema(text, parse);
  if (!schema.ok()) return schema.status();
  json_schema::LowerOptions lower;
  switch (options.whitespace) {
    case WhitespaceMode::kCompact:
      lower.whitespace = json_schema::Whitespace::kCompact;
      break;
    case WhitespaceMode::kFlexible:
      lower.whitespace = json_schema::Whitespace::kFlexible;
      break;
    case WhitespaceMode::kBounded:
      lower.whitespace = json_schema::Whitespace::kBounded;
      break;
  }
  lower.max_whitespace_run = options.max_whitespace_run;
  absl::StatusOr<GrammarIr> ir = json_schema::LowerSchema(*schema, lower);
  if (!ir.ok()) return ir.status();
  for (const json_schema::IgnoredKeyword& k : schema->ignored_keywords) {
    ir->ignored_keywords.push_back(k.keyword + " at " + (k.pointer.empty() ? "/" : k.pointer));
  }
  return ir;
}

absl::StatusOr<GrammarIr> BuildIr(const GrammarSpec& spec, const CompileOptions& options) {
  (void)options;
  switch (spec.kind) {
    case SpecKind::kChoices:
      return BuildChoicesGrammar(spec.choices);
    case SpecKind::kRegex: {
      // A regex spec constrains the whole output: anchored at both ends.
      GrammarIr ir;
      absl::StatusOr<regex::ExprId> re =
          regex::ParseEcmaRegex(spec.text, ir.pool.get(), regex::MatchMode::kFullMatch);
      if (!re.ok()) return re.status();
      if (absl::Status s = BuildSingleRegexGrammar(ir, *re, "regex"); !s.ok()) return s;
      return ir;
    }
    case SpecKind::kJsonSchema:
      return JsonSchemaIr(spec.text, options);
    case SpecKind::kBuiltinJson:
      return JsonSchemaIr("true", options);
    case SpecKind::kEbnf:
      return absl::UnimplementedError("EBNF/GBNF/Lark grammars are not supported yet");
  }
  return absl::InvalidArgumentError("unknown spec kind");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompiledGrammar::Compile(
    const GrammarSpec& spec, const CompileOptions& options,
    std::shared_ptr<const Tokenizer> tokenizer) {
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<GrammarIr> ir = BuildIr(spec, options);
  if (!ir.ok()) return ir.status();
  absl::StatusOr<std::shared_ptr<const CompiledGrammarImpl>> compiled =
      CompiledGrammarImpl::FromIr(*std::move(ir), std::move(tokenizer), options, started);
  if (!compiled.ok()) return compiled.status();
  return std::shared_ptr<const CompiledGrammar>(*std::move(compiled));
}

}  // namespace maskd
