// Horizon fingerprints (regex/horizon.h): expressions with equal ones must
// agree, on every string of at most `horizon` bytes, on membership and on
// being a prefix of a member; checked by brute force over generated counted
// expressions, length counters (And with a proven containment fact) and
// their derivatives among them. And expressions that differ within the
// horizon must differ.
#include "compiler/regex/horizon.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
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

// e and f agree, on every string of `strings`, on membership and on being a
// prefix of a member.
void ExpectAgree(ExprSet& pool, ExprId e, ExprId f, const std::vector<std::string>& strings) {
  for (const std::string& s : strings) {
    ASSERT_EQ(pool.Matches(e, s), pool.Matches(f, s))
        << pool.ToString(e) << " vs " << pool.ToString(f) << " on '" << s << "'";
    ASSERT_EQ(IsPrefix(pool, e, s), IsPrefix(pool, f, s))
        << pool.ToString(e) << " vs " << pool.ToString(f) << " on '" << s << "'";
  }
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

// Random boolean-free expressions over `atoms` (Concat, Or, and repetitions
// with random counts, a third of them unbounded), `depth` levels deep.
class RandomCounted {
 public:
  RandomCounted(ExprSet& pool, std::mt19937& rng, std::vector<ExprId> atoms, uint32_t lo_below,
                uint32_t span_below)
      : pool_(pool),
        rng_(rng),
        atoms_(std::move(atoms)),
        lo_below_(lo_below),
        span_below_(span_below) {}

  ExprId operator()(int depth) const {
    const int pick = depth == 0 ? 0 : static_cast<int>(rng_() % 4);
    switch (pick) {
      case 0:
        return atoms_[rng_() % atoms_.size()];
      case 1:
        return pool_.Concat((*this)(depth - 1), (*this)(depth - 1));
      case 2:
        return pool_.Or((*this)(depth - 1), (*this)(depth - 1));
      default: {
        const uint32_t lo = rng_() % lo_below_;
        const uint32_t hi = rng_() % 3 == 0 ? ExprSet::kUnbounded : lo + rng_() % span_below_;
        return pool_.Repeat((*this)(depth - 1), lo, hi);
      }
    }
  }

 private:
  ExprSet& pool_;
  std::mt19937& rng_;
  const std::vector<ExprId> atoms_;
  const uint32_t lo_below_;
  const uint32_t span_below_;
};

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
  // A body of m bytes at least: only h / m iterations fit in the horizon.
  const ExprId ab = pool.Literal("ab");
  EXPECT_EQ(h(pool.Repeat(ab, 0, 6), 10), h(pool.Repeat(ab, 0, 60), 10));
  EXPECT_NE(h(pool.Repeat(ab, 0, 5), 10), h(pool.Repeat(ab, 0, 6), 10));
  // And and Not (other than length counters) keep their exact fingerprints.
  const ExprId letters = pool.Star(pool.ByteRange('a', 'z'));
  const ExprId and_255 = pool.And(counted(0, 255), letters);
  EXPECT_EQ(h(and_255, 10), pool.GetFingerprint(and_255));
  EXPECT_NE(h(and_255, 10), h(pool.And(counted(0, 300), letters), 10));
  EXPECT_EQ(h(pool.Not(counted(0, 255)), 10), pool.GetFingerprint(pool.Not(counted(0, 255))));
}

// A length counter, And(X, Y{0,n}) with the fact X ⊆ Y*, takes X's
// fingerprint while n leaves room for the horizon and X's completions, and
// its exact one once the bound is near.
TEST(HorizonFingerprintTest, LengthCountersFarFromTheirBoundAreTheirPattern) {
  ExprSet pool;
  const ExprId unit = pool.ByteRange('a', 'z');
  const ExprId words = pool.Concat(pool.Star(pool.Literal("ab")), pool.Byte('c'));
  ASSERT_TRUE(pool.ProveWithin(words, pool.Star(unit)));
  auto counter = [&](uint32_t n) { return pool.And(words, pool.Repeat(unit, 0, n)); };
  auto h = [&](ExprId e) { return HorizonFingerprint(pool, e, 10); };
  ASSERT_TRUE(pool.AsCountedAnd(counter(100)).has_value());
  EXPECT_EQ(h(counter(100)), h(words));
  EXPECT_EQ(h(counter(1000)), h(counter(100)));
  // Within the horizon plus the completion bound (3 here), n counts.
  EXPECT_NE(h(counter(11)), h(words));
  EXPECT_EQ(h(counter(11)), pool.GetFingerprint(counter(11)));
  // Without the fact, no sharing.
  ExprSet other;
  const ExprId other_words = other.Concat(other.Star(other.Literal("ab")), other.Byte('c'));
  const ExprId other_counter =
      other.And(other_words, other.Repeat(other.ByteRange('a', 'z'), 0, 100));
  EXPECT_FALSE(other.AsCountedAnd(other_counter).has_value());
  EXPECT_EQ(HorizonFingerprint(other, other_counter, 10), other.GetFingerprint(other_counter));
}

TEST(HorizonFingerprintTest, EqualFingerprintsAgreeOnShortStringsByBruteForce) {
  ExprSet pool;
  std::mt19937 rng(3);
  const std::vector<ExprId> atoms = {pool.Byte('a'), pool.Byte('b'), pool.Literal("ab"),
                                     pool.Or(pool.Byte('a'), pool.Literal("bc")),
                                     pool.ByteRange('a', 'c')};
  // Random boolean-free expressions whose counts are random too.
  const RandomCounted gen(pool, rng, atoms, /*lo_below=*/9, /*span_below=*/9);
  constexpr uint32_t kHorizon = 5;
  const std::vector<std::string> strings = Strings(kHorizon);
  absl::flat_hash_map<Fingerprint, ExprId> first;
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    const ExprId e = gen(3);
    auto [it, inserted] = first.emplace(HorizonFingerprint(pool, e, kHorizon), e);
    if (inserted || it->second == e) continue;
    ++compared;
    ASSERT_NO_FATAL_FAILURE(ExpectAgree(pool, e, it->second, strings));
  }
  // Distinct expressions sharing a fingerprint were actually met.
  EXPECT_GT(compared, 50);
}

// Length counters over a two-byte unit ("ab" or "c", so derivatives have a
// partial unit in front of the counter) with random bodies and bounds, and
// their derivatives: equal horizon fingerprints agree on short strings.
TEST(HorizonFingerprintTest, LengthCountersAgreeOnShortStringsByBruteForce) {
  ExprSet pool;
  std::mt19937 rng(7);
  const ExprId unit = pool.Or(pool.Literal("ab"), pool.Byte('c'));
  const ExprId units = pool.Star(unit);
  const std::vector<ExprId> atoms = {pool.Literal("ab"), pool.Byte('c'), pool.Literal("abc"),
                                     pool.Or(pool.Literal("ab"), pool.Literal("cc")), unit};
  const RandomCounted gen(pool, rng, atoms, /*lo_below=*/4, /*span_below=*/6);
  constexpr uint32_t kHorizon = 4;
  const std::vector<std::string> strings = Strings(kHorizon);
  absl::flat_hash_map<Fingerprint, ExprId> first;
  int compared = 0, counters = 0;
  // Few bodies, many bounds: the same body under bounds beyond the horizon.
  std::vector<ExprId> bodies;
  for (int i = 0; i < 40; ++i) {
    bodies.push_back(gen(2));
    ASSERT_TRUE(pool.ProveWithin(bodies.back(), units)) << pool.ToString(bodies.back());
  }
  for (int i = 0; i < 1500; ++i) {
    const ExprId body = bodies[rng() % bodies.size()];
    ExprId e = pool.And(body, pool.Repeat(unit, rng() % 2, rng() % 30));
    // A few random bytes in: partial units, smaller counts.
    for (int steps = static_cast<int>(rng() % 4); steps > 0 && e != ExprSet::kNothing; --steps) {
      e = pool.Derivative(e, static_cast<uint8_t>("abc"[rng() % 3]));
    }
    if (pool.AsCountedAnd(e).has_value()) ++counters;
    auto [it, inserted] = first.emplace(HorizonFingerprint(pool, e, kHorizon), e);
    if (inserted || it->second == e) continue;
    ++compared;
    ASSERT_NO_FATAL_FAILURE(ExpectAgree(pool, e, it->second, strings));
  }
  EXPECT_GT(counters, 300);
  EXPECT_GT(compared, 50);
}

// HorizonClamp builds clamp_h(e): it agrees with e on members and prefixes
// of members among short strings, for counted expressions and for length
// counters and their derivatives, and positions of a counted string clamp
// to one expression.
TEST(HorizonClampTest, AgreesWithTheExpressionOnShortStrings) {
  ExprSet pool;
  std::mt19937 rng(21);
  const ExprId unit = pool.Or(pool.Literal("ab"), pool.Byte('c'));
  const std::vector<ExprId> atoms = {pool.Literal("ab"), pool.Byte('c'), pool.Literal("abc"), unit};
  const RandomCounted gen(pool, rng, atoms, /*lo_below=*/6, /*span_below=*/12);
  constexpr uint32_t kHorizon = 4;
  const std::vector<std::string> strings = Strings(kHorizon);
  int changed = 0;
  for (int i = 0; i < 600; ++i) {
    ExprId e = gen(3);
    if (i % 2 == 1) {
      // A length counter, some bytes in.
      ASSERT_TRUE(pool.ProveWithin(e, pool.Star(unit)));
      e = pool.And(e, pool.Repeat(unit, 0, rng() % 30));
      for (int steps = static_cast<int>(rng() % 3); steps > 0; --steps) {
        e = pool.Derivative(e, static_cast<uint8_t>("abc"[rng() % 3]));
      }
      if (e == ExprSet::kNothing) continue;
    }
    const ExprId clamped = HorizonClamp(pool, e, kHorizon);
    changed += clamped != e;
    EXPECT_FALSE(pool.HasBoolean(clamped) && !pool.HasBoolean(e));
    ASSERT_NO_FATAL_FAILURE(ExpectAgree(pool, e, clamped, strings));
  }
  EXPECT_GT(changed, 150);
  // Positions of a counted string far from its bound clamp alike.
  const ExprId a = pool.Byte('a');
  EXPECT_EQ(HorizonClamp(pool, pool.Repeat(a, 0, 300), 10),
            HorizonClamp(pool, pool.Repeat(a, 0, 299), 10));
  EXPECT_NE(HorizonClamp(pool, pool.Repeat(a, 0, 9), 10),
            HorizonClamp(pool, pool.Repeat(a, 0, 8), 10));
}

// The lexer states inside a long literal are its successive suffixes; with
// one memo across calls (as LazyDfa keeps), each later suffix's clamp costs
// a few node look-ups, not a rebuild of the whole rest (which made every mask
// of a 40,000-byte literal cost ~20 ms). The result still agrees with the
// expression, and with a clamp made without the memo.
TEST(HorizonClampTest, SuffixesOfALongLiteralClampFromTheMemo) {
  ExprSet pool;
  std::string text;
  for (int i = 0; i < 10000; ++i) text += static_cast<char>('a' + i % 3);
  // The literal, then a counted tail that clamping changes.
  const ExprId e = pool.Concat(pool.Literal(text), pool.Repeat(pool.Byte('c'), 0, 300));
  constexpr uint32_t kHorizon = 6;
  HorizonClampMemo memo;
  const ExprId clamped = HorizonClamp(pool, e, kHorizon, &memo);
  ASSERT_NE(clamped, e);
  ExprId suffix = e;
  uint64_t most = 0;
  for (int i = 0; i < 200; ++i) {
    suffix = pool.Derivative(suffix, static_cast<uint8_t>(text[i]));
    pool.LimitWork(uint64_t{1} << 40);
    const ExprId from_memo = HorizonClamp(pool, suffix, kHorizon, &memo);
    most = std::max(most, pool.work_used());
    pool.LimitWork(0);
    EXPECT_EQ(from_memo, HorizonClamp(pool, suffix, kHorizon));
  }
  EXPECT_LT(most, 400u) << "a suffix's clamp rebuilt the chain";
  // A literal with no bounded repetition clamps to itself without a walk,
  // even with no memo (a memo holds 2^18 entries, a literal can be longer).
  const ExprId plain = pool.Concat(pool.Literal(text), pool.Star(pool.Byte('c')));
  pool.LimitWork(uint64_t{1} << 40);
  EXPECT_EQ(HorizonClamp(pool, plain, kHorizon), plain);
  EXPECT_LT(pool.work_used(), 5u) << "a literal without counters was rebuilt";
  pool.LimitWork(0);
  // Agreement on short strings near the end of the literal.
  ExprId late = e;
  for (size_t i = 0; i + 3 < text.size(); ++i)
    late = pool.Derivative(late, static_cast<uint8_t>(text[i]));
  ASSERT_NO_FATAL_FAILURE(
      ExpectAgree(pool, late, HorizonClamp(pool, late, kHorizon, &memo), Strings(kHorizon)));
}

// The fingerprints of a literal's successive suffixes (the lexer states
// inside it) keep only checkpoints in the caller's memo: a memo holding every
// suffix of a literal longer than its bound (2^18) was cleared at every state,
// and each state then walked the whole rest of the chain again.
TEST(HorizonFingerprintTest, SuffixesOfALongLiteralKeepOnlyCheckpoints) {
  ExprSet pool;
  std::string text;
  for (int i = 0; i < 10000; ++i) text += static_cast<char>('a' + i % 3);
  const ExprId e = pool.Concat(pool.Literal(text), pool.Repeat(pool.Byte('c'), 0, 300));
  constexpr uint32_t kHorizon = 6;
  HorizonMemo memo;
  const Fingerprint first = HorizonFingerprint(pool, e, kHorizon, &memo);
  EXPECT_LT(memo.size(), text.size() / 8) << "every link of the chain was kept";
  EXPECT_GT(memo.size(), text.size() / 128) << "no checkpoints were kept";
  EXPECT_EQ(first, HorizonFingerprint(pool, e, kHorizon));
  ExprId suffix = e;
  for (int i = 0; i < 200; ++i) {
    suffix = pool.Derivative(suffix, static_cast<uint8_t>(text[i]));
    // Same value from the checkpoints as from a walk of the whole chain.
    EXPECT_EQ(HorizonFingerprint(pool, suffix, kHorizon, &memo),
              HorizonFingerprint(pool, suffix, kHorizon));
  }
  EXPECT_LT(memo.size(), text.size() / 8 + 400);
}

}  // namespace
}  // namespace maskd::regex
