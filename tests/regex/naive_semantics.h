// A slow, obviously correct reading of an ExprSet expression as a set of
// byte strings (straight from the definitions of the operators), used as the
// oracle for derivatives, the lazy DFA and the emptiness check.
#ifndef MASKD_TESTS_REGEX_NAIVE_SEMANTICS_H_
#define MASKD_TESTS_REGEX_NAIVE_SEMANTICS_H_

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

#include "compiler/regex/expr_set.h"

namespace maskd::regex::testing {

inline bool NaiveMatches(const ExprSet& p, ExprId e, std::string_view s) {
  switch (p.kind(e)) {
    case ExprKind::kNothing:
      return false;
    case ExprKind::kEpsilon:
      return s.empty();
    case ExprKind::kByteSet:
      return s.size() == 1 && p.GetByteSet(e).Contains(static_cast<uint8_t>(s[0]));
    case ExprKind::kConcat:
      for (size_t i = 0; i <= s.size(); ++i) {
        if (NaiveMatches(p, p.Args(e)[0], s.substr(0, i)) &&
            NaiveMatches(p, p.Args(e)[1], s.substr(i))) {
          return true;
        }
      }
      return false;
    case ExprKind::kOr:
      return std::any_of(p.Args(e).begin(), p.Args(e).end(),
                         [&](ExprId a) { return NaiveMatches(p, a, s); });
    case ExprKind::kAnd:
      return std::all_of(p.Args(e).begin(), p.Args(e).end(),
                         [&](ExprId a) { return NaiveMatches(p, a, s); });
    case ExprKind::kNot:
      return !NaiveMatches(p, p.Args(e)[0], s);
    case ExprKind::kMachine: {
      const ByteMachine& m = *p.GetMachine(e);
      uint64_t state = p.MachineState(e);
      for (char c : s) {
        std::optional<uint64_t> next = m.Step(state, static_cast<uint8_t>(c));
        if (!next) return false;
        state = *next;
      }
      return m.Accepting(state);
    }
    case ExprKind::kRepeat: {
      // Positions reachable after k iterations. More than min + |s| + 1
      // iterations add only empty ones, so that many suffice.
      const ExprId x = p.Args(e)[0];
      const uint64_t min = p.RepeatMin(e), max = p.RepeatMax(e);
      const uint64_t limit = std::min<uint64_t>(max, min + s.size() + 1);
      std::set<size_t> cur{0};
      for (uint64_t k = 0;; ++k) {
        if (k >= min && cur.count(s.size())) return true;
        if (k == limit || cur.empty()) return false;
        std::set<size_t> next;
        for (size_t i : cur) {
          for (size_t j = i; j <= s.size(); ++j) {
            if (NaiveMatches(p, x, s.substr(i, j - i))) next.insert(j);
          }
        }
        cur = std::move(next);
      }
    }
  }
  return false;
}

}  // namespace maskd::regex::testing

#endif  // MASKD_TESTS_REGEX_NAIVE_SEMANTICS_H_
