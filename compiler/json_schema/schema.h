// The normalized form of a JSON Schema that lowering consumes: a table of
// nodes addressed by NodeId. Sub-schemas are node ids, `$ref`s are resolved
// to the id of their target, so a recursive schema is a cycle of ids.
//
// Semantics of one node: an instance matches iff it matches every field
// below (fields for other types than the instance's are irrelevant) AND every
// node in `all_of` AND at least one of `any_of` (if non-empty) AND exactly one
// of `one_of` (if non-empty) AND not `not_schema` AND the if/then/else rule.
// After ParseSchema, `all_of` only holds what could not be merged into the
// node itself (see normalizer.h); a `$ref` is an `all_of` entry until merged.
// After ParseSchema, every node reachable from the root has its `not`,
// if/then/else, dependentRequired and oneOf rewritten into anyOf lists of
// merged nodes where that is exact (expand.cc); what remains carries the
// reason in `unsupported`.
#ifndef MASKD_COMPILER_JSON_SCHEMA_SCHEMA_H_
#define MASKD_COMPILER_JSON_SCHEMA_SCHEMA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/json_schema/decimal.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/numeric_regex.h"

namespace maskd::json_schema {

using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;
// Nodes 0 and 1 always exist: the `true` and `false` schemas.
inline constexpr NodeId kTrueNode = 0;
inline constexpr NodeId kFalseNode = 1;

// Instance types as a bit set. "number" is kInteger | kFraction, so that the
// intersection of "number" and "integer" is a plain AND.
using TypeSet = uint8_t;
inline constexpr TypeSet kNullType = 1 << 0;
inline constexpr TypeSet kBooleanType = 1 << 1;
inline constexpr TypeSet kIntegerType = 1 << 2;   // Numbers with an integer value.
inline constexpr TypeSet kFractionType = 1 << 3;  // Numbers with a non-integer value.
inline constexpr TypeSet kStringType = 1 << 4;
inline constexpr TypeSet kArrayType = 1 << 5;
inline constexpr TypeSet kObjectType = 1 << 6;
inline constexpr TypeSet kNumberTypes = kIntegerType | kFractionType;
inline constexpr TypeSet kAllTypes = 0x7f;

// SchemaNode::some_members entries one object may have to satisfy at once:
// each doubles the object's member states (lowering refuses more).
inline constexpr size_t kMaxSomeMembers = 4;
// Most distinct patternProperties schemas whose overlaps lowering splits into
// regions (2^n - n - 1 conjunctions are prepared).
inline constexpr size_t kMaxPatternSchemas = 4;

// "null, boolean, integer, ..." for messages.
std::string TypeSetToString(TypeSet types);
// The type bits a JSON value belongs to (a number: kIntegerType or kFractionType).
TypeSet TypeOf(const JsonValue& value);

enum class Draft { kDraft4, kDraft6, kDraft7, kDraft2019_09, kDraft2020_12 };

struct SchemaNode {
  // JSON pointer of the schema object this node came from ("" = root); for
  // nodes made by merging, the pointer of the node they were merged into.
  std::string pointer;

  // 0: the node matches nothing (the false schema, or constraints that
  // contradict each other in a place where that is harmless, e.g. an optional
  // property or one anyOf branch; lowering treats it as `false`). A root that
  // matches nothing compiles to a grammar that allows nothing.
  TypeSet types = kAllTypes;
  // Why types is 0 (with the JSON pointer of the cause), for diagnostics,
  // and that pointer as the message writes it (the error's maskd/json-pointer).
  std::string unsatisfiable;
  std::string unsatisfiable_pointer;
  // enum, or const as a one-value enum. Values that the node's own type and
  // scalar constraints exclude are already removed; never empty.
  std::optional<std::vector<JsonValue>> enum_values;

  // Scalars (null, booleans, numbers, strings) the instance must not equal:
  // what the complement of enum/const becomes (negate.cc).
  std::vector<JsonValue> excluded_values;

  // Strings (lengths in Unicode code points).
  uint64_t min_length = 0;
  std::optional<uint64_t> max_length;
  std::vector<std::string> patterns;      // ECMA-262 regexes, all must match (unanchored).
  std::vector<std::string> not_patterns;  // None may match (the complement of `pattern`).
  std::optional<std::string> format;

  // Numbers.
  std::optional<NumericBound> minimum;
  std::optional<NumericBound> maximum;
  std::vector<Decimal> multiple_of;      // All must divide the value.
  std::vector<Decimal> not_multiple_of;  // None may divide it (the complement of multipleOf).

  // Arrays. prefix_items[i] constrains item i, `items` every later item.
  std::vector<NodeId> prefix_items;
  NodeId items = kTrueNode;
  uint64_t min_items = 0;
  std::optional<uint64_t> max_items;
  bool unique_items = false;
  NodeId contains = kNoNode;
  uint64_t min_contains = 1;
  std::optional<uint64_t> max_contains;
  // Set by normalization where `contains` has an expressible complement:
  // items AND contains, items AND NOT contains (what lowering counts).
  NodeId contains_match = kNoNode;
  NodeId contains_miss = kNoNode;
  // Each entry: at least one item at index `from` or later matches `value`
  // (the complement of `items` after prefixItems: "some item violates it";
  // negate.cc). `from` never exceeds prefix_items.size() (merging only
  // lengthens the prefix).
  struct SomeItem {
    uint64_t from = 0;
    NodeId value = kTrueNode;
    bool operator==(const SomeItem& o) const { return from == o.from && value == o.value; }
  };
  std::vector<SomeItem> some_items;
  // For lowering, as some_member_values: per item schema at an index some
  // entry covers and per non-empty set of entries, their conjunction.
  struct SomeItemValue {
    NodeId item = kTrueNode;
    uint32_t entries = 0;
    NodeId value = kTrueNode;
  };
  std::vector<SomeItemValue> some_item_values;

  // Objects. A member whose key is in `properties` matches that schema; every
  // member whose key matches a pattern matches that pattern's schema; members
  // matched by neither match `additional_properties`.
  std::vector<std::pair<std::string, NodeId>> properties;  // Schema order.
  std::vector<std::string> required;                       // No duplicates.
  std::vector<std::pair<std::string, NodeId>> pattern_properties;
  // True when every declared property's schema already includes the schemas
  // of the patternProperties its key matches, and every required key that
  // matches a pattern is declared (Normalizer::AbsorbPatternProperties): a
  // declared key then has exactly one schema, its property's.
  bool properties_include_patterns = false;
  // For lowering, where patterns with different schemas overlap (a key
  // matching several must match all their schemas): for each set of two or
  // more distinct pattern schemas, their conjunction (pattern_properties.cc;
  // none past kMaxPatternSchemas distinct schemas).
  struct PatternConjunction {
    std::vector<NodeId> values;  // Distinct, in pattern_properties order.
    NodeId value = kTrueNode;
  };
  std::vector<PatternConjunction> pattern_conjunctions;
  NodeId additional_properties = kTrueNode;
  NodeId property_names = kTrueNode;  // Applied to keys as JSON strings.
  uint64_t min_properties = 0;
  std::optional<uint64_t> max_properties;
  // If the key is present, these keys must be present too.
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  // Each entry: at least one member whose key (as a JSON string) matches
  // `key` and whose value matches `value`. What the complements of
  // additionalProperties, patternProperties and propertyNames need ("some
  // member violates them"; negate.cc). Expansion splits off the declared
  // keys `key` admits (member_witness.cc), so lowering meets only entries
  // whose keys are other keys.
  struct SomeMember {
    NodeId key = kTrueNode;
    NodeId value = kTrueNode;
    bool operator==(const SomeMember& o) const { return key == o.key && value == o.value; }
  };
  std::vector<SomeMember> some_members;
  // For lowering: one other key's member may satisfy several entries at
  // once. For each schema other keys may have here (a pattern's or
  // additionalProperties') and each non-empty set of entries (bits), the
  // conjunction of that schema with the entries' values.
  struct SomeMemberValue {
    NodeId class_value = kTrueNode;
    uint32_t entries = 0;
    NodeId value = kTrueNode;
  };
  std::vector<SomeMemberValue> some_member_values;

  // Combinators.
  std::vector<NodeId> all_of;
  std::vector<NodeId> any_of;
  std::vector<NodeId> one_of;
  // True when the one_of branches are provably pairwise disjoint, so the
  // lowering may treat one_of as any_of exactly (ProvablyDisjoint, normalize.h).
  bool one_of_disjoint = false;
  NodeId not_schema = kNoNode;
  NodeId if_schema = kNoNode;  // then/else default to true.
  NodeId then_schema = kTrueNode;
  NodeId else_schema = kTrueNode;
  // Why a combinator of this node (not, if, oneOf) could not be rewritten
  // into anyOf (expand.cc); lowering refuses the node with this message,
  // naming `unsupported_pointer` (as the message writes it).
  std::string unsupported;
  std::string unsupported_pointer;

  // Whether the node constrains instances by anything but its combinators
  // (all_of, any_of, one_of, not, if/then/else).
  bool HasOwnConstraints() const;

  // Helpers for lowering.
  NodeId PropertyNode(std::string_view key) const;  // kNoNode if not declared.
  bool IsRequired(std::string_view key) const;
};

// Calls fn on every sub-schema id field of `node` (items, properties,
// combinators, ...), allowing it to rewrite them. Unset fields (kNoNode) are
// skipped.
template <typename Fn>
void ForEachChildId(SchemaNode& node, Fn&& fn) {
  auto one = [&](NodeId& id) {
    if (id != kNoNode) fn(id);
  };
  for (NodeId& id : node.prefix_items) one(id);
  one(node.items);
  one(node.contains);
  one(node.contains_match);
  one(node.contains_miss);
  for (SchemaNode::SomeItem& i : node.some_items) one(i.value);
  for (SchemaNode::SomeItemValue& v : node.some_item_values) {
    one(v.item);
    one(v.value);
  }
  for (auto& [key, id] : node.properties) one(id);
  for (auto& [key, id] : node.pattern_properties) one(id);
  for (SchemaNode::PatternConjunction& c : node.pattern_conjunctions) {
    for (NodeId& id : c.values) one(id);
    one(c.value);
  }
  one(node.additional_properties);
  one(node.property_names);
  for (SchemaNode::SomeMember& m : node.some_members) {
    one(m.key);
    one(m.value);
  }
  for (SchemaNode::SomeMemberValue& v : node.some_member_values) {
    one(v.class_value);
    one(v.value);
  }
  for (NodeId& id : node.all_of) one(id);
  for (NodeId& id : node.any_of) one(id);
  for (NodeId& id : node.one_of) one(id);
  one(node.not_schema);
  one(node.if_schema);
  one(node.then_schema);
  one(node.else_schema);
}

// A keyword ParseSchema did not act on (permissive mode), for compile stats.
struct IgnoredKeyword {
  std::string keyword;
  std::string pointer;  // The schema object holding it.
};

struct Schema {
  std::vector<SchemaNode> nodes;
  NodeId root = kTrueNode;
  Draft draft = Draft::kDraft2020_12;
  std::vector<IgnoredKeyword> ignored_keywords;

  const SchemaNode& node(NodeId id) const { return nodes[static_cast<size_t>(id)]; }
  // Human-readable dump of every node (for tests and debugging).
  std::string DebugString() const;
};

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_SCHEMA_H_
