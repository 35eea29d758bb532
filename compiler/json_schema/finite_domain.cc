#include "compiler/json_schema/finite_domain.h"

#include <set>
#include <string>

namespace maskd::json_schema {

std::optional<std::vector<JsonValue>> FiniteScalarDomain(const Schema& schema, NodeId id) {
  if (id == kFalseNode) return std::vector<JsonValue>();
  const SchemaNode& n = schema.node(id);
  if (n.types == 0) return std::vector<JsonValue>();
  // Combinators left after normalization would need their own reading.
  if (!n.unsupported.empty() || !n.all_of.empty() || !n.any_of.empty() || !n.one_of.empty() ||
      n.not_schema != kNoNode || n.if_schema != kNoNode) {
    return std::nullopt;
  }
  std::vector<JsonValue> candidates;
  if (n.enum_values) {
    candidates = *n.enum_values;
  } else {
    if (n.types & ~(kNullType | kBooleanType)) return std::nullopt;
    if (n.types & kNullType) candidates.push_back(JsonValue());
    if (n.types & kBooleanType) {
      candidates.push_back(JsonValue::Boolean(true));
      candidates.push_back(JsonValue::Boolean(false));
    }
  }
  std::set<std::string> excluded;
  for (const JsonValue& x : n.excluded_values) excluded.insert(x.CanonicalKey());
  std::set<std::string> seen;
  std::vector<JsonValue> out;
  for (JsonValue& v : candidates) {
    if (v.kind() == JsonValue::Kind::kArray || v.kind() == JsonValue::Kind::kObject) {
      return std::nullopt;  // Several lexemes per value: no one unique lexeme.
    }
    const std::string key = v.CanonicalKey();
    if (excluded.contains(key) || !seen.insert(key).second) continue;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace maskd::json_schema
