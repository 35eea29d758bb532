#include "compiler/matcher/mask_cache.h"

#include <algorithm>
#include <bit>
#include <string>

namespace maskd {

std::shared_ptr<const MaskCacheEntry> MaskCache::Get(const regex::LazyDfa& dfa,
                                                     const VocabIndex& vocab, regex::StateId state,
                                                     bool in_lexeme) const {
  const uint64_t key = (uint64_t{state} << 1) | (in_lexeme ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    if (full_) return nullptr;
  }
  // Computed outside the lock: two threads may both compute an entry; the
  // first one stored wins and both are identical.
  const SharedMaskStore::Key shared_key{dfa.StateFingerprint(state), in_lexeme};
  std::shared_ptr<const MaskWalk> walk = vocab.mask_store().Find(shared_key);
  if (walk == nullptr) {
    walk = vocab.mask_store().Insert(
        shared_key, ComputeWalk(dfa, vocab.trie(), vocab.mask_words(), state, in_lexeme));
  }
  auto entry = std::make_shared<MaskCacheEntry>();
  entry->ended.reserve(walk->boundaries.size());
  for (const MaskWalk::Boundary& b : walk->boundaries) {
    entry->ended.push_back(dfa.Walk(state, b.prefix));
  }
  entry->walk = std::move(walk);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.emplace(key, entry);
  if (inserted) {
    bytes_ += entry->ByteSize();
    if (bytes_ > max_bytes_) full_ = true;
  }
  return it->second;
}

size_t MaskCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

std::shared_ptr<const MaskWalk> MaskCache::ComputeWalk(const regex::LazyDfa& dfa,
                                                       const TokenTrie& trie, size_t mask_words,
                                                       regex::StateId state, bool in_lexeme) {
  auto walk = std::make_shared<MaskWalk>();
  std::vector<uint32_t> words(mask_words, 0);
  size_t inside = 0;
  absl::flat_hash_map<regex::StateId, size_t> boundary_index;
  // states[d] = lexer state after the first d bytes of the current path,
  // path[0, d) those bytes.
  std::vector<regex::StateId> states(trie.max_depth() + 1);
  std::string path(trie.max_depth() + 1, '\0');
  states[0] = state;
  trie.Walk([&](uint32_t node, size_t depth) {
    const regex::StateId parent = states[depth - 1];
    const uint8_t byte = trie.byte(node);
    const regex::StateId next = dfa.Step(parent, byte);
    if (next == regex::LazyDfa::kDead) {
      // The lexeme can end before this byte only if it has begun and accepts.
      if ((depth > 1 || in_lexeme) && dfa.IsAccepting(parent)) {
        auto [it, inserted] = boundary_index.emplace(parent, walk->boundaries.size());
        if (inserted) walk->boundaries.push_back({path.substr(0, depth - 1), {}});
        walk->boundaries[it->second].nodes.push_back(node);
      }
      return false;
    }
    states[depth] = next;
    path[depth - 1] = static_cast<char>(byte);
    trie.ForEachToken(node, [&](TokenId t) {
      words[t >> 5] |= uint32_t{1} << (t & 31);
      ++inside;
    });
    return true;
  });
  if (inside < mask_words) {
    // Sparse: the id list is smaller than the bitmask.
    for (size_t w = 0; w < words.size(); ++w) {
      for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
        walk->inside_ids.push_back(static_cast<TokenId>(w * 32 + std::countr_zero(bits)));
      }
    }
  } else {
    walk->inside_words = std::move(words);
  }
  return walk;
}

}  // namespace maskd
