// Tokenizer benchmarks: load time of the Llama 3 tokenizer (target <= 150 ms)
// and encode throughput on MaskBench instance text (target >= 20 MB/s).
//
// Tokenizers come from $MASKD_TOKENIZER_DIR/<name>/ (default
// ${XDG_CACHE_HOME:-~/.cache}/maskd/tokenizers), MaskBench from
// $MASKD_MASKBENCH (default ../shared/maskbench/dev.jsonl.gz).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/tokenizer/tokenizer.h"
#include "harness/data_paths.h"
#include "harness/maskbench_data.h"

namespace maskd {
namespace {

using ::maskd::testing::TokenizerDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Every MaskBench instance as the benchmark serializes it.
const std::vector<std::string>& MaskBenchTexts() {
  static const auto* texts = [] {
    auto* out = new std::vector<std::string>();
    const std::string path = testing::MaskBenchPath();
    auto cases = maskbench::LoadMaskBench(path);
    if (!cases.ok()) {
      std::cerr << "cannot read MaskBench: " << cases.status() << "\n";
      return out;
    }
    for (const auto& schema_case : *cases) {
      for (const auto& instance : schema_case.tests) out->push_back(instance.text);
    }
    return out;
  }();
  return *texts;
}

void BM_LoadFromJson(benchmark::State& state, const std::string& name) {
  const std::string json = ReadFile(TokenizerDir(name) + "/tokenizer.json");
  const std::string config = ReadFile(TokenizerDir(name) + "/tokenizer_config.json");
  for (auto _ : state) {
    auto tokenizer = Tokenizer::FromJson(json, config);
    if (!tokenizer.ok()) {
      state.SkipWithError(std::string(tokenizer.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(tokenizer);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}

void BM_LoadFromDirectory(benchmark::State& state, const std::string& name) {
  for (auto _ : state) {
    auto tokenizer = Tokenizer::FromDirectory(TokenizerDir(name));
    if (!tokenizer.ok()) {
      state.SkipWithError(std::string(tokenizer.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(tokenizer);
  }
}

void BM_EncodeMaskBench(benchmark::State& state, const std::string& name) {
  auto tokenizer = Tokenizer::FromDirectory(TokenizerDir(name));
  if (!tokenizer.ok()) {
    state.SkipWithError(std::string(tokenizer.status().message()).c_str());
    return;
  }
  const std::vector<std::string>& texts = MaskBenchTexts();
  if (texts.empty()) {
    state.SkipWithError("no MaskBench text");
    return;
  }
  size_t bytes = 0;
  size_t tokens = 0;
  for (const std::string& text : texts) bytes += text.size();
  for (auto _ : state) {
    tokens = 0;
    for (const std::string& text : texts) tokens += (*tokenizer)->Encode(text).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["texts"] = static_cast<double>(texts.size());
  state.counters["tokens"] = static_cast<double>(tokens);
}

BENCHMARK_CAPTURE(BM_LoadFromJson, llama3, std::string("llama3"))
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_LoadFromDirectory, llama3, std::string("llama3"))
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_LoadFromJson, qwen3, std::string("qwen3"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadFromJson, gptoss, std::string("gptoss"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeMaskBench, llama3, std::string("llama3"))
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);
BENCHMARK_CAPTURE(BM_EncodeMaskBench, qwen3, std::string("qwen3"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeMaskBench, gptoss, std::string("gptoss"))->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace maskd

BENCHMARK_MAIN();
