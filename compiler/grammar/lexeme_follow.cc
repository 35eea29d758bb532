#include "compiler/grammar/lexeme_follow.h"

#include "absl/strings/str_cat.h"

namespace maskd {

absl::StatusOr<LexemeFollow> ComputeLexemeFollow(const Grammar& g, size_t max_bits) {
  const size_t num_lex = g.num_lexemes();
  const size_t num_nts = g.num_nonterminals();
  if ((num_nts + num_lex) * num_lex > max_bits) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "lexeme follow analysis: ", num_nts, " nonterminals x ", num_lex, " lexemes is too big"));
  }
  // FIRST per nonterminal, to a fixpoint.
  std::vector<LexemeSet> first(num_nts, LexemeSet(num_lex));
  for (bool changed = true; changed;) {
    changed = false;
    for (RuleId r = 0; r < g.num_rules(); ++r) {
      LexemeSet& f = first[g.rule_lhs(r)];
      const size_t before = f.Count();
      for (Symbol s : g.rule_rhs(r)) {
        if (s.is_lexeme()) {
          f.Insert(s.id());
          break;
        }
        f.UnionWith(first[s.id()]);
        if (!g.nullable(s.id())) break;
      }
      if (f.Count() != before) changed = true;
    }
  }
  // FOLLOW per nonterminal (the augmented start is followed by nothing).
  std::vector<LexemeSet> follow_nt(num_nts, LexemeSet(num_lex));
  // What follows position k of rule r: FIRST of the rest, and whether the
  // rest may be empty.
  auto rest = [&](RuleId r, size_t k, LexemeSet& out) {
    const auto rhs = g.rule_rhs(r);
    for (size_t j = k + 1; j < rhs.size(); ++j) {
      if (rhs[j].is_lexeme()) {
        out.Insert(rhs[j].id());
        return false;
      }
      out.UnionWith(first[rhs[j].id()]);
      if (!g.nullable(rhs[j].id())) return false;
    }
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (RuleId r = 0; r < g.num_rules(); ++r) {
      const auto rhs = g.rule_rhs(r);
      for (size_t k = 0; k < rhs.size(); ++k) {
        if (rhs[k].is_lexeme()) continue;
        LexemeSet& f = follow_nt[rhs[k].id()];
        const size_t before = f.Count();
        if (rest(r, k, f)) f.UnionWith(follow_nt[g.rule_lhs(r)]);
        if (f.Count() != before) changed = true;
      }
    }
  }
  LexemeFollow out;
  out.first = first[Grammar::kAugmentedStart];
  out.follow.assign(num_lex, LexemeSet(num_lex));
  for (RuleId r = 0; r < g.num_rules(); ++r) {
    const auto rhs = g.rule_rhs(r);
    for (size_t k = 0; k < rhs.size(); ++k) {
      if (!rhs[k].is_lexeme()) continue;
      LexemeSet& f = out.follow[rhs[k].id()];
      if (rest(r, k, f)) f.UnionWith(follow_nt[g.rule_lhs(r)]);
    }
  }
  return out;
}

}  // namespace maskd
