// open_options_bench: what the open options cost per sequence open. Token
// healing: HealPromptTail over the real Llama-3 vocabulary for 8-token tails
// (the reference pass over the vocabulary, and the service's sorted index,
// built on the first call); the reasoning budget: creating a
// budgeted matcher (one pass over the Qwen3 vocabulary for the marker's
// tokens) and a forced step's FillMask. Prints p50/max in microseconds; not
// a test (numbers go into the report / docs/benchmarks.md).
//
//   build/release/bench/grammar/open_options_bench [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/compile/reasoning_budget.h"
#include "compiler/compile/token_healing.h"
#include "harness/data_paths.h"

namespace maskd {
namespace {

using Clock = std::chrono::steady_clock;

void Print(const char* what, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  std::printf("%-40s p50 %9.1f us  max %9.1f us  (%zu runs)\n", what, us[us.size() / 2], us.back(),
              us.size());
}

int Run(int runs) {
  auto llama = Tokenizer::FromDirectory(testing::TokenizerDir("llama3"));
  auto qwen = Tokenizer::FromDirectory(testing::TokenizerDir("qwen3"));
  if (!llama.ok() || !qwen.ok()) {
    std::fprintf(stderr, "tokenizers: %s %s\n", llama.status().ToString().c_str(),
                 qwen.status().ToString().c_str());
    return 1;
  }
  std::vector<double> heal;
  for (const char* prompt : {"See https:", "Answer in JSON: {", "The capital of France is Par",
                             "Write a long answer about"}) {
    std::vector<TokenId> tokens = (*llama)->Encode(prompt);
    if (tokens.size() > 8) tokens.erase(tokens.begin(), tokens.end() - 8);
    for (int i = 0; i < runs; ++i) {
      const auto start = Clock::now();
      const Healing h = HealPromptTail(**llama, tokens);
      heal.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (h.tokens_to_drop > tokens.size()) return 1;
    }
  }
  Print("HealPromptTail reference (Llama-3, 8)", heal);
  heal.clear();
  for (const char* prompt : {"See https:", "Answer in JSON: {", "The capital of France is Par",
                             "Write a long answer about"}) {
    std::vector<TokenId> tokens = (*llama)->Encode(prompt);
    if (tokens.size() > 8) tokens.erase(tokens.begin(), tokens.end() - 8);
    for (int i = 0; i < runs; ++i) {
      const auto start = Clock::now();
      const Healing h = HealPromptTail(*llama, tokens);
      heal.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (h.tokens_to_drop > tokens.size()) return 1;
    }
  }
  Print("HealPromptTail sorted (Llama-3, 8)", heal);

  GrammarSpec spec;
  spec.kind = SpecKind::kChoices;
  spec.choices = {"yes", "no"};
  CompileOptions options;
  options.reasoning_end_marker = "</think>";
  auto grammar = CompileGrammar(spec, options, *qwen);
  if (!grammar.ok()) return 1;
  ReasoningBudget budget;
  budget.end_marker = "</think>";
  budget.max_tokens = 1;
  std::vector<double> create, forced;
  std::vector<uint32_t> words(((*qwen)->vocab_size() + 31) / 32);
  const std::vector<TokenId> hmm = (*qwen)->Encode("Hmm");
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    auto matcher = CreateBudgetedMatcher(*grammar, budget);
    create.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!matcher.ok() || !(*matcher)->AcceptToken(hmm[0])) return 1;
    start = Clock::now();
    (*matcher)->FillMask(words);
    forced.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  Print("CreateBudgetedMatcher (Qwen3, </think>)", create);
  Print("FillMask, marker forced (Qwen3)", forced);
  return 0;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) {
  int runs = 50;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  return maskd::Run(runs);
}
