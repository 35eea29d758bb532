#include "compiler/compile/choices_grammar.h"

#include "absl/strings/str_cat.h"

namespace maskd {

absl::Status BuildSingleRegexGrammar(GrammarIr& ir, regex::ExprId regex, std::string_view name) {
  // Lexemes must consume at least one byte, so the empty string, when the
  // regex matches it, is an epsilon rule instead.
  const NonterminalId start = ir.builder.Nonterminal("start");
  const regex::ExprId non_empty = ir.pool->NonEmpty(regex);
  absl::StatusOr<bool> empty = ir.pool->IsEmpty(non_empty);
  if (!empty.ok()) return empty.status();
  if (!*empty) {
    ir.builder.AddRule(start, {Symbol::Lexeme(ir.builder.AddLexeme(name, non_empty))});
  } else if (!ir.pool->Nullable(regex)) {
    return absl::InvalidArgumentError(std::string(name) + " matches nothing");
  }
  if (ir.pool->Nullable(regex)) ir.builder.AddRule(start, {});
  ir.builder.SetStart(start);
  return absl::OkStatus();
}

absl::StatusOr<GrammarIr> BuildChoicesGrammar(const std::vector<std::string>& choices) {
  if (choices.empty()) return absl::InvalidArgumentError("choices: the list is empty");
  GrammarIr ir;
  std::vector<regex::ExprId> literals;
  literals.reserve(choices.size());
  for (const std::string& c : choices) literals.push_back(ir.pool->Literal(c));
  if (absl::Status s = BuildSingleRegexGrammar(ir, ir.pool->Or(literals), "choice"); !s.ok()) {
    return s;
  }
  return ir;
}

}  // namespace maskd
