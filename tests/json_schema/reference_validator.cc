#include "tests/json_schema/reference_validator.h"

#include <set>
#include <string>

#include "compiler/json_schema/normalize.h"
#include "compiler/json_schema/pattern_match.h"

namespace maskd::json_schema {
namespace {

// ECMA-262 semantics, as JSON Schema specifies and the masks use (RE2, used
// before, reads \s, \d, \w and `.` differently). Patterns the engine refuses
// never reach a verdict that counts: the compile refuses them too.
bool Matches(const std::string& pattern, const std::string& s) {
  absl::StatusOr<bool> m = EcmaPatternMatches(pattern, s);
  return !m.ok() || *m;  // Unknown: assume match.
}

bool Validate(const Schema& schema, NodeId id, const JsonValue& v, int depth);

bool ValidateNode(const Schema& schema, const SchemaNode& n, const JsonValue& v, int depth) {
  if (!ValueMatchesLocally(n, v)) return false;
  auto ok = [&](NodeId child, const JsonValue& x) { return Validate(schema, child, x, depth + 1); };
  if (v.kind() == JsonValue::Kind::kArray) {
    const auto& items = v.items();
    for (size_t i = 0; i < items.size(); ++i) {
      NodeId s = i < n.prefix_items.size() ? n.prefix_items[i] : n.items;
      if (!ok(s, items[i])) return false;
    }
    if (n.unique_items) {
      std::set<std::string> seen;
      for (const JsonValue& x : items) {
        if (!seen.insert(x.CanonicalKey()).second) return false;
      }
    }
    // Normalized complements: some item from index `from` on matches.
    for (const SchemaNode::SomeItem& some : n.some_items) {
      bool found = false;
      for (size_t i = some.from; i < items.size(); ++i) found = found || ok(some.value, items[i]);
      if (!found) return false;
    }
    if (n.contains != kNoNode) {
      uint64_t count = 0;
      for (const JsonValue& x : items) count += ok(n.contains, x);
      if (count < n.min_contains || (n.max_contains && count > *n.max_contains)) return false;
    }
  }
  if (v.kind() == JsonValue::Kind::kObject) {
    for (const auto& [key, value] : v.members()) {
      bool matched = false;
      NodeId p = n.PropertyNode(key);
      if (p != kNoNode) {
        matched = true;
        if (!ok(p, value)) return false;
      }
      for (const auto& [pattern, s] : n.pattern_properties) {
        if (Matches(pattern, key)) {
          matched = true;
          if (!ok(s, value)) return false;
        }
      }
      if (!matched && !ok(n.additional_properties, value)) return false;
      if (!ok(n.property_names, JsonValue::String(key))) return false;
    }
    // Normalized complements: some member with a key in K and a value in V.
    for (const SchemaNode::SomeMember& m : n.some_members) {
      bool found = false;
      for (const auto& [key, value] : v.members()) {
        found = found || (ok(m.key, JsonValue::String(key)) && ok(m.value, value));
      }
      if (!found) return false;
    }
    for (const auto& [key, deps] : n.dependent_required) {
      bool present = false;
      for (const auto& m : v.members()) present = present || m.first == key;
      if (!present) continue;
      for (const std::string& d : deps) {
        bool has = false;
        for (const auto& m : v.members()) has = has || m.first == d;
        if (!has) return false;
      }
    }
  }
  for (NodeId a : n.all_of) {
    if (!ok(a, v)) return false;
  }
  if (!n.any_of.empty()) {
    bool any = false;
    for (NodeId a : n.any_of) any = any || ok(a, v);
    if (!any) return false;
  }
  if (!n.one_of.empty()) {
    int count = 0;
    for (NodeId a : n.one_of) count += ok(a, v);
    if (count != 1) return false;
  }
  if (n.not_schema != kNoNode && ok(n.not_schema, v)) return false;
  if (n.if_schema != kNoNode) {
    if (!(ok(n.if_schema, v) ? ok(n.then_schema, v) : ok(n.else_schema, v))) return false;
  }
  return true;
}

bool Validate(const Schema& schema, NodeId id, const JsonValue& v, int depth) {
  if (id == kTrueNode) return true;
  if (id == kFalseNode || depth > 200) return false;
  return ValidateNode(schema, schema.node(id), v, depth);
}

}  // namespace

bool ReferenceValidate(const Schema& schema, NodeId node, const JsonValue& value) {
  return Validate(schema, node, value, 0);
}

}  // namespace maskd::json_schema
