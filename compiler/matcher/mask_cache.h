// Per-lexer-state mask precomputation, shared by every matcher of a grammar.
//
// A token whose bytes all keep the current lexeme alive is allowed or not by
// the lexer state alone: the parser already allowed every lexeme the state
// holds (and the grammar is trimmed, so each leads to a sentence). Only where a
// lexeme ENDS inside a token does the answer depend on the parser. So for a
// lexer position we compute once, by walking the trie with the DFA only
// (a MaskWalk, shared with other grammars through the vocabulary's
// SharedMaskStore):
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
#include "compiler/matcher/shared_mask_store.h"
#include "compiler/matcher/vocab_index.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

struct MaskCacheEntry {
  std::shared_ptr<const MaskWalk> walk;
  // This grammar's lexer state for each of walk->boundaries (accepting).
  std::vector<regex::StateId> ended;
  size_t ByteSize() const { return sizeof(*this) + ended.capacity() * 4 + walk->ByteSize(); }
};

class MaskCache {
 public:
  // Entries stop being added past `max_bytes`; masks then use the full walk
  // (always, with 0).
  explicit MaskCache(size_t max_bytes) : max_bytes_(max_bytes), full_(max_bytes == 0) {}

  // The entry for a lexer position (state, whether a lexeme is in progress),
  // computing it on first use; null when the cache is full.
  std::shared_ptr<const MaskCacheEntry> Get(const regex::LazyDfa& dfa, const VocabIndex& vocab,
                                            regex::StateId state, bool in_lexeme) const;
  size_t bytes() const;

  // The lexer-only walk of the trie from `state` (exposed for tests).
  static std::shared_ptr<const MaskWalk> ComputeWalk(const regex::LazyDfa& dfa,
                                                     const TokenTrie& trie, size_t mask_words,
                                                     regex::StateId state, bool in_lexeme);

 private:
  const size_t max_bytes_;
  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex mu_;
  // Guarded by mu_.
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<const MaskCacheEntry>> entries_;
  mutable size_t bytes_ = 0;
  mutable bool full_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_MASK_CACHE_H_
