// ThreadPool: ParallelFor runs every index exactly once, also when nested in
// a pool task (the caller takes items, so a busy pool cannot deadlock it).
#include "service/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace maskd {
namespace {

TEST(ThreadPoolTest, ParallelForRunsEveryIndexOnce) {
  ThreadPool pool(3);
  for (size_t n : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<std::atomic<int>> runs(n);
    pool.ParallelFor(n, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "n " << n << " i " << i;
  }
}

TEST(ThreadPoolTest, NestedParallelForInEveryWorkerFinishes) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  // More outer items than workers, each running an inner ParallelFor from a
  // pool thread while all workers are busy.
  pool.ParallelFor(6, [&](size_t) { pool.ParallelFor(50, [&](size_t) { total.fetch_add(1); }); });
  EXPECT_EQ(total.load(), 300);
}

TEST(ThreadPoolTest, SubmittedTasksRunBeforeDestruction) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 100; ++i) pool.Submit([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace maskd
