// Regression tests for the exactness bugs of issue 12, section 1, through the
// whole engine (schema -> grammar -> byte-level matcher). Each failed before
// its fix:
//  * decisions about `pattern` on concrete values (enum filtering, oneOf
//    disjointness) used RE2, whose \s is ASCII-only, while the masks use
//    ECMA-262, whose \s includes U+00A0;
//  * a branch whose negated enum/const excluded every null or boolean value
//    left a nonterminal without rules ("undefined nonterminals"), reported
//    as a schema error; such lowering bugs are now Internal;
//  * integer-valued floats (`1.0`, `1e+16`) were outside "type": "integer";
//  * const/enum objects admitted only the schema's member order.
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

std::shared_ptr<testing::SmallVocabTokenizer> ByteVocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, CompileOptions(), ByteVocab());
}

// Token by token (one byte each), checking that every byte accepted was in
// the mask and that EOS is in the last mask exactly when the matcher can stop.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((g->tokenizer().vocab_size() + 31) / 32);
  for (unsigned char c : doc) {
    m->FillMask(mask);
    const bool in_mask = (mask[c / 32] >> (c % 32)) & 1;
    const bool accepted = m->AcceptToken(c);
    EXPECT_EQ(in_mask, accepted) << doc;
    if (!accepted) return false;
  }
  m->FillMask(mask);
  const TokenId eos = g->tokenizer().eos_ids()[0];
  EXPECT_EQ(((mask[eos / 32] >> (eos % 32)) & 1) != 0, m->CanStop()) << doc;
  return m->CanStop();
}

struct Case {
  std::string schema;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

void ExpectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    auto g = Compile(c.schema);
    ASSERT_TRUE(g.ok()) << c.schema << ": " << g.status();
    for (const std::string& doc : c.accepted)
      EXPECT_TRUE(Accepts(*g, doc)) << c.schema << " " << doc;
    for (const std::string& doc : c.rejected)
      EXPECT_FALSE(Accepts(*g, doc)) << c.schema << " " << doc;
  }
}

const std::string kNbsp = "\xc2\xa0";         // U+00A0: an ECMA-262 \s, not an RE2 one.
const std::string kEmSpace = "\xe2\x80\x83";  // U+2003

TEST(JsonSchemaExactnessTest, OneOfDecidesPatternsWithEcmaSemantics) {
  // "\u00a0" matches both branches, so oneOf rejects it; " " and U+2003
  // match the pattern only.
  ExpectCases({{R"({"oneOf":[{"enum":["\u00a0"]},{"type":"string","pattern":"^\\s$"}]})",
                {R"(" ")", "\"" + kEmSpace + "\""},
                {"\"" + kNbsp + "\"", R"("a")", R"("")"}}});
}

TEST(JsonSchemaExactnessTest, EnumFilteredByPatternWithEcmaSemantics) {
  // Was refused as matching nothing: RE2 dropped the only enum value.
  ExpectCases({{R"({"type":"string","pattern":"^\\s$","enum":["\u00a0","a"]})",
                {"\"" + kNbsp + "\""},
                {R"("a")", R"(" ")"}},
               {R"({"enum":["\u0660","1"],"pattern":"^\\d$"})", {R"("1")"}, {"\"\xd9\xa0\""}},
               {R"({"enum":["é","e"],"pattern":"^\\w$"})", {R"("e")"}, {"\"\xc3\xa9\""}}});
}

TEST(JsonSchemaExactnessTest, EnumWithAPatternTheEngineCannotEvaluateIsRefused) {
  // Keeping or dropping the value on a guess would be inexact.
  auto g = Compile(R"json({"enum":["ab","b"],"pattern":"^(?=a)"})json");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("^(?=a)"));
}

TEST(JsonSchemaExactnessTest, BranchesExcludingEveryNullOrBooleanCompile) {
  ExpectCases({
      {R"({"type":"object","properties":{"a":{"type":"null","not":{"const":null}}}})",
       {"{}"},
       {R"({"a": null})"}},
      {R"({"type":["boolean","string"],"not":{"enum":[true,false]}})", {R"("x")"}, {"true"}},
      {R"({"type":"array","items":{"anyOf":[{"type":"null","not":{"const":null}},
                                             {"type":"string"}]}})",
       {R"(["a"])", "[]"},
       {"[null]"}},
      // The real-world shape: a definition with rules for both values of a
      // boolean switch, referenced from array items and from anyOf.
      {R"({"definitions":{"d":{"type":"object",
            "properties":{"enabled":{"type":"boolean"},"size":{}},
            "allOf":[{"if":{"properties":{"enabled":{"const":true}},"required":["enabled"]},
                      "then":{"properties":{"size":{"type":"integer"}}}},
                     {"if":{"properties":{"enabled":{"const":false}},"required":["enabled"]},
                      "then":{"properties":{"size":{"type":"string"}}}}]}},
          "type":"object",
          "properties":{"list":{"type":"array","items":{"$ref":"#/definitions/d"}},
                        "one":{"anyOf":[{"$ref":"#/definitions/d"},{"type":"null"}]}}})",
       {R"({"list": [{"enabled": true, "size": 1}, {"enabled": false, "size": "x"}]})",
        R"({"one": {"size": null}})", R"({"one": null})"},
       {R"({"list": [{"enabled": true, "size": "x"}]})",
        R"({"one": {"enabled": false, "size": 1}})"}},
  });
}

TEST(JsonSchemaExactnessTest, IntegerValuedFloatsAreIntegers) {
  ExpectCases({
      // Exponent spellings from 1e16 on, where json.dumps switches to them.
      {R"({"type":"integer"})",
       {"1", "1.0", "-0.0", "10.00", "1e+16", "1.5e+16", "-2.5e+20", "1.2345678901234567e+16"},
       {"1.5", "1e-05", "1.25e+1", "1.", ".0", "01.0", "1e1", "1.23456789012345678e+16"}},
      {R"({"type":"integer","minimum":0,"maximum":10})",
       {"10.0", "0.0", "-0.0", "10"},
       {"11.0", "-1.0", "1e+16", "1e1"}},
      {R"({"type":"integer","minimum":0})", {"1e+16", "7.0"}, {"-1e+16", "-1.0"}},
      {R"({"type":"integer","maximum":-2e16})",
       {"-2e+16", "-3.5e+16", "-20000000000000000.0"},
       {"-1e+16", "-1.5e+16", "1e+16"}},
      {R"({"type":"integer","multipleOf":3,"minimum":-30,"maximum":30})",
       {"6", "6.0", "-3.00"},
       {"4.0", "6.5", "33.0"}},
      {R"({"type":"integer","exclusiveMinimum":1e+16})", {"1.0000000000000002e+16"}, {"1e+16"}},
      {R"({"type":"object","properties":{"n":{"type":"integer"}}})",
       {R"({"n": 2.0})"},
       {R"({"n": 2.5})"}},
  });
}

TEST(JsonSchemaExactnessTest, ConstAndEnumObjectsInAnyMemberOrder) {
  ExpectCases({
      {R"({"const":{"a":2,"b":1}})",
       {R"({"a": 2, "b": 1})", R"({"b": 1, "a": 2})", R"({"b":1,"a":2.0})"},
       {R"({"a": 2})", R"({"b": 1, "a": 2, "b": 1})", R"({"a": 2, "b": 1, "c": 0})", "{}"}},
      {R"({"enum":[{"x":{"p":[1,{"q":true,"r":null}],"s":"t"},"y":0},{}]})",
       {R"({"y": 0, "x": {"s": "t", "p": [1, {"r": null, "q": true}]}})", "{}"},
       {R"({"y": 0, "x": {"s": "t", "p": [{"r": null, "q": true}, 1]}})"}},
      {R"({"type":"array","items":{"const":{"k":"v","n":1,"m":[]}}})",
       {R"([{"m": [], "k": "v", "n": 1}, {"n": 1, "m": [], "k": "v"}])"},
       {R"([{"m": [], "k": "v"}])"}},
  });
}

TEST(JsonSchemaExactnessTest, LargeConstObjectsAreRefusedByName) {
  std::string members;
  for (int i = 0; i < 13; ++i) members += (i ? "," : "") + ("\"k" + std::to_string(i) + "\":1");
  auto g = Compile(R"({"properties":{"a":{"const":{)" + members + "}}}}");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("13 members"));
  EXPECT_THAT(g.status().message(), HasSubstr("/properties/a"));
}

// Draft 7: "$ref prevents a sibling $id from changing the base uri"
// (JSON-Schema-Test-Suite, draft7/ref.json): accepted "a" before the fix.
TEST(JsonSchemaExactnessTest, Draft7RefIgnoresSiblingId) {
  ExpectCases({{R"({"$schema":"http://json-schema.org/draft-07/schema#",
                   "$id":"http://localhost:1234/sibling_id/base/",
                   "definitions":{
                     "foo":{"$id":"http://localhost:1234/sibling_id/foo.json","type":"string"},
                     "base_foo":{"$id":"foo.json","type":"number"}},
                   "allOf":[{"$id":"http://localhost:1234/sibling_id/","$ref":"foo.json"}]})",
                {"1", "2.5"},
                {R"("a")"}},
               // From 2019-09 on the sibling $id is the base.
               {R"({"$schema":"https://json-schema.org/draft/2019-09/schema",
                   "$id":"http://localhost:1234/sibling_id/base/",
                   "$defs":{
                     "foo":{"$id":"http://localhost:1234/sibling_id/foo.json","type":"string"},
                     "base_foo":{"$id":"foo.json","type":"number"}},
                   "allOf":[{"$id":"http://localhost:1234/sibling_id/","$ref":"foo.json"}]})",
                {R"("a")"},
                {"1"}}});
}

// Array-form `items` per dialect: a tuple (with additionalItems) through
// 2019-09 and without a `$schema`; invalid where 2020-12 is declared.
TEST(JsonSchemaExactnessTest, ArrayFormItemsPerDialect) {
  for (const char* dialect : {"http://json-schema.org/draft-07/schema#",
                              "https://json-schema.org/draft/2019-09/schema", ""}) {
    const std::string declared =
        *dialect ? std::string(R"("$schema":")") + dialect + "\"," : std::string();
    ExpectCases({{"{" + declared + R"("items":[{"type":"string"}],"additionalItems":false})",
                  {R"(["a"])", "[]"},
                  {R"(["a", 1])", "[1]"}}});
  }
  auto g = Compile(R"({"$schema":"https://json-schema.org/draft/2020-12/schema",
                       "properties":{"t":{"items":[{"type":"string"}]}}})");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("\"items\""));
  EXPECT_THAT(g.status().message(), HasSubstr("/properties/t/items"));
}

// Draft 4 names resources with `id` only: a `$id` there moves no base URI
// (accepted {"p":{"q":1}} before the fix, resolving the ref in other.json).
TEST(JsonSchemaExactnessTest, Draft4DollarIdNamesNothing) {
  const std::string body = R"("definitions":{"b":{"type":"string"},
      "a":{"$id":"http://example.com/other.json","definitions":{"b":{"type":"integer"}},
           "properties":{"q":{"$ref":"#/definitions/b"}}}},
      "properties":{"p":{"$ref":"#/definitions/a"}}})";
  ExpectCases({{R"({"$schema":"http://json-schema.org/draft-04/schema#",)" + body,
                {R"({"p":{"q":"s"}})"},
                {R"({"p":{"q":1}})"}},
               {R"({"$schema":"http://json-schema.org/draft-07/schema#",)" + body,
                {R"({"p":{"q":1}})"},
                {R"({"p":{"q":"s"}})"}}});
}

// unevaluatedItems / unevaluatedProperties are resolved from what the
// schema's parts evaluate (dialect_cases.jsonl and a generated family check
// them against oracles); a conditional inside a conditional branch adds its
// options to the branch's (branch s2020), and more than 64 combinations are
// refused by name.
TEST(JsonSchemaExactnessTest, UnevaluatedBesideConditionalApplicators) {
  ExpectCases({{R"({"properties": {"l": {"anyOf": [{"oneOf": [{"prefixItems": [true]}]}, true],
                    "unevaluatedItems": false}}})",
                {R"({"l": []})", R"({"l": [1]})", R"({"l": [{"a": 2}]})", "{}"},
                {R"({"l": [1, 2]})", R"({"l": [[], []]})"}}});
  // 15 non-empty subsets of four branches times 7 of three.
  auto p = Compile(R"({"allOf": [
      {"anyOf": [{"properties": {"a": true}}, {"properties": {"b": true}},
                 {"properties": {"c": true}}, {"properties": {"d": true}}]},
      {"anyOf": [{"properties": {"e": true}}, {"properties": {"f": true}},
                 {"properties": {"g": true}}]}],
      "unevaluatedProperties": false})");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(p.status().message(), HasSubstr("more than 64 combinations"));
  ExpectCases({{R"({"prefixItems": [{"type": "string"}], "unevaluatedItems": {"type": "integer"}})",
                {R"(["a", 1, 2])", "[]"},
                {R"(["a", "b"])", "[1]"}},
               {R"({"properties": {"l": {"allOf": [{"prefixItems": [{"type": "string"}]}],
                    "unevaluatedItems": false}}})",
                {R"({"l": ["a"]})", R"({"l": []})"},
                {R"({"l": ["a", 1]})", R"({"l": [1]})"}},
               // `not` evaluates nothing; the anyOf branch evaluates nothing either.
               {R"({"properties": {"a": true},
                    "not": {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                    "anyOf": [{"required": ["a"]}, {"minProperties": 2}],
                    "unevaluatedProperties": {"type": "integer"}})",
                {R"({"a": "s"})", R"({"a": "s", "c": 1})", R"({"a": 0, "b": 1})"},
                {R"({"a": "s", "c": "t"})", R"({"a": 0, "b": []})", R"({"b": "s", "c": 1})"}},
               // What anyOf branches and if/then/else evaluate counts where they hold.
               {R"({"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                              {"properties": {"b": true}, "required": ["b"]}],
                    "if": {"properties": {"k": {"const": 1}}, "required": ["k"]},
                    "then": {"properties": {"t": true}}, "else": {"properties": {"e": true}},
                    "unevaluatedProperties": false})",
                {R"({"a": 1, "k": 1, "t": 0})", R"({"b": 1, "e": 0})", R"({"a": 1, "b": 2})"},
                {R"({"a": "x", "k": 1})", R"({"a": 1, "k": 2, "t": 0})",
                 R"({"b": 1, "k": 1, "e": 0})", R"({"a": "x", "b": 1})", R"({"a": 1, "z": 0})"}}});
}

}  // namespace
}  // namespace maskd
