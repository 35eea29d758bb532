// structural_tag_bench: the issue-14 target for tool calling. A Qwen3
// tool-call structural tag over 50 tools (each with its own JSON Schema):
// compile time (fresh tool names each time, so no two compiles are the same
// grammar), and the time of one mask (FillMask) plus the token's AcceptToken
// along Qwen3's own tokenization of outputs that mix free text and calls.
// Prints p50/p99/max; not a test (the numbers go into docs/benchmarks.md).
// The tokenizer's index (its trie, built once per tokenizer) is prepared
// first and timed apart, as maskd does when it loads a tokenizer: the first
// compile in a server does not pay for it. `--clock thread_cpu` times this
// thread's CPU instead of wall time, for a machine other work keeps busy.
//
//   build/release/bench/grammar/structural_tag_bench [--compiles N] [--outputs N]
//     [--clock wall|thread_cpu]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/timing.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "compiler/structural_tag/tool_calls.h"
#include "harness/data_paths.h"

namespace maskd {
namespace {

bool thread_cpu_clock = false;

double NowMicros() { return bench::NowMicros(thread_cpu_clock); }
using bench::Percentile;

std::vector<ToolSpec> Tools(int variant) {
  std::vector<ToolSpec> tools;
  for (int i = 0; i < 50; ++i) {
    tools.push_back(
        {absl::StrCat("tool_", variant, "_", i),
         absl::StrCat(R"({"type":"object","properties":{"query":{"type":"string","maxLength":)",
                      40 + i, R"(},"limit":{"type":"integer","minimum":1,"maximum":)", 10 + i,
                      R"(},"mode":{"enum":["fast","exact","m)", i,
                      R"("]}},"required":["query"],"additionalProperties":false})")});
  }
  return tools;
}

void Print(const char* what, const std::vector<double>& us) {
  std::printf("%-28s n=%zu p50=%.1f us p99=%.1f us max=%.1f us\n", what, us.size(),
              Percentile(us, 0.5), Percentile(us, 0.99), *std::max_element(us.begin(), us.end()));
}

int Run(int compiles, int outputs) {
  auto tokenizer = Tokenizer::FromDirectory(testing::TokenizerDir("qwen3"));
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "qwen3 tokenizer: %s\n",
                 std::string(tokenizer.status().message()).c_str());
    return 1;
  }
  const double prepare_start = NowMicros();
  if (absl::Status prepared = PrepareTokenizer(*tokenizer); !prepared.ok()) {
    std::fprintf(stderr, "index: %s\n", std::string(prepared.message()).c_str());
    return 1;
  }
  std::printf("tokenizer index (once per tokenizer, at load): %.1f ms\n",
              (NowMicros() - prepare_start) / 1e3);
  std::vector<double> compile_us;
  std::shared_ptr<const CompiledGrammar> grammar;
  for (int c = 0; c < compiles; ++c) {
    absl::StatusOr<std::string> tag = ToolCallStructuralTag(Tools(c), ToolCallFormat::kQwen3, {});
    if (!tag.ok()) return 1;
    GrammarSpec spec;
    spec.kind = SpecKind::kStructuralTag;
    spec.text = *tag;
    const double t0 = NowMicros();
    auto compiled = CompileGrammar(spec, CompileOptions{}, *tokenizer);
    compile_us.push_back(NowMicros() - t0);
    if (!compiled.ok()) {
      std::fprintf(stderr, "compile: %s\n", std::string(compiled.status().message()).c_str());
      return 1;
    }
    if (c == 0) grammar = *compiled;
  }
  Print("compile (50 tools)", compile_us);

  std::mt19937 rng(1);
  const std::vector<std::string> words = {
      "The",   " weather", " in",  " Paris", " is", " mild", ",",       " and", " I",
      " will", " look",    " it",  " up",    ".",   "\n",    " Let",    " me",  " check",
      " that", " for",     " you", " first", "?",   " data", " results"};
  std::vector<double> free_us, all_us;
  size_t tokens = 0;
  std::vector<uint32_t> mask(((*tokenizer)->vocab_size() + 31) / 32);
  for (int o = 0; o < outputs; ++o) {
    std::string text;
    for (int part = 0; part < 4; ++part) {
      for (int w = 0; w < 30; ++w) text += words[rng() % words.size()];
      const int tool = static_cast<int>(rng() % 50);
      text += absl::StrCat("\n<tool_call>\n{\"name\": \"tool_0_", tool,
                           "\", \"arguments\": {\"query\": \"weather in paris\", \"limit\": ",
                           1 + rng() % 10, "}}\n</tool_call>\n");
    }
    const std::vector<TokenId> ids = (*tokenizer)->Encode(text);
    auto matcher = Matcher::Create(grammar);
    // Free text: the tokens before the first "<tool_call>" of each part are
    // counted separately (what an unconstrained step should cost).
    std::string output;
    for (TokenId id : ids) {
      const double t0 = NowMicros();
      matcher->FillMask(mask);
      const double us = NowMicros() - t0;
      all_us.push_back(us);
      const size_t open = output.rfind("<tool_call>");
      const size_t close = output.rfind("</tool_call>");
      if (open == std::string::npos || (close != std::string::npos && close > open)) {
        free_us.push_back(us);
        if (us > 200 && getenv("SLOW") != nullptr) {
          std::fprintf(stderr, "slow free step %.0f us after ...%s|\n", us,
                       output.substr(output.size() > 30 ? output.size() - 30 : 0).c_str());
        }
      }
      if (!((mask[id / 32] >> (id % 32)) & 1) || !matcher->AcceptToken(id)) {
        std::fprintf(stderr, "token %u refused after %zu bytes\n", id, output.size());
        return 1;
      }
      output += (*tokenizer)->token_bytes(id);
      ++tokens;
    }
  }
  std::printf("outputs=%d tokens=%zu\n", outputs, tokens);
  Print("mask, every step", all_us);
  Print("mask, free text steps", free_us);
  return 0;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) {
  int compiles = 20, outputs = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--compiles") == 0) compiles = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--outputs") == 0) outputs = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--clock") == 0) {
      maskd::thread_cpu_clock = std::strcmp(argv[i + 1], "thread_cpu") == 0;
    }
  }
  return maskd::Run(compiles, outputs);
}
