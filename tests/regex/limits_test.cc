// Absurd regexes through the ECMA front end: a precise error with the
// offending offset, or an expression whose size does not depend on the
// counts written in the pattern (bounded repetition stays a counter, never an
// unrolled copy). Sized to finish well under a second in a release build.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd::regex {
namespace {

using ::testing::HasSubstr;

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

void ExpectError(const std::string& pattern, const std::string& what) {
  ExprSet pool;
  absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool, MatchMode::kFullMatch);
  ASSERT_FALSE(e.ok()) << pattern.substr(0, 100);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr(what));
}

TEST(RegexLimitsTest, HundredKilobyteLiteralMatchesExactly) {
  const std::string text = Repeat("abcdefghij", 10000);
  ExprSet pool;
  absl::StatusOr<ExprId> e = ParseEcmaRegex(text, &pool, MatchMode::kFullMatch);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(pool.Matches(*e, text));
  EXPECT_FALSE(pool.Matches(*e, text.substr(1)));
  EXPECT_EQ(pool.MinLength(*e), text.size());
}

TEST(RegexLimitsTest, HundredKilobytesOfClassesAndGroupsParse) {
  ExprSet pool;
  absl::StatusOr<ExprId> classes =
      ParseEcmaRegex(Repeat("[a-z]\\d", 20000), &pool, MatchMode::kFullMatch);
  ASSERT_TRUE(classes.ok()) << classes.status();
  EXPECT_TRUE(pool.Matches(*classes, Repeat("q7", 20000)));
  EXPECT_FALSE(pool.Matches(*classes, Repeat("q7", 19999)));
  absl::StatusOr<ExprId> groups =
      ParseEcmaRegex(Repeat("(a|bc)", 20000), &pool, MatchMode::kFullMatch);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_TRUE(pool.Matches(*groups, Repeat("bc", 20000)));
}

TEST(RegexLimitsTest, NestedCountedRepetitionStaysACounter) {
  ExprSet pool;
  const size_t before = pool.size();
  absl::StatusOr<ExprId> e = ParseEcmaRegex("(?:a{1000}){1000}", &pool, MatchMode::kFullMatch);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(pool.MinLength(*e), 1'000'000u);
  EXPECT_EQ(pool.MaxLength(*e), 1'000'000u);
  EXPECT_LT(pool.size() - before, 100u);  // Not a million nodes.
  EXPECT_FALSE(pool.Matches(*e, std::string(1000, 'a')));
  absl::StatusOr<ExprId> open = ParseEcmaRegex("(a{0,1000}b){0,1000}", &pool);
  ASSERT_TRUE(open.ok()) << open.status();
}

TEST(RegexLimitsTest, QuantifierOnAQuantifierIsRefusedWithItsOffset) {
  ExpectError("a{1000}{1000}", "nothing to repeat at offset 7");
  ExpectError("a**", "nothing to repeat at offset 2");
}

TEST(RegexLimitsTest, HugeRepetitionCountsAreRefusedWithTheirOffset) {
  ExpectError("ab{4294967296}", "repetition count above");
  ExpectError("ab{99999999999999999999999}", "at offset 2");
  ExpectError("a{5,99999999999}", "repetition count above");
}

TEST(RegexLimitsTest, TenThousandAlternativesMatchExactly) {
  std::string pattern;
  for (int i = 0; i < 10000; ++i) absl::StrAppend(&pattern, i ? "|" : "", "w", i);
  ExprSet pool;
  absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool, MatchMode::kFullMatch);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(pool.Matches(*e, "w0"));
  EXPECT_TRUE(pool.Matches(*e, "w9999"));
  EXPECT_FALSE(pool.Matches(*e, "w10000"));
  EXPECT_FALSE(pool.Matches(*e, "w"));
}

TEST(RegexLimitsTest, TenThousandDeepGroupsAreRefusedNotRecursedInto) {
  ExpectError(Repeat("(", 10000) + "a" + Repeat(")", 10000), "groups nested too deeply");
  ExpectError(Repeat("(?:", 10000) + "a" + Repeat(")", 10000), "groups nested too deeply");
  ExpectError(Repeat("[", 10000), "");  // Unterminated classes: an error, no crash.
}

}  // namespace
}  // namespace maskd::regex
