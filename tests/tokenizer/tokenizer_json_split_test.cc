// SplitTokenizerJson: which members it cuts out of tokenizer.json, and that
// anything unexpected leaves the document whole for the DOM parse.
#include "compiler/tokenizer/tokenizer_json_split.h"

#include <string>

#include "compiler/tokenizer/padded_json.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace maskd::tokenizer_internal {
namespace {

struct Split {
  std::string skeleton, vocab, merges;
};

Split SplitOf(const std::string& json) {
  simdjson::ondemand::parser parser;
  const PaddedJson padded = PaddedJson::Copy(json);
  const TokenizerJsonParts parts = SplitTokenizerJson(parser, padded);
  return {parts.skeleton, std::string(parts.vocab), std::string(parts.merges)};
}

TEST(TokenizerJsonSplitTest, CutsVocabAndMergesOutOfTheModel) {
  const Split split =
      SplitOf(R"({"added_tokens": [], "model": {"type": "BPE", "vocab": {"a": 0, "b": 1} ,)"
              R"( "merges": ["a b"]  }, "z": [1]})");
  EXPECT_EQ(
      split.skeleton,
      R"({"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}, "z": [1]})");
  EXPECT_EQ(split.vocab, R"({"a": 0, "b": 1} )");
  EXPECT_EQ(split.merges, R"(["a b"]  )");
}

TEST(TokenizerJsonSplitTest, AnyMemberOrder) {
  const Split split =
      SplitOf(R"({"model": {"merges": [["a", "b"]], "vocab": {"a": 0, "b": 1}}, "version": "1"})");
  EXPECT_EQ(split.skeleton, R"({"model": {"merges": [], "vocab": {}}, "version": "1"})");
  EXPECT_EQ(split.vocab, R"({"a": 0, "b": 1})");
  EXPECT_EQ(split.merges, R"([["a", "b"]])");
}

TEST(TokenizerJsonSplitTest, KeysAreComparedUnescaped) {
  const Split split = SplitOf(R"({"mod\u0065l": {"voc\u0061b": {"a": 0}}})");
  EXPECT_EQ(split.skeleton, R"({"mod\u0065l": {"voc\u0061b": {}}})");
  EXPECT_EQ(split.vocab, R"({"a": 0})");
  EXPECT_EQ(split.merges, "");
}

// The DOM looks members up by their first occurrence; so does the split, and
// a later duplicate stays in the skeleton as written.
TEST(TokenizerJsonSplitTest, OnlyFirstOccurrencesAreCut) {
  const Split split =
      SplitOf(R"({"model": {"vocab": {"a": 0}, "vocab": {"b": 1}, "merges": null, "merges": []},)"
              R"( "model": {"vocab": {"c": 2}}})");
  EXPECT_EQ(split.skeleton,
            R"({"model": {"vocab": {}, "vocab": {"b": 1}, "merges": null, "merges": []},)"
            R"( "model": {"vocab": {"c": 2}}})");
  EXPECT_EQ(split.vocab, R"({"a": 0})");
  EXPECT_EQ(split.merges, "");  // The first "merges" is not an array.
}

TEST(TokenizerJsonSplitTest, MembersOfTheWrongTypeStayForTheDomToRefuse) {
  const Split split = SplitOf(R"({"model": {"vocab": ["a"], "merges": {"a": "b"}}})");
  EXPECT_EQ(split.skeleton, R"({"model": {"vocab": ["a"], "merges": {"a": "b"}}})");
  EXPECT_EQ(split.vocab, "");
  EXPECT_EQ(split.merges, "");
}

TEST(TokenizerJsonSplitTest, DocumentsOnDemandCannotWalkComeBackWhole) {
  for (const std::string json : {
           R"([1, 2])",
           R"({"model": 5})",
           R"({"model": {"vocab": {"a": 0}, "merges": [)",    // Truncated.
           R"({"model": {"vocab": {"a": 0} "merges": []}})",  // No comma.
           R"({"model": {"vocab": {"a": 0}, "merges": []})",  // Unclosed top level.
           R"({"model" {"vocab": {"a": 0}}})",
           R"()",
       }) {
    const Split split = SplitOf(json);
    EXPECT_EQ(split.skeleton, json);
    EXPECT_EQ(split.vocab, "") << json;
    EXPECT_EQ(split.merges, "") << json;
  }
}

TEST(TokenizerJsonSplitTest, NoModelMeansNothingToCut) {
  const std::string json = R"({"version": "1.0", "added_tokens": []})";
  const Split split = SplitOf(json);
  EXPECT_EQ(split.skeleton, json);
  EXPECT_EQ(split.vocab, "");
}

}  // namespace
}  // namespace maskd::tokenizer_internal
