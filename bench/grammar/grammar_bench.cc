// Earley parser and token trie micro-benchmarks.
//   build/release/bench/grammar/grammar_bench
// MASKD_TOKENIZER_DIR (default ~/.cache/maskd/tokenizers) adds a trie build
// of the real Llama-3 vocabulary.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/grammar/earley_parser.h"
#include "compiler/grammar/grammar.h"
#include "compiler/trie/token_trie.h"
#include "harness/data_paths.h"
#include "nlohmann/json.hpp"

namespace maskd {
namespace {

Symbol NonterminalSym(NonterminalId a) { return Symbol::Nonterminal(a); }
Symbol LexemeSym(LexemeId t) { return Symbol::Lexeme(t); }

enum Lex : LexemeId {
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kComma,
  kColon,
  kString,
  kNumber,
  kTrue,
  kNumLex
};

// JSON over abstract lexemes, written as a front end would (lists as right
// recursion with nullable tails).
std::shared_ptr<const Grammar> JsonGrammar() {
  GrammarBuilder b;
  const char* names[] = {"{", "}", "[", "]", ",", ":", "STRING", "NUMBER", "true"};
  for (LexemeId t = 0; t < kNumLex; ++t) b.AddLexeme(names[t], t);
  const NonterminalId value = b.Nonterminal("value"), object = b.Nonterminal("object"),
                      members = b.Nonterminal("members"), more = b.Nonterminal("more"),
                      pair = b.Nonterminal("pair"), array = b.Nonterminal("array"),
                      elems = b.Nonterminal("elems"), rest = b.Nonterminal("rest");
  b.AddRule(value, {NonterminalSym(object)});
  b.AddRule(value, {NonterminalSym(array)});
  b.AddRule(value, {LexemeSym(kString)});
  b.AddRule(value, {LexemeSym(kNumber)});
  b.AddRule(value, {LexemeSym(kTrue)});
  b.AddRule(object, {LexemeSym(kLBrace), NonterminalSym(members), LexemeSym(kRBrace)});
  b.AddRule(members, {});
  b.AddRule(members, {NonterminalSym(pair), NonterminalSym(more)});
  b.AddRule(more, {});
  b.AddRule(more, {LexemeSym(kComma), NonterminalSym(pair), NonterminalSym(more)});
  b.AddRule(pair, {LexemeSym(kString), LexemeSym(kColon), NonterminalSym(value)});
  b.AddRule(array, {LexemeSym(kLBracket), NonterminalSym(elems), LexemeSym(kRBracket)});
  b.AddRule(elems, {});
  b.AddRule(elems, {NonterminalSym(value), NonterminalSym(rest)});
  b.AddRule(rest, {});
  b.AddRule(rest, {LexemeSym(kComma), NonterminalSym(value), NonterminalSym(rest)});
  b.SetStart(value);
  return *b.Build();
}

// A random complete document: a top-level array, then a random walk over
// Allowed() where closing brackets become likelier with depth, and forced
// once the target length is reached.
std::vector<LexemeId> RandomDocument(const std::shared_ptr<const Grammar>& g, size_t target) {
  std::mt19937 rng(42);
  EarleyParser p(g);
  std::vector<LexemeId> doc;
  size_t depth = 0;
  auto kind = [&](LexemeId t) { return g->builder_lexeme_id(t); };
  while (!p.IsAccepting()) {
    const std::vector<LexemeId> choices = p.Allowed().ToVector();
    if (choices.empty()) break;
    std::vector<LexemeId> closers, openers, others;
    for (LexemeId t : choices) {
      const LexemeId k = kind(t);
      if (k == kRBrace || k == kRBracket) {
        closers.push_back(t);
      } else if (k == kLBrace || k == kLBracket) {
        openers.push_back(t);
      } else {
        others.push_back(t);
      }
    }
    LexemeId pick;
    if (doc.empty()) {
      pick = 0;
      for (LexemeId t : choices) {
        if (kind(t) == kLBracket) pick = t;
      }
    } else if (doc.size() >= target) {
      // Finish: close when possible, else the cheapest way forward.
      pick = !closers.empty() ? closers[0] : !others.empty() ? others[0] : openers[0];
    } else if (!closers.empty() && depth > 1 && rng() % 8 < depth) {
      pick = closers[rng() % closers.size()];
    } else if (!openers.empty() && rng() % 4 == 0) {
      pick = openers[rng() % openers.size()];
    } else if (!others.empty()) {
      pick = others[rng() % others.size()];
    } else {
      pick = choices[rng() % choices.size()];
    }
    const LexemeId k = kind(pick);
    if (k == kLBrace || k == kLBracket) ++depth;
    if (k == kRBrace || k == kRBracket) --depth;
    p.Scan(pick);
    doc.push_back(pick);
  }
  return doc;
}

void BM_EarleyScanAllowed(benchmark::State& state) {
  auto g = JsonGrammar();
  const std::vector<LexemeId> doc = RandomDocument(g, static_cast<size_t>(state.range(0)));
  EarleyParser p(g);
  size_t lexemes = 0;
  for (auto _ : state) {
    p.Reset();
    for (LexemeId t : doc) {
      if (!p.Scan(t)) state.SkipWithError("document rejected");
      benchmark::DoNotOptimize(p.Allowed().words().data());
    }
    lexemes += doc.size();
  }
  state.counters["ns_per_lexeme"] = benchmark::Counter(
      static_cast<double>(lexemes), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["doc_lexemes"] = static_cast<double>(doc.size());
}
BENCHMARK(BM_EarleyScanAllowed)->Arg(100)->Arg(2000);

// What a mask computation does at a lexeme boundary: try each allowed
// lexeme one level deeper (Scan + Allowed + Pop).
void BM_EarleyTryAllowedPushPop(benchmark::State& state) {
  auto g = JsonGrammar();
  const std::vector<LexemeId> doc = RandomDocument(g, 200);
  EarleyParser p(g);
  for (LexemeId t : doc) p.Scan(t);
  p.Pop(doc.size() / 2);  // Somewhere in the middle of the document.
  size_t pushes = 0;
  const std::vector<LexemeId> allowed = p.Allowed().ToVector();
  state.counters["allowed"] = static_cast<double>(allowed.size());
  for (auto _ : state) {
    for (LexemeId t : allowed) {
      p.Scan(t);
      benchmark::DoNotOptimize(p.Allowed().words().data());
      p.Pop(1);
      ++pushes;
    }
  }
  state.counters["ns_per_push_pop"] = benchmark::Counter(
      static_cast<double>(pushes), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EarleyTryAllowedPushPop);

void BM_GrammarBuildJson(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(JsonGrammar());
}
BENCHMARK(BM_GrammarBuildJson);

// Token-like strings: lengths skewed short, bytes mostly lowercase letters
// with some others, like a BPE vocabulary.
std::vector<std::string> RandomVocab(size_t n) {
  std::mt19937 rng(7);
  std::vector<std::string> vocab;
  vocab.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t len = 1 + (rng() % 4) + (rng() % 4) + (rng() % 8 == 0 ? rng() % 12 : 0);
    std::string s;
    for (size_t k = 0; k < len; ++k) {
      s.push_back(rng() % 8 == 0 ? static_cast<char>(rng() % 256)
                                 : static_cast<char>('a' + rng() % 26));
    }
    vocab.push_back(std::move(s));
  }
  return vocab;
}

void BuildTrieBench(benchmark::State& state, const std::vector<std::string>& vocab) {
  std::vector<TokenBytes> tokens;
  for (size_t i = 0; i < vocab.size(); ++i) tokens.push_back({static_cast<TokenId>(i), vocab[i]});
  size_t nodes = 0;
  for (auto _ : state) {
    auto trie = TokenTrie::Build(tokens);
    nodes = trie->num_nodes();
    benchmark::DoNotOptimize(nodes);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["tokens"] = static_cast<double>(vocab.size());
}

void BM_TrieBuildRandom128k(benchmark::State& state) {
  static const std::vector<std::string> vocab = RandomVocab(128256);
  BuildTrieBench(state, vocab);
}
BENCHMARK(BM_TrieBuildRandom128k)->Unit(benchmark::kMillisecond);

void BM_TrieWalkAll(benchmark::State& state) {
  static const std::vector<std::string> vocab = RandomVocab(128256);
  std::vector<TokenBytes> tokens;
  for (size_t i = 0; i < vocab.size(); ++i) tokens.push_back({static_cast<TokenId>(i), vocab[i]});
  auto trie = *TokenTrie::Build(tokens);
  for (auto _ : state) {
    size_t visited = 0;
    trie.Walk([&](uint32_t node, size_t) {
      visited += trie.byte(node) & 1;
      return true;
    });
    benchmark::DoNotOptimize(visited);
  }
  state.counters["nodes"] = static_cast<double>(trie.num_nodes());
}
BENCHMARK(BM_TrieWalkAll)->Unit(benchmark::kMicrosecond);

// Quick local loader (the tokenizer library has its own): GPT-2 byte-level
// vocabulary keys decoded back to bytes.
std::vector<std::string> LoadByteLevelVocab(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("model")) return {};
  // bytes_to_unicode: printable bytes map to themselves, the rest to 256+k.
  std::vector<int> byte_of(512, -1);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    byte_of[printable ? b : next++] = b;
  }
  std::vector<std::string> vocab;
  for (const auto& [key, value] : j["model"]["vocab"].items()) {
    const size_t id = value.get<size_t>();
    if (vocab.size() <= id) vocab.resize(id + 1);
    std::string bytes;
    for (size_t i = 0; i < key.size();) {
      // Decode one UTF-8 code point (keys are valid UTF-8, code points < 512).
      const unsigned char c = static_cast<unsigned char>(key[i]);
      uint32_t cp = c;
      size_t len = 1;
      if (c >= 0xC0) {
        len = c >= 0xE0 ? 3 : 2;
        cp = c & (len == 2 ? 0x1F : 0x0F);
        for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (key[i + k] & 0x3F);
      }
      i += len;
      bytes.push_back(cp < 512 && byte_of[cp] >= 0 ? static_cast<char>(byte_of[cp]) : '?');
    }
    vocab[id] = std::move(bytes);
  }
  return vocab;
}

void BM_TrieBuildLlama3(benchmark::State& state) {
  static const std::vector<std::string> vocab =
      LoadByteLevelVocab(testing::TokenizerDir("llama3") + "/tokenizer.json");
  if (vocab.empty()) {
    state.SkipWithError("llama3 tokenizer.json not found under MASKD_TOKENIZER_DIR");
    return;
  }
  BuildTrieBench(state, vocab);
}
BENCHMARK(BM_TrieBuildLlama3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace maskd

BENCHMARK_MAIN();
