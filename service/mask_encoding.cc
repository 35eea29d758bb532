#include "service/mask_encoding.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <vector>

namespace maskd {
namespace {

// Set bits of n words, two at a time. Without -mpopcnt (the build targets
// baseline x86-64) std::popcount is a libgcc call per word, which cost more
// than computing the mask itself; the POPCNT instruction (every x86-64 CPU
// since 2008) is taken when the CPU has it.
template <typename Count64>
inline size_t CountWords(const uint32_t* words, size_t n, Count64 count64) {
  size_t count = 0;
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    uint64_t pair;
    std::memcpy(&pair, words + i, sizeof(pair));
    count += count64(pair);
  }
  if (i < n) count += count64(words[i]);
  return count;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) size_t CountWordsPopcnt(const uint32_t* words, size_t n) {
  return CountWords(words, n,
                    [](uint64_t v) { return static_cast<size_t>(__builtin_popcountll(v)); });
}
#endif

// Allowed ids in [begin_word * 32, end_word * 32) of `words`.
size_t CountBits(std::span<const uint32_t> words, size_t begin_word, size_t end_word) {
  end_word = std::min(end_word, words.size());
  if (begin_word >= end_word) return 0;
  return mask_encoding_internal::CountSetBits(words.data() + begin_word, end_word - begin_word);
}

}  // namespace

namespace mask_encoding_internal {

size_t CountSetBitsPortable(const uint32_t* words, size_t n) {
  return CountWords(words, n, [](uint64_t v) {
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<size_t>((v * 0x0101010101010101ull) >> 56);
  });
}

size_t CountSetBits(const uint32_t* words, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has_popcnt = __builtin_cpu_supports("popcnt");
  if (has_popcnt) return CountWordsPopcnt(words, n);
#endif
  return CountSetBitsPortable(words, n);
}

}  // namespace mask_encoding_internal

v1::MaskEncoding MaskAnalysis::Choose(v1::MaskEncoding wanted) const {
  switch (wanted) {
    case v1::MASK_ENCODING_ALLOW_LIST:
    case v1::MASK_ENCODING_DENY_LIST:
      return wanted;
    case v1::MASK_ENCODING_AUTO: {
      v1::MaskEncoding best = v1::MASK_ENCODING_BITMASK;
      size_t best_bytes = bitmask_bytes;
      if (allow_bytes < best_bytes) {
        best = v1::MASK_ENCODING_ALLOW_LIST;
        best_bytes = allow_bytes;
      }
      if (deny_bytes < best_bytes) best = v1::MASK_ENCODING_DENY_LIST;
      return best;
    }
    default:
      return v1::MASK_ENCODING_BITMASK;
  }
}

size_t MaskAnalysis::PayloadBytes(v1::MaskEncoding chosen) const {
  switch (chosen) {
    case v1::MASK_ENCODING_ALLOW_LIST:
      return allow_bytes;
    case v1::MASK_ENCODING_DENY_LIST:
      return deny_bytes;
    default:
      return bitmask_bytes;
  }
}

MaskAnalysis AnalyzeMask(std::span<const uint32_t> words, uint32_t vocab_size) {
  const size_t num_words = (static_cast<size_t>(vocab_size) + 31) / 32;
  words = words.first(std::min(words.size(), num_words));
  // Allow/deny list sizes without listing: ids below 2^7 take one varint
  // byte, below 2^14 two, below 2^21 three, below 2^28 four (2^7 = 4 words,
  // 2^14 = 512 words, 2^21 = 65536 words).
  static constexpr size_t kBoundWords[] = {4, 512, 65536, size_t{1} << 23, size_t{1} << 27};
  MaskAnalysis analysis;
  size_t allowed = 0;
  size_t begin = 0;
  for (size_t k = 0; k < std::size(kBoundWords) && begin < num_words; ++k) {
    const size_t end = std::min(kBoundWords[k], num_words);
    const size_t in_range = CountBits(words, begin, end);
    const size_t ids_in_range = std::min<size_t>(end * 32, vocab_size) - begin * 32;
    analysis.allow_bytes += in_range * (k + 1);
    analysis.deny_bytes += (ids_in_range - in_range) * (k + 1);
    allowed += in_range;
    begin = end;
  }
  analysis.allowed_count = static_cast<uint32_t>(allowed);
  analysis.bitmask_bytes = num_words * 4;
  return analysis;
}

EncodedMaskInfo EncodeMask(std::span<const uint32_t> words, uint32_t vocab_size,
                           v1::MaskEncoding wanted, v1::Mask* mask) {
  return EncodeMask(words, vocab_size, AnalyzeMask(words, vocab_size), wanted, mask);
}

EncodedMaskInfo EncodeMask(std::span<const uint32_t> words, uint32_t vocab_size,
                           const MaskAnalysis& analysis, v1::MaskEncoding wanted, v1::Mask* mask) {
  const size_t num_words = (static_cast<size_t>(vocab_size) + 31) / 32;
  words = words.first(std::min(words.size(), num_words));
  EncodedMaskInfo info;
  info.allowed_count = analysis.allowed_count;
  info.encoding = analysis.Choose(wanted);
  info.payload_bytes = analysis.PayloadBytes(info.encoding);
  mask->set_vocab_size(vocab_size);
  mask->set_allowed_count(info.allowed_count);
  switch (info.encoding) {
    case v1::MASK_ENCODING_ALLOW_LIST:
    case v1::MASK_ENCODING_DENY_LIST: {
      const bool allow = info.encoding == v1::MASK_ENCODING_ALLOW_LIST;
      v1::TokenIdList* list = allow ? mask->mutable_allow_list() : mask->mutable_deny_list();
      const size_t count = allow ? info.allowed_count : vocab_size - info.allowed_count;
      // Written in place: no per-id capacity check.
      auto* ids = list->mutable_token_ids();
      ids->Resize(static_cast<int>(count), 0);
      uint32_t* out = ids->mutable_data();
      for (size_t w = 0; w < num_words; ++w) {
        uint32_t bits = w < words.size() ? words[w] : 0;
        if (!allow) bits = ~bits;
        while (bits != 0) {
          const uint32_t id = static_cast<uint32_t>(w * 32 + std::countr_zero(bits));
          bits &= bits - 1;
          if (id >= vocab_size) break;
          *out++ = id;
        }
      }
      break;
    }
    default: {
      auto* out = mask->mutable_bitmask()->mutable_words();
      out->Resize(static_cast<int>(num_words), 0);
      std::copy(words.begin(), words.end(), out->mutable_data());
      break;
    }
  }
  return info;
}

std::vector<uint32_t> DecodeMask(const v1::Mask& mask) {
  const size_t num_words = (static_cast<size_t>(mask.vocab_size()) + 31) / 32;
  std::vector<uint32_t> words(num_words, 0);
  auto set = [&](uint32_t id) {
    if (id < mask.vocab_size()) words[id >> 5] |= uint32_t{1} << (id & 31);
  };
  switch (mask.encoding_case()) {
    case v1::Mask::kBitmask:
      std::copy_n(mask.bitmask().words().begin(),
                  std::min<size_t>(num_words, mask.bitmask().words_size()), words.begin());
      break;
    case v1::Mask::kAllowList:
      for (uint32_t id : mask.allow_list().token_ids()) set(id);
      break;
    case v1::Mask::kDenyList:
      for (size_t id = 0; id < mask.vocab_size(); ++id) set(static_cast<uint32_t>(id));
      for (uint32_t id : mask.deny_list().token_ids()) {
        if (id < mask.vocab_size()) words[id >> 5] &= ~(uint32_t{1} << (id & 31));
      }
      break;
    case v1::Mask::kDictionaryRef:
    case v1::Mask::ENCODING_NOT_SET:
      break;
  }
  return words;
}

}  // namespace maskd
