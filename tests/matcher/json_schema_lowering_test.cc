// JSON Schema specs through the engine, checked document by document: each
// case lists documents the schema accepts and ones it rejects (in the
// canonical json.dumps spelling with ", " and ": "). The vocabulary is every
// single byte, so AcceptBytes and token masks see the same strings.
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::shared_ptr<testing::SmallVocabTokenizer> ByteVocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
  return tok;
}

struct Case {
  std::string schema;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

TEST(JsonSchemaLoweringTest, DocumentsAcceptedAndRejected) {
  const std::vector<Case> cases = {
      {R"({"type":"string","minLength":2,"maxLength":3})",
       {R"("ab")", R"("abc")", R"("\n\"")", R"("éé")"},
       {R"("a")", R"("abcd")", R"("\u000a")", "\"a\nb\"", R"(ab)"}},
      {R"({"type":"string","pattern":"^[a-z]+\\d$"})", {R"("ab1")"}, {R"("ab")", R"("1")"}},
      {R"({"type":"string","format":"date"})",
       {R"("2024-02-29")", R"("2023-12-31")"},
       {R"("2023-02-29")", R"("2023-04-31")", R"("2023-13-01")"}},
      {R"({"type":"string","format":"uri"})",
       {R"("https://example.com/a?b=c#d")", R"("urn:isbn:0451450523")"},
       {R"("not a uri")", R"("http://exa mple.com")", R"("/relative")"}},
      {R"({"type":"string","format":"ipv4"})", {R"("192.168.0.1")"}, {R"("256.1.1.1")"}},
      {R"({"type":"string","format":"iri"})",
       {R"("https://例え.jp/パス?q=値#frag")", R"("urn:isbn:0451450523")"},
       {R"("not-an-iri")", R"("http://exa mple.com")"}},
      {R"({"type":"string","format":"iri-reference"})", {R"("/パス")", R"("a/b")"}, {R"("a b")"}},
      {R"({"type":"string","format":"json-pointer"})",
       {R"("")", R"("/a~1b/0")", R"("/é")"},
       {R"("a")", R"("/a~2")"}},
      {R"({"type":"string","format":"relative-json-pointer"})",
       {R"("0")", R"("1#")", R"("2/a/b")"},
       {R"("/a")", R"("01")"}},
      {R"({"type":"integer","minimum":-5,"exclusiveMaximum":10})",
       {"-5", "0", "9"},
       {"-6", "10", "1.5", "01"}},
      {R"({"type":"number","maximum":1.5})", {"1.5", "-2", "0.25", "1e-05"}, {"1.6", "2"}},
      {R"({"type":"number","multipleOf":0.01,"minimum":0})",
       {"0", "3", "1.25", "0.10", "1.5e-01", "2.25e+20"},
       {"1.255", "1e-03", "-1", "0.001"}},
      {R"({"type":"number","multipleOf":1})", {"3", "-40"}, {"3.5", "0.1"}},
      {R"({"not":{"type":"integer"},"type":"number","maximum":3})",
       {"2.5", "-0.5", "1.5e-07", "2.75e0"},
       {"2", "3.5", "1.0", "1e2"}},
      {R"({"enum":["a",1,null,{"k":[true]}]})",
       {R"("a")", "1", "1.0", "null", R"({"k": [true]})"},
       {R"("b")", "2", R"({"k": [false]})"}},
      {R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2})",
       {"[1]", "[1, 2]"},
       {"[]", "[1, 2, 3]", "[\"a\"]"}},
      {R"({"type":"array","prefixItems":[{"type":"string"}],"items":false})",
       {"[]", R"(["x"])"},
       {R"(["x", "y"])", "[1]"}},
      {R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},
          "required":["b"],"additionalProperties":false})",
       {R"({"b": "x"})", R"({"a": 1, "b": "x"})"},
       {"{}", R"({"a": 1})", R"({"b": "x", "a": 1})", R"({"b": "x", "c": 1})"}},
      {R"({"type":"object","properties":{"a":{"type":"integer"}},
          "additionalProperties":{"type":"boolean"}})",
       {R"({"a": 1, "z": true})", R"({"z": true, "a": 1})", "{}"},
       {R"({"a": true})", R"({"z": 1})"}},
      {R"({"type":"object","patternProperties":{"^x-":{"type":"integer"}},
          "additionalProperties":false,"propertyNames":{"maxLength":4}})",
       {R"({"x-ab": 1})", "{}"},
       {R"({"x-abc": 1})", R"({"y": 1})", R"({"x-a": "s"})"}},
      // Classes of other keys by schema: patterns sharing one may overlap,
      // and additionalProperties joins the patterns that share its schema.
      {R"({"type":"object","patternProperties":{"^.{1,3}$":{}}})",
       {R"({"abcd": [1], "a": {"b": 2}})", R"({"": 0})", "{}"},
       {R"({"a": 1,})"}},
      {R"({"type":"object","patternProperties":{"^a":{},"b$":true,"^c[0-9]*$":{"type":"string"}}})",
       {R"({"ab": 1, "c1": "s", "z": [2]})", R"({"b": null, "c": ""})"},
       {R"({"c1": 1})", R"({"c": 2})"}},
      {R"({"type":"object","patternProperties":{"^a":{},"^ab":true,"^c":{"type":"string"}},
          "additionalProperties":false})",
       {R"({"ab": 1, "a": "s", "c": "s"})"},
       {R"({"b": 1})", R"({"cb": 1})"}},
      {R"({"type":"object","minProperties":2,"maxProperties":2})",
       {R"({"a": 1, "b": 2})"},
       {R"({"a": 1})", R"({"a": 1, "b": 2, "c": 3})"}},
      {R"({"anyOf":[{"type":"null"},{"$ref":"#/$defs/list"}],
          "$defs":{"list":{"type":"array","items":{"$ref":"#"}}}})",
       {"null", "[]", "[null, [null, []]]"},
       {"[1]", "[[true]]"}},
      {R"({"oneOf":[{"type":"string"},{"type":"integer"}]})", {R"("s")", "3"}, {"true"}},
  };
  for (const Case& c : cases) {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = c.schema;
    auto g = CompileGrammar(spec, CompileOptions(), ByteVocab());
    ASSERT_TRUE(g.ok()) << c.schema << ": " << g.status();
    for (const std::string& doc : c.accepted)
      EXPECT_TRUE(Accepts(*g, doc)) << c.schema << " " << doc;
    for (const std::string& doc : c.rejected)
      EXPECT_FALSE(Accepts(*g, doc)) << c.schema << " " << doc;
  }
}

TEST(JsonSchemaLoweringTest, WhitespaceModes) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type":"array","items":{"type":"integer"}})";
  CompileOptions compact;
  compact.whitespace = WhitespaceMode::kCompact;
  auto g = CompileGrammar(spec, compact, ByteVocab());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "[1,2]"));
  EXPECT_FALSE(Accepts(*g, "[1, 2]"));
  CompileOptions bounded;
  bounded.max_whitespace_run = 3;
  g = CompileGrammar(spec, bounded, ByteVocab());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, " [1,   2\n]"));
  EXPECT_FALSE(Accepts(*g, "[1,    2]"));  // a 4-byte gap
}

TEST(JsonSchemaLoweringTest, RefusalsNameTheKeywordAndPointer) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"properties":{"a":{"not":{"type":"string","format":"date"}}}})",
       "\"not\" of \"format\" (no exact complement) at /properties/a/not"},
      {R"({"type":"string","format":"color"})", "format \"color\" is not supported"},
      {R"({"type":"string","format":"path"})", "unknown format \"path\""},
      {R"({"type":"array","uniqueItems":true,"items":{"type":"integer","minimum":0}})",
       "uniqueItems"},
      {R"({"oneOf":[{"uniqueItems":true},{"maxItems":3}]})", "oneOf"},
      {R"j({"type":"string","pattern":"a(?=b)"})j", "look"},
  };
  for (const auto& [schema, expected] : cases) {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema;
    auto g = CompileGrammar(spec, CompileOptions(), ByteVocab());
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_NE(std::string(g.status().message()).find(expected), std::string::npos)
        << schema << ": " << g.status();
  }
}

}  // namespace
}  // namespace maskd
