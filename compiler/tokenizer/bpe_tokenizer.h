// The one Tokenizer implementation: a BPE model with its added tokens,
// normalizer and pre-tokenizer, filled in by the tokenizer.json loader.
#ifndef MASKD_COMPILER_TOKENIZER_BPE_TOKENIZER_H_
#define MASKD_COMPILER_TOKENIZER_BPE_TOKENIZER_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/tokenizer/added_tokens.h"
#include "compiler/tokenizer/bpe_merger.h"
#include "compiler/tokenizer/huge_pages.h"
#include "compiler/tokenizer/normalizer.h"
#include "compiler/tokenizer/pre_tokenizer.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::tokenizer_internal {

// Everything the loader extracts from the files.
struct BpeTokenizerData {
  std::string id;
  std::string name;
  TokenizerKind kind = TokenizerKind::kByteLevelBpe;

  // Per token id: its output bytes (concatenated, offsets has size + 1
  // entries) and whether masks must exclude it.
  HugePageString bytes_arena;
  std::vector<uint32_t> bytes_offsets;
  std::vector<bool> special;
  std::vector<TokenId> eos_ids;

  // The model vocabulary keyed by piece text: raw bytes for byte-level
  // models (the byte map is a bijection), the vocabulary string itself for
  // SentencePiece-style ones (whose `<0xNN>` and `▁` forms may collide).
  // Keys are views into piece_arena, heap-held so moves keep them valid.
  std::unique_ptr<const HugePageString> piece_arena;
  absl::flat_hash_map<absl::string_view, TokenId, absl::Hash<absl::string_view>,
                      std::equal_to<absl::string_view>,
                      HugePageAllocator<std::pair<const absl::string_view, TokenId>>>
      piece_to_id;
  BpeMerger merger;
  // Byte-level: the token of each single byte. SentencePiece: the `<0xNN>`
  // byte-fallback token of each byte. kUnknownSymbol where there is none.
  std::array<TokenId, 256> byte_tokens;
  bool ignore_merges = false;
  bool byte_fallback = false;
  bool fuse_unk = false;
  std::optional<TokenId> unk;

  std::vector<AddedToken> added_tokens;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeTokenizerData data);

  const std::string& id() const override { return data_.id; }
  const std::string& name() const override { return data_.name; }
  TokenizerKind kind() const override { return data_.kind; }
  size_t vocab_size() const override { return data_.special.size(); }
  std::string_view token_bytes(TokenId id) const override;
  bool is_special(TokenId id) const override {
    return id >= data_.special.size() || data_.special[id];
  }
  const std::vector<TokenId>& eos_ids() const override { return data_.eos_ids; }
  std::vector<TokenId> Encode(std::string_view text) const override;
  std::string Decode(std::span<const TokenId> ids) const override;

 private:
  // at_start: the section begins the input text.
  void EncodeSection(std::string_view text, bool at_start, std::vector<TokenId>& out) const;
  // section_start: where the current section's ids begin in `out`.
  void EncodePiece(std::string_view piece, size_t section_start, std::vector<Symbol>& symbols,
                   std::vector<TokenId>& out) const;
  void EmitUnknown(std::string_view bytes, size_t section_start, std::vector<TokenId>& out) const;

  BpeTokenizerData data_;
  AddedTokenSplitter added_splitter_;
};

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_BPE_TOKENIZER_H_
