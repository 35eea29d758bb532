#include "compiler/json_schema/schema.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace maskd::json_schema {

std::string TypeSetToString(TypeSet types) {
  std::vector<std::string> names;
  if (types & kNullType) names.push_back("null");
  if (types & kBooleanType) names.push_back("boolean");
  if ((types & kNumberTypes) == kNumberTypes) {
    names.push_back("number");
  } else if (types & kIntegerType) {
    names.push_back("integer");
  } else if (types & kFractionType) {
    names.push_back("non-integer number");
  }
  if (types & kStringType) names.push_back("string");
  if (types & kArrayType) names.push_back("array");
  if (types & kObjectType) names.push_back("object");
  if (names.empty()) return "nothing";
  return absl::StrJoin(names, ", ");
}

TypeSet TypeOf(const JsonValue& value) {
  switch (value.kind()) {
    case JsonValue::Kind::kNull:
      return kNullType;
    case JsonValue::Kind::kBoolean:
      return kBooleanType;
    case JsonValue::Kind::kNumber:
      return value.number().is_integer() ? kIntegerType : kFractionType;
    case JsonValue::Kind::kString:
      return kStringType;
    case JsonValue::Kind::kArray:
      return kArrayType;
    case JsonValue::Kind::kObject:
      return kObjectType;
  }
  return 0;
}

NodeId SchemaNode::PropertyNode(std::string_view key) const {
  for (const auto& [name, id] : properties) {
    if (name == key) return id;
  }
  return kNoNode;
}

bool SchemaNode::HasOwnConstraints() const {
  return types != kAllTypes || enum_values || !excluded_values.empty() || min_length > 0 ||
         max_length || !patterns.empty() || !not_patterns.empty() || format || minimum || maximum ||
         !multiple_of.empty() || !not_multiple_of.empty() || !prefix_items.empty() ||
         items != kTrueNode || min_items > 0 || max_items || unique_items || contains != kNoNode ||
         !properties.empty() || !required.empty() || !pattern_properties.empty() ||
         additional_properties != kTrueNode || property_names != kTrueNode || min_properties > 0 ||
         max_properties || !dependent_required.empty() || !some_members.empty() ||
         !some_items.empty();
}

bool SchemaNode::IsRequired(std::string_view key) const {
  for (const std::string& r : required) {
    if (r == key) return true;
  }
  return false;
}

namespace {

std::string Ids(const std::vector<NodeId>& ids) { return absl::StrJoin(ids, ","); }

}  // namespace

std::string Schema::DebugString() const {
  std::string out = absl::StrCat("root=", root, "\n");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const SchemaNode& n = nodes[i];
    absl::StrAppend(&out, i, " @", n.pointer.empty() ? "/" : n.pointer,
                    " types=", TypeSetToString(n.types));
    if (n.enum_values) {
      std::vector<std::string> v;
      for (const JsonValue& e : *n.enum_values) v.push_back(e.ToJson());
      absl::StrAppend(&out, " enum=[", absl::StrJoin(v, ","), "]");
    }
    if (!n.excluded_values.empty()) {
      std::vector<std::string> v;
      for (const JsonValue& e : n.excluded_values) v.push_back(e.ToJson());
      absl::StrAppend(&out, " not-enum=[", absl::StrJoin(v, ","), "]");
    }
    if (n.min_length) absl::StrAppend(&out, " minLength=", n.min_length);
    if (n.max_length) absl::StrAppend(&out, " maxLength=", *n.max_length);
    for (const std::string& p : n.patterns) absl::StrAppend(&out, " pattern=", p);
    for (const std::string& p : n.not_patterns) absl::StrAppend(&out, " not-pattern=", p);
    if (n.format) absl::StrAppend(&out, " format=", *n.format);
    if (n.minimum) {
      absl::StrAppend(&out, n.minimum->exclusive ? " >" : " >=", n.minimum->value.ToString());
    }
    if (n.maximum) {
      absl::StrAppend(&out, n.maximum->exclusive ? " <" : " <=", n.maximum->value.ToString());
    }
    for (const Decimal& m : n.multiple_of) absl::StrAppend(&out, " multipleOf=", m.ToString());
    for (const Decimal& m : n.not_multiple_of) {
      absl::StrAppend(&out, " not-multipleOf=", m.ToString());
    }
    if (!n.prefix_items.empty()) absl::StrAppend(&out, " prefixItems=", Ids(n.prefix_items));
    if (n.items != kTrueNode) absl::StrAppend(&out, " items=", n.items);
    if (n.min_items) absl::StrAppend(&out, " minItems=", n.min_items);
    if (n.max_items) absl::StrAppend(&out, " maxItems=", *n.max_items);
    if (n.unique_items) absl::StrAppend(&out, " uniqueItems");
    if (n.contains != kNoNode) absl::StrAppend(&out, " contains=", n.contains);
    for (const auto& [k, id] : n.properties) absl::StrAppend(&out, " prop[", k, "]=", id);
    if (!n.required.empty()) absl::StrAppend(&out, " required=", absl::StrJoin(n.required, ","));
    for (const auto& [k, id] : n.pattern_properties) {
      absl::StrAppend(&out, " patternProp[", k, "]=", id);
    }
    if (n.additional_properties != kTrueNode) {
      absl::StrAppend(&out, " additional=", n.additional_properties);
    }
    if (n.property_names != kTrueNode) absl::StrAppend(&out, " propertyNames=", n.property_names);
    if (n.min_properties) absl::StrAppend(&out, " minProperties=", n.min_properties);
    if (n.max_properties) absl::StrAppend(&out, " maxProperties=", *n.max_properties);
    for (const auto& [k, deps] : n.dependent_required) {
      absl::StrAppend(&out, " dependentRequired[", k, "]=", absl::StrJoin(deps, ","));
    }
    if (!n.all_of.empty()) absl::StrAppend(&out, " allOf=", Ids(n.all_of));
    if (!n.any_of.empty()) absl::StrAppend(&out, " anyOf=", Ids(n.any_of));
    if (!n.one_of.empty()) {
      absl::StrAppend(&out, " oneOf=", Ids(n.one_of), n.one_of_disjoint ? "(disjoint)" : "");
    }
    if (n.not_schema != kNoNode) absl::StrAppend(&out, " not=", n.not_schema);
    if (n.if_schema != kNoNode) {
      absl::StrAppend(&out, " if=", n.if_schema, " then=", n.then_schema, " else=", n.else_schema);
    }
    if (!n.unsupported.empty()) absl::StrAppend(&out, " unsupported=", n.unsupported);
    out += "\n";
  }
  return out;
}

}  // namespace maskd::json_schema
