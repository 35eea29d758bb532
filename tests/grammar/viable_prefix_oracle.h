// A brute-force, obviously-correct reference for the Earley parser, written
// without any of the parser's tables: it works on the builder's raw rules
// (untrimmed, undefined-free) and decides, for one lexeme sequence w:
//  - derives[X][i][j]: X derives exactly w[i, j);
//  - prefix[X][i]: X derives w[i, n) followed by some lexeme string
//    (every symbol after the one that crosses position n must be productive);
// both as least fixpoints over all rules, so epsilon rules, left and right
// recursion and cycles need no special care.
#ifndef MASKD_TESTS_GRAMMAR_VIABLE_PREFIX_ORACLE_H_
#define MASKD_TESTS_GRAMMAR_VIABLE_PREFIX_ORACLE_H_

#include <cstdint>
#include <set>
#include <vector>

#include "compiler/grammar/grammar.h"

namespace maskd::testing {

class ViablePrefixOracle {
 public:
  explicit ViablePrefixOracle(const GrammarBuilder& builder)
      : num_lexemes_(builder.num_lexemes()),
        num_nts_(builder.num_nonterminals()),
        start_(builder.start()),
        rules_(builder.rules()) {
    productive_.assign(num_nts_, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (const Rule& r : rules_) {
        if (productive_[r.lhs]) continue;
        bool all = true;
        for (Symbol s : r.rhs) all = all && (s.is_lexeme() || productive_[s.id()]);
        if (all) productive_[r.lhs] = changed = true;
      }
    }
  }

  bool Productive(NonterminalId a) const { return productive_[a]; }

  // w is a complete sentence.
  bool IsSentence(const std::vector<LexemeId>& w) const {
    Tables t = Compute(w);
    return t.Derives(start_, 0, w.size());
  }
  // w is a prefix of some sentence.
  bool IsViablePrefix(const std::vector<LexemeId>& w) const {
    Tables t = Compute(w);
    return t.Prefix(start_, 0);
  }
  // Builder lexeme ids t such that w + t is a viable prefix.
  std::set<LexemeId> Allowed(std::vector<LexemeId> w) const {
    std::set<LexemeId> out;
    for (LexemeId t = 0; t < num_lexemes_; ++t) {
      w.push_back(t);
      if (IsViablePrefix(w)) out.insert(t);
      w.pop_back();
    }
    return out;
  }

 private:
  // Sets of input positions 0..n are bitmasks (inputs are short: n < 32).
  using Positions = uint32_t;

  struct Tables {
    size_t n;
    std::vector<Positions> derives;  // [a * (n + 1) + i]: every j with a =>* w[i, j).
    std::vector<char> prefix;        // [a * (n + 1) + i]
    bool Derives(size_t a, size_t i, size_t j) const { return (derives[a * (n + 1) + i] >> j) & 1; }
    bool Prefix(size_t a, size_t i) const { return prefix[a * (n + 1) + i]; }
  };

  // Positions reachable after matching `s` starting at each position in `from`.
  static Positions Advance(const Tables& t, const std::vector<LexemeId>& w, Positions from,
                           Symbol s) {
    Positions to = 0;
    for (size_t m = 0; m <= t.n; ++m) {
      if (((from >> m) & 1) == 0) continue;
      if (s.is_lexeme()) {
        if (m < t.n && w[m] == s.id()) to |= Positions{1} << (m + 1);
      } else {
        to |= t.derives[s.id() * (t.n + 1) + m];
      }
    }
    return to;
  }

  Tables Compute(const std::vector<LexemeId>& w) const {
    Tables t;
    t.n = w.size();
    const size_t n = t.n;
    t.derives.assign(num_nts_ * (n + 1), 0);
    t.prefix.assign(num_nts_ * (n + 1), 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (const Rule& r : rules_) {
        for (size_t i = 0; i <= n; ++i) {
          Positions reach = Positions{1} << i;
          for (Symbol s : r.rhs) reach = Advance(t, w, reach, s);
          Positions& d = t.derives[r.lhs * (n + 1) + i];
          if ((reach & ~d) != 0) {
            d |= reach;
            changed = true;
          }
        }
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Rule& r : rules_) {
        for (size_t i = 0; i <= n; ++i) {
          char& p = t.prefix[r.lhs * (n + 1) + i];
          if (p) continue;
          bool found = false;
          if (r.rhs.empty()) {
            found = (i == n);
          } else {
            Positions reach = Positions{1} << i;
            for (size_t l = 0; l < r.rhs.size() && !found; ++l) {
              bool rest_productive = true;
              for (size_t q = l + 1; q < r.rhs.size(); ++q) {
                Symbol s = r.rhs[q];
                rest_productive = rest_productive && (s.is_lexeme() || productive_[s.id()]);
              }
              const Symbol y = r.rhs[l];
              for (size_t m = i; m <= n && rest_productive && !found; ++m) {
                if (((reach >> m) & 1) == 0) continue;
                if (y.is_lexeme()) {
                  found = (m == n) || (m + 1 == n && w[m] == y.id());
                } else {
                  found = t.Prefix(y.id(), m);
                }
              }
              reach = Advance(t, w, reach, y);
            }
          }
          if (found) p = changed = true;
        }
      }
    }
    return t;
  }

  size_t num_lexemes_;
  size_t num_nts_;
  NonterminalId start_;
  std::vector<Rule> rules_;
  std::vector<bool> productive_;
};

}  // namespace maskd::testing

#endif  // MASKD_TESTS_GRAMMAR_VIABLE_PREFIX_ORACLE_H_
