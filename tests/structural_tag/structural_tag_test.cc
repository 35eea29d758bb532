// Structural tags (compiler/structural_tag/structural_tag.h).
//
// The oracle test compiles triggered_tags over a small alphabet and checks
// every token of a random vocabulary at every step of random walks against a
// brute-force viability check: a token is allowed iff some string of the
// language (decided by an independent backtracking recognizer written from
// the documented semantics) starts with output + token bytes.
#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/errors/spec_location.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

constexpr std::string_view kAlphabet = "ab<>f";

// triggers ["<"]; tag 1: "<f" regex "ab?" ">"; tag 2: "<<" any_text ">>".
std::string TriggeredSpec(bool at_least_one, bool stop_after_first) {
  return std::string(
             R"({"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<"],)") +
         R"("tags":[{"type":"tag","begin":"<f","content":{"type":"regex","pattern":"ab?"},"end":">"},)" +
         R"({"type":"tag","begin":"<<","content":{"type":"any_text"},"end":">>"}],)" +
         R"("at_least_one":)" + (at_least_one ? "true" : "false") + R"(,"stop_after_first":)" +
         (stop_after_first ? "true" : "false") + "}}";
}

// The language of TriggeredSpec, from its definition: free text up to the
// first "<", then a whole tag, then again; `tags` counts the tags so far.
bool Member(const std::string& s, size_t i, int tags, bool at_least_one, bool stop_after_first) {
  if (stop_after_first && tags == 1) return i == s.size();
  const size_t k = s.find('<', i);
  if (k == std::string::npos) return !(at_least_one && tags == 0);
  // Tag 1: "<f" then "a" or "ab" then ">".
  for (const std::string content : {"a", "ab"}) {
    const std::string whole = "<f" + content + ">";
    if (s.compare(k, whole.size(), whole) == 0 &&
        Member(s, k + whole.size(), tags + 1, at_least_one, stop_after_first)) {
      return true;
    }
  }
  // Tag 2: "<<" then anything up to the first ">>", which ends it.
  if (s.compare(k, 2, "<<") == 0) {
    const size_t end = s.find(">>", k + 2);
    if (end != std::string::npos && Member(s, end + 2, tags + 1, at_least_one, stop_after_first)) {
      return true;
    }
  }
  return false;
}

bool Viable(const std::string& prefix, int depth,
            const std::function<bool(const std::string&)>& in) {
  if (in(prefix)) return true;
  if (depth == 0) return false;
  for (char c : kAlphabet) {
    if (Viable(prefix + c, depth - 1, in)) return true;
  }
  return false;
}

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileTag(
    const std::string& text, std::shared_ptr<const Tokenizer> tokenizer,
    CompileOptions options = {}) {
  GrammarSpec spec;
  spec.kind = SpecKind::kStructuralTag;
  spec.text = text;
  return CompileGrammar(spec, options, std::move(tokenizer));
}

class TriggeredTagsOracleTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};
INSTANTIATE_TEST_SUITE_P(Flags, TriggeredTagsOracleTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST_P(TriggeredTagsOracleTest, MasksMatchBruteForce) {
  const auto [at_least_one, stop_after_first] = GetParam();
  auto in = [&](const std::string& s) { return Member(s, 0, 0, at_least_one, stop_after_first); };
  int checked = 0;
  for (int seed = 0; seed < 6; ++seed) {
    std::mt19937 rng(seed);
    std::set<std::string> vocab;
    for (char c : kAlphabet) vocab.insert(std::string(1, c));
    vocab.insert("<<");
    vocab.insert(">>");
    vocab.insert("<f");
    while (vocab.size() < 40) {
      std::string s;
      const size_t len = 1 + rng() % 4;
      for (size_t i = 0; i < len; ++i) s.push_back(kAlphabet[rng() % kAlphabet.size()]);
      vocab.insert(s);
    }
    auto tokenizer = std::make_shared<SmallVocabTokenizer>(
        std::vector<std::string>(vocab.begin(), vocab.end()), "tags-" + std::to_string(seed));
    auto grammar = CompileTag(TriggeredSpec(at_least_one, stop_after_first), tokenizer);
    ASSERT_TRUE(grammar.ok()) << grammar.status();
    for (int walk = 0; walk < 4; ++walk) {
      auto matcher = Matcher::Create(*grammar);
      const TokenId eos = tokenizer->eos_ids()[0];
      std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
      std::string output;
      for (int step = 0; step < 14; ++step) {
        matcher->FillMask(mask);
        std::vector<TokenId> allowed;
        for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
          const bool expected =
              t == eos ? in(output)
                       : Viable(output + std::string(tokenizer->token_bytes(t)), 4, in);
          ASSERT_EQ(Bit(mask, t), expected)
              << "output '" << output << "' token '" << tokenizer->token_bytes(t) << "'";
          if (expected && t != eos) allowed.push_back(t);
          ++checked;
        }
        if (allowed.empty()) break;
        const TokenId t = allowed[rng() % allowed.size()];
        ASSERT_TRUE(matcher->AcceptToken(t));
        output += tokenizer->token_bytes(t);
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

// triggered_tags anywhere (inside an or, inside a sequence, before a
// literal): sequence[ or[ TriggeredSpec's format, "a" ], "b" ]. The free
// text where the part may end runs up to the first "<" (a tag) or "b" (the
// part ends; before the first tag with at_least_one only "<" counts).
std::string TriggeredInSequenceSpec(bool at_least_one, bool stop_after_first) {
  const std::string tags = TriggeredSpec(at_least_one, stop_after_first);
  // TriggeredSpec's format object: from "{"type":"triggered_tags"" to the
  // second-last brace.
  const std::string format =
      tags.substr(tags.find(R"({"type":"triggered_tags")"),
                  tags.size() - 1 - tags.find(R"({"type":"triggered_tags")"));
  return R"({"format":{"type":"sequence","elements":[{"type":"or","elements":[)" + format +
         R"(,{"type":"const_string","value":"a"}]},{"type":"const_string","value":"b"}]}})";
}

// Where the triggered part (and its "b") may end when it starts at i.
void TriggeredPartEnds(const std::string& s, size_t i, int tags, bool at_least_one,
                       bool stop_after_first, std::set<size_t>& ends) {
  if (stop_after_first && tags == 1) {
    if (s.compare(i, 1, "b") == 0) ends.insert(i + 1);
    return;
  }
  const bool may_end = !(at_least_one && tags == 0);
  const size_t k = s.find('<', i);
  const size_t m = may_end ? s.find('b', i) : std::string::npos;
  if (m != std::string::npos && (k == std::string::npos || m < k)) {
    ends.insert(m + 1);
    return;
  }
  if (k == std::string::npos) return;
  for (const std::string content : {"a", "ab"}) {
    const std::string whole = "<f" + content + ">";
    if (s.compare(k, whole.size(), whole) == 0) {
      TriggeredPartEnds(s, k + whole.size(), tags + 1, at_least_one, stop_after_first, ends);
    }
  }
  if (s.compare(k, 2, "<<") == 0) {
    const size_t end = s.find(">>", k + 2);
    if (end != std::string::npos) {
      TriggeredPartEnds(s, end + 2, tags + 1, at_least_one, stop_after_first, ends);
    }
  }
}

bool InSequence(const std::string& s, bool at_least_one, bool stop_after_first) {
  std::set<size_t> ends;
  TriggeredPartEnds(s, 0, 0, at_least_one, stop_after_first, ends);
  if (s.starts_with("ab")) ends.insert(2);
  return ends.count(s.size()) > 0;
}

class TriggeredTagsInSequenceOracleTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
};
INSTANTIATE_TEST_SUITE_P(Flags, TriggeredTagsInSequenceOracleTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST_P(TriggeredTagsInSequenceOracleTest, MasksMatchBruteForce) {
  const auto [at_least_one, stop_after_first] = GetParam();
  auto in = [&](const std::string& s) { return InSequence(s, at_least_one, stop_after_first); };
  // The shortest completion of a prefix: a tag and "b" (at_least_one).
  const int depth = at_least_one ? 5 : 4;
  int checked = 0;
  size_t longest = 0;
  // Deeper viability checks cost more: fewer vocabularies then.
  for (int seed = 0; seed < (at_least_one ? 1 : 2); ++seed) {
    std::mt19937 rng(100 + seed);
    std::set<std::string> vocab;
    for (char c : kAlphabet) vocab.insert(std::string(1, c));
    for (const char* piece : {"<<", ">>", "<f", "ab", "b<", ">b"}) vocab.insert(piece);
    while (vocab.size() < 40) {
      std::string s;
      const size_t len = 1 + rng() % 4;
      for (size_t i = 0; i < len; ++i) s.push_back(kAlphabet[rng() % kAlphabet.size()]);
      vocab.insert(s);
    }
    auto tokenizer = std::make_shared<SmallVocabTokenizer>(
        std::vector<std::string>(vocab.begin(), vocab.end()), "seq-tags-" + std::to_string(seed));
    auto grammar = CompileTag(TriggeredInSequenceSpec(at_least_one, stop_after_first), tokenizer);
    ASSERT_TRUE(grammar.ok()) << grammar.status();
    for (int walk = 0; walk < 3; ++walk) {
      auto matcher = Matcher::Create(*grammar);
      const TokenId eos = tokenizer->eos_ids()[0];
      std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
      std::string output;
      for (int step = 0; step < 14; ++step) {
        matcher->FillMask(mask);
        std::vector<TokenId> allowed;
        for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
          const bool expected =
              t == eos ? in(output)
                       : Viable(output + std::string(tokenizer->token_bytes(t)), depth, in);
          ASSERT_EQ(Bit(mask, t), expected)
              << "output '" << output << "' token '" << tokenizer->token_bytes(t) << "'";
          if (expected && t != eos) allowed.push_back(t);
          ++checked;
        }
        if (allowed.empty()) break;
        const TokenId t = allowed[rng() % allowed.size()];
        ASSERT_TRUE(matcher->AcceptToken(t));
        output += tokenizer->token_bytes(t);
        longest = std::max(longest, output.size());
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(longest, 8u);
}

std::shared_ptr<SmallVocabTokenizer> ByteTokenizer() {
  std::vector<std::string> vocab;
  for (int b = 32; b < 127; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  vocab.push_back("\n");
  return std::make_shared<SmallVocabTokenizer>(vocab, "bytes");
}

// Whether `text` is a complete output of `spec`.
bool Accepts(const std::string& spec, const std::string& text) {
  auto grammar = CompileTag(spec, ByteTokenizer());
  EXPECT_TRUE(grammar.ok()) << grammar.status();
  if (!grammar.ok()) return false;
  auto matcher = Matcher::Create(*grammar);
  return matcher->AcceptBytes(text) && matcher->CanStop();
}

TEST(StructuralTagTest, SequenceOrConstStringAndJsonSchema) {
  const std::string spec = R"({"format":{"type":"sequence","elements":[
    {"type":"const_string","value":"A:"},
    {"type":"or","elements":[{"type":"const_string","value":"x"},
                             {"type":"json_schema","json_schema":{"type":"integer","maximum":20}}]},
    {"type":"regex","pattern":"!+"}]}})";
  EXPECT_TRUE(Accepts(spec, "A:x!"));
  EXPECT_TRUE(Accepts(spec, "A:17!!"));
  EXPECT_FALSE(Accepts(spec, "A:21!"));
  EXPECT_FALSE(Accepts(spec, "A:x"));
  EXPECT_FALSE(Accepts(spec, "B:x!"));
}

TEST(StructuralTagTest, AnyTextBeforeConstStringEndsAtItsFirstOccurrence) {
  const std::string spec = R"({"format":{"type":"sequence","elements":[
    {"type":"any_text"},{"type":"const_string","value":"END"},{"type":"const_string","value":"!"}]}})";
  EXPECT_TRUE(Accepts(spec, "hello EN world END!"));
  EXPECT_TRUE(Accepts(spec, "END!"));
  EXPECT_FALSE(Accepts(spec, "a END b END!"));
}

TEST(StructuralTagTest, GrammarContentIsXGrammarEbnf) {
  const std::string spec = R"({"format":{"type":"triggered_tags","triggers":["<calc>"],"tags":[
    {"type":"tag","begin":"<calc>","end":"</calc>","content":{"type":"grammar",
     "grammar":"root ::= num ((\"+\" | \"*\") num)*\nnum ::= [0-9]+"}}]}})";
  EXPECT_TRUE(Accepts(spec, "so <calc>1+22*3</calc> is it"));
  EXPECT_FALSE(Accepts(spec, "so <calc>1+</calc>"));
  EXPECT_FALSE(Accepts(spec, "so <calc>1-2</calc>"));
}

TEST(StructuralTagTest, TagsWithSeparator) {
  const std::string tag = R"({"type":"tag","begin":"<t>","content":{"type":"json_schema",
      "json_schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],
      "additionalProperties":false}},"end":"</t>"})";
  auto spec = [&](bool at_least_one, bool stop_after_first) {
    return R"({"format":{"type":"tags_with_separator","separator":",","tags":[)" + tag +
           R"(],"at_least_one":)" + (at_least_one ? "true" : "false") + R"(,"stop_after_first":)" +
           (stop_after_first ? "true" : "false") + "}}";
  };
  EXPECT_TRUE(Accepts(spec(false, false), ""));
  EXPECT_TRUE(Accepts(spec(false, false), R"(<t>{"n":1}</t>,<t>{"n": 2}</t>)"));
  EXPECT_FALSE(Accepts(spec(false, false), R"(<t>{"n":1}</t> <t>{"n":2}</t>)"));
  EXPECT_FALSE(Accepts(spec(true, false), ""));
  EXPECT_TRUE(Accepts(spec(true, true), R"(<t>{"n":1}</t>)"));
  EXPECT_FALSE(Accepts(spec(true, true), R"(<t>{"n":1}</t>,<t>{"n":2}</t>)"));
}

TEST(StructuralTagTest, LegacyStructuresAreTriggeredTagsWithSchemas) {
  const std::string spec = R"({"type":"structural_tag","structures":[
      {"begin":"<function=get_weather>","schema":{"type":"object","properties":{"city":{"type":"string"}},
       "required":["city"],"additionalProperties":false},"end":"</function>"}],
      "triggers":["<function="]})";
  EXPECT_TRUE(Accepts(spec, "Let me check. "));
  EXPECT_TRUE(Accepts(spec, R"(Sure <function=get_weather>{"city":"Paris"}</function> and then)"));
  EXPECT_FALSE(Accepts(spec, R"(<function=get_time>{}</function>)"));
  EXPECT_FALSE(Accepts(spec, R"(<function=get_weather>{"town":"Paris"}</function>)"));
}

struct ErrorCase {
  std::string name;
  std::string spec;
  absl::StatusCode code;
  std::string pointer;
};

class StructuralTagErrorTest : public ::testing::TestWithParam<ErrorCase> {};
INSTANTIATE_TEST_SUITE_P(
    Errors, StructuralTagErrorTest,
    ::testing::Values(
        ErrorCase{"NotJson", "{", absl::StatusCode::kInvalidArgument, ""},
        ErrorCase{"UnknownType", R"({"format":{"type":"nope"}})",
                  absl::StatusCode::kInvalidArgument, "/format/type"},
        ErrorCase{"GrammarSyntax", R"({"format":{"type":"grammar","grammar":"root ::= (\"a\""}})",
                  absl::StatusCode::kInvalidArgument, "/format/grammar"},
        ErrorCase{
            "AnyTextInTheMiddle",
            R"({"format":{"type":"sequence","elements":[{"type":"any_text"},{"type":"regex","pattern":"a"}]}})",
            absl::StatusCode::kUnimplemented, "/format/elements/0"},
        ErrorCase{
            "TriggeredTagsBeforeANonLiteral",
            R"({"format":{"type":"sequence","elements":[{"type":"triggered_tags","triggers":["<"],"tags":[{"type":"tag","begin":"<a>","content":{"type":"const_string","value":"x"},"end":"</a>"}]},{"type":"regex","pattern":"a"}]}})",
            absl::StatusCode::kUnimplemented, "/format/elements/0"},
        ErrorCase{
            "TriggeredTagsBeforeAnEmptyLiteral",
            R"({"format":{"type":"sequence","elements":[{"type":"triggered_tags","triggers":["<"],"tags":[{"type":"tag","begin":"<a>","content":{"type":"const_string","value":"x"},"end":"</a>"}]},{"type":"const_string","value":""}]}})",
            absl::StatusCode::kUnimplemented, "/format/elements/0"},
        ErrorCase{
            "SchemaErrorPointsIntoTheSchema",
            R"({"format":{"type":"tag","begin":"<a>","end":"</a>","content":{"type":"json_schema","json_schema":{"type":"object","properties":{"x":{"type":"string","format":"nonsense"}}}}}})",
            absl::StatusCode::kUnimplemented, "/format/content/json_schema/properties/x"},
        ErrorCase{
            "TagWithoutTrigger",
            R"({"format":{"type":"triggered_tags","triggers":["<"],"tags":[{"type":"tag","begin":"[x","content":{"type":"any_text"},"end":"]"}]}})",
            absl::StatusCode::kInvalidArgument, "/format/tags/0/begin"},
        ErrorCase{
            "LegacySchemaError",
            R"({"structures":[{"begin":"<a>","schema":{"type":"string","format":"nonsense"},"end":"</a>"}],"triggers":["<a>"]})",
            absl::StatusCode::kUnimplemented, "/structures/0/schema"}),
    [](const auto& info) { return info.param.name; });

TEST_P(StructuralTagErrorTest, NamesTheOffendingPart) {
  const ErrorCase& c = GetParam();
  auto grammar = CompileTag(c.spec, ByteTokenizer());
  ASSERT_FALSE(grammar.ok());
  EXPECT_EQ(grammar.status().code(), c.code) << grammar.status();
  EXPECT_EQ(JsonPointerOf(grammar.status()).value_or(""), c.pointer) << grammar.status();
}

}  // namespace
}  // namespace maskd
