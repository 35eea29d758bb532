// Values and observers shared by the cache tests.
#ifndef MASKD_TESTS_CACHE_TEST_VALUES_H_
#define MASKD_TESTS_CACHE_TEST_VALUES_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/cache_stats.h"
#include "cache/sharded_lru_cache.h"

namespace maskd::testing {

// A stand-in for a compiled grammar: remembers which key it was built for and
// how many bytes it claims, and counts live instances so tests can check that
// the cache releases everything it drops.
class Blob {
 public:
  Blob(std::string key, size_t bytes) : key_(std::move(key)), bytes_(bytes) { ++live_; }
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;
  ~Blob() { --live_; }

  const std::string& key() const { return key_; }
  size_t bytes() const { return bytes_; }
  static int live() { return live_.load(); }

 private:
  inline static std::atomic<int> live_{0};
  std::string key_;
  size_t bytes_;
};

using BlobCache = ShardedLruCache<Blob>;
using BlobResult = BlobCache::Result;

inline std::shared_ptr<const Blob> MakeBlob(std::string key, size_t bytes) {
  return std::make_shared<const Blob>(std::move(key), bytes);
}

// Options whose sizer charges what each Blob claims.
inline ShardedLruCacheOptions<Blob> BlobOptions(size_t max_bytes, size_t num_shards) {
  ShardedLruCacheOptions<Blob> options;
  options.max_bytes = max_bytes;
  options.num_shards = num_shards;
  options.sizer = [](const Blob& b) { return b.bytes(); };
  return options;
}

// absl::Notification's counterpart on std::mutex: the system absl is not
// built with ThreadSanitizer, so only pthread-based synchronisation is
// visible to TSan (see cache/sharded_lru_cache.h).
class Notification {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      notified_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return notified_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

// Counts events and lets a test wait (with a timeout, so a broken cache fails
// the test instead of hanging it) until enough callers have joined a flight.
class RecordingObserver : public CacheObserver {
 public:
  void OnHit() override { Bump(&hits_); }
  void OnMiss() override { Bump(&misses_); }
  void OnErrorHit() override { Bump(&error_hits_); }
  void OnJoin() override {
    Bump(&joins_);
    cv_.notify_all();
  }
  void OnDeadlineExceeded() override { Bump(&deadline_exceeded_); }
  void OnEviction(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++evictions_;
    evicted_bytes_ += bytes;
  }
  void OnOversized(size_t) override { Bump(&oversized_); }
  void OnComputeDone(absl::Duration, const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++computes_;
    if (!status.ok()) ++compute_errors_;
  }

  // True once at least `n` joins were seen; false after `timeout`.
  bool WaitForJoins(int n, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this, n] { return joins_ >= n; });
  }

  int hits() const { return Read(hits_); }
  int misses() const { return Read(misses_); }
  int error_hits() const { return Read(error_hits_); }
  int joins() const { return Read(joins_); }
  int deadline_exceeded() const { return Read(deadline_exceeded_); }
  int evictions() const { return Read(evictions_); }
  int oversized() const { return Read(oversized_); }
  int computes() const { return Read(computes_); }
  int compute_errors() const { return Read(compute_errors_); }
  size_t evicted_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return evicted_bytes_;
  }

 private:
  void Bump(int* counter) {
    std::lock_guard<std::mutex> lock(mu_);
    ++*counter;
  }
  int Read(const int& counter) const {
    std::lock_guard<std::mutex> lock(mu_);
    return counter;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // All guarded by mu_.
  int hits_ = 0;
  int misses_ = 0;
  int error_hits_ = 0;
  int joins_ = 0;
  int deadline_exceeded_ = 0;
  int evictions_ = 0;
  size_t evicted_bytes_ = 0;
  int oversized_ = 0;
  int computes_ = 0;
  int compute_errors_ = 0;
};

}  // namespace maskd::testing

#endif  // MASKD_TESTS_CACHE_TEST_VALUES_H_
