// The documents the JSON-parser benchmark parses, loaded once before timing:
// every schema of MaskBench (as compact JSON text) and a real tokenizer.json.
#ifndef MASKD_BENCH_JSON_PARSE_BENCH_INPUTS_H_
#define MASKD_BENCH_JSON_PARSE_BENCH_INPUTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd::json_parse_bench {

// $MASKD_MASKBENCH, else the dev split next to the repository.
std::string MaskBenchPath();
// <tokenizer dir>/<name>/tokenizer.json, the tokenizer dir being
// $MASKD_TOKENIZER_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers.
std::string TokenizerJsonPath(const std::string& name);

// The "schema" member of every line of a MaskBench JSON Lines file (gzip or
// plain; zlib reads both), each re-serialized as compact JSON.
absl::StatusOr<std::vector<std::string>> LoadMaskBenchSchemas(const std::string& path);

absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace maskd::json_parse_bench

#endif  // MASKD_BENCH_JSON_PARSE_BENCH_INPUTS_H_
