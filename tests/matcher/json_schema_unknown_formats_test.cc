// CompileOptions::unknown_formats: formats without an exact language are
// refused by name (the default) or, on request, plain strings whose other
// constraints still hold, listed in CompileStats::ignored_keywords. Formats
// the engine knows are enforced either way.
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "format-bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               UnknownFormats policy) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  CompileOptions options;
  options.unknown_formats = policy;
  return CompileGrammar(spec, options, Vocab());
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

constexpr char kSchema[] = R"({"type": "object", "properties": {
    "p": {"type": "string", "format": "path", "maxLength": 3},
    "d": {"type": "string", "format": "date"}}, "required": ["p"]})";

TEST(JsonSchemaUnknownFormatsTest, RefusedByDefaultNamingFormatAndPointer) {
  auto g = Compile(kSchema, UnknownFormats::kRefuse);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("path"));
  EXPECT_THAT(g.status().message(), HasSubstr("/properties/p"));
  EXPECT_EQ(CompileOptions().unknown_formats, UnknownFormats::kRefuse);
}

TEST(JsonSchemaUnknownFormatsTest, IgnoredAsPlainStringsAndListed) {
  auto g = Compile(kSchema, UnknownFormats::kIgnore);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"p": "a/b"})"));
  EXPECT_TRUE(Accepts(*g, R"({"p": "%%"})"));
  EXPECT_FALSE(Accepts(*g, R"({"p": "abcd"})"));  // maxLength still holds
  // A format the engine knows is still enforced.
  EXPECT_TRUE(Accepts(*g, R"({"p": "x", "d": "2024-02-29"})"));
  EXPECT_FALSE(Accepts(*g, R"({"p": "x", "d": "2023-02-29"})"));
  EXPECT_THAT((*g)->stats().ignored_keywords, Contains("format \"path\" at /properties/p"));
}

}  // namespace
}  // namespace maskd
