// Object keywords checked by brute force on schemas with finite languages:
// every object of at most 3 members over keys a, b, x, y and values "s", null
// (repeats included) must be accepted iff the reference validator accepts it
// (and, per property order, its declared keys come at most once, in schema
// order unless any order is asked for); after every prefix of every valid
// document the mask must hold exactly the tokens some valid document
// continues with (EOS iff the prefix is one).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

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

using json_schema::JsonValue;
using ::testing::HasSubstr;

std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"\"a\":", ",\"", "\":", "l}", "\"s\"", "{\"", "\"}", "\",", "x\":n"}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "object-keywords");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               PropertyOrder order,
                                                               WhitespaceMode whitespace) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  CompileOptions options;
  options.property_order = order;
  options.whitespace = whitespace;
  return CompileGrammar(spec, options, Vocab());
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

struct Candidate {
  std::vector<std::pair<std::string, std::string>> members;  // key, value as JSON

  std::string Text(const char* member_sep, const char* key_sep) const {
    std::string out = "{";
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out += member_sep;
      out += "\"" + members[i].first + "\"" + key_sep + members[i].second;
    }
    return out + "}";
  }
};

const std::vector<Candidate>& Candidates() {
  static const std::vector<Candidate> all = [] {
    const std::vector<std::string> keys = {"a", "b", "x", "y"};
    const std::vector<std::string> values = {"\"s\"", "null"};
    std::vector<Candidate> out = {Candidate{}};
    for (size_t begin = 0; begin < out.size(); ++begin) {
      if (out[begin].members.size() == 3) continue;
      for (const std::string& k : keys) {
        for (const std::string& v : values) {
          Candidate next = out[begin];
          next.members.push_back({k, v});
          out.push_back(std::move(next));
        }
      }
    }
    return out;
  }();
  return all;
}

// Declared keys (in the order a schema-order grammar takes them) at most
// once; in schema order, in that order.
bool KeyOrderAllowed(const Candidate& c, const std::vector<std::string>& declared,
                     PropertyOrder order) {
  std::vector<size_t> positions;
  for (const auto& [key, value] : c.members) {
    auto it = std::find(declared.begin(), declared.end(), key);
    if (it == declared.end()) continue;
    const size_t pos = static_cast<size_t>(it - declared.begin());
    if (std::find(positions.begin(), positions.end(), pos) != positions.end()) return false;
    if (order == PropertyOrder::kSchemaOrder && !positions.empty() && positions.back() > pos) {
      return false;
    }
    positions.push_back(pos);
  }
  return true;
}

bool ReferenceAccepts(const json_schema::Schema& reference, const Candidate& c) {
  std::vector<std::pair<std::string, JsonValue>> members;
  for (const auto& [key, value] : c.members) {
    absl::StatusOr<JsonValue> v = json_schema::ParseJsonValue(value);
    EXPECT_TRUE(v.ok());
    members.push_back({key, v.ok() ? *v : JsonValue()});
  }
  return json_schema::ReferenceValidate(reference, reference.root,
                                        JsonValue::Object(std::move(members)));
}

void ExpectExactMask(Matcher& m, const Tokenizer& tok, const std::vector<std::string>& valid,
                     const std::string& prefix, const std::string& schema) {
  std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
  m.FillMask(words);
  for (TokenId t = 0; t < tok.vocab_size(); ++t) {
    const bool got = (words[t / 32] >> (t % 32)) & 1;
    bool want;
    if (tok.is_special(t)) {
      want = std::binary_search(valid.begin(), valid.end(), prefix);
    } else {
      const std::string next = prefix + std::string(tok.token_bytes(t));
      auto it = std::lower_bound(valid.begin(), valid.end(), next);
      want = it != valid.end() && it->compare(0, next.size(), next) == 0;
    }
    ASSERT_EQ(got, want) << schema << "\n  after " << prefix << " token "
                         << std::string(tok.token_bytes(t));
  }
}

// The whole check for one schema in one property order. `declared`: the
// keys the schema's objects declare, in schema order.
void ExpectExact(const std::string& schema, const std::vector<std::string>& declared,
                 PropertyOrder order) {
  SCOPED_TRACE(order == PropertyOrder::kAnyOrder ? "any order" : "schema order");
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << schema << ": " << reference.status();
  auto spaced = Compile(schema, order, WhitespaceMode::kBounded);
  auto compact = Compile(schema, order, WhitespaceMode::kCompact);
  ASSERT_TRUE(spaced.ok()) << schema << ": " << spaced.status();
  ASSERT_TRUE(compact.ok()) << schema << ": " << compact.status();
  std::vector<std::string> valid;
  size_t reference_valid = 0;
  for (const Candidate& c : Candidates()) {
    const bool by_reference = ReferenceAccepts(*reference, c);
    reference_valid += by_reference;
    const bool expected = by_reference && KeyOrderAllowed(c, declared, order);
    EXPECT_EQ(Accepts(*spaced, c.Text(", ", ": ")), expected)
        << schema << "\n  " << c.Text(", ", ": ");
    EXPECT_EQ(Accepts(*compact, c.Text(",", ":")), expected)
        << schema << "\n  " << c.Text(",", ":");
    if (expected) valid.push_back(c.Text(",", ":"));
    if (::testing::Test::HasFailure()) return;
  }
  // Both verdicts must occur, or the comparison proves little.
  EXPECT_GT(valid.size(), 1u) << schema;
  EXPECT_LT(reference_valid, Candidates().size()) << schema;

  std::sort(valid.begin(), valid.end());
  const Tokenizer& tok = (*compact)->tokenizer();
  std::set<std::string> checked;
  for (const std::string& doc : valid) {
    auto m = Matcher::Create(*compact);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) ExpectExactMask(*m, tok, valid, prefix, schema);
      if (::testing::Test::HasFatalFailure()) return;
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
}

void ExpectExactBothOrders(const std::string& schema, const std::vector<std::string>& declared) {
  ExpectExact(schema, declared, PropertyOrder::kSchemaOrder);
  ExpectExact(schema, declared, PropertyOrder::kAnyOrder);
}

void ExpectRefused(const std::string& schema, const std::string& what, const std::string& pointer) {
  for (PropertyOrder order : {PropertyOrder::kSchemaOrder, PropertyOrder::kAnyOrder}) {
    auto g = Compile(schema, order, WhitespaceMode::kCompact);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_THAT(g.status().message(), HasSubstr(what));
    EXPECT_THAT(g.status().message(), HasSubstr(pointer));
  }
}

// A member whose key is a property and matches patternProperties must match
// both schemas.
TEST(JsonSchemaObjectKeywordsTest, PropertyAlsoMatchingPatternProperties) {
  ExpectExactBothOrders(R"({"type": "object", "properties": {"a": {"const": "s"},
      "x": {"enum": ["s", null]}}, "patternProperties": {"^[xy]$": {"type": "null"}},
      "additionalProperties": false, "maxProperties": 3})",
                        {"a", "x"});
  // Two patterns on one declared key, and on a required key that is not a
  // property (its value follows the patterns, not additionalProperties).
  ExpectExactBothOrders(R"({"type": "object", "properties": {"x": {}},
      "patternProperties": {"^x$": {"type": "null"}, "^[xy]$": {"enum": [null, "s"]},
      "^b$": {"const": "s"}}, "required": ["b"], "additionalProperties": false,
      "maxProperties": 3})",
                        {"x", "b"});
  // Through allOf: the properties of one part meet the patterns of another.
  ExpectExactBothOrders(R"({"allOf": [{"type": "object", "properties": {"a": {"const": "s"},
      "y": {"type": "string"}}}, {"patternProperties": {"^[ay]$": {"const": "s"}, "b": false},
      "additionalProperties": {"enum": ["s", null]}, "propertyNames": {"enum": ["a", "b", "x", "y"]}}],
      "maxProperties": 3})",
                        {"a", "y"});
  // One part's additionalProperties meets the other's patterns: keys the
  // patterns match must match it too (the other part's declared b too).
  ExpectExactBothOrders(R"({"type": "object", "allOf": [{"properties": {"a": {"const": "s"}},
      "additionalProperties": {"type": "null"}}, {"properties": {"b": {"enum": ["s", null]}},
      "patternProperties": {"^[xy]$": {"enum": ["s", null]}, "^[b]$": {"type": "null"}},
      "additionalProperties": {"const": "s"}, "propertyNames": {"enum": ["a", "b", "x", "y"]}}],
      "maxProperties": 3})",
                        {"a", "b"});
}

// A finite frame for the schemas below: declared keys a, b; other keys x, y
// (repeatable); values "s" or null; at most 3 members. `inner` adds keywords.
std::string Framed(const std::string& inner) {
  return R"({"type": "object", "properties": {"a": {"enum": ["s", null]}, "b": {"enum": ["s", null]}},
      "patternProperties": {"^[xy]$": {"enum": ["s", null]}}, "additionalProperties": false,
      "maxProperties": 3, )" +
         inner + "}";
}

void ExpectExactFramed(const std::string& inner) {
  ExpectExactBothOrders(Framed(inner), {"a", "b"});
}

TEST(JsonSchemaObjectKeywordsTest, NotAdditionalProperties) {
  // Some member other than a is not a string, or a is not.
  ExpectExactFramed(R"("not": {"properties": {"a": {"type": "string"}},
      "additionalProperties": {"type": "string"}})");
  // additionalProperties false: some key other than a and the patterns'.
  ExpectExactFramed(R"("not": {"properties": {"a": {}}, "patternProperties": {"^x": {}},
      "additionalProperties": false})");
}

TEST(JsonSchemaObjectKeywordsTest, NotPatternProperties) {
  ExpectExactFramed(R"("not": {"patternProperties": {"^x": {"type": "string"},
      "b": {"const": null}}})");
  // A declared key matching the pattern violates it through its property.
  ExpectExactFramed(R"("not": {"properties": {"a": {"enum": ["s", null]}},
      "patternProperties": {"^[ax]$": {"type": "null"}}})");
}

TEST(JsonSchemaObjectKeywordsTest, NotPropertyNames) {
  ExpectExactFramed(R"("not": {"propertyNames": {"pattern": "^[ab]"}})");
  ExpectExactFramed(R"("not": {"propertyNames": {"anyOf": [{"const": "a"}, {"pattern": "y"}]}})");
  // Two existentials at once: some member not a string AND some key x.
  ExpectExactFramed(R"("not": {"anyOf": [{"additionalProperties": {"type": "string"}},
      {"propertyNames": {"not": {"const": "x"}}}]})");
}

TEST(JsonSchemaObjectKeywordsTest, PropertyNamesWithCombinators) {
  ExpectExactFramed(R"("propertyNames": {"anyOf": [{"enum": ["a", "x"]}, {"pattern": "^b"}]})");
  ExpectExactFramed(R"("propertyNames": {"not": {"const": "y"}})");
  ExpectExactFramed(
      R"("propertyNames": {"oneOf": [{"pattern": "^[ab]$"}, {"pattern": "^[bx]$"}]})");
  ExpectExactFramed(R"("propertyNames": {"$ref": "#/$defs/k"}, "$defs": {"k": {"maxLength": 1,
      "not": {"enum": ["b", "y"]}}})");
}

// oneOf whose object branches may overlap: exactly one must match.
TEST(JsonSchemaObjectKeywordsTest, OneOfOverlappingObjects) {
  ExpectExactFramed(R"("oneOf": [{"properties": {"a": {"const": "s"}},
      "additionalProperties": {"type": "null"}},
      {"properties": {"b": {"type": "string"}}, "required": ["b"]}])");
  // Objects with only a and b, or only a: {} and {"a": "s"} match both.
  ExpectExactFramed(R"("oneOf": [{"properties": {"a": {"const": "s"}},
      "additionalProperties": false},
      {"properties": {"a": {"const": "s"}, "b": {}}, "additionalProperties": false}])");
  ExpectExactFramed(R"("oneOf": [{"propertyNames": {"pattern": "^[ax]$"}},
      {"propertyNames": {"pattern": "^[bx]$"}}, {"propertyNames": {"pattern": "^[xy]$"}}])");
}

// dependentSchemas, draft-7 dependencies and if/then/else whose conditions
// need the object complements above.
TEST(JsonSchemaObjectKeywordsTest, ConditionalsOverObjectKeywords) {
  ExpectExactFramed(R"("dependentSchemas": {"a": {"properties": {"b": {"const": "s"}},
      "required": ["b"]}, "b": {"not": {"additionalProperties": {"type": "null"}}}})");
  ExpectExactFramed(R"("$schema": "http://json-schema.org/draft-07/schema#",
      "dependencies": {"a": ["b"], "b": {"propertyNames": {"not": {"const": "x"}}}})");
  ExpectExactFramed(R"("if": {"propertyNames": {"pattern": "^[ab]$"}}, "then": {"required": ["a"]},
      "else": {"maxProperties": 2, "properties": {"b": {"type": "null"}}})");
  ExpectExactFramed(R"("allOf": [{"if": {"additionalProperties": {"type": "string"}},
      "then": {"minProperties": 2}}, {"if": {"required": ["a"]},
      "then": {"propertyNames": {"not": {"const": "b"}}}}])");
}

// What stays out of reach is refused with the keyword and pointer.
TEST(JsonSchemaObjectKeywordsTest, RefusalsNameKeywordAndPointer) {
  ExpectRefused(Framed(R"("not": {"propertyNames": {"format": "email"}})"), "format",
                "/not/propertyNames");
  // A property of one part matching the other part's patterns where the
  // first part's additionalProperties would have to go onto them.
  ExpectRefused(R"({"allOf": [{"properties": {"a": {"const": "s"}},
      "additionalProperties": {"type": "null"}}, {"patternProperties": {"^[ab]$": {}}}]})",
                "allOf whose parts cannot be merged", "root");
  // Both sides with patterns and one with additionalProperties: a key would
  // need "matches this pattern and not that one".
  ExpectRefused(Framed(R"("oneOf": [{"properties": {"a": {"const": "s"}}},
      {"patternProperties": {"^[by]$": {"type": "string"}}}])"),
                "allOf whose parts cannot be merged", "root");
}

// Arrays: every array of at most 4 items over "s", "t", null must be accepted
// iff the reference validator accepts it, and the masks must be exact.
void ExpectExactArrays(const std::string& schema) {
  SCOPED_TRACE(schema);
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << reference.status();
  auto compact = Compile(schema, PropertyOrder::kSchemaOrder, WhitespaceMode::kCompact);
  ASSERT_TRUE(compact.ok()) << compact.status();
  const std::vector<std::string> values = {"\"s\"", "\"t\"", "null"};
  std::vector<std::vector<std::string>> arrays = {{}};
  for (size_t begin = 0; begin < arrays.size(); ++begin) {
    if (arrays[begin].size() == 4) continue;
    for (const std::string& v : values) {
      std::vector<std::string> next = arrays[begin];
      next.push_back(v);
      arrays.push_back(std::move(next));
    }
  }
  std::vector<std::string> valid;
  for (const std::vector<std::string>& a : arrays) {
    std::string text = "[";
    std::vector<JsonValue> items;
    for (size_t i = 0; i < a.size(); ++i) {
      text += (i > 0 ? "," : "") + a[i];
      items.push_back(*json_schema::ParseJsonValue(a[i]));
    }
    text += "]";
    const bool expected = json_schema::ReferenceValidate(*reference, reference->root,
                                                         JsonValue::Array(std::move(items)));
    ASSERT_EQ(Accepts(*compact, text), expected) << text;
    if (expected) valid.push_back(text);
  }
  EXPECT_GT(valid.size(), 1u);
  EXPECT_LT(valid.size(), arrays.size());
  std::sort(valid.begin(), valid.end());
  const Tokenizer& tok = (*compact)->tokenizer();
  std::set<std::string> checked;
  for (const std::string& doc : valid) {
    auto m = Matcher::Create(*compact);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) ExpectExactMask(*m, tok, valid, prefix, schema);
      if (::testing::Test::HasFatalFailure()) return;
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
}

// "Some item violates items": the complement of items, after prefixItems
// too, in not, oneOf and if/then/else.
TEST(JsonSchemaObjectKeywordsTest, ComplementOfItems) {
  const std::string frame = R"("type": "array", "items": {"enum": ["s", "t", null]},
      "maxItems": 4, )";
  ExpectExactArrays("{" + frame + R"("not": {"items": {"type": "string"}}})");
  ExpectExactArrays("{" + frame + R"("not": {"prefixItems": [{"const": "s"}],
      "items": {"const": "t"}}})");
  ExpectExactArrays("{" + frame + R"("oneOf": [{"items": {"type": "string"}},
      {"items": {"enum": ["s", null]}}, {"prefixItems": [true, {"const": "t"}]}]})");
  // Two existentials at once: some item not a string AND some item not "s"
  // (one item, null, may be both).
  ExpectExactArrays("{" + frame + R"("not": {"anyOf": [{"items": {"type": "string"}},
      {"items": {"const": "s"}}]}})");
  ExpectExactArrays("{" + frame + R"("if": {"items": {"const": "s"}}, "then": {"maxItems": 2},
      "else": {"minItems": 3}})");
}
}  // namespace
}  // namespace maskd
