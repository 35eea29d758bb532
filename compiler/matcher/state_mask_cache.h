// Whole masks cached by parse state, shared by every matcher of a grammar.
//
// A character-level grammar (GBNF's arithmetic, c: every byte its own
// lexeme) walks tens of thousands of trie nodes per mask even with the walk
// memo, because every node is a parser step. But the same parse state comes
// back over and over in one output (after every operator, inside every
// identifier) and across sequences. ParseStateKeyer (parse_state_key.h)
// names a parse state by what its future depends on; this cache maps that
// name and the lexer position to the mask the walk computed, so a repeated
// state costs a copy of the mask.
//
// Only lexer positions whose walks were large ("hot": Note) pay for the key:
// in lexeme-level grammars (JSON Schema) the positions whose lexeme-end
// walks (MaskCache's boundaries) visit more than a few dozen nodes.
#ifndef MASKD_COMPILER_MATCHER_STATE_MASK_CACHE_H_
#define MASKD_COMPILER_MATCHER_STATE_MASK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

class StateMaskCache {
 public:
  using Mask = std::vector<uint32_t>;
  // Masks and interned keys stop being added past `max_bytes` (0: never).
  // Walks that visit at least `hot_nodes` trie nodes make their lexer
  // position hot (0: every position is).
  StateMaskCache(size_t max_bytes, size_t hot_nodes)
      : max_bytes_(max_bytes), hot_nodes_(hot_nodes) {}

  // The id of `key` (dense from 1), interning it on first use; 0 when the
  // budget is spent and the key is new.
  uint32_t Intern(const std::vector<uint64_t>& key) const;

  // Whether masks at this lexer position are worth a key.
  bool Hot(regex::StateId lexer, bool in_lexeme) const;
  // Records a walk of `nodes` trie nodes at this lexer position.
  void Note(regex::StateId lexer, bool in_lexeme, size_t nodes) const;

  // The mask of state `state` (an Intern id) at this lexer position, or null.
  std::shared_ptr<const Mask> Find(uint32_t state, regex::StateId lexer, bool in_lexeme) const;
  void Put(uint32_t state, regex::StateId lexer, bool in_lexeme, Mask mask) const;

  size_t bytes() const;
  // Masks held, and how many Find calls found one (for tests).
  size_t masks() const;
  size_t hits() const;

 private:
  static uint64_t Position(regex::StateId lexer, bool in_lexeme) {
    return uint64_t{lexer} << 1 | (in_lexeme ? 1 : 0);
  }
  struct Key {
    uint32_t state;
    uint64_t position;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.state, k.position);
    }
  };

  const size_t max_bytes_;
  const size_t hot_nodes_;
  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<std::vector<uint64_t>, uint32_t> ids_;     // guarded by mu_
  mutable absl::flat_hash_set<uint64_t> hot_;                            // guarded by mu_
  mutable absl::flat_hash_map<Key, std::shared_ptr<const Mask>> masks_;  // guarded by mu_
  mutable size_t bytes_ = 0;                                             // guarded by mu_
  mutable size_t hits_ = 0;                                              // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_STATE_MASK_CACHE_H_
