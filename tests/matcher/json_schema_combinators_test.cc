// Exactness of the rewritten combinators (not, if/then/else, oneOf,
// dependentRequired, anyOf beside other constraints) through the whole
// engine: for every value of a fixed universe of small JSON values, the
// compiled grammar must accept the value (in some order of its object keys:
// the grammar fixes one) iff the reference validator, run on the schema with
// its combinators AS WRITTEN (no rewriting), says it is valid.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/json_schema/reference_validator.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using json_schema::JsonValue;

std::shared_ptr<testing::SmallVocabTokenizer> ByteVocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
  return tok;
}

JsonValue Parse(const std::string& text) {
  absl::StatusOr<JsonValue> v = json_schema::ParseJsonValue(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : JsonValue();
}

// Scalars, short arrays of them and flat objects over keys a, b, c.
std::vector<JsonValue> Universe() {
  std::vector<std::string> scalars = {"null",  "true",   "false",   "0",       "1",     "-1",
                                      "2",     "2.5",    "-0.5",    "10",      "\"\"",  "\"a\"",
                                      "\"b\"", "\"ab\"", "\"abc\"", "\"foo\"", "\"x1\""};
  std::vector<JsonValue> out;
  for (const std::string& s : scalars) out.push_back(Parse(s));
  for (const char* a : {"[]", "[1]", "[1, 2]", "[1, 1]", "[\"a\", \"b\"]", "[\"a\", \"a\"]",
                        "[true, false]", "[true, true]", "[1, \"a\"]", "[[1, 2]]", "[2.5]"}) {
    out.push_back(Parse(a));
  }
  const std::vector<std::string> keys = {"a", "b", "c"};
  const std::vector<std::string> values = {"1", "\"x\"", "null", "true"};
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<std::string> chosen;
    for (int k = 0; k < 3; ++k) {
      if (mask & (1 << k)) chosen.push_back(keys[k]);
    }
    // Every assignment of values to the chosen keys.
    size_t combos = 1;
    for (size_t i = 0; i < chosen.size(); ++i) combos *= values.size();
    for (size_t c = 0; c < combos; ++c) {
      std::string text = "{";
      size_t rest = c;
      for (size_t i = 0; i < chosen.size(); ++i) {
        if (i > 0) text += ", ";
        text += "\"" + chosen[i] + "\": " + values[rest % values.size()];
        rest /= values.size();
      }
      out.push_back(Parse(text + "}"));
    }
  }
  return out;
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

// Whether the grammar accepts the value with its object keys in some order.
bool AcceptsSomeOrder(const std::shared_ptr<const CompiledGrammar>& g, const JsonValue& v) {
  if (v.kind() != JsonValue::Kind::kObject) return Accepts(g, v.ToJson());
  std::vector<std::pair<std::string, JsonValue>> members = v.members();
  std::sort(members.begin(), members.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  do {
    if (Accepts(g, JsonValue::Object(members).ToJson())) return true;
  } while (std::next_permutation(members.begin(), members.end(),
                                 [](const auto& x, const auto& y) { return x.first < y.first; }));
  return false;
}

void ExpectExact(const std::string& schema_text) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema_text, as_written);
  ASSERT_TRUE(reference.ok()) << schema_text << ": " << reference.status();
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema_text;
  CompileOptions options;
  options.strict = false;
  auto g = CompileGrammar(spec, options, ByteVocab());
  ASSERT_TRUE(g.ok()) << schema_text << ": " << g.status();
  int valid = 0, invalid = 0;
  for (const JsonValue& v : Universe()) {
    const bool expected = json_schema::ReferenceValidate(*reference, reference->root, v);
    (expected ? valid : invalid)++;
    EXPECT_EQ(AcceptsSomeOrder(*g, v), expected) << schema_text << "\n  value " << v.ToJson();
  }
  // Each schema must split the universe, or the comparison proves little.
  EXPECT_GT(valid, 0) << schema_text;
  EXPECT_GT(invalid, 0) << schema_text;
}

TEST(JsonSchemaCombinatorsTest, Not) {
  ExpectExact(R"({"not": {"type": "string"}})");
  ExpectExact(R"({"not": {"type": ["array", "object", "null"]}})");
  ExpectExact(R"({"type": "string", "not": {"enum": ["a", "ab"]}})");
  ExpectExact(R"({"type": "integer", "not": {"const": 1}})");
  ExpectExact(R"({"not": {"enum": [1, "a", null, true, [1, 2], {"a": 1}]}})");
  ExpectExact(R"({"type": "object", "properties": {"a": {}, "b": {}},
                  "not": {"required": ["a", "b"]}})");
  ExpectExact(R"({"not": {"allOf": [{"required": ["a"]}, {"required": ["c"]}]}})");
  ExpectExact(R"({"type": "string", "not": {"pattern": "^a"}})");
  ExpectExact(R"({"not": {"minLength": 2}})");
  ExpectExact(R"({"not": {"maximum": 1}})");
  ExpectExact(R"({"not": {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}})");
  ExpectExact(R"({"not": {"items": false}})");
  ExpectExact(R"({"not": {"prefixItems": [{"type": "integer"}]}})");
  ExpectExact(R"({"not": {"maxItems": 1}})");
  ExpectExact(R"({"not": {"minProperties": 2}})");
  ExpectExact(R"({"not": {"not": {"type": "boolean"}}})");
  ExpectExact(R"({"not": {"anyOf": [{"type": "string"}, {"required": ["a"]}]}})");
  ExpectExact(R"({"not": {"oneOf": [{"type": "string"}, {"maxLength": 1}]}})");
  ExpectExact(R"({"not": {"dependentRequired": {"a": ["b"]}}})");
}

TEST(JsonSchemaCombinatorsTest, IfThenElse) {
  ExpectExact(R"({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "null"}})");
  ExpectExact(R"({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
                  "if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
                  "then": {"required": ["b"]}, "else": {"not": {"required": ["c"]}}})");
  ExpectExact(R"({"if": {"required": ["a"]}, "then": {"properties": {"a": {"type": "integer"}}}})");
}

TEST(JsonSchemaCombinatorsTest, OneOfWithOverlappingBranches) {
  ExpectExact(R"({"oneOf": [{"type": "string"}, {"maxLength": 1}]})");
  ExpectExact(R"({"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "null"}]})");
  ExpectExact(R"({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
                  "oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"required": ["c"]}]})");
  ExpectExact(R"({"oneOf": [{"minimum": 1}, {"maximum": 2}]})");
}

// "Exactly one of several contains-languages": a oneOf of unanchored
// patterns, alone, beside a maxLength (a counter in the same lexeme) and
// inside an object beside a free string (the shape that took seconds per
// mask).
TEST(JsonSchemaCombinatorsTest, OneOfUnanchoredPatterns) {
  ExpectExact(R"({"type": "string", "oneOf": [{"pattern": "a"}, {"pattern": "b"},
                  {"pattern": "c"}]})");
  ExpectExact(R"({"type": "string", "maxLength": 2, "oneOf": [{"pattern": "a"},
                  {"pattern": "b"}, {"pattern": "x"}]})");
  ExpectExact(R"({"type": "string", "oneOf": [{"pattern": "ab"}, {"pattern": "^f"},
                  {"pattern": "[0-9]$"}]})");
  ExpectExact(R"({"type": "object", "properties": {"a": {"type": "string"},
                  "b": {"type": "string", "oneOf": [{"pattern": "x"}, {"pattern": "y"}]}},
                  "required": ["b"]})");
}

// Branches that all match non-objects (no "type" of their own) but no
// object twice, under a parent that admits objects only: told apart without
// complements (which additionalProperties: false would not allow).
TEST(JsonSchemaCombinatorsTest, OneOfBranchesDisjointOnTheParentsTypes) {
  // A discriminating enum.
  ExpectExact(R"({"type": "object", "oneOf": [
      {"required": ["a"], "properties": {"a": {"enum": [1]}}, "additionalProperties": false},
      {"required": ["a"], "properties": {"a": {"enum": [true]}, "b": {}},
       "additionalProperties": false}]})");
  // Discriminating string patterns (decided on their regexes).
  ExpectExact(R"({"type": "object", "oneOf": [
      {"required": ["a"], "properties": {"a": {"type": "string", "pattern": "^x$"}},
       "additionalProperties": false},
      {"required": ["a"], "properties": {"a": {"type": "string", "pattern": "^y"}, "b": {}},
       "additionalProperties": false}]})");
  // A key one branch requires and the other cannot have.
  ExpectExact(R"({"type": "object", "oneOf": [
      {"required": ["c"]},
      {"properties": {"a": {}, "b": {}}, "additionalProperties": false}]})");
}

// Objects: optional declared keys, other keys between them and member counts
// (the grammar admits other keys only after the last declared key written).
TEST(JsonSchemaCombinatorsTest, OptionalPropertiesWithOtherKeys) {
  ExpectExact(R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}, "c": {}},
                  "additionalProperties": {"type": "string"}, "maxProperties": 2})");
  ExpectExact(R"({"type": "object", "properties": {"a": {}, "c": {"type": "boolean"}},
                  "required": ["c"], "minProperties": 2})");
}

// An anyOf beside an object's properties keeps the object's property order
// (the grammar fixes one order: the schema's, outer properties first).
TEST(JsonSchemaCombinatorsTest, AnyOfBesidePropertiesKeepsTheirOrder) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type": "object", "properties": {"a": {}, "b": {}},
                  "anyOf": [{"properties": {"b": {"type": "integer"}}, "required": ["b"]}]})";
  auto g = CompileGrammar(spec, CompileOptions(), ByteVocab());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"a": 1, "b": 2})"));
  EXPECT_FALSE(Accepts(*g, R"({"a": 1, "b": "x"})"));
}

TEST(JsonSchemaCombinatorsTest, AnyOfBesideOtherConstraints) {
  ExpectExact(R"({"type": "string", "anyOf": [{"minLength": 3}, {"enum": ["a", "b"]}]})");
  ExpectExact(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                  "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
                  "allOf": [{"anyOf": [{"required": ["c"]}, {"maxProperties": 1}]}]})");
  ExpectExact(R"({"minimum": 0, "oneOf": [{"type": "integer"}, {"type": "string"}]})");
}

TEST(JsonSchemaCombinatorsTest, DependentRequired) {
  ExpectExact(R"({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
                  "dependentRequired": {"a": ["b"], "b": ["c"]}})");
  ExpectExact(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                  "dependencies": {"a": ["c"], "b": {"properties": {"a": {"type": "string"}}}}})");
}

TEST(JsonSchemaCombinatorsTest, RefusalsNameTheKeywordAndPointer) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"properties": {"a": {"not": {"type": "string", "format": "date"}}}})",
       "\"not\" of \"format\" (no exact complement) at /properties/a/not"},
      {R"({"not": {"contains": {"type": "string"}}})", "\"not\" of \"contains\""},
      {R"({"oneOf": [{"uniqueItems": true}, {"maxItems": 3}]})",
       "oneOf whose branches may overlap: \"not\" of \"uniqueItems\""},
      {R"({"if": {"uniqueItems": true}, "then": {"maxItems": 3}})",
       "if/then/else: \"not\" of \"uniqueItems\""},
  };
  for (const auto& [schema, expected] : cases) {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema;
    auto g = CompileGrammar(spec, CompileOptions(), ByteVocab());
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_NE(std::string(g.status().message()).find(expected), std::string::npos)
        << schema << ": " << g.status();
  }
}

}  // namespace
}  // namespace maskd
