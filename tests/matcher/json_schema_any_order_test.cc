// Any-order properties (CompileOptions::property_order = kAnyOrder), checked
// by brute force on schemas whose languages are finite: every object over a
// few keys and string values, in every key order and with repeated keys,
// must be accepted iff no declared key (properties and required) repeats and
// the reference validator accepts it (checking every member, repeats too:
// keys of other classes may repeat, as in schema order); and after every
// prefix of every valid document the mask must hold exactly the tokens some
// valid document continues with (EOS iff the prefix is one).
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

// Every byte, plus tokens that cross lexeme boundaries (key and colon,
// comma and quote, value and brace).
std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"\"a\":", ",\"", "\":", "t\"}", "\"s\"", "{\"", "\"}", "\",", "a\":\"s"}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "any-order-bytes");
  return tok;
}

std::shared_ptr<const CompiledGrammar> CompileAnyOrder(const std::string& schema,
                                                       WhitespaceMode whitespace) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  CompileOptions options;
  options.property_order = PropertyOrder::kAnyOrder;
  options.whitespace = whitespace;
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g = CompileGrammar(spec, options, Vocab());
  EXPECT_TRUE(g.ok()) << schema << ": " << g.status();
  return g.ok() ? *g : nullptr;
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

// An object as written: members in order, repeats allowed.
struct Candidate {
  std::vector<std::pair<std::string, std::string>> members;  // key, value as JSON

  bool Repeats(const std::set<std::string>& declared) const {
    std::set<std::string> seen;
    for (const auto& [key, value] : members) {
      if (declared.contains(key) && !seen.insert(key).second) return true;
    }
    return false;
  }
  std::string Text(const char* member_sep, const char* key_sep) const {
    std::string out = "{";
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out += member_sep;
      out += "\"" + members[i].first + "\"" + key_sep + members[i].second;
    }
    return out + "}";
  }
};

// Every sequence of at most 4 members over keys a, b, c, x and values "s",
// "t" (repeated keys included): 4,681 objects.
std::vector<Candidate> Candidates() {
  const std::vector<std::string> keys = {"a", "b", "c", "x"};
  const std::vector<std::string> values = {"\"s\"", "\"t\""};
  std::vector<Candidate> out = {Candidate{}};
  for (size_t begin = 0; begin < out.size(); ++begin) {
    if (out[begin].members.size() == 4) continue;
    for (const std::string& k : keys) {
      for (const std::string& v : values) {
        Candidate next = out[begin];
        next.members.push_back({k, v});
        out.push_back(std::move(next));
      }
    }
  }
  return out;
}

bool Valid(const json_schema::Schema& reference, const std::set<std::string>& declared,
           const Candidate& c) {
  if (c.Repeats(declared)) return false;
  std::vector<std::pair<std::string, JsonValue>> members;
  for (const auto& [key, value] : c.members) {
    absl::StatusOr<JsonValue> v = json_schema::ParseJsonValue(value);
    EXPECT_TRUE(v.ok());
    members.push_back({key, v.ok() ? *v : JsonValue()});
  }
  return json_schema::ReferenceValidate(reference, reference.root,
                                        JsonValue::Object(std::move(members)));
}

// Mask after `prefix` must be exactly the tokens t with prefix + bytes(t) a
// prefix of some document in `valid` (sorted), EOS iff prefix is in it.
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

// The whole check for one schema: verdicts in json.dumps spacing (default
// whitespace) and compact, masks in compact.
// `declared`: the keys that may not repeat (every key some object of the
// schema declares).
void ExpectExactAnyOrder(const std::string& schema, const std::set<std::string>& declared) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << schema << ": " << reference.status();
  auto spaced = CompileAnyOrder(schema, WhitespaceMode::kBounded);
  auto compact = CompileAnyOrder(schema, WhitespaceMode::kCompact);
  ASSERT_TRUE(spaced && compact);
  std::vector<std::string> valid;
  int out_of_order = 0;
  for (const Candidate& c : Candidates()) {
    const bool expected = Valid(*reference, declared, c);
    EXPECT_EQ(Accepts(spaced, c.Text(", ", ": ")), expected)
        << schema << "\n  " << c.Text(", ", ": ");
    EXPECT_EQ(Accepts(compact, c.Text(",", ":")), expected) << schema << "\n  " << c.Text(",", ":");
    if (expected) {
      valid.push_back(c.Text(",", ":"));
      out_of_order += !std::is_sorted(c.members.begin(), c.members.end());
    }
  }
  // The schema must admit some objects out of key order and refuse some, or
  // the comparison proves little.
  EXPECT_GT(out_of_order, 0) << schema;
  EXPECT_LT(valid.size(), Candidates().size()) << schema;

  std::sort(valid.begin(), valid.end());
  const Tokenizer& tok = compact->tokenizer();
  std::set<std::string> checked;
  for (const std::string& doc : valid) {
    auto m = Matcher::Create(compact);
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

TEST(JsonSchemaAnyOrderTest, DeclaredKeysOnceRequiredKeysPresent) {
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"const": "t"},
      "b": {"const": "s"}, "c": {"enum": ["s", "t"]}}, "required": ["b"],
      "additionalProperties": false})",
                      {"a", "b", "c"});
  ExpectExactAnyOrder(
      R"({"type": "object", "properties": {"a": {"const": "t"}, "b": {"type": "string",
      "pattern": "^[st]$"}, "c": {"const": "s"}}, "required": ["a", "c"],
      "propertyNames": {"enum": ["a", "b", "c"]}, "additionalProperties": false})",
      {"a", "b", "c"});
}

TEST(JsonSchemaAnyOrderTest, OtherKeysCheckedAnywhere) {
  // c and x are other keys: checked against additionalProperties, repeatable
  // (maxProperties keeps the language within the candidates).
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"const": "t"},
      "b": {"enum": ["s", "t"]}}, "additionalProperties": {"const": "t"}, "maxProperties": 4,
      "propertyNames": {"enum": ["a", "b", "c", "x"]}})",
                      {"a", "b"});
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"const": "t"}},
      "patternProperties": {"^[bx]$": {"const": "s"}}, "additionalProperties": false,
      "maxProperties": 4})",
                      {"a"});
  // A required key that is not a property: its value follows its class.
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"const": "t"}},
      "required": ["a", "x"], "additionalProperties": {"const": "s"}, "maxProperties": 4,
      "propertyNames": {"enum": ["a", "b", "x"]}})",
                      {"a", "x"});
}

TEST(JsonSchemaAnyOrderTest, MemberCounts) {
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"enum": ["s", "t"]},
      "b": {"const": "t"}, "c": {"enum": ["s", "t"]}}, "minProperties": 2, "maxProperties": 3,
      "additionalProperties": {"const": "s"}, "propertyNames": {"enum": ["a", "b", "c", "x"]}})",
                      {"a", "b", "c"});
  ExpectExactAnyOrder(R"({"type": "object", "properties": {"a": {"enum": ["s", "t"]},
      "b": {"enum": ["s", "t"]}}, "required": ["b"], "maxProperties": 2,
      "additionalProperties": {"const": "t"}, "propertyNames": {"pattern": "^[a-c]$"}})",
                      {"a", "b"});
}

TEST(JsonSchemaAnyOrderTest, CombinatorsAndEnumObjects) {
  ExpectExactAnyOrder(R"({"anyOf": [
      {"type": "object", "properties": {"a": {"const": "t"}}, "required": ["a"],
       "additionalProperties": false},
      {"type": "object", "properties": {"b": {"const": "s"}, "c": {"enum": ["s", "t"]}},
       "required": ["c"], "additionalProperties": false}]})",
                      {"a", "b", "c"});
  // JSON Schema compares objects as unordered maps.
  ExpectExactAnyOrder(R"({"enum": [{"a": "t", "b": "s", "c": "t"}, {"x": "t", "c": "s"}, {}]})",
                      {"a", "b", "c", "x"});
}

// Declared keys a schema-order grammar takes are still taken; nested
// objects are any-order too.
TEST(JsonSchemaAnyOrderTest, NestedObjects) {
  auto g = CompileAnyOrder(R"({"type": "object", "properties": {
      "p": {"type": "object", "properties": {"q": {"type": "integer"}, "r": {"type": "string"}},
            "required": ["q", "r"], "additionalProperties": false},
      "n": {"type": "integer"}}, "required": ["p"], "additionalProperties": false})",
                           WhitespaceMode::kBounded);
  ASSERT_TRUE(g);
  EXPECT_TRUE(Accepts(g, R"({"p": {"q": 1, "r": "x"}, "n": 2})"));
  EXPECT_TRUE(Accepts(g, R"({"n": 2, "p": {"r": "x", "q": 1}})"));
  EXPECT_FALSE(Accepts(g, R"({"n": 2, "p": {"r": "x"}})"));
  EXPECT_FALSE(Accepts(g, R"({"p": {"q": 1, "r": "x", "q": 1}})"));
  EXPECT_FALSE(Accepts(g, R"({"n": 2})"));

  // Each object has its own keys: the same key inside and outside, in
  // objects in arrays, after a nested object closes.
  auto same = CompileAnyOrder(R"({"type": "object", "properties": {
      "q": {"type": "integer"}, "l": {"type": "array", "items": {"$ref": "#"}},
      "p": {"$ref": "#"}}})",
                              WhitespaceMode::kBounded);
  ASSERT_TRUE(same);
  EXPECT_TRUE(Accepts(same, R"({"p": {"q": 1}, "q": 2})"));
  EXPECT_TRUE(
      Accepts(same, R"({"q": 2, "p": {"q": 1, "p": {"q": 0}}, "l": [{"q": 1}, {"q": 2}]})"));
  EXPECT_FALSE(Accepts(same, R"({"p": {"q": 1}, "q": 2, "p": {}})"));
  EXPECT_FALSE(Accepts(same, R"({"l": [{"q": 1, "q": 2}]})"));
  EXPECT_FALSE(Accepts(same, R"({"l": [{"q": 1}], "q": 1, "l": []})"));
}

// The grammar counts required keys and members (the parser keeps keys
// unique), so objects with many keys compile; past the budget of states
// (counts x bounds) the object is refused by name, never approximated.
TEST(JsonSchemaAnyOrderTest, ManyKeysAndTheStateBudget) {
  std::string properties;
  for (int i = 0; i < 30; ++i) {
    properties += (i ? ", " : "") + ("\"k" + std::to_string(i) + "\": {\"type\": \"integer\"}");
  }
  std::string required;
  for (int i = 0; i < 20; ++i) required += (i ? ", " : "") + ("\"k" + std::to_string(i) + "\"");
  std::string all_required = "{";
  for (int i = 0; i < 20; ++i)
    all_required += (i ? ", " : "") + ("\"k" + std::to_string(19 - i) + "\": " + std::to_string(i));
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  CompileOptions options;
  options.property_order = PropertyOrder::kAnyOrder;

  spec.text = R"({"type": "object", "properties": {"o": {"type": "object", "properties": {)" +
              properties + "}, \"required\": [" + required + "]}}}";
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g = CompileGrammar(spec, options, Vocab());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"o": )" + all_required + "}}"));
  EXPECT_TRUE(Accepts(*g, R"({"o": )" + all_required + R"(, "k29": 1, "k25": 2}})"));
  EXPECT_FALSE(Accepts(*g, R"({"o": )" + all_required + R"(, "k29": 1, "k29": 2}})"));
  EXPECT_FALSE(Accepts(*g, R"({"o": )" + all_required + R"(, "k3": 1}})"));
  EXPECT_FALSE(Accepts(*g, R"({"o": {"k1": 1, "k2": 2}})"));

  spec.text = R"({"type": "object", "properties": {"o": {"type": "object", "properties": {)" +
              properties + "}, \"required\": [" + required + "], \"maxProperties\": 10000}}}";
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> refused =
      CompileGrammar(spec, options, Vocab());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("any-order properties"));
  EXPECT_THAT(refused.status().message(), HasSubstr("/properties/o"));
}

}  // namespace
}  // namespace maskd
