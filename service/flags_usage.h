// `maskd --help`: absl's own --help lists only flags defined in a file named
// after the program (maskd.cc), so for service/main.cc it printed "No flags
// matched" and exited 1. This lists maskd's own flags and lets
// main exit 0.
#ifndef MASKD_SERVICE_FLAGS_USAGE_H_
#define MASKD_SERVICE_FLAGS_USAGE_H_

#include <string>
#include <string_view>

namespace maskd {

// Whether argv asks for help: --help, -help, --helpfull, -h (before any "--").
bool WantsHelp(int argc, char** argv);

// `usage`, then every registered flag whose defining file's path contains
// `source_dir` (maskd's own flags, not absl's or gRPC's), sorted by name:
// "  --name (help) default: value".
std::string FlagsUsage(const std::string& usage, const std::string& source_dir);

}  // namespace maskd

#endif  // MASKD_SERVICE_FLAGS_USAGE_H_
