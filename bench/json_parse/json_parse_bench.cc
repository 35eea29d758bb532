// Which JSON library should maskd use to read schemas and tokenizer.json?
// Parses the same inputs with nlohmann::json, nlohmann::ordered_json and the
// simdjson DOM API, once parse-only and once parse + a full walk of the tree
// (what a schema compiler or tokenizer loader actually does), and reports
// decimal MB/s of input per library.
//
// Inputs: all MaskBench dev schemas ($MASKD_MASKBENCH) as compact JSON, and
// the Llama 3 tokenizer.json (under $MASKD_TOKENIZER_DIR).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/json_parse/bench_inputs.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"

namespace maskd::json_parse_bench {
namespace {

struct Corpus {
  std::string name;
  std::vector<std::string> docs;
  // The same documents with the trailing padding simdjson reads past the end.
  std::vector<simdjson::padded_string> padded;
  size_t bytes = 0;
};

Corpus MakeCorpus(std::string name, std::vector<std::string> docs) {
  Corpus c{std::move(name), std::move(docs), {}, 0};
  for (const std::string& d : c.docs) {
    c.padded.emplace_back(d);
    c.bytes += d.size();
  }
  return c;
}

// Counts every value in the tree, touching each key and scalar, so a lazy
// parser cannot skip work a consumer would do.
template <typename Json>
size_t WalkNlohmann(const Json& j) {
  size_t n = 1;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) n += key.size() + WalkNlohmann(value);
  } else if (j.is_array()) {
    for (const auto& value : j) n += WalkNlohmann(value);
  } else if (j.is_string()) {
    n += j.template get_ref<const std::string&>().size();
  }
  return n;
}

size_t WalkSimdjson(simdjson::dom::element e) {
  size_t n = 1;
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT:
      for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
        n += field.key.size() + WalkSimdjson(field.value);
      }
      break;
    case simdjson::dom::element_type::ARRAY:
      for (simdjson::dom::element value : simdjson::dom::array(e)) n += WalkSimdjson(value);
      break;
    case simdjson::dom::element_type::STRING:
      n += std::string_view(e).size();
      break;
    default:
      break;
  }
  return n;
}

void SetRates(benchmark::State& state, const Corpus& corpus) {
  const double bytes = static_cast<double>(corpus.bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["MB/s"] = benchmark::Counter(bytes / 1e6, benchmark::Counter::kIsRate);
  state.counters["docs"] = static_cast<double>(corpus.docs.size());
}

template <typename Json>
void ParseNlohmann(benchmark::State& state, const Corpus* corpus, bool walk) {
  size_t nodes = 0;
  for (auto _ : state) {
    for (const std::string& doc : corpus->docs) {
      Json j = Json::parse(doc);
      if (walk) nodes += WalkNlohmann(j);
      benchmark::DoNotOptimize(j);
    }
  }
  benchmark::DoNotOptimize(nodes);
  SetRates(state, *corpus);
}

// `padded`: input already in simdjson's padded buffers (zero-copy); otherwise
// from plain std::strings, which simdjson first copies into its own buffer
// (what happens with a protobuf string field).
void ParseSimdjson(benchmark::State& state, const Corpus* corpus, bool walk, bool padded) {
  simdjson::dom::parser parser;
  size_t nodes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < corpus->docs.size(); ++i) {
      simdjson::dom::element root;
      const simdjson::error_code error =
          padded ? parser.parse(corpus->padded[i]).get(root)
                 : parser.parse(corpus->docs[i].data(), corpus->docs[i].size(), true).get(root);
      if (error) {
        state.SkipWithError(simdjson::error_message(error));
        return;
      }
      if (walk) nodes += WalkSimdjson(root);
      benchmark::DoNotOptimize(root);
    }
  }
  benchmark::DoNotOptimize(nodes);
  SetRates(state, *corpus);
}

// Console output as usual, plus a closing table of MB/s per library.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  // Plain text (no colour codes), counters as columns: output goes to logs.
  SummaryReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = run.counters.find("MB/s");
      if (run.error_occurred || it == run.counters.end()) continue;
      mb_per_s_[run.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // MB/s is per CPU second (Google Benchmark's default for rates), which
  // stays meaningful on a shared, loaded machine.
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-52s %10s %14s\n", "input/library/work", "MB/s", "vs nlohmann");
    for (const auto& [name, rate] : mb_per_s_) {
      // The nlohmann::json row of the same input and work is the baseline.
      std::string baseline = name;
      const size_t lib_begin = baseline.find('/') + 1;
      const size_t lib_end = baseline.find('/', lib_begin);
      baseline.replace(lib_begin, lib_end - lib_begin, "nlohmann::json");
      auto it = mb_per_s_.find(baseline);
      const double ratio = it != mb_per_s_.end() && it->second > 0 ? rate / it->second : 0;
      std::printf("%-52s %10.1f %13.2fx\n", name.c_str(), rate, ratio);
    }
  }

 private:
  std::map<std::string, double> mb_per_s_;
};

void Register(const Corpus* corpus) {
  for (const bool walk : {false, true}) {
    const std::string work = walk ? "parse+walk" : "parse";
    const std::string prefix = corpus->name + "/";
    benchmark::RegisterBenchmark((prefix + "nlohmann::json/" + work).c_str(),
                                 ParseNlohmann<nlohmann::json>, corpus, walk);
    benchmark::RegisterBenchmark((prefix + "nlohmann::ordered_json/" + work).c_str(),
                                 ParseNlohmann<nlohmann::ordered_json>, corpus, walk);
    benchmark::RegisterBenchmark((prefix + "simdjson_dom_padded/" + work).c_str(), ParseSimdjson,
                                 corpus, walk, /*padded=*/true);
    benchmark::RegisterBenchmark((prefix + "simdjson_dom_copy/" + work).c_str(), ParseSimdjson,
                                 corpus, walk, /*padded=*/false);
  }
}

int Main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::string maskbench_path = MaskBenchPath();
  absl::StatusOr<std::vector<std::string>> schemas = LoadMaskBenchSchemas(maskbench_path);
  if (!schemas.ok()) {
    std::fprintf(stderr, "MaskBench: %s\n", schemas.status().ToString().c_str());
    return 1;
  }
  const std::string tokenizer_path = TokenizerJsonPath("llama3");
  absl::StatusOr<std::string> tokenizer = ReadFile(tokenizer_path);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "tokenizer: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  const Corpus schema_corpus = MakeCorpus("maskbench_schemas", std::move(*schemas));
  std::vector<std::string> tokenizer_docs;
  tokenizer_docs.push_back(std::move(*tokenizer));
  const Corpus tokenizer_corpus = MakeCorpus("llama3_tokenizer", std::move(tokenizer_docs));
  std::printf("%s: %zu schemas, %s bytes\n%s: %s bytes\n", maskbench_path.c_str(),
              schema_corpus.docs.size(), absl::StrFormat("%d", schema_corpus.bytes).c_str(),
              tokenizer_path.c_str(), absl::StrFormat("%d", tokenizer_corpus.bytes).c_str());

  Register(&schema_corpus);
  Register(&tokenizer_corpus);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace maskd::json_parse_bench

int main(int argc, char** argv) { return maskd::json_parse_bench::Main(argc, argv); }
