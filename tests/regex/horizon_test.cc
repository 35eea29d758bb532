// Horizon fingerprints (regex/horizon.h): expressions with equal ones must
// agree, on every string of at most `horizon` bytes, on membership and on
// being a prefix of a member; checked by brute force over generated counted
// expressions. And expressions that differ within the horizon must differ.
#include "compiler/regex/horizon.h"

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace maskd::regex {
namespace {

bool IsPrefix(ExprSet& pool, ExprId e, const std::string& s) {
  for (char c : s) e = pool.Derivative(e, static_cast<uint8_t>(c));
  absl::StatusOr<bool> empty = pool.IsEmpty(e);
  EXPECT_TRUE(empty.ok());
  return !*empty;
}

// Every string over {a, b, c} of at most `n` bytes.
std::vector<std::string> Strings(size_t n) {
  std::vector<std::string> out = {""};
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() == n) continue;
    for (char c : {'a', 'b', 'c'}) out.push_back(out[i] + c);
  }
  return out;
}

TEST(HorizonFingerprintTest, BoundsBeyondTheHorizonDoNotMatter) {
  ExprSet pool;
  const ExprId a = pool.Byte('a');
  const ExprId quote = pool.Byte('"');
  auto counted = [&](uint32_t lo, uint32_t hi) {
    return pool.Concat(std::vector<ExprId>{pool.Repeat(a, lo, hi), quote});
  };
  auto h = [&](ExprId e, uint32_t horizon) { return HorizonFingerprint(pool, e, horizon); };
  EXPECT_EQ(h(counted(0, 255), 10), h(counted(0, 300), 10));
  EXPECT_EQ(h(counted(0, 255), 10), h(counted(0, ExprSet::kUnbounded), 10));
  EXPECT_EQ(h(counted(40, 255), 10), h(counted(12, 13), 10));
  // Within the horizon, bounds count.
  EXPECT_NE(h(counted(0, 9), 10), h(counted(0, 10), 10));
  EXPECT_NE(h(counted(0, 255), 10), h(counted(0, 5), 10));
  EXPECT_NE(h(counted(3, 255), 10), h(counted(4, 255), 10));
  // A nullable body is not clamped (empty iterations would pad any count).
  const ExprId maybe_a = pool.Optional(a);
  EXPECT_NE(h(pool.Repeat(maybe_a, 20, 30), 10), h(pool.Repeat(maybe_a, 20, 40), 10));
  // And and Not are refused.
  EXPECT_FALSE(h(pool.And(counted(0, 255), pool.Star(pool.ByteRange('a', 'z'))), 10).has_value());
  EXPECT_FALSE(h(pool.Not(counted(0, 255)), 10).has_value());
}

TEST(HorizonFingerprintTest, EqualFingerprintsAgreeOnShortStringsByBruteForce) {
  ExprSet pool;
  std::mt19937 rng(3);
  const std::vector<ExprId> atoms = {pool.Byte('a'), pool.Byte('b'), pool.Literal("ab"),
                                     pool.Or(pool.Byte('a'), pool.Literal("bc")),
                                     pool.ByteRange('a', 'c')};
  // Random boolean-free expressions whose counts are random too.
  std::function<ExprId(int)> gen = [&](int depth) -> ExprId {
    const int pick = depth == 0 ? 0 : static_cast<int>(rng() % 4);
    switch (pick) {
      case 0:
        return atoms[rng() % atoms.size()];
      case 1:
        return pool.Concat(gen(depth - 1), gen(depth - 1));
      case 2:
        return pool.Or(gen(depth - 1), gen(depth - 1));
      default: {
        const uint32_t lo = rng() % 9;
        const uint32_t hi = rng() % 3 == 0 ? ExprSet::kUnbounded : lo + rng() % 9;
        return pool.Repeat(gen(depth - 1), lo, hi);
      }
    }
  };
  constexpr uint32_t kHorizon = 5;
  const std::vector<std::string> strings = Strings(kHorizon);
  absl::flat_hash_map<Fingerprint, ExprId> first;
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    const ExprId e = gen(3);
    std::optional<Fingerprint> f = HorizonFingerprint(pool, e, kHorizon);
    ASSERT_TRUE(f.has_value());
    auto [it, inserted] = first.emplace(*f, e);
    if (inserted || it->second == e) continue;
    ++compared;
    for (const std::string& s : strings) {
      ASSERT_EQ(pool.Matches(e, s), pool.Matches(it->second, s))
          << pool.ToString(e) << " vs " << pool.ToString(it->second) << " on '" << s << "'";
      ASSERT_EQ(IsPrefix(pool, e, s), IsPrefix(pool, it->second, s))
          << pool.ToString(e) << " vs " << pool.ToString(it->second) << " on '" << s << "'";
    }
  }
  // Distinct expressions sharing a fingerprint were actually met.
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace maskd::regex
