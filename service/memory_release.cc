#include "service/memory_release.h"

#include <malloc.h>

namespace maskd {

MemoryReleaser::MemoryReleaser(absl::Duration interval) : interval_(interval) {
  if (interval_ > absl::ZeroDuration()) thread_ = std::thread([this] { Run(); });
}

MemoryReleaser::~MemoryReleaser() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MemoryReleaser::Run() {
  const auto tick = absl::ToChronoNanoseconds(interval_);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, tick, [this] { return stopping_; })) {
    if (!freed_.exchange(false, std::memory_order_relaxed)) continue;
    lock.unlock();
    malloc_trim(0);
    trims_.fetch_add(1);
    lock.lock();
  }
}

}  // namespace maskd
