// Hands memory the process freed back to the OS. glibc's malloc keeps freed
// heap pages (200 streams' sequences, measured in issue 13: RSS never came
// back down), so after something large is freed (a stream ended, a grammar
// evicted) a background thread calls malloc_trim(0), at most once per
// interval, never on a request's path. Under jemalloc (preloaded) it also
// purges every arena (mallctl "arena.<all>.purge").
#ifndef MASKD_SERVICE_MEMORY_RELEASE_H_
#define MASKD_SERVICE_MEMORY_RELEASE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace maskd {

class MemoryReleaser {
 public:
  // `interval` zero or less: never trims (Note does nothing).
  explicit MemoryReleaser(absl::Duration interval);
  ~MemoryReleaser();

  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;

  // Something large was freed: trim at the next tick. Cheap, any thread.
  void Note() { freed_.store(true, std::memory_order_relaxed); }

  // Trims done so far.
  uint64_t trims() const { return trims_.load(); }

 private:
  void Run();

  const absl::Duration interval_;
  std::atomic<bool> freed_{false};
  std::atomic<uint64_t> trims_{0};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_MEMORY_RELEASE_H_
