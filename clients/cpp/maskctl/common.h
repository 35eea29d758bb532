// What maskctl's commands share: the client built from the flags, the
// server tokenizer lookup, and reporting a failure with its exit code.
#ifndef MASKD_CLIENTS_CPP_MASKCTL_COMMON_H_
#define MASKD_CLIENTS_CPP_MASKCTL_COMMON_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "clients/cpp/client.h"

namespace maskd::maskctl {

// A client for --server with --deadline on every RPC.
std::unique_ptr<client::MaskdClient> ClientFromFlags();

// Writes "maskctl COMMAND: MESSAGE\n" to stderr and returns `exit_code`.
int Fail(std::string_view command, int exit_code, absl::string_view message);

// Reports a failed server call: "CODE: message (at LOCATION)". Item errors
// (the server judged the spec or op) exit with `item_exit_code`; anything
// else is a server/RPC error (exit 3).
int FailWithStatus(std::string_view command, const absl::Status& status, int item_exit_code);

// Text safe to print on one line: C escapes for controls, quotes and
// backslashes; UTF-8 left as is.
std::string Printable(std::string_view bytes);

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_COMMON_H_
