// The complement of a schema node, built from new nodes by De Morgan's laws:
// a node is the conjunction of its keywords, so its complement is the anyOf
// of "another type" and, per keyword, the instances of that keyword's type
// that violate it (minLength n -> strings of at most n-1 code points,
// required k -> objects without k, properties {k: S} -> objects whose k
// matches not-S, additionalProperties/patternProperties/propertyNames ->
// objects with some member violating them (SchemaNode::some_members),
// anyOf -> allOf of complements, ...). Keywords whose complement needs an
// existential the node table cannot state ("some item violates items",
// uniqueItems, format) make
// the negation fail with Unimplemented naming the keyword, so nothing is
// ever approximated.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/json_string.h"
#include "compiler/json_schema/normalize.h"
#include "compiler/json_schema/normalizer.h"

namespace maskd::json_schema {
namespace {

constexpr int kMaxNegationDepth = 64;
constexpr size_t kMaxOneOfPairs = 64;

std::string At(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

absl::Status NoComplement(std::string_view keyword, const SchemaNode& n) {
  return WithJsonPointer(
      absl::UnimplementedError(absl::StrCat("\"not\" of \"", std::string(keyword),
                                            "\" (no exact complement) at ", At(n.pointer))),
      At(n.pointer));
}

bool IsScalar(const JsonValue& v) {
  return v.kind() != JsonValue::Kind::kArray && v.kind() != JsonValue::Kind::kObject;
}

SchemaNode OfTypes(TypeSet types, const std::string& pointer) {
  SchemaNode x;
  x.types = types;
  x.pointer = pointer;
  return x;
}

}  // namespace

absl::StatusOr<NodeId> Normalizer::Negate(NodeId id) {
  negation_started_.clear();
  absl::StatusOr<NodeId> out = NegateAt(id, 0);
  if (!out.ok()) {
    // Placeholders of this call may be half written: forget them all.
    for (NodeId x : negation_started_) negation_.erase(x);
  }
  negation_started_.clear();
  return out;
}

absl::StatusOr<NodeId> Normalizer::NegateAt(NodeId id, int depth) {
  if (id == kTrueNode) return kFalseNode;
  if (id == kFalseNode) return kTrueNode;
  if (auto it = negation_.find(id); it != negation_.end()) return it->second;
  if (depth > kMaxNegationDepth) {
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat("\"not\" nested too deeply at ",
                                                                 At(s_.nodes[id].pointer))),
                           At(s_.nodes[id].pointer));
  }
  if (absl::Status st = Flatten(id, 0); !st.ok()) return st;
  if (s_.nodes[id].types == 0) return kTrueNode;
  // The placeholder is registered first so recursive schemas negate into a
  // cycle of new nodes.
  absl::StatusOr<NodeId> out = NewNode(s_.nodes[id].pointer);
  if (!out.ok()) return out.status();
  negation_[id] = *out;
  negation_started_.push_back(id);
  if (absl::Status st = NegateInto(id, *out, depth); !st.ok()) return st;
  return *out;
}

absl::Status Normalizer::NegateInto(NodeId id, NodeId out, int depth) {
  const SchemaNode n = s_.nodes[id];  // A copy: adding nodes moves the table.
  const std::string& ptr = n.pointer;
  const TypeSet types = n.types;
  std::vector<NodeId> alternatives;
  auto add = [&](SchemaNode part) -> absl::Status {
    if (part.types == 0) return absl::OkStatus();
    absl::StatusOr<NodeId> part_id = AddNode(std::move(part));
    if (!part_id.ok()) return part_id.status();
    alternatives.push_back(*part_id);
    return absl::OkStatus();
  };
  auto add_id = [&](absl::StatusOr<NodeId> part) -> absl::Status {
    if (!part.ok()) return part.status();
    if (*part != kFalseNode) alternatives.push_back(*part);
    return absl::OkStatus();
  };
  // Instances of the node's types (of those in `t`) that violate one keyword.
  auto typed = [&](TypeSet t) { return OfTypes(types & t, ptr); };
  auto negate = [&](NodeId x) { return NegateAt(x, depth + 1); };
#define MASKD_RETURN_IF_ERROR(expr)                       \
  do {                                                    \
    if (absl::Status st_ = (expr); !st_.ok()) return st_; \
  } while (0)

  if (types != kAllTypes) MASKD_RETURN_IF_ERROR(add(OfTypes(kAllTypes & ~types, ptr)));
  if (n.enum_values) {
    SchemaNode x = typed(kAllTypes);
    for (const JsonValue& v : *n.enum_values) {
      if (IsScalar(v)) {
        x.excluded_values.push_back(v);
        continue;
      }
      absl::StatusOr<NodeId> other = NotConst(v, ptr, depth + 1);
      if (!other.ok()) return other.status();
      x.all_of.push_back(*other);
    }
    MASKD_RETURN_IF_ERROR(add(std::move(x)));
  }
  if (!n.excluded_values.empty()) {
    SchemaNode x = typed(kAllTypes);
    x.enum_values = n.excluded_values;
    MASKD_RETURN_IF_ERROR(add(std::move(x)));
  }
  if (types & kStringType) {
    if (n.min_length > 0) {
      SchemaNode x = typed(kStringType);
      x.max_length = n.min_length - 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.max_length && *n.max_length < UINT64_MAX) {
      SchemaNode x = typed(kStringType);
      x.min_length = *n.max_length + 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    for (const std::string& p : n.patterns) {
      SchemaNode x = typed(kStringType);
      x.not_patterns = {p};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    for (const std::string& p : n.not_patterns) {
      SchemaNode x = typed(kStringType);
      x.patterns = {p};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    // A format the engine does not constrain (an annotation) has nothing to
    // negate; one it enforces (IsConstrainingFormat) has no complement here.
    if (n.format && IsConstrainingFormat(*n.format)) return NoComplement("format", n);
  }
  if (types & kNumberTypes) {
    if (n.minimum) {
      SchemaNode x = typed(kNumberTypes);
      x.maximum = NumericBound{n.minimum->value, !n.minimum->exclusive};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.maximum) {
      SchemaNode x = typed(kNumberTypes);
      x.minimum = NumericBound{n.maximum->value, !n.maximum->exclusive};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    // Numbers that are not multiples (multiple_of.h's machine spells them).
    for (const Decimal& m : n.multiple_of) {
      SchemaNode x = typed(kNumberTypes);
      x.not_multiple_of = {m};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    for (const Decimal& m : n.not_multiple_of) {
      SchemaNode x = typed(kNumberTypes);
      x.multiple_of = {m};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
  }
  if (types & kArrayType) {
    for (size_t i = 0; i < n.prefix_items.size(); ++i) {
      if (n.prefix_items[i] == kTrueNode) continue;
      absl::StatusOr<NodeId> item = negate(n.prefix_items[i]);
      if (!item.ok()) return item.status();
      SchemaNode x = typed(kArrayType);
      x.min_items = i + 1;
      x.prefix_items.assign(i, kTrueNode);
      x.prefix_items.push_back(*item);
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.items == kFalseNode) {
      SchemaNode x = typed(kArrayType);
      x.min_items = n.prefix_items.size() + 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    } else if (n.items != kTrueNode) {
      // Some item after the prefix violates `items`.
      absl::StatusOr<NodeId> other = negate(n.items);
      if (!other.ok()) return other.status();
      SchemaNode x = typed(kArrayType);
      x.min_items = n.prefix_items.size() + 1;
      x.some_items = {{n.prefix_items.size(), *other}};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.min_items > 0) {
      SchemaNode x = typed(kArrayType);
      x.max_items = n.min_items - 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.max_items && *n.max_items < UINT64_MAX) {
      SchemaNode x = typed(kArrayType);
      x.min_items = *n.max_items + 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.unique_items) return NoComplement("uniqueItems", n);
    if (n.contains != kNoNode) return NoComplement("contains", n);
    if (!n.some_items.empty()) return NoComplement("an item existential", n);
  }
  if (types & kObjectType) {
    // Some member violates patternProperties, additionalProperties or
    // propertyNames: an existential over the members (some_members). A
    // declared key's schema already includes the patterns it matches, so
    // its violations are the properties' below.
    if (!n.pattern_properties.empty() && !n.properties_include_patterns) {
      return NoComplement("patternProperties", n);
    }
    std::vector<JsonValue> declared;
    for (const auto& [key, value] : n.properties) declared.push_back(JsonValue::String(key));
    auto some_member = [&](SchemaNode key, NodeId value) -> absl::Status {
      key.pointer = ptr;
      key.types = kStringType;
      key.excluded_values = declared;
      absl::StatusOr<NodeId> key_id = AddNode(std::move(key));
      if (!key_id.ok()) return key_id.status();
      SchemaNode x = typed(kObjectType);
      x.some_members = {{*key_id, value}};
      return add(std::move(x));
    };
    for (const auto& [pattern, value] : n.pattern_properties) {
      if (value == kTrueNode) continue;
      absl::StatusOr<NodeId> other = negate(value);
      if (!other.ok()) return other.status();
      SchemaNode key;
      key.patterns = {pattern};
      MASKD_RETURN_IF_ERROR(some_member(std::move(key), *other));
    }
    if (n.additional_properties != kTrueNode) {
      absl::StatusOr<NodeId> other = negate(n.additional_properties);
      if (!other.ok()) return other.status();
      SchemaNode key;
      for (const auto& [pattern, value] : n.pattern_properties) key.not_patterns.push_back(pattern);
      MASKD_RETURN_IF_ERROR(some_member(std::move(key), *other));
    }
    if (n.property_names != kTrueNode) {
      // A key (declared or not) outside propertyNames.
      absl::StatusOr<NodeId> not_names = negate(n.property_names);
      if (!not_names.ok()) return not_names.status();
      absl::StatusOr<NodeId> strings = AddNode(OfTypes(kStringType, ptr));
      if (!strings.ok()) return strings.status();
      absl::StatusOr<NodeId> keys = Conj(*not_names, *strings, ptr);
      if (!keys.ok()) return keys.status();
      SchemaNode x = typed(kObjectType);
      x.some_members = {{*keys, kTrueNode}};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (!n.some_members.empty()) return NoComplement("a member existential", n);
    for (const auto& [key, value] : n.properties) {
      if (value == kTrueNode) continue;
      absl::StatusOr<NodeId> other = negate(value);
      if (!other.ok()) return other.status();
      SchemaNode x = typed(kObjectType);
      x.required = {key};
      x.properties = {{key, *other}};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    for (const std::string& key : n.required) {
      SchemaNode x = typed(kObjectType);
      x.properties = {{key, kFalseNode}};
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.min_properties > 0) {
      SchemaNode x = typed(kObjectType);
      x.max_properties = n.min_properties - 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    if (n.max_properties && *n.max_properties < UINT64_MAX) {
      SchemaNode x = typed(kObjectType);
      x.min_properties = *n.max_properties + 1;
      MASKD_RETURN_IF_ERROR(add(std::move(x)));
    }
    for (const auto& [key, deps] : n.dependent_required) {
      for (const std::string& dep : deps) {
        SchemaNode x = typed(kObjectType);
        x.required = {key};
        x.properties = {{dep, kFalseNode}};
        if (dep == key) continue;  // "k requires k" always holds.
        MASKD_RETURN_IF_ERROR(add(std::move(x)));
      }
    }
  }
  // Combinators.
  for (NodeId part : n.all_of) MASKD_RETURN_IF_ERROR(add_id(negate(part)));
  for (const std::vector<NodeId>* list : {&n.any_of, &n.one_of}) {
    if (list->empty()) continue;
    SchemaNode none = OfTypes(kAllTypes, ptr);  // No branch matches.
    for (NodeId branch : *list) {
      absl::StatusOr<NodeId> other = negate(branch);
      if (!other.ok()) return other.status();
      none.all_of.push_back(*other);
    }
    MASKD_RETURN_IF_ERROR(add(std::move(none)));
  }
  if (n.one_of.size() > 1) {
    // Or two branches match at once.
    size_t pairs = 0;
    for (size_t i = 0; i < n.one_of.size(); ++i) {
      for (size_t j = i + 1; j < n.one_of.size(); ++j) {
        // A value of a type n refuses is in the complement already.
        if (ProvablyDisjoint(s_, n.one_of[i], n.one_of[j], 0, n.types, &strings_)) continue;
        if (++pairs > kMaxOneOfPairs) return NoComplement("oneOf", n);
        MASKD_RETURN_IF_ERROR(add_id(Conj(n.one_of[i], n.one_of[j], ptr)));
      }
    }
  }
  if (n.not_schema != kNoNode) MASKD_RETURN_IF_ERROR(add_id(n.not_schema));
  if (n.if_schema != kNoNode) {
    // (if and not then) or (not if and not else).
    absl::StatusOr<NodeId> not_then = negate(n.then_schema);
    if (!not_then.ok()) return not_then.status();
    MASKD_RETURN_IF_ERROR(add_id(Conj(n.if_schema, *not_then, ptr)));
    absl::StatusOr<NodeId> not_if = negate(n.if_schema);
    if (!not_if.ok()) return not_if.status();
    absl::StatusOr<NodeId> not_else = negate(n.else_schema);
    if (!not_else.ok()) return not_else.status();
    MASKD_RETURN_IF_ERROR(add_id(Conj(*not_if, *not_else, ptr)));
  }
#undef MASKD_RETURN_IF_ERROR

  SchemaNode result;
  result.pointer = ptr;
  if (alternatives.empty()) {
    // The node constrains nothing: its complement matches nothing.
    result.types = 0;
    result.unsatisfiable = absl::StrCat("\"not\" of a schema every instance matches at ", At(ptr));
    result.unsatisfiable_pointer = At(ptr);
  } else if (alternatives.size() == 1) {
    result.all_of = alternatives;
  } else {
    result.any_of = std::move(alternatives);
  }
  s_.nodes[out] = std::move(result);
  return absl::OkStatus();
}

absl::StatusOr<NodeId> Normalizer::NotConst(const JsonValue& value, const std::string& pointer,
                                            int depth) {
  if (depth > kMaxNegationDepth) {
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat(
                               "\"not\" of a too deeply nested value at ", At(pointer))),
                           At(pointer));
  }
  SchemaNode result = OfTypes(kAllTypes, pointer);
  if (IsScalar(value)) {
    result.excluded_values = {value};
    return AddNode(std::move(result));
  }
  std::vector<SchemaNode> parts;
  if (value.kind() == JsonValue::Kind::kArray) {
    const auto& items = value.items();
    parts.push_back(OfTypes(kAllTypes & ~kArrayType, pointer));
    SchemaNode longer = OfTypes(kArrayType, pointer);
    longer.min_items = items.size() + 1;
    parts.push_back(std::move(longer));
    if (!items.empty()) {
      SchemaNode shorter = OfTypes(kArrayType, pointer);
      shorter.max_items = items.size() - 1;
      parts.push_back(std::move(shorter));
    }
    for (size_t i = 0; i < items.size(); ++i) {
      absl::StatusOr<NodeId> other = NotConst(items[i], pointer, depth + 1);
      if (!other.ok()) return other.status();
      SchemaNode x = OfTypes(kArrayType, pointer);
      x.min_items = i + 1;
      x.prefix_items.assign(i, kTrueNode);
      x.prefix_items.push_back(*other);
      parts.push_back(std::move(x));
    }
  } else {
    const auto& members = value.members();
    parts.push_back(OfTypes(kAllTypes & ~kObjectType, pointer));
    SchemaNode more = OfTypes(kObjectType, pointer);
    more.min_properties = members.size() + 1;
    parts.push_back(std::move(more));
    for (const auto& [key, member] : members) {
      SchemaNode missing = OfTypes(kObjectType, pointer);
      missing.properties = {{key, kFalseNode}};
      parts.push_back(std::move(missing));
      absl::StatusOr<NodeId> other = NotConst(member, pointer, depth + 1);
      if (!other.ok()) return other.status();
      SchemaNode differs = OfTypes(kObjectType, pointer);
      differs.required = {key};
      differs.properties = {{key, *other}};
      parts.push_back(std::move(differs));
    }
  }
  for (SchemaNode& part : parts) {
    absl::StatusOr<NodeId> id = AddNode(std::move(part));
    if (!id.ok()) return id.status();
    result.any_of.push_back(*id);
  }
  return AddNode(std::move(result));
}

}  // namespace maskd::json_schema
