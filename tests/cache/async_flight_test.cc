// GetOrComputeAsync: waiters that hold no thread, computes cancelled once
// every waiter has left (cancel_abandoned), and admission refusing new
// computes (never hits or joins).
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache/sharded_lru_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/test_values.h"

namespace maskd::testing {
namespace {

// Collects the results handed to `done` callbacks.
struct Results {
  std::mutex mu;
  std::vector<BlobResult> got;
  Notification first;
  absl::AnyInvocable<void(BlobResult) &&> Callback() {
    return [this](BlobResult result) {
      {
        std::lock_guard<std::mutex> lock(mu);
        got.push_back(std::move(result));
      }
      first.Notify();
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
};

// Runs each task on its own thread (joined by the test).
struct ThreadExecutor {
  std::vector<std::thread> threads;
  std::mutex mu;
  void Run(absl::AnyInvocable<void() &&> task) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back([task = std::move(task)]() mutable { std::move(task)(); });
  }
  void Join() {
    std::vector<std::thread> running;
    {
      std::lock_guard<std::mutex> lock(mu);
      running.swap(threads);
    }
    for (std::thread& t : running) t.join();
  }
  ~ThreadExecutor() { Join(); }
};

TEST(AsyncFlight, WaitersGetTheComputedValueAndLaterCallersAHit) {
  ThreadExecutor executor;
  auto options = BlobOptions(1 << 20, 1);
  options.executor = [&](absl::AnyInvocable<void() &&> task) { executor.Run(std::move(task)); };
  BlobCache cache(options);
  Notification release;
  std::atomic<int> computes{0};
  auto compute = [&](const std::atomic<bool>&) -> BlobResult {
    ++computes;
    release.Wait();
    return MakeBlob("k", 10);
  };
  Results results;
  auto a = cache.GetOrComputeAsync("k", compute, results.Callback());
  auto b = cache.GetOrComputeAsync("k", compute, results.Callback());
  EXPECT_EQ(results.size(), 0u);  // nobody blocked, nothing answered yet
  release.Notify();
  executor.Join();
  ASSERT_EQ(results.size(), 2u);
  for (const BlobResult& r : results.got) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)->key(), "k");
  }
  Results hit;
  cache.GetOrComputeAsync("k", compute, hit.Callback());
  ASSERT_EQ(hit.size(), 1u);  // answered on the calling thread
  EXPECT_EQ(computes.load(), 1);
}

TEST(AsyncFlight, ComputeAbandonedByEveryWaiterIsCancelledAndNotCached) {
  ThreadExecutor executor;
  auto options = BlobOptions(1 << 20, 1);
  options.cancel_abandoned = true;
  options.executor = [&](absl::AnyInvocable<void() &&> task) { executor.Run(std::move(task)); };
  BlobCache cache(options);
  Notification started;
  std::atomic<bool> saw_cancel{false};
  auto slow = [&](const std::atomic<bool>& cancelled) -> BlobResult {
    started.Notify();
    // Bounded: a cache that never cancels fails the test after ~10 s.
    for (int i = 0; i < 10000 && !cancelled.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    saw_cancel = cancelled.load();
    return absl::CancelledError("stopped");
  };
  Results results;
  auto first = cache.GetOrComputeAsync("k", slow, results.Callback());
  auto second = cache.GetOrComputeAsync("k", slow, results.Callback());
  started.Wait();
  first.Leave();
  EXPECT_FALSE(saw_cancel.load());  // one waiter left
  second.Leave();
  executor.Join();
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_EQ(results.size(), 0u);  // left waiters are never called

  // The key is free again: a new caller gets a new compute, not the
  // cancelled one's error.
  Results again;
  cache.GetOrComputeAsync(
      "k", [](const std::atomic<bool>&) -> BlobResult { return MakeBlob("k", 1); },
      again.Callback());
  executor.Join();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again.got[0].ok()) << again.got[0].status();
}

TEST(AsyncFlight, WithoutCancelAbandonedTheComputeGoesOnAndFillsTheCache) {
  ThreadExecutor executor;
  auto options = BlobOptions(1 << 20, 1);
  options.executor = [&](absl::AnyInvocable<void() &&> task) { executor.Run(std::move(task)); };
  BlobCache cache(options);
  Notification release;
  Results results;
  auto ticket = cache.GetOrComputeAsync(
      "k",
      [&](const std::atomic<bool>& cancelled) -> BlobResult {
        release.Wait();
        EXPECT_FALSE(cancelled.load());
        return MakeBlob("k", 1);
      },
      results.Callback());
  ticket.Leave();
  release.Notify();
  executor.Join();
  EXPECT_EQ(results.size(), 0u);
  EXPECT_NE(cache.Get("k"), nullptr);
}

TEST(AsyncFlight, AdmissionRefusesOnlyNewComputes) {
  auto options = BlobOptions(1 << 20, 1);
  BlobCache cache(options);
  std::atomic<int> admitted{0};
  auto refuse = [&]() -> absl::Status {
    ++admitted;
    return absl::ResourceExhaustedError("queue full (--max_queued_compiles)");
  };
  Results refused;
  cache.GetOrComputeAsync(
      "new", [](const std::atomic<bool>&) -> BlobResult { return MakeBlob("new", 1); },
      refused.Callback(), refuse);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused.got[0].status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cache.Get("new"), nullptr);  // nothing computed or cached

  ASSERT_TRUE(cache.Insert("old", MakeBlob("old", 1)));
  Results hit;
  cache.GetOrComputeAsync(
      "old", [](const std::atomic<bool>&) -> BlobResult { return MakeBlob("x", 1); },
      hit.Callback(), refuse);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_TRUE(hit.got[0].ok());
  EXPECT_EQ(admitted.load(), 1);  // asked only for the new compute
}

}  // namespace
}  // namespace maskd::testing
