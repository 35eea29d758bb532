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
//
// The walk of a new lexer state is itself assembled from one walk per child
// of the trie's root, each keyed by (child, lexer state after its byte) and
// stored like whole walks. Lexer states met for the first time mostly differ
// from known ones in a few first bytes only: inside an object key that must
// differ from the declared keys, every first byte that starts no declared
// key leads to the plain string state; so a new state costs the walks of the
// few subtrees where it really differs, not the whole 274k-node trie.
#ifndef MASKD_COMPILER_MATCHER_MASK_CACHE_H_
#define MASKD_COMPILER_MATCHER_MASK_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/matcher/shared_mask_store.h"
#include "compiler/matcher/vocab_index.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

struct MaskCacheEntry {
  std::shared_ptr<const MaskWalk> walk;
  // The boundary nodes of `walk` grouped by where the lexeme ends: one
  // parser scan per group. `ended` is a lexer state (accepting) with the
  // accepting tags of every node in the group -- all the scan reads. (Walks
  // run from states clamped to their horizon, so a group's nodes may end
  // in different states of this position, with equal tags.)
  struct EndGroup {
    regex::StateId ended;
    std::vector<const std::vector<uint32_t>*> nodes;  // lists owned by `walk`
  };
  std::vector<EndGroup> groups;
  // Bytes of the entry itself, its walk not included (walks are shared
  // between entries and counted once, see MaskCache::AddWalkBytesLocked).
  size_t OwnByteSize() const;
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

  // The lexer-only walk of the whole trie from `state`, from scratch (what
  // Get's assembled walks must equal; for tests).
  static std::shared_ptr<const MaskWalk> ComputeWalk(const regex::LazyDfa& dfa,
                                                     const TokenTrie& trie, size_t mask_words,
                                                     regex::StateId state, bool in_lexeme);

 private:
  // The walk below `node` (the root: the whole trie) from `state`, the lexer
  // state at `node`, assembled from the walks below its children; the
  // tokens ending at `node` included. `may_end_here`: the lexeme may end
  // before the first byte below `node`.
  std::shared_ptr<const MaskWalk> AssembleBelow(const regex::LazyDfa& dfa, const VocabIndex& vocab,
                                                uint32_t node, regex::StateId state,
                                                bool may_end_here) const;
  // The walk below `child` from `state`, the lexer state after the child's
  // byte, the child's own tokens included (memoized here and in the shared
  // store); assembled from its own children's when the subtree is large
  // (VocabIndex::walk_in_parts).
  std::shared_ptr<const MaskWalk> SubtreeWalk(const regex::LazyDfa& dfa, const VocabIndex& vocab,
                                              uint32_t child, regex::StateId state) const;
  // The inside tokens of a walk whose parts (one walk per child of `node`,
  // null where the child's byte kills the lexeme) are `parts`, patched from
  // a recently assembled walk of the same node that has most of them: a new
  // lexer state mostly differs from a known one in a few children, and
  // merging every part again costs one bit per inside token (a whole-trie
  // walk of a string holds the whole vocabulary). False when no recent walk
  // makes that cheaper than merging.
  using Parts = std::vector<std::pair<uint32_t, std::shared_ptr<const MaskWalk>>>;
  bool PatchInsideFromRecent(uint32_t node, const Parts& parts, size_t mask_words,
                             MaskWalk& walk) const;
  void RememberAssembled(uint32_t node, const Parts& parts,
                         std::shared_ptr<const MaskWalk> walk) const;
  // Counts `bytes` against the budget; mu_ held.
  void AddBytesLocked(size_t bytes) const;
  // Counts a walk's bytes the first time this cache holds it: the positions
  // of a long counted string share one walk, which must not fill the
  // budget thousands of times over. mu_ held.
  void AddWalkBytesLocked(const MaskWalk& walk) const;

  const size_t max_bytes_;
  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex mu_;
  // Guarded by mu_.
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<const MaskCacheEntry>> entries_;
  // (trie node, state after its byte) -> walk below it; guarded by mu_.
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<const MaskWalk>> subtrees_;
  // Serials of the walks counted in bytes_; guarded by mu_.
  mutable absl::flat_hash_set<uint64_t> counted_walks_;
  mutable size_t bytes_ = 0;
  // The last few walks AssembleBelow built, with their parts (a ring);
  // guarded by mu_.
  struct Assembled {
    uint32_t node;
    Parts parts;
    std::shared_ptr<const MaskWalk> walk;
  };
  static constexpr size_t kRecentAssembled = 4;
  mutable std::vector<Assembled> recent_;
  mutable size_t recent_next_ = 0;
  mutable bool full_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_MASK_CACHE_H_
