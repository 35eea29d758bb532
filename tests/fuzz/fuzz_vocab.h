// The small vocabulary every fuzz target compiles against: printable ASCII,
// JSON punctuation pairs, and multi-byte UTF-8 characters split across
// tokens, so token boundaries land inside lexemes and inside characters.
// Small on purpose: a mask costs a walk of this vocabulary, and the fuzzers
// run thousands of inputs a second.
#ifndef MASKD_TESTS_FUZZ_FUZZ_VOCAB_H_
#define MASKD_TESTS_FUZZ_FUZZ_VOCAB_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd::fuzz {

inline std::shared_ptr<const testing::SmallVocabTokenizer> FuzzVocab() {
  static const std::shared_ptr<const testing::SmallVocabTokenizer> vocab = [] {
    std::vector<std::string> tokens;
    for (int c = 32; c < 127; ++c) tokens.push_back(std::string(1, static_cast<char>(c)));
    for (const char* t : {"\n",       "\t",
                          "{\"",      "\":",
                          "\",\"",    "\"}",
                          "[1",       "],",
                          "true",     "null",
                          "aa",       "ab",
                          "12",       "0.",
                          "e+",       "\\n",
                          "\\\"",     "\\u00",
                          "\xc3\xa9", "\xe2\x82",
                          "\xac",     "\xf0\x9f\x98\x80",
                          "\xc3",     "\xa9\""}) {
      tokens.push_back(t);
    }
    return std::make_shared<const testing::SmallVocabTokenizer>(std::move(tokens), "fuzz");
  }();
  return vocab;
}

// The fuzz vocabulary plus special tokens, for the grammar-text and
// structural-tag fuzzers: token terminals (`<|call|>`, `<[97]>`, `!<...>`,
// `<[^...]>`) resolve against it, so the token pass is fuzzed too. `<s>` and
// `</s>` are special with text a text terminal could spell; `<think>` is an
// ordinary (non-special) added token, the Qwen3 case the compile must refuse
// where text may go on. EOS stays the last id.
inline std::shared_ptr<const testing::SmallVocabTokenizer> FuzzVocabWithSpecials() {
  static const std::shared_ptr<const testing::SmallVocabTokenizer> vocab = [] {
    std::vector<std::string> tokens;
    const auto base = FuzzVocab();
    for (TokenId t = 0; t + 1 < base->vocab_size(); ++t) {
      tokens.push_back(std::string(base->token_bytes(t)));
    }
    const TokenId first = static_cast<TokenId>(tokens.size());
    for (const char* t : {"<|call|>", "<|channel|>", "<s>", "</s>", "<think>"}) {
      tokens.push_back(t);
    }
    auto out = std::make_shared<testing::SmallVocabTokenizer>(std::move(tokens), "fuzz-special");
    for (TokenId t = first; t < first + 4; ++t) out->MarkSpecial(t);
    return std::shared_ptr<const testing::SmallVocabTokenizer>(std::move(out));
  }();
  return vocab;
}

// Small limits: one input must never take the fuzzer's time or memory.
inline CompileOptions FuzzCompileOptions() {
  CompileOptions options;
  options.time_limit_ms = 2'000;
  options.memory_limit_bytes = uint64_t{256} << 20;
  options.mask_cache_bytes = uint64_t{4} << 20;
  return options;
}

}  // namespace maskd::fuzz

#endif  // MASKD_TESTS_FUZZ_FUZZ_VOCAB_H_
