#include "compiler/compile/choices_grammar.h"

namespace maskd {

void BuildSingleRegexGrammar(GrammarIr& ir, regex::ExprId regex, std::string_view name) {
  // Lexemes must consume at least one byte, so the empty string, when the
  // regex matches it, is an epsilon rule instead.
  const NonterminalId start = ir.builder.Nonterminal("start");
  const regex::ExprId non_empty = ir.pool->NonEmpty(regex);
  if (non_empty != regex::ExprSet::kNothing) {
    ir.builder.AddRule(start, {Symbol::Lexeme(ir.builder.AddLexeme(name, non_empty))});
  }
  if (ir.pool->Nullable(regex)) ir.builder.AddRule(start, {});
  ir.builder.SetStart(start);
}

absl::StatusOr<GrammarIr> BuildChoicesGrammar(const std::vector<std::string>& choices) {
  if (choices.empty()) return absl::InvalidArgumentError("choices: the list is empty");
  GrammarIr ir;
  std::vector<regex::ExprId> literals;
  literals.reserve(choices.size());
  for (const std::string& c : choices) literals.push_back(ir.pool->Literal(c));
  BuildSingleRegexGrammar(ir, ir.pool->Or(literals), "choice");
  return ir;
}

}  // namespace maskd
