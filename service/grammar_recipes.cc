#include "service/grammar_recipes.h"

namespace maskd {

size_t GrammarRecipes::JobBytes(const CompileJob& job) {
  size_t bytes = sizeof(CompileJob) + job.handle.size() * 2 + job.tokenizer_id.size() +
                 job.spec.text.size() + job.spec.start_rule.size() + job.start_rule.size() +
                 job.options.reasoning_end_marker.size() + job.options.required_prefix.size();
  for (const std::string& choice : job.spec.choices) bytes += sizeof(std::string) + choice.size();
  return bytes;
}

GrammarRecipes::~GrammarRecipes() {
  if (budget_ != nullptr) budget_->Release(MemoryKind::kRecipes, bytes_);
}

bool GrammarRecipes::EvictOldestLocked() {
  if (lru_.empty()) return false;
  auto oldest = entries_.find(lru_.back());
  bytes_ -= oldest->second.bytes;
  if (budget_ != nullptr) budget_->Release(MemoryKind::kRecipes, oldest->second.bytes);
  entries_.erase(oldest);
  lru_.pop_back();
  return true;
}

void GrammarRecipes::Record(const CompileJob& job) {
  const size_t bytes = JobBytes(job);
  if (bytes > max_bytes_) return;  // would evict everything else
  auto copy = std::make_shared<CompileJob>(job);
  copy->options.cancelled = nullptr;  // the compile's flag dies with it
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(job.handle); it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;  // the same handle is the same job
  }
  while (bytes_ + bytes > max_bytes_) EvictOldestLocked();
  if (budget_ != nullptr) {
    // Recipes give way to one another, not to sequences: a full budget
    // evicts older recipes, and when there is none left this one is not kept
    // (healing it by handle then asks for an inline compile).
    while (
        !budget_->TryCharge(MemoryKind::kRecipes, bytes, "a recipe kept for token healing").ok()) {
      if (!EvictOldestLocked()) return;
    }
  }
  lru_.push_front(job.handle);
  entries_.emplace(job.handle, Entry{std::move(copy), bytes, lru_.begin()});
  bytes_ += bytes;
}

std::shared_ptr<const CompileJob> GrammarRecipes::Find(const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.job;
}

size_t GrammarRecipes::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t GrammarRecipes::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace maskd
