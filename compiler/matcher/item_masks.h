// Item masks: XGrammar's split of a mask into the tokens a grammar position
// decides alone and the few that depend on the rest of the parse, for
// character-level grammars (GBNF's arithmetic, c, json_arr: every lexeme
// one code point, so a new parse state would run the parser at every
// viable trie node).
//
// For each dotted position p = (A -> alpha . beta) the compile walks the
// token trie once from an isolated parse (EarleyParser::ResetInside): the
// item (p, o) with, in its origin set o, only what predicting A puts there.
// That view is a part of every real parse holding (p, o), so every token it
// allows is allowed (`tokens`). Where it completes a nonterminal B at o, a
// real parse may also advance items of o outside the view (the rule that
// called A); their bytes can only start with a byte of ext-FOLLOW(B) (the
// first bytes after B in the grammar's rules, those the view models left
// out). The children of such a node with such a byte are `frontier` nodes:
// their subtrees are walked with the real parser at mask time.
//
// A mask at a parse state whose top set D holds the kernel items K (origin
// before D, dot not at the end; the others are predicted or completed) is
// then the union over K of their `tokens`, plus the real walk of the union
// of their frontier subtrees (and the paths to them). Exact: a token the
// real parse allows has a derivation that starts in some kernel item's rule
// instance; either it stays inside that item's view (then it is in its
// `tokens`), or it leaves it after some prefix u where the view completes a
// nonterminal at o, and the next byte starts the outside continuation: a
// frontier node on the token's path. Lexing must not depend on the parse
// beyond the allowed set, hence code-point lexemes only (UTF-8 is
// prefix-free: a lexeme ends exactly where its code point does).
#ifndef MASKD_COMPILER_MATCHER_ITEM_MASKS_H_
#define MASKD_COMPILER_MATCHER_ITEM_MASKS_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/regex/byte_set.h"
#include "compiler/trie/token_trie.h"

namespace maskd {

class CompiledGrammarImpl;

class ItemMasks {
 public:
  struct Entry {
    std::vector<uint32_t> tokens;    // allowed by the item's view alone
    std::vector<uint32_t> frontier;  // trie nodes, ascending: real walk below
  };
  // A mask's part for one set of kernel positions: `words` (the union of the
  // entries' tokens) and the union of their frontiers, ascending, without
  // nodes inside another's subtree.
  struct Combined {
    std::vector<uint32_t> words;
    std::vector<uint32_t> frontier;
  };

  // The table of `grammar` (whose lexing the parse cannot change:
  // GrammarIr::context_free_lexing), or null where item masks do not apply
  // (object frames or distinct values, too many positions), a walk hit a
  // limit, the table would pass `max_bytes` or its walks a node budget, or
  // the compile passed `deadline` or was cancelled (then masks walk the
  // whole trie, as without it). `lexeme_first` is per lexeme the bytes its strings may
  // start with (a superset).
  static std::unique_ptr<ItemMasks> Build(const CompiledGrammarImpl& grammar,
                                          const std::vector<regex::ByteSet>& lexeme_first,
                                          size_t max_bytes,
                                          std::chrono::steady_clock::time_point deadline,
                                          const std::atomic<bool>* cancelled);

  // The part for these kernel positions (sorted, unique), combined once and
  // kept; null when one has no entry or the budget is spent.
  std::shared_ptr<const Combined> Combine(const std::vector<uint32_t>& kernel,
                                          size_t mask_words) const;

  size_t bytes() const;
  size_t positions() const { return entries_.size(); }

 private:
  ItemMasks(size_t max_bytes, const TokenTrie& trie) : max_bytes_(max_bytes), trie_(trie) {}

  const size_t max_bytes_;
  const TokenTrie& trie_;  // the vocabulary's, which the grammar holds
  // Per position; null for positions without one (dot at the start or end).
  std::vector<std::shared_ptr<const Entry>> entries_;
  size_t entry_bytes_ = 0;
  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<std::vector<uint32_t>, std::shared_ptr<const Combined>>
      combined_;  // guarded by mu_
  // Written under mu_, read without it (SizeBytes runs on every step).
  mutable std::atomic<size_t> combined_bytes_{0};
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_ITEM_MASKS_H_
