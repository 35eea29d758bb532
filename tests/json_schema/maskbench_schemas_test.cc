// Parses every schema of the MaskBench development split: nothing may crash,
// and every refusal must be a named error (a status code we use for schema
// problems, and a JSON pointer in the message). Prints the outcome histogram.
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "compiler/json_schema/parse_schema.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "simdjson.h"
#include "tests/json_schema/reference_validator.h"

namespace maskd::json_schema {
namespace {

using ::maskd::testing::MaskBenchPath;

bool ReadGzipLines(const std::string& path, std::vector<std::string>* lines) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::string data;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(f, buffer, sizeof(buffer))) > 0) data.append(buffer, static_cast<size_t>(n));
  gzclose(f);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    if (end > start) lines->push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return true;
}

// The error message without its location and with quoted names elided
// (except for keyword names, which are what we want to count).
std::string Category(const absl::Status& status) {
  std::string m(status.message());
  size_t at = m.rfind(" at ");
  if (at != std::string::npos) m.resize(at);
  bool keep_quotes = m.rfind("unsupported keyword", 0) == 0 || m.rfind("unknown keyword", 0) == 0;
  if (!keep_quotes) {
    std::string out;
    bool in_quote = false;
    for (char c : m) {
      if (c == '"') {
        if (!in_quote) out += "\"…\"";
        in_quote = !in_quote;
      } else if (!in_quote) {
        out.push_back(c);
      }
    }
    m = out;
  }
  return absl::StatusCodeToString(status.code()) + ": " + m;
}

TEST(MaskBenchSchemasTest, EveryDevSchemaParsesOrFailsWithANamedError) {
  std::vector<std::string> lines;
  ASSERT_TRUE(ReadGzipLines(MaskBenchPath(), &lines))
      << "cannot read " << MaskBenchPath() << " (set MASKD_MASKBENCH)";
  ASSERT_GT(lines.size(), 7000u);
  simdjson::dom::parser outer;
  int ok = 0, strict_ok = 0;
  int instances = 0, valid_rejected = 0, invalid_accepted = 0;
  int rewritten_disagreements = 0;
  std::vector<double> micros;
  std::vector<std::pair<double, std::string>> slowest;
  std::map<std::string, int> histogram;
  std::map<std::string, int> ignored;
  for (const std::string& line : lines) {
    simdjson::dom::element doc;
    ASSERT_EQ(outer.parse(line).get(doc), simdjson::SUCCESS);
    simdjson::dom::element schema_element;
    ASSERT_EQ(doc["schema"].get(schema_element), simdjson::SUCCESS);
    std::string name = std::string(std::string_view(doc["name"]));
    std::string text = simdjson::minify(schema_element);
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Schema> schema = ParseSchema(text);
    const double elapsed =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    micros.push_back(elapsed);
    slowest.emplace_back(elapsed, name);
    if (schema.ok()) {
      ++ok;
      EXPECT_GE(schema->root, 0);
      EXPECT_LT(static_cast<size_t>(schema->root), schema->nodes.size());
      for (const IgnoredKeyword& k : schema->ignored_keywords) ++ignored[k.keyword];
      if (ParseSchema(text, ParseOptions::Strict()).ok()) ++strict_ok;
      // The combinators as written: the rewritten form must give the same
      // verdict on every instance (expand.cc and negate.cc are exact).
      ParseOptions as_written_options;
      as_written_options.rewrite_combinators = false;
      absl::StatusOr<Schema> as_written = ParseSchema(text, as_written_options);
      EXPECT_TRUE(as_written.ok()) << name << ": " << as_written.status();
      // The normalized form must give MaskBench's verdicts.
      simdjson::dom::array tests;
      if (doc["tests"].get(tests) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element test : tests) {
        bool expected = bool(test["valid"]);
        absl::StatusOr<JsonValue> data = ParseJsonValue(simdjson::minify(test["data"]));
        ASSERT_TRUE(data.ok()) << name;
        bool got = ReferenceValidate(*schema, schema->root, *data);
        ++instances;
        if (as_written.ok() && ReferenceValidate(*as_written, as_written->root, *data) != got) {
          ++rewritten_disagreements;
          ADD_FAILURE() << name << ": rewriting combinators changed the verdict on "
                        << data->ToJson().substr(0, 300);
        }
        if (got == expected) continue;
        ++(expected ? valid_rejected : invalid_accepted);
        if (expected || invalid_accepted <= 5 || std::getenv("MASKD_PRINT_ALL")) {
          std::cout << "verdict mismatch " << name << ": expected " << expected << " for "
                    << data->ToJson().substr(0, 300) << "\n";
        }
      }
      continue;
    }
    const absl::StatusCode code = schema.status().code();
    EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument ||
                code == absl::StatusCode::kUnimplemented ||
                code == absl::StatusCode::kResourceExhausted)
        << name << ": " << schema.status();
    EXPECT_NE(schema.status().message().find(" at /"), std::string::npos)
        << name << ": error names no JSON pointer: " << schema.status();
    std::string category = Category(schema.status());
    if (++histogram[category] <= 2) std::cout << name << ": " << schema.status() << "\n";
  }
  std::sort(micros.begin(), micros.end());
  std::cout << "ParseSchema time (us): p50 " << micros[micros.size() / 2] << ", p99 "
            << micros[micros.size() * 99 / 100] << ", max " << micros.back() << " (slowest:";
  std::sort(slowest.rbegin(), slowest.rend());
  for (size_t i = 0; i < 3 && i < slowest.size(); ++i) {
    std::cout << " " << slowest[i].second << " " << slowest[i].first;
  }
  std::cout << ")\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [k, v] : histogram) sorted.emplace_back(v, k);
  std::sort(sorted.rbegin(), sorted.rend());
  std::cout << "MaskBench dev: " << ok << " / " << lines.size() << " schemas parse (permissive); "
            << strict_ok << " also in strict mode\n";
  for (const auto& [count, category] : sorted)
    std::cout << "  " << count << "  " << category << "\n";
  std::vector<std::pair<int, std::string>> top_ignored;
  for (const auto& [k, v] : ignored) top_ignored.emplace_back(v, k);
  std::sort(top_ignored.rbegin(), top_ignored.rend());
  std::cout << "most frequent ignored (unknown) keywords:";
  for (size_t i = 0; i < top_ignored.size() && i < 15; ++i) {
    std::cout << " " << top_ignored[i].second << "=" << top_ignored[i].first;
  }
  std::cout << "\n";
  std::cout << "test instances: " << instances
            << "; valid rejected by the normalized schema: " << valid_rejected
            << "; invalid accepted: " << invalid_accepted
            << " (formats are not checked by the reference validator)\n";
  EXPECT_EQ(rewritten_disagreements, 0);
  // A valid instance rejected means normalization narrowed the schema.
  EXPECT_LT(valid_rejected, instances / 200);
  // Regression guard: almost all real-world schemas are understood.
  EXPECT_GT(ok, static_cast<int>(lines.size() * 0.95));
}

}  // namespace
}  // namespace maskd::json_schema
