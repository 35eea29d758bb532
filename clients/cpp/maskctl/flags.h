// maskctl's flags (absl flags) and the command-line parser that applies them
// per command, so a flag that does not belong to a command, a malformed
// value or an unknown flag is a usage error (exit 2) with a precise message.
#ifndef MASKD_CLIENTS_CPP_MASKCTL_FLAGS_H_
#define MASKD_CLIENTS_CPP_MASKCTL_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(absl::Duration, deadline);
ABSL_DECLARE_FLAG(std::string, tokenizer);
ABSL_DECLARE_FLAG(std::string, tokenizer_dir);
ABSL_DECLARE_FLAG(std::string, kind);
ABSL_DECLARE_FLAG(std::string, start_rule);
ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(bool, require_call);
ABSL_DECLARE_FLAG(bool, single_call);
ABSL_DECLARE_FLAG(std::string, whitespace);
ABSL_DECLARE_FLAG(std::string, property_order);
ABSL_DECLARE_FLAG(std::string, unknown_formats);
ABSL_DECLARE_FLAG(std::string, default_dialect);
ABSL_DECLARE_FLAG(std::vector<std::string>, schema_resource);
ABSL_DECLARE_FLAG(bool, random);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(int32_t, max_tokens);
ABSL_DECLARE_FLAG(std::string, prompt_tail);
ABSL_DECLARE_FLAG(std::string, prompt_tail_tokens);
ABSL_DECLARE_FLAG(std::string, service);
ABSL_DECLARE_FLAG(std::string, tls_ca);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, tls_server_name);
ABSL_DECLARE_FLAG(std::string, token_file);

namespace maskd::maskctl {

// Applies `--name=value`, `--name value`, `--flag` / `--noflag` (booleans)
// from `args` to the absl flags named in `allowed`, and returns the other
// arguments in order. "--" ends flag parsing. InvalidArgument names the
// offending argument.
absl::StatusOr<std::vector<std::string>> ParseFlags(const std::vector<std::string>& args,
                                                    const std::vector<std::string>& allowed);

// "  --name=DEFAULT\n      help\n" for each flag in `names`.
std::string DescribeFlags(const std::vector<std::string>& names);

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_FLAGS_H_
