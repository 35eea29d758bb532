#include "cache/cache_stats.h"

namespace maskd {
namespace {

// Counters are statistics only: no other memory is published through them.
constexpr std::memory_order kRelaxed = std::memory_order_relaxed;

}  // namespace

void CacheCounters::Hit() {
  hits_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnHit();
}

void CacheCounters::Miss() {
  misses_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnMiss();
}

void CacheCounters::ErrorHit() {
  error_hits_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnErrorHit();
}

void CacheCounters::Join() {
  joins_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnJoin();
}

void CacheCounters::DeadlineExceeded() {
  deadline_exceeded_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnDeadlineExceeded();
}

void CacheCounters::Eviction(size_t bytes) {
  evictions_.fetch_add(1, kRelaxed);
  evicted_bytes_.fetch_add(bytes, kRelaxed);
  if (observer_ != nullptr) observer_->OnEviction(bytes);
}

void CacheCounters::Oversized(size_t bytes) {
  oversized_.fetch_add(1, kRelaxed);
  if (observer_ != nullptr) observer_->OnOversized(bytes);
}

void CacheCounters::ComputeDone(absl::Duration elapsed, const absl::Status& status, bool threw) {
  computes_.fetch_add(1, kRelaxed);
  if (!status.ok()) compute_errors_.fetch_add(1, kRelaxed);
  if (threw) compute_exceptions_.fetch_add(1, kRelaxed);
  compute_nanos_.fetch_add(absl::ToInt64Nanoseconds(elapsed), kRelaxed);
  if (observer_ != nullptr) observer_->OnComputeDone(elapsed, status);
}

void CacheCounters::AddResident(int64_t bytes, int64_t entries) {
  bytes_.fetch_add(bytes, kRelaxed);
  entries_.fetch_add(entries, kRelaxed);
}

CacheStats CacheCounters::Snapshot() const {
  CacheStats s;
  s.hits = hits_.load(kRelaxed);
  s.misses = misses_.load(kRelaxed);
  s.error_hits = error_hits_.load(kRelaxed);
  s.joins = joins_.load(kRelaxed);
  s.deadline_exceeded = deadline_exceeded_.load(kRelaxed);
  s.computes = computes_.load(kRelaxed);
  s.compute_errors = compute_errors_.load(kRelaxed);
  s.compute_exceptions = compute_exceptions_.load(kRelaxed);
  s.compute_time = absl::Nanoseconds(compute_nanos_.load(kRelaxed));
  s.evictions = evictions_.load(kRelaxed);
  s.evicted_bytes = evicted_bytes_.load(kRelaxed);
  s.oversized = oversized_.load(kRelaxed);
  // Shards update these one after another, so a snapshot taken mid-update can
  // be off by one entry; never report a transiently negative size.
  const int64_t bytes = bytes_.load(kRelaxed);
  const int64_t entries = entries_.load(kRelaxed);
  s.bytes = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  s.entries = entries > 0 ? static_cast<uint64_t>(entries) : 0;
  s.capacity_bytes = capacity_bytes_;
  return s;
}

}  // namespace maskd
