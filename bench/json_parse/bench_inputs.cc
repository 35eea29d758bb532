#include "bench/json_parse/bench_inputs.h"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/data_paths.h"
#include "simdjson.h"

namespace maskd::json_parse_bench {
namespace {

// Whole file through zlib, which passes plain (non-gzip) files through as is.
absl::StatusOr<std::string> ReadMaybeGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  const bool failed = n < 0;
  gzclose(file);
  if (failed) return absl::DataLossError(absl::StrCat("cannot decompress ", path));
  return out;
}

}  // namespace

std::string MaskBenchPath() { return testing::MaskBenchPath(); }

std::string TokenizerJsonPath(const std::string& name) {
  return absl::StrCat(testing::TokenizerDir(name), "/tokenizer.json");
}

absl::StatusOr<std::vector<std::string>> LoadMaskBenchSchemas(const std::string& path) {
  absl::StatusOr<std::string> text = ReadMaybeGzip(path);
  if (!text.ok()) return text.status();
  simdjson::dom::parser parser;
  std::vector<std::string> schemas;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == absl::string_view::npos) continue;
    simdjson::dom::element schema;
    const simdjson::error_code error =
        parser.parse(line.data(), line.size()).at_key("schema").get(schema);
    if (error) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": no \"schema\": ", simdjson::error_message(error)));
    }
    schemas.push_back(simdjson::minify(schema));
  }
  return schemas;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace maskd::json_parse_bench
