#include "service/mask_dictionary.h"

#include <algorithm>
#include <cstring>

namespace maskd {
namespace {

inline uint64_t Mix(uint64_t a, uint64_t b) {
  const __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

constexpr uint64_t kK0 = 0xa0761d6478bd642full;
constexpr uint64_t kK1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kK2 = 0x8ebc6af09c88c6e3ull;
constexpr uint64_t kK3 = 0x589965cc75374cc3ull;

}  // namespace

uint64_t MaskDictionary::Hash(uint32_t vocab_size, std::span<const uint32_t> words) {
  // Four independent lanes of 64-bit multiply-mix (wyhash-style), folded at
  // the end: not cryptographic, and it needs not be (matches are compared).
  uint64_t lanes[4] = {kK0 ^ vocab_size, kK1, kK2, kK3 ^ words.size()};
  const size_t n = words.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v[4];
    std::memcpy(v, words.data() + i, sizeof(v));
    lanes[0] = Mix(lanes[0] ^ v[0], kK1);
    lanes[1] = Mix(lanes[1] ^ v[1], kK2);
    lanes[2] = Mix(lanes[2] ^ v[2], kK3);
    lanes[3] = Mix(lanes[3] ^ v[3], kK0);
  }
  uint64_t tail = kK3;
  for (; i < n; ++i) tail = Mix(tail ^ words[i], kK1);
  uint64_t h = Mix(lanes[0] ^ lanes[2], lanes[1] ^ kK2);
  h = Mix(h ^ lanes[3], tail ^ kK0);
  return Mix(h, kK1 ^ n);
}

MaskDictionary::MaskDictionary(uint32_t slots) : slots_(std::max<uint32_t>(slots, 1)) {}

void MaskDictionary::Unlink(uint32_t slot) {
  Slot& s = slots_[slot];
  if (s.newer != kNone) {
    slots_[s.newer].older = s.older;
  } else {
    newest_ = s.older;
  }
  if (s.older != kNone) {
    slots_[s.older].newer = s.newer;
  } else {
    oldest_ = s.newer;
  }
  s.newer = s.older = kNone;
}

void MaskDictionary::PushNewest(uint32_t slot) {
  Slot& s = slots_[slot];
  s.older = newest_;
  s.newer = kNone;
  if (newest_ != kNone) slots_[newest_].newer = slot;
  newest_ = slot;
  if (oldest_ == kNone) oldest_ = slot;
}

std::optional<uint32_t> MaskDictionary::Find(uint64_t hash, uint32_t vocab_size,
                                             std::span<const uint32_t> words) {
  auto it = index_.find(hash);
  if (it == index_.end()) return std::nullopt;
  const uint32_t slot = it->second;
  const Slot& s = slots_[slot];
  if (s.vocab_size != vocab_size || s.words.size() != words.size() ||
      !std::equal(words.begin(), words.end(), s.words.begin())) {
    return std::nullopt;  // a hash collision
  }
  if (newest_ != slot) {
    Unlink(slot);
    PushNewest(slot);
  }
  return slot;
}

uint32_t MaskDictionary::Store(uint64_t hash, uint32_t vocab_size, std::span<const uint32_t> words,
                               uint32_t allowed_count) {
  uint32_t slot;
  if (used_ < slots_.size()) {
    slot = used_++;
  } else {
    slot = oldest_;
    Unlink(slot);
    if (auto it = index_.find(slots_[slot].hash); it != index_.end() && it->second == slot) {
      index_.erase(it);
    }
  }
  Slot& s = slots_[slot];
  s.hash = hash;
  s.vocab_size = vocab_size;
  s.allowed_count = allowed_count;
  s.words.assign(words.begin(), words.end());
  index_[hash] = slot;
  PushNewest(slot);
  return slot;
}

void MaskDictionary::Forget(uint32_t slot) {
  Slot& s = slots_[slot];
  if (auto it = index_.find(s.hash); it != index_.end() && it->second == slot) index_.erase(it);
  s.vocab_size = 0;
  s.allowed_count = 0;
  s.words.clear();
  s.words.shrink_to_fit();
  // Least recently used: the next Store (once every slot was used) takes it.
  Unlink(slot);
  s.newer = oldest_;
  s.older = kNone;
  if (oldest_ != kNone) slots_[oldest_].older = slot;
  oldest_ = slot;
  if (newest_ == kNone) newest_ = slot;
}

}  // namespace maskd
