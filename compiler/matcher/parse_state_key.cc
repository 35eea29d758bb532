#include "compiler/matcher/parse_state_key.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace maskd {
namespace {

// Codes in a key. An element is position << 32 | code; the first element
// says what the key names (positions are far below 2^32 - 2).
constexpr uint32_t kThisSet = 0xFFFFFFFFu;  // an item predicted in the named set
constexpr uint64_t kContextTag = uint64_t{0xFFFFFFFFu} << 32;
constexpr uint64_t kTopTag = uint64_t{0xFFFFFFFEu} << 32;

// The nonterminal after the dot at `pos`, or -1 (a lexeme, or the end).
int64_t WaitsOn(const Grammar& g, uint32_t pos) {
  const uint32_t sym = g.pos_symbol(pos);
  if (sym == Grammar::kEndOfRule || (sym & Symbol::kNonterminalBit) == 0) return -1;
  return Symbol::FromBits(sym).id();
}

}  // namespace

uint32_t ParseStateKeyer::Context(const EarleyParser& parser, const StateMaskCache& cache,
                                  uint32_t set, NonterminalId nt, size_t nesting) {
  if (memo_.size() <= set) memo_.resize(set + 1);
  for (const auto& [n, id] : memo_[set]) {
    if (n == nt) return id;
  }
  if (nesting > kMaxNesting) return kNoKey;
  const Grammar& g = parser.grammar();
  // The nonterminals completing `nt` here can complete in turn: nt, and the
  // left-hand side of every item predicted here that waits on one of them.
  std::vector<std::pair<uint32_t, uint32_t>> waiting;  // (pos, origin), dot before a nonterminal
  parser.ForEachItemOf(set, [&](uint32_t pos, uint32_t origin) {
    if (WaitsOn(g, pos) >= 0) waiting.emplace_back(pos, origin);
  });
  // The least set holding nt and, with the nonterminal an item predicted
  // here waits on, that item's left-hand side: a search over the predicted
  // items sorted by what they wait on (a set of an object with many
  // optional members predicts thousands of items, and a fixpoint pass per
  // nonterminal reached cost 10 ms there).
  std::vector<std::pair<NonterminalId, NonterminalId>> predicted;  // (waits on, lhs)
  for (const auto& [pos, origin] : waiting) {
    if (origin != set) continue;
    predicted.emplace_back(static_cast<NonterminalId>(WaitsOn(g, pos)),
                           g.rule_lhs(g.pos_rule(pos)));
  }
  std::sort(predicted.begin(), predicted.end());
  absl::flat_hash_set<NonterminalId> reach = {nt};
  std::vector<NonterminalId> pending = {nt};
  while (!pending.empty()) {
    const NonterminalId on = pending.back();
    pending.pop_back();
    auto it = std::lower_bound(predicted.begin(), predicted.end(),
                               std::pair<NonterminalId, NonterminalId>{on, 0});
    for (; it != predicted.end() && it->first == on; ++it) {
      if (reach.insert(it->second).second) pending.push_back(it->second);
    }
  }
  std::vector<uint64_t> key = {kContextTag | nt};
  // Leo's reading: when every item reached is one symbol from its end and
  // one alone came from before this set, completing nt here only completes
  // items (which later sets never read) and then that item's nonterminal in
  // its origin: the two contexts are one. A right-recursive `ws ::= ([ ] ws)?`
  // would otherwise nest one context per blank.
  bool penultimate = true;
  size_t older = 0;
  uint32_t older_code = kNoKey;
  for (const auto& [pos, origin] : waiting) {
    if (!reach.contains(static_cast<NonterminalId>(WaitsOn(g, pos)))) continue;
    uint32_t code = kThisSet;
    if (origin != set) {
      code = Context(parser, cache, origin, g.rule_lhs(g.pos_rule(pos)), nesting + 1);
      if (code == kNoKey) {
        // Remembered: the next mask would fail the same way (or merely not
        // be cached, which is never wrong).
        memo_[set].emplace_back(nt, kNoKey);
        return kNoKey;
      }
      ++older;
      older_code = code;
    }
    penultimate = penultimate && g.pos_symbol(pos + 1) == Grammar::kEndOfRule;
    key.push_back(uint64_t{pos} << 32 | code);
  }
  if (penultimate && older == 1) {
    memo_[set].emplace_back(nt, older_code);
    return older_code;
  }
  std::sort(key.begin() + 1, key.end());
  const uint32_t id = cache.Intern(key);
  memo_[set].emplace_back(nt, id);
  return id;
}

uint32_t ParseStateKeyer::Key(const EarleyParser& parser, const StateMaskCache& cache) {
  const Grammar& g = parser.grammar();
  const uint32_t top = static_cast<uint32_t>(parser.Depth());
  std::vector<std::pair<uint32_t, uint32_t>> items;
  parser.ForEachItemOf(top, [&](uint32_t pos, uint32_t origin) {
    // Completed items did their work when the set was built.
    if (g.pos_symbol(pos) != Grammar::kEndOfRule) items.emplace_back(pos, origin);
  });
  std::vector<uint64_t> key = {kTopTag};
  for (const auto& [pos, origin] : items) {
    uint32_t code = kThisSet;
    if (origin != top) {
      code = Context(parser, cache, origin, g.rule_lhs(g.pos_rule(pos)), 0);
      if (code == kNoKey) return kNoKey;
    }
    key.push_back(uint64_t{pos} << 32 | code);
  }
  std::sort(key.begin() + 1, key.end());
  return cache.Intern(key);
}

}  // namespace maskd
