#include "service/grammar_recipes.h"

namespace maskd {

size_t GrammarRecipes::JobBytes(const CompileJob& job) {
  size_t bytes = sizeof(CompileJob) + job.handle.size() * 2 + job.tokenizer_id.size() +
                 job.spec.text.size() + job.spec.start_rule.size() + job.start_rule.size() +
                 job.options.reasoning_end_marker.size() + job.options.required_prefix.size();
  for (const std::string& choice : job.spec.choices) bytes += sizeof(std::string) + choice.size();
  return bytes;
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
  lru_.push_front(job.handle);
  entries_.emplace(job.handle, Entry{std::move(copy), bytes, lru_.begin()});
  bytes_ += bytes;
  while (bytes_ > max_bytes_) {
    auto oldest = entries_.find(lru_.back());
    bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
    lru_.pop_back();
  }
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
