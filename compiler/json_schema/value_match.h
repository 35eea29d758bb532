// Whether a concrete JSON value matches a normalized node: every field of the
// node and of the nodes it reaches (items, properties, patternProperties,
// additionalProperties, propertyNames, contains, uniqueItems, the
// complements' "some item/member" entries, dependentRequired, format, and
// the combinators). Lowering writes enum/const values as literals, so this
// is what applies the rest of the node to them: ValueMatchesLocally alone
// let `{"enum":[[1]],"items":{"type":"string"}}` accept [1], and an enum
// beside `format` accept values that are not of the format.
#ifndef MASKD_COMPILER_JSON_SCHEMA_VALUE_MATCH_H_
#define MASKD_COMPILER_JSON_SCHEMA_VALUE_MATCH_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

// ValueMatchesNode for many values of one schema: the canonical keys of each
// enum it meets are kept in a set (lowering checks every value of an enum of
// 10,000 against its own node).
class ValueMatcher {
 public:
  ValueMatcher(const Schema& schema, bool ignore_unknown_formats)
      : schema_(schema), ignore_unknown_formats_(ignore_unknown_formats) {}
  absl::StatusOr<bool> Matches(NodeId node, const JsonValue& value);

 private:
  absl::StatusOr<bool> Matches(NodeId node, const JsonValue& value, int depth);
  absl::StatusOr<bool> MatchesNode(NodeId id, const SchemaNode& n, const JsonValue& v, int depth);
  const absl::flat_hash_set<std::string>& EnumKeys(NodeId id, const SchemaNode& n);

  const Schema& schema_;
  const bool ignore_unknown_formats_;
  absl::flat_hash_map<NodeId, absl::flat_hash_set<std::string>> enum_keys_;
};

// Unimplemented (never a guess) when the answer depends on what the engine
// cannot evaluate: a pattern or format the ECMA engine refuses, an unknown
// format unless `ignore_unknown_formats`, or a schema cycle that does not
// consume the value (more than 200 nested checks).
absl::StatusOr<bool> ValueMatchesNode(const Schema& schema, NodeId node, const JsonValue& value,
                                      bool ignore_unknown_formats);

// The `format` part alone, on a string: true for formats the engine does
// not know when `ignore_unknown_formats`, Unimplemented otherwise.
absl::StatusOr<bool> StringMatchesFormat(const std::string& format, const std::string& value,
                                         bool ignore_unknown_formats);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_VALUE_MATCH_H_
