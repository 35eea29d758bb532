// libFuzzer target: bytes -> JSON Schema front end -> compiled grammar -> a
// few masks. Finds crashes, hangs and sanitizer reports in ParseSchema,
// normalization, LowerSchema and the automata; every outcome is either an
// error status other than Internal or a grammar whose first mask is
// consistent with CanStop.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "tests/fuzz/fuzz_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskd;
  // Large inputs only slow the search down; 1 MB schemas have their own test.
  if (size > 64 * 1024) return 0;
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text.assign(reinterpret_cast<const char*>(data), size);
  CompileOptions options = fuzz::FuzzCompileOptions();
  // The last byte picks the whitespace mode, so all three get exercised.
  if (size > 0) options.whitespace = static_cast<WhitespaceMode>(data[size - 1] % 3);
  auto tokenizer = fuzz::FuzzVocab();
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar =
      CompileGrammar(spec, options, tokenizer);
  if (!grammar.ok()) {
    if (grammar.status().message().empty()) std::abort();  // Errors must say why.
    // Internal: an error the engine did not mean to give (e.g. a lowering
    // that left a nonterminal undefined), never a property of the input.
    if (grammar.status().code() == absl::StatusCode::kInternal) std::abort();
    return 0;
  }
  // Follow the first allowed token a few times: masks and acceptance agree.
  std::unique_ptr<Matcher> matcher = Matcher::Create(*grammar);
  std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
  const TokenId eos = tokenizer->eos_ids()[0];
  for (int step = 0; step < 8; ++step) {
    matcher->FillMask(mask);
    const bool eos_bit = (mask[eos / 32] >> (eos % 32)) & 1;
    if (eos_bit != matcher->CanStop()) std::abort();
    TokenId pick = eos;
    for (TokenId t = 0; t < eos; ++t) {
      // Vary the choice with the input so different paths get walked.
      const TokenId c = static_cast<TokenId>((t + data[step % size]) % eos);
      if ((mask[c / 32] >> (c % 32)) & 1) {
        pick = c;
        break;
      }
    }
    if (pick == eos) break;
    if (!matcher->AcceptToken(pick)) std::abort();
  }
  return 0;
}
