// Single-flight GetOrCompute: one compute per missing key however many
// callers race for it, waiters that give up at their deadline, errors and
// exceptions shared with every waiter, and computes run on an executor.
// Synchronisation is by latches and notifications, never by sleeping.
#include <atomic>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "cache/sharded_lru_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/test_values.h"

namespace maskd::testing {
namespace {

using ::testing::HasSubstr;

TEST(SingleFlight, SixteenConcurrentCallersShareOneCompute) {
  constexpr int kThreads = 16;
  RecordingObserver observer;
  auto options = BlobOptions(1 << 20, 4);
  options.observer = &observer;
  BlobCache cache(options);

  std::atomic<int> computes{0};
  std::latch start(kThreads);
  std::vector<BlobResult> results(kThreads, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = cache.GetOrCompute("schema-hash", [&]() -> BlobResult {
        ++computes;
        // Finish only once every other caller is waiting on this compute:
        // that proves they joined it rather than finding a cached value.
        if (!observer.WaitForJoins(kThreads - 1)) {
          return absl::InternalError("the other callers never joined");
        }
        return MakeBlob("schema-hash", 100);
      });
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(computes.load(), 1);
  for (const BlobResult& r : results) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, *results[0]);  // The very same object for everyone.
  }
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.joins, static_cast<uint64_t>(kThreads - 1));
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.computes, 1u);
  EXPECT_EQ(cache.Get("schema-hash"), *results[0]);
}

TEST(SingleFlight, ErrorIsSharedWithEveryWaiter) {
  constexpr int kWaiters = 4;
  RecordingObserver observer;
  auto options = BlobOptions(1000, 1);
  options.observer = &observer;
  options.error_ttl = absl::ZeroDuration();  // Shared by the flight, not by caching.
  BlobCache cache(options);
  std::atomic<int> computes{0};
  auto failing = [&]() -> BlobResult {
    ++computes;
    if (!observer.WaitForJoins(kWaiters)) return absl::InternalError("no joins");
    return absl::InvalidArgumentError("unsupported keyword at /not");
  };
  std::vector<BlobResult> results(kWaiters + 1, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i <= kWaiters; ++i) {
    threads.emplace_back([&, i] { results[i] = cache.GetOrCompute("k", failing); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(computes.load(), 1);
  for (const BlobResult& r : results) {
    EXPECT_EQ(r.status(), absl::InvalidArgumentError("unsupported keyword at /not"));
  }
  // Nothing cached (TTL 0) and nothing left in flight: the next call computes.
  EXPECT_FALSE(cache.GetOrCompute("k", failing).ok());
  EXPECT_EQ(computes.load(), 2);
}

TEST(SingleFlight, ExceptionIsSharedWithWaitersAndKeyStaysUsable) {
  RecordingObserver observer;
  auto options = BlobOptions(1000, 1);
  options.observer = &observer;
  options.error_ttl = absl::ZeroDuration();
  BlobCache cache(options);
  BlobResult leader_result = absl::UnknownError("not run");
  std::thread leader([&] {
    leader_result = cache.GetOrCompute("k", [&]() -> BlobResult {
      if (!observer.WaitForJoins(1)) return absl::InternalError("no join");
      throw std::runtime_error("out of states");
    });
  });
  BlobResult waiter_result = cache.GetOrCompute("k", [&]() -> BlobResult {
    // Runs only if this caller won the race to start the compute; then the
    // other thread joins it instead, and the roles are simply swapped.
    if (!observer.WaitForJoins(1)) return absl::InternalError("no join");
    throw std::runtime_error("out of states");
  });
  leader.join();
  for (const BlobResult* r : {&leader_result, &waiter_result}) {
    EXPECT_EQ(r->status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(r->status().message(), HasSubstr("out of states"));
  }
  EXPECT_EQ(cache.stats().compute_exceptions, 1u);

  BlobResult after = cache.GetOrCompute("k", [] { return BlobResult(MakeBlob("k", 1)); });
  EXPECT_TRUE(after.ok()) << after.status();
}

TEST(SingleFlight, WaiterGivesUpAtDeadlineWhileComputeFillsCache) {
  RecordingObserver observer;
  auto options = BlobOptions(1000, 1);
  options.observer = &observer;
  BlobCache cache(options);
  Notification computing;
  Notification release;
  BlobResult leader_result = absl::UnknownError("not run");
  std::thread leader([&] {
    leader_result = cache.GetOrCompute("k", [&]() -> BlobResult {
      computing.Notify();
      release.Wait();
      return MakeBlob("k", 10);
    });
  });
  computing.Wait();

  bool waiter_computed = false;
  auto must_not_run = [&]() -> BlobResult {
    waiter_computed = true;
    return absl::InternalError("a second compute ran");
  };
  BlobResult timed_out =
      cache.GetOrCompute("k", must_not_run, absl::Now() + absl::Milliseconds(20));
  EXPECT_EQ(timed_out.status().code(), absl::StatusCode::kDeadlineExceeded);
  BlobResult already_late = cache.GetOrCompute("k", must_not_run, absl::InfinitePast());
  EXPECT_EQ(already_late.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(waiter_computed);

  release.Notify();
  leader.join();
  ASSERT_TRUE(leader_result.ok());
  EXPECT_EQ(cache.Get("k"), *leader_result);  // The compute went on and filled the cache.
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.deadline_exceeded, 2u);
  EXPECT_EQ(stats.joins, 2u);
  EXPECT_EQ(stats.computes, 1u);
  EXPECT_EQ(observer.deadline_exceeded(), 2);
}

// Runs each task on its own thread; joins them all on destruction.
class ThreadPerTaskExecutor {
 public:
  ~ThreadPerTaskExecutor() { JoinAll(); }
  void Run(absl::AnyInvocable<void() &&> task) {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back([task = std::move(task)]() mutable { std::move(task)(); });
  }
  void JoinAll() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(threads_.size());
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

TEST(SingleFlight, WithExecutorTheStartingCallerAlsoHonoursItsDeadline) {
  ThreadPerTaskExecutor executor;
  auto options = BlobOptions(1000, 1);
  options.executor = [&](absl::AnyInvocable<void() &&> task) { executor.Run(std::move(task)); };
  BlobCache cache(options);
  Notification release;
  BlobResult starter = cache.GetOrCompute(
      "k",
      [&]() -> BlobResult {
        release.Wait();
        return MakeBlob("k", 10);
      },
      absl::Now() + absl::Milliseconds(20));
  EXPECT_EQ(starter.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(executor.started(), 1);
  EXPECT_EQ(cache.Get("k"), nullptr);  // Still computing.

  release.Notify();
  executor.JoinAll();
  auto value = cache.Get("k");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->key(), "k");
  // Without a deadline the result comes back through the executor too.
  BlobResult other = cache.GetOrCompute("j", [] { return BlobResult(MakeBlob("j", 5)); });
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->key(), "j");
}

TEST(SingleFlight, ComputeOnExecutorMayOutliveTheCache) {
  ThreadPerTaskExecutor executor;
  Notification release;
  const int live_before = Blob::live();
  {
    auto options = BlobOptions(1000, 1);
    options.executor = [&](absl::AnyInvocable<void() &&> task) { executor.Run(std::move(task)); };
    BlobCache cache(options);
    BlobResult r = cache.GetOrCompute(
        "k",
        [&]() -> BlobResult {
          release.Wait();
          return MakeBlob("k", 10);
        },
        absl::InfinitePast());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  }  // The cache object is gone; its compute is still running.
  release.Notify();
  executor.JoinAll();
  EXPECT_EQ(Blob::live(), live_before);  // The last owner released the value.
}

TEST(SingleFlight, DistinctKeysComputeIndependently) {
  BlobCache cache(BlobOptions(1000, 4));
  int computes = 0;
  for (const char* key : {"a", "b", "c", "a", "b", "c"}) {
    BlobResult r = cache.GetOrCompute(key, [&]() -> BlobResult {
      ++computes;
      return MakeBlob(key, 10);
    });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)->key(), key);
  }
  EXPECT_EQ(computes, 3);
  EXPECT_EQ(cache.stats().hits, 3u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

}  // namespace
}  // namespace maskd::testing
