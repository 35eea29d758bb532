// The expression algebra against naive set semantics: smart-constructor
// simplifications, derivatives, And/Not/Repeat on all short strings over a
// small alphabet, exact emptiness, and UTF-8 code point ranges.
#include "compiler/regex/expr_set.h"
#include "compiler/regex/utf8.h"

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "naive_semantics.h"

namespace maskd::regex {
namespace {

using testing::NaiveMatches;

// All strings over `letters` of length <= max_len.
std::vector<std::string> AllStrings(std::string_view letters, int max_len) {
  std::vector<std::string> out{""};
  for (size_t begin = 0, end = 1, len = 0; static_cast<int>(len) < max_len; ++len) {
    for (size_t i = begin; i < end; ++i) {
      for (char c : letters) out.push_back(out[i] + c);
    }
    begin = end;
    end = out.size();
  }
  return out;
}

class RandomExprs {
 public:
  RandomExprs(ExprSet* pool, uint32_t seed) : pool_(pool), rng_(seed) {}

  ExprId Make(int depth) {
    int r = Uniform(depth >= 4 ? 4 : 11);
    switch (r) {
      case 0:
        return pool_->Byte('a');
      case 1:
        return pool_->ByteRange('a', 'b');
      case 2:
        return pool_->Byte('c');
      case 3:
        return Uniform(3) == 0 ? ExprSet::kEpsilon : pool_->Literal("ab");
      case 4:
      case 5:
        return pool_->Concat(Make(depth + 1), Make(depth + 1));
      case 6:
        return pool_->Or(Make(depth + 1), Make(depth + 1));
      case 7:
        return pool_->And(Make(depth + 1), Make(depth + 1));
      case 8:
        return pool_->Not(Make(depth + 1));
      default: {
        uint32_t min = Uniform(3);
        uint32_t max = Uniform(3) == 0 ? ExprSet::kUnbounded : min + Uniform(3);
        return pool_->Repeat(Make(depth + 1), min, max);
      }
    }
  }

 private:
  int Uniform(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  ExprSet* pool_;
  std::mt19937 rng_;
};

// Shortest string of e found by breadth-first search over derivatives (by a
// few bytes, 'z' standing for every byte no expression mentions).
std::optional<std::string> ShortestMember(ExprSet& pool, ExprId e, int max_len) {
  std::vector<std::pair<ExprId, std::string>> frontier{{e, ""}};
  std::set<ExprId> seen{e};
  for (int len = 0; len <= max_len; ++len) {
    std::vector<std::pair<ExprId, std::string>> next;
    for (auto& [x, s] : frontier) {
      if (pool.Nullable(x)) return s;
      for (char c : std::string("abcz")) {
        ExprId d = pool.Derivative(x, static_cast<uint8_t>(c));
        if (d != ExprSet::kNothing && seen.insert(d).second) next.push_back({d, s + c});
      }
    }
    frontier = std::move(next);
  }
  return std::nullopt;
}

TEST(ExprSetTest, FixedIds) {
  ExprSet pool;
  EXPECT_EQ(pool.kind(ExprSet::kNothing), ExprKind::kNothing);
  EXPECT_EQ(pool.kind(ExprSet::kEpsilon), ExprKind::kEpsilon);
  EXPECT_TRUE(pool.GetByteSet(ExprSet::kAnyByte).IsAll());
  EXPECT_EQ(pool.Not(ExprSet::kNothing), ExprSet::kAnyByteString);
  EXPECT_EQ(pool.Star(ExprSet::kAnyByte), ExprSet::kAnyByteString);
}

TEST(ExprSetTest, ConstructorsSimplify) {
  ExprSet pool;
  ExprId a = pool.Byte('a'), b = pool.Byte('b'), c = pool.Byte('c');
  ExprId ab = pool.Concat(a, b);
  EXPECT_EQ(pool.Concat(ab, c), pool.Concat(a, pool.Concat(b, c)));  // Associativity.
  EXPECT_EQ(pool.Concat(a, ExprSet::kEpsilon), a);
  EXPECT_EQ(pool.Concat(ExprSet::kNothing, a), ExprSet::kNothing);
  EXPECT_EQ(pool.Or(ab, pool.Concat(b, c)), pool.Or(pool.Concat(b, c), ab));  // Commutativity.
  EXPECT_EQ(pool.Or(ab, ab), ab);
  EXPECT_EQ(pool.Or(ab, ExprSet::kNothing), ab);
  EXPECT_EQ(pool.Or(a, b), pool.ByteRange('a', 'b'));  // Byte sets merge.
  EXPECT_EQ(pool.Or(ab, ExprSet::kAnyByteString), ExprSet::kAnyByteString);
  ExprId ors[] = {pool.Or(a, ab), c};
  EXPECT_EQ(pool.Or(ors), pool.Or(pool.Or(a, c), ab));  // Flattening.
  EXPECT_EQ(pool.And(ab, pool.Not(ab)), ExprSet::kNothing);
  // An arg inside a negated union: x & ~(x | y) is empty.
  EXPECT_EQ(pool.And(ab, pool.Not(pool.Or(ab, c))), ExprSet::kNothing);
  EXPECT_EQ(pool.And(std::vector<ExprId>{pool.Star(a), c, pool.Not(pool.Or(ab, pool.Star(a)))}),
            ExprSet::kNothing);
  EXPECT_NE(pool.And(ab, pool.Not(pool.Or(pool.Concat(ab, c), c))), ExprSet::kNothing);
  EXPECT_EQ(pool.And(ab, ExprSet::kAnyByteString), ab);
  EXPECT_EQ(pool.And(pool.ByteRange('a', 'b'), pool.ByteRange('b', 'c')), b);
  EXPECT_EQ(pool.And(a, c), ExprSet::kNothing);
  // Disjoint lengths.
  EXPECT_EQ(pool.And(pool.Repeat(a, 3, 3), pool.Repeat(pool.Not(ExprSet::kNothing), 0, 0)),
            ExprSet::kNothing);
  ExprId az = pool.ByteRange('a', 'z');
  EXPECT_EQ(pool.And(pool.Repeat(az, 3, 3), pool.Repeat(az, 5, 5)), ExprSet::kNothing);
  EXPECT_EQ(pool.Not(pool.Not(ab)), ab);
  EXPECT_EQ(pool.Repeat(ab, 1, 1), ab);
  EXPECT_EQ(pool.Repeat(ab, 0, 0), ExprSet::kEpsilon);
  EXPECT_EQ(pool.Repeat(ab, 3, 2), ExprSet::kNothing);
  EXPECT_EQ(pool.Repeat(pool.Star(a), 0, ExprSet::kUnbounded), pool.Star(a));
  EXPECT_EQ(pool.Repeat(pool.Optional(a), 2, 5), pool.Repeat(pool.Optional(a), 0, 5));
  EXPECT_EQ(pool.Or(ExprSet::kEpsilon, pool.Star(a)), pool.Star(a));
  EXPECT_EQ(pool.Literal("ab"), ab);
  EXPECT_EQ(pool.ToString(pool.Concat(pool.Star(ab), pool.Or(a, pool.Not(c)))), "(ab)*(a|~c)");
}

// Appending to a chain rebuilds it (Concat is right-associated); the result
// is memoized by both sides, so each (chain, tail) gets its own chain.
TEST(ExprSetTest, AppendingToAChainIsRightAssociatedForEveryTail) {
  ExprSet pool;
  const ExprId key = pool.Literal("\"name\"");
  const ExprId colon = pool.Byte(':');
  const ExprId ws = pool.Star(pool.Byte(' '));
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(pool.Concat(key, colon), pool.Literal("\"name\":"));
    EXPECT_EQ(pool.Concat(key, pool.Literal("x")), pool.Literal("\"name\"x"));
    const ExprId with_ws = pool.Concat(key, ws);
    EXPECT_EQ(pool.kind(with_ws), ExprKind::kConcat);
    EXPECT_NE(pool.kind(pool.Args(with_ws)[0]), ExprKind::kConcat);
    EXPECT_TRUE(pool.Matches(with_ws, "\"name\"  "));
    EXPECT_FALSE(pool.Matches(with_ws, "\"name\":"));
    EXPECT_EQ(pool.Concat(pool.Concat(key, ws), colon), pool.Concat(key, pool.Concat(ws, colon)));
  }
}

TEST(ExprSetTest, BoundedRepeatIsSymbolic) {
  ExprSet pool;
  const size_t before = pool.size();
  ExprId e = pool.Repeat(pool.ByteRange('a', 'z'), 1, 100000);
  EXPECT_LT(pool.size(), before + 5);
  EXPECT_EQ(pool.MinLength(e), 1u);
  EXPECT_EQ(pool.MaxLength(e), 100000u);
  ExprId d = pool.Derivative(e, 'q');
  EXPECT_EQ(pool.kind(d), ExprKind::kRepeat);
  EXPECT_EQ(pool.RepeatMin(d), 0u);
  EXPECT_EQ(pool.RepeatMax(d), 99999u);
  EXPECT_TRUE(pool.Matches(e, std::string(1000, 'x')));
  EXPECT_FALSE(pool.Matches(e, ""));
  EXPECT_FALSE(pool.Matches(e, "aB"));
}

// A long literal under a repetition: its derivative re-associates a long
// Concat chain, which must not recurse once per byte.
TEST(ExprSetTest, LongLiteralUnderRepeatDoesNotRecursePerByte) {
  ExprSet pool;
  std::string lit;
  for (int i = 0; i < 50000; ++i) lit += static_cast<char>('a' + i % 7);
  ExprId e = pool.Repeat(pool.Literal(lit), 1, ExprSet::kUnbounded);
  EXPECT_TRUE(pool.Matches(e, lit + lit));
  EXPECT_FALSE(pool.Matches(e, lit + lit.substr(1)));
}

TEST(ExprSetTest, RandomExpressionsMatchNaiveSemantics) {
  const std::vector<std::string> strings = AllStrings("abcz", 4);
  for (uint32_t seed = 0; seed < 300; ++seed) {
    ExprSet pool;
    ExprId e = RandomExprs(&pool, seed).Make(0);
    SCOPED_TRACE(pool.ToString(e));
    for (const std::string& s : strings) {
      ASSERT_EQ(pool.Matches(e, s), NaiveMatches(pool, e, s)) << "on \"" << s << "\"";
    }
  }
}

TEST(ExprSetTest, EmptinessIsExact) {
  const std::vector<std::string> strings = AllStrings("abcz", 5);
  int empty_count = 0, boolean_count = 0;
  for (uint32_t seed = 1000; seed < 1400; ++seed) {
    ExprSet pool;
    ExprId e = RandomExprs(&pool, seed).Make(0);
    SCOPED_TRACE(pool.ToString(e));
    absl::StatusOr<bool> empty = pool.IsEmpty(e);
    ASSERT_TRUE(empty.ok()) << empty.status();
    boolean_count += pool.HasBoolean(e);
    if (*empty) {
      ++empty_count;
      for (const std::string& s : strings) ASSERT_FALSE(NaiveMatches(pool, e, s)) << s;
    } else {
      std::optional<std::string> w = ShortestMember(pool, e, 12);
      ASSERT_TRUE(w.has_value());
      ASSERT_TRUE(NaiveMatches(pool, e, *w)) << *w;
    }
  }
  // The generator must exercise both outcomes of the non-trivial check.
  EXPECT_GT(empty_count, 20);
  EXPECT_GT(boolean_count, 100);
}

// FirstBytes is a superset of the bytes with a non-empty derivative (a DFA
// step skips the others), and exact without And/Not: every byte it holds
// then starts a member.
TEST(ExprSetTest, FirstBytesHoldEveryLiveByte) {
  int skipped = 0, boolean_live = 0;
  for (uint32_t seed = 3000; seed < 3400; ++seed) {
    ExprSet pool;
    ExprId e = RandomExprs(&pool, seed).Make(0);
    SCOPED_TRACE(pool.ToString(e));
    const ByteSet first = pool.FirstBytes(e);
    for (char c : std::string("abcz")) {
      const uint8_t b = static_cast<uint8_t>(c);
      absl::StatusOr<bool> empty = pool.IsEmpty(pool.Derivative(e, b));
      ASSERT_TRUE(empty.ok()) << empty.status();
      if (!first.Contains(b)) {
        ++skipped;
        ASSERT_TRUE(*empty) << c;
      } else if (!pool.HasBoolean(e)) {
        ASSERT_FALSE(*empty) << c;
      } else {
        boolean_live += !*empty;
      }
    }
  }
  EXPECT_GT(skipped, 500);
  EXPECT_GT(boolean_live, 100);
  // A nullable head lets the rest's first bytes through; Not lets all.
  ExprSet pool;
  const ExprId a_star_b = pool.Concat(pool.Repeat(pool.Byte('a'), 0, ExprSet::kUnbounded),
                                      pool.Concat(pool.Byte('b'), pool.Byte('c')));
  EXPECT_TRUE(pool.FirstBytes(a_star_b).Contains('a'));
  EXPECT_TRUE(pool.FirstBytes(a_star_b).Contains('b'));
  EXPECT_FALSE(pool.FirstBytes(a_star_b).Contains('c'));
  EXPECT_TRUE(pool.FirstBytes(pool.Not(pool.Byte('a'))).Contains('z'));
}

TEST(ExprSetTest, EmptinessNeedsSearch) {
  ExprSet pool;
  ExprId a = pool.Byte('a'), b = pool.Byte('b');
  // a*b and "not ((a|c)*b or c)": empty, but only visible after derivatives.
  ExprId astar_b = pool.Concat(pool.Star(a), b);
  ExprId ac_star_b = pool.Concat(pool.Star(pool.Or(a, pool.Byte('c'))), b);
  ExprId e = pool.And(astar_b, pool.Not(pool.Or(ac_star_b, pool.Byte('c'))));
  EXPECT_NE(e, ExprSet::kNothing);
  EXPECT_EQ(pool.IsEmpty(e).value(), true);
  // (aa)* and a(aa)*: even vs odd length.
  ExprId aa_star = pool.Star(pool.Literal("aa"));
  EXPECT_EQ(pool.IsEmpty(pool.And(aa_star, pool.Concat(a, aa_star))).value(), true);
  // (aa)* and (aaa)+ share aaaaaa.
  ExprId aaa_plus = pool.Repeat(pool.Literal("aaa"), 1, ExprSet::kUnbounded);
  EXPECT_EQ(pool.IsEmpty(pool.And(aa_star, aaa_plus)).value(), false);
  // a{1000} and a{999}b{0,1}... share nothing: lengths differ only via b.
  ExprId a1000 = pool.Repeat(a, 1000, 1000);
  ExprId a999b = pool.Concat(pool.Repeat(a, 999, 999), b);
  EXPECT_EQ(pool.IsEmpty(pool.And(a1000, a999b)).value(), true);
  // A tiny budget cannot decide a long search.
  ExprSet pool2;
  ExprId x = pool2.Byte('x');
  ExprId hard = pool2.And(pool2.Repeat(x, 5000, 5000), pool2.Not(pool2.Repeat(x, 0, 5000)));
  absl::StatusOr<bool> r = pool2.IsEmpty(hard, 10);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool2.IsEmpty(hard, 100000).value(), true);
}

// A compile that is cancelled, or past its time limit, stops inside a long
// emptiness check (SetInterrupt), and the pool answers again once the
// interrupt is cleared.
TEST(ExprSetTest, InterruptStopsEmptinessChecks) {
  ExprSet pool;
  ExprId x = pool.Byte('x');
  // Empty, but only after about 5000 derivatives.
  ExprId hard = pool.And(pool.Repeat(x, 5000, 5000), pool.Not(pool.Repeat(x, 0, 5000)));
  std::atomic<bool> cancelled{true};
  {
    ExprSet::ScopedInterrupt interrupt(&pool, &cancelled,
                                       std::chrono::steady_clock::time_point::max());
    absl::StatusOr<bool> r = pool.IsEmpty(hard, 100000);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
    EXPECT_NE(r.status().message().find("no caller waits"), std::string::npos) << r.status();
  }
  {
    ExprSet::ScopedInterrupt interrupt(&pool, nullptr, std::chrono::steady_clock::now());
    EXPECT_EQ(pool.IsEmpty(hard, 100000).status().code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_EQ(pool.IsEmpty(hard, 100000).value(), true);
}

// LimitWork bounds the nodes built (and looked up) from now on: past it the
// work stops by WorkBudgetExhausted, and the pool is still usable.
TEST(ExprSetTest, WorkBudgetStopsADerivative) {
  ExprSet pool;
  std::vector<ExprId> parts;
  for (int i = 0; i < 2000; ++i) parts.push_back(pool.Optional(pool.Byte('a')));
  for (int i = 0; i < 2000; ++i) parts.push_back(pool.Byte('a'));
  const ExprId e = pool.Concat(parts);
  const ExprId d1 = pool.Derivative(e, 'a');
  pool.LimitWork(10000);
  EXPECT_THROW(pool.Derivative(d1, 'a'), ExprSet::WorkBudgetExhausted);
  pool.LimitWork(0);
  const ExprId ab = pool.Literal("ab");
  EXPECT_TRUE(pool.Matches(ab, "ab"));
  EXPECT_FALSE(pool.Matches(ab, "a"));
}

// "Exactly one of several contains-languages" (a oneOf of unanchored
// patterns): once a string contains a second pattern, every branch is dead,
// and the derivatives say so by their structure (the matched pattern's
// derivative holds `.*`, the base string language is `.*`), so no state of
// the lexer needs an emptiness search. Before, each such state searched
// thousands of derivatives (seconds for one mask).
TEST(ExprSetTest, ExactlyOneOfContainsDiesWithoutSearch) {
  ExprSet pool;
  const ExprId any = pool.Star(pool.ByteRange('a', 'z'));
  auto contains = [&](std::string_view word) {
    return pool.Concat(std::vector<ExprId>{any, pool.Literal(word), any});
  };
  const std::vector<std::string> words = {"open", "done", "held"};
  std::vector<ExprId> branches;
  for (size_t i = 0; i < words.size(); ++i) {
    std::vector<ExprId> parts = {any, contains(words[i])};
    for (size_t j = 0; j < words.size(); ++j) {
      if (j != i) parts.push_back(pool.Not(contains(words[j])));
    }
    branches.push_back(pool.And(parts));
  }
  const ExprId one_of = pool.Or(branches);
  auto after = [&](std::string_view s) {
    ExprId e = one_of;
    for (char c : s) e = pool.Derivative(e, static_cast<uint8_t>(c));
    return e;
  };
  // Two patterns: dead at once, by construction alone.
  EXPECT_EQ(after("opendone"), ExprSet::kNothing);
  EXPECT_EQ(after("xheldxxopen"), ExprSet::kNothing);
  EXPECT_EQ(after("doneheld"), ExprSet::kNothing);
  // One pattern, or one in progress: alive, and the language is exact.
  EXPECT_TRUE(pool.Nullable(after("xxopenxx")));
  EXPECT_FALSE(pool.Nullable(after("xxope")));
  EXPECT_TRUE(pool.Matches(one_of, "xxdonexx"));
  EXPECT_FALSE(pool.Matches(one_of, "opendone"));
  EXPECT_FALSE(pool.Matches(one_of, "xyz"));
  for (const std::string& s : AllStrings("odnehlp", 5)) {
    ASSERT_EQ(pool.Matches(one_of, s), NaiveMatches(pool, one_of, s)) << s;
  }
}

TEST(ExprSetTest, CodepointRangesEncodeExactly) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 30; ++iter) {
    std::vector<CodepointRange> ranges;
    int n = 1 + iter % 4;
    for (int i = 0; i < n; ++i) {
      uint32_t lo = std::uniform_int_distribution<uint32_t>(0, 0x10FFFF)(rng);
      uint32_t span = std::uniform_int_distribution<uint32_t>(0, iter % 2 ? 300 : 70000)(rng);
      ranges.push_back({lo, std::min<uint32_t>(lo + span, 0x10FFFF)});
    }
    ExprSet pool;
    ExprId e = pool.Codepoints(ranges);
    auto in_ranges = [&](uint32_t cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) return false;
      for (auto r : ranges) {
        if (cp >= r.lo && cp <= r.hi) return true;
      }
      return false;
    };
    // Range ends, their neighbours and random code points.
    std::vector<uint32_t> probes;
    for (auto r : ranges) {
      for (uint32_t cp : {r.lo, r.hi}) {
        for (int64_t d = -2; d <= 2; ++d) {
          if (int64_t(cp) + d >= 0 && int64_t(cp) + d <= 0x10FFFF) probes.push_back(cp + d);
        }
      }
    }
    for (int i = 0; i < 2000; ++i) {
      probes.push_back(std::uniform_int_distribution<uint32_t>(0, 0x10FFFF)(rng));
    }
    for (uint32_t cp : probes) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      ASSERT_EQ(pool.Matches(e, Utf8(cp)), in_ranges(cp)) << std::hex << cp;
    }
  }
}

TEST(ExprSetTest, AnyCodepointIsValidUtf8Only) {
  ExprSet pool;
  ExprId any = pool.AnyCodepoint();
  for (uint32_t cp :
       {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    EXPECT_TRUE(pool.Matches(any, Utf8(cp))) << std::hex << cp;
  }
  for (const char* bad :
       {"\x80", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
        "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "\xFF", "\xC3"}) {
    EXPECT_FALSE(pool.Matches(any, bad)) << bad;
  }
  EXPECT_TRUE(pool.Matches(pool.AnyUtf8String(), "h\xC3\xA9llo \xF0\x9F\x98\x80"));
  EXPECT_FALSE(pool.Matches(pool.AnyUtf8String(), "h\xC3"));
}

TEST(ExprSetTest, CodepointRangeHelpers) {
  EXPECT_EQ(
      NormalizeCodepointRanges({{5, 9}, {1, 3}, {4, 4}, {0xD000, 0xE000}, {0x10FFFF, 0x200000}}),
      (std::vector<CodepointRange>{
          {1, 9}, {0xD000, 0xD7FF}, {0xE000, 0xE000}, {0x10FFFF, 0x10FFFF}}));
  EXPECT_EQ(ComplementCodepointRanges(NormalizeCodepointRanges({{0, 0x60}, {0x7B, 0x10FFFF}})),
            (std::vector<CodepointRange>{{0x61, 0x7A}}));
}

// NonEmpty pushes "minus the empty string" into the structure: the same
// language as And(e, Not(empty)), and free of And/Not when e is.
TEST(ExprSetTest, NonEmptyIsExactAndBooleanFree) {
  const std::vector<std::string> strings = AllStrings("abcz", 4);
  int nullable = 0;
  for (uint32_t seed = 2000; seed < 2300; ++seed) {
    ExprSet pool;
    const ExprId e = RandomExprs(&pool, seed).Make(0);
    const ExprId ne = pool.NonEmpty(e);
    SCOPED_TRACE(pool.ToString(e) + "  ->  " + pool.ToString(ne));
    nullable += pool.Nullable(e);
    EXPECT_FALSE(pool.Nullable(ne));
    if (!pool.HasBoolean(e)) {
      EXPECT_FALSE(pool.HasBoolean(ne));
    }
    for (const std::string& s : strings) {
      ASSERT_EQ(pool.Matches(ne, s), !s.empty() && NaiveMatches(pool, e, s))
          << "on \"" << s << "\"";
    }
  }
  EXPECT_GT(nullable, 50);
}

// CompletionBound is an upper bound on the distance from any live prefix to
// the nearest member (checked against the exact distance, by search).
TEST(ExprSetTest, CompletionBoundBoundsTheNearestMember) {
  const std::vector<std::string> prefixes = AllStrings("abc", 4);
  int bounded = 0, tight = 0;
  for (uint32_t seed = 3000; seed < 3400; ++seed) {
    ExprSet pool;
    const ExprId e = RandomExprs(&pool, seed).Make(0);
    if (pool.HasBoolean(e)) {
      EXPECT_EQ(pool.CompletionBound(e), ExprSet::kUnbounded);
      continue;
    }
    SCOPED_TRACE(pool.ToString(e));
    ++bounded;
    uint32_t worst = 0;
    for (const std::string& w : prefixes) {
      ExprId d = e;
      for (char c : w) d = pool.Derivative(d, static_cast<uint8_t>(c));
      if (d == ExprSet::kNothing) continue;
      std::optional<std::string> rest = ShortestMember(pool, d, 40);
      ASSERT_TRUE(rest.has_value()) << "after \"" << w << "\"";
      ASSERT_LE(rest->size(), pool.CompletionBound(e)) << "after \"" << w << "\"";
      worst = std::max<uint32_t>(worst, static_cast<uint32_t>(rest->size()));
    }
    tight += worst == pool.CompletionBound(e);
  }
  EXPECT_GT(bounded, 100);
  EXPECT_GT(tight, bounded / 4);  // Not a uselessly loose bound.
}

TEST(ExprSetTest, ProveWithinRecordsFactsThatDerivativesKeep) {
  ExprSet pool;
  const ExprId unit = pool.Or(pool.Literal("ab"), pool.Byte('c'));
  const ExprId units = pool.Star(unit);
  const ExprId x = pool.Concat(pool.Star(pool.Literal("abc")), pool.Literal("ab"));
  // A derivative computed before the fact is recorded gets it too.
  const ExprId before = pool.Derivative(x, 'a');
  EXPECT_TRUE(pool.KnownWithin(before).empty());
  ASSERT_TRUE(pool.ProveWithin(x, units));
  ASSERT_EQ(pool.KnownWithin(x).size(), 1u);
  EXPECT_EQ(pool.KnownWithin(x)[0], units);
  ASSERT_EQ(pool.KnownWithin(before).size(), 1u);
  EXPECT_EQ(pool.KnownWithin(before)[0], pool.Derivative(units, 'a'));
  // And one computed after.
  const ExprId after = pool.Derivative(pool.Derivative(x, 'a'), 'b');
  ASSERT_EQ(pool.KnownWithin(after).size(), 1u);
  EXPECT_EQ(pool.KnownWithin(after)[0], pool.Derivative(pool.Derivative(units, 'a'), 'b'));
  // Not provable: a lone 'a' is not a unit; And/Not are not analysed.
  EXPECT_FALSE(pool.ProveWithin(pool.Byte('a'), units));
  EXPECT_FALSE(pool.ProveWithin(pool.Literal("ba"), units));
  EXPECT_FALSE(pool.ProveWithin(pool.And(x, pool.Not(ExprSet::kEpsilon)), units));
  EXPECT_TRUE(pool.KnownWithin(pool.Byte('a')).empty());
  // The counter shape is recognized only with the fact.
  const ExprId counted = pool.And(x, pool.Repeat(unit, 0, 50));
  std::optional<ExprSet::CountedAnd> c = pool.AsCountedAnd(counted);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->body, x);
  EXPECT_EQ(c->max, 50u);
  const ExprId inside = pool.Derivative(counted, 'a');  // "b" then units{0,49}
  ASSERT_TRUE(pool.AsCountedAnd(inside).has_value());
  EXPECT_EQ(pool.AsCountedAnd(inside)->max, 49u);
  EXPECT_FALSE(pool.AsCountedAnd(pool.And(pool.Literal("abab"), pool.Repeat(unit, 0, 50))));
}

// Emptiness of length counters is decided without search, and exactly.
TEST(ExprSetTest, LengthCounterEmptiness) {
  ExprSet pool;
  const ExprId unit = pool.ByteRange('a', 'z');
  const ExprId x = pool.Concat(pool.Literal("abc"), pool.Star(pool.Byte('d')));
  ASSERT_TRUE(pool.ProveWithin(x, pool.Star(unit)));
  EXPECT_FALSE(*pool.IsEmpty(pool.And(x, pool.Repeat(unit, 0, 3))));
  EXPECT_TRUE(*pool.IsEmpty(pool.And(x, pool.Repeat(unit, 0, 2))));
  EXPECT_FALSE(*pool.IsEmpty(pool.And(x, pool.Repeat(unit, 5, 9))));
  EXPECT_TRUE(*pool.IsEmpty(pool.And(pool.Literal("abc"), pool.Repeat(unit, 4, 9))));
}

TEST(ExprSetTest, CountersAreFlagged) {
  ExprSet pool;
  const ExprId a = pool.Byte('a');
  EXPECT_FALSE(pool.HasCounter(pool.Star(a)));
  EXPECT_FALSE(pool.HasCounter(pool.Optional(a)));
  EXPECT_FALSE(pool.HasCounter(pool.Literal("abc")));
  EXPECT_FALSE(pool.HasCounter(pool.Repeat(a, 3, ExprSet::kUnbounded)));
  EXPECT_TRUE(pool.HasCounter(pool.Repeat(a, 0, 2)));
  EXPECT_TRUE(pool.HasCounter(pool.Repeat(a, 5, 5)));
  // Inherited by anything containing one, derivatives included.
  const ExprId counted = pool.Concat(pool.Repeat(a, 0, 300), pool.Byte('"'));
  EXPECT_TRUE(pool.HasCounter(pool.Or(pool.Byte('b'), counted)));
  EXPECT_TRUE(pool.HasCounter(pool.Derivative(counted, 'a')));
  EXPECT_TRUE(pool.HasCounter(pool.And(pool.Star(a), pool.Repeat(a, 0, 9))));
}

}  // namespace
}  // namespace maskd::regex
