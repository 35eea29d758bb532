// SentencePiece-style BPE (Llama 2 / Mistral layout) on a tiny hand-made
// tokenizer.json in testdata/llama2_tiny: `▁` for space, `<0xNN>` byte
// fallback, Prepend + Replace normalizer, unk fusing. Expected ids were
// produced by the JavaScript reference (@lenml/tokenizers 3.7.2) loading the
// same files.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "compiler/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kDir = MASKD_TOKENIZER_TESTDATA "/llama2_tiny";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::shared_ptr<const Tokenizer> Load(bool byte_fallback) {
  std::string json = ReadFile(kDir + "/tokenizer.json");
  if (!byte_fallback) {
    json = absl::StrReplaceAll(json, {{"\"byte_fallback\": true", "\"byte_fallback\": false"}});
  }
  auto tokenizer = Tokenizer::FromJson(json, ReadFile(kDir + "/tokenizer_config.json"));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *tokenizer : nullptr;
}

TEST(SentencePieceTest, LoadsBytesSpecialsAndEos) {
  auto tokenizer = Tokenizer::FromDirectory(kDir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const Tokenizer& t = **tokenizer;
  EXPECT_EQ(t.name(), "llama2_tiny");
  EXPECT_EQ(t.kind(), TokenizerKind::kSentencePieceBpe);
  EXPECT_EQ(t.vocab_size(), 279u);
  EXPECT_THAT(t.eos_ids(), ElementsAre(2u));
  EXPECT_TRUE(t.is_special(0));
  EXPECT_TRUE(t.is_special(1));
  EXPECT_FALSE(t.is_special(3));
  EXPECT_EQ(t.token_bytes(271), " hello");     // "▁hello"
  EXPECT_EQ(t.token_bytes(259), " ");          // "▁"
  EXPECT_EQ(t.token_bytes(3 + 0x41), "A");     // "<0x41>"
  EXPECT_EQ(t.token_bytes(3 + 0xC3), "\xC3");  // A lone byte.
  EXPECT_EQ(t.token_bytes(277), "\xC3\xA9");   // "é"
  EXPECT_EQ(t.token_bytes(1), "<s>");
}

TEST(SentencePieceTest, EncodesLikeReferenceWithByteFallback) {
  auto t = Load(/*byte_fallback=*/true);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->Encode("hello world"), ElementsAre(271, 276));
  EXPECT_THAT(t->Encode("h\xC3\xA9\xE4\xBD\xA0z"), ElementsAre(267, 277, 278, 125));
  EXPECT_THAT(t->Encode("\xC3\xBC"), ElementsAre(259, 198, 191));
  EXPECT_THAT(t->Encode(" hello"), ElementsAre(259, 271));
  EXPECT_THAT(t->Encode("<s>hello</s>"), ElementsAre(1, 271, 2));
  EXPECT_THAT(t->Encode("hello  world"), ElementsAre(271, 259, 276));
  EXPECT_THAT(t->Encode(""), IsEmpty());
  EXPECT_THAT(t->Encode("  "), ElementsAre(259, 259, 259));
  EXPECT_THAT(t->Encode("zz"), ElementsAre(259, 125, 125));
  EXPECT_THAT(t->Encode("hello\nworld"), ElementsAre(271, 13, 264, 272, 275));
  EXPECT_THAT(t->Encode("<unk>z"), ElementsAre(0, 259, 125));
}

TEST(SentencePieceTest, UnknownsWithoutByteFallbackFuseWithinASection) {
  auto t = Load(/*byte_fallback=*/false);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->Encode("h\xC3\xA9\xE4\xBD\xA0z"), ElementsAre(267, 277, 278, 0));
  EXPECT_THAT(t->Encode("\xC3\xBC"), ElementsAre(259, 0));
  EXPECT_THAT(t->Encode("zz"), ElementsAre(259, 0));
  EXPECT_THAT(t->Encode("hello\nworld"), ElementsAre(271, 0, 264, 272, 275));
  // The added <unk> and the unknown "z" are in different sections.
  EXPECT_THAT(t->Encode("<unk>z"), ElementsAre(0, 259, 0));
}

TEST(SentencePieceTest, DecodeOfEncodeIsTheNormalizedText) {
  auto t = Load(/*byte_fallback=*/true);
  ASSERT_NE(t, nullptr);
  for (const std::string text : {"hello world", "h\xC3\xA9\xE4\xBD\xA0z", "  x  y", "a\nb\tc"}) {
    // The normalizer prepends "▁", which decodes to a space.
    EXPECT_EQ(t->Decode(t->Encode(text)), " " + text);
  }
}

// Newer SentencePiece conversions (Mistral v0.3 style) put the space
// handling in a Metaspace pre-tokenizer instead of the normalizer. Expected
// ids follow HuggingFace's semantics: prepend_scheme "first" prepends "▁"
// only to the text that starts the input, not after an added token.
std::shared_ptr<const Tokenizer> LoadMetaspace(const std::string& scheme, bool split) {
  std::string json = ReadFile(kDir + "/tokenizer.json");
  const size_t begin = json.find("\"normalizer\"");
  const size_t end = json.find("\"post_processor\"");
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  json.replace(begin, end - begin,
               "\"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Metaspace\", "
               "\"replacement\": \"\u2581\", \"prepend_scheme\": \"" +
                   scheme + "\", \"split\": " + (split ? "true" : "false") + "}, ");
  auto tokenizer = Tokenizer::FromJson(json, "");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *tokenizer : nullptr;
}

TEST(SentencePieceTest, MetaspacePreTokenizerSchemes) {
  auto first = LoadMetaspace("first", /*split=*/false);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->kind(), TokenizerKind::kSentencePieceBpe);
  EXPECT_THAT(first->Encode("hello world"), ElementsAre(271, 276));
  EXPECT_THAT(first->Encode("<s>hello"), ElementsAre(1, 260, 261, 268, 263));
  // Text already starting with a space gets no second "▁" (unlike Prepend).
  EXPECT_THAT(first->Encode(" hello"), ElementsAre(271));

  auto always = LoadMetaspace("always", /*split=*/true);
  ASSERT_NE(always, nullptr);
  EXPECT_THAT(always->Encode("<s>hello"), ElementsAre(1, 271));
  EXPECT_THAT(always->Encode("hello  world"), ElementsAre(271, 259, 276));

  auto never = LoadMetaspace("never", /*split=*/false);
  ASSERT_NE(never, nullptr);
  EXPECT_THAT(never->Encode("hello"), ElementsAre(260, 261, 268, 263));
  EXPECT_THAT(never->Encode("hello world"), ElementsAre(260, 261, 268, 263, 276));
}

}  // namespace
}  // namespace maskd
