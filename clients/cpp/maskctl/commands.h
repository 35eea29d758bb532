// maskctl's commands: each parses nothing itself (flags are applied before
// it runs), takes its positional arguments and returns an exit code
// (exit_codes.h), writing results to stdout and diagnostics to stderr.
#ifndef MASKD_CLIENTS_CPP_MASKCTL_COMMANDS_H_
#define MASKD_CLIENTS_CPP_MASKCTL_COMMANDS_H_

#include <string>
#include <vector>

namespace maskd::maskctl {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* synopsis;  // "compile SPEC_FILE"
  const char* description;
  std::vector<std::string> flags;  // the flags it accepts
  int (*run)(const Args& args);
};

// Every command, in the order --help lists them.
const std::vector<Command>& AllCommands();

int RunCompile(const Args& args);
int RunTools(const Args& args);
int RunCheck(const Args& args);
int RunGenerate(const Args& args);
int RunHealth(const Args& args);
int RunTokenizers(const Args& args);

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_COMMANDS_H_
