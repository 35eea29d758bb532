#include "compiler/matcher/key_nodes.h"

#include "absl/container/flat_hash_map.h"

namespace maskd {
namespace {

// What a lexer state's live lexemes are: some unique key, some other lexeme;
// the keys are listed (a range of KeyNodeTable::keys) only when nothing else
// lives, the only case where they decide.
struct StateKeys {
  bool key = false;
  bool other = false;
  uint32_t keys_begin = 0, keys_end = 0;
};

}  // namespace

KeyNodeTable BuildKeyNodeTable(const regex::LazyDfa& dfa, const Grammar& grammar,
                               const TokenTrie& trie, regex::StateId state, bool in_lexeme,
                               size_t max_nodes) {
  KeyNodeTable table;
  absl::flat_hash_map<regex::StateId, StateKeys> known;
  auto classify = [&](regex::StateId s) -> StateKeys {
    auto [it, added] = known.try_emplace(s);
    StateKeys& k = it->second;
    if (!added) return k;
    for (const regex::TaggedExpr& e : dfa.Exprs(s)) {
      (grammar.lexeme(e.tag).flags.role == LexemeRole::kUniqueKey ? k.key : k.other) = true;
    }
    k.keys_begin = k.keys_end = static_cast<uint32_t>(table.keys.size());
    if (k.key && !k.other) {
      for (const regex::TaggedExpr& e : dfa.Exprs(s)) table.keys.push_back(e.tag);
      k.keys_end = static_cast<uint32_t>(table.keys.size());
    }
    return k;
  };
  std::vector<regex::StateId> states(trie.max_depth() + 1);
  states[0] = state;
  trie.WalkBelow(TokenTrie::kRoot, [&](uint32_t node, size_t depth) {
    if (!table.complete) return false;
    const regex::StateId parent = states[depth - 1];
    const regex::StateId next = dfa.Step(parent, trie.byte(node));
    if (next == regex::LazyDfa::kDead) return false;
    const StateKeys k = classify(next);
    // No key lives here: nothing below depends on the keys taken.
    if (!k.key) return false;
    states[depth] = next;
    if (!k.other) {
      if (table.nodes.size() >= max_nodes) {
        table.complete = false;
        return false;
      }
      table.nodes.push_back(KeyNodeTable::KeyNode{
          node, trie.subtree_end(node), parent, depth > 1 || in_lexeme, k.keys_begin, k.keys_end});
    }
    return true;
  });
  return table;
}

}  // namespace maskd
