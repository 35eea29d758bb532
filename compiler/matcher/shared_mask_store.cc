#include "compiler/matcher/shared_mask_store.h"

namespace maskd {

std::shared_ptr<const MaskWalk> SharedMaskStore::Find(const Key& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.walk;
}

std::shared_ptr<const MaskWalk> SharedMaskStore::Insert(const Key& key,
                                                        std::shared_ptr<const MaskWalk> walk) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = slots_.find(key); it != slots_.end()) return it->second.walk;
  lru_.push_front(key);
  bytes_ += walk->ByteSize();
  slots_.emplace(key, Slot{walk, lru_.begin()});
  // Evict from the cold end, never the walk just stored.
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    auto victim = slots_.find(lru_.back());
    bytes_ -= victim->second.walk->ByteSize();
    slots_.erase(victim);
    lru_.pop_back();
  }
  return walk;
}

size_t SharedMaskStore::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t SharedMaskStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_.size();
}

}  // namespace maskd
