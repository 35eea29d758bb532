#include "compiler/matcher/state_mask_cache.h"

#include <utility>

namespace maskd {

uint32_t StateMaskCache::Intern(const std::vector<uint64_t>& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  const size_t cost = key.size() * sizeof(uint64_t) + 64;
  if (bytes_ + cost > max_bytes_) return 0;
  bytes_ += cost;
  const uint32_t id = static_cast<uint32_t>(ids_.size()) + 1;
  ids_.emplace(key, id);
  return id;
}

bool StateMaskCache::Hot(regex::StateId lexer, bool in_lexeme) const {
  std::lock_guard<std::mutex> lock(mu_);
  return hot_.contains(Position(lexer, in_lexeme));
}

void StateMaskCache::Note(regex::StateId lexer, bool in_lexeme, size_t nodes) const {
  if (nodes < hot_nodes_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + 16 > max_bytes_) return;
  if (hot_.insert(Position(lexer, in_lexeme)).second) bytes_ += 16;
}

std::shared_ptr<const StateMaskCache::Mask> StateMaskCache::Find(uint32_t state,
                                                                 regex::StateId lexer,
                                                                 bool in_lexeme) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = masks_.find(Key{state, Position(lexer, in_lexeme)});
  if (it == masks_.end()) return nullptr;
  ++hits_;
  return it->second;
}

void StateMaskCache::Put(uint32_t state, regex::StateId lexer, bool in_lexeme, Mask mask) const {
  const size_t cost = mask.size() * sizeof(uint32_t) + 64;
  auto shared = std::make_shared<const Mask>(std::move(mask));
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + cost > max_bytes_) return;
  if (masks_.emplace(Key{state, Position(lexer, in_lexeme)}, std::move(shared)).second) {
    bytes_ += cost;
  }
}

size_t StateMaskCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t StateMaskCache::masks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return masks_.size();
}

size_t StateMaskCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace maskd
