// tokenizer.json is read in two ways (On-Demand for model.vocab and
// model.merges, DOM for the rest): a file means the same whatever its member
// order, escapes, duplicates or merge form, and a syntax error anywhere is
// reported as one, as when the whole file went through the DOM parser.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kAdded[] = R"("added_tokens": [{"id": 3, "content": "<|end|>", "special": true}])";
constexpr char kPre[] = R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false})";
constexpr char kVocab[] = R"("vocab": {"a": 0, "b": 1, "ab": 2})";
constexpr char kMerges[] = R"("merges": ["a b"])";

std::string Document(const std::string& model) {
  return std::string("{") + kAdded + ", " + kPre + R"(, "model": {"type": "BPE", )" + model + "}}";
}

const std::string kBaseline = Document(std::string(kVocab) + ", " + kMerges);

std::shared_ptr<const Tokenizer> LoadOrFail(const std::string& json) {
  auto tokenizer = Tokenizer::FromJson(json, "");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status() << "\n" << json;
  return tokenizer.ok() ? *tokenizer : nullptr;
}

std::string ErrorOf(const std::string& json) {
  auto tokenizer = Tokenizer::FromJson(json, "");
  EXPECT_FALSE(tokenizer.ok()) << json;
  if (tokenizer.ok()) return "";
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(tokenizer.status().message());
}

// Everything but the content hash.
void ExpectSameTokenizer(const Tokenizer& expected, const Tokenizer& actual) {
  ASSERT_EQ(actual.vocab_size(), expected.vocab_size());
  EXPECT_EQ(actual.kind(), expected.kind());
  for (TokenId id = 0; id < expected.vocab_size(); ++id) {
    EXPECT_EQ(actual.token_bytes(id), expected.token_bytes(id)) << id;
    EXPECT_EQ(actual.is_special(id), expected.is_special(id)) << id;
  }
  for (const std::string text : {"ab", "aab<|end|>ba", "b a ab"}) {
    EXPECT_EQ(actual.Encode(text), expected.Encode(text)) << text;
  }
}

TEST(JsonLayoutTest, BaselineMergesAB) {
  auto tokenizer = LoadOrFail(kBaseline);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Encode("ab<|end|>ba"), (std::vector<TokenId>{2, 3, 1, 0}));
}

TEST(JsonLayoutTest, MemberOrderEscapesAndMergeFormDoNotMatter) {
  auto baseline = LoadOrFail(kBaseline);
  ASSERT_NE(baseline, nullptr);
  const std::vector<std::string> layouts = {
      // Merges before the vocabulary, the model before everything else.
      R"({"model": {"merges": ["a b"], "type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}}, )" +
          std::string(kPre) + ", " + kAdded + "}",
      // Escaped keys and merges; "a\u0020b" unescapes to "a b".
      Document(R"("v\u006fcab": {"\u0061": 0, "b": 1, "a\u0062": 2}, "merges": ["a\u0020b"])"),
      R"({"mod\u0065l": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, )" +
          std::string(kPre) + ", " + kAdded + "}",
      // The pair form, and whitespace everywhere.
      Document("\n  \"vocab\" :\t{ \"a\" : 0 ,\"b\":1,\"ab\"  :2 }\n ,\"merges\":[ [ \"a\" , \"b\" "
               "] ] "),
      // Later duplicates are ignored, as the DOM's first-match lookup does.
      Document(std::string(kVocab) + ", " + kMerges + R"(, "vocab": 5, "merges": null)"),
      "{" + std::string(kAdded) + ", " + kPre + R"(, "model": {"type": "BPE", )" + kVocab + ", " +
          kMerges + R"(}, "model": {"vocab": {}}})",
  };
  for (const std::string& json : layouts) {
    SCOPED_TRACE(json);
    auto tokenizer = LoadOrFail(json);
    ASSERT_NE(tokenizer, nullptr);
    ExpectSameTokenizer(*baseline, *tokenizer);
  }
}

TEST(JsonLayoutTest, TheFirstOccurrenceOfAMemberDecides) {
  EXPECT_THAT(ErrorOf(Document(R"("vocab": 5, )" + std::string(kVocab) + ", " + kMerges)),
              HasSubstr("model.vocab is missing or not an object"));
  // merges: null first means no merges at all.
  auto unmerged = LoadOrFail(Document(std::string(kVocab) + R"(, "merges": null, )" + kMerges));
  ASSERT_NE(unmerged, nullptr);
  EXPECT_EQ(unmerged->Encode("ab"), (std::vector<TokenId>{0, 1}));
  EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + R"(, "merges": {"a": "b"})")),
              HasSubstr("model.merges is not an array"));
}

TEST(JsonLayoutTest, SyntaxErrorsInsideVocabAndMergesAreMalformedJson) {
  for (const std::string& model : {
           std::string(R"("vocab": {"a": 0, "b": 1, "ab": 2,}, )") + kMerges,
           std::string(R"("vocab": {"a": 0, "b": 1 "ab": 2}, )") + kMerges,
           std::string(R"("vocab": {"a": 0, "b": 1, "ab": 02}, )") + kMerges,
           std::string(R"("vocab": {"a": 0, "b": 1, "ab": 2x}, )") + kMerges,
           std::string(R"("vocab": {"a": 0, "b": 1, "a\q": 2}, )") + kMerges,
           std::string(kVocab) + R"(, "merges": ["a b",])",
           std::string(kVocab) + R"(, "merges": ["a b" "a b"])",
           std::string(kVocab) + R"(, "merges": [["a", "b",]])",
           std::string(kVocab) + R"(, "merges": ["a\x b"])",
           std::string(kVocab) + R"(, "merges": [tru])",
       }) {
    EXPECT_THAT(ErrorOf(Document(model)), HasSubstr("malformed JSON")) << model;
  }
  const std::string cut = kBaseline.substr(0, kBaseline.find("\"a b\"") + 3);
  EXPECT_THAT(ErrorOf(cut), HasSubstr("truncated JSON"));
}

// A syntax error is reported even where an earlier part is wrong in another
// way: the whole-document DOM parse used to find it first.
TEST(JsonLayoutTest, SyntaxErrorsWinOverOtherProblems) {
  // A character outside the byte-level alphabet in the vocabulary...
  const std::string bad_vocab = R"("vocab": {"a": 0, "b": 1, "a\u20ac": 2})";
  EXPECT_THAT(ErrorOf(Document(bad_vocab + ", " + kMerges)), HasSubstr("byte-level alphabet"));
  // ...and a trailing comma in the merges.
  EXPECT_THAT(ErrorOf(Document(bad_vocab + R"(, "merges": ["a b",])")),
              HasSubstr("malformed JSON"));
  // An unknown merge before a syntax error in a later member.
  EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + R"(, "merges": ["a x"])")),
              HasSubstr("unknown token"));
  EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + R"(, "merges": ["a x"], "dropout": nul)")),
              HasSubstr("malformed JSON"));
}

TEST(JsonLayoutTest, IdsThatAreNotNonNegativeIntegers) {
  for (const std::string id : {"-1", "1.0", "1e0", "\"2\"", "null", "[2]", "{}"}) {
    EXPECT_THAT(ErrorOf(Document(R"("vocab": {"a": 0, "b": 1, "ab": )" + id + "}, " + kMerges)),
                AllOf(HasSubstr("model.vocab[\"ab\"]"), HasSubstr("non-negative integer")))
        << id;
  }
  EXPECT_THAT(
      ErrorOf(Document(R"("vocab": {"a": 0, "b": 1, "ab": 16777216}, )" + std::string(kMerges))),
      HasSubstr("out of range"));
}

TEST(JsonLayoutTest, MergeEntriesOfTheWrongShape) {
  for (const std::string entry :
       {R"(["a", "b", "ab"])", R"(["a"])", "[]", R"([1, 2])", "true", "7", R"({"a": "b"})"}) {
    EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + R"(, "merges": [)" + entry + "]")),
                AllOf(HasSubstr("model.merges[0]"), HasSubstr("neither")))
        << entry;
  }
  EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + R"(, "merges": ["a b", "a  b"])")),
              AllOf(HasSubstr("model.merges[1]"), HasSubstr("one space")));
}

// Merges are resolved in batches; the error still names the right entry.
TEST(JsonLayoutTest, MergeErrorsNameTheirRankPastTheFirstBatch) {
  std::string merges = R"("merges": [)";
  for (int i = 0; i < 70; ++i) merges += R"("a b", )";
  merges += R"("b a"])";
  EXPECT_THAT(ErrorOf(Document(std::string(kVocab) + ", " + merges)),
              AllOf(HasSubstr("model.merges[70]"), HasSubstr("\"ba\""), HasSubstr("not in")));
}

}  // namespace
}  // namespace maskd
