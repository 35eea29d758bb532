// A source of "now" that the cache reads to expire cached errors. It is an
// interface so tests can move time by hand instead of sleeping.
#ifndef MASKD_CACHE_CLOCK_H_
#define MASKD_CACHE_CLOCK_H_

#include <mutex>

#include "absl/time/time.h"

namespace maskd {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;

  // The process-wide wall clock (absl::Now()); never destroyed.
  static const Clock& Real();
};

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}

  absl::Time Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = t;
  }

 private:
  // std::mutex: visible to ThreadSanitizer (the system absl is not).
  mutable std::mutex mu_;
  absl::Time now_;  // Guarded by mu_.
};

}  // namespace maskd

#endif  // MASKD_CACHE_CLOCK_H_
