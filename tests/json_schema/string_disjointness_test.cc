// StringDisjointness: exact answers where they are easy to know, the same
// answers from one shared instance (its pool and memo carried across
// questions, in both orders) as from a fresh instance per question.
#include "compiler/json_schema/string_disjointness.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace maskd::json_schema {
namespace {

SchemaNode Strings(std::vector<std::string> patterns, uint64_t min_length = 0,
                   std::optional<uint64_t> max_length = std::nullopt) {
  SchemaNode n;
  n.types = kStringType;
  n.patterns = std::move(patterns);
  n.min_length = min_length;
  n.max_length = max_length;
  return n;
}

TEST(StringDisjointnessTest, DecidesOnPatternsAndLengths) {
  StringDisjointness d;
  EXPECT_TRUE(d.ProvablyDisjoint(Strings({"^a"}), Strings({"^b"})));
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"a"}), Strings({"b"})));  // "ab"
  EXPECT_TRUE(d.ProvablyDisjoint(Strings({"^x$"}), Strings({"^y"})));
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"^x"}), Strings({"^x$"})));
  // Lengths alone, and lengths against a pattern.
  EXPECT_TRUE(d.ProvablyDisjoint(Strings({}, 3), Strings({}, 0, 2)));
  EXPECT_TRUE(d.ProvablyDisjoint(Strings({"^[a-z]{4,}$"}), Strings({"[0-9]"}, 0, 3)));
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"^[a-z]{4,}$"}), Strings({"z"}, 0, 4)));
  // Without a pattern on both sides, nothing is claimed.
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"^a"}), Strings({})));
  // A pattern the ECMA front end refuses decides nothing.
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"(?<=a)b"}), Strings({"^c"})));
  // Unicode classes (ECMA semantics: \s holds U+00A0).
  EXPECT_FALSE(d.ProvablyDisjoint(Strings({"^\\s$"}), Strings({"^\u00a0$"})));
  EXPECT_TRUE(d.ProvablyDisjoint(Strings({"^\\d+$"}), Strings({"^\\p{L}+$"})));
}

TEST(StringDisjointnessTest, SharedInstanceAnswersAsFreshOnes) {
  std::vector<SchemaNode> nodes;
  for (int i = 0; i < 8; ++i) {
    nodes.push_back(Strings({"^(p" + std::to_string(i % 5) + "|q)[a-z]{2,9}$"}, i % 3,
                            i % 4 == 0 ? std::optional<uint64_t>(3 + i) : std::nullopt));
    nodes.push_back(Strings({"ab", std::to_string(i) + "$"}));
  }
  StringDisjointness shared;
  int disjoint = 0, overlapping = 0;
  for (const SchemaNode& a : nodes) {
    for (const SchemaNode& b : nodes) {
      const bool fresh = StringDisjointness().ProvablyDisjoint(a, b);
      EXPECT_EQ(shared.ProvablyDisjoint(a, b), fresh);
      EXPECT_EQ(shared.ProvablyDisjoint(b, a), fresh);
      (fresh ? disjoint : overlapping)++;
    }
  }
  EXPECT_GT(disjoint, 30);
  EXPECT_GT(overlapping, 30);
}

}  // namespace
}  // namespace maskd::json_schema
