#include "compiler/matcher/vocab_index.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace maskd {

absl::StatusOr<std::shared_ptr<const VocabIndex>> VocabIndex::For(
    std::shared_ptr<const Tokenizer> tokenizer) {
  // Kept for the life of the process: a server has a handful of tokenizers,
  // and rebuilding the trie (tens of ms for 128k tokens) on every compile
  // would dominate compile time.
  static std::mutex mu;
  static auto* cache = new absl::flat_hash_map<std::string, std::shared_ptr<const VocabIndex>>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(tokenizer->id()); it != cache->end()) return it->second;
  std::vector<TokenBytes> tokens;
  tokens.reserve(tokenizer->vocab_size());
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    if (tokenizer->is_special(id)) continue;
    tokens.push_back({id, tokenizer->token_bytes(id)});
  }
  absl::StatusOr<TokenTrie> trie = TokenTrie::Build(tokens);
  if (!trie.ok()) return trie.status();
  std::shared_ptr<VocabIndex> index(new VocabIndex());
  index->tokenizer_ = std::move(tokenizer);
  index->trie_ = *std::move(trie);
  index->trie_.ForEachRootChild([&](uint32_t child) {
    uint32_t height = 0;
    index->trie_.WalkBelow(child, [&](uint32_t, size_t depth) {
      height = std::max<uint32_t>(height, static_cast<uint32_t>(depth));
      return true;
    });
    index->root_child_height_[index->trie_.byte(child)] = height;
  });
  index->mask_store_ = std::make_unique<SharedMaskStore>(kSharedMaskStoreBytes);
  (*cache)[index->tokenizer_->id()] = index;
  return index;
}

bool VocabIndex::is_eos(TokenId id) const {
  const std::vector<TokenId>& eos = tokenizer_->eos_ids();
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

}  // namespace maskd
