// LRU order, byte-bounded eviction, oversized entries, Insert/Erase/Clear and
// the counters they drive.
#include <string>
#include <vector>

#include "cache/sharded_lru_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/test_values.h"

namespace maskd::testing {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Keys(const BlobCache& cache) {
  std::vector<std::string> keys;
  for (const CacheEntryInfo& e : cache.Entries()) keys.push_back(e.key);
  return keys;
}

TEST(ShardedLruCache, GetMissesThenHitsAfterInsert) {
  BlobCache cache(BlobOptions(1000, 1));
  EXPECT_EQ(cache.Get("a"), nullptr);
  auto blob = MakeBlob("a", 10);
  EXPECT_TRUE(cache.Insert("a", blob));
  EXPECT_EQ(cache.Get("a"), blob);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.bytes, 10u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.capacity_bytes, 1000u);
}

TEST(ShardedLruCache, EvictsLeastRecentlyUsedFirst) {
  RecordingObserver observer;
  auto options = BlobOptions(300, 1);
  options.observer = &observer;
  BlobCache cache(options);
  cache.Insert("a", MakeBlob("a", 100));
  cache.Insert("b", MakeBlob("b", 100));
  cache.Insert("c", MakeBlob("c", 100));
  EXPECT_THAT(Keys(cache), ElementsAre("c", "b", "a"));

  ASSERT_NE(cache.Get("a"), nullptr);  // Now "b" is the least recently used.
  EXPECT_THAT(Keys(cache), ElementsAre("a", "c", "b"));
  cache.Insert("d", MakeBlob("d", 100));
  EXPECT_THAT(Keys(cache), ElementsAre("d", "a", "c"));
  EXPECT_EQ(cache.Get("b"), nullptr);

  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.evicted_bytes, 100u);
  EXPECT_EQ(stats.bytes, 300u);
  EXPECT_EQ(observer.evictions(), 1);
  EXPECT_EQ(observer.evicted_bytes(), 100u);
}

TEST(ShardedLruCache, BoundsBytesNotEntries) {
  BlobCache cache(BlobOptions(1000, 1));
  for (int i = 0; i < 100; ++i) {
    const std::string key = "small" + std::to_string(i);
    ASSERT_TRUE(cache.Insert(key, MakeBlob(key, 10)));
  }
  EXPECT_EQ(cache.stats().entries, 100u);  // 100 entries of 10 bytes fit.
  EXPECT_EQ(cache.stats().bytes, 1000u);

  // One 450-byte entry pushes out the 45 least recently used small ones.
  ASSERT_TRUE(cache.Insert("big", MakeBlob("big", 450)));
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.evictions, 45u);
  EXPECT_EQ(stats.entries, 56u);
  EXPECT_EQ(stats.bytes, 1000u);
  EXPECT_EQ(cache.Get("small44"), nullptr);
  EXPECT_NE(cache.Get("small45"), nullptr);
  EXPECT_NE(cache.Get("big"), nullptr);
}

TEST(ShardedLruCache, InsertReplacesEntryAndRecharges) {
  BlobCache cache(BlobOptions(1000, 1));
  cache.Insert("a", MakeBlob("a", 100));
  auto replacement = MakeBlob("a", 30);
  cache.Insert("a", replacement, 70);  // An explicit charge overrides the sizer.
  EXPECT_EQ(cache.Get("a"), replacement);
  EXPECT_EQ(cache.stats().bytes, 70u);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().evictions, 0u);  // Replacing is not evicting.
}

TEST(ShardedLruCache, OversizedInsertIsRefusedAndDropsOldEntry) {
  RecordingObserver observer;
  auto options = BlobOptions(100, 1);
  options.observer = &observer;
  BlobCache cache(options);
  ASSERT_TRUE(cache.Insert("a", MakeBlob("a", 100)));  // Exactly the budget fits.
  auto huge = MakeBlob("a", 101);
  EXPECT_FALSE(cache.Insert("a", huge));
  EXPECT_EQ(cache.Get("a"), nullptr);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.oversized, 1u);
  EXPECT_EQ(stats.bytes, 0u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(observer.oversized(), 1);
  EXPECT_EQ(huge.use_count(), 1);  // The cache kept no reference.
}

TEST(ShardedLruCache, OversizedComputedValueIsReturnedButNotKept) {
  BlobCache cache(BlobOptions(100, 1));
  int computes = 0;
  auto compute = [&]() -> BlobResult {
    ++computes;
    return MakeBlob("big", 500);
  };
  BlobResult first = cache.GetOrCompute("big", compute);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->bytes(), 500u);
  BlobResult second = cache.GetOrCompute("big", compute);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(computes, 2);  // Not cached, so computed again.
  EXPECT_NE(*first, *second);
  EXPECT_EQ(cache.stats().oversized, 2u);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(ShardedLruCache, EraseAndClearDropEntriesAndBytes) {
  BlobCache cache(BlobOptions(1000, 4));
  const int live_before = Blob::live();
  for (int i = 0; i < 8; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(cache.Insert(key, MakeBlob(key, 20)));
  }
  EXPECT_EQ(cache.stats().bytes, 160u);
  EXPECT_TRUE(cache.Erase("k3"));
  EXPECT_FALSE(cache.Erase("k3"));
  EXPECT_FALSE(cache.Erase("never"));
  EXPECT_EQ(cache.Get("k3"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 140u);
  EXPECT_EQ(cache.stats().entries, 7u);
  EXPECT_EQ(Blob::live(), live_before + 7);

  cache.Clear();
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_TRUE(cache.Entries().empty());
  EXPECT_EQ(Blob::live(), live_before);
  EXPECT_EQ(cache.Get("k0"), nullptr);
}

TEST(ShardedLruCache, NullInsertIsRefused) {
  BlobCache cache(BlobOptions(1000, 1));
  cache.Insert("a", MakeBlob("a", 10));
  EXPECT_FALSE(cache.Insert("a", nullptr));
  EXPECT_FALSE(cache.Insert("a", nullptr, 5));
  ASSERT_NE(cache.Get("a"), nullptr);  // The old entry is untouched.
  EXPECT_EQ(cache.stats().bytes, 10u);
}

TEST(ShardedLruCache, EvictedValueStaysValidForItsHolder) {
  BlobCache cache(BlobOptions(100, 1));
  cache.Insert("a", MakeBlob("a", 100));
  std::shared_ptr<const Blob> held = cache.Get("a");
  cache.Insert("b", MakeBlob("b", 100));  // Evicts "a".
  EXPECT_EQ(cache.Get("a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->key(), "a");
}

TEST(ShardedLruCache, ShardsArePowerOfTwoWithEqualBudgets) {
  BlobCache three(BlobOptions(1200, 3));
  EXPECT_EQ(three.num_shards(), 4u);
  EXPECT_EQ(three.shard_budget_bytes(), 300u);
  BlobCache zero(BlobOptions(1200, 0));
  EXPECT_EQ(zero.num_shards(), 1u);
  EXPECT_EQ(zero.shard_budget_bytes(), 1200u);
}

TEST(ShardedLruCache, EachShardStaysWithinItsBudget) {
  BlobCache cache(BlobOptions(800, 8));
  for (int i = 0; i < 500; ++i) {
    const std::string key = "key-" + std::to_string(i);
    cache.Insert(key, MakeBlob(key, 1 + i % 37));
  }
  const CacheStats stats = cache.stats();
  EXPECT_LE(stats.bytes, 800u);
  EXPECT_GT(stats.evictions, 0u);
  size_t total = 0;
  for (const CacheEntryInfo& e : cache.Entries()) total += e.bytes;
  EXPECT_EQ(total, stats.bytes);
  // Keys spread over the shards: with 500 keys every shard must be in use,
  // so far more than one shard's worth of bytes is resident.
  EXPECT_GT(stats.bytes, 4 * cache.shard_budget_bytes());
}

TEST(ShardedLruCache, DefaultSizerChargesSizeofValue) {
  ShardedLruCache<int> cache;
  ASSERT_TRUE(cache.Insert("x", std::make_shared<const int>(7)));
  EXPECT_EQ(cache.stats().bytes, sizeof(int));
  EXPECT_EQ(*cache.Get("x"), 7);
}

// Options::evict_first: a full shard evicts the entries it picks first
// (least recently used of them), on insert and in EvictBytes; then LRU.
TEST(ShardedLruCache, EvictFirstEntriesGoBeforeOlderOnes) {
  auto options = BlobOptions(300, 1);
  options.evict_first = [](std::string_view key) { return key.front() == 'x'; };
  BlobCache cache(options);
  cache.Insert("a", MakeBlob("a", 100));
  cache.Insert("x1", MakeBlob("x1", 100));
  cache.Insert("x2", MakeBlob("x2", 100));
  cache.Insert("b", MakeBlob("b", 100));
  EXPECT_THAT(Keys(cache), ElementsAre("b", "x2", "a"));
  EXPECT_EQ(cache.EvictBytes(100), 100u);
  EXPECT_THAT(Keys(cache), ElementsAre("b", "a"));
  EXPECT_EQ(cache.EvictBytes(100), 100u);  // none picked: plain LRU
  EXPECT_THAT(Keys(cache), ElementsAre("b"));
}

// EraseIfUnused drops an entry nobody else holds, and keeps one in use.
TEST(ShardedLruCache, EraseIfUnusedKeepsValuesInUse) {
  BlobCache cache(BlobOptions(1000, 1));
  cache.Insert("a", MakeBlob("a", 100));
  auto held = MakeBlob("b", 50);
  cache.Insert("b", held);
  EXPECT_EQ(cache.EraseIfUnused("b"), 0u);
  EXPECT_EQ(cache.EraseIfUnused("a"), 100u);
  EXPECT_EQ(cache.EraseIfUnused("missing"), 0u);
  EXPECT_THAT(Keys(cache), ElementsAre("b"));
  EXPECT_EQ(cache.stats().evictions, 1u);
}

}  // namespace
}  // namespace maskd::testing
