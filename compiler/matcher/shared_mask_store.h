// Lexer-only mask walks shared by every grammar compiled for one tokenizer.
//
// What a mask-cache entry holds (mask_cache.h) depends only on the lexer
// state's expressions and the vocabulary: which tokens stay inside the
// lexeme, and at which trie nodes it may end. JSON Schemas repeat the same
// lexemes (strings, numbers, keys, whitespace tails) across grammars, so the
// walks are stored once per tokenizer under the state's pool-independent
// fingerprint (LazyDfa::StateFingerprint); a grammar meeting a state some
// other grammar already met skips the walk of the whole trie.
//
// Thread safety: all methods may be called concurrently (one std::mutex;
// walks are computed outside it by the callers).
#ifndef MASKD_COMPILER_MATCHER_SHARED_MASK_STORE_H_
#define MASKD_COMPILER_MATCHER_SHARED_MASK_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/regex/expr_set.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

// A number no other MaskWalk of the process has (see MaskWalk::serial).
inline uint64_t NewMaskWalkSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// The walk of the token trie (or of one node's subtree) from one lexer
// position with the lexer alone.
struct MaskWalk {
  // Names this walk's content for as long as the process runs (unlike its
  // address, which a later walk may reuse): whole-trie walks assembled from
  // the same subtree walks are equal, and are found again by their serials.
  const uint64_t serial = NewMaskWalkSerial();
  // Tokens that never leave the lexeme: a bitmask when many, else ids (in
  // no particular order).
  std::vector<uint32_t> inside_words;  // empty when inside_ids is used
  std::vector<TokenId> inside_ids;
  // Trie nodes whose byte ends the lexeme (preorder), grouped by the lexer
  // state it ends in. A group names that state by the bytes leading to it
  // from the walk's start state (any of the group's paths), so each grammar
  // finds its own state id for it.
  struct Boundary {
    std::string prefix;
    std::vector<uint32_t> nodes;
  };
  std::vector<Boundary> boundaries;

  size_t ByteSize() const {
    size_t n = sizeof(*this) + inside_words.capacity() * 4 + inside_ids.capacity() * 4;
    for (const Boundary& b : boundaries) {
      n += sizeof(b) + b.prefix.capacity() + b.nodes.capacity() * 4;
    }
    return n;
  }
};

class SharedMaskStore {
 public:
  // Marks a walk of the whole trie (Key::subtree).
  static constexpr uint32_t kWholeTrie = 0xFFFFFFFFu;
  // Marks a whole-trie walk keyed by the subtree walks it was assembled
  // from (Key::state folds their serials), not by a lexer state.
  static constexpr uint32_t kAssembled = 0xFFFFFFFEu;

  // A lexer position: the state's fingerprint and whether a lexeme is in
  // progress (a lexeme that has not begun cannot end at the first byte);
  // and which part of the trie was walked: all of it, or the subtree below
  // one child of the root (a trie node; the state is then the one after that
  // node's byte, with a lexeme in progress). `horizon`: `state` is the
  // state's horizon fingerprint over the subtree's height (regex/horizon.h),
  // not its exact one; states that differ only beyond what the walk looks
  // at share the walk.
  struct Key {
    regex::Fingerprint state;
    bool in_lexeme = false;
    uint32_t subtree = kWholeTrie;
    bool horizon = false;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.state, k.in_lexeme, k.subtree, k.horizon);
    }
  };

  // Past `max_bytes` the least recently used walks are dropped (grammars
  // holding one keep it alive). The store is split into `shards` by key
  // hash, each with its own lock, LRU order and share of the budget: one
  // table of a million walks would stall the insert that grows it (a
  // rehash of 57k slots took 3.6 ms, and they double), and one lock would
  // serialize a server's mask threads.
  static constexpr size_t kDefaultShards = 64;
  explicit SharedMaskStore(size_t max_bytes, size_t shards = kDefaultShards);

  // The stored walk, or null.
  std::shared_ptr<const MaskWalk> Find(const Key& key);
  // Stores `walk` unless the key is already there; returns the stored one.
  std::shared_ptr<const MaskWalk> Insert(const Key& key, std::shared_ptr<const MaskWalk> walk);
  size_t bytes() const;
  size_t size() const;

 private:
  struct Slot {
    std::shared_ptr<const MaskWalk> walk;
    std::list<Key>::iterator lru;  // position in the shard's lru
  };
  struct Shard {
    // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside
    // Debian's uninstrumented Abseil.
    mutable std::mutex mu;
    std::list<Key> lru;                    // most recently used first; guarded by mu
    absl::flat_hash_map<Key, Slot> slots;  // guarded by mu
    size_t bytes = 0;                      // guarded by mu
  };
  Shard& ShardOf(const Key& key);

  const size_t max_shard_bytes_;
  std::vector<Shard> shards_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_SHARED_MASK_STORE_H_
