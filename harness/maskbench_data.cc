#include "harness/maskbench_data.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "harness/python_json.h"
#include "simdjson.h"

namespace maskd::maskbench {
namespace {

namespace od = simdjson::ondemand;

absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // also reads uncompressed files
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string data;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(file, buf, sizeof(buf))) > 0) data.append(buf, n);
  int errnum = 0;
  const char* message = gzerror(file, &errnum);
  std::string error = errnum < 0 ? message : "";
  gzclose(file);
  if (n < 0 || !error.empty()) return absl::DataLossError(absl::StrCat(path, ": ", error));
  return data;
}

std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

absl::StatusOr<std::string> RawValueText(od::value value) {
  od::json_type type;
  if (value.type().get(type)) return absl::InvalidArgumentError("malformed value");
  std::string_view raw;
  if (type == od::json_type::object) {
    od::object object;
    if (value.get_object().get(object) || object.raw_json().get(raw)) {
      return absl::InvalidArgumentError("malformed object");
    }
  } else if (type == od::json_type::array) {
    od::array array;
    if (value.get_array().get(array) || array.raw_json().get(raw)) {
      return absl::InvalidArgumentError("malformed array");
    }
  } else {
    raw = value.raw_json_token();
  }
  return std::string(TrimWhitespace(raw));
}

absl::Status ParseTests(od::array tests, SchemaCase& out) {
  for (auto element : tests) {
    od::object test;
    if (element.get_object().get(test)) return absl::InvalidArgumentError("test is not an object");
    Instance instance;
    bool have_valid = false, have_data = false;
    for (auto field : test) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return absl::InvalidArgumentError("malformed key");
      if (key == "valid") {
        if (field.value().get_bool().get(instance.valid)) {
          return absl::InvalidArgumentError("\"valid\" is not a boolean");
        }
        have_valid = true;
      } else if (key == "data") {
        od::value data;
        if (field.value().get(data)) return absl::InvalidArgumentError("malformed data");
        if (absl::Status s = AppendPythonJson(data, instance.text); !s.ok()) return s;
        have_data = true;
      }
    }
    if (!have_valid || !have_data) {
      return absl::InvalidArgumentError("test lacks \"valid\" or \"data\"");
    }
    out.tests.push_back(std::move(instance));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SchemaCase> ParseSchemaCase(std::string_view json_object) {
  simdjson::padded_string padded(json_object);
  od::parser parser;
  od::document doc;
  od::object object;
  if (auto error = parser.iterate(padded).get(doc)) {
    return absl::InvalidArgumentError(simdjson::error_message(error));
  }
  if (doc.get_object().get(object)) return absl::InvalidArgumentError("not a JSON object");
  SchemaCase out;
  bool have_schema = false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return absl::InvalidArgumentError("malformed key");
    od::value value;
    if (field.value().get(value)) return absl::InvalidArgumentError("malformed member");
    if (key == "name") {
      std::string_view name;
      if (value.get_string().get(name)) return absl::InvalidArgumentError("\"name\" not a string");
      out.name = name;
    } else if (key == "schema") {
      absl::StatusOr<std::string> text = RawValueText(value);
      if (!text.ok()) return text.status();
      out.schema = *std::move(text);
      have_schema = true;
    } else if (key == "tests") {
      od::array tests;
      if (value.get_array().get(tests)) return absl::InvalidArgumentError("\"tests\" not an array");
      if (absl::Status s = ParseTests(tests, out); !s.ok()) return s;
    }
  }
  if (!have_schema) return absl::InvalidArgumentError("no \"schema\" member");
  return out;
}

absl::StatusOr<std::vector<SchemaCase>> LoadMaskBench(const std::string& path) {
  std::vector<SchemaCase> cases;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      absl::StatusOr<std::string> text = ReadMaybeGzipped(file.string());
      if (!text.ok()) return text.status();
      absl::StatusOr<SchemaCase> parsed = ParseSchemaCase(*text);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(file.string(), ": ", parsed.status().message()));
      }
      if (parsed->name.empty()) parsed->name = file.filename().string();
      cases.push_back(*std::move(parsed));
    }
    return cases;
  }
  absl::StatusOr<std::string> data = ReadMaybeGzipped(path);
  if (!data.ok()) return data.status();
  std::istringstream lines(*data);
  std::string line;
  for (size_t line_no = 1; std::getline(lines, line); ++line_no) {
    if (TrimWhitespace(line).empty()) continue;
    absl::StatusOr<SchemaCase> parsed = ParseSchemaCase(line);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": ", parsed.status().message()));
    }
    cases.push_back(*std::move(parsed));
  }
  return cases;
}

absl::StatusOr<std::vector<SchemaCase>> LoadMaskBenchSample(const std::string& path, size_t n) {
  absl::StatusOr<std::string> data = ReadMaybeGzipped(path);
  if (!data.ok()) return data.status();
  std::vector<std::string_view> lines;
  for (std::string_view rest = *data; !rest.empty();) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    if (!TrimWhitespace(rest.substr(0, end)).empty()) lines.push_back(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  std::vector<SchemaCase> cases;
  for (size_t i : DeterministicSample(lines.size(), n)) {
    absl::StatusOr<SchemaCase> parsed = ParseSchemaCase(lines[i]);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": line ", i + 1, " of the non-empty ones: ", parsed.status().message()));
    }
    cases.push_back(*std::move(parsed));
  }
  return cases;
}

std::vector<size_t> DeterministicSample(size_t total, size_t n) {
  std::vector<size_t> out;
  if (n >= total) n = total;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(i * total / n);
  return out;
}

}  // namespace maskd::maskbench
