// Reading a spec file for `maskctl compile` / `generate`: which kind it is
// (the --kind flag, else the extension) and the ConstraintSpec it becomes.
#ifndef MASKD_CLIENTS_CPP_MASKCTL_SPEC_FILE_H_
#define MASKD_CLIENTS_CPP_MASKCTL_SPEC_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "maskd/v1/compile.pb.h"

namespace maskd::maskctl {

// `kind`: json_schema, regex, gbnf, lark, ebnf, choices, builtin_json, or
// empty to take it from `path`'s extension. `path` may be empty only for
// builtin_json. Errors (InvalidArgument / NotFound) name the file or flag.
absl::StatusOr<v1::ConstraintSpec> ReadSpecFile(const std::string& path, const std::string& kind,
                                                const std::string& start_rule);

// Reads a whole file; NotFound naming it when it cannot be opened.
// A tools file (an array of {"name","parameters"} or OpenAI-style
// {"type":"function","function":{"name","parameters"}}) as a tool_calls spec;
// `format` is llama3_json, qwen3 or harmony.
absl::StatusOr<v1::ConstraintSpec> ReadToolsFile(const std::string& path, const std::string& format,
                                                 bool require_call, bool single_call);

absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// The compile-option flags as written; empty: the server's default.
struct CompileOptionFlags {
  std::string whitespace;                     // compact | flexible | bounded
  std::string property_order;                 // schema | any
  std::string unknown_formats;                // refuse | ignore
  std::string default_dialect;                // a $schema URI
  std::vector<std::string> schema_resources;  // URI=FILE
};
// The flags as CompileOptions; InvalidArgument naming a flag with another value
// (NotFound for a --schema_resource file that cannot be read).
absl::StatusOr<v1::CompileOptions> CompileOptionsFromFlags(const CompileOptionFlags& flags);

// CompileOptionFlags from --whitespace, --property_order, --unknown_formats,
// --default_dialect and --schema_resource.
CompileOptionFlags CompileOptionFlagValues();

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_SPEC_FILE_H_
