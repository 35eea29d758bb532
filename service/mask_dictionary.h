// The server's side of one stream's mask dictionary (session.proto,
// Mask.dictionary_ref): what the client holds in each of its slots, so a mask
// sent before is sent again as a reference to its slot.
//
// Slots fill in index order, then the least recently used one (a store or a
// reference uses a slot) is replaced: deterministic for a given sequence of
// Find/Store calls, which the stream makes in the order of the results of
// each response. Masks are compared exactly (vocab_size and every word); the
// hash only finds the candidate. Not thread-safe (one stream's steps run one
// at a time).
#ifndef MASKD_SERVICE_MASK_DICTIONARY_H_
#define MASKD_SERVICE_MASK_DICTIONARY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace maskd {

class MaskDictionary {
 public:
  // `slots` > 0.
  explicit MaskDictionary(uint32_t slots);

  MaskDictionary(const MaskDictionary&) = delete;
  MaskDictionary& operator=(const MaskDictionary&) = delete;

  // A fixed (unseeded) 64-bit hash of a mask, for Find and Store; cheap
  // enough to run on every mask (a few GB/s).
  static uint64_t Hash(uint32_t vocab_size, std::span<const uint32_t> words);

  // The slot holding exactly this mask (now the most recently used), or
  // nullopt. `hash` is Hash(vocab_size, words).
  std::optional<uint32_t> Find(uint64_t hash, uint32_t vocab_size, std::span<const uint32_t> words);

  // Stores the mask in the first never-used slot, else in the least recently
  // used one, and returns that slot (now the most recently used). The caller
  // has checked Find found nothing. `allowed_count` (its set bits) is kept
  // beside it.
  uint32_t Store(uint64_t hash, uint32_t vocab_size, std::span<const uint32_t> words,
                 uint32_t allowed_count);

  // The client never received the mask stored in `slot` (its response was
  // cut, see SessionStream): the slot holds nothing Find could return and
  // is the next one Store replaces.
  void Forget(uint32_t slot);

  // The allowed_count stored with the mask of `slot` (a slot Find or Store
  // returned).
  uint32_t allowed_count(uint32_t slot) const { return slots_[slot].allowed_count; }

  uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }
  // Slots holding a mask.
  uint32_t used() const { return used_; }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Slot {
    uint64_t hash = 0;
    uint32_t vocab_size = 0;
    uint32_t allowed_count = 0;
    std::vector<uint32_t> words;
    uint32_t newer = kNone;  // towards the most recently used
    uint32_t older = kNone;  // towards the least recently used
  };

  void Unlink(uint32_t slot);
  void PushNewest(uint32_t slot);

  std::vector<Slot> slots_;
  uint32_t used_ = 0;
  uint32_t newest_ = kNone;
  uint32_t oldest_ = kNone;
  // hash -> the slot last stored with it (a colliding older slot simply is
  // not found; it ages out).
  absl::flat_hash_map<uint64_t, uint32_t> index_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_MASK_DICTIONARY_H_
