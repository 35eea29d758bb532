#include "service/deadline_timer.h"

#include "absl/time/clock.h"

namespace maskd {

DeadlineTimer::DeadlineTimer() : thread_([this] { Run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

uint64_t DeadlineTimer::Schedule(absl::Time when, absl::AnyInvocable<void() &&> callback) {
  if (when == absl::InfiniteFuture()) return 0;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = ++last_id_;
    due_.emplace(std::make_pair(when, id), std::move(callback));
    when_.emplace(id, when);
  }
  changed_.notify_all();
  return id;
}

bool DeadlineTimer::Cancel(uint64_t id) {
  absl::AnyInvocable<void() &&> dropped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = when_.find(id);
  if (it == when_.end()) return false;
  auto node = due_.find(std::make_pair(it->second, id));
  dropped = std::move(node->second);
  due_.erase(node);
  when_.erase(it);
  return true;
}

void DeadlineTimer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (due_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto first = due_.begin();
    const absl::Time when = first->first.first;
    if (absl::Now() < when) {
      changed_.wait_until(lock, absl::ToChronoTime(when));
      continue;
    }
    absl::AnyInvocable<void()&&> callback = std::move(first->second);
    when_.erase(first->first.second);
    due_.erase(first);
    lock.unlock();
    std::move(callback)();
    lock.lock();
  }
}

}  // namespace maskd
