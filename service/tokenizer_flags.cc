#include "service/tokenizer_flags.h"

#include <cstdlib>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace maskd {

std::string DefaultTokenizerCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string base;
  if (xdg != nullptr && xdg[0] != '\0') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = absl::StrCat(home != nullptr ? home : "", "/.cache");
  }
  return absl::StrCat(base, "/maskd/tokenizers");
}

std::vector<std::string> CollectFlagValues(int argc, char** argv, std::string_view name) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (!absl::ConsumePrefix(&arg, absl::string_view(name.data(), name.size()))) continue;
    if (absl::ConsumePrefix(&arg, "=")) {
      values.emplace_back(arg);
    } else if (arg.empty() && i + 1 < argc) {
      values.emplace_back(argv[++i]);
    }
  }
  return values;
}

absl::StatusOr<std::vector<TokenizerSource>> ParseTokenizerFlags(
    const std::vector<std::string>& values, const std::string& cache_dir) {
  std::vector<TokenizerSource> sources;
  std::set<std::string> seen;
  for (const std::string& value : values) {
    for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      item = absl::StripAsciiWhitespace(item);
      TokenizerSource source;
      if (size_t eq = item.find('='); eq != absl::string_view::npos) {
        source.name = std::string(item.substr(0, eq));
        source.dir = std::string(item.substr(eq + 1));
        if (source.dir.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("--tokenizer '", item, "': empty directory after '='"));
        }
      } else {
        source.name = std::string(item);
        source.dir = absl::StrCat(cache_dir, "/", item);
      }
      if (source.name.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("--tokenizer '", item, "': empty name"));
      }
      if (!seen.insert(source.name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("--tokenizer: name '", source.name, "' given twice"));
      }
      sources.push_back(std::move(source));
    }
  }
  return sources;
}

}  // namespace maskd
