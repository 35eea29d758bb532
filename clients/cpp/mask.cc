#include "clients/cpp/mask.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"

namespace maskd::client {
namespace {

// Checks a token id list is strictly ascending and below vocab_size; `field`
// names it in errors ("allow_list").
absl::Status CheckIdList(const v1::TokenIdList& list, uint32_t vocab_size, const char* field) {
  for (int i = 0; i < list.token_ids_size(); ++i) {
    const uint32_t id = list.token_ids(i);
    if (id >= vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("mask.", field, ".token_ids[", i, "] = ", id,
                                                     " is not below vocab_size ", vocab_size));
    }
    if (i > 0 && id <= list.token_ids(i - 1)) {
      return absl::InvalidArgumentError(absl::StrCat("mask.", field, ".token_ids[", i, "] = ", id,
                                                     " is not above the id before it (",
                                                     list.token_ids(i - 1), ")"));
    }
  }
  return absl::OkStatus();
}

void SetBit(std::vector<uint32_t>& words, uint32_t id) { words[id / 32] |= 1u << (id % 32); }

// Set bits of `words`. The build targets baseline x86-64, where std::popcount
// is a libgcc call per word (~10 us for a 128k-vocabulary mask); the POPCNT
// instruction is taken when the CPU has it.
template <typename Count64>
inline uint32_t CountWords(const std::vector<uint32_t>& words, Count64 count64) {
  uint32_t count = 0;
  size_t i = 0;
  for (; i + 2 <= words.size(); i += 2) {
    count += count64((uint64_t{words[i + 1]} << 32) | words[i]);
  }
  if (i < words.size()) count += count64(words[i]);
  return count;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) uint32_t CountSetBitsPopcnt(const std::vector<uint32_t>& words) {
  return CountWords(words,
                    [](uint64_t v) { return static_cast<uint32_t>(__builtin_popcountll(v)); });
}
#endif

uint32_t CountSetBits(const std::vector<uint32_t>& words) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has_popcnt = __builtin_cpu_supports("popcnt");
  if (has_popcnt) return CountSetBitsPopcnt(words);
#endif
  return CountWords(words, [](uint64_t v) { return static_cast<uint32_t>(std::popcount(v)); });
}

}  // namespace

absl::StatusOr<TokenMask> TokenMask::Decode(const v1::Mask& mask) {
  const uint32_t vocab_size = mask.vocab_size();
  if (vocab_size == 0) return absl::InvalidArgumentError("mask.vocab_size is 0");
  const size_t word_count = (static_cast<size_t>(vocab_size) + 31) / 32;
  std::vector<uint32_t> words;
  switch (mask.encoding_case()) {
    case v1::Mask::kBitmask: {
      const auto& wire = mask.bitmask().words();
      if (static_cast<size_t>(wire.size()) != word_count) {
        return absl::InvalidArgumentError(absl::StrCat("mask.bitmask has ", wire.size(),
                                                       " words; vocab_size ", vocab_size, " needs ",
                                                       word_count));
      }
      words.assign(wire.begin(), wire.end());
      const uint32_t tail_bits = vocab_size % 32;
      if (tail_bits != 0 && (words.back() >> tail_bits) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("mask.bitmask sets bits at or past vocab_size ", vocab_size));
      }
      break;
    }
    case v1::Mask::kAllowList: {
      if (absl::Status s = CheckIdList(mask.allow_list(), vocab_size, "allow_list"); !s.ok()) {
        return s;
      }
      words.assign(word_count, 0);
      for (uint32_t id : mask.allow_list().token_ids()) SetBit(words, id);
      break;
    }
    case v1::Mask::kDenyList: {
      if (absl::Status s = CheckIdList(mask.deny_list(), vocab_size, "deny_list"); !s.ok()) {
        return s;
      }
      words.assign(word_count, ~uint32_t{0});
      if (vocab_size % 32 != 0) words.back() = (uint32_t{1} << (vocab_size % 32)) - 1;
      for (uint32_t id : mask.deny_list().token_ids()) words[id / 32] &= ~(1u << (id % 32));
      break;
    }
    case v1::Mask::kDictionaryRef:
      return absl::InvalidArgumentError(
          absl::StrCat("mask is a dictionary_ref to slot ", mask.dictionary_ref(),
                       ": only the Session holding the stream's dictionary can resolve it"));
    case v1::Mask::ENCODING_NOT_SET:
      return absl::InvalidArgumentError("mask has no encoding (bitmask, allow_list or deny_list)");
  }
  const uint32_t allowed = CountSetBits(words);
  if (allowed != mask.allowed_count()) {
    return absl::InvalidArgumentError(absl::StrCat("mask.allowed_count is ", mask.allowed_count(),
                                                   " but the ", MaskEncodingName(mask), " allows ",
                                                   allowed, " tokens"));
  }
  return TokenMask(vocab_size, std::move(words), allowed);
}

std::vector<TokenId> TokenMask::AllowedTokens() const {
  std::vector<TokenId> ids;
  ids.reserve(allowed_count_);
  for (size_t w = 0; w < words_.size(); ++w) {
    for (uint32_t bits = words_[w]; bits != 0; bits &= bits - 1) {
      ids.push_back(static_cast<TokenId>(w * 32 + std::countr_zero(bits)));
    }
  }
  return ids;
}

bool MaskAllows(const v1::Mask& mask, TokenId token) {
  if (token >= mask.vocab_size()) return false;
  switch (mask.encoding_case()) {
    case v1::Mask::kBitmask: {
      const auto& words = mask.bitmask().words();
      const int word = static_cast<int>(token / 32);
      return word < words.size() && ((words[word] >> (token % 32)) & 1u) != 0;
    }
    case v1::Mask::kAllowList: {
      const auto& ids = mask.allow_list().token_ids();
      return std::binary_search(ids.begin(), ids.end(), token);
    }
    case v1::Mask::kDenyList: {
      const auto& ids = mask.deny_list().token_ids();
      return !std::binary_search(ids.begin(), ids.end(), token);
    }
    case v1::Mask::kDictionaryRef:
    case v1::Mask::ENCODING_NOT_SET:
      break;
  }
  return false;
}

size_t MaskWireBytes(const v1::Mask& mask) { return mask.ByteSizeLong(); }

const char* MaskEncodingName(const v1::Mask& mask) {
  switch (mask.encoding_case()) {
    case v1::Mask::kBitmask:
      return "bitmask";
    case v1::Mask::kAllowList:
      return "allow_list";
    case v1::Mask::kDenyList:
      return "deny_list";
    case v1::Mask::kDictionaryRef:
      return "dictionary_ref";
    case v1::Mask::ENCODING_NOT_SET:
      break;
  }
  return "none";
}

}  // namespace maskd::client
