#include "compiler/matcher/mask_cache.h"

#include <algorithm>
#include <bit>

namespace maskd {

std::shared_ptr<const MaskCacheEntry> MaskCache::Get(const regex::LazyDfa& dfa,
                                                     const TokenTrie& trie, size_t mask_words,
                                                     regex::StateId state, bool in_lexeme) const {
  const uint64_t key = (uint64_t{state} << 1) | (in_lexeme ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    if (full_) return nullptr;
  }
  // Computed outside the lock: two threads may both compute an entry; the
  // first one stored wins and both are identical.
  std::shared_ptr<const MaskCacheEntry> entry = Compute(dfa, trie, mask_words, state, in_lexeme);
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

std::shared_ptr<const MaskCacheEntry> MaskCache::Compute(const regex::LazyDfa& dfa,
                                                         const TokenTrie& trie, size_t mask_words,
                                                         regex::StateId state, bool in_lexeme) {
  auto entry = std::make_shared<MaskCacheEntry>();
  std::vector<uint32_t> words(mask_words, 0);
  size_t inside = 0;
  absl::flat_hash_map<regex::StateId, size_t> boundary_index;
  auto add_boundary = [&](regex::StateId ended, uint32_t node) {
    auto [it, inserted] = boundary_index.emplace(ended, entry->boundaries.size());
    if (inserted) entry->boundaries.push_back({ended, {}});
    entry->boundaries[it->second].nodes.push_back(node);
  };
  // The DFA-only walk; states[d] = lexer state after the first d bytes.
  std::vector<regex::StateId> states(trie.max_depth() + 1);
  states[0] = state;
  trie.Walk([&](uint32_t node, size_t depth) {
    const regex::StateId parent = states[depth - 1];
    const regex::StateId next = dfa.Step(parent, trie.byte(node));
    if (next == regex::LazyDfa::kDead) {
      // The lexeme can end before this byte only if it has begun and accepts.
      if ((depth > 1 || in_lexeme) && dfa.IsAccepting(parent)) add_boundary(parent, node);
      return false;
    }
    states[depth] = next;
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
        entry->inside_ids.push_back(static_cast<TokenId>(w * 32 + std::countr_zero(bits)));
      }
    }
  } else {
    entry->inside_words = std::move(words);
  }
  return entry;
}

}  // namespace maskd
