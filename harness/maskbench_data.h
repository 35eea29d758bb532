// Reads MaskBench data: JSON Lines (gzip or plain) as in ../shared/maskbench, or
// a folder of MaskBench `*.json` files (one schema object each). Instances are
// serialized as the benchmark's harness does (python_json.h).
#ifndef MASKD_HARNESS_MASKBENCH_DATA_H_
#define MASKD_HARNESS_MASKBENCH_DATA_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd::maskbench {

struct Instance {
  bool valid = false;
  std::string text;  // json.dumps(data, ensure_ascii=False)
};

struct SchemaCase {
  std::string name;
  std::string schema;  // the schema's JSON text as found in the file
  std::vector<Instance> tests;
};

// `path`: a .jsonl or .jsonl.gz file (zlib reads both), or a directory whose
// *.json files are read in name order. Errors name the file and line.
absl::StatusOr<std::vector<SchemaCase>> LoadMaskBench(const std::string& path);

// A deterministic sample (DeterministicSample) of `n` schemas of a JSON Lines
// file: only the sampled lines are parsed and their instances serialized.
absl::StatusOr<std::vector<SchemaCase>> LoadMaskBenchSample(const std::string& path, size_t n);

// Parses one MaskBench object (a line of the JSON Lines file).
absl::StatusOr<SchemaCase> ParseSchemaCase(std::string_view json_object);

// Indices of a deterministic sample of `n` out of `total` items: every k-th
// item, evenly spread, always the same for the same arguments (n >= total:
// all of them).
std::vector<size_t> DeterministicSample(size_t total, size_t n);

}  // namespace maskd::maskbench

#endif  // MASKD_HARNESS_MASKBENCH_DATA_H_
