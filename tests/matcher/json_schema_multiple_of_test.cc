// multipleOf on decimals (2.5, 0.25), on numbers, with one-sided bounds and
// several divisors, and integers' exponent spellings (`2e+16`), any divisor
// (3, 7, 1.5, 13.5, 0.3: the remainder machine) and its complement (`not`,
// overlapping oneOf), through the whole engine: every spelling of a grid of
// values must be accepted iff the reference validator accepts its value;
// divisors past the machine's limits are refused naming multipleOf and the
// pointer.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/json_schema/reference_validator.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<testing::SmallVocabTokenizer> ByteVocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "multiple-of-bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, CompileOptions(), ByteVocab());
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

// Multiples of 0.05 in [-12, 12] in fixed notation (with and without a
// trailing zero, integers also bare) and exponent spellings json.dumps
// writes (past 1e16, below 1e-4) that a double holds exactly (the reference validator reads numbers
// as doubles; numeric_regex_test checks the others with exact decimals).
std::vector<std::string> Spellings() {
  std::vector<std::string> out;
  for (int i = -240; i <= 240; ++i) {
    const std::string sign = i < 0 ? "-" : "";
    const int a = i < 0 ? -i : i;
    const std::string v = absl::StrCat(sign, a / 20, ".", absl::Dec((a % 20) * 5, absl::kZeroPad2));
    out.push_back(v);
    out.push_back(v + "0");
    if (a % 20 == 0) out.push_back(absl::StrCat(sign, a / 20));
  }
  for (const char* e : {"1e+16", "2e+16", "2.5e+16", "1.5e+16", "1.25e+17", "-4e+16",
                        "1.0000000000000002e+16", "3e+16", "9e+16", "1.35e+17", "7e+16", "1.1e+17",
                        "1.5e-05", "3e-05", "-0.0", "-2.1e+16", "4.5", "13.5", "40.5"}) {
    out.push_back(e);
  }
  return out;
}

void ExpectAgreement(const std::string& schema) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << schema << ": " << reference.status();
  auto g = Compile(schema);
  ASSERT_TRUE(g.ok()) << schema << ": " << g.status();
  int accepted = 0, refused = 0;
  for (const std::string& s : Spellings()) {
    absl::StatusOr<json_schema::JsonValue> v = json_schema::ParseJsonValue(s);
    ASSERT_TRUE(v.ok()) << s;
    const bool expected = json_schema::ReferenceValidate(*reference, reference->root, *v);
    ASSERT_EQ(Accepts(*g, s), expected) << schema << "\n  " << s;
    (expected ? accepted : refused)++;
  }
  EXPECT_GT(accepted, 0) << schema;
  EXPECT_GT(refused, 0) << schema;
}

TEST(JsonSchemaMultipleOfTest, DecimalDivisors) {
  ExpectAgreement(R"({"type": "number", "multipleOf": 2.5})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 0.25, "minimum": -1, "maximum": 10})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 0.2, "exclusiveMinimum": 0})");
  ExpectAgreement(R"({"multipleOf": 12.5})");
  ExpectAgreement(R"({"type": "number", "allOf": [{"multipleOf": 2.5}, {"multipleOf": 2}]})");
  ExpectAgreement(R"({"type": "number", "not": {"type": "integer"}, "multipleOf": 0.5})");
}

// 2e+16 is an integer and a multiple of 2 (was refused by the grammar);
// one-sided bounds with multipleOf compile (were refused).
TEST(JsonSchemaMultipleOfTest, IntegersInEverySpelling) {
  ExpectAgreement(R"({"type": "integer", "multipleOf": 2})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 5, "minimum": 0})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 2.5, "maximum": 1e17})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 4, "minimum": -8, "maximum": 8})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 1})");
  auto g = Compile(R"({"type": "integer", "multipleOf": 2})");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(Accepts(*g, "2e+16"));
  EXPECT_FALSE(Accepts(*g, "1.0000000000000001e+16"));
}

// Divisors that divide no power of ten (were refused), with bounds, several
// divisors, and complements.
TEST(JsonSchemaMultipleOfTest, AnyDivisor) {
  ExpectAgreement(R"({"type": "integer", "multipleOf": 3})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 7, "minimum": -5})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 1.5})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 13.5, "maximum": 100})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 0.3})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 11, "exclusiveMinimum": 0})");
  ExpectAgreement(R"({"type": "number", "allOf": [{"multipleOf": 3}, {"multipleOf": 0.5}]})");
  ExpectAgreement(R"({"type": "integer", "multipleOf": 3, "minimum": 0, "maximum": 1e17})");
}

TEST(JsonSchemaMultipleOfTest, Complements) {
  ExpectAgreement(R"({"type": "number", "not": {"multipleOf": 3}})");
  ExpectAgreement(R"({"type": "integer", "not": {"multipleOf": 2}})");
  ExpectAgreement(R"({"type": "number", "not": {"multipleOf": 0.25}})");
  ExpectAgreement(R"({"type": "number", "not": {"multipleOf": 1.5, "minimum": 0}})");
  ExpectAgreement(R"({"type": "number", "oneOf": [{"multipleOf": 3}, {"multipleOf": 5}]})");
  ExpectAgreement(R"({"type": "integer", "oneOf": [{"multipleOf": 2}, {"maximum": 3}]})");
  ExpectAgreement(R"({"type": "number", "multipleOf": 0.5, "not": {"multipleOf": 1.5}})");
  ExpectAgreement(R"({"not": {"not": {"multipleOf": 7}}, "type": "number"})");
}

TEST(JsonSchemaMultipleOfTest, DivisorsPastTheLimitsAreRefusedByName) {
  for (const char* schema : {R"({"properties": {"p": {"type": "number", "multipleOf": 100003}}})",
                             R"({"properties": {"p": {"type": "number", "multipleOf": 3e-21}}})",
                             R"({"properties": {"p": {"not": {"multipleOf": 1e-21}}}})"}) {
    auto g = Compile(schema);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("multipleOf")) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("/properties/p")) << schema;
  }
}

}  // namespace
}  // namespace maskd
