// libFuzzer target: bytes -> the structural-tag front end -> a matcher (the
// walk of grammar_text_fuzz.h). The input is the tag's JSON text. Invariants:
// no crash; text that is not JSON is refused; a refusal of a JSON document
// carries the JSON pointer of the part at fault; every token a mask allows
// is accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/structural_tag/structural_tag.h"
#include "tests/fuzz/grammar_text_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool json = maskd::json_schema::ParseJsonValue(text).ok();
  maskd::StructuralTagOptions options;
  options.tokenizer = maskd::fuzz::FuzzVocabWithSpecials().get();
  absl::StatusOr<maskd::GrammarIr> ir = maskd::BuildStructuralTagGrammar(text, options);
  if (!ir.ok()) {
    if (json && !maskd::JsonPointerOf(ir.status()).has_value()) __builtin_trap();
    return 0;
  }
  if (!json) __builtin_trap();
  return maskd::fuzz::FuzzCompiledWalk(*std::move(ir));
}
