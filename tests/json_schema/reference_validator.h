// Test-only: decides whether a JSON value matches a normalized Schema by
// walking the node table directly. Comparing its verdicts with MaskBench's
// expected ones checks that normalization (refs, merges, aliases, emptiness)
// preserves the schema's meaning. Patterns are evaluated with RE2 (close to,
// not identical with, ECMA-262); formats are not checked.
#ifndef MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_
#define MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_

#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

bool ReferenceValidate(const Schema& schema, NodeId node, const JsonValue& value);

}  // namespace maskd::json_schema

#endif  // MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_
