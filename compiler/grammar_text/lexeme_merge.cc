#include "compiler/grammar_text/lexeme_merge.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/regex/byte_set.h"
#include "compiler/regex/expr_set.h"

namespace maskd::grammar_text {
namespace {

using regex::ByteSet;
using regex::ExprId;
using regex::ExprSet;

// Beyond these the proof costs more than the per-byte parsing it saves.
constexpr size_t kMaxRules = 4000;
constexpr size_t kMaxLexemes = 400;
constexpr int kMaxRounds = 8;

class Merger {
 public:
  explicit Merger(GrammarIr& ir) : ir_(ir), b_(ir.builder), pool_(*ir.pool) {}

  size_t Run() {
    if (b_.num_rules() > kMaxRules || b_.num_lexemes() > kMaxLexemes) return 0;
    const size_t n = b_.num_nonterminals();
    rules_of_.resize(n);
    for (size_t r = 0; r < b_.rules().size(); ++r) rules_of_[b_.rules()[r].lhs].push_back(r);
    FindRegular();
    // Candidates: regular rules used by a non-regular one (or the start).
    std::vector<uint8_t> merged(n, 0);
    for (const Rule& rule : b_.rules()) {
      if (regular_[rule.lhs]) continue;
      for (Symbol s : rule.rhs) {
        if (s.is_nonterminal() && regular_[s.id()]) merged[s.id()] = 1;
      }
    }
    if (regular_[b_.start()]) merged[b_.start()] = 1;
    for (int round = 0; round < kMaxRounds; ++round) {
      View view = MakeView(merged);
      std::vector<NonterminalId> failed;
      for (NonterminalId a = 0; a < n; ++a) {
        if (merged[a] && view.reachable[a] && !Safe(view, a)) failed.push_back(a);
      }
      if (failed.empty()) return Emit(merged);
      for (NonterminalId a : failed) {
        merged[a] = 0;
        for (size_t r : rules_of_[a]) {
          for (Symbol s : b_.rules()[r].rhs) {
            if (s.is_nonterminal() && regular_[s.id()] && s.id() != a) merged[s.id()] = 1;
          }
        }
      }
    }
    return 0;  // not settled: leave the grammar character-level
  }

 private:
  // A nonterminal is regular when its rules use only lexemes and regular
  // nonterminals (so it is not recursive), or it is an x* list.
  void FindRegular() {
    const size_t n = b_.num_nonterminals();
    regular_.assign(n, 0);
    regex_.assign(n, ExprSet::kNothing);
    for (bool changed = true; changed;) {
      changed = false;
      for (NonterminalId a = 0; a < n; ++a) {
        if (regular_[a] || rules_of_[a].empty()) continue;
        if (std::optional<ExprId> star = StarRegex(a)) {
          regex_[a] = *star;
          regular_[a] = changed = true;
          continue;
        }
        std::vector<ExprId> alts;
        bool ok = true;
        for (size_t r : rules_of_[a]) {
          std::vector<ExprId> parts;
          for (Symbol s : b_.rules()[r].rhs) {
            if (s.is_lexeme() && b_.lexeme(s.id()).is_token()) {
              ok = false;  // a token terminal is matched by a token, never by bytes
              break;
            } else if (s.is_lexeme()) {
              parts.push_back(b_.lexeme(s.id()).regex);
            } else if (regular_[s.id()]) {
              parts.push_back(regex_[s.id()]);
            } else {
              ok = false;
              break;
            }
          }
          if (!ok) break;
          alts.push_back(pool_.Concat(parts));
        }
        if (!ok) continue;
        regex_[a] = pool_.Or(alts);
        regular_[a] = changed = true;
      }
    }
  }

  // `a -> epsilon | a x` with x a lexeme or regular: x*.
  std::optional<ExprId> StarRegex(NonterminalId a) const {
    if (rules_of_[a].size() != 2) return std::nullopt;
    const Rule& r0 = b_.rules()[rules_of_[a][0]];
    const Rule& r1 = b_.rules()[rules_of_[a][1]];
    const Rule& empty = r0.rhs.empty() ? r0 : r1;
    const Rule& step = r0.rhs.empty() ? r1 : r0;
    if (!empty.rhs.empty() || step.rhs.size() != 2) return std::nullopt;
    if (step.rhs[0] != Symbol::Nonterminal(a)) return std::nullopt;
    const Symbol x = step.rhs[1];
    if (x.is_lexeme() && b_.lexeme(x.id()).is_token()) return std::nullopt;
    if (x.is_lexeme()) return pool_.Star(b_.lexeme(x.id()).regex);
    if (x.id() != a && regular_[x.id()]) return pool_.Star(regex_[x.id()]);
    return std::nullopt;
  }

  // The grammar as it would be with `merged` rules as lexemes: for each
  // reachable lexeme occurrence, its regex and the bytes that may follow it.
  struct Item {
    ExprId regex;  // non-empty strings only
    bool nullable;
    ByteSet first;
  };
  struct View {
    std::vector<uint8_t> reachable;
    // Per distinct lexeme regex (original or merged): the bytes that may follow it.
    absl::flat_hash_map<ExprId, ByteSet> follow;
  };

  ByteSet FirstBytes(ExprId e) {
    if (auto it = first_cache_.find(e); it != first_cache_.end()) return it->second;
    ByteSet set;
    for (int c = 0; c < 256; ++c) {
      if (pool_.Derivative(e, static_cast<uint8_t>(c)) != ExprSet::kNothing) {
        set.Add(static_cast<uint8_t>(c));
      }
    }
    first_cache_.emplace(e, set);
    return set;
  }

  Item SymbolItem(Symbol s, const std::vector<uint8_t>& merged) {
    if (s.is_lexeme()) {
      const ExprId re = b_.lexeme(s.id()).regex;
      return {re, false, FirstBytes(re)};
    }
    const ExprId re = pool_.NonEmpty(regex_[s.id()]);
    (void)merged;
    return {re, pool_.Nullable(regex_[s.id()]), FirstBytes(re)};
  }

  View MakeView(const std::vector<uint8_t>& merged) {
    const size_t n = b_.num_nonterminals();
    View v;
    v.reachable.assign(n, 0);
    std::vector<NonterminalId> stack = {b_.start()};
    v.reachable[b_.start()] = 1;
    while (!stack.empty()) {
      const NonterminalId a = stack.back();
      stack.pop_back();
      if (merged[a]) continue;
      for (size_t r : rules_of_[a]) {
        for (Symbol s : b_.rules()[r].rhs) {
          if (s.is_nonterminal() && !v.reachable[s.id()]) {
            v.reachable[s.id()] = 1;
            stack.push_back(s.id());
          }
        }
      }
    }
    // Nullable and FIRST bytes of the live nonterminals (merged ones are leaves).
    std::vector<uint8_t> nullable(n, 0);
    std::vector<ByteSet> first(n);
    auto sym = [&](Symbol s, bool& null, ByteSet& f) {
      if (s.is_lexeme() || merged[s.id()]) {
        const Item it = SymbolItem(s, merged);
        null = it.nullable;
        f = it.first;
      } else {
        null = nullable[s.id()];
        f = first[s.id()];
      }
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (NonterminalId a = 0; a < n; ++a) {
        if (!v.reachable[a] || merged[a]) continue;
        for (size_t r : rules_of_[a]) {
          bool all_null = true;
          ByteSet f = first[a];
          for (Symbol s : b_.rules()[r].rhs) {
            bool null;
            ByteSet fs;
            sym(s, null, fs);
            f |= fs;
            if (!null) {
              all_null = false;
              break;
            }
          }
          if (!(f == first[a])) first[a] = f, changed = true;
          if (all_null && !nullable[a]) nullable[a] = 1, changed = true;
        }
      }
    }
    std::vector<ByteSet> follow(n);
    auto add_follow = [&](const Rule& rule, size_t k, ByteSet& out) {
      // Bytes after position k of `rule`; true when the rest may be empty.
      for (size_t j = k + 1; j < rule.rhs.size(); ++j) {
        bool null;
        ByteSet fs;
        sym(rule.rhs[j], null, fs);
        out |= fs;
        if (!null) return false;
      }
      return true;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (NonterminalId a = 0; a < n; ++a) {
        if (!v.reachable[a] || merged[a]) continue;
        for (size_t r : rules_of_[a]) {
          const Rule& rule = b_.rules()[r];
          for (size_t k = 0; k < rule.rhs.size(); ++k) {
            const Symbol s = rule.rhs[k];
            if (s.is_lexeme() || merged[s.id()]) continue;
            ByteSet f = follow[s.id()];
            if (add_follow(rule, k, f)) f |= follow[a];
            if (!(f == follow[s.id()])) follow[s.id()] = f, changed = true;
          }
        }
      }
    }
    for (NonterminalId a = 0; a < n; ++a) {
      if (!v.reachable[a] || merged[a]) continue;
      for (size_t r : rules_of_[a]) {
        const Rule& rule = b_.rules()[r];
        for (size_t k = 0; k < rule.rhs.size(); ++k) {
          const Symbol s = rule.rhs[k];
          if (s.is_nonterminal() && !merged[s.id()]) continue;
          ByteSet f;
          if (add_follow(rule, k, f)) f |= follow[a];
          v.follow[SymbolItem(s, merged).regex] |= f;
        }
      }
    }
    if (merged[b_.start()]) v.follow[SymbolItem(Symbol::Nonterminal(b_.start()), merged).regex];
    return v;
  }

  bool Safe(const View& v, NonterminalId a) {
    const ExprId target = pool_.NonEmpty(regex_[a]);
    for (const auto& [b, follow] : v.follow) {
      if (follow.Empty()) continue;
      const ExprId cut =
          pool_.Concat(std::vector<ExprId>{b, pool_.Bytes(follow), ExprSet::kAnyByteString});
      absl::StatusOr<bool> empty = pool_.IsEmpty(pool_.And(cut, target));
      if (!empty.ok() || !*empty) return false;
    }
    return true;
  }

  size_t Emit(const std::vector<uint8_t>& merged) {
    size_t count = 0;
    GrammarBuilder nb;
    for (LexemeId id = 0; id < b_.num_lexemes(); ++id) {
      const LexemeInfo& info = b_.lexeme(id);
      if (info.is_token()) {
        nb.AddTokenLexeme(info.name, info.token->ids, info.token->negated, info.regex);
      } else {
        nb.AddLexeme(info.name, info.regex, info.flags);
      }
    }
    for (NonterminalId a = 0; a < b_.num_nonterminals(); ++a)
      nb.Nonterminal(b_.nonterminal_name(a));
    std::vector<std::optional<Symbol>> replacement(b_.num_nonterminals());
    for (NonterminalId a = 0; a < b_.num_nonterminals(); ++a) {
      if (!merged[a]) continue;
      ++count;
      const ExprId non_empty = pool_.NonEmpty(regex_[a]);
      const Symbol lexeme = Symbol::Lexeme(nb.AddLexeme(b_.nonterminal_name(a), non_empty));
      if (!pool_.Nullable(regex_[a])) {
        replacement[a] = lexeme;
      } else {
        const NonterminalId w = nb.FreshNonterminal(b_.nonterminal_name(a) + "?");
        nb.AddRule(w, {});
        nb.AddRule(w, {lexeme});
        replacement[a] = Symbol::Nonterminal(w);
      }
    }
    for (const Rule& rule : b_.rules()) {
      if (merged[rule.lhs]) continue;
      std::vector<Symbol> rhs = rule.rhs;
      for (Symbol& s : rhs) {
        if (s.is_nonterminal() && replacement[s.id()].has_value()) s = *replacement[s.id()];
      }
      nb.AddRule(rule.lhs, std::move(rhs));
    }
    if (replacement[b_.start()].has_value()) {
      const NonterminalId top = nb.FreshNonterminal("start");
      nb.AddRule(top, {*replacement[b_.start()]});
      nb.SetStart(top);
    } else {
      nb.SetStart(b_.start());
    }
    ir_.builder = std::move(nb);
    return count;
  }

  GrammarIr& ir_;
  const GrammarBuilder& b_;
  ExprSet& pool_;
  std::vector<std::vector<size_t>> rules_of_;
  std::vector<uint8_t> regular_;
  std::vector<ExprId> regex_;
  absl::flat_hash_map<ExprId, ByteSet> first_cache_;
};

}  // namespace

size_t MergeRegularRules(GrammarIr& ir) { return Merger(ir).Run(); }

}  // namespace maskd::grammar_text
