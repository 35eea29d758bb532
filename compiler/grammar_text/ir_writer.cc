#include "compiler/grammar_text/ir_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/regex/expr_set.h"

namespace maskd::grammar_text {

NonterminalId IrWriter::Use(std::string_view name, size_t offset) {
  auto [it, inserted] = rules_.try_emplace(std::string(name));
  if (inserted) {
    it->second.id = ir_.builder.Nonterminal(name);
    names_.emplace_back(name);
  }
  if (it->second.first_use == std::string_view::npos) it->second.first_use = offset;
  return it->second.id;
}

absl::StatusOr<NonterminalId> IrWriter::Define(std::string_view name, size_t offset) {
  auto [it, inserted] = rules_.try_emplace(std::string(name));
  if (inserted) {
    it->second.id = ir_.builder.Nonterminal(name);
    names_.emplace_back(name);
  }
  if (it->second.definition != std::string_view::npos) {
    const TextPosition first = PositionOf(text_, it->second.definition);
    return TextError(absl::StatusCode::kInvalidArgument, text_, offset,
                     absl::StrCat("rule '", std::string(name), "' is defined twice (first at line ",
                                  first.line, ":", first.column, ")"));
  }
  it->second.definition = offset;
  return it->second.id;
}

bool IrWriter::IsDefined(std::string_view name) const {
  auto it = rules_.find(std::string(name));
  return it != rules_.end() && it->second.definition != std::string_view::npos;
}

absl::Status IrWriter::CountSymbols(size_t n, size_t offset) {
  symbols_ += n;
  if (symbols_ <= max_symbols_) return absl::OkStatus();
  return TextError(absl::StatusCode::kResourceExhausted, text_, offset,
                   absl::StrCat("grammar is over the size limit of ", max_symbols_,
                                " symbols (counted repetitions expanded)"));
}

absl::Status IrWriter::AddRules(NonterminalId lhs, const Alternatives& alternatives,
                                size_t offset) {
  for (const SymbolSeq& seq : alternatives) {
    if (absl::Status s = CountSymbols(seq.size() + 1, offset); !s.ok()) return s;
    ir_.builder.AddRule(lhs, seq);
  }
  return absl::OkStatus();
}

absl::StatusOr<Symbol> IrWriter::Group(const Alternatives& alternatives, size_t offset) {
  if (alternatives.size() == 1 && alternatives[0].size() == 1) return alternatives[0][0];
  const NonterminalId group = ir_.builder.FreshNonterminal("group");
  if (absl::Status s = AddRules(group, alternatives, offset); !s.ok()) return s;
  return Symbol::Nonterminal(group);
}

absl::StatusOr<SymbolSeq> IrWriter::Repeat(Symbol x, uint32_t min, uint32_t max, size_t offset) {
  if (max != kUnboundedRepeat && min > max) {
    return TextError(absl::StatusCode::kInvalidArgument, text_, offset,
                     absl::StrCat("repetition {", min, ",", max, "} has min > max"));
  }
  const size_t optional = max == kUnboundedRepeat ? 1 : size_t{max} - min;
  if (absl::Status s = CountSymbols(size_t{min} + 2 * optional, offset); !s.ok()) return s;
  SymbolSeq out(min, x);
  if (max == kUnboundedRepeat) {
    // x* as a left-recursive list (Earley takes left recursion in linear
    // time), one per symbol.
    auto [it, inserted] = star_of_.try_emplace(x.bits());
    if (inserted) {
      it->second = ir_.builder.FreshNonterminal("star");
      ir_.builder.AddRule(it->second, {});
      ir_.builder.AddRule(it->second, {Symbol::Nonterminal(it->second), x});
    }
    out.push_back(Symbol::Nonterminal(it->second));
  } else if (max > min) {
    // Up to k more: opt_k -> epsilon | x opt_{k-1}; no ambiguity.
    NonterminalId tail = ir_.builder.FreshNonterminal("opt");
    ir_.builder.AddRule(tail, {});
    ir_.builder.AddRule(tail, {x});
    for (uint32_t k = 1; k < max - min; ++k) {
      const NonterminalId next = ir_.builder.FreshNonterminal("opt");
      ir_.builder.AddRule(next, {});
      ir_.builder.AddRule(next, {x, Symbol::Nonterminal(tail)});
      tail = next;
    }
    out.push_back(Symbol::Nonterminal(tail));
  }
  return out;
}

absl::Status IrWriter::Finish(std::string_view start_name, bool start_given) {
  for (const std::string& name : names_) {
    const RuleInfo& info = rules_.at(name);
    if (info.definition == std::string_view::npos) {
      if (info.first_use == std::string_view::npos) continue;
      return TextError(absl::StatusCode::kInvalidArgument, text_, info.first_use,
                       absl::StrCat("undefined rule '", name, "'"));
    }
  }
  auto start = rules_.find(std::string(start_name));
  if (start == rules_.end() || start->second.definition == std::string_view::npos) {
    return TextError(absl::StatusCode::kInvalidArgument, text_, 0,
                     absl::StrCat("no rule '", std::string(start_name), "' to start from",
                                  start_given ? " (the requested start rule)"
                                              : " (the dialect's default start rule)"));
  }
  const NonterminalId start_id = start->second.id;
  const GrammarBuilder& b = ir_.builder;

  // Productive nonterminals (derive some string): a fixpoint over the rules.
  // A lexeme whose regex is the empty language (an embedded %json schema that
  // no instance matches lowers to one) derives nothing either, unless it is a
  // token terminal (matched by a token, not by bytes).
  std::vector<uint8_t> productive(b.num_nonterminals(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (const Rule& rule : b.rules()) {
      if (productive[rule.lhs]) continue;
      bool all = true;
      for (Symbol s : rule.rhs) {
        const bool dead = s.is_nonterminal()
                              ? !productive[s.id()]
                              : !b.lexeme(s.id()).is_token() &&
                                    b.lexeme(s.id()).regex == regex::ExprSet::kNothing;
        if (dead) {
          all = false;
          break;
        }
      }
      if (all) productive[rule.lhs] = changed = true;
    }
  }
  if (!productive[start_id]) {
    return TextError(absl::StatusCode::kInvalidArgument, text_, start->second.definition,
                     absl::StrCat("the grammar matches nothing: rule '", std::string(start_name),
                                  "' derives no finite string"));
  }

  // Reachable nonterminals, for the warnings.
  std::vector<std::vector<NonterminalId>> children(b.num_nonterminals());
  for (const Rule& rule : b.rules()) {
    for (Symbol s : rule.rhs) {
      if (s.is_nonterminal()) children[rule.lhs].push_back(s.id());
    }
  }
  std::vector<uint8_t> reached(b.num_nonterminals(), 0);
  std::vector<NonterminalId> stack = {start_id};
  reached[start_id] = 1;
  while (!stack.empty()) {
    const NonterminalId a = stack.back();
    stack.pop_back();
    for (NonterminalId c : children[a]) {
      if (!reached[c]) {
        reached[c] = 1;
        stack.push_back(c);
      }
    }
  }
  for (const std::string& name : names_) {
    const RuleInfo& info = rules_.at(name);
    const TextPosition p = PositionOf(text_, info.definition);
    if (!reached[info.id]) {
      ir_.warnings.push_back(absl::StrCat("rule '", name, "' (line ", p.line, ":", p.column,
                                          ") is unreachable from '", std::string(start_name), "'"));
    } else if (!productive[info.id]) {
      ir_.warnings.push_back(absl::StrCat("rule '", name, "' (line ", p.line, ":", p.column,
                                          ") derives no finite string"));
    }
  }
  ir_.builder.SetStart(start_id);
  return absl::OkStatus();
}

}  // namespace maskd::grammar_text
