#include "compiler/matcher/vocab_index.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace maskd {

namespace {

// Kept for the life of the process (unless Release): a server has a handful
// of tokenizers, and rebuilding the trie (tens of ms for 128k tokens) on
// every compile would dominate compile time.
struct IndexCache {
  std::mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const VocabIndex>> by_id;  // guarded by mu
};

IndexCache& Cache() {
  static auto* cache = new IndexCache();
  return *cache;
}

}  // namespace

void VocabIndex::Release(const std::string& id) {
  std::shared_ptr<const VocabIndex> released;  // freed outside the lock
  std::lock_guard<std::mutex> lock(Cache().mu);
  if (auto it = Cache().by_id.find(id); it != Cache().by_id.end()) {
    released = std::move(it->second);
    Cache().by_id.erase(it);
  }
}

absl::StatusOr<std::shared_ptr<const VocabIndex>> VocabIndex::For(
    std::shared_ptr<const Tokenizer> tokenizer) {
  std::mutex& mu = Cache().mu;
  auto* cache = &Cache().by_id;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(tokenizer->id()); it != cache->end()) return it->second;
  std::vector<TokenBytes> tokens;
  tokens.reserve(tokenizer->vocab_size());
  std::vector<TokenId> quote_tokens;
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    if (tokenizer->is_special(id)) continue;
    tokens.push_back({id, tokenizer->token_bytes(id)});
    if (!tokens.back().bytes.empty() && tokens.back().bytes.find('"') != std::string_view::npos) {
      quote_tokens.push_back(id);
    }
  }
  absl::StatusOr<TokenTrie> trie = TokenTrie::Build(tokens);
  if (!trie.ok()) return trie.status();
  std::shared_ptr<VocabIndex> index(new VocabIndex());
  index->tokenizer_ = std::move(tokenizer);
  index->trie_ = *std::move(trie);
  // Heights from the leaves up: in preorder a child comes after its
  // parent, so a reverse scan sees every child before its parent.
  const TokenTrie& t = index->trie_;
  std::vector<uint32_t> parent(t.num_nodes(), TokenTrie::kRoot);
  std::vector<uint32_t> path(t.max_depth() + 1, TokenTrie::kRoot);
  t.Walk([&](uint32_t node, size_t depth) {
    path[depth] = node;
    parent[node] = path[depth - 1];
    return true;
  });
  std::vector<uint32_t> heights(t.num_nodes(), 0);
  for (uint32_t node = static_cast<uint32_t>(t.num_nodes()); node-- > 1;) {
    heights[parent[node]] = std::max(heights[parent[node]], heights[node] + 1);
  }
  index->heights_.reserve(heights.size());
  for (uint32_t h : heights) index->heights_.push_back(static_cast<uint16_t>(std::min(h, 0xFFFFu)));
  index->parents_ = std::move(parent);
  index->quote_tokens_ = std::move(quote_tokens);
  index->mask_store_ = std::make_unique<SharedMaskStore>(kSharedMaskStoreBytes);
  (*cache)[index->tokenizer_->id()] = index;
  return index;
}

std::string VocabIndex::PathTo(uint32_t node) const {
  std::string out;
  for (; node != TokenTrie::kRoot; node = parents_[node])
    out.push_back(static_cast<char>(trie_.byte(node)));
  std::reverse(out.begin(), out.end());
  return out;
}

bool VocabIndex::is_eos(TokenId id) const {
  const std::vector<TokenId>& eos = tokenizer_->eos_ids();
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

}  // namespace maskd
