// What the cache reports for metrics. Two views, both free of any metrics
// library: CacheStats is a snapshot of cumulative counters and current sizes
// (read it at scrape time for gauges), CacheObserver gets one callback per
// event (feed counters and histograms, e.g. compute latency, from it).
#ifndef MASKD_CACHE_CACHE_STATS_H_
#define MASKD_CACHE_CACHE_STATS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace maskd {

struct CacheStats {
  // Lookups answered from the cache with a value.
  uint64_t hits = 0;
  // Lookups that found neither a value nor a live cached error. For
  // GetOrCompute these are exactly the calls that started a compute.
  uint64_t misses = 0;
  // GetOrCompute calls answered with a cached (not yet expired) error.
  uint64_t error_hits = 0;
  // GetOrCompute calls that joined a compute already in flight for the key.
  uint64_t joins = 0;
  // Waiters that gave up at their deadline (the compute went on).
  uint64_t deadline_exceeded = 0;
  // Finished computes, of which failed (error returned or exception thrown),
  // of which threw; and their summed wall time.
  uint64_t computes = 0;
  uint64_t compute_errors = 0;
  uint64_t compute_exceptions = 0;
  absl::Duration compute_time = absl::ZeroDuration();
  // Entries dropped (least recently used first) to keep a shard in budget.
  uint64_t evictions = 0;
  uint64_t evicted_bytes = 0;
  // Results handed back to callers but not kept because a single entry was
  // larger than a shard's budget.
  uint64_t oversized = 0;
  // Current contents (values and cached errors) and the configured bound.
  uint64_t bytes = 0;
  uint64_t entries = 0;
  uint64_t capacity_bytes = 0;
};

// Callbacks run on the thread that caused the event, never under a cache
// lock, so they may be slow-ish, but they must be thread-safe. They must not
// assume any ordering between threads.
class CacheObserver {
 public:
  virtual ~CacheObserver() = default;
  virtual void OnHit() {}
  virtual void OnMiss() {}
  virtual void OnErrorHit() {}
  virtual void OnJoin() {}
  virtual void OnDeadlineExceeded() {}
  virtual void OnEviction(size_t /*bytes*/) {}
  virtual void OnOversized(size_t /*bytes*/) {}
  // `status` is the compute's outcome (INTERNAL for a thrown exception).
  virtual void OnComputeDone(absl::Duration /*elapsed*/, const absl::Status& /*status*/) {}
};

// The cache's counters: lock-free atomics plus forwarding to an optional
// observer. Not part of the public API; used by ShardedLruCache.
class CacheCounters {
 public:
  CacheCounters(CacheObserver* observer, uint64_t capacity_bytes)
      : observer_(observer), capacity_bytes_(capacity_bytes) {}

  void Hit();
  void Miss();
  void ErrorHit();
  void Join();
  void DeadlineExceeded();
  void Eviction(size_t bytes);
  void Oversized(size_t bytes);
  void ComputeDone(absl::Duration elapsed, const absl::Status& status, bool threw);
  // Current size changes; called under the owning shard's lock.
  void AddResident(int64_t bytes, int64_t entries);

  CacheStats Snapshot() const;

 private:
  CacheObserver* const observer_;
  const uint64_t capacity_bytes_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> error_hits_{0};
  std::atomic<uint64_t> joins_{0};
  std::atomic<uint64_t> deadline_exceeded_{0};
  std::atomic<uint64_t> computes_{0};
  std::atomic<uint64_t> compute_errors_{0};
  std::atomic<uint64_t> compute_exceptions_{0};
  std::atomic<int64_t> compute_nanos_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> evicted_bytes_{0};
  std::atomic<uint64_t> oversized_{0};
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> entries_{0};
};

}  // namespace maskd

#endif  // MASKD_CACHE_CACHE_STATS_H_
