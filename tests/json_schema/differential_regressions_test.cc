// Disagreements with python3-jsonschema that differential_fuzz.py found, each
// minimized to a case that failed before its fix.
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::shared_ptr<const Tokenizer> Bytes() {
  static const auto* vocab = new std::shared_ptr<const Tokenizer>([] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
    return std::make_shared<const testing::SmallVocabTokenizer>(tokens, "bytes");
  }());
  return *vocab;
}

std::shared_ptr<const CompiledGrammar> Compile(const std::string& schema) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  CompileOptions options;
  options.property_order = PropertyOrder::kAnyOrder;
  auto g = CompileGrammar(spec, options, Bytes());
  EXPECT_TRUE(g.ok()) << schema << ": " << g.status();
  return g.ok() ? *g : nullptr;
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  return m->AcceptBytes(text) && m->CanStop();
}

struct Case {
  std::string schema;
  std::string excluded;  // An enum value the keyword beside it rules out.
  std::string kept;      // One it keeps ("" when none is left).
};

// enum/const values are written as literals, so every other keyword of the
// same node must be applied to them at compile time (value_match.h): the
// filter applied only the node's local constraints (type, bounds, lengths,
// patterns, counts, required), so the excluded values below were accepted.
TEST(EnumBesideKeywordsTest, OtherKeywordsOfTheNodeApplyToTheValues) {
  const std::vector<Case> cases = {
      {R"({"enum":[[-3,2],[null]],"contains":{"type":"null"}})", "[-3, 2]", "[null]"},
      {R"({"allOf":[{"enum":[[-3,2]]},{"contains":{"type":"null"}}]})", "[-3, 2]", ""},
      {R"({"enum":[[-3,2],["a"]],"items":{"type":"string"}})", "[-3, 2]", "[\"a\"]"},
      {R"({"enum":[[1],[2]],"prefixItems":[{"const":2}]})", "[1]", "[2]"},
      {R"({"enum":[[1,1],[1,2]],"uniqueItems":true})", "[1, 1]", "[1, 2]"},
      {R"({"enum":[{"a":1},{"":1}],"propertyNames":{"maxLength":0}})", "{\"a\": 1}", "{\"\": 1}"},
      {R"({"enum":[{"a":1},{"b":1}],"properties":{"a":{"type":"string"}}})", "{\"a\": 1}",
       "{\"b\": 1}"},
      {R"({"enum":[{"a":1},{"b":"x"}],"additionalProperties":{"type":"string"}})", "{\"a\": 1}",
       "{\"b\": \"x\"}"},
      {R"({"enum":[{"ab":1},{"b":1}],"patternProperties":{"^a":false}})", "{\"ab\": 1}",
       "{\"b\": 1}"},
      {R"({"enum":[{"a":1},{"a":1,"b":2}],"dependentRequired":{"a":["b"]}})", "{\"a\": 1}",
       "{\"a\": 1, \"b\": 2}"},
      {R"({"enum":[{"a":1},{"b":1}],"dependentSchemas":{"a":false}})", "{\"a\": 1}", "{\"b\": 1}"},
      {R"({"const":{"a":1},"not":{"const":{"a":1}}})", "{\"a\": 1}", ""},
      {R"({"enum":["abc","2020-01-31"],"format":"date"})", "\"abc\"", "\"2020-01-31\""},
      {R"({"type":"string","format":"uuid","enum":["x"]})", "\"x\"", ""},
      {R"({"type":"array","uniqueItems":true,"items":{"enum":["abc","2020-01-31"],"format":"date"}})",
       "[\"abc\"]", "[\"2020-01-31\"]"},
      {R"({"patternProperties":{"b":{"enum":[[-3,2]]},"^ab$":{"contains":{"type":"null"}}}})",
       "{\"ab\": [-3, 2]}", "{\"b\": [-3, 2]}"},
      // Keys: propertyNames' enum beside a format.
      {R"({"propertyNames":{"enum":["a","2020-01-31"],"format":"date"}})", "{\"a\": 1}",
       "{\"2020-01-31\": 1}"},
  };
  for (const Case& c : cases) {
    auto g = Compile(c.schema);
    if (g == nullptr) continue;
    EXPECT_FALSE(Accepts(g, c.excluded)) << c.schema << " accepts " << c.excluded;
    if (!c.kept.empty()) {
      EXPECT_TRUE(Accepts(g, c.kept)) << c.schema << " rejects " << c.kept;
    }
  }
}

TEST(EnumBesideKeywordsTest, AnUnknownFormatBesideAnEnumIsRefused) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"enum":["abc"],"format":"no-such-format"})";
  auto g = CompileGrammar(spec, CompileOptions(), Bytes());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
}

// "byte" (OpenAPI) is enforced where it is asserted, so its complement must
// be refused like every enforced format's: negation took it for an
// annotation, and `not`, oneOf and contains then matched nothing where they
// should match every non-base64 string.
TEST(FormatComplementTest, AnEnforcedFormatOutsideJsonSchemaHasNoComplement) {
  for (const std::string schema :
       {R"({"not":{"format":"byte"}})", R"({"oneOf":[{},{"format":"byte"}]})",
        R"({"contains":{"format":"byte"}})", R"({"if":{"properties":{"a":{"format":"byte"}}}})"}) {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema;
    auto g = CompileGrammar(spec, CompileOptions(), Bytes());
    ASSERT_FALSE(g.ok()) << schema << " compiled";
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_NE(g.status().message().find("format"), std::string::npos) << g.status();
  }
  // Where the format is not complemented it is still enforced.
  auto g = Compile(R"({"type":"array","items":{"format":"byte"}})");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(Accepts(g, "[\"SGk=\", 1]"));
  EXPECT_FALSE(Accepts(g, "[\"SGk\"]"));
}

// A range with no multiple of multipleOf is an empty set of numbers, not an
// invalid schema: it was InvalidArgument ("no multiple of 2 in [1, 1]"),
// refusing schemas whose other types or branches still match.
TEST(EmptyMultipleRangeTest, OtherTypesAndBranchesStillMatch) {
  for (
      const std::string schema :
      {R"({"anyOf":[{"type":"string"},{"type":"integer","minimum":1,"maximum":1,"multipleOf":2}]})",
       R"({"minimum":1,"maximum":1.5,"multipleOf":2})",
       R"({"type":["integer","string"],"minimum":1,"maximum":1.5,"multipleOf":2})"}) {
    auto g = Compile(schema);
    if (g == nullptr) continue;
    EXPECT_TRUE(Accepts(g, "\"a\"")) << schema;
    for (const std::string number : {"1", "2", "0", "1.0"}) {
      EXPECT_FALSE(Accepts(g, number)) << schema << " accepts " << number;
    }
  }
  // Alone, it is the empty language: a grammar that allows nothing.
  auto g = Compile(R"({"type":"integer","minimum":1,"maximum":1,"multipleOf":2})");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(Accepts(g, "1"));
  EXPECT_FALSE(Accepts(g, "2"));
}

// Listed multiples (a bounded integer range with multipleOf) had no
// negative zero: json.dumps(-0.0) is "-0.0", a valid 0, and was rejected.
TEST(ListedMultiplesTest, NegativeZeroIsZero) {
  for (const std::string schema : {R"({"type":"integer","minimum":-5,"maximum":5,"multipleOf":2})",
                                   R"({"minimum":-0.5,"exclusiveMaximum":1.5,"multipleOf":2})"}) {
    auto g = Compile(schema);
    if (g == nullptr) continue;
    for (const std::string zero : {"0", "-0", "0.0", "-0.0"}) {
      EXPECT_TRUE(Accepts(g, zero)) << schema << " rejects " << zero;
    }
    EXPECT_FALSE(Accepts(g, "-1")) << schema;
    EXPECT_FALSE(Accepts(g, "-0.5")) << schema;
  }
}

// Every byte allowed by the mask before it is read, and the end allowed.
bool MaskAccepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  std::vector<uint32_t> words(8 + 1);
  for (char c : text) {
    m->FillMask(words);
    const uint8_t b = static_cast<uint8_t>(c);
    if (((words[b >> 5] >> (b & 31)) & 1) == 0) return false;
    if (!m->AcceptToken(b)) return false;
  }
  return m->CanStop();
}

// JSON Schema strings are decoded strings: json.dumps's default
// (ensure_ascii=True) writes every code point from U+007F up as a \u escape
// (a surrogate pair above U+FFFF), and both spellings may mix in one string.
// Each was rejected when the engine's strings had the raw spelling only.
TEST(AsciiSpellingTest, EnumPatternAndLengthsAcceptEscapes) {
  auto g = Compile(R"({"type":"object","properties":{
      "city":{"enum":["Z\u00fcrich","Gen\u00e8ve"]},
      "note":{"type":"string","pattern":"^[a-z\u00e9 ]+$","maxLength":4},
      "emoji":{"type":"string","maxLength":1},
      "del":{"const":"\u007f"}},"required":["city"],"additionalProperties":false})");
  ASSERT_NE(g, nullptr);
  for (const std::string ok :
       {R"({"city": "Z\u00fcrich"})", "{\"city\": \"Z\xc3\xbcrich\"}", R"({"city": "Gen\u00e8ve"})",
        R"({"city": "Z\u00fcrich", "note": "\u00e9t\u00e9"})",
        "{\"city\": \"Z\xc3\xbcrich\", \"note\": \"\\u00e9t\xc3\xa9 \"}",
        R"({"emoji": "\ud83d\ude00", "city": "Gen\u00e8ve"})",
        "{\"emoji\": \"\xf0\x9f\x98\x80\", \"city\": \"Gen\\u00e8ve\"}",
        R"({"city": "Gen\u00e8ve", "del": "\u007f"})",
        "{\"city\": \"Gen\\u00e8ve\", \"del\": \"\x7f\"}"}) {
    EXPECT_TRUE(Accepts(g, ok)) << ok;
    EXPECT_TRUE(MaskAccepts(g, ok)) << ok;
  }
  for (const std::string bad :
       {R"({"city": "Z\u00FCrich"})",
        R"({"city": "Z\u00fcrich", "note": "\u00e9t\u00e9\u00e9\u00e9"})",
        R"({"city": "Z\u00fcrich", "note": "\u00e8"})",
        R"({"city": "Z\u00fcrich", "emoji": "\ud83d"})",
        R"({"city": "Z\u00fcrich", "emoji": "\ud83d\ude00\u00e9"})", R"({"city": "Z\u0075rich"})",
        R"({"city": "Gen\u00e8ve", "del": "\u007F"})"}) {
    EXPECT_FALSE(Accepts(g, bad)) << bad;
    EXPECT_FALSE(MaskAccepts(g, bad)) << bad;
  }
}

// uniqueItems compares decoded strings: "é" and "\u00e9" are one value.
TEST(AsciiSpellingTest, UniqueItemsComparesDecodedStrings) {
  for (const std::string schema :
       {R"({"type":"array","items":{"type":"string"},"uniqueItems":true})",
        R"({"type":"array","items":{"enum":["\u00e9","\ud83d\ude00","a"]},"uniqueItems":true})"}) {
    auto g = Compile(schema);
    ASSERT_NE(g, nullptr);
    for (const std::string ok : {"[\"\xc3\xa9\", \"a\"]", "[\"\\u00e9\", \"\\ud83d\\ude00\"]",
                                 "[\"\xf0\x9f\x98\x80\", \"\\u00e9\"]"}) {
      EXPECT_TRUE(Accepts(g, ok)) << schema << " " << ok;
      EXPECT_TRUE(MaskAccepts(g, ok)) << schema << " " << ok;
    }
    for (const std::string bad : {"[\"\xc3\xa9\", \"\\u00e9\"]", "[\"\\u00e9\", \"\\u00e9\"]",
                                  "[\"\\ud83d\\ude00\", \"a\", \"\xf0\x9f\x98\x80\"]"}) {
      EXPECT_FALSE(Accepts(g, bad)) << schema << " " << bad;
      EXPECT_FALSE(MaskAccepts(g, bad)) << schema << " " << bad;
    }
  }
}

// Object keys: a declared key in either spelling is one key (at most once,
// satisfies required), propertyNames counts code points, and an undeclared
// key spelled escaped is still checked against the declared ones.
TEST(AsciiSpellingTest, KeysInEitherSpellingAreOneKey) {
  auto g = Compile(R"({"type":"object","properties":{"\u00e9":{"type":"integer"}},
      "required":["\u00e9"],"additionalProperties":{"type":"string"},
      "propertyNames":{"maxLength":1}})");
  ASSERT_NE(g, nullptr);
  for (const std::string ok :
       {R"({"\u00e9": 1})", "{\"\xc3\xa9\": 1}", R"({"\u00e8": "x", "\u00e9": 1})",
        R"({"\ud83d\ude00": "x", "\u00e9": 1})"}) {
    EXPECT_TRUE(Accepts(g, ok)) << ok;
    EXPECT_TRUE(MaskAccepts(g, ok)) << ok;
  }
  for (const std::string bad : {"{\"\xc3\xa9\": 1, \"\\u00e9\": 2}", R"({"\u00e9": "x"})",
                                R"({"\u00e9\u00e9": "x", "\u00e9": 1})", R"({"\u00e8": "x"})"}) {
    EXPECT_FALSE(Accepts(g, bad)) << bad;
    EXPECT_FALSE(MaskAccepts(g, bad)) << bad;
  }
}

// Pure-ASCII constants keep their one spelling and their jump-forward.
TEST(AsciiSpellingTest, AsciiConstantsStillJumpForward) {
  auto g = Compile(R"({"const":"hello"})");
  ASSERT_NE(g, nullptr);
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  ASSERT_TRUE(m->AcceptBytes("\""));  // Whitespace may come before it.
  EXPECT_EQ(m->ComputeJumpForward().bytes, "hello\"");
  auto e = Compile(R"({"const":"h\u00e9llo"})");
  ASSERT_NE(e, nullptr);
  std::unique_ptr<Matcher> n = Matcher::Create(e);
  ASSERT_TRUE(n->AcceptBytes("\""));
  EXPECT_EQ(n->ComputeJumpForward().bytes, "h");  // Then é as is or \u00e9.
  EXPECT_TRUE(Accepts(e, R"("h\u00e9llo")"));
  EXPECT_TRUE(Accepts(e, "\"h\xc3\xa9llo\""));
}

// Any JSON value (SpecKind::kBuiltinJson, and `true` schemas) spells its
// strings, keys included, both ways too; spellings no json.dumps writes
// (lone surrogates, uppercase hex) stay out (docs/architecture.md).
TEST(AsciiSpellingTest, BuiltinJsonTakesBothSpellings) {
  GrammarSpec spec;
  spec.kind = SpecKind::kBuiltinJson;
  auto g = CompileGrammar(spec, CompileOptions(), Bytes());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const std::string ok : {R"({"\u00e9": ["\ud83d\ude00", "caf\u00e9\u007f"]})",
                               "{\"\xc3\xa9\": [\"\\ud83d\\ude00\xf0\x9f\x98\x80\"]}"}) {
    EXPECT_TRUE(Accepts(*g, ok)) << ok;
    EXPECT_TRUE(MaskAccepts(*g, ok)) << ok;
  }
  for (const std::string bad : {R"(["\ud83d"])", R"(["\ude00\ud83d"])", R"(["\u00E9"])"}) {
    EXPECT_FALSE(Accepts(*g, bad)) << bad;
  }
}

// allOf parts that both have patternProperties, one with a non-trivial
// additionalProperties, were left unmerged and refused ("allOf whose parts
// cannot be merged"); with the same patterns on both sides they merge
// exactly. That is unevaluatedProperties beside an `if` without then/else
// (JSON-Schema-Test-Suite 2020-12 "unevaluatedProperties can see
// annotations from if without then and else").
TEST(SamePatternsMergeTest, PatternPartsWithAdditionalPropertiesMerge) {
  auto merged = Compile(
      R"({"allOf":[{"patternProperties":{"^f":{"type":"string"}}},
                   {"patternProperties":{"^f":true},"additionalProperties":{"type":"null"}}]})");
  ASSERT_NE(merged, nullptr);
  {
    EXPECT_TRUE(Accepts(merged, R"({"foo": "a", "fa": "b"})"));
    EXPECT_TRUE(Accepts(merged, R"({"foo": "a", "bar": null})"));
    EXPECT_FALSE(Accepts(merged, R"({"foo": 1})"));    // The first part's pattern schema.
    EXPECT_FALSE(Accepts(merged, R"({"bar": "a"})"));  // The second's additionalProperties.
    EXPECT_TRUE(Accepts(merged, "{}"));
  }
  auto if_only = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "if": {"patternProperties": {"foo": {"type": "string"}}}, "unevaluatedProperties": false})");
  ASSERT_NE(if_only, nullptr);
  {
    EXPECT_TRUE(Accepts(if_only, R"({"foo": "a"})"));
    EXPECT_TRUE(Accepts(if_only, R"({"xfoo": "a", "foo": "b"})"));
    EXPECT_TRUE(Accepts(if_only, "{}"));
    EXPECT_FALSE(Accepts(if_only, R"({"bar": "a"})"));
    EXPECT_FALSE(Accepts(if_only, R"({"foo": 1})"));  // `if` fails: nothing is evaluated.
    EXPECT_FALSE(Accepts(if_only, R"({"foo": "a", "bar": "b"})"));
    EXPECT_TRUE(Accepts(if_only, "3"));
  }
}

// unevaluatedProperties beside a conditional whose branch holds another one
// that evaluates properties ({"oneOf": [{"$ref": "#/$defs/two"}, ...]} with
// two a oneOf) was refused ("depend on whether it validates"); the inner
// conditional's options now join the branch's, guards and all.
TEST(NestedConditionalsTest, UnevaluatedSeesConditionalsInsideBranches) {
  auto g = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "$defs": {"two": {"oneOf": [{"required": ["c"], "properties": {"c": true}},
                                  {"required": ["d"], "properties": {"d": true}}]}},
      "anyOf": [{"$ref": "#/$defs/two"},
                {"if": {"required": ["i"], "properties": {"i": {"const": 1}}},
                 "then": {"properties": {"t": true}}, "else": {"properties": {"e": true}}}],
      "unevaluatedProperties": false})");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(Accepts(g, R"({"c": 1})"));
  EXPECT_TRUE(Accepts(g, R"({"d": 1})"));
  EXPECT_FALSE(Accepts(g, R"({"c": 1, "d": 1, "x": 1})"));  // Neither branch: no `two`.
  EXPECT_FALSE(Accepts(g, R"({"c": 1, "x": 1})"));
  EXPECT_TRUE(Accepts(g, R"({"i": 1, "t": 2})"));   // if holds: i and t evaluated.
  EXPECT_FALSE(Accepts(g, R"({"i": 1, "e": 2})"));  // e only where if fails.
  EXPECT_TRUE(Accepts(g, R"({"e": 2})"));           // if fails: its i is not evaluated...
  EXPECT_FALSE(Accepts(g, R"({"i": 2, "e": 2})"));  // ...so i stays unevaluated.
  EXPECT_TRUE(Accepts(g, R"({"c": 1, "e": 2})"));   // Both anyOf branches hold.
  EXPECT_TRUE(Accepts(g, "{}"));                    // The else branch holds on {}.
}

// unevaluatedProperties beside a $dynamicRef was refused ("depend on its
// target"); where the target does not depend on the path from the node
// (the root declares the anchor, or the node's dynamic scope already names
// the outermost declaring resource) the target's evaluation counts.
TEST(UnevaluatedBesideDynamicRefTest, StaticTargetsAreEvaluated) {
  auto rooted = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://example.com/derived", "$ref": "base",
      "$defs": {
        "derived": {"$dynamicAnchor": "addons", "properties": {"bar": {"type": "string"}}},
        "base": {"$id": "base", "unevaluatedProperties": false,
                 "properties": {"foo": {"type": "string"}}, "$dynamicRef": "#addons",
                 "$defs": {"d": {"$dynamicAnchor": "addons"}}}}})");
  ASSERT_NE(rooted, nullptr);
  {
    EXPECT_TRUE(Accepts(rooted, R"({"foo": "a", "bar": "b"})"));
    EXPECT_FALSE(Accepts(rooted, R"({"foo": "a", "bar": "b", "baz": "c"})"));
    EXPECT_FALSE(Accepts(rooted, R"({"bar": 1})"));
  }
  // Two resources extend genericList: which one's properties are evaluated
  // depends on the list that led there, one node per dynamic scope.
  auto scoped = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://example.com/main",
      "anyOf": [{"$ref": "numberList"}, {"$ref": "stringList"}],
      "$defs": {
        "genericList": {"$id": "genericList", "$dynamicRef": "#ext",
                        "properties": {"kind": true}, "unevaluatedProperties": false,
                        "$defs": {"default": {"$dynamicAnchor": "ext"}}},
        "numberList": {"$id": "numberList", "$ref": "genericList",
                       "$defs": {"t": {"$dynamicAnchor": "ext",
                                       "properties": {"n": {"type": "number"}}}}},
        "stringList": {"$id": "stringList", "$ref": "genericList",
                       "$defs": {"t": {"$dynamicAnchor": "ext",
                                       "properties": {"s": {"type": "string"}}}}}}})");
  ASSERT_NE(scoped, nullptr);
  {
    EXPECT_TRUE(Accepts(scoped, R"({"kind": 1, "n": 2})"));
    EXPECT_TRUE(Accepts(scoped, R"({"s": "x"})"));
    EXPECT_FALSE(Accepts(scoped, R"({"n": 2, "s": "x"})"));  // Neither list evaluates both.
    EXPECT_FALSE(Accepts(scoped, R"({"n": "a"})"));
    EXPECT_FALSE(Accepts(scoped, R"({"x": 1})"));
    EXPECT_TRUE(Accepts(scoped, R"({"kind": 1})"));
  }
}

// unevaluatedItems beside `contains` was refused ("depend on the items it
// matches"): the items a contains schema matches are evaluated, so the
// others must match the unevaluated schema.
TEST(UnevaluatedBesideContainsTest, MatchedItemsAreEvaluated) {
  auto zero = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "contains": {"type": "string"}, "minContains": 0, "unevaluatedItems": false})");
  ASSERT_NE(zero, nullptr);
  {
    EXPECT_TRUE(Accepts(zero, "[]"));
    EXPECT_TRUE(Accepts(zero, R"(["foo", "bar"])"));
    EXPECT_FALSE(Accepts(zero, "[0]"));
    EXPECT_FALSE(Accepts(zero, R"(["foo", 0])"));
  }
  auto nulls = Compile(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "contains": {"type": "string"}, "unevaluatedItems": {"type": "null"}})");
  ASSERT_NE(nulls, nullptr);
  {
    EXPECT_TRUE(Accepts(nulls, R"(["a", null, "b"])"));
    EXPECT_FALSE(Accepts(nulls, R"(["a", 1])"));
    EXPECT_FALSE(Accepts(nulls, "[null]"));  // contains fails.
    EXPECT_FALSE(Accepts(nulls, "[]"));
  }
}

}  // namespace
}  // namespace maskd
