// BPE merging of one pre-tokenized piece: starting from per-character (or
// per-byte) symbols, repeatedly merge the adjacent pair with the lowest merge
// rank, leftmost first on ties: exactly the order HuggingFace and the
// JavaScript reference apply.
#ifndef MASKD_COMPILER_TOKENIZER_BPE_MERGER_H_
#define MASKD_COMPILER_TOKENIZER_BPE_MERGER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/tokenizer/huge_pages.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::tokenizer_internal {

// A symbol of the piece being merged: a token id (or kUnknownSymbol for a
// character the vocabulary lacks) and the byte range of the piece it covers.
inline constexpr TokenId kUnknownSymbol = 0xFFFFFFFFu;
struct Symbol {
  TokenId id;
  uint32_t begin;
  uint32_t end;
};

class BpeMerger {
 public:
  // Registers merge `rank`: (left, right) -> merged. A pair registered twice
  // keeps the later rank, as both reference implementations do.
  void Add(TokenId left, TokenId right, uint32_t rank, TokenId merged) {
    merges_[Key(left, right)] = {rank, merged};
  }
  void Reserve(size_t n) { merges_.reserve(n); }
  // Fetches into cache what Add(left, right, ...) will touch.
  void Prefetch(TokenId left, TokenId right) const { merges_.prefetch(Key(left, right)); }
  size_t size() const { return merges_.size(); }

  // Merges `symbols` in place.
  void Merge(std::vector<Symbol>& symbols) const;

 private:
  struct Merge_ {
    uint32_t rank;
    TokenId merged;
  };
  static uint64_t Key(TokenId left, TokenId right) {
    return (static_cast<uint64_t>(left) << 32) | right;
  }
  const Merge_* Find(TokenId left, TokenId right) const {
    if (left == kUnknownSymbol || right == kUnknownSymbol) return nullptr;
    auto it = merges_.find(Key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }
  void MergeShort(std::vector<Symbol>& symbols) const;
  void MergeLong(std::vector<Symbol>& symbols) const;

  // Hundreds of thousands of entries: huge pages spare a fresh process
  // thousands of page faults while it is filled.
  absl::flat_hash_map<uint64_t, Merge_, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
                      HugePageAllocator<std::pair<const uint64_t, Merge_>>>
      merges_;
};

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_BPE_MERGER_H_
