// Mask time on llama.cpp-style grammars (tests/grammar_text/data) with the
// real Llama-3 vocabulary, over generated sentences: each run is a random
// walk of the engine's own masks (a random allowed token per step; after
// --min_tokens steps EOS is taken when allowed, and the walk steers to the
// end by preferring the shortest allowed tokens). Prints per grammar the
// compile time and the time-between-masks distribution (FillMask only).
//   build/release/bench/grammar_text/grammar_text_bench [--runs=N]
//     [--min_tokens=200] [--max_tokens=400] [--grammars=json,c,...]
//     [--clock=wall|thread_cpu] [--state_mask_hot_nodes=N]
// --clock=thread_cpu times each FillMask by the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), for comparable numbers on a loaded machine.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/timing.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {
namespace {

using bench::NowMicros;
using bench::Percentile;

int Run(int argc, char** argv) {
  int runs = 3;
  size_t min_tokens = 200, max_tokens = 400;
  std::vector<std::string> names = {"json", "chess", "list", "arithmetic", "c"};
  bool thread_cpu = false;
  CompileOptions options;  // --state_mask_hot_nodes: CompileOptions' tuning knob
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::StartsWith(a, "--runs=")) (void)absl::SimpleAtoi(a.substr(7), &runs);
    if (absl::StartsWith(a, "--min_tokens=")) (void)absl::SimpleAtoi(a.substr(13), &min_tokens);
    if (absl::StartsWith(a, "--max_tokens=")) (void)absl::SimpleAtoi(a.substr(13), &max_tokens);
    if (absl::StartsWith(a, "--grammars=")) names = absl::StrSplit(a.substr(11), ',');
    if (absl::StartsWith(a, "--state_mask_hot_nodes=")) {
      (void)absl::SimpleAtoi(a.substr(23), &options.state_mask_hot_nodes);
    }
    if (absl::StartsWith(a, "--clock=")) {
      if (a.substr(8) != "wall" && a.substr(8) != "thread_cpu") {
        std::fprintf(stderr, "--clock must be wall or thread_cpu\n");
        return 1;
      }
      thread_cpu = a.substr(8) == "thread_cpu";
    }
  }
  const char* env = std::getenv("MASKD_TOKENIZER_DIR");
  const std::string dir =
      std::string(env != nullptr ? env
                                 : std::string(std::getenv("HOME")) + "/.cache/maskd/tokenizers") +
      "/llama3";
  auto tokenizer = Tokenizer::FromDirectory(dir);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "tokenizer %s: %s\n", dir.c_str(),
                 std::string(tokenizer.status().message()).c_str());
    return 1;
  }
  if (auto s = PrepareTokenizer(*tokenizer); !s.ok()) return 1;
  const size_t vocab = (*tokenizer)->vocab_size();
  std::printf("%-11s %9s %7s %8s %8s %8s %8s %9s\n", "grammar", "compile", "masks", "tokens",
              "p50_us", "p99_us", "max_us", "mean_us");
  for (const std::string& name : names) {
    std::ifstream in(std::string(MASKD_GRAMMAR_TEXT_DATA) + "/" + name + ".gbnf");
    std::stringstream text;
    text << in.rdbuf();
    GrammarSpec spec;
    spec.kind = SpecKind::kEbnf;
    spec.dialect = EbnfDialect::kGbnf;
    spec.text = text.str();
    const double c0 = NowMicros(thread_cpu);
    auto g = CompileGrammar(spec, options, *tokenizer);
    const double compile_ms = (NowMicros(thread_cpu) - c0) / 1000;
    if (!g.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(g.status().message()).c_str());
      continue;
    }
    std::vector<double> times;
    size_t tokens_total = 0;
    std::vector<uint32_t> mask((vocab + 31) / 32);
    for (int run = 0; run < runs; ++run) {
      std::mt19937 rng(run);
      auto m = Matcher::Create(*g);
      for (size_t step = 0; step < max_tokens; ++step) {
        const double t0 = NowMicros(thread_cpu);
        m->FillMask(mask);
        times.push_back(NowMicros(thread_cpu) - t0);
        std::vector<TokenId> allowed;
        for (TokenId t = 0; t < vocab; ++t) {
          if ((mask[t / 32] >> (t % 32)) & 1) allowed.push_back(t);
        }
        if (allowed.empty()) break;
        const TokenId eos = (*tokenizer)->eos_ids().front();
        if (step >= min_tokens && m->CanStop()) break;
        TokenId pick;
        if (step >= min_tokens) {
          // Steer to an end: the shortest allowed tokens, at random.
          size_t shortest = SIZE_MAX;
          for (TokenId t : allowed) {
            if (t != eos) shortest = std::min(shortest, (*tokenizer)->token_bytes(t).size());
          }
          std::vector<TokenId> short_ones;
          for (TokenId t : allowed) {
            if (t != eos && (*tokenizer)->token_bytes(t).size() == shortest)
              short_ones.push_back(t);
          }
          pick = short_ones[rng() % short_ones.size()];
        } else {
          // A random allowed token, avoiding ones that complete the output
          // (the sentence must reach --min_tokens).
          pick = eos;
          for (int attempt = 0; attempt < 20; ++attempt) {
            const TokenId t = allowed[rng() % allowed.size()];
            if (t == eos) continue;
            pick = t;
            if (!m->AcceptToken(t)) return 2;
            if (!m->CanStop()) break;
            if (!m->Rollback(1).ok()) return 2;
            pick = eos;
          }
          if (pick == eos) {
            for (TokenId t : allowed) pick = t != eos ? t : pick;
            if (pick == eos) break;
            if (!m->AcceptToken(pick)) return 2;
          }
          ++tokens_total;
          continue;
        }
        if (!m->AcceptToken(pick)) return 2;
        ++tokens_total;
      }
    }
    double mean = 0;
    for (double t : times) mean += t;
    mean /= std::max<size_t>(1, times.size());
    std::printf("%-11s %7.1fms %7zu %8zu %8.1f %8.1f %8.1f %9.1f\n", name.c_str(), compile_ms,
                times.size(), tokens_total, Percentile(times, 0.5), Percentile(times, 0.99),
                *std::max_element(times.begin(), times.end()), mean);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) { return maskd::Run(argc, argv); }
