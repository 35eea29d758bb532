// "At least one member whose key is in K and whose value matches V"
// (SchemaNode::some_members), the existential that the complements of
// additionalProperties, patternProperties and propertyNames are made of.
// Lowering tracks it with one flag per entry over the object's other keys
// (keys no property declares), so the declared keys K admits are split off
// here first, exactly: {some (K, V)} on a node declaring k in K is
//   anyOf [ {required k, properties {k: V}},       (k is the member)
//           {some (K minus the declared keys, V)} ] (another key is)
// and the node's own schema for k is met by merging the branch into it.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/json_string.h"
#include "compiler/json_schema/normalizer.h"
#include "compiler/json_schema/pattern_match.h"

namespace maskd::json_schema {
namespace {

constexpr int kMaxKeyDepth = 16;

std::string At(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

absl::Status Undecidable(std::string_view what, const SchemaNode& n) {
  return WithJsonPointer(absl::UnimplementedError(
                             absl::StrCat("a key language with ", std::string(what),
                                          " (whether a declared key is in it) at ", At(n.pointer))),
                         At(n.pointer));
}

uint64_t CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

absl::Status Normalizer::PrepareSomeMembers(SchemaNode* t) {
  if (t->some_members.empty()) return absl::OkStatus();
  // The schemas an other key's value may have: additionalProperties', or
  // a pattern's (lowering refuses keys needing two of them).
  std::vector<NodeId> class_values = {t->additional_properties};
  for (const auto& [pattern, value] : t->pattern_properties) {
    if (std::find(class_values.begin(), class_values.end(), value) == class_values.end()) {
      class_values.push_back(value);
    }
  }
  t->some_member_values.clear();
  const size_t w = t->some_members.size();
  if (w > kMaxSomeMembers) return absl::OkStatus();  // Lowering refuses the node.
  for (NodeId v : class_values) {
    for (uint32_t entries = 1; entries < (uint32_t{1} << w); ++entries) {
      std::vector<NodeId> parts = {v};
      for (size_t j = 0; j < w; ++j) {
        if (entries & (uint32_t{1} << j)) parts.push_back(t->some_members[j].value);
      }
      absl::StatusOr<NodeId> all = ConjAll(parts, t->pointer);
      if (!all.ok()) return all.status();
      t->some_member_values.push_back({v, entries, *all});
    }
  }
  return absl::OkStatus();
}

absl::Status Normalizer::PrepareSomeItems(SchemaNode* t) {
  t->some_item_values.clear();
  const size_t w = t->some_items.size();
  if (w == 0 || w > kMaxSomeMembers) return absl::OkStatus();  // Lowering refuses more.
  uint64_t from = UINT64_MAX;
  for (const SchemaNode::SomeItem& i : t->some_items) from = std::min(from, i.from);
  // The item schemas at indexes some entry covers.
  std::vector<NodeId> item_values = {t->items};
  for (uint64_t i = from; i < t->prefix_items.size(); ++i) {
    const NodeId v = t->prefix_items[i];
    if (std::find(item_values.begin(), item_values.end(), v) == item_values.end()) {
      item_values.push_back(v);
    }
  }
  for (NodeId v : item_values) {
    for (uint32_t entries = 1; entries < (uint32_t{1} << w); ++entries) {
      std::vector<NodeId> parts = {v};
      for (size_t j = 0; j < w; ++j) {
        if (entries & (uint32_t{1} << j)) parts.push_back(t->some_items[j].value);
      }
      absl::StatusOr<NodeId> all = ConjAll(parts, t->pointer);
      if (!all.ok()) return all.status();
      t->some_item_values.push_back({v, entries, *all});
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Normalizer::KeyMatches(NodeId key_node, const std::string& key, int depth) {
  if (key_node == kTrueNode) return true;
  if (key_node == kFalseNode) return false;
  if (absl::Status st = Flatten(key_node, 0); !st.ok()) return st;
  const SchemaNode n = s_.nodes[key_node];  // A copy: Flatten below may move the table.
  if (depth > kMaxKeyDepth) return Undecidable("too deep a nesting", n);
  if (!(n.types & kStringType)) return false;
  if (!n.unsupported.empty() || !n.one_of.empty() || n.not_schema != kNoNode ||
      n.if_schema != kNoNode) {
    return Undecidable("oneOf, not or if/then/else", n);
  }
  if (n.format && IsConstrainingFormat(*n.format)) return Undecidable("a format", n);
  const JsonValue value = JsonValue::String(key);
  const std::string canonical = value.CanonicalKey();
  if (n.enum_values) {
    bool listed = false;
    for (const JsonValue& v : *n.enum_values) listed = listed || v.CanonicalKey() == canonical;
    if (!listed) return false;
  }
  for (const JsonValue& v : n.excluded_values) {
    if (v.CanonicalKey() == canonical) return false;
  }
  const uint64_t length = CodePoints(key);
  if (length < n.min_length || (n.max_length && length > *n.max_length)) return false;
  for (const std::vector<std::string>* list : {&n.patterns, &n.not_patterns}) {
    for (const std::string& pattern : *list) {
      absl::StatusOr<bool> m = EcmaPatternMatches(pattern, key);
      if (!m.ok()) return Undecidable(absl::StrCat("pattern \"", pattern, "\""), n);
      if (*m != (list == &n.patterns)) return false;
    }
  }
  for (NodeId part : n.all_of) {
    absl::StatusOr<bool> m = KeyMatches(part, key, depth + 1);
    if (!m.ok() || !*m) return m;
  }
  if (n.any_of.empty()) return true;
  for (NodeId branch : n.any_of) {
    absl::StatusOr<bool> m = KeyMatches(branch, key, depth + 1);
    if (!m.ok() || *m) return m;
  }
  return false;
}

absl::StatusOr<bool> Normalizer::SplitSomeMember(SchemaNode* n, std::vector<NodeId>* branches) {
  if (n->some_members.empty() || !(n->types & kObjectType)) return false;
  std::vector<std::string> declared;
  for (const auto& [key, value] : n->properties) declared.push_back(key);
  for (const std::string& key : n->required) {
    if (n->PropertyNode(key) == kNoNode) declared.push_back(key);
  }
  for (size_t i = 0; i < n->some_members.size(); ++i) {
    const SchemaNode::SomeMember m = n->some_members[i];
    std::vector<std::string> admitted;
    for (const std::string& key : declared) {
      absl::StatusOr<bool> in = KeyMatches(m.key, key, 0);
      if (!in.ok()) return in.status();
      if (*in) admitted.push_back(key);
    }
    if (admitted.empty()) continue;
    for (const std::string& key : admitted) {
      SchemaNode b;
      b.pointer = n->pointer;
      b.types = kObjectType;
      b.required = {key};
      b.properties = {{key, m.value}};
      absl::StatusOr<NodeId> id = AddNode(std::move(b));
      if (!id.ok()) return id.status();
      branches->push_back(*id);
    }
    SchemaNode others;
    others.pointer = s_.nodes[m.key < 2 ? kTrueNode : m.key].pointer;
    others.types = kStringType;
    for (const std::string& key : declared)
      others.excluded_values.push_back(JsonValue::String(key));
    absl::StatusOr<NodeId> others_id = AddNode(std::move(others));
    if (!others_id.ok()) return others_id.status();
    absl::StatusOr<NodeId> other_keys = Conj(m.key, *others_id, n->pointer);
    if (!other_keys.ok()) return other_keys.status();
    SchemaNode other;
    other.pointer = n->pointer;
    other.types = kObjectType;
    other.some_members = {{*other_keys, m.value}};
    absl::StatusOr<NodeId> other_id = AddNode(std::move(other));
    if (!other_id.ok()) return other_id.status();
    branches->push_back(*other_id);
    n->some_members.erase(n->some_members.begin() + static_cast<std::ptrdiff_t>(i));
    return true;
  }
  return false;
}

}  // namespace maskd::json_schema
