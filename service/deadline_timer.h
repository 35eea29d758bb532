// Runs callbacks at given times on one thread of its own, so waits with a
// deadline (a compile answered DEADLINE_EXCEEDED when it takes too long)
// hold no thread while they wait. Callbacks must be short: they run one
// after another.
#ifndef MASKD_SERVICE_DEADLINE_TIMER_H_
#define MASKD_SERVICE_DEADLINE_TIMER_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"

namespace maskd {

class DeadlineTimer {
 public:
  DeadlineTimer();
  // Drops the callbacks not yet run (never calls them).
  ~DeadlineTimer();

  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Runs `callback` on the timer's thread at `when` (soon when it has
  // passed); InfiniteFuture: never. Returns an id for Cancel (0: never runs).
  uint64_t Schedule(absl::Time when, absl::AnyInvocable<void() &&> callback);
  // Drops the callback of `id` if it has not started; true if dropped.
  bool Cancel(uint64_t id);

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable changed_;
  // (when, id) -> callback, earliest first; id -> its key, for Cancel.
  std::map<std::pair<absl::Time, uint64_t>, absl::AnyInvocable<void() &&>> due_;  // mu_
  absl::flat_hash_map<uint64_t, absl::Time> when_;                                // mu_
  uint64_t last_id_ = 0;                                                          // mu_
  bool stopping_ = false;                                                         // mu_
  std::thread thread_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_DEADLINE_TIMER_H_
