// LazyDfa: tagged multi-expression states, exact dead states against naive
// semantics, first bytes, limits, and concurrent use from several threads.
#include "compiler/regex/lazy_dfa.h"

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/mask_work.h"
#include "gtest/gtest.h"
#include "naive_semantics.h"

namespace maskd::regex {
namespace {

using testing::NaiveMatches;

ExprId Full(ExprSet& pool, std::string_view pattern) {
  absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool, MatchMode::kFullMatch);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.value_or(ExprSet::kNothing);
}

TEST(LazyDfaTest, TaggedStatesTrackLexemes) {
  ExprSet pool;
  ExprId kw = Full(pool, "if"), ident = Full(pool, "[a-z]+"), num = Full(pool, "[0-9]+");
  LazyDfa dfa(&pool);
  std::vector<TaggedExpr> lexemes = {{7, kw}, {3, ident}, {5, num}};
  StateId start = dfa.Start(lexemes).value();
  EXPECT_FALSE(dfa.IsAccepting(start));
  EXPECT_EQ(dfa.Exprs(start).size(), 3u);
  EXPECT_EQ(dfa.Exprs(start)[0].tag, 3u);  // Sorted by tag.

  StateId i = dfa.Step(start, 'i');
  EXPECT_EQ(dfa.Exprs(i).size(), 2u);  // The number lexeme is gone.
  EXPECT_EQ(std::vector<uint32_t>(dfa.AcceptingTags(i).begin(), dfa.AcceptingTags(i).end()),
            std::vector<uint32_t>{3});
  StateId s_if = dfa.Step(i, 'f');
  EXPECT_EQ(std::vector<uint32_t>(dfa.AcceptingTags(s_if).begin(), dfa.AcceptingTags(s_if).end()),
            (std::vector<uint32_t>{3, 7}));
  StateId s_ifx = dfa.Step(s_if, 'x');
  EXPECT_EQ(dfa.Exprs(s_ifx).size(), 1u);
  EXPECT_TRUE(dfa.IsAccepting(s_ifx));
  EXPECT_TRUE(dfa.IsDead(dfa.Step(s_ifx, '1')));
  EXPECT_EQ(dfa.Walk(start, "42"), dfa.Walk(start, "7"));  // Same residual languages.

  ByteSet first = dfa.FirstBytes(start);
  for (int b = 0; b < 256; ++b) {
    bool expected = (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9');
    ASSERT_EQ(first.Contains(static_cast<uint8_t>(b)), expected) << b;
  }
  // The same start set twice is the same state; a duplicate tag is an error.
  EXPECT_EQ(dfa.Start(lexemes).value(), start);
  std::vector<TaggedExpr> dup = {{1, kw}, {1, num}};
  EXPECT_EQ(dfa.Start(dup).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(dfa.status().ok());
}

TEST(LazyDfaTest, DeadMeansEmptyNotJustNothing) {
  ExprSet pool;
  ExprId a = pool.Byte('a'), b = pool.Byte('b');
  ExprId ab_star = pool.Star(pool.Or(a, b));
  // Strings over {a,b} that contain "aa" and do not contain "a": empty, but
  // only an exploration shows it.
  ExprId has_aa = pool.Concat(std::vector<ExprId>{ab_star, pool.Literal("aa"), ab_star});
  ExprId has_a = pool.Concat(std::vector<ExprId>{ab_star, a, ab_star});
  ExprId never = pool.And(has_aa, pool.Not(has_a));
  // Even length and odd length at once, after a prefix "b".
  ExprId even = pool.Star(pool.Concat(pool.ByteRange('a', 'b'), pool.ByteRange('a', 'b')));
  ExprId odd = pool.Concat(pool.ByteRange('a', 'b'), even);
  ExprId later = pool.Or(pool.Concat(b, pool.And(even, odd)), pool.Literal("ok"));
  LazyDfa dfa(&pool);
  EXPECT_TRUE(dfa.IsDead(dfa.Start(never).value()));
  StateId s = dfa.Start(later).value();
  EXPECT_FALSE(dfa.IsDead(s));
  EXPECT_TRUE(dfa.IsDead(dfa.Step(s, 'b')));  // Syntactically non-empty, semantically empty.
  EXPECT_FALSE(dfa.IsDead(dfa.Step(s, 'o')));
  ByteSet first = dfa.FirstBytes(s);
  EXPECT_TRUE(first.Contains('o'));
  EXPECT_FALSE(first.Contains('b'));
  EXPECT_EQ(first.Count(), 1);
}

// Random boolean expressions: after every short prefix, IsDead must hold
// exactly when no extension matches (naive semantics decide; extensions
// found by the DFA itself prove liveness).
TEST(LazyDfaTest, DeadStatesAreExactOnRandomExpressions) {
  std::mt19937 rng(4242);
  auto uniform = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  int dead_seen = 0;
  for (int iter = 0; iter < 150; ++iter) {
    ExprSet pool;
    std::function<ExprId(int)> make = [&](int depth) -> ExprId {
      switch (uniform(depth >= 3 ? 3 : 8)) {
        case 0:
          return pool.Byte('a');
        case 1:
          return pool.ByteRange('a', 'b');
        case 2:
          return pool.Literal("ba");
        case 3:
          return pool.Concat(make(depth + 1), make(depth + 1));
        case 4:
          return pool.Or(make(depth + 1), make(depth + 1));
        case 5:
          return pool.And(make(depth + 1), make(depth + 1));
        case 6:
          return pool.Not(make(depth + 1));
        default:
          return pool.Repeat(make(depth + 1), uniform(3), uniform(2) ? ExprSet::kUnbounded : 3);
      }
    };
    ExprId e = make(0);
    SCOPED_TRACE(pool.ToString(e));
    LazyDfa dfa(&pool);
    StateId start = dfa.Start(e).value();
    for (const char* prefix : {"", "a", "b", "ab", "ba", "aa", "bab", "c"}) {
      StateId s = dfa.Walk(start, prefix);
      if (dfa.IsDead(s)) {
        ++dead_seen;
        // Nothing of length <= 6 over the bytes the expression mentions or
        // not ('c') extends the prefix.
        std::vector<std::string> ext{""};
        for (size_t i = 0; i < ext.size() && ext[i].size() < 6; ++i) {
          for (char c : std::string("abc")) ext.push_back(ext[i] + c);
        }
        for (const std::string& t : ext) {
          ASSERT_FALSE(NaiveMatches(pool, e, prefix + t)) << prefix << "|" << t;
        }
      } else {
        // Breadth-first search in the DFA for an accepted extension.
        std::vector<std::pair<StateId, std::string>> frontier{{s, ""}};
        std::set<StateId> seen{s};
        std::optional<std::string> found;
        for (size_t i = 0; i < frontier.size() && !found; ++i) {
          if (dfa.IsAccepting(frontier[i].first)) found = frontier[i].second;
          for (char c : std::string("abc")) {
            StateId t = dfa.Step(frontier[i].first, static_cast<uint8_t>(c));
            if (!dfa.IsDead(t) && seen.insert(t).second)
              frontier.push_back({t, frontier[i].second + c});
          }
        }
        ASSERT_TRUE(found.has_value())
            << "live state without an accepted extension, prefix " << prefix;
        ASSERT_TRUE(NaiveMatches(pool, e, prefix + *found)) << prefix << "|" << *found;
      }
    }
    ASSERT_TRUE(dfa.status().ok());
  }
  EXPECT_GT(dead_seen, 50);
}

TEST(LazyDfaTest, BoundedRepeatBuildsLinearlyManyStates) {
  ExprSet pool;
  ExprId e = Full(pool, "[a-z]{1,64}");
  LazyDfa dfa(&pool);
  StateId s = dfa.Start(e).value();
  for (int i = 0; i < 64; ++i) {
    s = dfa.Step(s, 'a' + i % 26);
    ASSERT_TRUE(dfa.IsAccepting(s)) << i;
  }
  EXPECT_TRUE(dfa.IsDead(dfa.Step(s, 'a')));
  EXPECT_LE(dfa.num_states(), 70u);
  EXPECT_GT(dfa.MemoryBytes(), 0u);
}

TEST(LazyDfaTest, StateLimitFailsTheDfa) {
  ExprSet pool;
  ExprId e = Full(pool, "[a-z]{1,64}");
  LazyDfa::Options options;
  options.max_states = 10;
  LazyDfa dfa(&pool, options);
  StateId s = dfa.Start(e).value();
  for (int i = 0; i < 20; ++i) s = dfa.Step(s, 'a');
  EXPECT_TRUE(dfa.IsDead(s));
  EXPECT_EQ(dfa.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_LE(dfa.num_states(), 10u);
}

TEST(LazyDfaTest, MemoryLimitFailsTheDfa) {
  ExprSet pool;
  ExprId e = Full(pool, "[a-z]{1,5000}");
  LazyDfa::Options options;
  options.max_memory_bytes = 200000;
  LazyDfa dfa(&pool, options);
  StateId s = dfa.Start(e).value();
  for (int i = 0; i < 5000 && dfa.status().ok(); ++i) s = dfa.Step(s, 'a');
  EXPECT_EQ(dfa.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_LE(dfa.MemoryBytes(), 200000u + 100000u);
}

// The derivative work of walking `bytes` from a fresh DFA of `pattern`
// within one MaskWorkScope, and the DFA's status after it.
std::pair<uint64_t, absl::Status> WalkInOneMask(const std::string& pattern,
                                                const std::string& bytes, uint64_t max_mask_work) {
  ExprSet pool;
  ExprId e = Full(pool, pattern);
  LazyDfa::Options options;
  options.max_mask_work = max_mask_work;
  LazyDfa dfa(&pool, options);
  StateId s = dfa.Start(e).value();
  MaskWorkScope mask;
  dfa.Walk(s, bytes);
  return {*MaskWorkScope::Used(), dfa.status()};
}

// A mask walk may build many new states each well under the per-state
// limit: within one scope their work adds up to max_mask_work, and past
// it the DFA fails naming that limit instead of stalling its thread.
TEST(LazyDfaTest, MaskWorkLimitBoundsTheNewStatesOfOneMask) {
  const std::string pattern = "(a?){40}a{40}";
  const std::string bytes(60, 'a');
  auto [needed, ok_status] = WalkInOneMask(pattern, bytes, 0);
  ASSERT_TRUE(ok_status.ok()) << ok_status;
  ASSERT_GT(needed, 1000u);  // many states, each some work

  EXPECT_TRUE(WalkInOneMask(pattern, bytes, needed + 1).second.ok());
  absl::Status over = WalkInOneMask(pattern, bytes, needed / 2).second;
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("max_mask_work"), std::string::npos) << over;
}

// The budget is per scope: the same walk split over two masks needs half
// of it in each, and a scope inside a scope joins it.
TEST(LazyDfaTest, MaskWorkIsCountedPerOutermostScope) {
  ExprSet pool;
  ExprId e = Full(pool, "(a?){40}a{40}");
  LazyDfa::Options options;
  options.max_mask_work = 0;
  LazyDfa unlimited(&pool, options);
  StateId s = unlimited.Start(e).value();
  uint64_t first = 0;
  {
    MaskWorkScope mask;
    s = unlimited.Walk(s, std::string(30, 'a'));
    {
      MaskWorkScope inner;
      s = unlimited.Walk(s, std::string(10, 'a'));
    }
    first = *MaskWorkScope::Used();
  }
  EXPECT_FALSE(MaskWorkScope::Used().has_value());
  MaskWorkScope second;
  EXPECT_EQ(*MaskWorkScope::Used(), 0u);
  unlimited.Walk(s, std::string(20, 'a'));
  EXPECT_GT(first, 0u);
  EXPECT_GT(*MaskWorkScope::Used(), 0u);
  // Walking known transitions again costs nothing.
  const uint64_t before = *MaskWorkScope::Used();
  unlimited.Walk(unlimited.Start(e).value(), std::string(40, 'a'));
  EXPECT_EQ(*MaskWorkScope::Used(), before);
}

TEST(LazyDfaTest, ConcurrentWalksAgreeWithSequentialMatching) {
  const char* pattern = "([a-c]{2,5}x|b+[^a]{0,3})*(ab|c)?$";
  ExprSet pool;
  ExprId e = ParseEcmaRegex(pattern, &pool).value();
  // Expected answers from a separate pool, sequentially.
  ExprSet ref_pool;
  ExprId ref = ParseEcmaRegex(pattern, &ref_pool).value();
  std::mt19937 rng(5);
  std::vector<std::string> inputs;
  std::vector<bool> expected;
  for (int i = 0; i < 400; ++i) {
    std::string s;
    int len = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int k = 0; k < len; ++k) s += "abcx"[std::uniform_int_distribution<int>(0, 3)(rng)];
    inputs.push_back(s);
    expected.push_back(ref_pool.Matches(ref, s));
  }
  LazyDfa dfa(&pool);
  StateId start = dfa.Start(e).value();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < inputs.size(); ++i) {
          size_t k = (i * 7 + t * 101 + round) % inputs.size();
          if (dfa.IsAccepting(dfa.Walk(start, inputs[k])) != expected[k]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  EXPECT_TRUE(dfa.status().ok());
}

}  // namespace
}  // namespace maskd::regex
