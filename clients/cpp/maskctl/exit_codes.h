// maskctl's exit codes: the contract shell scripts rely on (also printed by
// `maskctl --help`).
#ifndef MASKD_CLIENTS_CPP_MASKCTL_EXIT_CODES_H_
#define MASKD_CLIENTS_CPP_MASKCTL_EXIT_CODES_H_

namespace maskd::maskctl {

enum ExitCode : int {
  kExitOk = 0,
  // The server answered and said no: the spec does not compile, the text
  // leaves the grammar (or cannot end there), the server is not serving.
  kExitRejected = 1,
  // The command line is wrong, or a local file cannot be read or does not
  // match the server (e.g. the local tokenizer is not the server's).
  kExitUsage = 2,
  // The server could not be reached or failed the call (unknown tokenizer or
  // handle, deadline, internal error).
  kExitServerError = 3,
  // generate: --max_tokens was reached before the output could end.
  kExitTokenLimit = 4,
};

inline constexpr char kExitCodeHelp[] =
    "Exit codes:\n"
    "  0  success (compile: compiled; check: the text is a complete match; health: SERVING)\n"
    "  1  rejected by the server: the spec does not compile, the text leaves the grammar or\n"
    "     cannot end where it does, the service is not serving\n"
    "  2  usage: bad command line, unreadable file, local tokenizer differs from the server's\n"
    "  3  server or RPC error: unreachable, deadline, unknown tokenizer or handle, internal\n"
    "  4  generate: --max_tokens reached before the output could end (output still printed)\n";

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_EXIT_CODES_H_
