// Schema numbers simdjson's DOM cannot hold exactly (integers below -2^63 or
// from 2^64 on, fractions with more digits than a double, values past a
// double's range) are read exactly (compiler/json_schema/exact_numbers.h):
// bounds, multipleOf and const/enum compare with the number as written.
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bignum-bytes");
  return tok;
}

std::shared_ptr<const CompiledGrammar> Compile(const std::string& schema) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  auto g = CompileGrammar(spec, CompileOptions(), Vocab());
  EXPECT_TRUE(g.ok()) << schema << ": " << g.status();
  return g.ok() ? *g : nullptr;
}

// Every byte checked against its mask, EOS against CanStop.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  if (g == nullptr) return false;
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((g->tokenizer().vocab_size() + 31) / 32);
  for (unsigned char c : doc) {
    m->FillMask(mask);
    const bool allowed = (mask[c / 32] >> (c % 32)) & 1;
    EXPECT_EQ(allowed, m->AcceptToken(c)) << doc;
    if (!allowed) return false;
  }
  return m->CanStop();
}

TEST(JsonSchemaExactNumbersTest, IntegerBoundsBeyondSixtyFourBits) {
  auto below = Compile(R"({"minimum": -18446744073709551615})");
  EXPECT_TRUE(Accepts(below, "-18446744073709551600"));
  EXPECT_TRUE(Accepts(below, "-18446744073709551615"));
  EXPECT_FALSE(Accepts(below, "-18446744073709551616"));
  EXPECT_FALSE(Accepts(below, "-100000000000000000000000"));
  auto above = Compile(R"({"type": "integer", "exclusiveMaximum": 18446744073709551616})");
  EXPECT_TRUE(Accepts(above, "18446744073709551615"));
  EXPECT_FALSE(Accepts(above, "18446744073709551616"));
  EXPECT_FALSE(Accepts(above, "1e30"));
}

TEST(JsonSchemaExactNumbersTest, FractionBoundWithMoreDigitsThanADouble) {
  // A double reads the bound as 0.1, which would let 0.10000000000000000000005 through.
  auto g = Compile(R"({"exclusiveMinimum": 0.1000000000000000000001})");
  EXPECT_FALSE(Accepts(g, "0.1"));
  EXPECT_FALSE(Accepts(g, "0.10000000000000000000005"));
  EXPECT_FALSE(Accepts(g, "0.1000000000000000000001"));
  EXPECT_TRUE(Accepts(g, "0.1000000000000000000002"));
  EXPECT_TRUE(Accepts(g, "1"));
}

TEST(JsonSchemaExactNumbersTest, ConstEnumAndMultipleOf) {
  auto c = Compile(R"({"const": 123456789012345678901234567890})");
  EXPECT_TRUE(Accepts(c, "123456789012345678901234567890"));
  EXPECT_FALSE(Accepts(c, "123456789012345678901234567891"));
  EXPECT_FALSE(Accepts(c, "123456789012345678901234567000"));
  auto e = Compile(R"({"enum": [1e400, -99999999999999999999]})");
  EXPECT_TRUE(Accepts(e, "-99999999999999999999"));
  EXPECT_FALSE(Accepts(e, "-99999999999999999998"));
  EXPECT_FALSE(Accepts(e, "1e399"));
  auto m = Compile(R"({"type": "integer", "minimum": 100000000000000000000000,
      "multipleOf": 7})");
  EXPECT_TRUE(Accepts(m, "100000000000000000000002"));  // the least multiple of 7 >= 1e23
  EXPECT_FALSE(Accepts(m, "100000000000000000000001"));
  EXPECT_FALSE(Accepts(m, "99999999999999999999995"));  // a multiple of 7 below the bound
  EXPECT_FALSE(Accepts(m, "7"));
  // A divisor this large is past the multipleOf automaton's modulus: refused
  // by name (before, the schema was "not valid JSON").
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type": "integer", "multipleOf": 100000000000000000000000})";
  auto big = CompileGrammar(spec, CompileOptions(), Vocab());
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(big.status().message(), ::testing::HasSubstr("multipleOf 1e23"));
}

TEST(JsonSchemaExactNumbersTest, HugeCountIsUnboundedAndStringsStayStrings) {
  auto g = Compile(R"({"type": "string", "maxLength": 100000000000000000000000})");
  EXPECT_TRUE(Accepts(g, R"("abc")"));
  // A string spelling what a replaced literal looks like (without the
  // per-process nonce) is still a string.
  auto s = Compile(R"({"const": "\u0000maskd-number-0"})");
  EXPECT_TRUE(Accepts(s, R"("\u0000maskd-number-0")"));
  EXPECT_FALSE(Accepts(s, "0"));
}

}  // namespace
}  // namespace maskd
