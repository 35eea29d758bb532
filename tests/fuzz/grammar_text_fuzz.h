// The body the grammar-text fuzz targets share (gbnf_fuzzer.cc: GBNF and
// EBNF, lark_fuzzer.cc: Lark): the text through its front end, then (when it
// compiles) a matcher over the fuzz vocabulary for a few steps (the walk is
// shared with structural_tag_fuzzer.cc too). The tokenizer is the fuzz
// vocabulary with special tokens (FuzzVocabWithSpecials), so token
// references resolve and token terminals are walked. Invariants:
// no crash, every front-end refusal carries its line:column payload, every
// mask token the matcher allows is accepted.
#ifndef MASKD_TESTS_FUZZ_GRAMMAR_TEXT_FUZZ_H_
#define MASKD_TESTS_FUZZ_GRAMMAR_TEXT_FUZZ_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/grammar_text/grammar_text.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "tests/fuzz/fuzz_vocab.h"

namespace maskd::fuzz {

// A grammar a front end built, compiled over the fuzz vocabulary, and a
// matcher walked a few steps: every token a mask allows must be accepted.
// Shared with structural_tag_fuzzer.cc.
inline int FuzzCompiledWalk(maskd::GrammarIr ir) {
  maskd::AutomataLimits compile;
  compile.memory_limit_bytes = 64 << 20;
  const auto vocab = maskd::fuzz::FuzzVocabWithSpecials();
  auto g = maskd::CompiledGrammarImpl::FromIr(std::move(ir), vocab, compile,
                                              std::chrono::steady_clock::now());
  if (!g.ok()) return 0;
  auto m = maskd::Matcher::Create(*g);
  const size_t n = vocab->vocab_size();
  std::vector<uint32_t> mask((n + 31) / 32);
  for (int step = 0; step < 4; ++step) {
    m->FillMask(mask);
    maskd::TokenId pick = 0;
    bool any = false;
    for (maskd::TokenId t = 0; t + 1 < n; ++t) {  // the last id is EOS
      if (((mask[t / 32] >> (t % 32)) & 1) == 0) continue;
      pick = t;
      any = true;
      if ((t + step) % 3 == 0) break;
    }
    if (!any) break;
    if (!m->AcceptToken(pick)) __builtin_trap();
  }
  return 0;
}

inline int FuzzGrammarText(std::string_view text, maskd::grammar_text::Dialect dialect) {
  maskd::grammar_text::GrammarTextOptions options;
  options.max_symbols = 20'000;  // keeps each input fast
  options.tokenizer = maskd::fuzz::FuzzVocabWithSpecials().get();
  absl::StatusOr<maskd::GrammarIr> ir =
      maskd::grammar_text::BuildGrammarTextIr(text, dialect, options);
  if (!ir.ok()) {
    // Refusals of the text itself point into it (ResourceExhausted of the
    // JSON Schema front end inside %json included).
    if (!maskd::grammar_text::TextErrorPosition(ir.status()).has_value()) {
      __builtin_trap();
    }
    return 0;
  }
  return FuzzCompiledWalk(*std::move(ir));
}

}  // namespace maskd::fuzz

#endif  // MASKD_TESTS_FUZZ_GRAMMAR_TEXT_FUZZ_H_
