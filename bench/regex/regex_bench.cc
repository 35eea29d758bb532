// Regex engine speed: DFA step cost once tables are warm (ns/byte, the cost
// inside a mask's token-trie walk), cold compile+walk of bounded repeats, a
// 1 KB pattern and a Unicode class.
#include <random>
#include <string>

#include "benchmark/benchmark.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd::regex {
namespace {

// A JSON string body: the most common lexeme in schema-constrained output.
constexpr const char* kJsonString = R"("([^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")";

std::string RandomJsonStringBytes(size_t n) {
  std::mt19937 rng(1);
  std::string s = "\"";
  const std::string letters = "abcdefghij klmnopqrstuvwxyz0123456789,.-\xC3\xA9";
  while (s.size() < n)
    s += letters[std::uniform_int_distribution<size_t>(0, letters.size() - 1)(rng)];
  return s;
}

void BM_DfaStepWarm(benchmark::State& state) {
  ExprSet pool;
  ExprId e = ParseEcmaRegex(kJsonString, &pool, MatchMode::kFullMatch).value();
  LazyDfa dfa(&pool);
  StateId start = dfa.Start(e).value();
  const std::string input = RandomJsonStringBytes(4096);
  dfa.Walk(start, input);  // Warm the tables.
  for (auto _ : state) {
    StateId s = start;
    for (char c : input) s = dfa.Step(s, static_cast<uint8_t>(c));
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * input.size());
  state.counters["ns_per_byte"] =
      benchmark::Counter(static_cast<double>(state.iterations() * input.size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DfaStepWarm);

// Parse + DFA start + walking the whole bounded repeat (every state built).
void BM_CompileBoundedRepeat(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string pattern = "[a-z]{1," + std::to_string(n) + "}";
  const std::string input(n, 'k');
  for (auto _ : state) {
    ExprSet pool;
    ExprId e = ParseEcmaRegex(pattern, &pool, MatchMode::kFullMatch).value();
    LazyDfa dfa(&pool);
    StateId s = dfa.Walk(dfa.Start(e).value(), input);
    if (!dfa.IsAccepting(s)) state.SkipWithError("not accepted");
  }
}
BENCHMARK(BM_CompileBoundedRepeat)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

// A 1 KB pattern: alternation of words with classes, as JSON Schema
// `pattern`s for enumerations look. Parse + start state + first bytes.
std::string OneKbPattern() {
  std::string p = "^(";
  std::mt19937 rng(3);
  for (int i = 0; p.size() < 1000; ++i) {
    if (i) p += '|';
    int len = std::uniform_int_distribution<int>(4, 10)(rng);
    for (int k = 0; k < len; ++k)
      p += static_cast<char>('a' + std::uniform_int_distribution<int>(0, 25)(rng));
    if (i % 5 == 0) p += "[0-9]{2,4}";
  }
  return p + ")$";
}

void BM_Compile1KbPattern(benchmark::State& state) {
  const std::string pattern = OneKbPattern();
  for (auto _ : state) {
    ExprSet pool;
    ExprId e = ParseEcmaRegex(pattern, &pool).value();
    LazyDfa dfa(&pool);
    StateId s = dfa.Start(e).value();
    benchmark::DoNotOptimize(dfa.FirstBytes(s));
  }
  state.counters["pattern_bytes"] = static_cast<double>(pattern.size());
}
BENCHMARK(BM_Compile1KbPattern)->Unit(benchmark::kMicrosecond);

void BM_CompileUnicodeClass(benchmark::State& state) {
  for (auto _ : state) {
    ExprSet pool;
    ExprId e = ParseEcmaRegex("^[\\p{L}\\p{N}_]+$", &pool).value();
    LazyDfa dfa(&pool);
    benchmark::DoNotOptimize(dfa.FirstBytes(dfa.Start(e).value()));
  }
}
BENCHMARK(BM_CompileUnicodeClass)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace maskd::regex

BENCHMARK_MAIN();
