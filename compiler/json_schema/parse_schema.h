// ParseSchema: JSON Schema text -> normalized Schema (schema.h).
//
// Drafts 4, 6, 7, 2019-09 and 2020-12 spellings are accepted (the draft is
// read from the root `$schema`; without one, 2020-12 rules apply, as Python's
// jsonschema does): `$ref` siblings are ignored before 2019-09 (a sibling
// `$id` included: it does not move the base URI the `$ref` resolves against)
// and applied from 2019-09 on; array-form `items` means prefixItems in every
// draft; boolean and numeric exclusiveMinimum/Maximum are both understood;
// `dependencies` (drafts 4-7; unknown in a schema declaring 2019-09 or
// later) becomes dependentRequired (arrays) or an if/then rule (schemas), as
// does `dependentSchemas`; `$recursiveRef` is unknown in 2020-12. The per-draft rules are tested
// case by case in tests/json_schema/dialect_cases (json_schema_dialect_test).
//
// Keywords fall in four classes:
//  * handled (see schema.h);
//  * annotations, ignored: title, description, default, examples, $comment,
//    deprecated, readOnly, writeOnly, contentMediaType, contentEncoding,
//    contentSchema, $schema, $vocabulary, $defs/definitions (containers);
//  * known but unsupported validation keywords (unevaluatedProperties,
//    unevaluatedItems, $dynamicRef, $recursiveRef): always an error, because
//    ignoring them would admit invalid instances;
//  * unknown: an error in strict mode, otherwise ignored and listed in
//    Schema::ignored_keywords (extensions such as x-*, typos, draft-3 words).
//    A keyword newer than the declared draft counts as unknown (e.g. `if` or
//    `const` in a draft-04 schema), as validators of that draft ignore it;
//    so does one the declared draft dropped.
// Every error is InvalidArgument (or Unimplemented for unsupported features)
// and names a JSON pointer into the schema, e.g.
//   unsupported keyword "unevaluatedProperties" at /properties/a
//
// Only schemas reachable from the root are parsed (an unused definition with
// an unknown keyword does not fail the schema). `$ref` may point anywhere in
// the document (JSON pointer, percent-encoded or not, `$id`-based URIs,
// `$anchor`s and draft-6/7 "#name" ids). A reference to another document
// resolves when that document is known: one of ParseOptions::resources (the
// caller's), else a built-in metaschema (metaschemas.h); it is read under the
// referring schema's draft (one declaring another `$schema` is refused by
// name), and only the parts reached are parsed (the documents referred to
// are loaded and indexed up front, so that the $dynamicAnchors they declare
// are counted when deciding which $dynamicRefs depend on the path). Any other document is
// refused by name (Unimplemented, "remote $ref"): nothing is fetched.
// Schema parts of another document are named by absolute URI and pointer,
// "http://localhost:1234/tree.json#/definitions/node", in nodes and errors.
#ifndef MASKD_COMPILER_JSON_SCHEMA_PARSE_SCHEMA_H_
#define MASKD_COMPILER_JSON_SCHEMA_PARSE_SCHEMA_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

// A schema document that `$ref`s may name by `uri` (absolute; a fragment is
// ignored): it is what retrieving `uri` would give.
struct SchemaResource {
  std::string uri;
  std::string text;
};

struct ParseOptions {
  // Unknown keywords are errors instead of being ignored.
  bool strict_keywords = false;
  // A missing additionalProperties means false (objects only have the
  // declared properties) instead of the spec's true, in every schema that
  // declares properties/patternProperties or has type "object" alone (not in
  // fragments such as {"required": ["a"]} inside anyOf, which would otherwise
  // forbid every member).
  bool closed_objects = false;
  // Ignore (and list) known-but-unsupported keywords instead of failing. This
  // widens the language; only for experiments.
  bool ignore_unsupported = false;
  // Deepest JSON nesting of the schema document (through sub-schemas and
  // values, not `$ref`s): CompileOptions::max_recursion_depth.
  int max_depth = 128;
  // Upper bound on nodes, including those merging creates.
  int max_nodes = 1 << 20;
  // Rewrite not, if/then/else, dependentRequired and oneOf into anyOf and
  // distribute sibling constraints into anyOf branches (expand.cc), which is
  // what lowering needs. Off keeps the combinators as written (for tests
  // that inspect the parsed form, or compare the two).
  bool rewrite_combinators = true;
  // The `$schema` URI a schema without one is read as (CompileOptions::
  // default_dialect): the schema is then read exactly as if it declared it.
  // Empty: 2020-12 with the older drafts' leniencies described above.
  std::string default_dialect;
  // Documents besides the schema that `$ref`s may name by URI; they take
  // precedence over the built-in metaschemas of the same URI.
  std::vector<SchemaResource> resources;

  // strict_keywords and closed_objects.
  static ParseOptions Strict() {
    ParseOptions o;
    o.strict_keywords = true;
    o.closed_objects = true;
    return o;
  }
};

absl::StatusOr<Schema> ParseSchema(std::string_view text, const ParseOptions& options = {});

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_PARSE_SCHEMA_H_
