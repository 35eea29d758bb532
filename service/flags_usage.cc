#include "service/flags_usage.h"

#include <algorithm>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace maskd {

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "--helpfull" || arg == "-helpfull" ||
        arg == "-h") {
      return true;
    }
  }
  return false;
}

std::string FlagsUsage(const std::string& usage, const std::string& source_dir) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), source_dir)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string out = absl::StrCat(usage, "\n\nFlags:\n");
  for (const absl::CommandLineFlag* flag : flags) {
    absl::StrAppend(&out, "  --", flag->Name(), " (", flag->Help(), ")\n      default: ",
                    flag->DefaultValue().empty() ? "\"\"" : flag->DefaultValue(), "\n");
  }
  return out;
}

}  // namespace maskd
