// CompiledGrammar::Compile: the one place that knows every front end. It turns
// a spec into grammar IR with the right front end, then hands the IR to the
// automata stage (CompiledGrammarImpl::FromIr).
#include <chrono>

#include "absl/strings/str_cat.h"
#include "compiler/compile/choices_grammar.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "compiler/regex/ecma_regex.h"

namespace maskd {
namespace {

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
      return absl::UnimplementedError(
          "JSON Schema specs: the lowering to grammar IR has not landed yet");
    case SpecKind::kBuiltinJson:
      return absl::UnimplementedError("builtin JSON: the JSON grammar has not landed yet");
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
