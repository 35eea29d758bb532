// Reasoning first with a marker made of special tokens, e.g. gpt-oss's
// final channel `<|channel|>final<|message|>`: the output is any text and
// special tokens (EOS excepted) up to and including the marker's first
// occurrence, then the spec. The reasoning is a sequence of whole special
// tokens (token terminals) and text segments (the bytes between two special
// tokens, one lexeme each), and "first occurrence" is decided by an automaton
// over those items (KMP-style), so the marker's special tokens are never text.
#ifndef MASKD_COMPILER_COMPILE_TOKEN_REASONING_H_
#define MASKD_COMPILER_COMPILE_TOKEN_REASONING_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

// Whether `marker` holds a special token of `tokenizer` (other than EOS).
bool MarkerHasSpecialTokens(const std::string& marker, const Tokenizer& tokenizer);

// start' ::= reasoning-up-to-the-first-marker start. Unimplemented when the
// marker does not begin and end with a special token (a text end would need
// the text segment to be cut inside).
absl::Status PrependTokenReasoning(GrammarIr& ir, const std::string& marker,
                                   const Tokenizer& tokenizer);

}  // namespace maskd

#endif  // MASKD_COMPILER_COMPILE_TOKEN_REASONING_H_
