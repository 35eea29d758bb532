// Failed computes: which errors are cached, for how long (on an injected
// clock), what they cost, and how exceptions and null values are reported.
#include <stdexcept>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "cache/clock.h"
#include "cache/compute_errors.h"
#include "cache/sharded_lru_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/test_values.h"

namespace maskd::testing {
namespace {

using ::testing::HasSubstr;

class ErrorCacheTest : public ::testing::Test {
 protected:
  ErrorCacheTest() : cache_(MakeOptions()) {}

  ShardedLruCacheOptions<Blob> MakeOptions() {
    auto options = BlobOptions(10000, 2);
    options.clock = &clock_;
    options.error_ttl = absl::Seconds(5);
    options.observer = &observer_;
    return options;
  }

  // A compute for `key` that counts its runs and fails with `error` (or
  // succeeds when `error` is OK).
  auto Compute(const std::string& key, absl::Status error) {
    return [this, key, error]() -> BlobResult {
      ++computes_;
      if (!error.ok()) return error;
      return MakeBlob(key, 10);
    };
  }

  FakeClock clock_;
  RecordingObserver observer_;
  BlobCache cache_;
  int computes_ = 0;
};

TEST_F(ErrorCacheTest, ErrorIsServedFromCacheUntilTtlExpires) {
  const absl::Status bad = absl::InvalidArgumentError("bad schema at /properties/x");
  BlobResult first = cache_.GetOrCompute("k", Compute("k", bad));
  EXPECT_EQ(first.status(), bad);
  EXPECT_EQ(computes_, 1);

  clock_.Advance(absl::Seconds(4));
  BlobResult again = cache_.GetOrCompute("k", Compute("k", absl::OkStatus()));
  EXPECT_EQ(again.status(), bad);  // Still the cached error; no compute ran.
  EXPECT_EQ(computes_, 1);
  EXPECT_EQ(cache_.stats().error_hits, 1u);
  EXPECT_EQ(observer_.error_hits(), 1);

  clock_.Advance(absl::Seconds(1));  // Exactly the TTL: expired.
  BlobResult fresh = cache_.GetOrCompute("k", Compute("k", absl::OkStatus()));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(computes_, 2);

  // Success is cached with no expiry.
  clock_.Advance(absl::Hours(24));
  BlobResult hit = cache_.GetOrCompute("k", Compute("k", bad));
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(*hit, *fresh);
  EXPECT_EQ(computes_, 2);

  const CacheStats stats = cache_.stats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.computes, 2u);
  EXPECT_EQ(stats.compute_errors, 1u);
  EXPECT_EQ(observer_.computes(), 2);
  EXPECT_EQ(observer_.compute_errors(), 1);
}

TEST_F(ErrorCacheTest, CachedErrorIsChargedAndListed) {
  const absl::Status bad = absl::UnimplementedError("keyword 'not' with $ref");
  ASSERT_FALSE(cache_.GetOrCompute("key", Compute("key", bad)).ok());
  const CacheStats stats = cache_.stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, BlobCache::ErrorCharge("key", bad));
  ASSERT_EQ(cache_.Entries().size(), 1u);
  EXPECT_TRUE(cache_.Entries()[0].is_error);
  // Get only ever returns values; the error is invisible to it.
  EXPECT_EQ(cache_.Get("key"), nullptr);
  // An expired error is dropped on the next lookup.
  clock_.Advance(absl::Seconds(6));
  EXPECT_EQ(cache_.Get("key"), nullptr);
  EXPECT_EQ(cache_.stats().entries, 0u);
  EXPECT_EQ(cache_.stats().bytes, 0u);
}

TEST_F(ErrorCacheTest, CachedErrorKeepsPayloadsAndIsACopy) {
  absl::Status bad = absl::InvalidArgumentError("unsupported");
  bad.SetPayload("maskd/json-pointer", absl::Cord("/properties/a/not"));
  ASSERT_FALSE(cache_.GetOrCompute("k", Compute("k", bad)).ok());
  BlobResult hit = cache_.GetOrCompute("k", Compute("k", absl::OkStatus()));
  EXPECT_EQ(hit.status(), bad);  // Equality covers code, message and payloads.
  auto pointer = hit.status().GetPayload("maskd/json-pointer");
  ASSERT_TRUE(pointer.has_value());
  EXPECT_EQ(std::string(*pointer), "/properties/a/not");
  EXPECT_EQ(cache_.stats().bytes,
            BlobCache::ErrorCharge("k", bad));  // Payload text is charged too.
  EXPECT_GT(BlobCache::ErrorCharge("k", bad),
            BlobCache::ErrorCharge("k", absl::InvalidArgumentError("unsupported")));
}

TEST_F(ErrorCacheTest, EraseForgetsCachedError) {
  const absl::Status bad = absl::InvalidArgumentError("bad");
  ASSERT_FALSE(cache_.GetOrCompute("k", Compute("k", bad)).ok());
  EXPECT_TRUE(cache_.Erase("k"));
  EXPECT_TRUE(cache_.GetOrCompute("k", Compute("k", absl::OkStatus())).ok());
  EXPECT_EQ(computes_, 2);
}

TEST_F(ErrorCacheTest, TransientErrorsAreNotCached) {
  for (const absl::Status& transient :
       {absl::CancelledError("client went away"), absl::DeadlineExceededError("slow"),
        absl::ResourceExhaustedError("busy"), absl::UnavailableError("down"),
        absl::AbortedError("retry")}) {
    EXPECT_FALSE(IsDeterministicError(transient)) << transient;
    EXPECT_EQ(cache_.GetOrCompute("k", Compute("k", transient)).status(), transient);
  }
  EXPECT_EQ(computes_, 5);
  EXPECT_EQ(cache_.stats().entries, 0u);
  EXPECT_TRUE(IsDeterministicError(absl::InvalidArgumentError("x")));
  EXPECT_TRUE(IsDeterministicError(absl::InternalError("x")));
}

TEST(ErrorCache, ZeroTtlCachesNoErrors) {
  auto options = BlobOptions(1000, 1);
  options.error_ttl = absl::ZeroDuration();
  BlobCache cache(options);
  int computes = 0;
  auto failing = [&]() -> BlobResult {
    ++computes;
    return absl::InvalidArgumentError("bad");
  };
  EXPECT_FALSE(cache.GetOrCompute("k", failing).ok());
  EXPECT_FALSE(cache.GetOrCompute("k", failing).ok());
  EXPECT_EQ(computes, 2);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(ErrorCache, CustomPolicyDecidesWhatToCache) {
  FakeClock clock;
  auto options = BlobOptions(1000, 1);
  options.clock = &clock;
  options.should_cache_error = [](const absl::Status& s) {
    return s.code() == absl::StatusCode::kUnavailable;
  };
  BlobCache cache(options);
  int computes = 0;
  auto unavailable = [&]() -> BlobResult {
    ++computes;
    return absl::UnavailableError("down");
  };
  EXPECT_FALSE(cache.GetOrCompute("k", unavailable).ok());
  EXPECT_FALSE(cache.GetOrCompute("k", unavailable).ok());
  EXPECT_EQ(computes, 1);
}

TEST_F(ErrorCacheTest, ThrowingComputeBecomesInternalAndDoesNotWedgeKey) {
  auto throwing = [this]() -> BlobResult {
    ++computes_;
    throw std::runtime_error("grammar blew up");
  };
  BlobResult thrown = cache_.GetOrCompute("k", throwing);
  EXPECT_EQ(thrown.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(thrown.status().message(), HasSubstr("grammar blew up"));
  EXPECT_EQ(cache_.stats().compute_exceptions, 1u);
  EXPECT_EQ(cache_.stats().compute_errors, 1u);

  // Cached like any deterministic error, then computed again after the TTL.
  EXPECT_EQ(cache_.GetOrCompute("k", throwing).status(), thrown.status());
  EXPECT_EQ(computes_, 1);
  clock_.Advance(absl::Seconds(5));
  EXPECT_TRUE(cache_.GetOrCompute("k", Compute("k", absl::OkStatus())).ok());
  EXPECT_EQ(computes_, 2);
}

TEST_F(ErrorCacheTest, NonStandardExceptionIsCaught) {
  BlobResult r = cache_.GetOrCompute("k", []() -> BlobResult { throw 42; });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("non-standard exception"));
}

TEST_F(ErrorCacheTest, NullValueBecomesInternal) {
  BlobResult r = cache_.GetOrCompute("k", []() -> BlobResult { return nullptr; });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("null"));
}

TEST_F(ErrorCacheTest, ThrowingSizerBecomesInternal) {
  auto options = MakeOptions();
  options.sizer = [](const Blob&) -> size_t { throw std::length_error("cannot size"); };
  BlobCache cache(options);
  BlobResult r = cache.GetOrCompute("k", Compute("k", absl::OkStatus()));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot size"));
}

}  // namespace
}  // namespace maskd::testing
