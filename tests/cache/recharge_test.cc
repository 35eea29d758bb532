// Recharge: values that grow after insert (a grammar's lazy automata) are
// charged what they hold now, and the cache evicts to stay in budget.
#include <atomic>
#include <memory>

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

}  // namespace
}  // namespace maskd
