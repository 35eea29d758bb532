// The JSON Schema metaschemas (drafts 4, 6, 7, 2019-09, 2020-12 and the
// 2019-09/2020-12 vocabulary metaschemas) as built-in documents a `$ref` may
// name by URI, e.g. {"$ref": "http://json-schema.org/draft-07/schema#"}.
// Vendored from python3-jsonschema (metaschemas/NOTICE.md says why and under
// which licence) and embedded at build time.
#ifndef MASKD_COMPILER_JSON_SCHEMA_METASCHEMAS_H_
#define MASKD_COMPILER_JSON_SCHEMA_METASCHEMAS_H_

#include <optional>
#include <string_view>

namespace maskd::json_schema {

// The metaschema document retrieved at `uri` (absolute, without a fragment:
// "http://json-schema.org/draft-07/schema"), or nullopt when `uri` names no
// built-in metaschema.
std::optional<std::string_view> BuiltinMetaschema(std::string_view uri);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_METASCHEMAS_H_
