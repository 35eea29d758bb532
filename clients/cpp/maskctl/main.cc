// maskctl: the maskd command-line client. `maskctl --help` lists the
// commands, `maskctl COMMAND --help` describes one.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cpp/maskctl/commands.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"

namespace maskd::maskctl {
namespace {

bool IsHelp(const std::string& arg) { return arg == "--help" || arg == "-h" || arg == "-help"; }

std::string GeneralHelp() {
  std::string text = "Usage: maskctl COMMAND [ARGS] [FLAGS]\n\nCommands:\n";
  for (const Command& command : AllCommands()) {
    absl::StrAppend(&text, "  ", command.synopsis, "\n");
  }
  absl::StrAppend(&text, "\n'maskctl COMMAND --help' describes a command and its flags.\n\n",
                  kExitCodeHelp);
  return text;
}

std::string CommandHelp(const Command& command) {
  return absl::StrCat("Usage: maskctl ", command.synopsis, "\n\n", command.description,
                      "\n\nFlags:\n", DescribeFlags(command.flags), "\n", kExitCodeHelp);
}

const Command* FindCommand(const std::string& name) {
  for (const Command& command : AllCommands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

int Main(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << GeneralHelp();
    return kExitUsage;
  }
  if (IsHelp(args[0]) || args[0] == "help") {
    if (args.size() > 1 && args[0] == "help") {
      if (const Command* command = FindCommand(args[1])) {
        std::cout << CommandHelp(*command);
        return kExitOk;
      }
      std::cerr << "maskctl: unknown command '" << args[1] << "'\n";
      return kExitUsage;
    }
    std::cout << GeneralHelp();
    return kExitOk;
  }
  const Command* command = FindCommand(args[0]);
  if (command == nullptr) {
    std::cerr << "maskctl: unknown command '" << args[0] << "'; 'maskctl --help' lists them\n";
    return kExitUsage;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const std::string& arg : rest) {
    if (arg == "--") break;
    if (IsHelp(arg)) {
      std::cout << CommandHelp(*command);
      return kExitOk;
    }
  }
  absl::StatusOr<std::vector<std::string>> positional = ParseFlags(rest, command->flags);
  if (!positional.ok()) {
    std::cerr << "maskctl " << command->name << ": " << positional.status().message()
              << "\n'maskctl " << command->name << " --help' lists its flags\n";
    return kExitUsage;
  }
  return command->run(*positional);
}

}  // namespace
}  // namespace maskd::maskctl

int main(int argc, char** argv) {
  return maskd::maskctl::Main(std::vector<std::string>(argv + 1, argv + argc));
}
