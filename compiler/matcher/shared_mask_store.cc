#include "compiler/matcher/shared_mask_store.h"

#include <algorithm>

namespace maskd {

SharedMaskStore::SharedMaskStore(size_t max_bytes, size_t shards)
    : max_shard_bytes_(max_bytes / std::max<size_t>(shards, 1)),
      shards_(std::max<size_t>(shards, 1)) {}

SharedMaskStore::Shard& SharedMaskStore::ShardOf(const Key& key) {
  // The fingerprint is a good hash already; mix in the rest of the key.
  const uint64_t h = key.state.lo ^ (uint64_t{key.subtree} * 0x9E3779B97F4A7C15ull) ^
                     (key.in_lexeme ? 0x5bd1e995ull : 0) ^ (key.horizon ? 0x27d4eb2dull : 0);
  return shards_[(h ^ (h >> 29)) % shards_.size()];
}

std::shared_ptr<const MaskWalk> SharedMaskStore::Find(const Key& key) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.slots.find(key);
  if (it == shard.slots.end()) return nullptr;
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second.lru);
  return it->second.walk;
}

std::shared_ptr<const MaskWalk> SharedMaskStore::Insert(const Key& key,
                                                        std::shared_ptr<const MaskWalk> walk) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (auto it = shard.slots.find(key); it != shard.slots.end()) return it->second.walk;
  shard.lru.push_front(key);
  shard.bytes += walk->ByteSize();
  shard.slots.emplace(key, Slot{walk, shard.lru.begin()});
  // Evict from the cold end, never the walk just stored.
  while (shard.bytes > max_shard_bytes_ && shard.lru.size() > 1) {
    auto victim = shard.slots.find(shard.lru.back());
    shard.bytes -= victim->second.walk->ByteSize();
    shard.slots.erase(victim);
    shard.lru.pop_back();
  }
  return walk;
}

size_t SharedMaskStore::bytes() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    total += shard.bytes;
  }
  return total;
}

size_t SharedMaskStore::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    total += shard.slots.size();
  }
  return total;
}

}  // namespace maskd
