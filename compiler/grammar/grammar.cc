#include "compiler/grammar/grammar.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace maskd {

LexemeId GrammarBuilder::AddLexeme(std::string_view name, RegexExprId regex, LexemeFlags flags) {
  LexemeKey key{regex,
                flags.lazy,
                flags.literal,
                flags.role,
                flags.distinct_number,
                flags.distinct_integer,
                flags.json};
  auto [it, inserted] = lexeme_by_key_.try_emplace(key, static_cast<LexemeId>(lexemes_.size()));
  if (inserted) lexemes_.push_back(LexemeInfo{std::string(name), regex, flags, nullptr});
  return it->second;
}

LexemeId GrammarBuilder::AddTokenLexeme(std::string_view name, std::vector<uint32_t> ids,
                                        bool negated, RegexExprId nothing) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto [it, inserted] = lexeme_by_token_.try_emplace(std::make_pair(ids, negated),
                                                     static_cast<LexemeId>(lexemes_.size()));
  if (inserted) {
    auto token = std::make_shared<TokenTerminal>();
    token->ids = std::move(ids);
    token->negated = negated;
    lexemes_.push_back(LexemeInfo{std::string(name), nothing, LexemeFlags{}, std::move(token)});
  }
  return it->second;
}

NonterminalId GrammarBuilder::Nonterminal(std::string_view name) {
  auto [it, inserted] = nonterminal_by_name_.try_emplace(
      std::string(name), static_cast<NonterminalId>(nonterminal_names_.size()));
  if (inserted) nonterminal_names_.emplace_back(name);
  return it->second;
}

NonterminalId GrammarBuilder::FreshNonterminal(std::string_view name_hint) {
  std::string name(name_hint);
  if (nonterminal_by_name_.contains(name)) {
    size_t& suffix = next_fresh_suffix_.try_emplace(name, 1).first->second;
    do {
      name = absl::StrCat(std::string(name_hint), "#", suffix++);
    } while (nonterminal_by_name_.contains(name));
  }
  return Nonterminal(name);
}

void GrammarBuilder::AddRule(NonterminalId lhs, std::vector<Symbol> rhs) {
  rules_.push_back(Rule{lhs, std::move(rhs)});
}

namespace {

// Names of the first few ids, for error messages that stay short on huge
// generated grammars.
std::string NameList(const std::vector<std::string>& names, const std::vector<uint32_t>& ids) {
  constexpr size_t kMaxNamed = 10;
  std::vector<std::string> parts;
  for (size_t i = 0; i < ids.size() && i < kMaxNamed; ++i) parts.push_back(names[ids[i]]);
  std::string out = absl::StrJoin(parts, ", ");
  if (ids.size() > kMaxNamed) absl::StrAppend(&out, " and ", ids.size() - kMaxNamed, " more");
  return out;
}

}  // namespace

// Productive symbols: least fixpoint of "some rule has only productive
// symbols". Counting unproductive body symbols per rule makes it linear.
std::vector<uint8_t> GrammarBuilder::ProductiveNonterminals() const {
  const size_t num_nts = nonterminal_names_.size();
  std::vector<uint8_t> productive(num_nts, 0);
  {
    std::vector<std::vector<uint32_t>> rules_using(num_nts);
    std::vector<uint32_t> missing(rules_.size(), 0);
    std::vector<NonterminalId> queue;
    for (size_t r = 0; r < rules_.size(); ++r) {
      for (Symbol s : rules_[r].rhs) {
        if (s.is_nonterminal()) {
          ++missing[r];
          rules_using[s.id()].push_back(static_cast<uint32_t>(r));
        }
      }
      if (missing[r] == 0 && !productive[rules_[r].lhs]) {
        productive[rules_[r].lhs] = 1;
        queue.push_back(rules_[r].lhs);
      }
    }
    while (!queue.empty()) {
      NonterminalId a = queue.back();
      queue.pop_back();
      for (uint32_t r : rules_using[a]) {
        if (--missing[r] == 0 && !productive[rules_[r].lhs]) {
          productive[rules_[r].lhs] = 1;
          queue.push_back(rules_[r].lhs);
        }
      }
    }
  }
  return productive;
}

bool GrammarBuilder::DerivesSomething(NonterminalId a) const {
  return a < nonterminal_names_.size() && ProductiveNonterminals()[a] != 0;
}

absl::StatusOr<std::shared_ptr<const Grammar>> GrammarBuilder::Build() const {
  const size_t num_nts = nonterminal_names_.size();
  const size_t num_lex = lexemes_.size();
  if (start_ == kNoStart) return absl::InvalidArgumentError("grammar has no start symbol");
  if (start_ >= num_nts) {
    return absl::InvalidArgumentError(absl::StrCat("start symbol id ", start_, " does not exist"));
  }
  // Ids out of range are programming errors of a front end; name the rule.
  std::vector<uint8_t> defined(num_nts, 0), used(num_nts, 0);
  used[start_] = 1;
  for (size_t r = 0; r < rules_.size(); ++r) {
    const Rule& rule = rules_[r];
    if (rule.lhs >= num_nts) {
      return absl::InvalidArgumentError(
          absl::StrCat("rule ", r, " has nonexistent left-hand side id ", rule.lhs));
    }
    defined[rule.lhs] = 1;
    for (Symbol s : rule.rhs) {
      if (s.is_nonterminal() ? s.id() >= num_nts : s.id() >= num_lex) {
        return absl::InvalidArgumentError(
            absl::StrCat("rule ", r, " (", nonterminal_names_[rule.lhs], ") uses nonexistent ",
                         s.is_nonterminal() ? "nonterminal" : "lexeme", " id ", s.id()));
      }
      if (s.is_nonterminal()) used[s.id()] = 1;
    }
  }
  std::vector<uint32_t> undefined;
  for (uint32_t a = 0; a < num_nts; ++a) {
    if (used[a] && !defined[a]) undefined.push_back(a);
  }
  if (!undefined.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("undefined nonterminal",
                                                   undefined.size() > 1 ? "s" : "", ": ",
                                                   NameList(nonterminal_names_, undefined)));
  }

  const std::vector<uint8_t> productive = ProductiveNonterminals();
  if (!productive[start_]) {
    return absl::InvalidArgumentError(absl::StrCat("grammar matches nothing: start symbol ",
                                                   nonterminal_names_[start_],
                                                   " derives no finite string"));
  }
  auto rule_productive = [&](const Rule& rule) {
    if (!productive[rule.lhs]) return false;
    for (Symbol s : rule.rhs) {
      if (s.is_nonterminal() && !productive[s.id()]) return false;
    }
    return true;
  };

  // Reachable symbols through productive rules only.
  std::vector<std::vector<uint32_t>> rules_of(num_nts);
  for (size_t r = 0; r < rules_.size(); ++r) {
    if (rule_productive(rules_[r])) rules_of[rules_[r].lhs].push_back(static_cast<uint32_t>(r));
  }
  std::vector<uint8_t> reachable(num_nts, 0);
  std::vector<uint8_t> lexeme_used(num_lex, 0);
  {
    std::vector<NonterminalId> stack{start_};
    reachable[start_] = 1;
    while (!stack.empty()) {
      NonterminalId a = stack.back();
      stack.pop_back();
      for (uint32_t r : rules_of[a]) {
        for (Symbol s : rules_[r].rhs) {
          if (s.is_lexeme()) {
            lexeme_used[s.id()] = 1;
          } else if (!reachable[s.id()]) {
            reachable[s.id()] = 1;
            stack.push_back(s.id());
          }
        }
      }
    }
  }

  // Dense renumbering. Nonterminal 0 is the augmented start.
  auto grammar = std::shared_ptr<Grammar>(new Grammar());
  std::vector<uint32_t> nt_map(num_nts, 0), lex_map(num_lex, 0);
  grammar->nonterminal_names_.push_back("<start>");
  // Start first after <start>, so debug output reads top-down.
  nt_map[start_] = 1;
  grammar->nonterminal_names_.push_back(nonterminal_names_[start_]);
  for (uint32_t a = 0; a < num_nts; ++a) {
    if (reachable[a] && a != start_) {
      nt_map[a] = static_cast<uint32_t>(grammar->nonterminal_names_.size());
      grammar->nonterminal_names_.push_back(nonterminal_names_[a]);
    }
  }
  for (uint32_t t = 0; t < num_lex; ++t) {
    if (lexeme_used[t]) {
      lex_map[t] = static_cast<uint32_t>(grammar->lexemes_.size());
      grammar->lexemes_.push_back(lexemes_[t]);
      grammar->builder_lexeme_ids_.push_back(t);
    }
  }
  grammar->start_ = 1;
  {
    absl::flat_hash_map<std::string_view, uint32_t> group_by_name;
    std::vector<std::vector<LexemeId>> groups;
    for (LexemeId t = 0; t < grammar->lexemes_.size(); ++t) {
      const LexemeInfo& l = grammar->lexemes_[t];
      if (l.flags.role == LexemeRole::kDistinctValue) grammar->has_distinct_values_ = true;
      if (l.flags.role == LexemeRole::kDistinctValue && l.flags.distinct_number) {
        grammar->has_distinct_numbers_ = true;
      }
      if (l.flags.json == JsonPart::kOpenItemArray) grammar->has_item_values_ = true;
      if (l.flags.role != LexemeRole::kUniqueKey) continue;
      if (grammar->unique_key_group_.empty())
        grammar->unique_key_group_.assign(grammar->lexemes_.size(), ~0u);
      auto [it, added] = group_by_name.try_emplace(l.name, static_cast<uint32_t>(groups.size()));
      if (added) groups.emplace_back();
      groups[it->second].push_back(t);
      grammar->unique_key_group_[t] = it->second;
    }
    grammar->unique_key_start_.assign(1, 0);
    for (const std::vector<LexemeId>& g : groups) {
      grammar->unique_key_lexemes_.insert(grammar->unique_key_lexemes_.end(), g.begin(), g.end());
      grammar->unique_key_start_.push_back(
          static_cast<uint32_t>(grammar->unique_key_lexemes_.size()));
    }
  }

  // Rules grouped by left-hand side; exact duplicates dropped (they only
  // multiply Earley items and ambiguity).
  std::vector<Rule> kept;
  kept.push_back(Rule{Grammar::kAugmentedStart, {Symbol::Nonterminal(1)}});
  std::vector<NonterminalId> order;  // Builder ids in new-id order.
  order.resize(grammar->nonterminal_names_.size());
  for (uint32_t a = 0; a < num_nts; ++a) {
    if (reachable[a]) order[nt_map[a]] = a;
  }
  absl::flat_hash_set<std::vector<uint32_t>> seen;
  for (size_t new_a = 1; new_a < order.size(); ++new_a) {
    for (uint32_t r : rules_of[order[new_a]]) {
      Rule rule{static_cast<NonterminalId>(new_a), {}};
      std::vector<uint32_t> key{rule.lhs};
      for (Symbol s : rules_[r].rhs) {
        Symbol mapped =
            s.is_lexeme() ? Symbol::Lexeme(lex_map[s.id()]) : Symbol::Nonterminal(nt_map[s.id()]);
        rule.rhs.push_back(mapped);
        key.push_back(mapped.bits());
      }
      if (seen.insert(std::move(key)).second) kept.push_back(std::move(rule));
    }
  }

  for (const Rule& rule : kept) {
    grammar->rule_first_pos_.push_back(
        static_cast<uint32_t>(grammar->rule_lhs_.size() + grammar->rhs_symbols_.size()));
    grammar->rule_lhs_.push_back(rule.lhs);
    grammar->rhs_symbols_.insert(grammar->rhs_symbols_.end(), rule.rhs.begin(), rule.rhs.end());
  }
  grammar->rule_first_pos_.push_back(
      static_cast<uint32_t>(grammar->rule_lhs_.size() + grammar->rhs_symbols_.size()));
  grammar->ComputeTables();
  return std::shared_ptr<const Grammar>(std::move(grammar));
}

void Grammar::ComputeTables() {
  const size_t num_nts = nonterminal_names_.size();
  const size_t num_rules = rule_lhs_.size();
  const size_t num_lex = lexemes_.size();

  // Rules by lhs (already grouped by Build, but do not rely on it).
  nt_rules_start_.assign(num_nts + 1, 0);
  for (NonterminalId a : rule_lhs_) ++nt_rules_start_[a + 1];
  for (size_t a = 0; a < num_nts; ++a) nt_rules_start_[a + 1] += nt_rules_start_[a];
  nt_rules_.assign(num_rules, 0);
  {
    std::vector<uint32_t> fill(nt_rules_start_.begin(), nt_rules_start_.end() - 1);
    for (RuleId r = 0; r < num_rules; ++r) nt_rules_[fill[rule_lhs_[r]]++] = r;
  }

  // Positions.
  pos_symbol_.clear();
  pos_rule_.clear();
  for (RuleId r = 0; r < num_rules; ++r) {
    for (Symbol s : rule_rhs(r)) {
      pos_symbol_.push_back(s.bits());
      pos_rule_.push_back(r);
    }
    pos_symbol_.push_back(kEndOfRule);
    pos_rule_.push_back(r);
  }

  // Nullable: worklist over "body symbols not yet known nullable" counts,
  // linear in the grammar size (rules with a lexeme never qualify).
  nullable_.assign(num_nts, 0);
  {
    std::vector<std::vector<RuleId>> rules_using(num_nts);
    std::vector<uint32_t> pending(num_rules, 0);
    std::vector<NonterminalId> queue;
    for (RuleId r = 0; r < num_rules; ++r) {
      bool has_lexeme = false;
      for (Symbol s : rule_rhs(r)) has_lexeme = has_lexeme || s.is_lexeme();
      if (has_lexeme) continue;
      for (Symbol s : rule_rhs(r)) {
        ++pending[r];
        rules_using[s.id()].push_back(r);
      }
      if (pending[r] == 0 && !nullable_[rule_lhs_[r]]) {
        nullable_[rule_lhs_[r]] = 1;
        queue.push_back(rule_lhs_[r]);
      }
    }
    while (!queue.empty()) {
      const NonterminalId a = queue.back();
      queue.pop_back();
      for (RuleId r : rules_using[a]) {
        if (--pending[r] == 0 && !nullable_[rule_lhs_[r]]) {
          nullable_[rule_lhs_[r]] = 1;
          queue.push_back(rule_lhs_[r]);
        }
      }
    }
  }

  // Predicted positions (own rules with nullable prefixes skipped).
  predicted_.clear();
  predicted_start_.assign(1, 0);
  predicted_lexemes_.clear();
  predicted_lexemes_start_.assign(1, 0);
  std::vector<uint32_t> lexeme_mark(num_lex, ~uint32_t{0});
  for (NonterminalId a = 0; a < num_nts; ++a) {
    for (RuleId r : rules_of(a)) {
      for (uint32_t p = rule_first_pos_[r];; ++p) {
        predicted_.push_back(p);
        uint32_t sym = pos_symbol_[p];
        if (sym == kEndOfRule) break;
        Symbol s = Symbol::FromBits(sym);
        if (s.is_lexeme()) {
          if (lexeme_mark[s.id()] != a) {
            lexeme_mark[s.id()] = a;
            predicted_lexemes_.push_back(s.id());
          }
          break;
        }
        if (!nullable_[s.id()]) break;
      }
    }
    predicted_start_.push_back(static_cast<uint32_t>(predicted_.size()));
    predicted_lexemes_start_.push_back(static_cast<uint32_t>(predicted_lexemes_.size()));
  }

  // Left corners: the nonterminals after the dot in predicted positions.
  left_corners_.clear();
  left_corners_start_.assign(1, 0);
  std::vector<uint32_t> mark(num_nts, ~uint32_t{0});
  for (NonterminalId a = 0; a < num_nts; ++a) {
    for (uint32_t p : predicted_positions(a)) {
      const uint32_t sym = pos_symbol_[p];
      if (sym == kEndOfRule) continue;
      const Symbol s = Symbol::FromBits(sym);
      if (s.is_nonterminal() && mark[s.id()] != a) {
        mark[s.id()] = a;
        left_corners_.push_back(s.id());
      }
    }
    left_corners_start_.push_back(static_cast<uint32_t>(left_corners_.size()));
  }
}

LexemeSet Grammar::First(NonterminalId a) const {
  LexemeSet first(lexemes_.size());
  std::vector<uint8_t> seen(nonterminal_names_.size(), 0);
  std::vector<NonterminalId> stack{a};
  seen[a] = 1;
  while (!stack.empty()) {
    const NonterminalId b = stack.back();
    stack.pop_back();
    for (LexemeId t : predicted_lexemes(b)) first.Insert(t);
    for (NonterminalId c : left_corners(b)) {
      if (!seen[c]) {
        seen[c] = 1;
        stack.push_back(c);
      }
    }
  }
  return first;
}

size_t Grammar::ByteSizeEstimate() const {
  size_t bytes = sizeof(Grammar);
  for (const LexemeInfo& l : lexemes_) bytes += sizeof(LexemeInfo) + l.name.capacity();
  for (const std::string& n : nonterminal_names_) bytes += sizeof(std::string) + n.capacity();
  bytes += builder_lexeme_ids_.capacity() * sizeof(LexemeId);
  bytes += rule_lhs_.capacity() * sizeof(NonterminalId) + rhs_symbols_.capacity() * sizeof(Symbol);
  bytes += (rule_first_pos_.capacity() + nt_rules_.capacity() + nt_rules_start_.capacity()) *
           sizeof(uint32_t);
  bytes += nullable_.capacity();
  bytes += (pos_symbol_.capacity() + pos_rule_.capacity() + left_corners_.capacity() +
            left_corners_start_.capacity() + predicted_.capacity() + predicted_start_.capacity()) *
           sizeof(uint32_t);
  bytes += (predicted_lexemes_.capacity() + predicted_lexemes_start_.capacity()) * sizeof(uint32_t);
  return bytes;
}

std::string Grammar::SymbolName(Symbol s) const {
  if (s.is_nonterminal()) return nonterminal_names_[s.id()];
  return absl::StrCat("'", lexemes_[s.id()].name, "'");
}

std::string Grammar::DebugString() const {
  std::string out;
  for (LexemeId t = 0; t < lexemes_.size(); ++t) {
    const LexemeInfo& l = lexemes_[t];
    absl::StrAppend(&out, "lexeme ", t, " '", l.name, "' = ",
                    l.is_token() ? absl::StrCat(l.token->negated ? "any token but " : "token ",
                                                absl::StrJoin(l.token->ids, ","))
                                 : absl::StrCat("regex#", l.regex),
                    l.flags.lazy ? " lazy" : "", l.flags.literal ? " literal" : "", "\n");
  }
  for (RuleId r = 0; r < rule_lhs_.size(); ++r) {
    absl::StrAppend(&out, nonterminal_names_[rule_lhs_[r]], " ::=");
    if (rule_length(r) == 0) absl::StrAppend(&out, " ε");
    for (Symbol s : rule_rhs(r)) absl::StrAppend(&out, " ", SymbolName(s));
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace maskd
