// Schemas no instance matches (`false`, contradictions, required parts that
// cannot be satisfied) compile to grammars that allow nothing: every mask is
// empty, EOS is never allowed, every token is refused.
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  vocab.push_back("{}");
  vocab.push_back("null");
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "empty-language-bytes");
  return tok;
}

void ExpectAllowsNothing(const std::string& schema) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  for (WhitespaceMode ws : {WhitespaceMode::kCompact, WhitespaceMode::kBounded}) {
    CompileOptions options;
    options.whitespace = ws;
    absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g =
        CompileGrammar(spec, options, Vocab());
    ASSERT_TRUE(g.ok()) << schema << ": " << g.status();
    auto m = Matcher::Create(*g);
    std::vector<uint32_t> words((Vocab()->vocab_size() + 31) / 32, 0xffffffffu);
    m->FillMask(words);
    for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(words[i], 0u) << schema << " word " << i;
    EXPECT_FALSE(m->CanStop()) << schema;
    EXPECT_TRUE(m->ComputeJumpForward().bytes.empty()) << schema;
    for (TokenId t = 0; t < Vocab()->vocab_size(); ++t) {
      EXPECT_FALSE(m->AcceptToken(t)) << schema << " token " << t;
    }
    EXPECT_FALSE(m->AcceptBytes("{}"));
    EXPECT_FALSE(m->AcceptBytes(" "));
  }
}

TEST(JsonSchemaEmptyLanguageTest, FalseSchema) {
  ExpectAllowsNothing("false");
  ExpectAllowsNothing(R"({"not": {}})");
  ExpectAllowsNothing(R"({"not": true})");
}

TEST(JsonSchemaEmptyLanguageTest, Contradictions) {
  ExpectAllowsNothing(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})");
  ExpectAllowsNothing(R"({"type": "integer", "minimum": 1.2, "maximum": 1.8})");
  ExpectAllowsNothing(R"({"const": 1, "enum": [2, 3]})");
  ExpectAllowsNothing(R"({"type": "string", "minLength": 3, "maxLength": 1})");
  ExpectAllowsNothing(R"({"anyOf": [{"type": "string", "minLength": 3, "maxLength": 1},
                                    {"allOf": [{"type": "null"}, {"type": "boolean"}]}]})");
}

// Emptiness only the grammar shows: a part every instance needs is empty.
TEST(JsonSchemaEmptyLanguageTest, UnsatisfiableRequiredParts) {
  ExpectAllowsNothing(R"({"type": "object", "properties": {"a": false}, "required": ["a"]})");
  ExpectAllowsNothing(R"({"type": "array", "items": false, "minItems": 1})");
  ExpectAllowsNothing(R"({"type": "array", "prefixItems": [{"type": "string", "pattern": "^a$",
                          "maxLength": 0}], "minItems": 1})");
  ExpectAllowsNothing(R"({"type": "object", "additionalProperties": false, "minProperties": 1})");
}

// Where only a part is empty, the rest still compiles and is usable.
TEST(JsonSchemaEmptyLanguageTest, EmptyPartsLeaveTheRest) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type": "object", "properties": {"a": false, "b": {"type": "null"}}})";
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g =
      CompileGrammar(spec, CompileOptions(), Vocab());
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  EXPECT_TRUE(m->AcceptBytes(R"({"b": null})"));
  EXPECT_TRUE(m->CanStop());
  m = Matcher::Create(*g);
  EXPECT_FALSE(m->AcceptBytes(R"({"a")"));
}

}  // namespace
}  // namespace maskd
