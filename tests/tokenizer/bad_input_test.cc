// Malformed tokenizer files are refused with an error naming the problem;
// nothing crashes. One test per kind of damage.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "compiler/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A minimal valid byte-level BPE tokenizer.json; tests damage one part.
constexpr char kValid[] = R"({
  "added_tokens": [{"id": 3, "content": "<|end|>", "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
})";

std::string Replace(const std::string& from, const std::string& to) {
  const std::string json = absl::StrReplaceAll(kValid, {{from, to}});
  EXPECT_NE(json, kValid) << "the damage did not apply: " << from;
  return json;
}

std::string ErrorOf(const std::string& json, const std::string& config = "") {
  auto tokenizer = Tokenizer::FromJson(json, config);
  EXPECT_FALSE(tokenizer.ok());
  if (tokenizer.ok()) return "";
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(tokenizer.status().message());
}

TEST(BadInputTest, ValidBaselineLoadsAndEncodes) {
  auto tokenizer = Tokenizer::FromJson(kValid, "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->vocab_size(), 4u);
  EXPECT_EQ((*tokenizer)->Encode("ab<|end|>a"), (std::vector<TokenId>{2, 3, 0}));
}

TEST(BadInputTest, MalformedJson) {
  EXPECT_THAT(ErrorOf(Replace("\"merges\": [", "\"merges\": [,")), HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf("not json at all"), HasSubstr("JSON"));
  EXPECT_THAT(ErrorOf("[1, 2]"), HasSubstr("not a JSON object"));
}

TEST(BadInputTest, TruncatedFile) {
  const std::string valid = kValid;
  for (size_t cut : {size_t{1}, valid.size() / 3, valid.size() / 2, valid.size() - 2}) {
    EXPECT_THAT(ErrorOf(valid.substr(0, cut)), HasSubstr("truncated")) << "cut at " << cut;
  }
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty"));
}

TEST(BadInputTest, UnknownModelType) {
  EXPECT_THAT(ErrorOf(Replace("\"type\": \"BPE\"", "\"type\": \"Unigram\"")),
              AllOf(HasSubstr("model.type"), HasSubstr("Unigram"), HasSubstr("not supported")));
  EXPECT_THAT(ErrorOf(Replace("\"type\": \"BPE\"", "\"type\": \"WordPiece\"")),
              AllOf(HasSubstr("WordPiece"), HasSubstr("not supported")));
  EXPECT_THAT(ErrorOf(Replace("\"model\": {", "\"modell\": {")), HasSubstr("model is missing"));
}

TEST(BadInputTest, DuplicateIds) {
  EXPECT_THAT(ErrorOf(Replace("\"b\": 1", "\"b\": 0")),
              AllOf(HasSubstr("duplicate id 0"), HasSubstr("model.vocab")));
  EXPECT_THAT(ErrorOf(Replace("\"b\": 1", "\"a\": 1")), HasSubstr("listed twice"));
  EXPECT_THAT(ErrorOf(Replace("[{\"id\": 3, \"content\": \"<|end|>\", \"special\": true}]",
                              "[{\"id\": 3, \"content\": \"<|end|>\"}, {\"id\": 3, \"content\": "
                              "\"<|x|>\"}]")),
              AllOf(HasSubstr("added_tokens"), HasSubstr("duplicate id 3")));
}

TEST(BadInputTest, HolesAreSpecialAndEmptyAndIdsOutOfRangeAreRefused) {
  // Id 5 leaves holes at 4 (and the added token sits at 3).
  auto tokenizer = Tokenizer::FromJson(Replace("\"ab\": 2", "\"ab\": 5"), "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->vocab_size(), 6u);
  EXPECT_TRUE((*tokenizer)->is_special(2));
  EXPECT_TRUE((*tokenizer)->is_special(4));
  EXPECT_EQ((*tokenizer)->token_bytes(4), "");
  EXPECT_FALSE((*tokenizer)->is_special(5));
  EXPECT_EQ((*tokenizer)->Encode("abab"), (std::vector<TokenId>{5, 5}));
  EXPECT_THAT(ErrorOf(Replace("\"ab\": 2", "\"ab\": 4000000000")),
              AllOf(HasSubstr("model.vocab"), HasSubstr("out of range")));
  EXPECT_THAT(ErrorOf(Replace("\"ab\": 2", "\"ab\": -1")), HasSubstr("non-negative integer"));
  EXPECT_THAT(ErrorOf(Replace("\"ab\": 2", "\"ab\": \"2\"")), HasSubstr("non-negative integer"));
  EXPECT_THAT(ErrorOf(Replace("{\"a\": 0, \"b\": 1, \"ab\": 2}", "{}")), HasSubstr("empty"));
}

TEST(BadInputTest, NonUtf8VocabEntry) {
  EXPECT_THAT(ErrorOf(Replace("\"ab\": 2", "\"a\xFF\": 2")),
              AllOf(HasSubstr("not valid UTF-8"), HasSubstr("offset")));
  // Byte-level vocabularies may only use the 256 GPT-2 byte characters.
  EXPECT_THAT(ErrorOf(Replace("\"ab\": 2", "\"a\xE2\x82\xAC\": 2")),
              AllOf(HasSubstr("byte-level alphabet"), HasSubstr("id 2")));
}

TEST(BadInputTest, MergesReferencingUnknownTokens) {
  EXPECT_THAT(ErrorOf(Replace("[\"a b\"]", "[\"a x\"]")),
              AllOf(HasSubstr("model.merges[0]"), HasSubstr("unknown token \"x\"")));
  EXPECT_THAT(
      ErrorOf(Replace("[\"a b\"]", "[\"a b\", \"b a\"]")),
      AllOf(HasSubstr("model.merges[1]"), HasSubstr("\"ba\""), HasSubstr("not in model.vocab")));
  EXPECT_THAT(ErrorOf(Replace("[\"a b\"]", "[\"ab\"]")), HasSubstr("two tokens"));
  EXPECT_THAT(ErrorOf(Replace("[\"a b\"]", "[[\"a\"]]")), HasSubstr("model.merges[0]"));
  // The pair form works as well as the string form.
  EXPECT_TRUE(Tokenizer::FromJson(Replace("[\"a b\"]", "[[\"a\", \"b\"]]"), "").ok());
}

TEST(BadInputTest, MissingFile) {
  auto tokenizer = Tokenizer::FromDirectory("/nonexistent/maskd/tokenizer");
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(
      std::string(tokenizer.status().message()),
      AllOf(HasSubstr("/nonexistent/maskd/tokenizer/tokenizer.json"), HasSubstr("missing")));
}

TEST(BadInputTest, UnsupportedPipelineParts) {
  EXPECT_THAT(
      ErrorOf(Replace("\"normalizer\": null", "\"normalizer\": {\"type\": \"BertNormalizer\"}")),
      AllOf(HasSubstr("normalizer.type"), HasSubstr("BertNormalizer")));
  EXPECT_THAT(
      ErrorOf(Replace("{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": "
                      "true}",
                      "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, "
                      "\"behavior\": \"Isolated\", \"invert\": false}")),
      AllOf(HasSubstr("pre_tokenizer"), HasSubstr("does not compile")));
  EXPECT_THAT(ErrorOf(Replace("\"type\": \"ByteLevel\"", "\"type\": \"Whitespace\"")),
              HasSubstr("Whitespace"));
  EXPECT_THAT(ErrorOf(Replace("\"merges\"", "\"dropout\": 0.1, \"merges\"")), HasSubstr("dropout"));
}

TEST(BadInputTest, BadConfigAndEos) {
  EXPECT_THAT(ErrorOf(kValid, R"({"eos_token": "<|nope|>"})"),
              AllOf(HasSubstr("eos_token"), HasSubstr("<|nope|>")));
  EXPECT_THAT(ErrorOf(kValid, R"({"eos_token": )"), HasSubstr("tokenizer_config.json"));
  EXPECT_THAT(ErrorOf(kValid, R"({"eos_token": 7})"), HasSubstr("eos_token"));
  auto string_form = Tokenizer::FromJson(kValid, R"({"eos_token": "<|end|>"})");
  ASSERT_TRUE(string_form.ok()) << string_form.status();
  EXPECT_EQ((*string_form)->eos_ids(), std::vector<TokenId>{3});
  auto object_form = Tokenizer::FromJson(
      kValid,
      R"({"eos_token": {"content": "<|end|>"}, "model_max_length": 1000000000000000019884624838656})");
  ASSERT_TRUE(object_form.ok()) << object_form.status();
  EXPECT_EQ((*object_form)->eos_ids(), std::vector<TokenId>{3});
}

}  // namespace
}  // namespace maskd
