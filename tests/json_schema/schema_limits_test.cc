// Bad input and absurd sizes through the whole compile (ParseSchema,
// normalization, LowerSchema, automata): each gives a precise error naming
// the offending part, or a bounded grammar that still behaves exactly --
// never a crash, a hang or an unbounded allocation. No timing asserts; every
// case is sized to finish well under a second in a release build.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> Vocab() {
  static const auto* vocab = new std::shared_ptr<const Tokenizer>([] {
    std::vector<std::string> tokens;
    for (int c = 32; c < 127; ++c) tokens.push_back(std::string(1, static_cast<char>(c)));
    tokens.push_back("aaaa");
    return std::make_shared<const testing::SmallVocabTokenizer>(tokens, "limits");
  }());
  return *vocab;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileSchema(
    const std::string& schema, const CompileOptions& options = CompileOptions()) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, options, Vocab());
}

// `text` is a complete instance of the grammar.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  return m->AcceptBytes(text) && m->CanStop();
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

void ExpectError(const std::string& schema, absl::StatusCode code,
                 const std::vector<std::string>& parts) {
  auto g = CompileSchema(schema);
  ASSERT_FALSE(g.ok()) << schema.substr(0, 200);
  EXPECT_EQ(g.status().code(), code) << g.status();
  for (const std::string& part : parts) EXPECT_THAT(g.status().message(), HasSubstr(part));
}

TEST(SchemaLimitsTest, HugeMinLengthIsRefusedNamingTheKeywordAndPointer) {
  ExpectError(R"({"properties":{"s":{"type":"string","minLength":1e9}}})",
              absl::StatusCode::kResourceExhausted, {"minLength 1000000000", "/properties/s"});
}

TEST(SchemaLimitsTest, HugeMaxLengthCompilesAsALazyBound) {
  auto g = CompileSchema(R"({"type":"string","maxLength":1e9})");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "\"" + std::string(5000, 'a') + "\""));
  EXPECT_FALSE(Accepts(*g, "\"" + std::string(5000, 'a')));
}

TEST(SchemaLimitsTest, HugeItemAndPropertyCountsAreRefusedNamingThePointer) {
  ExpectError(R"({"properties":{"xs":{"type":"array","maxItems":1e9}}})",
              absl::StatusCode::kResourceExhausted, {"array bounds", "/properties/xs"});
  ExpectError(R"({"properties":{"xs":{"type":"array","minItems":1e9}}})",
              absl::StatusCode::kResourceExhausted, {"array bounds", "/properties/xs"});
  ExpectError(R"({"properties":{"o":{"type":"object","minProperties":1e9}}})",
              absl::StatusCode::kResourceExhausted, {"object bounds", "/properties/o"});
}

TEST(SchemaLimitsTest, ExtremeNumericBoundsAreExact) {
  auto g = CompileSchema(R"({"type":"number","minimum":-1e300,"maximum":1e300})");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "-1e+300"));
  EXPECT_TRUE(Accepts(*g, "-" + Repeat("9", 300)));
  EXPECT_TRUE(Accepts(*g, "12.5"));
  EXPECT_FALSE(Accepts(*g, "-2e+300"));
  EXPECT_FALSE(Accepts(*g, "1" + Repeat("0", 301)));
}

TEST(SchemaLimitsTest, HugeMultipleOfIsRefusedNamingTheKeyword) {
  ExpectError(R"({"properties":{"n":{"type":"integer","multipleOf":1e300}}})",
              absl::StatusCode::kUnimplemented, {"multipleOf", "/properties/n"});
}

TEST(SchemaLimitsTest, TenThousandDeepNestingIsRefusedWithItsOffset) {
  ExpectError(Repeat("[", 10000) + Repeat("]", 10000), absl::StatusCode::kInvalidArgument,
              {"nesting deeper than"});
  ExpectError(Repeat(R"({"items":)", 10000) + "true" + Repeat("}", 10000),
              absl::StatusCode::kInvalidArgument, {"nesting deeper than", "at byte"});
  ExpectError(Repeat(R"({"anyOf":[)", 10000) + "true" + Repeat("]}", 10000),
              absl::StatusCode::kInvalidArgument, {"nesting deeper than", "at byte"});
  ExpectError(Repeat(R"({"properties":{"a":)", 10000) + "true" + Repeat("}}", 10000),
              absl::StatusCode::kInvalidArgument, {"nesting deeper than", "at byte"});
}

// {"$ref":"#/$defs/a0","$defs":{"a0":LINK(0),...,"aN":LAST}}
std::string RefChain(int n, const std::string& link_prefix, const std::string& link_suffix,
                     const std::string& last) {
  std::string s = R"({"$ref":"#/$defs/a0","$defs":{)";
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&s, "\"a", i, "\":", link_prefix, "{\"$ref\":\"#/$defs/a", i + 1, "\"}",
                    link_suffix, ",");
  }
  absl::StrAppend(&s, "\"a", n, "\":", last, "}}");
  return s;
}

TEST(SchemaLimitsTest, LongRefChainResolvesWithoutRecursion) {
  // 5,000 links, not 10,000: resolving each $ref scans the $defs object
  // (simdjson at_pointer), quadratic in the chain; slow under ASan.
  CompileOptions options;
  options.time_limit_ms = 120'000;
  auto g = CompileSchema(RefChain(5000, "", "", R"({"type":"integer"})"), options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "42"));
  EXPECT_FALSE(Accepts(*g, "\"x\""));
}

TEST(SchemaLimitsTest, LongRecursiveChainsThroughItemsAndAnyOfCompile) {
  // Each link is its own grammar rule: lowering uses a work list, not recursion.
  auto items =
      CompileSchema(RefChain(3000, R"({"type":"array","items":)", "}", R"({"type":"null"})"));
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_TRUE(Accepts(*items, "[[[]]]"));
  EXPECT_FALSE(Accepts(*items, "[[[1]]]"));
  auto any_of = CompileSchema(RefChain(3000, R"({"anyOf":[)", R"(,{"type":"null"}]})", "true"));
  ASSERT_TRUE(any_of.ok()) << any_of.status();
  EXPECT_TRUE(Accepts(*any_of, "null"));
}

TEST(SchemaLimitsTest, RefChainMergingSiblingsIsBoundedAndNamed) {
  // From 2019-09 on, keywords beside $ref are merged with its target: a
  // chain 2,000 long would recurse 2,000 deep (past the limit of 1,000), so
  // it is refused.
  ExpectError(RefChain(2000, R"({"minimum":0,"allOf":[)", "]}", R"({"type":"integer"})"),
              absl::StatusCode::kInvalidArgument, {"chain too deep", "/$defs/a"});
}

TEST(SchemaLimitsTest, MegabyteSchemaHonoursTheTimeLimit) {
  // About 1 MB: 5,000 properties with long names.
  std::string s = R"({"type":"object","properties":{)";
  for (int i = 0; i < 5000; ++i) {
    absl::StrAppend(&s, i ? "," : "", "\"", std::string(180, 'p'), i, "\":{\"type\":\"string\"}");
  }
  s += "}}";
  ASSERT_GT(s.size(), 1'000'000u);
  CompileOptions options;
  options.time_limit_ms = 0;  // Deterministic: expired before the first check.
  auto g = CompileSchema(s, options);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kDeadlineExceeded) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr("time limit of 0 ms"));
}

TEST(SchemaLimitsTest, TimeLimitNamesTheValueBeingLowered) {
  // The front end checks the deadline per value it lowers: a limit of zero
  // stops it at the first one, whichever stage sees it first.
  CompileOptions options;
  options.time_limit_ms = 0;
  auto g = CompileSchema(R"({"type":"integer"})", options);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kDeadlineExceeded) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr("time limit"));
}

TEST(SchemaLimitsTest, TimeLimitStopsAnEmptinessCheckMidway) {
  // Intersected patterns and negated patterns whose emptiness check exhausts
  // its budget of states only after seconds (found by the json_schema
  // fuzzer): the check itself watches the compile's deadline, so the limit
  // stops it (DeadlineExceeded) long before the budget would
  // (ResourceExhausted).
  const std::string schema = R"({"type": "string", "allOf": [
      {"pattern": "^([a-z][0-9])+$"}, {"pattern": "((c1d3g3).{4,8}){6,6}"},
      {"pattern": "(t|8){10,10}$"},
      {"anyOf": [{"not": {"pattern": "^([`-z][0-9])+$"}},
                 {"not": {"pattern": "^((t1d3kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkg3).{4,8}){6,6}"}},
                 {"not": {"pattern": "(t|8){10,10}$"}}]}], "minLength": 100})";
  CompileOptions options;
  options.time_limit_ms = 50;
  auto g = CompileSchema(schema, options);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kDeadlineExceeded) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr("lexeme string"));
}

TEST(SchemaLimitsTest, TenThousandEntryEnumCompilesExactly) {
  std::string s = R"({"enum":[)";
  for (int i = 0; i < 10000; ++i) absl::StrAppend(&s, i ? "," : "", "\"value", i, "\"");
  s += "]}";
  auto g = CompileSchema(s);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "\"value9999\""));
  EXPECT_TRUE(Accepts(*g, "\"value0\""));
  EXPECT_FALSE(Accepts(*g, "\"value10000\""));
}

// A schema no instance matches is valid: its grammar allows nothing
// (json_schema_empty_language_test checks the masks).
TEST(SchemaLimitsTest, ContradictoryAllOfIsAnEmptyGrammar) {
  for (const char* schema : {R"({"allOf":[{"type":"string"},{"type":"integer"}]})",
                             R"({"allOf":[{"enum":[1,2]},{"const":3}]})"}) {
    auto g = CompileSchema(schema);
    ASSERT_TRUE(g.ok()) << schema << ": " << g.status();
    EXPECT_FALSE(Accepts(*g, "\"a\""));
    EXPECT_FALSE(Accepts(*g, "3"));
    EXPECT_FALSE(Accepts(*g, ""));
  }
}

TEST(SchemaLimitsTest, UnresolvableAndRemoteRefsNameTheRef) {
  ExpectError(R"({"properties":{"a":{"$ref":"#/$defs/missing"}}})",
              absl::StatusCode::kInvalidArgument,
              {"unresolvable $ref \"#/$defs/missing\"", "/properties/a/$ref"});
  ExpectError(R"({"$ref":"https://example.com/schema.json#/x"})", absl::StatusCode::kUnimplemented,
              {"remote $ref \"https://example.com/schema.json#/x\"", "/$ref"});
}

TEST(SchemaLimitsTest, RefCyclesWithoutProgressAreErrors) {
  ExpectError(R"({"$ref":"#"})", absl::StatusCode::kInvalidArgument, {"circular"});
  ExpectError(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})",
              absl::StatusCode::kInvalidArgument, {"circular"});
}

TEST(SchemaLimitsTest, MalformedJsonIsAnInvalidArgument) {
  ExpectError(R"({"type":"object",)", absl::StatusCode::kInvalidArgument, {"not valid JSON"});
  ExpectError("", absl::StatusCode::kInvalidArgument, {"not valid JSON"});
}

}  // namespace
}  // namespace maskd
