#include "service/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

namespace maskd {

ThreadPool::ThreadPool(size_t threads) {
  threads = std::max<size_t>(threads, 1);
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::Submit(absl::AnyInvocable<void() &&> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

size_t ThreadPool::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

namespace {
// The pool whose worker the current thread is (null on other threads).
thread_local const ThreadPool* current_pool = nullptr;
}  // namespace

void ThreadPool::WorkerLoop() {
  current_pool = this;
  for (;;) {
    absl::AnyInvocable<void() &&> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain the queue before stopping: accepted tasks always run.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

namespace {

// Shared by the caller and the helper tasks of one ParallelFor: items are
// claimed through `next`; `done` counts finished items.
struct ParallelForState {
  explicit ParallelForState(size_t n, const std::function<void(size_t)>& f) : total(n), fn(f) {}

  // Claims and runs items until none are left.
  void RunItems() {
    size_t finished = 0;
    for (size_t i = next.fetch_add(1); i < total; i = next.fetch_add(1)) {
      fn(i);
      ++finished;
    }
    if (finished == 0) return;
    std::lock_guard<std::mutex> lock(mu);
    done += finished;
    if (done == total) all_done.notify_all();
  }

  const size_t total;
  const std::function<void(size_t)>& fn;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable all_done;
  size_t done = 0;  // guarded by mu
};

}  // namespace

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n == 1) {
    fn(0);
    return;
  }
  auto state = std::make_shared<ParallelForState>(n, fn);
  // One helper per other worker at most (a caller that is one of this pool's
  // workers is busy here: a helper for it would only wake a thread to find
  // nothing left); a helper that finds nothing left returns at once.
  const size_t others = workers_.size() - (current_pool == this ? 1 : 0);
  const size_t helpers = std::min(n - 1, others);
  for (size_t i = 0; i < helpers; ++i) {
    Submit([state] { state->RunItems(); });
  }
  state->RunItems();
  std::unique_lock<std::mutex> lock(state->mu);
  state->all_done.wait(lock, [&] { return state->done == state->total; });
}

}  // namespace maskd
