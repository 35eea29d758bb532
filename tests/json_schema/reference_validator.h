// Test-only: decides whether a JSON value matches a normalized Schema by
// walking the node table directly. Comparing its verdicts with MaskBench's
// expected ones checks that normalization (refs, merges, aliases, emptiness)
// preserves the schema's meaning. Patterns are evaluated with ECMA-262
// semantics (compiler/json_schema/pattern_match.h; cross-checked against
// python3-jsonschema on Unicode classes by json_schema_python_crosscheck);
// formats are not checked.
#ifndef MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_
#define MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_

#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

bool ReferenceValidate(const Schema& schema, NodeId node, const JsonValue& value);

}  // namespace maskd::json_schema

#endif  // MASKD_TESTS_JSON_SCHEMA_REFERENCE_VALIDATOR_H_
