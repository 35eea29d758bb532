// libFuzzer target: bytes -> the Lark front end -> a matcher; see
// grammar_text_fuzz.h for the invariants. The first byte is skipped, as in
// gbnf_fuzzer.cc, so the two targets' seed files have one layout.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/grammar_text_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  return maskd::fuzz::FuzzGrammarText(text, maskd::grammar_text::Dialect::kLark);
}
