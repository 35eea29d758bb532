#include "compiler/json_schema/parse_schema.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd::json_schema {
namespace {

using ::testing::HasSubstr;

Schema Parse(const std::string& text, const ParseOptions& options = {}) {
  absl::StatusOr<Schema> s = ParseSchema(text, options);
  EXPECT_TRUE(s.ok()) << text << "\n" << s.status();
  return s.ok() ? *std::move(s) : Schema();
}

absl::Status Error(const std::string& text, const ParseOptions& options = {}) {
  absl::StatusOr<Schema> s = ParseSchema(text, options);
  EXPECT_FALSE(s.ok()) << text << " parsed:\n" << (s.ok() ? s->DebugString() : "");
  return s.status();
}

// Why a schema matches nothing: it parses (an empty language is a valid
// schema) to a root that is `false` or has no types left.
std::string Unsatisfiable(const std::string& text) {
  Schema s = Parse(text);
  if (s.root == kFalseNode) return "matches nothing: it is false";
  EXPECT_EQ(s.node(s.root).types, 0) << text << "\n" << s.DebugString();
  return "matches nothing: " + s.node(s.root).unsatisfiable;
}

// The parsed form with combinators as written (no rewriting into anyOf).
ParseOptions AsWritten(ParseOptions options = {}) {
  options.rewrite_combinators = false;
  return options;
}

const SchemaNode& Root(const Schema& s) { return s.node(s.root); }
const SchemaNode& Prop(const Schema& s, const SchemaNode& n, const std::string& key) {
  NodeId id = n.PropertyNode(key);
  EXPECT_NE(id, kNoNode) << key;
  return s.node(id == kNoNode ? kTrueNode : id);
}

TEST(ParseSchemaTest, BooleanSchemas) {
  Schema t = Parse("true");
  EXPECT_EQ(t.root, kTrueNode);
  EXPECT_THAT(Unsatisfiable("false"), HasSubstr("matches nothing"));
  Schema empty = Parse("{}");
  EXPECT_EQ(Root(empty).types, kAllTypes);
}

TEST(ParseSchemaTest, TypesAndPropertyOrder) {
  Schema s = Parse(R"({"type": "object", "properties": {
      "zeta": {"type": ["string", "null"]}, "alpha": {"type": "number"},
      "mid": {"type": "integer"}}, "required": ["alpha", "alpha", "zeta"]})");
  const SchemaNode& root = Root(s);
  EXPECT_EQ(root.types, kObjectType);
  ASSERT_EQ(root.properties.size(), 3u);
  EXPECT_EQ(root.properties[0].first, "zeta");
  EXPECT_EQ(root.properties[1].first, "alpha");
  EXPECT_EQ(root.properties[2].first, "mid");
  EXPECT_EQ(root.required, (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_EQ(Prop(s, root, "zeta").types, kStringType | kNullType);
  EXPECT_EQ(Prop(s, root, "alpha").types, kNumberTypes);
  EXPECT_EQ(Prop(s, root, "mid").types, kIntegerType);
  EXPECT_EQ(root.additional_properties, kTrueNode);  // Spec default.
}

TEST(ParseSchemaTest, ClosedObjectsOption) {
  ParseOptions closed;
  closed.closed_objects = true;
  Schema s = Parse(R"({"properties": {"a": {}}})", closed);
  EXPECT_EQ(Root(s).additional_properties, kFalseNode);
  Schema open =
      Parse(R"({"properties": {"a": {}}, "additionalProperties": {"type": "string"}})", closed);
  EXPECT_EQ(open.node(Root(open).additional_properties).types, kStringType);
  Schema fragment = Parse(R"({"type": "object", "properties": {"a": {}, "b": {}},
      "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})",
                          AsWritten(closed));
  EXPECT_EQ(fragment.node(Root(fragment).any_of[0]).additional_properties, kTrueNode);
  EXPECT_EQ(Root(fragment).additional_properties, kFalseNode);
}

TEST(ParseSchemaTest, NotTrueMatchesNothing) {
  EXPECT_THAT(Unsatisfiable(R"({"not": {}})"), HasSubstr("matches nothing"));
  Schema s = Parse(R"({"anyOf": [{"not": true}, {"type": "string"}]})");
  EXPECT_EQ(s.node(Root(s).any_of[0]).types, 0);
}

TEST(ParseSchemaTest, RefsResolveToNodeIdsAndRecursionIsACycle) {
  Schema s = Parse(R"({"type": "object", "properties": {
      "child": {"$ref": "#"},
      "slash": {"$ref": "#/definitions/a~1b"},
      "tilde": {"$ref": "#/definitions/c~0d"},
      "space": {"$ref": "#/definitions/with%20space"},
      "list": {"$ref": "#/definitions/list"}},
    "definitions": {"a/b": {"type": "string"}, "c~d": {"type": "boolean"},
      "with space": {"type": "null"},
      "list": {"type": "array", "items": {"$ref": "#/definitions/list"}}}})");
  const SchemaNode& root = Root(s);
  EXPECT_EQ(root.PropertyNode("child"), s.root);
  EXPECT_EQ(Prop(s, root, "slash").types, kStringType);
  EXPECT_EQ(Prop(s, root, "tilde").types, kBooleanType);
  EXPECT_EQ(Prop(s, root, "space").types, kNullType);
  NodeId list = root.PropertyNode("list");
  EXPECT_EQ(s.node(list).types, kArrayType);
  EXPECT_EQ(s.node(list).items, list);
}

TEST(ParseSchemaTest, MutualRecursionThroughDefinitions) {
  Schema s = Parse(R"({"$ref": "#/$defs/a", "$defs": {
      "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
      "b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}}}})");
  const SchemaNode& a = Root(s);
  const SchemaNode& b = Prop(s, a, "b");
  EXPECT_EQ(b.PropertyNode("a"), s.root);
}

TEST(ParseSchemaTest, RefErrorsNameTheReferenceAndPointer) {
  absl::Status unknown = Error(R"({"properties": {"a": {"$ref": "#/definitions/nope"}}})");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("#/definitions/nope"));
  EXPECT_THAT(unknown.message(), HasSubstr("at /properties/a/$ref"));
  absl::Status remote = Error(R"({"properties": {"a": {"$ref": "http://example.com/s.json"}}})");
  EXPECT_EQ(remote.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(remote.message(), HasSubstr("remote $ref \"http://example.com/s.json\""));
  absl::Status other_file = Error(R"({"items": {"$ref": "other.json#/a"}})");
  EXPECT_THAT(other_file.message(), HasSubstr("at /items/$ref"));
  absl::Status anchor = Error(R"({"$ref": "#missing"})");
  EXPECT_THAT(anchor.message(), HasSubstr("no such anchor"));
  absl::Status self = Error(R"({"$ref": "#"})");
  EXPECT_THAT(self.message(), HasSubstr("circular"));
  absl::Status pair = Error(R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"},
      "b": {"allOf": [{"$ref": "#/$defs/a"}], "type": "string"}}})");
  EXPECT_THAT(pair.message(), HasSubstr("circular"));
}

TEST(ParseSchemaTest, IdsAndAnchors) {
  Schema s = Parse(R"({"$id": "http://example.com/root.json",
    "properties": {
      "rel": {"$ref": "item.json"},
      "abs": {"$ref": "http://example.com/item.json"},
      "anchor": {"$ref": "#name"},
      "draft7": {"$ref": "#old"},
      "inner": {"$ref": "item.json#/properties/x"}},
    "$defs": {
      "item": {"$id": "item.json", "type": "object", "properties": {"x": {"type": "null"}}},
      "named": {"$anchor": "name", "type": "string"},
      "old": {"$id": "#old", "type": "boolean"}}})");
  const SchemaNode& root = Root(s);
  EXPECT_EQ(root.PropertyNode("rel"), root.PropertyNode("abs"));
  EXPECT_EQ(Prop(s, root, "rel").types, kObjectType);
  EXPECT_EQ(Prop(s, root, "anchor").types, kStringType);
  EXPECT_EQ(Prop(s, root, "draft7").types, kBooleanType);
  EXPECT_EQ(Prop(s, root, "inner").types, kNullType);
}

// $dynamicRef compiles per dynamic scope (verdicts: dialect_cases.jsonl and a
// generated family against a dynamic-scope oracle, python_crosscheck.py);
// $recursiveRef is refused by name where its target depends on the path.
TEST(ParseSchemaTest, DynamicRefsThatDependOnThePath) {
  // Two resources declare "itemType" and the root does not: which applies
  // depends on whether numberList or stringList led to genericList, so
  // genericList's items are two nodes, one per dynamic scope.
  Schema two_paths = Parse(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://example.com/main",
      "anyOf": [{"$ref": "numberList"}, {"$ref": "stringList"}],
      "$defs": {
        "genericList": {"$id": "genericList", "items": {"$dynamicRef": "#itemType"},
                        "$defs": {"default": {"$dynamicAnchor": "itemType"}}},
        "numberList": {"$id": "numberList", "$ref": "genericList",
                       "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "number"}}},
        "stringList": {"$id": "stringList", "$ref": "genericList",
                       "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "string"}}}}})",
                           AsWritten());
  int generic_items = 0;
  for (const SchemaNode& n : two_paths.nodes) {
    generic_items += n.pointer == "/$defs/genericList/items";
  }
  EXPECT_EQ(generic_items, 2);
  // The same with the root declaring the anchor compiles: the root's wins.
  Schema rooted = Parse(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://example.com/main", "$ref": "genericList",
      "$defs": {
        "mine": {"$dynamicAnchor": "itemType", "type": "boolean"},
        "genericList": {"$id": "genericList", "items": {"$dynamicRef": "#itemType"},
                        "$defs": {"default": {"$dynamicAnchor": "itemType"}}},
        "numberList": {"$id": "numberList", "$ref": "genericList",
                       "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "number"}}}}})");
  EXPECT_EQ(rooted.node(Root(rooted).items).types, kBooleanType);
  absl::Status recursive = Error(R"({"$schema": "https://json-schema.org/draft/2019-09/schema",
      "$id": "https://example.com/a", "$recursiveAnchor": true, "$ref": "b",
      "$defs": {"b": {"$id": "b", "$recursiveAnchor": true,
                      "items": {"$recursiveRef": "#"}}}})");
  EXPECT_EQ(recursive.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(recursive.message(),
            "$recursiveRef depends on the dynamic scope (2 schema resources have "
            "\"$recursiveAnchor\": true) at /$defs/b/items/$recursiveRef");
  absl::Status not_hash = Error(R"({"$schema": "https://json-schema.org/draft/2019-09/schema",
      "items": {"$recursiveRef": "#/$defs/x"}, "$defs": {"x": {}}})");
  EXPECT_EQ(not_hash.code(), absl::StatusCode::kInvalidArgument);
  // Declared 2020-12 dropped $recursiveRef: an unknown keyword there.
  Schema d2020 = Parse(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "items": {"$recursiveRef": "#", "type": "string"}})");
  EXPECT_EQ(d2020.ignored_keywords.size(), 1u);
}

// Dynamic anchors declared in other documents count too: the documents the
// schema refers to are loaded before the names that depend on the path are
// chosen (the 2020-12 metaschema, reached by a $ref, declares "meta" in 8
// resources). Before, "itemType" below, declared by two remote resources,
// was refused as depending on the dynamic scope.
TEST(ParseSchemaTest, DynamicAnchorsOfReferredDocumentsAreTracked) {
  ParseOptions options = AsWritten();
  options.resources = {
      {"https://example.com/genericList",
       R"({"$id": "https://example.com/genericList", "items": {"$dynamicRef": "#itemType"},
           "$defs": {"default": {"$dynamicAnchor": "itemType"}}})"},
      {"https://example.com/numberList",
       R"({"$ref": "genericList",
           "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "number"}}})"},
      {"https://example.com/stringList",
       R"({"$ref": "genericList",
           "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "string"}}})"}};
  Schema s = Parse(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "anyOf": [{"$ref": "https://example.com/numberList"},
                {"$ref": "https://example.com/stringList"}]})",
                   options);
  // genericList's items once per list that led there, each naming its own
  // list's anchor.
  std::vector<std::string> targets;
  for (const SchemaNode& n : s.nodes) {
    if (n.pointer == "https://example.com/numberList#/$defs/t" ||
        n.pointer == "https://example.com/stringList#/$defs/t") {
      targets.push_back(n.pointer);
    }
  }
  EXPECT_THAT(targets, ::testing::UnorderedElementsAre("https://example.com/numberList#/$defs/t",
                                                       "https://example.com/stringList#/$defs/t"))
      << s.DebugString();
  int generic_items = 0;
  for (const SchemaNode& n : s.nodes) {
    generic_items += n.pointer == "https://example.com/genericList#/items";
  }
  EXPECT_EQ(generic_items, 2) << s.DebugString();
}

// A branch's evaluation is computed once per keyword: a $defs chain of
// anyOf pairs reaches its end along 2^n paths (n = 26 took minutes when each
// path walked it again).
TEST(ParseSchemaTest, UnevaluatedOverSharedBranchesIsLinear) {
  std::string defs;
  constexpr int kLevels = 26;
  for (int k = 0; k < kLevels; ++k) {
    absl::StrAppend(&defs, "\"d", k, "\": {\"anyOf\": [{\"$ref\": \"#/$defs/d", k + 1,
                    "\"}, {\"$ref\": \"#/$defs/d", k + 1, "\"}]},");
  }
  // The end evaluates nothing, so no option count stops the walk early.
  absl::StrAppend(&defs, "\"d", kLevels, "\": {\"type\": \"object\"}");
  const std::string text = absl::StrCat(
      R"({"$defs": {)", defs, R"(}, "$ref": "#/$defs/d0", "unevaluatedProperties": false})");
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Schema> s = ParseSchema(text, AsWritten());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(s.ok()) << s.status();
  EXPECT_LT(seconds, 2.0);
}

// What an unevaluated keyword's in-place subschemas evaluate is collected by
// a recursive walk: a long $ref chain is refused by name, not a stack overflow.
TEST(ParseSchemaTest, UnevaluatedOverALongRefChainIsRefusedByName) {
  auto chain = [](int n) {
    std::string defs;
    for (int i = 0; i < n; ++i) {
      absl::StrAppend(&defs, "\"d", i, "\": {\"$ref\": \"#/$defs/d", i + 1, "\"}, ");
    }
    return absl::StrCat(R"({"$schema": "https://json-schema.org/draft/2020-12/schema", )",
                        R"("$ref": "#/$defs/d0", "unevaluatedProperties": false, "$defs": {)", defs,
                        "\"d", n, R"(": {"properties": {"x": true}}}})");
  };
  Parse(chain(200));
  absl::Status deep = Error(chain(5000));
  EXPECT_EQ(deep.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(deep.message(), HasSubstr("nest deeper than 256"));
  EXPECT_THAT(deep.message(), HasSubstr("at /unevaluatedProperties"));
}

TEST(ParseSchemaTest, RefSiblingsDependOnDraft) {
  const std::string body = R"("definitions": {"a": {"type": "string"}},
      "properties": {"p": {"$ref": "#/definitions/a", "minLength": 3}}})";
  Schema d7 = Parse(R"({"$schema": "http://json-schema.org/draft-07/schema#", )" + body);
  EXPECT_EQ(Prop(d7, Root(d7), "p").min_length, 0u);
  EXPECT_EQ(d7.draft, Draft::kDraft7);
  Schema d2020 = Parse(R"({"$schema": "https://json-schema.org/draft/2020-12/schema", )" + body);
  EXPECT_EQ(Prop(d2020, Root(d2020), "p").min_length, 3u);
  EXPECT_EQ(Prop(d2020, Root(d2020), "p").types, kStringType);
}

TEST(ParseSchemaTest, KeywordsNewerThanTheDeclaredDraftAreUnknown) {
  Schema d4 = Parse(R"({"$schema": "http://json-schema.org/draft-04/schema#",
      "type": "string", "if": {"minLength": 2}, "then": {"maxLength": 1}, "const": "x"})");
  EXPECT_EQ(Root(d4).if_schema, kNoNode);
  EXPECT_FALSE(Root(d4).enum_values);
  EXPECT_EQ(d4.ignored_keywords.size(), 3u);
  Schema d7 = Parse(R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "type": "string", "if": {"minLength": 2}, "then": {"maxLength": 5}, "const": "x"})",
                    AsWritten());
  EXPECT_NE(Root(d7).if_schema, kNoNode);
  EXPECT_TRUE(Root(d7).enum_values);
}

TEST(ParseSchemaTest, NumericBoundSpellings) {
  Schema d4 = Parse(R"({"$schema": "http://json-schema.org/draft-04/schema#",
      "minimum": 1, "exclusiveMinimum": true, "maximum": 10.5, "exclusiveMaximum": false,
      "multipleOf": 0.5})");
  ASSERT_TRUE(Root(d4).minimum && Root(d4).maximum);
  EXPECT_EQ(Root(d4).minimum->value, *Decimal::FromString("1"));
  EXPECT_TRUE(Root(d4).minimum->exclusive);
  EXPECT_EQ(Root(d4).maximum->value, *Decimal::FromString("10.5"));
  EXPECT_FALSE(Root(d4).maximum->exclusive);
  EXPECT_EQ(Root(d4).multiple_of.size(), 1u);
  Schema d6 = Parse(R"({"exclusiveMinimum": 0, "minimum": -5, "exclusiveMaximum": 1e3})");
  EXPECT_EQ(Root(d6).minimum->value, Decimal());
  EXPECT_TRUE(Root(d6).minimum->exclusive);
  EXPECT_EQ(Root(d6).maximum->value, *Decimal::FromString("1000"));
  EXPECT_TRUE(Root(d6).maximum->exclusive);
}

TEST(ParseSchemaTest, ArrayKeywords) {
  Schema old = Parse(R"({"items": [{"type": "string"}, {"type": "integer"}],
      "additionalItems": false, "minItems": 1, "maxItems": 2, "uniqueItems": true})");
  const SchemaNode& r = Root(old);
  ASSERT_EQ(r.prefix_items.size(), 2u);
  EXPECT_EQ(old.node(r.prefix_items[1]).types, kIntegerType);
  EXPECT_EQ(r.items, kFalseNode);
  EXPECT_TRUE(r.unique_items);
  EXPECT_EQ(r.min_items, 1u);
  EXPECT_EQ(*r.max_items, 2u);
  Schema modern = Parse(R"({"prefixItems": [{"type": "null"}], "items": {"type": "boolean"},
      "contains": {"const": 1}, "minContains": 2, "maxContains": 3})");
  const SchemaNode& m = Root(modern);
  ASSERT_EQ(m.prefix_items.size(), 1u);
  EXPECT_EQ(modern.node(m.items).types, kBooleanType);
  EXPECT_EQ(m.min_contains, 2u);
  EXPECT_EQ(*m.max_contains, 3u);
  ASSERT_NE(m.contains, kNoNode);
  EXPECT_EQ(modern.node(m.contains).enum_values->size(), 1u);
  // additionalItems without array-form items has no effect.
  Schema ignored = Parse(R"({"items": {"type": "string"}, "additionalItems": false})");
  EXPECT_EQ(ignored.node(Root(ignored).items).types, kStringType);
}

TEST(ParseSchemaTest, ObjectKeywords) {
  Schema s = Parse(R"({"patternProperties": {"^x-": {"type": "string"}},
      "propertyNames": {"maxLength": 8}, "minProperties": 1, "maxProperties": 4,
      "dependentRequired": {"a": ["b", "c"]},
      "dependencies": {"d": ["e"], "f": {"required": ["g"]}}})",
                   AsWritten());
  const SchemaNode& r = Root(s);
  ASSERT_EQ(r.pattern_properties.size(), 1u);
  EXPECT_EQ(r.pattern_properties[0].first, "^x-");
  EXPECT_EQ(*s.node(r.property_names).max_length, 8u);
  EXPECT_EQ(r.min_properties, 1u);
  EXPECT_EQ(*r.max_properties, 4u);
  ASSERT_EQ(r.dependent_required.size(), 2u);
  EXPECT_EQ(r.dependent_required[0].second, (std::vector<std::string>{"b", "c"}));
  // The schema dependency became an if/then rule (in all_of, then merged
  // into the node, which had no if/then of its own).
  ASSERT_TRUE(r.all_of.empty());
  const SchemaNode& rule = r;
  ASSERT_NE(rule.if_schema, kNoNode);
  EXPECT_EQ(s.node(rule.if_schema).types, kObjectType);
  EXPECT_EQ(s.node(rule.if_schema).required, (std::vector<std::string>{"f"}));
  EXPECT_EQ(s.node(rule.then_schema).required, (std::vector<std::string>{"g"}));
}

TEST(ParseSchemaTest, EnumAndConstAreCanonicalValues) {
  Schema s = Parse(R"({"enum": [1, 1.0, 10e-1, "a", {"x": [1, null]}, {"x": [1.0, null]}]})");
  ASSERT_TRUE(Root(s).enum_values);
  ASSERT_EQ(Root(s).enum_values->size(), 3u);
  EXPECT_EQ((*Root(s).enum_values)[2].ToJson(), R"({"x":[1,null]})");
  EXPECT_EQ(Root(s).types, kIntegerType | kStringType | kObjectType);
  Schema c = Parse(R"({"const": "on", "enum": ["on", "off"]})");
  ASSERT_EQ(Root(c).enum_values->size(), 1u);
  EXPECT_EQ((*Root(c).enum_values)[0].string(), "on");
  // Values the node's own constraints exclude are dropped.
  Schema f = Parse(R"({"type": "string", "maxLength": 2, "enum": ["ab", "abc", 7]})");
  ASSERT_EQ(Root(f).enum_values->size(), 1u);
}

TEST(ParseSchemaTest, AllOfMergesIntoOneNode) {
  Schema s = Parse(R"({"allOf": [
      {"type": ["string", "null"], "minLength": 1, "maxLength": 10, "pattern": "^a"},
      {"type": "string", "minLength": 3, "maxLength": 20, "pattern": "b$"}]})");
  const SchemaNode& r = Root(s);
  EXPECT_TRUE(r.all_of.empty());
  EXPECT_EQ(r.types, kStringType);
  EXPECT_EQ(r.min_length, 3u);
  EXPECT_EQ(*r.max_length, 10u);
  EXPECT_EQ(r.patterns, (std::vector<std::string>{"^a", "b$"}));
  Schema n = Parse(R"({"allOf": [{"minimum": 3, "maximum": 9}, {"minimum": 5,
      "exclusiveMaximum": 9, "type": "number"}, {"type": "integer"}]})");
  EXPECT_EQ(Root(n).types, kIntegerType);
  EXPECT_EQ(Root(n).minimum->value, *Decimal::FromString("5"));
  EXPECT_TRUE(Root(n).maximum->exclusive);
}

TEST(ParseSchemaTest, AllOfMergesObjectsAndRefs) {
  const std::string defs = R"("$defs": {"base": {"type": "object",
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
        "required": ["id"]}})";
  Schema s = Parse(R"({)" + defs + R"(, "allOf": [{"$ref": "#/$defs/base"},
        {"properties": {"name": {"maxLength": 5}, "extra": {"type": "boolean"}},
         "required": ["name"]}]})");
  const SchemaNode& r = Root(s);
  EXPECT_TRUE(r.all_of.empty()) << s.DebugString();
  EXPECT_EQ(r.types, kObjectType);
  ASSERT_EQ(r.properties.size(), 3u);
  EXPECT_EQ(r.properties[0].first, "id");
  EXPECT_EQ(r.properties[2].first, "extra");
  EXPECT_EQ(r.required, (std::vector<std::string>{"id", "name"}));
  const SchemaNode& name = Prop(s, r, "name");
  EXPECT_EQ(name.types, kStringType);
  EXPECT_EQ(*name.max_length, 5u);
  EXPECT_EQ(Prop(s, r, "id").types, kIntegerType);
  // A side that closes the object forbids keys only the other side declares:
  // "id" is then both required and forbidden.
  EXPECT_THAT(Unsatisfiable(R"({)" + defs + R"(, "allOf": [{"$ref": "#/$defs/base"},
        {"properties": {"name": {}}, "additionalProperties": false}]})"),
              HasSubstr("required property \"id\""));
  Schema optional = Parse(R"({"allOf": [{"properties": {"a": {}, "b": {}}},
        {"properties": {"a": {}}, "additionalProperties": false}]})");
  EXPECT_EQ(Prop(optional, Root(optional), "b").types, 0);  // Present: never valid.
  EXPECT_EQ(Root(optional).additional_properties, kFalseNode);
}

TEST(ParseSchemaTest, AllOfKeepsWhatOneNodeCannotHold) {
  Schema s = Parse(R"({"allOf": [{"anyOf": [{"type": "string"}, {"type": "null"}]},
      {"anyOf": [{"maxLength": 3}, {"type": "null"}]},
      {"patternProperties": {"^a": {"type": "string"}}, "additionalProperties": false},
      {"properties": {"b": {}}, "patternProperties": {"^b": {}}}]})",
                   AsWritten());
  const SchemaNode& r = Root(s);
  EXPECT_EQ(r.any_of.size(), 2u);
  EXPECT_EQ(r.additional_properties, kFalseNode);
  // The second anyOf and the second object part (patterns on both sides, one
  // closing the object) stay separate allOf entries.
  ASSERT_EQ(r.all_of.size(), 2u);
  EXPECT_EQ(s.node(r.all_of[0]).any_of.size(), 2u);
  ASSERT_EQ(s.node(r.all_of[1]).pattern_properties.size(), 1u);
  EXPECT_EQ(s.node(r.all_of[1]).pattern_properties[0].first, "^b");
  EXPECT_EQ(s.node(r.all_of[1]).properties.size(), 1u);

  // A part without patterns merges: its key b matches no pattern of the
  // other part, so that part's additionalProperties (false) applies to it.
  Schema merged = Parse(R"({"allOf": [{"patternProperties": {"^a": {"type": "string"}},
      "additionalProperties": false}, {"properties": {"b": {}, "ab": {"type": "string"}}}]})",
                        AsWritten());
  EXPECT_TRUE(Root(merged).all_of.empty());
  EXPECT_EQ(Prop(merged, Root(merged), "b").types, 0);
  EXPECT_EQ(Prop(merged, Root(merged), "ab").types, kStringType);
}

TEST(ParseSchemaTest, ContradictionsMatchNothingAndSayWhere) {
  EXPECT_THAT(Unsatisfiable(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})"),
              HasSubstr("no common value"));
  EXPECT_THAT(Unsatisfiable(R"({"properties": {"a": {"type": "number", "minimum": 5, "maximum": 3}},
                       "required": ["a"],
                       "type": "object"})"),
              HasSubstr("minimum 5 is above maximum 3 at /properties/a"));
  EXPECT_THAT(Unsatisfiable(R"({"type": "string", "minLength": 5, "maxLength": 2})"),
              HasSubstr("minLength 5 > maxLength 2"));
  EXPECT_THAT(Unsatisfiable(R"({"type": "string", "const": 5})"), HasSubstr("no enum/const value"));
  EXPECT_THAT(Unsatisfiable(R"({"type": "integer", "minimum": 1.2, "maximum": 1.8})"),
              HasSubstr("no integer"));
  EXPECT_THAT(Unsatisfiable(R"({"const": 1, "enum": [2, 3]})"),
              HasSubstr("\"const\" is not one of \"enum\""));
  EXPECT_THAT(Unsatisfiable(R"({"anyOf": [{"type": "string", "minLength": 3, "maxLength": 1},
                                  {"allOf": [{"type": "null"}, {"type": "boolean"}]}]})"),
              HasSubstr("matches nothing"));
}

TEST(ParseSchemaTest, ContradictionInOptionalPartMeansFalse) {
  Schema s = Parse(R"({"type": "object", "properties": {
      "never": {"type": "array", "enum": ["a"]}, "ok": {"type": "string"}}})");
  const SchemaNode& never = Prop(s, Root(s), "never");
  EXPECT_EQ(never.types, 0);
  EXPECT_THAT(never.unsatisfiable, HasSubstr("/properties/never"));
  Schema any = Parse(R"({"anyOf": [{"type": "string", "minLength": 3, "maxLength": 1},
      {"type": "null"}]})");
  EXPECT_EQ(any.node(Root(any).any_of[0]).types, 0);
  EXPECT_EQ(any.node(Root(any).any_of[1]).types, kNullType);
}

TEST(ParseSchemaTest, OneOfDisjointness) {
  auto disjoint = [](const std::string& branches) {
    Schema s = Parse(absl::StrCat(R"({"oneOf": )", branches, "}"), AsWritten());
    return Root(s).one_of_disjoint;
  };
  EXPECT_TRUE(disjoint(R"([{"type": "string"}, {"type": "integer"}, {"type": "null"}])"));
  EXPECT_FALSE(disjoint(R"([{"type": "number"}, {"type": "integer"}])"));
  EXPECT_TRUE(disjoint(R"([{"const": "a"}, {"const": "b"}])"));
  EXPECT_TRUE(disjoint(R"([{"type": "string"}, {"enum": [1, 2]}])"));
  EXPECT_TRUE(disjoint(R"([{"type": "number", "maximum": 0},
                           {"type": "integer", "exclusiveMinimum": 0}])"));
  EXPECT_FALSE(disjoint(R"([{"type": "number", "maximum": 0}, {"type": "number", "minimum": 0}])"));
  // Without "type", a string matches both.
  EXPECT_FALSE(disjoint(R"([{"maximum": 0}, {"exclusiveMinimum": 0}])"));
  const std::string tagged = R"([
      {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {}},
       "required": ["kind"]},
      {"type": "object", "properties": {"kind": {"enum": ["square", "rect"]}},
       "required": ["kind", "w"]}])";
  EXPECT_TRUE(disjoint(tagged));
  const std::string untagged = R"([
      {"type": "object", "properties": {"kind": {"const": "circle"}}},
      {"type": "object", "properties": {"kind": {"const": "square"}}}])";
  EXPECT_FALSE(disjoint(untagged));  // Objects without "kind" match both.
}

TEST(ParseSchemaTest, StrictAndPermissiveKeywordHandling) {
  const std::string text =
      R"({"properties": {"a": {"type": "string", "x-custom": 1, "_format": "date"}}})";
  Schema permissive = Parse(text);
  ASSERT_EQ(permissive.ignored_keywords.size(), 2u);
  EXPECT_EQ(permissive.ignored_keywords[0].keyword, "x-custom");
  EXPECT_EQ(permissive.ignored_keywords[0].pointer, "/properties/a");
  absl::Status strict = Error(text, ParseOptions::Strict());
  EXPECT_EQ(strict.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(strict.message(), "unknown keyword \"x-custom\" at /properties/a");
  // An unknown keyword a $ref reaches into holds schemas (the suite's
  // "escaped pointer ref"): not an error. One nothing reaches still is, and
  // so is its sibling a $ref does not reach.
  Parse(R"({"tilda~field": {"type": "integer"}, "slash/field": {"type": "integer"},
      "percent%field": {"type": "integer"}, "properties": {
      "t": {"$ref": "#/tilda~0field"}, "s": {"$ref": "#/slash~1field"},
      "p": {"$ref": "#/percent%25field"}}})",
        ParseOptions::Strict());
  Parse(R"({"my-defs": {"a": {"b": {"type": "null"}}}, "$ref": "#/my-defs/a/b"})",
        ParseOptions::Strict());
  absl::Status unreached = Error(R"({"my-defs": {"type": "null"}, "my-deps": {"type": "null"},
      "properties": {"a": {"$ref": "#/my-defs"}}})",
                                 ParseOptions::Strict());
  EXPECT_EQ(unreached.message(), "unknown keyword \"my-deps\" at /");
  absl::Status prefix_only = Error(R"({"my": {"type": "null"}, "my-defs": {"type": "null"},
      "properties": {"a": {"$ref": "#/my-defs"}}})",
                                   ParseOptions::Strict());
  EXPECT_EQ(prefix_only.message(), "unknown keyword \"my\" at /");
  // Annotations are fine in strict mode.
  Parse(R"({"title": "t", "description": "d", "default": 1, "examples": [1],
      "$comment": "c", "deprecated": true, "readOnly": true, "writeOnly": false,
      "contentMediaType": "text/plain", "contentEncoding": "base64",
      "$schema": "https://json-schema.org/draft/2020-12/schema"})",
        ParseOptions::Strict());
  // What cannot be done exactly fails in both modes, by name.
  for (const ParseOptions& o : {ParseOptions(), ParseOptions::Strict()}) {
    absl::Status s = Error(R"({"properties": {"a": {"anyOf": [
        {"properties": {"x": true}}, true, true, true, true], "unevaluatedProperties": false}}})",
                           o);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
    EXPECT_EQ(s.message(),
              "\"unevaluatedProperties\" beside \"anyOf\" (the properties evaluated by "
              "/properties/a/anyOf depend on which of its 5 branches validate (at most 4 are "
              "resolved)) at /properties/a/unevaluatedProperties");
  }
  // Unreachable definitions are not inspected.
  Parse(R"({"$defs": {"unused": {"x-nope": 1}}, "type": "string"})", ParseOptions::Strict());
}

TEST(ParseSchemaTest, MalformedKeywordValuesAreNamed) {
  EXPECT_EQ(Error(R"({"properties": {"a": {"minLength": -1}}})").message(),
            "\"minLength\" must be a non-negative integer at /properties/a/minLength");
  EXPECT_THAT(Error(R"({"type": "strnig"})").message(), HasSubstr("at /type"));
  EXPECT_THAT(Error(R"({"anyOf": []})").message(), HasSubstr("at /anyOf"));
  EXPECT_THAT(Error(R"({"properties": {"a": 3}})").message(), HasSubstr("at /properties/a"));
  EXPECT_THAT(Error(R"({"multipleOf": 0})").message(), HasSubstr("at /multipleOf"));
  EXPECT_THAT(Error("{\"type\": ").message(), HasSubstr("not valid JSON"));
}

TEST(ParseSchemaTest, AbsurdSizesDoNotCrash) {
  Schema big = Parse(R"({"type": "string", "minLength": 1e9, "maxLength": 1e30})");
  EXPECT_EQ(Root(big).min_length, 1000000000u);
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += R"({"items": )";
  deep += "{}";
  for (int i = 0; i < 10000; ++i) deep += "}";
  EXPECT_THAT(Error(deep).message(), HasSubstr("deeper than"));
  std::string deep_but_allowed;
  for (int i = 0; i < 100; ++i) deep_but_allowed += R"({"items": )";
  deep_but_allowed += "{}";
  for (int i = 0; i < 100; ++i) deep_but_allowed += "}";
  Parse(deep_but_allowed);
  std::string huge_enum = R"({"enum": [)";
  for (int i = 0; i < 100000; ++i) absl::StrAppend(&huge_enum, i ? "," : "", "\"v", i, "\"");
  huge_enum += "]}";
  Schema e = Parse(huge_enum);
  EXPECT_EQ(Root(e).enum_values->size(), 100000u);
}

}  // namespace
}  // namespace maskd::json_schema
