// Failure classes the official JSON-Schema-Test-Suite found (run by
// bench/json_schema_suite), one test each, named after the suite case it
// comes from. The suite's files are not copied: each case here is written
// from the rule it checks. Every instance is fed byte by byte, each byte
// checked against its mask and the end against CanStop.
#include <memory>
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

}  // namespace
}  // namespace maskd
