// A fixed set of worker threads for the service's CPU work: Session steps
// (one sequence's ops per task) and compiles (handed over by the cache).
//
// ParallelFor lets the calling thread take items too, so it never deadlocks
// when called from a pool thread or when every worker is busy: at worst the
// caller does all the items itself.
//
// std::mutex and std::condition_variable rather than absl's: the system absl
// is not built with ThreadSanitizer, which would then miss their
// synchronisation and report false races.
#ifndef MASKD_SERVICE_THREAD_POOL_H_
#define MASKD_SERVICE_THREAD_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace maskd {

class ThreadPool {
 public:
  // Starts `threads` workers (at least 1).
  explicit ThreadPool(size_t threads);
  // Runs every task already submitted, then joins the workers.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task` to run once on a worker.
  void Submit(absl::AnyInvocable<void() &&> task);

  // Calls fn(i) for every i in [0, n) on the workers and the calling thread,
  // and returns when all calls have returned. fn must be safe to call
  // concurrently for distinct i.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

  size_t size() const { return workers_.size(); }
  // Tasks queued and not yet started (for tests and overload checks).
  size_t pending() const;

 private:
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<absl::AnyInvocable<void() &&>> queue_;  // guarded by mu_
  bool stopping_ = false;                            // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_THREAD_POOL_H_
