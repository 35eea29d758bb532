// LexemeSet: membership, iteration order, set algebra, equality and hashing
// across word boundaries.
#include "compiler/grammar/lexeme_set.h"

#include <random>
#include <set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

TEST(LexemeSetTest, MatchesStdSet) {
  std::mt19937 rng(5);
  for (size_t universe : {1u, 63u, 64u, 65u, 200u}) {
    LexemeSet a(universe), b(universe);
    std::set<LexemeId> ra, rb;
    for (int i = 0; i < 100; ++i) {
      const LexemeId x = rng() % universe, y = rng() % universe;
      a.Insert(x);
      ra.insert(x);
      b.Insert(y);
      rb.insert(y);
      if (rng() % 4 == 0) {
        a.Erase(y);
        ra.erase(y);
      }
    }
    EXPECT_EQ(a.ToVector(), std::vector<LexemeId>(ra.begin(), ra.end()));
    EXPECT_EQ(a.Count(), ra.size());
    for (LexemeId x = 0; x < universe + 3; ++x) EXPECT_EQ(a.Contains(x), ra.contains(x));

    std::set<LexemeId> inter, uni = ra;
    for (LexemeId x : rb) {
      if (ra.contains(x)) inter.insert(x);
      uni.insert(x);
    }
    EXPECT_EQ(a.Intersects(b), !inter.empty());
    LexemeSet u = a;
    u.UnionWith(b);
    EXPECT_EQ(u.ToVector(), std::vector<LexemeId>(uni.begin(), uni.end()));
    LexemeSet i = a;
    i.IntersectWith(b);
    EXPECT_EQ(i.ToVector(), std::vector<LexemeId>(inter.begin(), inter.end()));
    i.Clear();
    EXPECT_TRUE(i.Empty());
    EXPECT_FALSE(u.Empty() && !uni.empty());
  }
}

TEST(LexemeSetTest, EqualityAndHash) {
  LexemeSet a(130), b(130), c(131);
  a.Insert(129);
  b.Insert(129);
  c.Insert(129);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);  // Different universes differ.
  EXPECT_EQ(absl::Hash<LexemeSet>()(a), absl::Hash<LexemeSet>()(b));
  b.Insert(0);
  EXPECT_FALSE(a == b);
  absl::flat_hash_set<LexemeSet> sets = {a, b, c};
  EXPECT_EQ(sets.size(), 3u);
  EXPECT_TRUE(sets.contains(a));
}

}  // namespace
}  // namespace maskd
