// The --tokenizer flag: which tokenizers to preload. Each value is a comma
// list of `name=DIR` or `name` (resolved to CACHE_DIR/name). The flag may be
// repeated; absl keeps only the last occurrence, so occurrences are collected
// from argv before absl parses it.
#ifndef MASKD_SERVICE_TOKENIZER_FLAGS_H_
#define MASKD_SERVICE_TOKENIZER_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd {

struct TokenizerSource {
  std::string name;
  std::string dir;  // Holds tokenizer.json (+ optional tokenizer_config.json).
};

// ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers, where the project's setup
// script unpacks tokenizers.
std::string DefaultTokenizerCacheDir();

// Every value given to --NAME in argv, in order (`--NAME=V`, `--NAME V`, and
// the single-dash spellings absl also accepts). Stops at "--".
std::vector<std::string> CollectFlagValues(int argc, char** argv, std::string_view name);

// Parses the collected values. INVALID_ARGUMENT on empty names or dirs, or a
// name given twice.
absl::StatusOr<std::vector<TokenizerSource>> ParseTokenizerFlags(
    const std::vector<std::string>& values, const std::string& cache_dir);

}  // namespace maskd

#endif  // MASKD_SERVICE_TOKENIZER_FLAGS_H_
