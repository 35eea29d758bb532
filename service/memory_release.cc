#include "service/memory_release.h"

#include <dlfcn.h>
#include <malloc.h>

namespace maskd {
namespace {

// jemalloc's control entry point when it is the process's malloc (preloaded,
// bench/memory/with_allocator.sh), else null: malloc_trim is glibc's and
// does not reach jemalloc's arenas, which keep freed pages as dirty for
// their decay time. MALLCTL_ARENAS_ALL is 4096 (jemalloc.h).
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);
MallctlFn JemallocMallctl() {
  static const MallctlFn fn = reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
}

void ReleaseFreedMemory() {
  malloc_trim(0);
  if (MallctlFn mallctl = JemallocMallctl())
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
}

}  // namespace

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
    ReleaseFreedMemory();
    trims_.fetch_add(1);
    lock.lock();
  }
}

}  // namespace maskd
