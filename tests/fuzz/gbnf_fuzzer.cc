// libFuzzer target: bytes -> the GBNF / EBNF front end (the first byte picks
// the dialect) -> a matcher; see grammar_text_fuzz.h for the invariants.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/grammar_text_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  return maskd::fuzz::FuzzGrammarText(text, (data[0] & 1) != 0
                                                ? maskd::grammar_text::Dialect::kXGrammarEbnf
                                                : maskd::grammar_text::Dialect::kGbnf);
}
