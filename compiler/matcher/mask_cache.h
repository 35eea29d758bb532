// Per-lexer-state mask precomputation, shared by every matcher of a grammar.
//
// A token whose bytes all keep the current lexeme alive is allowed or not by
// the lexer state alone: the parser already allowed every lexeme the state
// holds (and the grammar is trimmed, so each leads to a sentence). Only where a
// lexeme ENDS inside a token does the answer depend on the parser. So for a
// lexer position we compute once, by walking the trie with the DFA only:
//  - `inside`: the tokens that never leave the lexeme;
//  - `boundaries`: the trie nodes where the lexeme would end, grouped by the
//    lexer state it ends in; the mask walk resumes there with the parser.
// A mask is then `inside` plus a walk of the (usually few, shallow) boundary
// subtrees: exactly what the full trie walk computes, for a fraction of it.
#ifndef MASKD_COMPILER_MATCHER_MASK_CACHE_H_
#define MASKD_COMPILER_MATCHER_MASK_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/regex/lazy_dfa.h"
#include "compiler/trie/token_trie.h"

namespace maskd {

struct MaskCacheEntry {
  // Tokens inside the lexeme: a bitmask when many, else sorted ids.
  std::vector<uint32_t> inside_words;  // empty when inside_ids is used
  std::vector<TokenId> inside_ids;
  struct Boundary {
    regex::StateId ended;         // the accepting lexer state the lexeme ends in
    std::vector<uint32_t> nodes;  // trie nodes whose byte ends it (preorder)
  };
  std::vector<Boundary> boundaries;
  size_t ByteSize() const {
    size_t n = sizeof(*this) + inside_words.capacity() * 4 + inside_ids.capacity() * 4;
    for (const Boundary& b : boundaries) n += sizeof(b) + b.nodes.capacity() * 4;
    return n;
  }
};

class MaskCache {
 public:
  // Entries stop being added past `max_bytes`; masks then use the full walk.
  explicit MaskCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The entry for a lexer position (state, whether a lexeme is in progress),
  // computing it on first use; null when the cache is full.
  std::shared_ptr<const MaskCacheEntry> Get(const regex::LazyDfa& dfa, const TokenTrie& trie,
                                            size_t mask_words, regex::StateId state,
                                            bool in_lexeme) const;
  size_t bytes() const;

 private:
  static std::shared_ptr<const MaskCacheEntry> Compute(const regex::LazyDfa& dfa,
                                                       const TokenTrie& trie, size_t mask_words,
                                                       regex::StateId state, bool in_lexeme);
  const size_t max_bytes_;
  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex mu_;
  // Guarded by mu_.
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<const MaskCacheEntry>> entries_;
  mutable size_t bytes_ = 0;
  mutable bool full_ = false;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_MASK_CACHE_H_
