#include "compiler/compile/token_healing.h"

#include <algorithm>
#include <string_view>

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

}  // namespace maskd
