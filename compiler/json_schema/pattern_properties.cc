// A member whose key is declared in `properties` and also matches
// patternProperties must match every one of those schemas (JSON Schema
// applies both keywords to it). Lowering gives each declared key one value
// schema, so the conjunction is made here, before the node's allOf parts are
// merged (Merge keeps it true): the property's schema becomes
// Conj(property, pattern schemas...). A required key that is not a property
// but matches patterns is declared the same way (its value then follows the
// patterns, not additionalProperties), after merging too.
//
// Patterns may also overlap each other (suite: patternProperties.json
// "multiple simultaneous patternProperties are validated"): a key matching
// several needs all their schemas. Lowering splits other keys into regions by
// the set of pattern schemas they match, so the conjunction of each set of two
// or more distinct schemas is prepared here (PreparePatternConjunctions).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/json_schema/normalizer.h"
#include "compiler/json_schema/pattern_match.h"

namespace maskd::json_schema {

absl::Status Normalizer::AbsorbPatternProperties(SchemaNode* t) {
  if (t->pattern_properties.empty()) {
    t->properties_include_patterns = true;
    return absl::OkStatus();
  }
  // The schemas of the patterns `key` matches; nullopt when a pattern cannot
  // be evaluated (lowering then refuses the node with the regex error).
  auto matching = [&](const std::string& key) -> std::optional<std::vector<NodeId>> {
    std::vector<NodeId> out;
    for (const auto& [pattern, value] : t->pattern_properties) {
      absl::StatusOr<bool> m = EcmaPatternMatches(pattern, key);
      if (!m.ok()) return std::nullopt;
      if (*m && value != kTrueNode) out.push_back(value);
    }
    return out;
  };
  std::vector<std::pair<std::string, NodeId>> properties = t->properties;
  // Properties taken in already (merging keeps them so) are not again.
  for (auto& [key, value] : properties) {
    if (t->properties_include_patterns) break;
    std::optional<std::vector<NodeId>> schemas = matching(key);
    if (!schemas) return absl::OkStatus();
    for (NodeId p : *schemas) {
      absl::StatusOr<NodeId> c = Conj(value, p, t->pointer);
      if (!c.ok()) return c.status();
      value = *c;
    }
  }
  for (const std::string& key : t->required) {
    if (t->PropertyNode(key) != kNoNode) continue;
    std::optional<std::vector<NodeId>> schemas = matching(key);
    if (!schemas) return absl::OkStatus();
    if (schemas->empty()) continue;  // additionalProperties (or nothing) applies: lowering's job.
    absl::StatusOr<NodeId> c = ConjAll(*schemas, t->pointer);
    if (!c.ok()) return c.status();
    properties.emplace_back(key, *c);
  }
  t->properties = std::move(properties);
  t->properties_include_patterns = true;
  return absl::OkStatus();
}

absl::Status Normalizer::PreparePatternConjunctions(SchemaNode* t) {
  t->pattern_conjunctions.clear();
  std::vector<NodeId> values;
  for (const auto& [pattern, value] : t->pattern_properties) {
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  if (values.size() < 2 || values.size() > kMaxPatternSchemas) return absl::OkStatus();
  for (uint32_t set = 1; set < (uint32_t{1} << values.size()); ++set) {
    if ((set & (set - 1)) == 0) continue;  // One schema: itself.
    std::vector<NodeId> parts;
    for (size_t i = 0; i < values.size(); ++i) {
      if (set & (uint32_t{1} << i)) parts.push_back(values[i]);
    }
    absl::StatusOr<NodeId> all = ConjAll(parts, t->pointer);
    if (!all.ok()) return all.status();
    t->pattern_conjunctions.push_back({std::move(parts), *all});
  }
  return absl::OkStatus();
}

}  // namespace maskd::json_schema
