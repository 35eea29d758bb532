#include "compiler/compile/token_healing.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace maskd {

Healing HealPromptTail(const Tokenizer& tokenizer, std::span<const TokenId> tail) {
  // A tail as long as the longest token cannot be a proper prefix of one, so
  // a long tail costs no more than a short one.
  size_t longest = 0;
  for (TokenId t = 0; t < tokenizer.vocab_size(); ++t) {
    if (!tokenizer.is_special(t)) longest = std::max(longest, tokenizer.token_bytes(t).size());
  }
  // The candidate tails, shortest first: bytes of the last k tokens.
  std::vector<std::string> suffixes;
  std::string bytes;
  for (size_t k = 1; k <= tail.size(); ++k) {
    const TokenId id = tail[tail.size() - k];
    if (id >= tokenizer.vocab_size() || tokenizer.is_special(id)) break;
    if (bytes.size() + tokenizer.token_bytes(id).size() >= longest) break;
    bytes.insert(0, tokenizer.token_bytes(id));
    suffixes.push_back(bytes);
  }
  // One pass over the vocabulary: the longest suffix some longer token starts with.
  size_t best = 0;
  for (TokenId t = 0; t < tokenizer.vocab_size() && best < suffixes.size(); ++t) {
    if (tokenizer.is_special(t)) continue;
    const std::string_view token = tokenizer.token_bytes(t);
    for (size_t k = suffixes.size(); k > best; --k) {
      const std::string& s = suffixes[k - 1];
      if (token.size() > s.size() && token.substr(0, s.size()) == s) {
        best = k;
        break;
      }
    }
  }
  Healing healing;
  if (best > 0) {
    healing.tokens_to_drop = static_cast<uint32_t>(best);
    healing.removed_bytes = suffixes[best - 1];
  }
  return healing;
}

namespace {

// The non-special tokens' bytes, sorted: the tokens that start with s are
// contiguous from lower_bound(s), s itself (when a token) first.
struct SortedVocab {
  std::vector<std::string_view> bytes;
  size_t longest = 0;

  explicit SortedVocab(const Tokenizer& tokenizer) {
    for (TokenId t = 0; t < tokenizer.vocab_size(); ++t) {
      if (tokenizer.is_special(t) || tokenizer.token_bytes(t).empty()) continue;
      bytes.push_back(tokenizer.token_bytes(t));
      longest = std::max(longest, bytes.back().size());
    }
    std::sort(bytes.begin(), bytes.end());
  }

  // Whether some token is longer than `s` and starts with it.
  bool ProperPrefixOfAToken(std::string_view s) const {
    auto it = std::lower_bound(bytes.begin(), bytes.end(), s);
    for (int seen = 0; it != bytes.end() && seen < 2 && it->starts_with(s); ++it, ++seen) {
      if (it->size() > s.size()) return true;
    }
    return false;
  }
};

// One SortedVocab per live tokenizer. Entries hold the tokenizer weakly (the
// views point into it), so none is used after its tokenizer or for another
// tokenizer at the same address.
struct SortedVocabCache {
  struct Entry {
    std::weak_ptr<const Tokenizer> tokenizer;
    std::shared_ptr<const SortedVocab> vocab;
  };
  std::mutex mu;
  std::map<const Tokenizer*, Entry> entries;  // guarded by mu
};

SortedVocabCache& Cache() {
  static SortedVocabCache* cache = new SortedVocabCache();
  return *cache;
}

// The cached SortedVocab of `tokenizer`, or null.
std::shared_ptr<const SortedVocab> FindSortedVocab(
    const std::shared_ptr<const Tokenizer>& tokenizer) {
  SortedVocabCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (auto it = cache.entries.find(tokenizer.get());
      it != cache.entries.end() && it->second.tokenizer.lock() == tokenizer) {
    return it->second.vocab;
  }
  return nullptr;
}

std::shared_ptr<const SortedVocab> SortedVocabFor(
    const std::shared_ptr<const Tokenizer>& tokenizer) {
  if (std::shared_ptr<const SortedVocab> found = FindSortedVocab(tokenizer)) return found;
  auto vocab = std::make_shared<const SortedVocab>(*tokenizer);
  SortedVocabCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  std::erase_if(cache.entries, [](const auto& entry) { return entry.second.tokenizer.expired(); });
  cache.entries[tokenizer.get()] = SortedVocabCache::Entry{tokenizer, vocab};
  return vocab;
}

}  // namespace

Healing HealPromptTail(const std::shared_ptr<const Tokenizer>& tokenizer,
                       std::span<const TokenId> tail) {
  const std::shared_ptr<const SortedVocab> vocab = SortedVocabFor(tokenizer);
  Healing healing;
  std::string bytes;
  for (size_t k = 1; k <= tail.size(); ++k) {
    const TokenId id = tail[tail.size() - k];
    if (id >= tokenizer->vocab_size() || tokenizer->is_special(id)) break;
    if (bytes.size() + tokenizer->token_bytes(id).size() >= vocab->longest) break;
    bytes.insert(0, tokenizer->token_bytes(id));
    if (vocab->ProperPrefixOfAToken(bytes)) {
      healing.tokens_to_drop = static_cast<uint32_t>(k);
      healing.removed_bytes = bytes;
    }
  }
  return healing;
}

void PrepareTokenHealing(const std::shared_ptr<const Tokenizer>& tokenizer) {
  (void)SortedVocabFor(tokenizer);
}

bool TokenHealingPrepared(const std::shared_ptr<const Tokenizer>& tokenizer) {
  return FindSortedVocab(tokenizer) != nullptr;
}

}  // namespace maskd
