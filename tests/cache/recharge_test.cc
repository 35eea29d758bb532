// Recharge: values that grow after insert (a grammar's lazy automata) are
// charged what they hold now, and the cache evicts to stay in budget.
#include <atomic>
#include <memory>
#include <string>

#include "cache/sharded_lru_cache.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

struct Growing {
  mutable std::atomic<size_t> bytes{0};
};

ShardedLruCache<Growing>::Options OneShard(size_t max_bytes) {
  ShardedLruCache<Growing>::Options options;
  options.max_bytes = max_bytes;
  options.num_shards = 1;
  options.sizer = [](const Growing& g) { return g.bytes.load(); };
  return options;
}

std::shared_ptr<Growing> Make(size_t bytes) {
  auto g = std::make_shared<Growing>();
  g->bytes = bytes;
  return g;
}

TEST(Recharge, GrowthIsChargedAndEvictsTheLeastRecentlyUsed) {
  ShardedLruCache<Growing> cache(OneShard(100));
  auto old_one = Make(10);
  auto grower = Make(10);
  ASSERT_TRUE(cache.Insert("old", old_one));
  ASSERT_TRUE(cache.Insert("grower", grower));
  EXPECT_EQ(cache.stats().bytes, 20u);

  grower->bytes = 95;                   // grew in place, as lazy automata do
  EXPECT_EQ(cache.stats().bytes, 20u);  // not seen until recharged
  cache.Recharge();
  EXPECT_EQ(cache.stats().bytes, 95u);
  EXPECT_EQ(cache.Get("old"), nullptr);  // evicted to make room
  EXPECT_NE(cache.Get("grower"), nullptr);

  grower->bytes = 150;  // past the whole budget: it goes itself
  cache.Recharge();
  EXPECT_EQ(cache.Get("grower"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(grower->bytes.load(), 150u);  // the caller's reference lives on
}

TEST(Recharge, ShrinkingValuesFreeBudget) {
  ShardedLruCache<Growing> cache(OneShard(100));
  auto a = Make(60);
  ASSERT_TRUE(cache.Insert("a", a));
  a->bytes = 30;
  cache.Recharge();
  EXPECT_EQ(cache.stats().bytes, 30u);
  ASSERT_TRUE(cache.Insert("b", Make(60)));
  EXPECT_NE(cache.Get("a"), nullptr);  // both fit now
  EXPECT_NE(cache.Get("b"), nullptr);
}

// Remeasure charges one key's growth at once (the session calls it after a
// step, not a second later) and evicts others first, the grown one last.
TEST(Remeasure, GrowthOfOneKeyIsChargedNowAndEvictsOthersFirst) {
  ShardedLruCache<Growing> cache(OneShard(100));
  auto grower = Make(10);
  auto other = Make(10);
  ASSERT_TRUE(cache.Insert("grower", grower));
  ASSERT_TRUE(cache.Insert("other", other));  // most recently used
  grower->bytes = 95;
  EXPECT_EQ(cache.Remeasure("grower"), 95u);
  EXPECT_EQ(cache.stats().bytes, 95u);
  // "grower" was the least recently used, yet "other" went.
  EXPECT_EQ(cache.Get("other"), nullptr);
  EXPECT_NE(cache.Get("grower"), nullptr);
  EXPECT_EQ(cache.stats().evictions, 1u);

  grower->bytes = 150;  // past the whole shard: it goes itself
  EXPECT_EQ(cache.Remeasure("grower"), 0u);
  EXPECT_EQ(cache.Get("grower"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.Remeasure("absent"), 0u);
}

// EvictBytes frees at least what is asked, least recently used first within
// each shard, and stops once enough is freed.
TEST(EvictBytes, FreesAtLeastWhatIsAskedOldestFirst) {
  ShardedLruCache<Growing> cache(OneShard(1000));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(cache.Insert("k" + std::to_string(i), Make(10)));
  ASSERT_NE(cache.Get("k0"), nullptr);  // k0 is now the most recent
  EXPECT_EQ(cache.EvictBytes(25), 30u);
  EXPECT_EQ(cache.stats().bytes, 70u);
  EXPECT_EQ(cache.Get("k1"), nullptr);
  EXPECT_EQ(cache.Get("k2"), nullptr);
  EXPECT_EQ(cache.Get("k3"), nullptr);
  EXPECT_NE(cache.Get("k0"), nullptr);
  EXPECT_NE(cache.Get("k4"), nullptr);
  EXPECT_EQ(cache.EvictBytes(1000), 70u);  // everything there is
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.EvictBytes(10), 0u);
}

TEST(EvictBytes, SkipsValuesHeldOutsideTheCache) {
  ShardedLruCache<Growing> cache(OneShard(1000));
  auto in_use = Make(10);
  ASSERT_TRUE(cache.Insert("in_use", in_use));  // the oldest
  ASSERT_TRUE(cache.Insert("free", Make(10)));
  EXPECT_EQ(cache.EvictBytes(20), 10u);  // only "free" frees anything
  EXPECT_NE(cache.Get("in_use"), nullptr);
  EXPECT_EQ(cache.Get("free"), nullptr);
  in_use.reset();
  EXPECT_EQ(cache.EvictBytes(20), 10u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(EvictBytes, TakesFromEveryShard) {
  ShardedLruCache<Growing>::Options options = OneShard(16000);
  options.num_shards = 16;
  ShardedLruCache<Growing> cache(options);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(cache.Insert("key" + std::to_string(i), Make(10)));
  EXPECT_EQ(cache.stats().bytes, 2000u);
  EXPECT_GE(cache.EvictBytes(1000), 1000u);
  EXPECT_LE(cache.stats().bytes, 1000u);
  EXPECT_GE(cache.EvictBytes(5000), 900u);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

}  // namespace
}  // namespace maskd
