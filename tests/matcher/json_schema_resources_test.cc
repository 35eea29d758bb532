// `$ref`s to other documents: CompileOptions::schema_resources (the caller's
// documents, by URI) and the built-in metaschemas. A document neither names
// is still refused by name; nothing is fetched.
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

std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "resource-bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               const CompileOptions& options) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, options, Vocab());
}

// Every byte checked against its mask, EOS against CanStop.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
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

// A tree of documents as a server would hold them: relative `$ref`s between
// them, a fragment into one, an `$id` that moves the base to a folder.
CompileOptions WithRemotes() {
  CompileOptions options;
  options.schema_resources = {
      {"http://localhost:1234/tree.json", R"({
          "definitions": {"node": {"type": "object", "properties": {
              "value": {"$ref": "leaf.json"},
              "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
            "required": ["value"]}}})"},
      {"http://localhost:1234/leaf.json#", R"({"type": "integer", "minimum": 0})"},
      {"http://localhost:1234/folder/name.json", R"({"type": "string", "maxLength": 3})"},
  };
  return options;
}

TEST(JsonSchemaResourcesTest, RefIntoCallerDocumentsResolvesAcrossThem) {
  auto g =
      Compile(R"({"$ref": "http://localhost:1234/tree.json#/definitions/node"})", WithRemotes());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"value": 1})"));
  EXPECT_TRUE(Accepts(*g, R"({"value": 1, "children": [{"value": 2, "children": []}]})"));
  EXPECT_FALSE(Accepts(*g, R"({"value": -1})"));  // leaf.json's minimum
  EXPECT_FALSE(Accepts(*g, R"({"value": 1, "children": [{"value": "x"}]})"));
  EXPECT_FALSE(Accepts(*g, R"({"children": []})"));  // required
}

TEST(JsonSchemaResourcesTest, IdChangesTheBaseARelativeRefResolvesAgainst) {
  auto g = Compile(R"({"$id": "http://localhost:1234/", "items": {
      "$id": "folder/", "items": {"$ref": "name.json"}}})",
                   WithRemotes());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"([["abc"], []])"));
  EXPECT_FALSE(Accepts(*g, R"([["abcd"]])"));
  EXPECT_FALSE(Accepts(*g, R"([[1]])"));
}

TEST(JsonSchemaResourcesTest, UnknownDocumentIsStillRefusedByName) {
  auto g = Compile(R"({"properties": {"a": {"$ref": "http://localhost:1234/other.json"}}})",
                   WithRemotes());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("remote $ref \"http://localhost:1234/other.json\""));
  EXPECT_THAT(g.status().message(), HasSubstr("/properties/a/$ref"));
  // Without the resources the tree is unknown too.
  auto bare = Compile(R"({"$ref": "http://localhost:1234/tree.json#/definitions/node"})", {});
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(JsonSchemaResourcesTest, ErrorsInsideADocumentNameItsUri) {
  CompileOptions options;
  options.schema_resources = {{"https://example.com/bad.json", R"({"minLength": "x"})"},
                              {"https://example.com/broken.json", R"({"type": )"}};
  auto bad = Compile(R"({"$ref": "https://example.com/bad.json"})", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("https://example.com/bad.json#/minLength"));
  auto broken = Compile(R"({"$ref": "https://example.com/broken.json"})", options);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("https://example.com/broken.json"));
  EXPECT_THAT(broken.status().message(), HasSubstr("not valid JSON"));
}

TEST(JsonSchemaResourcesTest, DocumentDeclaringAnotherDraftIsRefused) {
  CompileOptions options;
  options.default_dialect = "http://json-schema.org/draft-07/schema#";
  options.schema_resources = {
      {"https://example.com/new.json",
       R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer"})"}};
  auto g = Compile(R"({"$ref": "https://example.com/new.json"})", options);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("another draft"));
}

// The draft-07 metaschema is built in. It asserts format "regex" on
// `pattern`, which has no exact language here: refused by name by default,
// and with unknown formats ignored (the caller's choice) the rest of the
// metaschema holds.
TEST(JsonSchemaResourcesTest, DraftSevenMetaschemaIsBuiltIn) {
  CompileOptions options;
  options.default_dialect = "http://json-schema.org/draft-07/schema#";
  const std::string schema = R"({"$ref": "http://json-schema.org/draft-07/schema#"})";
  auto strict = Compile(schema, options);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(strict.status().message(), HasSubstr("regex"));
  EXPECT_THAT(strict.status().message(), HasSubstr("http://json-schema.org/draft-07/schema#/"));
  options.unknown_formats = UnknownFormats::kIgnore;
  options.property_order = PropertyOrder::kAnyOrder;
  auto g = Compile(schema, options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"definitions": {"foo": {"type": "integer"}}})"));
  EXPECT_TRUE(Accepts(*g, R"({"type": ["string", "null"], "minLength": 2, "items": [true, {}]})"));
  EXPECT_FALSE(Accepts(*g, R"({"definitions": {"foo": {"type": 1}}})"));
  EXPECT_FALSE(Accepts(*g, R"({"minLength": -1})"));
  EXPECT_FALSE(Accepts(*g, R"({"type": ["string", "string"]})"));  // uniqueItems
  EXPECT_FALSE(Accepts(*g, R"(1)"));
}

}  // namespace
}  // namespace maskd
