// FailoverBackoff (clients/cpp/session.h), no server: the wait before each
// reconnect grows geometrically, stops at max_backoff, and the jitter takes
// off at most its fraction -- so the workers of a dead replica spread their
// reconnects over [wait * (1 - jitter), wait] instead of arriving together.
#include <random>
#include <set>

#include "clients/cpp/session.h"
#include "gtest/gtest.h"

namespace maskd::client {
namespace {

FailoverOptions Options() {
  FailoverOptions f;
  f.initial_backoff = absl::Milliseconds(20);
  f.multiplier = 2.0;
  f.max_backoff = absl::Milliseconds(500);
  f.jitter = 0.5;
  return f;
}

TEST(FailoverBackoffTest, GrowsGeometricallyUpToTheCapWithoutJitterDraw) {
  const FailoverOptions f = Options();
  EXPECT_EQ(FailoverBackoff(f, 1, 0.0), absl::Milliseconds(20));
  EXPECT_EQ(FailoverBackoff(f, 2, 0.0), absl::Milliseconds(40));
  EXPECT_EQ(FailoverBackoff(f, 5, 0.0), absl::Milliseconds(320));
  EXPECT_EQ(FailoverBackoff(f, 6, 0.0), absl::Milliseconds(500));  // 640 capped
  EXPECT_EQ(FailoverBackoff(f, 1000, 0.0), absl::Milliseconds(500));
  // Attempt numbers below 1 wait as the first.
  EXPECT_EQ(FailoverBackoff(f, 0, 0.0), absl::Milliseconds(20));
}

TEST(FailoverBackoffTest, JitterTakesOffAtMostItsFraction) {
  FailoverOptions f = Options();
  EXPECT_EQ(FailoverBackoff(f, 3, 1.0), absl::Milliseconds(40));   // 80 * (1 - 0.5)
  EXPECT_EQ(FailoverBackoff(f, 3, 0.25), absl::Milliseconds(70));  // 80 * (1 - 0.125)
  f.jitter = 0.0;
  EXPECT_EQ(FailoverBackoff(f, 3, 0.9), absl::Milliseconds(80));
  f.jitter = 7.0;  // clamped to 1: never a negative wait
  EXPECT_EQ(FailoverBackoff(f, 3, 1.0), absl::ZeroDuration());
  f.multiplier = 0.5;  // below 1 reads as 1: the wait never shrinks
  f.jitter = 0.0;
  EXPECT_EQ(FailoverBackoff(f, 4, 0.0), absl::Milliseconds(20));
}

// 64 workers of one dead replica with uniform draws: their waits cover the
// jitter's range instead of one instant.
TEST(FailoverBackoffTest, WorkersSpreadTheirReconnects) {
  const FailoverOptions f = Options();
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::set<int64_t> distinct_ms;
  absl::Duration lo = absl::InfiniteDuration(), hi = absl::ZeroDuration();
  for (int worker = 0; worker < 64; ++worker) {
    const absl::Duration wait = FailoverBackoff(f, 4, unit(random));
    lo = std::min(lo, wait);
    hi = std::max(hi, wait);
    distinct_ms.insert(absl::ToInt64Milliseconds(wait));
  }
  EXPECT_GE(lo, absl::Milliseconds(80));  // 160 * (1 - 0.5)
  EXPECT_LE(hi, absl::Milliseconds(160));
  EXPECT_GT(hi - lo, absl::Milliseconds(50));
  EXPECT_GT(distinct_ms.size(), 30u);
}

}  // namespace
}  // namespace maskd::client
