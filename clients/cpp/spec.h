// Building the ConstraintSpec of a Compile request (or of an inline open) for
// each spec kind, and naming a spec's kind the way the service's metrics do.
#ifndef MASKD_CLIENTS_CPP_SPEC_H_
#define MASKD_CLIENTS_CPP_SPEC_H_

#include <string>
#include <vector>

#include "maskd/v1/compile.pb.h"

namespace maskd::client {

v1::ConstraintSpec JsonSchemaSpec(std::string schema_json);
v1::ConstraintSpec RegexSpec(std::string pattern);
// `start_rule` empty: the dialect's default.
v1::ConstraintSpec GrammarSpec(v1::GrammarDialect dialect, std::string text,
                               std::string start_rule = "");
v1::ConstraintSpec ChoicesSpec(std::vector<std::string> choices);
v1::ConstraintSpec BuiltinJsonSpec();
// An XGrammar structural tag (JSON text).
v1::ConstraintSpec StructuralTagSpec(std::string structural_tag_json);

struct ToolDef {
  std::string name;
  std::string parameters_json_schema;  // empty: any JSON object
};
// Tool calls in `format`'s syntax; maskd builds the structural tag.
v1::ConstraintSpec ToolCallsSpec(v1::ToolCallFormat format, const std::vector<ToolDef>& tools,
                                 bool require_call = false, bool single_call = false);

// json_schema | regex | ebnf | choices | builtin_json | structural_tag | none (the `kind`
// label of maskd_compile_duration_seconds).
const char* SpecKindName(const v1::ConstraintSpec& spec);

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SPEC_H_
