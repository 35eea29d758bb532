// Failure classes the official JSON-Schema-Test-Suite found (run by
// bench/json_schema_suite), one test each, named after the suite case it
// comes from. The suite's files are not copied: each case here is written
// from the rule it checks. Every instance is fed byte by byte, each byte
// checked against its mask and the end against CanStop.
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<testing::SmallVocabTokenizer> Bytes() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "suite-bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               CompileOptions options = {}) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, options, Bytes());
}

// True when the grammar accepts `doc`; fails the test when a mask disagrees
// with the matcher.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((g->tokenizer().vocab_size() + 31) / 32);
  for (unsigned char c : doc) {
    m->FillMask(mask);
    const bool in_mask = (mask[c / 32] >> (c % 32)) & 1;
    const bool accepted = m->AcceptToken(c);
    EXPECT_EQ(in_mask, accepted) << "byte '" << c << "' of " << doc;
    if (!accepted) return false;
  }
  m->FillMask(mask);
  const TokenId eos = g->tokenizer().eos_ids()[0];
  EXPECT_EQ(((mask[eos / 32] >> (eos % 32)) & 1) != 0, m->CanStop()) << doc;
  return m->CanStop();
}

// CompileOptions::default_dialect reads a schema without `$schema` as that
// draft: under draft 7 a sibling of $ref is ignored (suite: ref.json "ref
// overrides any sibling keywords"), under 2020-12 it applies.
TEST(JsonSchemaSuiteClassesTest, DefaultDialectReadsSchemasWithoutDollarSchema) {
  const std::string schema =
      R"({"definitions": {"n": {"type": "integer"}}, "$ref": "#/definitions/n", "maximum": 3})";
  auto latest = Compile(schema);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_FALSE(Accepts(*latest, "5"));
  CompileOptions draft7;
  draft7.default_dialect = "http://json-schema.org/draft-07/schema#";
  auto old = Compile(schema, draft7);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(Accepts(*old, "5"));
  EXPECT_FALSE(Accepts(*old, "5.5"));
  // A declared `$schema` wins over the default.
  auto declared = Compile(
      R"({"$schema": "https://json-schema.org/draft/2020-12/schema", )" + schema.substr(1), draft7);
  ASSERT_TRUE(declared.ok()) << declared.status();
  EXPECT_FALSE(Accepts(*declared, "5"));
}

// Suite: draft7/optional/content.json. Draft 7 asserts contentEncoding
// base64 (exact) and contentMediaType (refused by name: not regular).
TEST(JsonSchemaSuiteClassesTest, DraftSevenContentEncodingBase64IsExact) {
  auto g = Compile(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                       "contentEncoding": "base64"})");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"("eyJmb28iOiAiYmFyIn0K")"));
  EXPECT_TRUE(Accepts(*g, R"("")"));
  EXPECT_TRUE(Accepts(*g, R"("YWI=")"));
  EXPECT_TRUE(Accepts(*g, R"("YQ==")"));
  EXPECT_TRUE(Accepts(*g, "12"));  // Not a string: the keyword does not apply.
  EXPECT_FALSE(Accepts(*g, R"("eyJmb28iOi%iYmFyIn0K")"));
  EXPECT_FALSE(Accepts(*g, R"("YQ")"));
  EXPECT_FALSE(Accepts(*g, R"("YQ=")"));
  EXPECT_FALSE(Accepts(*g, R"("Y===")"));
}

TEST(JsonSchemaSuiteClassesTest, DraftSevenContentMediaTypeIsRefusedByNameWhenStrict) {
  const std::string schema = R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "properties": {"doc": {"contentMediaType": "application/json"}}})";
  auto strict = Compile(schema);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(strict.status().message(), HasSubstr("contentMediaType"));
  EXPECT_THAT(strict.status().message(), HasSubstr("/properties/doc"));
  CompileOptions lenient;
  lenient.strict = false;
  auto ignored = Compile(schema, lenient);
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_TRUE(Accepts(*ignored, R"({"doc": "{:}"})"));
  // From 2019-09 on the content keywords are annotations (suite:
  // draft2020-12/content.json expects every instance valid).
  auto annotation = Compile(R"({"contentMediaType": "application/json",
                                "contentEncoding": "base64"})");
  ASSERT_TRUE(annotation.ok()) << annotation.status();
  EXPECT_TRUE(Accepts(*annotation, R"("{:%")"));
}

// Suite: patternProperties.json "multiple simultaneous patternProperties are
// validated", "regexes are not anchored by default and are case sensitive",
// "patternProperties with boolean schemas". A key matching patterns of
// several schemas needs all of them. Every object of up to two members over
// a few keys and values, against a validator written here (std::regex
// ECMAScript search, which agrees with ECMA-262 on these patterns).
TEST(JsonSchemaSuiteClassesTest, OverlappingPatternPropertiesNeedEverySchema) {
  const std::string schema = R"({"patternProperties": {
      "a*": {"type": "integer"}, "aaa*": {"maximum": 20},
      "f.*o": true, "b.*": false}, "additionalProperties": {"type": "boolean"}})";
  struct Pattern {
    std::regex re;
    std::function<bool(const std::string&)> value_ok;
  };
  auto is_int = [](const std::string& v) { return v == "1" || v == "31"; };
  std::vector<Pattern> patterns = {
      {std::regex("a*"), is_int},
      {std::regex("aaa*"), [](const std::string& v) { return v != "31" && v != "25.5"; }},
      {std::regex("f.*o"), [](const std::string&) { return true; }},
      {std::regex("b.*"), [](const std::string&) { return false; }},
  };
  auto member_ok = [&](const std::string& key, const std::string& value) {
    bool matched = false;
    for (const Pattern& p : patterns) {
      if (std::regex_search(key, p.re)) {
        matched = true;
        if (!p.value_ok(value)) return false;
      }
    }
    return matched || value == "true";
  };
  const std::vector<std::string> keys = {"", "a", "aa", "xaay", "x_", "X_", "foo", "fbo", "zz"};
  const std::vector<std::string> values = {"1", "31", "25.5", "\"s\"", "true"};
  for (PropertyOrder order : {PropertyOrder::kSchemaOrder, PropertyOrder::kAnyOrder}) {
    CompileOptions options;
    options.property_order = order;
    auto g = Compile(schema, options);
    ASSERT_TRUE(g.ok()) << g.status();
    int accepted = 0, rejected = 0;
    for (size_t k1 = 0; k1 < keys.size(); ++k1) {
      for (const std::string& v1 : values) {
        const std::string one = "{\"" + keys[k1] + "\": " + v1;
        const bool ok1 = member_ok(keys[k1], v1);
        EXPECT_EQ(Accepts(*g, one + "}"), ok1) << one;
        (ok1 ? accepted : rejected)++;
        for (size_t k2 = k1 + 1; k2 < keys.size(); ++k2) {
          for (const std::string& v2 : values) {
            const std::string two = one + ", \"" + keys[k2] + "\": " + v2 + "}";
            const bool ok = ok1 && member_ok(keys[k2], v2);
            EXPECT_EQ(Accepts(*g, two), ok) << two;
          }
        }
      }
    }
    EXPECT_GT(accepted, 8);  // Both verdicts occur.
    EXPECT_GT(rejected, 8);
  }
  // Past kMaxPatternSchemas distinct schemas the overlap is refused by name.
  auto five = Compile(R"({"patternProperties": {"a": {"type": "integer"}, "b": {"maximum": 2},
      "c": {"minimum": 0}, "d": {"multipleOf": 2}, "abcd": {"type": "number"}}})");
  ASSERT_FALSE(five.ok());
  EXPECT_EQ(five.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(five.status().message(), HasSubstr("overlapping patternProperties"));
}

}  // namespace
}  // namespace maskd
