// One compiled grammar shared by matchers on several threads (what the service
// does): lazily built DFA states, lexer start states and mask-cache entries
// fill in concurrently, and every thread must see the masks a lone thread sees.
#include <thread>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::vector<std::vector<uint32_t>> MasksAlong(const std::shared_ptr<const CompiledGrammar>& g,
                                              const std::string& text, size_t words) {
  auto m = Matcher::Create(g);
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> mask(words);
  for (char c : text) {
    m->FillMask(mask);
    out.push_back(mask);
    EXPECT_TRUE(m->AcceptBytes(std::string(1, c)));
  }
  return out;
}

TEST(MatcherConcurrencyTest, SharedGrammarGivesTheSameMasksOnEveryThread) {
  std::vector<std::string> vocab;
  for (const char* t : {"{", "}",  "\"",   "\":",  ",", " ", "a",      "b", "ab", "\"a",
                        "1", "12", "true", "null", "[", "]", "\"b\":", "e", "x",  "\\"}) {
    vocab.push_back(t);
  }
  auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "concurrency");
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array",
      "items":{"type":"integer"}}},"additionalProperties":{"type":"boolean"}})";
  const std::string text = R"({"a": "xab\\e", "b": [1, 12], "ab": true})";
  const size_t words = (tok->vocab_size() + 31) / 32;
  auto reference_grammar = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(reference_grammar.ok()) << reference_grammar.status();
  const auto expected = MasksAlong(*reference_grammar, text, words);

  // A fresh grammar, so its lazy parts are built by the racing threads.
  auto shared = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(shared.ok());
  std::vector<std::vector<std::vector<uint32_t>>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) got[t] = MasksAlong(*shared, text, words);
    });
  }
  for (std::thread& th : threads) th.join();
  for (const auto& masks : got) EXPECT_EQ(masks, expected);
}

}  // namespace
}  // namespace maskd
