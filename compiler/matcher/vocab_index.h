// What every grammar compiled for one tokenizer shares: the trie of the tokens
// a mask may allow (all but special ones), the EOS ids, the mask width. Built
// once per tokenizer id and kept for the life of the process.
#ifndef MASKD_COMPILER_MATCHER_VOCAB_INDEX_H_
#define MASKD_COMPILER_MATCHER_VOCAB_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/matcher/shared_mask_store.h"
#include "compiler/tokenizer/tokenizer.h"
#include "compiler/trie/token_trie.h"

namespace maskd {

class VocabIndex {
 public:
  // Budget of the shared mask walks per tokenizer (a wide walk holds a 16 KiB
  // bitmask for a 128k vocabulary).
  static constexpr size_t kSharedMaskStoreBytes = size_t{256} << 20;

  // The index for `tokenizer`, shared with every other caller asking for the
  // same tokenizer id.
  static absl::StatusOr<std::shared_ptr<const VocabIndex>> For(
      std::shared_ptr<const Tokenizer> tokenizer);
  // Forgets the cached index of tokenizer `id` (holders keep theirs).
  static void Release(const std::string& id);

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const std::shared_ptr<const Tokenizer>& tokenizer_ptr() const { return tokenizer_; }
  const TokenTrie& trie() const { return trie_; }
  // 32-bit words in a mask: ceil(vocab_size / 32).
  size_t mask_words() const { return (tokenizer_->vocab_size() + 31) / 32; }
  const std::vector<TokenId>& eos_ids() const { return tokenizer_->eos_ids(); }
  // How many bytes deep the trie goes below `node` (the horizon of a walk
  // below it); for the root, the longest token's length.
  uint32_t height(uint32_t node) const { return heights_[node]; }
  // Subtrees holding more than 1/16 of the trie are walked as the walks
  // below their children (each shareable on its own; mask_cache.h): besides
  // the root, for Llama-3 the subtrees of ' ' (46% of the nodes) and '.'.
  bool walk_in_parts(uint32_t node) const {
    return uint64_t{trie_.subtree_size(node)} * 16 > trie_.num_nodes();
  }
  // The node `node` hangs below (kRoot for the root's children): a node's
  // bytes, read back to the root.
  uint32_t parent(uint32_t node) const { return parents_[node]; }
  // The bytes from the root to `node`.
  std::string PathTo(uint32_t node) const;
  // The tokens (of the trie) whose bytes hold a double quote, ascending: the
  // only ones that can complete a JSON string (a distinct value's repeat is
  // refused at its closing quote, byte_stepper.h).
  const std::vector<TokenId>& quote_tokens() const { return quote_tokens_; }
  bool is_eos(TokenId id) const;
  // Lexer-only mask walks shared by every grammar of this tokenizer.
  SharedMaskStore& mask_store() const { return *mask_store_; }
  size_t ByteSizeEstimate() const {
    return sizeof(*this) + trie_.ByteSizeEstimate() + heights_.capacity() * sizeof(uint16_t) +
           parents_.capacity() * sizeof(uint32_t) + quote_tokens_.capacity() * sizeof(TokenId);
  }

 private:
  VocabIndex() = default;
  std::shared_ptr<const Tokenizer> tokenizer_;
  TokenTrie trie_;
  std::vector<uint16_t> heights_;  // per node
  std::vector<uint32_t> parents_;  // per node
  std::vector<TokenId> quote_tokens_;
  std::unique_ptr<SharedMaskStore> mask_store_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_VOCAB_INDEX_H_
