// Where tests and benchmarks find the data they need that is never committed:
// the real tokenizers (scripts/fetch_tokenizers.sh puts them in the cache) and
// MaskBench (next to the repository, as in CI). The one C++ copy of these
// rules; tests/support/data_paths.py is the Python one.
#ifndef MASKD_HARNESS_DATA_PATHS_H_
#define MASKD_HARNESS_DATA_PATHS_H_

#include <string>
#include <string_view>

namespace maskd::testing {

// Directory holding NAME/tokenizer.json: $MASKD_TOKENIZER_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers.
std::string TokenizerRootDir();

// TokenizerRootDir()/NAME; a NAME with a '/' is a directory already and is
// returned as is.
std::string TokenizerDir(std::string_view name);

// $MASKD_MASKBENCH, else <repository>/../shared/maskbench/dev.jsonl.gz.
std::string MaskBenchPath();

// A whole file; empty when it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace maskd::testing

#endif  // MASKD_HARNESS_DATA_PATHS_H_
