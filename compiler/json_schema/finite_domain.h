// The values of a schema node when they are a finite set of scalars (enum or
// const of strings, numbers, booleans and null; or the types null/boolean
// alone): what uniqueItems over such items needs, since "no value twice" is
// then a grammar of distinct lexemes (lower.cc, UniqueScalarArray).
#ifndef MASKD_COMPILER_JSON_SCHEMA_FINITE_DOMAIN_H_
#define MASKD_COMPILER_JSON_SCHEMA_FINITE_DOMAIN_H_

#include <optional>
#include <vector>

#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

// The distinct values (by canonical value: 1 and 1.0 are one) the node
// admits, in schema order; nullopt when they are not a finite set of
// scalars or the node has combinators this reading cannot see through.
// `false` and contradictions give the empty set.
std::optional<std::vector<JsonValue>> FiniteScalarDomain(const Schema& schema, NodeId id);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_FINITE_DOMAIN_H_
